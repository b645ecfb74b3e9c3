"""Sub-commands of the ``mtokspec`` CLI; each module has ``register(subparsers)``."""

from mtokspec._commands import codec, convert

COMMAND_MODULES = [codec, convert]

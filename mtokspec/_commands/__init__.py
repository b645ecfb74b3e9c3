"""Sub-commands of the ``mtokspec`` CLI; each module has ``register(subparsers)``."""

from mtokspec._commands import codec

COMMAND_MODULES = [codec]

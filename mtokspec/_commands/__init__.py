"""Sub-commands of the ``mtokspec`` CLI; each module has ``register(subparsers)``."""

from mtokspec._commands import chat, codec, convert, runtime, upgrade

COMMAND_MODULES = [codec, runtime, chat, convert, upgrade]

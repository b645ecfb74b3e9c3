"""Sub-commands of the ``mtokspec`` CLI; each module has ``register(subparsers)``."""

from mtokspec._commands import chat, codec, convert, edit, lint, runtime, upgrade

COMMAND_MODULES = [codec, edit, lint, runtime, chat, convert, upgrade]

"""Sub-commands of the ``mtokspec`` CLI; each module has ``register(subparsers)``."""

from mtokspec._commands import chat, codec, convert, lint, mnn, runtime, upgrade

COMMAND_MODULES = [codec, lint, runtime, chat, convert, upgrade, mnn]

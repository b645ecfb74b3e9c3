"""MNN's Jinja engine (``transformers/llm/engine/src/tokenizer/jinja.hpp``), emulated exactly.

:func:`render_mnn` renders a chat template as MNN's ``Tokenizer::apply_chat_template`` does:
its lexer and white-space control (:mod:`.lexer`), its parser and the way it recovers from what it
cannot read (:mod:`.parser`), its values, comparisons and printing (:mod:`.values`), its filters,
tests, methods and functions (:mod:`.builtins`), its scopes, the probe message rendered first to
decide whether contents are parts, and the context it passes (:mod:`.render`).
"""

from mtokspec.chat.mnn.render import MnnTemplate, engine_messages, render_file_mnn, render_mnn
from mtokspec.chat.mnn.values import MnnEngineFailure

__all__ = ["render_mnn", "render_file_mnn", "MnnTemplate", "MnnEngineFailure", "engine_messages"]

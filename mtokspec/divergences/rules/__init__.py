"""The rules, one module per part of the file: each declares its rules with their prediction and
the construct that lets them explain a difference."""

from __future__ import annotations

TOK = "transformers/llm/engine/src/tokenizer/tokenizer.cpp"
UNI = "transformers/llm/engine/src/tokenizer/unicode.cpp"
JINJA = "transformers/llm/engine/src/tokenizer/jinja.hpp"

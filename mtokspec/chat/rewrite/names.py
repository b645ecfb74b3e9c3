"""The names and marks the rewrite's printer writes into a template, and its one refusal."""

from __future__ import annotations

import re

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
ERR = "__mnn_raised"
BODY = "__mnn_body"
UNDEF = "mnn_rewrite_undefined"  # a free name (dunder names are refused by the sandbox)
MNN_TESTS = {"defined", "undefined", "none", "boolean", "string", "number", "sequence", "iterable", "mapping",
             "true", "false"}
#: What transformers passes when the caller gives nothing; MNN leaves these undefined.
CTX_DEFAULTS = {"tools": "none", "documents": "none", "add_generation_prompt": "false"}
#: True on transformers (and mtokspec's renderer of it), false on MNN, which defines no such name.
ON_HF = "raise_exception is defined"
#: String filters transformers applies to ``str(value)`` (MNN: to strings only, others pass through).
STRING_FILTERS = ("trim", "upper", "lower", "capitalize")


class Unprintable(Exception):
    """A construct the printer cannot write back."""

    pass

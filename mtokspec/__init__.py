"""mtokspec: the executable specification of MNN's LLM tokenizer files.

    import mtokspec
    tree = mtokspec.parse(open("tokenizer.mtok", "rb").read())   # typed tree (mtokspec.format.tree)
    data = mtokspec.build(tree)                                   # bytes, identical for parsed files
    findings = mtokspec.validate(tree)                            # semantic checks
    tok = mtokspec.Tokenizer.from_file("tokenizer.mtok", semantics="mnn")   # or mtokspec.load(...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mtokspec.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CasesError,
    ChatTemplateError,
    ConversationsError,
    EditError,
    Error,
    MtokFormatError,
    PathRefused,
    TokenizerError,
    UndefinedInMnn,
)

if TYPE_CHECKING:
    from mtokspec.format import build, parse
    from mtokspec.format.tree import (
        BertTxtFile,
        HuggingFaceTxtFile,
        MtokFile,
        SentencePieceTxtFile,
        TiktokenTxtFile,
        TokenizerFile,
        from_dict,
        to_dict,
    )
    from mtokspec.format.validate import Finding, validate
    from mtokspec import convert, divergences
    from mtokspec.convert.loss import ConversionError
    from mtokspec.divergences.lint import lint
    from mtokspec.testing import strategies
    from mtokspec.tokenizer import Semantics, TextStream, Tokenizer, hold_table, load
    from mtokspec.fingerprinting import Fingerprint, fingerprint

__all__ = [
    "parse", "build", "validate", "lint", "Finding", "to_dict", "from_dict",
    "TokenizerFile", "MtokFile", "SentencePieceTxtFile", "TiktokenTxtFile", "BertTxtFile", "HuggingFaceTxtFile",
    "Tokenizer", "Semantics", "load", "TextStream", "hold_table", "fingerprint", "Fingerprint",
    "Error", "MtokFormatError", "TokenizerError", "UndefinedInMnn", "ChatTemplateError", "ConversionError",
    "EditError", "CasesError", "ConversationsError", "ArgumentTypeError", "ArgumentValueError",
    "PathRefused",
    "convert", "divergences", "strategies",
]
__version__ = "0.1.0"

# Everything but the errors loads when first asked for: `import mtokspec` (and the CLI's start-up,
# `mtokspec --help`) stays cheap; the codec loads with the first parse or build.
_LAZY = {
    "parse": ("mtokspec.format", "parse"),
    "build": ("mtokspec.format", "build"),
    "validate": ("mtokspec.format.validate", "validate"),
    "Finding": ("mtokspec.format.validate", "Finding"),
    "to_dict": ("mtokspec.format.tree", "to_dict"),
    "from_dict": ("mtokspec.format.tree", "from_dict"),
    **{name: ("mtokspec.format.tree", name) for name in (
        "TokenizerFile", "MtokFile", "SentencePieceTxtFile", "TiktokenTxtFile", "BertTxtFile", "HuggingFaceTxtFile")},
    "Tokenizer": ("mtokspec.tokenizer", "Tokenizer"),
    "Semantics": ("mtokspec.tokenizer", "Semantics"),
    "load": ("mtokspec.tokenizer", "load"),
    "TextStream": ("mtokspec.tokenizer", "TextStream"),
    "hold_table": ("mtokspec.tokenizer", "hold_table"),
    "fingerprint": ("mtokspec.fingerprinting", "fingerprint"),
    "Fingerprint": ("mtokspec.fingerprinting", "Fingerprint"),
    "lint": ("mtokspec.divergences.lint", "lint"),
    "ConversionError": ("mtokspec.convert.loss", "ConversionError"),
    "convert": ("mtokspec.convert", None),
    "divergences": ("mtokspec.divergences", None),
    "strategies": ("mtokspec.testing.strategies", None),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'mtokspec' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``) and the module's own dunders: not what it imports to work."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__") and n.endswith("__"))})

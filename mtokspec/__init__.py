"""mtokspec: the executable specification of MNN's LLM tokenizer files.

    import mtokspec
    tree = mtokspec.parse(open("tokenizer.mtok", "rb").read())   # typed tree (mtokspec.tree)
    data = mtokspec.build(tree)                                   # bytes, identical for parsed files
    findings = mtokspec.validate(tree)                            # semantic checks
"""

from __future__ import annotations

from mtokspec._generated import codec as _codec
from mtokspec._generated.tree import ROOTS_BY_MAGIC_LINE
from mtokspec.errors import Error, MtokFormatError
from mtokspec.tree import (
    BertTxtFile,
    HuggingFaceTxtFile,
    MtokFile,
    SentencePieceTxtFile,
    TiktokenTxtFile,
    TokenizerFile,
    from_dict,
    to_dict,
)
from mtokspec.validate import Finding, validate

__all__ = [
    "parse", "build", "validate", "Finding", "Error", "MtokFormatError", "to_dict", "from_dict",
    "TokenizerFile", "MtokFile", "SentencePieceTxtFile", "TiktokenTxtFile", "BertTxtFile", "HuggingFaceTxtFile",
    "Tokenizer", "lint",
]
__version__ = "0.1.0"

# line 1 of the file -> its root class; "430 4" is .mtok, "430 0".."430 3" the legacy text types
_BY_MAGIC = ROOTS_BY_MAGIC_LINE
_PARSE = {cls: getattr(_codec, f"parse_{cls.__name__}") for cls in _BY_MAGIC.values()}
_BUILD = {cls: getattr(_codec, f"build_{cls.__name__}") for cls in _BY_MAGIC.values()}


def parse(data: bytes | bytearray | memoryview) -> TokenizerFile:
    """Parse a tokenizer file: ``.mtok`` (``MtokFile``) or a legacy ``tokenizer.txt`` of type 0-3.

    The format is told by the first line.  Any defect raises :class:`MtokFormatError` with the
    byte offset and the field path; no other exception escapes.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MtokFormatError(f"expected bytes, got {type(data).__name__}")
    head = bytes(data[:6])
    cls = _BY_MAGIC.get(head)
    if cls is None:
        raise MtokFormatError(
            f"not an MNN tokenizer file: line 1 must be '430 <type>' with type 0-4, got {head!r}", 0, "header.magic"
        )
    return _PARSE[cls](data)


def build(tree: TokenizerFile) -> bytes:
    """The bytes of a tree; ``build(parse(b)) == b`` for every file the reference exporter writes."""
    fn = _BUILD.get(type(tree))
    if fn is None:
        raise MtokFormatError(f"expected a tokenizer file tree (MtokFile, ...), got {type(tree).__name__}")
    return fn(tree)


def lint(tree_or_bytes: TokenizerFile | bytes | bytearray | memoryview, target: str = "mnn") -> list[Finding]:
    """What a device running the file does differently from HF, predicted from the file alone:
    the findings (same :class:`Finding` as :func:`validate`) of each divergence rule that will bite
    on ``target`` (``"mnn"``: MNN's C++ runtime), chat template included, errors first.
    See :mod:`mtokspec.linter`."""
    from mtokspec.linter import lint as _lint

    return _lint(tree_or_bytes, target)


def __getattr__(name: str):
    # The runtime (and the `regex` module it compiles patterns with) loads only when asked for.
    if name == "Tokenizer":
        from mtokspec.runtime import Tokenizer

        return Tokenizer
    raise AttributeError(f"module 'mtokspec' has no attribute {name!r}")

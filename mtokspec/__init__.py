"""mtokspec: the executable specification of MNN's LLM tokenizer files.

    import mtokspec
    tree = mtokspec.parse(open("tokenizer.mtok", "rb").read())   # typed tree (mtokspec.tree)
    data = mtokspec.build(tree)                                   # bytes, identical for parsed files
    findings = mtokspec.validate(tree)                            # semantic checks
"""

from __future__ import annotations

from mtokspec._generated.codec import build_MtokFile as _build_mtok
from mtokspec._generated.codec import parse_MtokFile as _parse_mtok
from mtokspec.errors import MtokFormatError
from mtokspec.tree import MtokFile, from_dict, to_dict
from mtokspec.validate import Finding, validate

__all__ = ["parse", "build", "validate", "Finding", "MtokFormatError", "MtokFile", "to_dict", "from_dict"]
__version__ = "0.1.0"


def parse(data: bytes | bytearray | memoryview) -> MtokFile:
    """Parse a tokenizer file.  Any defect raises :class:`MtokFormatError` (byte offset + field)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MtokFormatError(f"expected bytes, got {type(data).__name__}")
    return _parse_mtok(data)


def build(tree: MtokFile) -> bytes:
    """The bytes of a tree; ``build(parse(b)) == b`` for every file the reference exporter writes."""
    return _build_mtok(tree)

"""Format next: the rules an ``Extension`` section must keep so that released MNN ignores it.

Released MNN (4d40bdbd) reads the post-processor last and takes the older layout (ids only) when the
bytes left after its count are exactly ``count * 4``; otherwise it reads ``count`` ops and stops,
whatever follows.  So an extension may only follow a current-layout program whose size plus the
extension's size is not ``count * 4`` (see docs/design/format-next.md).
"""

from __future__ import annotations

from mtokspec.errors import MtokFormatError
from mtokspec.format import tree as t

__all__ = ["extension_refusal", "extension_size", "field_of"]


def extension_size(ext: t.Extension) -> int:
    """The bytes ``ext`` takes in a file."""
    from dataclasses import replace

    from mtokspec._generated.codec import build_MtokFile  # the codec itself: files.build checks through here

    base = t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="",
                      post_processor=t.PostProcessorProgram([t.SequenceOp()]))
    return len(build_MtokFile(replace(base, extension=ext))) - len(build_MtokFile(base))


def extension_refusal(tree: t.MtokFile, ext_size: int) -> MtokFormatError | None:
    """Why released MNN would not read ``tree`` (whose extension is ``ext_size`` bytes) as it reads the
    file without the extension, or why a patched reader would misread the extension; None if fine."""
    ext = tree.extension
    if ext is None:
        return None
    tags = [t.VARIANTS[type(f).__name__][1] for f in ext.fields]
    for i in range(1, len(tags)):
        if tags[i] <= tags[i - 1]:
            return MtokFormatError(f"field tags must ascend, each at most once: {tags}", path=f"extension.fields[{i}]")
    pp = tree.post_processor
    if not isinstance(pp, t.PostProcessorProgram):
        return MtokFormatError("an extension follows only a current-layout post-processor (released MNN would "
                               "read its bytes as post-processor ops)", path="extension")
    n = len(pp.ops)
    seqs = sum(isinstance(op, t.SequenceOp) for op in pp.ops)
    size = seqs + 5 * (n - seqs)
    if size == 4 * n:
        return MtokFormatError("the post-processor's size equals count*4: released MNN misreads the file "
                               "without the extension and reads it right with one, so the two would differ",
                               path="extension")
    if size + ext_size == 4 * n:
        return MtokFormatError(f"post-processor plus extension ({size} + {ext_size} bytes) equal count*4: "
                               "released MNN would read the program as the older layout", path="extension")
    return None


def field_of(tree: t.MtokFile, cls: type[t.ExtensionField]) -> t.ExtensionField | None:
    """The extension's field of type ``cls``, or None (no extension, another magic -- a reader
    ignores that section -- or the field is absent)."""
    if tree.extension is None or tree.extension.magic != t.ExtensionMagic.MNX1:
        return None
    return next((f for f in tree.extension.fields if isinstance(f, cls)), None)

"""``--target mnn-next``: the ``--target mnn`` tree plus format next's extension (``spec/mtok.py``).

The fields written: ``StreamDecodeField`` always (HF's incremental decode is what an app prints),
``DecodeCleanupField(False)`` where a WordPiece decoder says ``cleanup=false`` (released MNN cleans
up whatever the flag says), ``BPESuffixField`` where HF's BPE has an ``end_of_word_suffix``,
``BPEDecoderField`` where HF's decoder is a ``BPEDecoder``, ``BPEUnknownField`` where HF's
BPE has an ``unk_token`` its vocabulary holds, ``UnigramTiesField`` for a Unigram model.  A released MNN reads the result exactly as the ``--target mnn`` file;
the patched one (``patches/mnn/``) also reads the extension.  Design: docs/design/format-next.md.
"""

from __future__ import annotations

from dataclasses import replace

from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t
from mtokspec.runtime.shared.vocab_rows import hf_unk_id, texts_by_id
from mtokspec.format.extension import extension_refusal, extension_size

__all__ = ["with_extension", "extension_fields"]


def extension_fields(tree: t.MtokFile, tj: dict) -> list[t.ExtensionField]:
    """The fields that carry HF's behaviour (``tj``: the ``tokenizer.json``) for ``tree`` (its
    ``--target mnn`` tree), tags ascending."""
    fields: list[t.ExtensionField] = []
    wordpiece = [d for d, _ in t.walk_stage(tree.decoder) if isinstance(d, t.WordPieceDecoder)]
    if wordpiece and not wordpiece[-1].cleanup:
        fields.append(t.DecodeCleanupField(cleanup=False))
    fields.append(t.StreamDecodeField())
    model = tj.get("model")
    suffix = model.get("end_of_word_suffix") if isinstance(model, dict) else None
    if isinstance(tree.model, t.BPEModel) and isinstance(suffix, str) and suffix:
        fields.append(t.BPESuffixField(suffix))
    decoder = tj.get("decoder")
    if isinstance(decoder, dict) and decoder.get("type") == "BPEDecoder":
        word_end = decoder.get("suffix", "</w>")
        if isinstance(word_end, str) and word_end:
            fields.append(t.BPEDecoderField(word_end))
    unk_id = hf_unk_id(model)  # HF's id: the written text may be renamed (rows.bpe_continuing_prefix)
    if unk_id is not None and model["unk_token"] and isinstance(tree.model, t.BPEModel) and (
            unk_id in texts_by_id(tree.model.vocab)):
        fields.append(t.BPEUnknownField(unk_id, bool(model.get("fuse_unk"))))
    if isinstance(tree.model, t.UnigramModel):
        fields.append(t.UnigramTiesField())
    return fields


def with_extension(tree: t.MtokFile, tj: dict) -> tuple[t.MtokFile, list[Loss]]:
    """``tree`` with its extension for the folder's ``tokenizer.json`` ``tj``, and the losses where
    it cannot carry one.

    A missing or empty post-processor becomes ``[sequence A]`` (what released MNN makes of an empty
    one), so that the extension has a program to follow."""
    tails = {"chat_template": "", "eos_token": "", "flags": 0, "bos_token": ""}
    for name, empty in tails.items():
        if getattr(tree, name) is None:
            tree = replace(tree, **{name: empty})
    pp = tree.post_processor
    if pp is None or (isinstance(pp, t.PostProcessorProgram) and not pp.ops):
        tree = replace(tree, post_processor=t.PostProcessorProgram([t.SequenceOp()]))
    ext = t.Extension(magic=int(t.ExtensionMagic.MNX1), fields=extension_fields(tree, tj))
    new = replace(tree, extension=ext)
    refusal = extension_refusal(new, extension_size(ext))
    if refusal is not None:
        return tree, [Loss("extension", f"format next: {refusal.message}", "no extension (as --target mnn)", True)]
    return new, []

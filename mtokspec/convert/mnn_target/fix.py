"""``fix``: a tokenizer file someone already has, made for MNN's runtime (the levers of
``convert --target mnn``), with the same report.

- A legacy ``tokenizer.txt`` is upgraded to ``.mtok`` first (:func:`mtokspec.convert.upgrade`).
- With ``against`` (a ``tokenizer.json`` or a model folder): every lever of
  :func:`~.choices.retarget`, HF's post-processor template taken from that ``tokenizer.json``, and
  the report of :mod:`.report` against HF on it.
- Without it, what the file alone shows: a post-processor program MNN misreads (padded so it is read
  as written), BOS twice (prefix ids the program inserts too: the prefix goes), the header special
  ids MNN's decode drops where HF's keeps them, added tokens a BPE vocabulary lacks, the clean-up
  flag (off: HF ``tokenizers`` never applies it), a BERT vocabulary's clean-up joins (printed
  without a space token by token); the report is against the file's own HF
  semantics, and says what could not be checked.
- The chat template: rewritten for MNN's Jinja engine (:func:`~.chat.chat_template_for_mnn`);
  what MNN still renders differently is listed.
"""

from __future__ import annotations

import os
from dataclasses import replace

from mtokspec.format import tree as t
from mtokspec.convert.loss import Loss
from mtokspec.args import instance, items, path

__all__ = ["fix"]


def _file_alone(tree: t.MtokFile) -> tuple[t.MtokFile, list[Loss]]:
    from mtokspec.convert.mnn_target.choices import NOOP_ID, misread_by_mnn, with_added_in_vocab, without_specials
    from mtokspec.convert.mnn_target.rows import joined_wordpiece_tokens

    losses: list[Loss] = []
    pp = tree.post_processor
    h = tree.header
    prefix = list(h.prefix)
    if isinstance(pp, t.PostProcessorProgram):
        ops = list(pp.ops)
        if misread_by_mnn(ops):
            ops.append(t.SpecialTokenOp(NOOP_ID))
        inserted = [op.token_id for op in ops if isinstance(op, t.SpecialTokenOp) and op.token_id < 2**31]
        lead = [op.token_id for op in ops[:len(prefix)] if isinstance(op, t.SpecialTokenOp)]
        if prefix and inserted:
            if lead == list(prefix):
                h = t.make_header(h.special, h.stop, [])
            else:
                losses.append(Loss("header.ids", f"prefix ids {list(prefix)} and a program inserting {inserted}",
                                   "kept (the program does not start with the prefix: which is meant is unknown)",
                                   True))
        tree = replace(tree, header=h, post_processor=t.PostProcessorProgram(ops))
    elif isinstance(pp, t.LegacyPostProcessor):
        tree = replace(tree, post_processor=t.PostProcessorProgram(
            [t.SequenceOp(), *(t.SpecialTokenOp(i) for i in pp.ids)]))
    flags = tree.flags
    if flags is not None and flags & t.MtokFlags.clean_up_tokenization_spaces:
        flags &= ~t.MtokFlags.clean_up_tokenization_spaces
        losses.append(Loss("flags", "clean_up_tokenization_spaces set (transformers applies it on decode)",
                           "off: MNN's decode(ids) follows HF tokenizers, which never applies it", False))
    tree = replace(tree, flags=flags)
    return joined_wordpiece_tokens(with_added_in_vocab(without_specials(tree))), losses


def fix(tree, against: str | os.PathLike | None = None, texts: list[str] | None = None, *, reference: str = "hf"):
    """Fix a parsed tokenizer file for MNN's runtime; a :class:`~mtokspec.convert.result.ConversionResult`
    (``reference`` answers for HF against ``against``: see :class:`~.reference.HFReference`)."""
    from mtokspec.convert import unicode_tables
    from mtokspec.convert.inputs import HFInputs, load_hf
    from mtokspec.convert.result import ConversionResult
    from mtokspec.convert.mnn_target.chat import with_chat_template_for_mnn
    from mtokspec.convert.mnn_target.choices import retarget
    from mtokspec.convert.mnn_target.reference import FileReference, HFReference, check_reference, probe_texts
    from mtokspec.convert.mnn_target.report import mnn_report
    from mtokspec.convert.mnn_target.variants import rows_of

    instance("tree", tree, t.TokenizerFile, "a tokenizer file tree")
    if against is not None:
        path("against", against)
    items("texts", texts, str, "strs", optional=True)
    check_reference(reference)
    losses: list[Loss] = []
    if not isinstance(tree, t.MtokFile):
        from mtokspec.convert.upgrade import upgrade

        up = upgrade(tree)
        tree, losses = up.tree, list(up.losses)
    if against is not None:
        inputs: HFInputs = load_hf(against)
        new = retarget(tree, inputs.tokenizer_json, inputs.template())
        if new.flags is not None and (tree.flags or 0) & t.MtokFlags.clean_up_tokenization_spaces:
            losses.append(Loss("flags", "clean_up_tokenization_spaces set (transformers applies it on decode)",
                               "off: MNN's decode(ids) follows HF tokenizers, which never applies it", False))
        ref = HFReference(inputs.tokenizer_json, new, reference)
        rows = rows_of(inputs.tokenizer_json)
    else:
        rows = []
        new, more = _file_alone(tree)
        losses += more
        losses.append(Loss("(file)", "no tokenizer.json to check against",
                           "not checked: what the exporter dropped (e.g. a Whitespace pre-tokenizer, a "
                           "Precompiled character map, a RobertaProcessing post-processor, the decoder) "
                           "cannot be restored; the report is against the file's own HF semantics", False))
        ref = FileReference(tree)  # what the file means: the fixed file is to give it on MNN
    new, chat_losses = with_chat_template_for_mnn(new)
    losses += chat_losses
    added = sorted(new.added_tokens, key=lambda a: not a.special)
    report = mnn_report(new, ref, probe_texts([a.content for a in added], texts), rows)
    losses += report.losses
    return ConversionResult(new, losses, unicode_tables.UNIDATA_VERSION, report.agreement, ref.source,
                            report.differing)

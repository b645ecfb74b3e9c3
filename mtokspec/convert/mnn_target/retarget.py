"""Turn the exporter's conversion into the ``--target mnn`` one (the hook ``from_hf(target="mnn")`` calls).

The levers are :mod:`.choices`; the report is :mod:`.report` over :func:`~.reference.probe_texts`.
The conversion's own records stay where the levers did not remove their cause (they say what the
format cannot hold).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mtokspec.convert.loss import ConversionError, Loss
from mtokspec.convert.mnn_target.chat import with_chat_template_for_mnn
from mtokspec.convert.mnn_target.choices import retarget
from mtokspec.convert.mnn_target.reference import HFReference, probe_texts
from mtokspec.convert.mnn_target.report import MnnReport, mnn_report
from mtokspec.convert.mnn_target.variants import rows_of
from mtokspec.convert.mnn_target.versions import for_version
from mtokspec.format import tree as t
from mtokspec.args import instance, items
from mtokspec.names import EXTENDED
from mtokspec.runtime.mnn.versions import version_of

__all__ = ["retarget_conversion"]


_STAGE_OF_PATH = (("normalizer", "normalizer"), ("pre_tokenizer", "pre_tokenizer"), ("decoder", "decoder"))


def _node_at(tj: dict, path: str) -> Any:
    """The ``tokenizer.json`` component a loss's path is in (``normalizer.normalizers[1].pattern``:
    that Replace): the last object on the path with a ``type``."""
    import re

    node: Any = tj
    found: Any = None
    for name, index in re.findall(r"(\w+)(?:\[(\d+)\])?", path):
        node = node.get(name) if isinstance(node, dict) else None
        if index:
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
        if isinstance(node, dict) and "type" in node:
            found = node
        if node is None:
            break
    return found


def _row(loss: Loss, before: t.MtokFile, after: t.MtokFile, tj: dict):
    """The :mod:`.variants` row that wrote the node of a normalizer, pre-tokenizer or decoder loss,
    or that a vocabulary lever of :mod:`.rows` carries a model loss by (None: no row wrote anything
    there)."""
    from mtokspec.convert.mnn_target.rows import CARRIED
    from mtokspec.convert.mnn_target.variants import rows, variant_of

    for prefix, stage in _STAGE_OF_PATH:
        if loss.path.startswith(prefix) and getattr(before, stage) != getattr(after, stage):
            v = variant_of(stage, _node_at(tj, loss.path))
            return v if v is not None and v.lower is not None else None
    key, applied = CARRIED.get(loss.path, ("", None))
    if applied is not None and applied(after):
        return next(v for v in rows() if v.key == key)
    return None


def _fixed(loss: Loss, before: t.MtokFile, after: t.MtokFile, template: list | None, tj: dict) -> bool:
    """Whether a lever removed the cause of one of the exporter conversion's records: the
    post-processor once HF's template is written; a loss whose :mod:`.variants` row (:func:`_row`)
    is exact (or exact within its bound) and wrote the node."""
    from mtokspec.convert.mnn_target.variants import Verdict

    if loss.path.startswith("post_processor"):
        return template is not None
    v = _row(loss, before, after, tj)
    if v is not None:
        return v.verdict in (Verdict.EXACT, Verdict.BOUNDED)
    # the exporter's older levers (decoder defined, no decoder's join)
    return loss.path.startswith("decoder") and getattr(before, "decoder") != getattr(after, "decoder") and (
        loss.path == "decoder" or loss.path.endswith(".pattern"))


def _restated(loss: Loss, before: t.MtokFile, after: t.MtokFile, tj: dict) -> Loss:
    """A kept loss whose node a row rewrote, saying what the file now holds."""
    v = _row(loss, before, after, tj)
    return loss if v is None else replace(loss, replacement=v.written_as)


def _regex_of(tj: dict, path: str) -> str | None:
    """The Regex pattern at ``path`` (``decoder.decoders[1].pattern``) when it is not a plain string
    (the lever leaves such a Replace decoder out), else None."""
    import re

    from mtokspec.runtime.shared.text import REGEX_META

    node: Any = tj
    for name, index in re.findall(r"(\w+)(?:\[(\d+)\])?", path):
        node = node.get(name) if isinstance(node, dict) else None
        if index:
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
    regex = node.get("Regex") if isinstance(node, dict) else None
    return regex if isinstance(regex, str) and not (regex and REGEX_META.isdisjoint(regex)) else None


def retarget_conversion(inputs, tree: t.MtokFile, losses: list[Loss], template: list | None,
                        texts: list[str] | None = None, *, reference: str = "hf", target: str = "mnn",
                        ) -> tuple[t.MtokFile, list[Loss], MnnReport, str]:
    """The exporter's conversion (tree and losses) made for MNN's runtime: ``(tree, losses,
    report, reference)``; ``texts`` are probed besides the built-in ones, ``reference`` names what
    answered for HF (``reference``: see :class:`~.reference.HFReference`); ``target="mnn-next"``
    adds format next's extension (:mod:`.next`) and reports the patched runtime; ``target="mnn@3.6.1"``
    makes the file for that MNN release (:mod:`.versions`) and reports that release's runtime."""
    from mtokspec.convert.inputs import HFInputs

    instance("inputs", inputs, HFInputs, "HFInputs (load_hf's)")
    instance("tree", tree, t.MtokFile, "an MtokFile tree")
    items("losses", losses, Loss, "Loss records")
    from mtokspec.convert.inputs import SEQ_A

    for x in items("template", template, (int, str), "ids and SEQ_A (a post-processor template)", optional=True) or ():
        if isinstance(x, str) and x != SEQ_A:
            raise ConversionError(f"template: {x!r} is neither an id nor SEQ_A ({SEQ_A!r})")
    items("texts", texts, str, "strs", optional=True)
    new, chat_losses = with_chat_template_for_mnn(retarget(tree, inputs.tokenizer_json, template))
    if target == EXTENDED:
        from mtokspec.convert.mnn_target.next import with_extension

        new, ext_losses = with_extension(new, inputs.tokenizer_json)
        chat_losses += ext_losses
    version = version_of(target)
    if version is not None:  # mnn (nothing changes) or mnn@VERSION
        new, version_losses = for_version(new, version, template)
        chat_losses += version_losses
    tj = inputs.tokenizer_json
    kept = [_restated(loss, tree, new, tj) for loss in losses if not _fixed(loss, tree, new, template, tj)]
    kept += [replace(loss, replacement="left out (MNN's decode never returns from the empty pattern the "
                                      "exporter writes)")
             for loss in losses if loss.path.startswith("decoder") and loss.path.endswith(".pattern")
             and _fixed(loss, tree, new, template, tj) and _regex_of(tj, loss.path) is not None]
    tc = inputs.tokenizer_config or {}
    if tc.get("clean_up_tokenization_spaces") is True:
        kept.append(Loss("tokenizer_config.clean_up_tokenization_spaces",
                         "clean_up_tokenization_spaces: true (transformers' decode joins \" n't\", \" 's\", ...)",
                         "flag off: MNN's decode(ids) follows HF tokenizers, which never applies it", False))
    ref = HFReference(inputs.tokenizer_json, new, reference)
    added = sorted(tree.added_tokens, key=lambda a: not a.special)
    probes = probe_texts([a.content for a in added], texts)
    report = mnn_report(new, ref, probes, rows_of(tj), semantics=target)
    return new, kept + chat_losses + report.losses, report, ref.source

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
from mtokspec.convert.mnn_target.report import mnn_losses
from mtokspec.format import tree as t
from mtokspec.runtime.shared.args import instance, items

__all__ = ["retarget_conversion"]


def _fixed(loss: Loss, before: t.MtokFile, after: t.MtokFile, template: list | None) -> bool:
    """Whether a lever removed the cause of one of the exporter conversion's records."""
    if loss.path.startswith("post_processor"):
        return template is not None
    if loss.path.startswith("normalizer") and loss.replacement.startswith(("NFKC table", "none")):
        return before.normalizer != after.normalizer
    if loss.path == "decoder" or (loss.path.startswith("decoder") and loss.path.endswith(".pattern")):
        return before.decoder != after.decoder
    if loss.path.startswith("pre_tokenizer"):
        return before.pre_tokenizer != after.pre_tokenizer and loss.replacement.startswith("none")
    return False


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
                        texts: list[str] | None = None) -> tuple[t.MtokFile, list[Loss]]:
    """The exporter's conversion (tree and losses) made for MNN's runtime; ``texts`` are probed
    besides the built-in ones."""
    from mtokspec.convert.hf.inputs import HFInputs

    instance("inputs", inputs, HFInputs, "HFInputs (load_hf's)")
    instance("tree", tree, t.MtokFile, "an MtokFile tree")
    items("losses", losses, Loss, "Loss records")
    from mtokspec.convert.hf.inputs import SEQ_A

    for x in items("template", template, (int, str), "ids and SEQ_A (a post-processor template)", optional=True) or ():
        if isinstance(x, str) and x != SEQ_A:
            raise ConversionError(f"template: {x!r} is neither an id nor SEQ_A ({SEQ_A!r})")
    items("texts", texts, str, "strs", optional=True)
    new, chat_losses = with_chat_template_for_mnn(retarget(tree, inputs.tokenizer_json, template))
    kept = [loss for loss in losses if not _fixed(loss, tree, new, template)]
    kept += [replace(loss, replacement="left out (MNN's decode never returns from the empty pattern the "
                                      "exporter writes)")
             for loss in losses if loss.path.startswith("decoder") and loss.path.endswith(".pattern")
             and _fixed(loss, tree, new, template) and _regex_of(inputs.tokenizer_json, loss.path) is not None]
    tc = inputs.tokenizer_config or {}
    if tc.get("clean_up_tokenization_spaces") is True:
        kept.append(Loss("tokenizer_config.clean_up_tokenization_spaces",
                         "clean_up_tokenization_spaces: true (transformers' decode joins \" n't\", \" 's\", ...)",
                         "flag off: MNN's decode(ids) follows HF tokenizers, which never applies it", False))
    ref = HFReference(inputs.tokenizer_json, new)
    added = sorted(tree.added_tokens, key=lambda a: not a.special)
    probes = probe_texts([a.content for a in added], texts)
    return new, kept + chat_losses + mnn_losses(new, ref, probes)

"""``from_hf``: a Hugging Face folder as a ``.mtok`` tree for one of the targets
(:data:`mtokspec.names.TARGETS`).

``exporter`` is :func:`mtokspec.convert.hf.export` (MNN's exporter's bytes); ``mnn`` then sets every
lever for MNN's runtime (:func:`mtokspec.convert.mnn_target.retarget.retarget_conversion`), as do
``mnn-next`` (plus format next's extension) and ``mnn@VERSION`` (for that MNN release).  All read
the same parsed folder (:mod:`mtokspec.convert.inputs`).
"""

from __future__ import annotations

import os
from dataclasses import replace

from mtokspec.args import instance, optional_text, token_text
from mtokspec.convert import unicode_tables
from mtokspec.convert.hf import export
from mtokspec.convert.inputs import HFInputs, load_hf
from mtokspec.convert.loss import ConversionError, refusing
from mtokspec.convert.result import ConversionResult
from mtokspec.format import tree as t
from mtokspec.names import DEVICES, TARGETS

__all__ = ["from_hf", "from_hf_tree", "from_hf_inputs"]

def from_hf(path: str | os.PathLike, *, strict: bool = False, exact_whitespace: bool = False,
            model_type: str | None = None, target: str = "exporter", reference: str = "hf") -> ConversionResult:
    """Convert a Hugging Face tokenizer folder (or ``tokenizer.json``) to a ``.mtok`` tree.

    ``strict=True`` raises :class:`ConversionError` listing the losses instead of returning.
    ``exact_whitespace=True`` writes HF ``Whitespace`` as :data:`~mtokspec.convert.inputs.WHITESPACE_SPLIT`.
    ``model_type`` is the exporter's model type (only ``glm_ocr`` changes anything).
    ``target="mnn"``: the bytes for which MNN's runtime gives HF's answers (``"mnn-next"``: with
    format next's extension, for MNN with ``patches/mnn/``; ``"mnn@3.6.1"``: for that MNN release)
    (:mod:`mtokspec.convert.mnn_target`); the losses are then what MNN still does differently,
    checked against HF ``tokenizers`` (``reference="mtokspec"``: against mtokspec's own HF
    semantics, named so in the result's ``reference``).
    """
    return from_hf_inputs(load_hf(path), strict=strict, exact_whitespace=exact_whitespace,
                          model_type=model_type, target=target, reference=reference)


def from_hf_tree(path: str | os.PathLike, **kwargs) -> t.MtokFile:
    """Just the tree of :func:`from_hf` (losses ignored unless ``strict=True``)."""
    return from_hf(path, **kwargs).tree


def from_hf_inputs(inputs: HFInputs, *, strict: bool = False, exact_whitespace: bool = False,
                   model_type: str | None = None, target: str = "exporter", reference: str = "hf") -> ConversionResult:
    """Convert already-loaded files (see :func:`~mtokspec.convert.inputs.load_hf`)."""
    from mtokspec.convert.mnn_target.reference import check_reference

    instance("inputs", inputs, HFInputs, "HFInputs (load_hf's)")
    check_reference(reference)
    token_text("target", target)
    optional_text("model_type", model_type)
    if target not in TARGETS:
        raise ConversionError(f"target {target!r}: expected one of {', '.join(map(repr, TARGETS))}")
    with refusing():
        exported = inputs
        if target in DEVICES:
            from mtokspec.convert.mnn_target.variants.models import wordlevel_as_wordpiece

            model = inputs.tokenizer_json.get("model")
            if isinstance(model, dict) and model.get("type") == "WordLevel":  # the row model.WordLevel
                exported = replace(inputs, tokenizer_json={**inputs.tokenizer_json,
                                                           "model": wordlevel_as_wordpiece(model)})
        tree, losses = export(exported, exact_whitespace=exact_whitespace, model_type=model_type)
        report, source = None, None
        if target in DEVICES:
            from mtokspec.convert.mnn_target.retarget import retarget_conversion

            tree, losses, report, source = retarget_conversion(inputs, tree, losses, inputs.template(),
                                                               reference=reference, target=target)
    if strict and losses:
        raise ConversionError("conversion would lose information (strict mode)", losses)
    if report is None:
        return ConversionResult(tree, losses, unicode_tables.UNIDATA_VERSION)
    return ConversionResult(tree, losses, unicode_tables.UNIDATA_VERSION, report.agreement, source,
                            report.differing)

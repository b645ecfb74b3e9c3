"""Hugging Face tokenizer folder -> ``.mtok`` tree, byte-identical to MNN's exporter, without
transformers.

``from_hf(path)`` reads ``tokenizer.json`` and, beside it, ``tokenizer_config.json``,
``special_tokens_map.json`` and ``generation_config.json``, and returns a
:class:`~mtokspec.convert.result.ConversionResult`.  The body is a transcription of the exporter
(:mod:`.body`), the header follows transformers 5's view of the folder (:mod:`.header`,
:mod:`.probe`, :mod:`.classes`); the rules are in ``docs/design/convert.md``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from mtokspec.convert import unicode_tables
from mtokspec.convert.hf.body import WHITESPACE_SPLIT, BodyTranscription
from mtokspec.convert.hf.classes import CLASS_DEFAULTS, CLASS_PIPELINES, TEMPLATE_FROM_FLAGS
from mtokspec.convert.hf.header import HeaderRules
from mtokspec.convert.hf.inputs import HFInputs, as_list, as_object, id_field, json_kind, load_hf
from mtokspec.convert.hf.probe import ProbeRules
from mtokspec.convert.loss import ConversionError, Loss
from mtokspec.errors import Error
from mtokspec.convert.result import ConversionResult
from mtokspec.format import tree as t
from mtokspec.runtime.mnn_versions import MNN_SEMANTICS, version_of
from mtokspec.runtime.shared.args import instance, optional_text, token_text

__all__ = ["ConversionResult", "HFInputs", "from_hf", "from_hf_tree", "from_hf_inputs",
           "load_hf", "WHITESPACE_SPLIT", "CLASS_DEFAULTS", "TEMPLATE_FROM_FLAGS", "CLASS_PIPELINES"]

UNCHECKED = "tokenizer.json holds a malformed value in a field without a check of its own"
"""How a refusal that no field check made begins (tests/test_fuzz.py asserts none happens)."""


def from_hf(path: str | os.PathLike, *, strict: bool = False, exact_whitespace: bool = False,
            model_type: str | None = None, target: str = "exporter", reference: str = "hf") -> ConversionResult:
    """Convert a Hugging Face tokenizer folder (or ``tokenizer.json``) to a ``.mtok`` tree.

    ``strict=True`` raises :class:`ConversionError` listing the losses instead of returning.
    ``exact_whitespace=True`` writes HF ``Whitespace`` as :data:`WHITESPACE_SPLIT`.
    ``model_type`` is the exporter's model type (only ``glm_ocr`` changes anything).
    ``target="mnn"``: the bytes for which MNN's runtime gives HF's answers
    (:mod:`mtokspec.convert.mnn_target`); the losses are then what MNN still does differently,
    checked against HF ``tokenizers`` (``reference="mtokspec"``: against mtokspec's own HF
    semantics, named so in the result's ``reference``).  ``target="mnn@3.6.1"``: the same for that
    released MNN version (:mod:`mtokspec.convert.mnn_target.versions`).
    """
    return from_hf_inputs(load_hf(path), strict=strict, exact_whitespace=exact_whitespace,
                          model_type=model_type, target=target, reference=reference)


def from_hf_tree(path: str | os.PathLike, **kwargs) -> t.MtokFile:
    """Just the tree of :func:`from_hf` (losses ignored unless ``strict=True``)."""
    return from_hf(path, **kwargs).tree


def from_hf_inputs(inputs: HFInputs, *, strict: bool = False, exact_whitespace: bool = False,
                   model_type: str | None = None, target: str = "exporter", reference: str = "hf") -> ConversionResult:
    """Convert already-loaded files (see :func:`load_hf`)."""
    from mtokspec.convert.mnn_target.reference import check_reference

    instance("inputs", inputs, HFInputs, "HFInputs (load_hf's)")
    check_reference(reference)
    token_text("target", target)
    optional_text("model_type", model_type)
    version = version_of(target)
    if target != "exporter" and version is None:
        raise ConversionError(f"target {target!r}: expected 'exporter' (MNN's exporter's bytes) or one of "
                              f"{', '.join(MNN_SEMANTICS)}")
    try:
        conv = _Converter(inputs, exact_whitespace=exact_whitespace, model_type=model_type)
        tree = conv.run()
        report, source = None, None
        if version is not None:
            from mtokspec.convert.mnn_target.retarget import retarget_conversion

            tree, conv.losses, report, source = retarget_conversion(
                inputs, tree, conv.losses, conv._template_of(inputs.tokenizer_json.get("post_processor")),
                reference=reference, version=version)
    except ConversionError:
        raise
    except Error as e:  # a bound of the runtimes the checks run it through (a pattern too costly ...)
        raise ConversionError(f"{type(e).__name__}: {e}") from e
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as e:
        # the checks name each field the fuzzer (tools/fuzz.py) has found malformed; this keeps a
        # field none of them covers a refusal too
        raise ConversionError(f"{UNCHECKED} ({type(e).__name__}: {e})") from e
    if strict and conv.losses:
        raise ConversionError("conversion would lose information (strict mode)", conv.losses)
    if report is None:
        return ConversionResult(tree, conv.losses, unicode_tables.UNIDATA_VERSION)
    return ConversionResult(tree, conv.losses, unicode_tables.UNIDATA_VERSION, report.agreement, source,
                            report.differing)


# ---------------------------------------------------------------------------------------------
# helpers shared with the header rules


class _Converter(HeaderRules, ProbeRules, BodyTranscription):
    """One conversion: the folder's files, the losses so far, and the probe's state."""

    def __init__(self, inputs: HFInputs, *, exact_whitespace: bool, model_type: str | None):
        self.inp = inputs
        self.tj = inputs.tokenizer_json
        self.tc = inputs.tokenizer_config
        self.exact_whitespace = exact_whitespace
        self.model_type = model_type
        self.losses: list[Loss] = []
        model = self.tj.get("model") or {}
        if not isinstance(model, dict):
            raise ConversionError("tokenizer.json: 'model' is not an object")
        self.model = model
        self.added = as_list(self.tj.get("added_tokens"), "added_tokens")
        for i, at in enumerate(self.added):
            at = as_object(at, f"added_tokens[{i}]")
            id_field(at.get("id"), f"added_tokens[{i}].id")
            if not isinstance(at.get("content"), str):
                raise ConversionError(f"added_tokens[{i}].content: expected a string, got {json_kind(at.get('content'))}")
        self.mtype = self._model_type()
        self._body: t.MtokFile | None = None  # the converted body, once built (the probes run it)
        self._probe: Any = None  # probe_tokenizer's answer; False when there is none
        self._special: tuple[dict[str, str], list[str]] | None = None
        self._token_ids: dict[str, int] | None = None

    def loss(self, path: str, what: str, replacement: str, may_change: bool) -> None:
        self.losses.append(Loss(path, what, replacement, may_change))

    def run(self) -> t.MtokFile:
        normalizer = self.normalizer(self.tj.get("normalizer"), "normalizer")
        pre = self.pre_tokenizer(self.tj.get("pre_tokenizer"), "pre_tokenizer")
        model = self.model_tree()
        decoder = self.decoder(self.tj.get("decoder"), "decoder")
        added = self.added_tokens()
        chat, eos, flags, bos = self.trailing()
        ops = self.post_ops()
        body = t.MtokFile(header=t.make_header([], [], []), normalizer=normalizer, pre_tokenizer=pre, model=model,
                          decoder=decoder, added_tokens=added, chat_template=chat, eos_token=eos,
                          flags=flags, bos_token=bos, post_processor=t.PostProcessorProgram(ops))
        # the header last: its encode("A") probe runs the body when it can
        return replace(body, header=self.header(body))

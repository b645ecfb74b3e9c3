"""Hugging Face tokenizer folder -> ``.mtok`` tree, byte-identical to MNN's exporter, without
transformers: the ``exporter`` target of :func:`mtokspec.convert.from_hf`.

:func:`export` converts a parsed folder (:class:`~mtokspec.convert.inputs.HFInputs`).  The body is
a transcription of the exporter (:mod:`.body`), the header follows transformers 5's view of the
folder (:mod:`.header`, :mod:`.probe`, :mod:`.classes`); the rules are in ``docs/design/convert.md``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mtokspec.convert.hf.body import BodyTranscription
from mtokspec.convert.hf.classes import CLASS_DEFAULTS, CLASS_PIPELINES, TEMPLATE_FROM_FLAGS
from mtokspec.convert.hf.header import HeaderRules
from mtokspec.convert.hf.probe import ProbeRules
from mtokspec.convert.inputs import HFInputs, as_list, as_object, id_field, json_kind
from mtokspec.convert.loss import ConversionError, Loss, refusing
from mtokspec.format import tree as t

__all__ = ["export", "CLASS_DEFAULTS", "TEMPLATE_FROM_FLAGS", "CLASS_PIPELINES"]


def export(inputs: HFInputs, *, exact_whitespace: bool = False,
           model_type: str | None = None) -> tuple[t.MtokFile, list[Loss]]:
    """The tree MNN's exporter writes from the folder, and what it loses (``exact_whitespace``,
    ``model_type``: see :func:`mtokspec.convert.from_hf`); what it cannot read is a
    :class:`ConversionError` (:func:`~mtokspec.convert.loss.refusing`)."""
    with refusing():
        conv = _Converter(inputs, exact_whitespace=exact_whitespace, model_type=model_type)
        return conv.run(), conv.losses


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

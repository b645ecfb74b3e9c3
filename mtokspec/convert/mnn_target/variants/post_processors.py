"""Post-processors: how ``--target mnn`` carries HF's single-sequence template on the released format."""

from __future__ import annotations

from mtokspec.convert.mnn_target.variants.row import Variant, Verdict as V

__all__ = ["ROWS"]

_PROGRAM = "a program of HF's single template, padded where MNN would misread it; no prefix ids"

ROWS: tuple[Variant, ...] = (
    Variant("post_processor", "TemplateProcessing", "", V.EXACT, _PROGRAM,
            example={"type": "TemplateProcessing",
                     "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                     "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                     "special_tokens": {}}),
    Variant("post_processor", "BertProcessing", "", V.EXACT, _PROGRAM,
            example={"type": "BertProcessing", "sep": ["[SEP]", 0], "cls": ["[CLS]", 0]}),
    Variant("post_processor", "RobertaProcessing", "", V.EXACT, _PROGRAM + " (trim_offsets, add_prefix_space: offsets)",
            example={"type": "RobertaProcessing", "sep": ["[SEP]", 0], "cls": ["[CLS]", 0], "trim_offsets": True,
                     "add_prefix_space": False}),
    Variant("post_processor", "ByteLevel", "", V.EXACT, "nothing (it changes offsets only)",
            example={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    Variant("post_processor", "Sequence", "", V.EXACT, "the program of its children's templates",
            example={"type": "Sequence", "processors": [
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
                {"type": "BertProcessing", "sep": ["[SEP]", 0], "cls": ["[CLS]", 0]}]}),
)

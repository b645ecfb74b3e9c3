"""``convert --target mnn``: a ``.mtok`` for which MNN's C++ runtime gives Hugging Face's answers.

``from_hf(path, target="mnn")`` builds the exporter's tree, then sets every lever the format has
(:mod:`.choices`) and reports, as losses naming a divergence rule with a minimal example
(:mod:`.report`), what MNN still does differently from HF ``tokenizers`` on the folder.
"""

from __future__ import annotations

from mtokspec import tree as t
from mtokspec.convert.loss import Loss
from mtokspec.convert.mnn_target.choices import retarget

__all__ = ["retarget", "retarget_conversion"]


def retarget_conversion(inputs, tree: t.MtokFile, losses: list[Loss], template: list | None
                        ) -> tuple[t.MtokFile, list[Loss]]:
    """The exporter's conversion (tree and losses) made for MNN's runtime."""
    return retarget(tree, inputs.tokenizer_json, template), losses

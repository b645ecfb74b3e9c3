"""``--target mnn@VERSION``: the ``--target mnn`` file changed where a released MNN version reads or
runs it otherwise than HEAD (:mod:`mtokspec.runtime.mnn.versions`), with a loss for what that
version still cannot do.

- no post-processor program (before 75e53afe5): the program is left out and its ids before the
  text become the header's prefix ids, which every version puts first; ids after the text are lost;
- no Strip normalizer (before cdeb5b07f, which the loader misreads): left out, a loss;
- null sequence children called (before cdeb5b07f): left out (HEAD skips them, so nothing changes);
- chat template filters the version's engine lacks: a loss naming them (the engine passes the
  value through).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from mtokspec.convert.inputs import SEQ_A
from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t
from mtokspec.runtime.mnn.versions import HEAD, MnnVersion

__all__ = ["for_version"]


def for_version(tree: t.MtokFile, version: MnnVersion, template: list[int | str] | None
                ) -> tuple[t.MtokFile, list[Loss]]:
    """The ``--target mnn`` tree made for ``version`` (``template``: HF's post-processor template,
    None when it is not modelled), and the losses that version adds."""
    if version is HEAD:
        return tree, []
    losses: list[Loss] = []
    if not version.post_processor:
        tree, losses = _without_program(tree, version, template, losses)
    if not version.strip_normalizer:
        kept = _without(tree.normalizer, t.StripNormalizer, t.NoNormalizer())
        if kept != tree.normalizer:
            losses.append(Loss("normalizer", "Strip normalizer (white space stripped at the ends)",
                               f"left out: MNN {version.name} does not know it (its loader reads the rest of "
                               f"the file out of place)", True))
            tree = replace(tree, normalizer=kept)
    if not version.skips_null_children:
        tree = replace(tree, normalizer=_without(tree.normalizer, t.NoNormalizer, t.NoNormalizer()),
                       pre_tokenizer=_without(tree.pre_tokenizer, t.NoPreTokenizer, t.NoPreTokenizer()))
    missing = sorted(f for f in version.missing_filters
                     if tree.chat_template and re.search(r"\|\s*" + re.escape(f) + r"\b", tree.chat_template))
    if missing:
        losses.append(Loss("chat_template", f"the template uses the filter{'s' * (len(missing) > 1)} "
                                            f"{', '.join(missing)}",
                           f"MNN {version.name}'s Jinja engine lacks {', '.join(missing)}: it passes the value "
                           f"through unchanged", False))
    return tree, losses


def _without_program(tree: t.MtokFile, version: MnnVersion, template: list[int | str] | None,
                     losses: list[Loss]) -> tuple[t.MtokFile, list[Loss]]:
    """The program left out; its ids before the text as prefix ids."""
    ops = tree.post_processor.ops if isinstance(tree.post_processor, t.PostProcessorProgram) else []
    if template is None or template.count(SEQ_A) != 1:
        if ops:
            losses.append(Loss("post_processor", "the post-processor program",
                               f"left out: MNN {version.name} reads no program (the header's prefix ids "
                               f"stay)", True))
        return replace(tree, post_processor=None), losses
    at = template.index(SEQ_A)
    before, after = [int(x) for x in template[:at]], [int(x) for x in template[at + 1:]]
    if after:
        losses.append(Loss("post_processor", f"ids {after} after the text",
                           f"left out: MNN {version.name} reads no post-processor program, and the header "
                           f"holds ids before the text only", True))
    h = tree.header
    return replace(tree, header=t.make_header(h.special, h.stop, before), post_processor=None), losses


def _without(node: Any, kind: type, null: Any) -> Any:
    """``node`` with every ``kind`` node and ``null`` child left out of its sequences; a ``kind``
    node itself, or a sequence left empty, becomes ``null`` (the stage's null node)."""
    if isinstance(node, kind):
        return null
    fields = t.sequence_fields(node)
    if not fields:
        return node
    kids = {f: [c for c in (_without(c, kind, null) for c in getattr(node, f)) if not isinstance(c, type(null))]
            for f in fields}
    return replace(node, **kids) if any(kids.values()) else null

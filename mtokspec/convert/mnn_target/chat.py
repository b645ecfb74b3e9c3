"""The chat template of a ``--target mnn`` file, rewritten for MNN's Jinja engine (``convert
--target mnn`` and ``fix`` both call :func:`with_chat_template_for_mnn`)."""

from __future__ import annotations

from dataclasses import replace

from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t
from mtokspec.args import instance, optional_text, token_text

__all__ = ["chat_template_for_mnn", "with_chat_template_for_mnn"]


def chat_template_for_mnn(template: str, bos_token: str | None, eos_token: str | None = None
                          ) -> tuple[str, list[Loss]]:
    """``(template, losses)``: the chat template rewritten so that MNN's Jinja engine renders what
    transformers renders (:func:`mtokspec.chat.rewrite.rewrite_for_mnn`), and what MNN still renders
    differently, one loss per construct (its rule's code in brackets)."""
    from mtokspec.chat.rewrite import rewrite_for_mnn

    token_text("template", template)
    optional_text("bos_token", bos_token)
    optional_text("eos_token", eos_token)
    done = rewrite_for_mnn(template, bos_token=bos_token, eos_token=eos_token)
    losses = [Loss("chat_template", f"{x.message} [{x.code}]", "kept (MNN renders it differently from transformers)",
                   False) for x in done.losses]
    return done.template, losses


def with_chat_template_for_mnn(tree: t.MtokFile) -> tuple[t.MtokFile, list[Loss]]:
    """``tree`` with its chat template as :func:`chat_template_for_mnn` gives it, and the losses."""
    instance("tree", tree, t.MtokFile, "an MtokFile tree")
    if not tree.chat_template:
        return tree, []
    text, losses = chat_template_for_mnn(tree.chat_template, tree.bos_token or None, tree.eos_token or None)
    return replace(tree, chat_template=text), losses

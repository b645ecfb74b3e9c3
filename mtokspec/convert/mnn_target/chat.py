"""The chat template of a ``--target mnn`` file: the place where a rewriter of templates for MNN's
Jinja engine plugs in (``convert --target mnn`` and ``fix`` both call it)."""

from __future__ import annotations

from dataclasses import replace

from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t

__all__ = ["chat_template_for_mnn", "with_chat_template_for_mnn"]


def chat_template_for_mnn(template: str, bos_token: str | None) -> tuple[str, list[Loss]]:
    """``(template, losses)``: the chat template as MNN's Jinja engine should receive it.

    This is the hook for a rewriter of templates for MNN's engine: it returns the template
    unchanged and lists, as losses, the constructs MNN renders differently from transformers
    (:func:`mtokspec.chat.lint.lint_chat_template`, warnings and errors)."""
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.format.validate import INFO

    losses = [Loss(f.path, f"{f.message} [{f.code}]", "kept (MNN renders it differently from transformers)", False)
              for f in lint_chat_template(template, bos_token=bos_token) if f.severity != INFO]
    return template, losses


def with_chat_template_for_mnn(tree: t.MtokFile) -> tuple[t.MtokFile, list[Loss]]:
    """``tree`` with its chat template as :func:`chat_template_for_mnn` gives it, and the losses."""
    if not tree.chat_template:
        return tree, []
    text, losses = chat_template_for_mnn(tree.chat_template, tree.bos_token or None)
    return replace(tree, chat_template=text), losses

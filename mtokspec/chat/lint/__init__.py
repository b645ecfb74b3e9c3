"""Lint a chat template for MNN's Jinja engine (``tokenizer/jinja.hpp``).

Design record: ``docs/design/chat.md``.
"""

from __future__ import annotations

import jinja2
import jinja2.ext
import jinja2.nodes as nodes

from mtokspec.chat.lint.checks import _Lint
from mtokspec.chat.environment import parsing_environment
from mtokspec.chat.lint.expressions import _free_names, _target_key
from mtokspec.format.validate import Finding

__all__ = ["lint_chat_template"]


def lint_chat_template(template: str, path: str = "chat_template", *,
                       bos_token: str | None = None) -> list[Finding]:
    """The constructs of ``template`` MNN's Jinja engine renders differently from transformers.

    ``bos_token`` is the file's BOS string when known: MNN leaves ``bos_token`` undefined when it is
    empty (``None``: not known, so such uses are reported as warnings).
    """
    lint = _Lint(path, bos_token)
    env = parsing_environment()
    try:
        ast = env.parse(template)
    except jinja2.TemplateSyntaxError as e:
        lint.add("mnn-jinja-lenient-parser", "error", e.lineno,
                 f"transformers cannot parse the template ({e.message}); MNN renders it anyway")
        return lint.result()
    lint.lexical(env, template)
    lint.free_names = _free_names(ast)
    lint.printed_vars = {_target_key(n) for out in ast.find_all(nodes.Output) for child in out.nodes
                         for n in [child, *child.find_all((nodes.Name, nodes.Getattr))]} - {None}
    lint.walk_template(ast)
    lint.whitespace_findings()
    lint.typed_content(ast)
    return lint.result()

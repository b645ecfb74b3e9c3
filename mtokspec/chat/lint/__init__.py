"""Lint a chat template for MNN's Jinja engine (``tokenizer/jinja.hpp``).

Design record: ``docs/design/chat.md``.
"""

from __future__ import annotations

import jinja2
import jinja2.ext
import jinja2.nodes as nodes

from mtokspec.chat.lint.checks import TemplateLint
from mtokspec.chat.environment import parsing_environment
from mtokspec.chat.lint.expressions import free_names, target_key
from mtokspec.chat.lint.guards import mnn_view
from mtokspec.chat.bounds import MAX_TEMPLATE_CHARS
from mtokspec.errors import ChatTemplateError
from mtokspec.format.validate import Finding
from mtokspec.args import optional_text, token_text

__all__ = ["lint_chat_template", "RAISED"]

#: What a rewritten template renders on MNN where transformers raises: this, then the message
#: (``mtokspec.chat.rewrite`` writes it; declared here, below the rewrite).
RAISED = "raise_exception: "


def lint_chat_template(template: str, path: str = "chat_template", *,
                       bos_token: str | None = None) -> list[Finding]:
    """The constructs of ``template`` MNN's Jinja engine renders differently from transformers.

    ``bos_token`` is the file's BOS string when known: MNN leaves ``bos_token`` undefined when it is
    empty (``None``: not known, so such uses are reported as warnings).

    Raises :class:`ChatTemplateError` for what the renderer refuses too: a template longer than
    ``MAX_TEMPLATE_CHARS``, or nested deeper than jinja2's parser or ``MAX_LINT_DEPTH`` levels of
    expressions and statements.  The time is linear in the template's length.
    """
    token_text("template", template)
    token_text("path", path)
    optional_text("bos_token", bos_token)
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ChatTemplateError(f"template too long to lint (limit {MAX_TEMPLATE_CHARS} characters, "
                                "as the renderer's)")
    lint = TemplateLint(path, bos_token)
    env = parsing_environment()
    try:
        ast = env.parse(template)
    except jinja2.TemplateSyntaxError as e:
        lint.add("mnn-jinja-lenient-parser", "error", e.lineno,
                 f"transformers cannot parse the template ({e.message}); MNN renders it anyway")
        return lint.result()
    except RecursionError:
        raise ChatTemplateError("template nested too deeply for jinja2's parser (transformers cannot "
                                "compile it either)") from None
    depth = _depth(ast)
    if depth > MAX_LINT_DEPTH:
        raise ChatTemplateError(f"template nested {depth} levels deep; the lint reads at most {MAX_LINT_DEPTH}")
    try:
        return _lint_parsed(lint, env, template, ast)
    except RecursionError:  # a construct that needs more stack per level than measured
        raise ChatTemplateError("template nested too deeply to lint") from None


#: deepest nesting of nodes (expressions in statements) the lint walks; deeper is refused
MAX_LINT_DEPTH = 200


def _depth(ast: nodes.Node) -> int:
    """The deepest nesting of nodes under ``ast``, found without recursion."""
    deepest, todo = 0, [(ast, 1)]
    while todo:
        node, d = todo.pop()
        if d > deepest:
            deepest = d
            if d > MAX_LINT_DEPTH:
                break
        todo.extend((child, d + 1) for child in node.iter_child_nodes())
    return deepest


def _lint_parsed(lint: TemplateLint, env: jinja2.Environment, template: str, ast: nodes.Template) -> list[Finding]:
    lint.lexical(env, template)
    view = mnn_view(ast)  # the rewrite's guards, as MNN evaluates them
    lint.exact_tests = view.exact_tests
    for r in view.raises:
        lint.add("mnn-jinja-raise-noop", "info", r.lineno,
                 f"raise_exception({r.message}) runs on transformers only: where it raises, MNN renders "
                 f"'{RAISED}' and the message as the prompt (the rewrite's contract)")
    for lineno, code, message in view.approximations:
        lint.add(code, "warning", lineno, message)
    lint.free_names = free_names(ast)
    lint.printed_vars = {target_key(n) for out in ast.find_all(nodes.Output) for child in out.nodes
                         for n in [child, *child.find_all((nodes.Name, nodes.Getattr))]} - {None}
    lint.walk_template(ast)
    lint.whitespace_findings()
    lint.typed_content(ast)
    return lint.result()

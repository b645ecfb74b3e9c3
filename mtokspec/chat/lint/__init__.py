"""Lint a chat template for MNN's Jinja engine (``tokenizer/jinja.hpp``).

``lint_chat_template(template)`` reports each construct MNN renders differently from transformers,
one :class:`~mtokspec.format.validate.Finding` per construct and line, coded with the rules of
:mod:`mtokspec.divergences.chat_template`.  It is a static analysis: jinja2's own lexer and parser
read the template (the AST answers everything but white space and string escapes, which only the
token stream keeps); MNN's lexer is re-implemented only to find the text it keeps between tags.

Severity says how much of the template's use the construct spoils, given how MNN calls it
(``Tokenizer::apply_chat_template``: role/content messages, no ``tools``; ``eos_token`` always,
``bos_token`` only when non-empty, ``add_generation_prompt`` only when true):

* ``error``: MNN renders wrongly (runs out of memory, never returns) whenever the construct is
  reached, its value is printed, and a plain conversation (system/user/assistant messages with
  string content) reaches it;
* ``warning``: it differs only for some inputs: the outcome depends on the data (non-ASCII text,
  missing keys, input transformers rejects), the value only goes to a variable or a condition, or
  only other conversations reach it (tool roles, ``tool_calls``, content parts ...);
* ``info``: only ``tools``, ``documents`` or other variables of the caller lead there, which MNN
  passes only through a file's ``chat_template_context``.

Branches are judged by evaluating their conditions the way MNN would for a plain conversation
(``tools`` and caller variables undefined, a message's other keys missing, ``.get()`` giving '');
what cannot be decided counts as reached.  An ``if`` that only calls ``raise_exception`` is not
judged: whatever MNN makes of its condition, the raise is a no-op (reported on its own).
"""

from __future__ import annotations

import jinja2
import jinja2.ext
import jinja2.nodes as nodes

from mtokspec.chat.lint.checks import _Lint
from mtokspec.chat.lint.engine import _environment
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
    env = _environment()
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

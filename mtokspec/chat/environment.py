"""The template syntax transformers renders chat templates with, declared once for the renderer
and the lint: ``trim_blocks``, ``lstrip_blocks``, ``{% break %}``/``{% continue %}`` and a
``{% generation %}`` tag whose body renders unchanged.  A number literal Python cannot read (a
decimal integer of more than ``sys.get_int_max_str_digits()`` digits: jinja2 raises ``ValueError``,
so transformers cannot compile the template) is a ``TemplateSyntaxError`` here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jinja2
import jinja2.ext
import jinja2.lexer
import jinja2.nodes as nodes


class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: the body in place (transformers uses the tag only
    to track assistant-token indices; MNN skips the unknown tag and renders the body too)."""

    tags = {"generation"}

    def parse(self, parser: Any) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


class NumberLiterals(jinja2.ext.Extension):
    """A number literal jinja2's lexer cannot convert (``int()`` refuses decimal integers of more
    than ``sys.get_int_max_str_digits()`` digits with ``ValueError``) as a ``TemplateSyntaxError``
    at the line of the token before it, instead of the ``ValueError``."""

    def filter_stream(self, stream: jinja2.lexer.TokenStream) -> Iterator[jinja2.lexer.Token]:
        tokens = iter(stream)
        while True:
            try:
                token = next(tokens)
            except StopIteration:
                return
            except ValueError as e:  # raised by the lexer's conversion of the next token
                raise jinja2.TemplateSyntaxError(
                    f"a number literal Python cannot read ({str(e).split(';')[0]})",
                    stream.current.lineno, stream.name, stream.filename) from None
            yield token


TEMPLATE_SYNTAX: dict[str, Any] = dict(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[jinja2.ext.loopcontrols, GenerationTag, NumberLiterals])
"""The ``jinja2.Environment`` options that decide how a template parses."""


def parsing_environment() -> jinja2.Environment:
    """A plain environment with transformers' syntax, for reading templates (not for rendering
    untrusted ones: :mod:`mtokspec.chat.sandbox` does that)."""
    return jinja2.Environment(**TEMPLATE_SYNTAX)

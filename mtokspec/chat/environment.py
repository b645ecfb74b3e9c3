"""The template syntax transformers renders chat templates with, declared once for the renderer
and the lint: ``trim_blocks``, ``lstrip_blocks``, ``{% break %}``/``{% continue %}`` and a
``{% generation %}`` tag whose body renders unchanged."""

from __future__ import annotations

from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes as nodes


class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: the body in place (transformers uses the tag only
    to track assistant-token indices; MNN skips the unknown tag and renders the body too)."""

    tags = {"generation"}

    def parse(self, parser: Any) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


TEMPLATE_SYNTAX: dict[str, Any] = dict(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[jinja2.ext.loopcontrols, GenerationTag])
"""The ``jinja2.Environment`` options that decide how a template parses."""


def parsing_environment() -> jinja2.Environment:
    """A plain environment with transformers' syntax, for reading templates (not for rendering
    untrusted ones: :mod:`mtokspec.chat.sandbox` does that)."""
    return jinja2.Environment(**TEMPLATE_SYNTAX)

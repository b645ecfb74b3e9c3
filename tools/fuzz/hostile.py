"""Hostile sizes: long decimals, YAML aliases and long numbers in plain documents, strftime widths,
deep template expressions."""

from __future__ import annotations

import json
import re

from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies as ms

from tools.fuzz.calls import refused_or_ok
from tools.fuzz.inputs import _edit, _paths, parsed_files
from tools.fuzz.entry_points import check_from_dict

# ---------------------------------------------------------------------------------------------
# hostile sizes: long decimals, YAML aliases, strftime widths, deep template expressions

_LONG_DIGITS = st.one_of(st.integers(11, 30), st.integers(4290, 4310), st.integers(5000, 20000))
_DECIMAL_RUN = re.compile(rb"(?<![0-9A-Za-z+/=])-?[0-9]+(?![0-9A-Za-z+/=])")


@st.composite
def long_decimal_files(draw) -> bytes:
    """A legacy or .mtok file with one of its decimals (a header count or id, a count line, a type
    column) replaced by one of 11 to 20,000 digits, some around Python's int() limit (4300)."""
    data = draw(st.one_of(ms.txt_bytes(), ms.mtok_bytes(valid=True)))
    runs = [m.span() for m in _DECIMAL_RUN.finditer(data, 0, _text_part(data))]
    digits = draw(_LONG_DIGITS)
    long = draw(st.sampled_from([b"", b"-"])) + b"1" + b"9" * (digits - 1)
    if not runs:
        return data
    a, b = runs[draw(st.integers(0, len(runs) - 1))]
    return data[:a] + long + data[b:]


def _text_part(data: bytes) -> int:
    """Where the decimal text of a file ends: after the header of a .mtok, the whole legacy file."""
    if data.startswith(b"430 4\n"):
        third = data.find(b"\n", data.find(b"\n", 6) + 1)
        return third + 1 if third > 0 else len(data)
    return len(data)


@st.composite
def plain_texts(draw) -> tuple[str, str]:
    """(YAML or JSON text, format): a YAML alias bomb (up to 9 levels of 9 aliases), shared or
    recursive anchors, or a dumped tree with a long integer in an int, float or text field."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        depth, width = draw(st.integers(1, 9)), draw(st.integers(1, 9))
        lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, depth + 1)]
        return "\n".join(lines) + "\n", "yaml"
    if kind == 1:
        return draw(st.sampled_from(["a: &x [1]\nb: *x\n", "a: &x [*x]\n", "a: &x {b: *x}\n",
                                     "format: mtok\nheader: &h {ids: [1]}\nh2: *h\n"])), "yaml"
    doc = mtokspec.to_dict(draw(parsed_files()))
    paths = _paths(doc)
    digits = draw(_LONG_DIGITS)
    if paths:
        doc = _edit(doc, paths[draw(st.integers(0, len(paths) - 1))], _LongNumber(digits), False)
    fmt = draw(st.sampled_from(["json", "yaml"]))
    text = json.dumps(doc, default=_LongNumber.placeholder)
    return text.replace(_LongNumber.MARK, "9" * digits), fmt


class _LongNumber:
    """A placeholder written into a document as a long run of digits."""

    MARK = '"@@long-number@@"'

    def __init__(self, digits: int):
        self.digits = digits

    @staticmethod
    def placeholder(_value) -> str:
        return "@@long-number@@"


def check_plain(args) -> None:
    """plainio.loads of hostile YAML/JSON, then from_dict and build of what loads."""
    from mtokspec.format import plainio
    text, fmt = args
    doc = refused_or_ok("plainio.loads", plainio.loads, text, fmt)
    if isinstance(doc, dict):
        check_from_dict(doc)


_STRFTIME_DIRECTIVE = st.builds(
    lambda flag, width, letter: f"%{flag}{width}{letter}",
    st.sampled_from(["", "-", "_", "0", "^", "#"]),
    st.one_of(st.just(""), st.integers(0, 10**6).map(str), st.integers(10**9, 10**13).map(str),
              st.integers(1, 6000).map(lambda n: "9" * n)),
    st.sampled_from(list("YmdHMSyBbAacxXpjUWZz%")))
_WRAPPERS = ["({})", "not {}", "{} + x", "{} and x", "{} or x", "{}|trim", "f({})", "[{}]", "{} ~ x", "({},)",
             "{{'k': {}}}", "{} if x else y", "-{}", "{}[0]", "{}.a"]


@st.composite
def chat_bound_templates(draw) -> str:
    """Templates that try to grow a value past the render limit (strftime_now widths, growing
    str methods on its result) or to nest expressions and statements deeper than any parser."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        fmt = "".join(draw(st.lists(_STRFTIME_DIRECTIVE, min_size=1, max_size=4)))
        times = draw(st.sampled_from([1, 2, 1000, 166666]))
        method = draw(st.sampled_from(["", ".split()", ".split('0')", ".encode('utf-8').hex()", ".upper()",
                                       ".splitlines()", "|length", "|upper", "|urlencode"]))
        return "{{ strftime_now(%r * %d)%s }}" % (fmt, times, method)
    if kind == 1:
        base = draw(st.sampled_from(["'é'", "'a '", "'\\n'", "'<'"]))
        times = draw(st.sampled_from([1000, 300000, 999999]))
        method = draw(st.sampled_from([".split()", ".split(' ')", ".splitlines()", ".encode('utf-8').hex()",
                                       ".upper()", ".title()", "|urlencode", "|escape", "|upper"]))
        return "{{ (%s * %d)%s }}" % (base, times, method)
    expr = "x"
    for i in draw(st.lists(st.integers(0, len(_WRAPPERS) - 1), max_size=400)):
        expr = _WRAPPERS[i].format(expr)
    if draw(st.booleans()):
        return "{{ %s }}" % expr
    depth = draw(st.integers(0, 300))
    return "{% if x %}" * depth + "{% if " + expr + " %}a{% endif %}" + "{% endif %}" * depth


def check_chat_bounds(template: str) -> None:
    """render_chat_template and lint_chat_template of a hostile template: an mtokspec.Error or an
    answer, in time."""
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.chat.render import render_chat_template
    messages = [{"role": "user", "content": "Hi"}]
    refused_or_ok("render_chat_template", render_chat_template, template, messages, timeout_seconds=0.5)
    refused_or_ok("lint_chat_template", lint_chat_template, template)

"""Hostile inputs end as the library's errors: long decimals, oversize numbers in plain data, YAML
aliases (issue 26).  The CLI's and the writer's side are in ``cli/test_cli_limits.py``."""

from __future__ import annotations

import pytest

import mtokspec
from mtokspec.format import plainio
from mtokspec.errors import MtokFormatError

LONG = b"9" * 5000  # past Python's int() limit (4300 digits)

# every decimal field of the text formats, as a file whose field holds ``D``
DECIMAL_FIELDS = {
    "header.counts": b"430 1\nD 0 0\n\n0\n",
    "header.ids": b"430 1\n2 0 0\n1 D\n0\n",
    "count (tiktoken)": b"430 1\n0 0 0\n\nD\n",
    "count (bert)": b"430 2\n0 0 0\n\nD\n",
    "count (sentencepiece)": b"430 0\n0 0 0\n\nD\n",
    "counts (huggingface)": b"430 3\n0 0 0\n\n1 D\n",
    "pieces[0].type": b"430 0\n0 0 0\n\n1\nYQ== 0.0 D\n",
    "header (mtok)": b"430 4\n0 D 0\n\n",
}


@pytest.mark.parametrize("runtime_path", ["compiled", "pure"], indirect=True)
@pytest.mark.parametrize("field", list(DECIMAL_FIELDS))
@pytest.mark.parametrize("digits", [LONG, b"1" + b"0" * 10, b"-" + b"9" * 11])
def test_decimal_longer_than_its_field_is_a_format_error(runtime_path, field, digits):
    """Every decimal the codec reads has at most 10 digits (a 32-bit int): a longer one is refused
    with the offset and field, on the compiled and the pure path, never a ValueError of int()."""
    data = DECIMAL_FIELDS[field].replace(b"D", digits)
    with pytest.raises(MtokFormatError) as err:
        mtokspec.parse(data)
    assert err.value.offset is not None and err.value.offset < len(data)


@pytest.mark.parametrize("runtime_path", ["compiled", "pure"], indirect=True)
def test_ten_digits_still_read_and_written_back(runtime_path):
    data = b"430 0\n0 0 0\n\n1\nYQ== 0.0 -9999999999\n"
    assert mtokspec.build(mtokspec.parse(data)) == data


@pytest.mark.parametrize(("text", "path"), [
    ('{"format": "txt-tiktoken", "header": {"special_count": %s}}' % LONG.decode(), "header.special_count"),
    ("format: txt-tiktoken\nheader: {special_count: %s}\n" % LONG.decode(), "header.special_count"),
    ('{"format": "txt-tiktoken", "header": {"prefix_count": %s}}' % ("9" * 40), "header.prefix_count"),
    ('{"format": "txt-tiktoken", "header": {"special_count": 2, "ids": [1, %s]}}' % ("9" * 15), "header.special"),
    ('{"format": "txt-tiktoken", "header": {"ids": [%s]}}' % LONG.decode(), "header.ids[0]"),
    ('{"model": {"type": "UnigramModel", "vocab": [["a", 0, %s]]}}' % ("9" * 401), "model.vocab[0]"),
    ("model: {type: UnigramModel, vocab: [[a, 0, %s]]}\n" % ("9" * 401), "model.vocab[0]"),
])
def test_oversize_numbers_in_plain_data_name_their_path(text, path):
    """JSON and YAML load an integer of any length without int()'s limit; from_dict and build refuse
    what no field holds (a 401-digit integer in a float field included) naming the field."""
    with pytest.raises(MtokFormatError) as err:
        mtokspec.build(mtokspec.from_dict(plainio.loads(text)))
    assert err.value.path.startswith(path), err.value


def test_from_dict_refuses_a_huge_int_given_directly():
    with pytest.raises(MtokFormatError, match="bits"):
        mtokspec.from_dict({"format": "txt-tiktoken", "header": {"special_count": 10 ** 5000}})
    with pytest.raises(MtokFormatError, match="float"):
        mtokspec.from_dict({"model": {"type": "UnigramModel", "vocab": [["a", 0, 10 ** 400]]}})


def test_yaml_aliases_are_refused_before_anything_expands():
    """A few hundred bytes of nested aliases name 9**9 nodes; the loader refuses the first shared
    value after one linear walk."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    text = "\n".join(lines) + "\n"
    assert len(text) < 900
    with pytest.raises(MtokFormatError, match="alias"):
        plainio.loads(text, "yaml")
    with pytest.raises(MtokFormatError, match="alias"):
        plainio.loads("a: &x [1]\nb: *x\n", "yaml")
    with pytest.raises(MtokFormatError, match="alias"):
        plainio.loads("a: &x [*x]\n", "yaml")  # a recursive one
    assert plainio.loads("a: &x 1\nb: *x\n", "yaml") == {"a": 1, "b": 1}  # a shared scalar is a copy


def test_find_oversize_names_the_path():
    doc = plainio.load_json('[{"role": "user", "content": [1, %s]}]' % LONG.decode())
    assert plainio.find_oversize(doc, "messages") == "messages[0].content[1]"
    assert plainio.find_oversize([{"a": 1}]) is None


# --- chat templates: values bounded as they are made -------------------------------------------

def _render(template: str) -> str:
    from mtokspec.chat.render import render_chat_template

    return render_chat_template(template, messages=[{"role": "user", "content": "Hi"}])


@pytest.mark.parametrize("template", [
    "{{ strftime_now('%1200Y' * 166666) }}",  # 200M characters, glibc pads any width
    "{{ strftime_now('%999999999999Y') }}",
    "{{ strftime_now('%' + '9' * 5000 + 'Y') }}",  # a width int() could not even read
    "{% set s = 'a ' * 400000 %}{{ s.split()|length }}",
    "{% set s = ',' * 900000 %}{{ s.rsplit(',')|length }}",
    "{% set s = '\\n' * 900000 %}{{ s.splitlines()|length }}",
    "{% set s = 'é' * 600000 %}{{ s.encode('utf-8').hex()|length }}",
    "{% set s = 'é' * 400000 %}{{ s.encode('utf-8').hex()|length }}",  # the owner fits, the result does not
    "{{ ('é' * 500000)|urlencode|length }}",
    "{{ ('<' * 500000)|escape|length }}",
])
def test_values_that_grow_past_the_limit_are_refused(template):
    from mtokspec.errors import ChatTemplateError

    with pytest.raises(ChatTemplateError, match="limit"):
        _render(template)


def test_ordinary_uses_still_render():
    assert _render("{{ strftime_now('%Y') | length }}") == "4"
    assert _render("{{ 'a b  c'.split() | join('-') }} {{ 'x,y'.split(',') | length }}") == "a-b-c 2"
    assert _render("{{ 'é'.encode('utf-8').hex() }} {{ 'ß'.upper() }} {{ '<'|e }}") == "c3a9 SS &lt;"
    assert _render("{{ ('ß' * 300000).upper() | length }}") == "600000"


# --- the chat template lint: linear, capped, never a RecursionError ------------------------------

def _deep(kind: str, n: int) -> str:
    return {
        "paren": "{{ " + "(" * n + "x" + ")" * n + " }}",
        "plus": "{{ " + " + ".join(["x"] * n) + " }}",
        "and": "{% if " + " and ".join(["x"] * n) + " %}a{% endif %}",
        "not": "{% if " + "not " * n + "x %}a{% endif %}",
        "filter": "{{ x" + "|trim" * n + " }}",
        "call": "{{ " + "f(" * n + "x" + ")" * n + " }}",
        "list": "{{ " + "[" * n + "x" + "]" * n + " }}",
        "if": "{% if x %}" * n + "a" + "{% endif %}" * n,
        "macro": "{% macro m(a) %}" * n + "a" + "{% endmacro %}" * n,
    }[kind]


@pytest.mark.parametrize("kind", ["paren", "plus", "and", "not", "filter", "call", "list", "if", "macro"])
@pytest.mark.parametrize("n", [300, 3000])
def test_deep_templates_are_refused_by_the_lint(kind, n):
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.errors import ChatTemplateError

    with pytest.raises(ChatTemplateError, match="deep"):
        lint_chat_template(_deep(kind, n))


@pytest.mark.parametrize("kind", ["plus", "and", "not", "filter", "if"])
def test_nesting_within_the_bound_is_linted(kind):
    from mtokspec.chat.lint import lint_chat_template

    assert isinstance(lint_chat_template(_deep(kind, 150)), list)


def test_the_lint_has_the_renderers_template_cap():
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.chat.bounds import MAX_TEMPLATE_CHARS
    from mtokspec.errors import ChatTemplateError

    with pytest.raises(ChatTemplateError, match="too long"):
        lint_chat_template("a" * (MAX_TEMPLATE_CHARS + 1))


def test_lint_of_a_file_with_a_deep_template_is_an_error(tmp_path, capsys):
    import dataclasses

    from tests._support import ROOT

    from mtokspec.cli import main

    tree = mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes())
    path = tmp_path / "deep.mtok"
    path.write_bytes(mtokspec.build(dataclasses.replace(tree, chat_template=_deep("paren", 300))))
    with pytest.raises(mtokspec.Error):
        mtokspec.lint(path.read_bytes())
    assert main(["lint", str(path)]) == 2
    err = capsys.readouterr().err
    assert "deep" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("field", list(DECIMAL_FIELDS))
def test_the_reference_codec_has_the_same_digit_bound(field):
    """spec/'s construct codec (the reference) refuses the decimals the generated codec refuses and
    reads the 10-digit ones it reads."""
    from spec import ReferenceError, reference_build, reference_parse

    with pytest.raises(ReferenceError):
        reference_parse(DECIMAL_FIELDS[field].replace(b"D", b"1" + b"0" * 10))
    for data in (b"430 1\n2 0 0\n1 -9999999999\n0\n", b"430 0\n0 0 0\n\n1\nYQ== 0.0 9999999999\n"):
        assert reference_build(mtokspec.to_dict(mtokspec.parse(data))) == data
        reference_parse(data)
    doc = mtokspec.to_dict(mtokspec.parse(b"430 1\n1 0 0\n1 \n0\n"))
    doc["header"]["special"] = [10 ** 10]
    with pytest.raises(ReferenceError):
        reference_build(doc)

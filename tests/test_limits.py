"""Hostile inputs end as the library's errors: long decimals, oversize numbers in plain data, YAML
aliases (issue 26).  The CLI's and the writer's side are in ``test_cli_limits.py``."""

from __future__ import annotations

import pytest

import mtokspec
from mtokspec.format import plainio
from mtokspec.errors import MtokFormatError

LONG = b"9" * 5000  # past Python's int() limit (4300 digits)

# every decimal field of the text formats, as a file whose field holds ``D``
DECIMAL_FIELDS = {
    "header.counts": b"430 1\nD 0 0\n\n0\n",
    "header.ids": b"430 1\n0 0 0\n1 D\n0\n",
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
    ('{"format": "txt-tiktoken", "header": {"ids": [1, %s]}}' % ("9" * 15), "header.ids"),
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

"""Unit tests of mtokspec.format.codec_support, the helpers the generated codec imports."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtokspec._generated import codec
from mtokspec.format import codec_support as cs
from mtokspec.format import tree as t
from mtokspec.errors import MtokFormatError

COUNTS, IDS = codec._COUNTS, codec._IDS  # the grammar, as the codec has it from spec/_dsl.py


def table(strings: list[bytes], before: int = 0, after: int = 4) -> bytes:
    """Rows of [before zero bytes][u16 length][string][after zero bytes]."""
    return b"".join(b"\0" * before + struct.pack("<H", len(s)) + s + b"\0" * after for s in strings)


def steps(size: int) -> bytes:
    """The translation table the codec emits for rows whose fixed part is ``size`` bytes."""
    return bytes(m + size if 0 < m < 256 - size else 0 for m in range(256))


@given(st.lists(st.binary(max_size=600), max_size=40), st.integers(0, 3))
def test_walk8_and_walk16_find_the_same_rows(strings, pad):
    size = 2 + 4  # the u16 length and a u32 after the string
    data = b"\xff" * pad + table(strings) + b"tail"
    end = len(data) - 4
    exact = cs.walk16(data, pad, end, len(strings), 0, size)
    assert exact is not None
    lens, r = exact
    assert lens == [len(s) for s in strings] and r == end - pad
    fast = cs.walk8(data, pad, end, len(strings), 0, size, steps(size))
    if fast is not None:  # None: too many rows to read exactly; the caller takes walk16
        sizes, r8, long = fast
        assert r8 == r
        assert all(sizes[j] == size + lens[j] for j in long)


def test_walks_refuse_rows_past_the_end():
    data = table([b"abc", b"defg"])
    assert cs.walk16(data, 0, len(data) - 1, 3, 0, 6) is None
    assert cs.walk8(data, 0, len(data) - 1, 3, 0, 6, steps(6)) is None


@pytest.mark.parametrize("strings", [[b"abc", b"", b"x" * 99], [b"abc", b"x" * 100, b"y" * 300]])
def test_row_format_decodes_the_rows(strings):
    """Short strings take the digit translation; a string of 100 bytes or more, the spelled formats."""
    size, template, at = 6, b"H00sI", 1
    tens = bytes(48 + (s - size) // 10 if size <= s < size + 100 else 33 for s in range(256))
    units = bytes(48 + (s - size) % 10 if size <= s < size + 100 else 33 for s in range(256))
    spell = ["H%dsI" % (s - size) for s in range(size, 64)]
    spell = [""] * size + spell  # indexed by row size
    sizes = [size + len(x) for x in strings]
    fmt = cs.row_format(sizes, template, at, size, tens, units, spell)
    rows = table(strings)
    assert struct.calcsize(fmt) == len(rows)
    assert list(struct.unpack(fmt, rows)[1::3]) == strings


def test_header_lines_read_and_written():
    data = b"430 4\n1 1 0\n3 5 \n"
    header, end = cs.parse_header_lines(data, 0, len(data), "header", b"430 4\n", COUNTS, IDS)
    assert header == t.Header([3], [5], [], True) and end == len(data)
    out: list[bytes] = []
    cs.build_header_lines(header, out, "header", b"430 4\n", codec._DECIMAL_BOUND)
    assert b"".join(out) == data


@pytest.mark.parametrize(("data", "path", "offset"), [
    (b"430 3\n0 0 0\n\n", "header.magic", 0),
    (b"430 4\n0 0 00\n\n", "header.counts", 6),
    (b"430 4\n0 0 0\n1  2\n", "header.ids", 12),
    (b"430 4\n0 0 0\n1 2", "header.ids", 12),
    (b"430 4\n1 0 0\n1 2\n", "header.ids", 12),
    (b"430 4\n1 1 1\n1 2\n", "header.ids", 12),
])
def test_header_line_defects_name_offset_and_field(data, path, offset):
    with pytest.raises(MtokFormatError) as err:
        cs.parse_header_lines(data, 0, len(data), "header", b"430 4\n", COUNTS, IDS)
    assert err.value.path == path and err.value.offset == offset


def test_base64_must_be_canonical():
    assert cs.decode_base64(b"YWI=", 0, "x") == b"ab"
    for bad in (b"YWJ=", b"YW I=", b"YWI"):
        with pytest.raises(MtokFormatError):
            cs.decode_base64(bad, 7, "x")


def test_line_column_refuses_what_would_break_the_line():
    assert cs.line_column(b"ab", "base64", "x") == b"YWI="
    assert cs.line_column(-3, "int", "x", codec._DECIMAL_BOUND) == b"-3"
    for value, kind in ((True, "int"), ("a b", "word"), (b"a\nb", "raw"), ("text", "raw"),
                        (10 ** 10, "int"), (-10 ** 10, "int"), (10 ** 5000, "int")):
        with pytest.raises(MtokFormatError):
            cs.line_column(value, kind, "x", codec._DECIMAL_BOUND)


def test_errors_carry_offset_and_path():
    with pytest.raises(MtokFormatError) as err:
        cs.truncated(10, 4, 12, ".model.vocab")
    assert (err.value.offset, err.value.path) == (10, "model.vocab")
    assert "4 bytes needed, 2 left" in str(err.value)
    with pytest.raises(MtokFormatError) as err:
        cs.bad_value("", "expected bytes", "x" * 100)
    assert err.value.path == "<root>" and "..." in str(err.value)


def test_gather():
    assert cs.gather("abcd", [3, 0]) == ("d", "a")
    assert cs.gather("abcd", [2]) == ("c",)
    assert cs.gather("abcd", []) == ()

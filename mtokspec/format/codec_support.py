"""The helpers of the generated codec (``generated/codec.py`` imports them).

Errors with offsets and field paths, the table walks that find where a table of strings ends, the
struct formats that decode such a table in one call, and the text lines of the header and the
legacy formats.  The text grammar (regular expressions) is declared in ``spec/_dsl.py`` and emitted
into the codec, which passes it to the functions that need it.
"""

from __future__ import annotations

import base64
import binascii
import struct
import sys
from operator import itemgetter

from mtokspec._generated.tree import SCHEMA, Header
from mtokspec.errors import MtokFormatError
from mtokspec.speedups import module as native  # noqa: F401  # the compiled string_table, or None (the codec imports it)


def where(path):
    return path.lstrip(".") or "<root>"


def truncated(offset, need, end, path):
    raise MtokFormatError("truncated: %d bytes needed, %d left" % (need, max(end - offset, 0)), offset, where(path))


def invalid(offset, path, message):
    raise MtokFormatError(message, offset, where(path))


def value_text(value: object) -> str:
    """``repr(value)`` cut to 60 characters; an int too long for ``repr`` is told by its size."""
    if isinstance(value, int) and value.bit_length() > 1024:
        return "<an int of %d bits>" % value.bit_length()
    try:
        text = repr(value)
    except ValueError:  # a container of such ints
        return "<%s>" % type(value).__name__
    if len(text) > 60:
        text = text[:57] + "..."
    return text


def bad_value(path, message, value):
    raise MtokFormatError("cannot build: %s (got %s)" % (message, value_text(value)), None, where(path))


def bad_rows(rows, width, st, path):
    for i, row in enumerate(rows):
        try:
            if len(row) != width:
                raise TypeError("expected %d values" % width)
            st.pack(*row)
        except (struct.error, TypeError) as e:
            bad_value("%s[%d]" % (path, i), str(e), row)
    bad_value(path, "malformed rows", len(rows))


STRICT_B64 = sys.version_info >= (3, 11)
MAX_LINE = 1 << 24
LITTLE = sys.byteorder == "little"  # memoryview casts read the file's little-endian words as is


def typed_column(fixed: bytes, n: int, off: int, code: str):
    """The n little-endian values of struct ``code`` at ``fixed[off * n:]`` (a table's fixed fields
    column by column, as ``string_index`` gives them) as a typed sequence: a memoryview cast where
    the machine's own values are those (no object per value), else a tuple."""
    size = struct.calcsize("<" + code)
    if LITTLE and struct.calcsize(code) == size:
        return memoryview(fixed)[off * n:(off + size) * n].cast(code)
    return struct.unpack_from("<%d%s" % (n, code), fixed, off * n)


def gather(seq, idx):
    """``seq[i]`` for each ``i`` in ``idx``, as a tuple, at C speed."""
    if len(idx) > 1:
        return itemgetter(*idx)(seq)
    return tuple([seq[i] for i in idx])


# A table of n rows [before bytes][u16 length][string][after bytes] has no size field: finding
# its end means stepping over every row.  ``walk8`` steps on the low length bytes only, through a
# copy translated so that each byte is already its row's size; the struct unpack that decodes the
# rows then reads each whole length, and the high bytes are checked there, at C speed (one Python
# step per row fewer).  ``walk16`` is the exact walk, for tables the fast one cannot take.  Measured
# and slower: a u16 view at every offset; a gather of the high bytes at every row start; a C-level
# chain of map() over the growing offsets list; combining the two bytes per offset with big ints.

def walk8(b, p, end, n, before, size, steps):
    """``(sizes, r, long)``: each row's size, the rows' total and the rows read exactly, or None
    when a row runs off ``b[:end]`` (or too many rows need reading exactly).

    Steps on each row's low length byte through ``steps`` (a translation table: length byte -> row
    size; 0 for a length byte of 0, which may be 256 or 512, and for sizes past 255).  A 0 stops
    the walk at that row (every later step is 0 too: the check after each 16 rows sees the last);
    that row is read exactly and the walk goes on after it.  The high length bytes of other rows are
    not read: the caller checks them (every length but those of ``long`` is below 256), and that
    p + r <= end."""
    base = p + before
    t = b[base:end].translate(steps)
    sizes = []
    put = sizes.extend
    long = []
    r = 0
    try:
        while True:
            for _ in range((n - len(sizes)) >> 4):
                s0 = t[r]
                r += s0
                s1 = t[r]
                r += s1
                s2 = t[r]
                r += s2
                s3 = t[r]
                r += s3
                s4 = t[r]
                r += s4
                s5 = t[r]
                r += s5
                s6 = t[r]
                r += s6
                s7 = t[r]
                r += s7
                s8 = t[r]
                r += s8
                s9 = t[r]
                r += s9
                sa = t[r]
                r += sa
                sb = t[r]
                r += sb
                sc = t[r]
                r += sc
                sd = t[r]
                r += sd
                se = t[r]
                r += se
                sf = t[r]
                r += sf
                put((s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, sa, sb, sc, sd, se, sf))
                if not sf:
                    break
            else:
                for _ in range((n - len(sizes)) & 15):
                    s0 = t[r]
                    r += s0
                    sizes.append(s0)
                if not sizes or sizes[-1]:
                    return sizes, r, long
            # r stopped at a row the step table cannot take: read its length exactly
            j = sizes.index(0, max(len(sizes) - 16, 0))
            del sizes[j:]
            if len(long) == 256:
                return None  # a table of many empty or long strings: the exact walk is as fast
            # (a length read past end makes p + r > end: the caller sees it)
            long.append(j)
            s0 = size + (b[base + r] | b[base + r + 1] << 8)
            sizes.append(s0)
            r += s0
    except IndexError:
        return None


def row_format(sizes, template, at, size, tens, units, spell):
    """The struct format of rows whose sizes are ``sizes``: a row is ``template`` (its fixed
    fields, the length as 'H' and a string of "00" bytes at ``at``).  When every string is shorter
    than 100 bytes the rows' lengths are written over the digits with two translations and two
    strided copies (C speed); else each row's format comes from ``spell`` (by row size)."""
    try:
        digits = bytes(sizes)  # ValueError: a row of 256 bytes or more
        tens_digits = digits.translate(tens)
        if 33 not in tens_digits:  # "!": a string of 100 bytes or more
            w = len(template)
            fmt = bytearray(template) * len(digits)
            fmt[at::w] = tens_digits
            fmt[at + 1::w] = digits.translate(units)
            return b"<" + fmt
    except ValueError:
        pass
    top = max(sizes, default=0)
    if top >= len(spell):  # a longer list, for this call only
        spell = spell + [(template[:at] + b"%d" + template[at + 2:]).decode() % (s - size)
                         for s in range(len(spell), top + 1)]
    return "<" + "".join(gather(spell, sizes))


def walk16(b, p, end, n, before, size):
    """``(lens, r)``: each row's string length and the rows' total size (``size``: a row's bytes
    but the string), or None when a row runs off ``b[:end]`` (the caller's checked walk then finds
    the row and says why).  p + r may still exceed end: the caller checks.  No bounds check per row:
    running off the data raises IndexError.  Unrolled: recording the lengths costs nothing then."""
    lo = b[p + before:end]
    hi = b[p + before + 1:end]
    lens = []
    r = 0
    try:
        for _ in range(n >> 3):
            m0 = lo[r] | hi[r] << 8
            r += size + m0
            m1 = lo[r] | hi[r] << 8
            r += size + m1
            m2 = lo[r] | hi[r] << 8
            r += size + m2
            m3 = lo[r] | hi[r] << 8
            r += size + m3
            m4 = lo[r] | hi[r] << 8
            r += size + m4
            m5 = lo[r] | hi[r] << 8
            r += size + m5
            m6 = lo[r] | hi[r] << 8
            r += size + m6
            m7 = lo[r] | hi[r] << 8
            r += size + m7
            lens.extend((m0, m1, m2, m3, m4, m5, m6, m7))
        for _ in range(n & 7):
            m0 = lo[r] | hi[r] << 8
            r += size + m0
            lens.append(m0)
    except IndexError:
        return None
    return lens, r


def line_end(b, p, end, path):
    q = b.find(b"\n", p, min(end, p + MAX_LINE))
    if q < 0:
        truncated(p, 1, end, path)
    return q + 1


#: the header's role lists, in the order of line 2's counts and line 3's ids
HEADER_ROLES = tuple(name for name, d in SCHEMA["Header"] if d[0] == "list")


def parse_header_lines(b, p, end, path, magic_line, counts_line, ids_line):
    q = p + len(magic_line)
    if b[p:q] != magic_line:
        invalid(p, path + ".magic", "expected %r, got %r" % (magic_line, bytes(b[p:q])))
    p, q = q, line_end(b, q, end, path + ".counts")
    m = counts_line.fullmatch(b, p, q)
    if m is None:
        invalid(p, path + ".counts", "malformed count line %r" % bytes(b[p:min(q, p + 80)]))
    p, q = q, line_end(b, q, end, path + ".ids")
    m2 = ids_line.fullmatch(b, p, q)
    if m2 is None:
        invalid(p, path + ".ids", "malformed id line %r" % bytes(b[p:min(q, p + 80)]))
    body = b[p:q - 1 - len(m2.group(1))]
    ids = [int(x) for x in body.split(b" ")] if body else []
    a, c = int(m.group(1)), int(m.group(2))
    if a + c + int(m.group(3)) != len(ids):
        invalid(p, path + ".ids", "line 2 counts %d ids (%s) but line 3 holds %d"
                % (a + c + int(m.group(3)), bytes(m.group(0)[:-1]).decode().replace(" ", "+"), len(ids)))
    header = Header(ids[:a], ids[a:a + c], ids[a + c:], bool(m2.group(1)))
    return header, q




def parse_count_line(b, p, q, k, path, count):
    parts = b[p:q - 1].split(b" ")
    if len(parts) != k or not all(count.fullmatch(x) for x in parts):
        invalid(p, path, "expected %d decimal count(s), got %r" % (k, bytes(b[p:min(q, p + 80)])))
    return [int(x) for x in parts]


def decode_base64(text, offset, path):
    try:
        value = binascii.a2b_base64(text, strict_mode=True) if STRICT_B64 else base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        invalid(offset, path, "bad base64 %r" % bytes(text[:40]))
    if binascii.b2a_base64(value, newline=False) != text:
        invalid(offset, path, "non-canonical base64 %r" % bytes(text[:40]))
    return value


def decode_decimal(text, offset, path, decimal):
    if decimal.fullmatch(text) is None:
        invalid(offset, path, "bad integer %r" % bytes(text[:40]))
    return int(text)


def decode_word(text, offset, path):
    try:
        return text.decode()
    except UnicodeDecodeError:
        invalid(offset, path, "invalid UTF-8")


def line_column(value, kind, path, bound=None):
    """The bytes of one column of a text line; refuses values that would break the line, and ints
    of ``bound`` or more in magnitude (the grammar's digits)."""
    if kind == "int":
        if value.__class__ is not int or not -bound < value < bound:
            bad_value(path, "expected an int of magnitude below %d" % bound, value)
        return b"%d" % value
    if kind == "word":
        if value.__class__ is not str or " " in value or "\n" in value:
            bad_value(path, "expected text without spaces or newlines", value)
        try:
            return value.encode()
        except UnicodeEncodeError:
            bad_value(path, "text is not encodable as UTF-8", value)
    if not isinstance(value, (bytes, bytearray, memoryview)):
        bad_value(path, "expected bytes", value)
    if kind == "base64":
        return binascii.b2a_base64(value, newline=False)
    if b"\n" in value:
        bad_value(path, "a line cannot hold a newline", value)
    return bytes(value)


def build_header_lines(h, out, path, magic_line, bound):
    """The three header lines: the counts are the role lists' lengths, the ids ints of magnitude below ``bound``."""
    if h.__class__ is not Header:
        bad_value(path, "expected Header", h)
    roles = (h.special, h.stop, h.prefix)
    for name, role in zip(HEADER_ROLES, roles):
        if not isinstance(role, (list, tuple)) or any(i.__class__ is not int or not -bound < i < bound for i in role):
            bad_value(path + "." + name, "header ids must be a list of ints of magnitude below %d" % bound, role)
    ids = [*h.special, *h.stop, *h.prefix]
    if h.trailing_space and not ids:
        bad_value(path + ".trailing_space", "trailing_space needs at least one id", ids)
    out.append(magic_line)
    out.append(b"%d %d %d\n" % tuple(map(len, roles)))
    line = " ".join(map(str, ids)) + (" " if h.trailing_space else "")
    out.append(line.encode() + b"\n")

"""Small look-up helpers shared by the ``mnn`` stages: MNN's binary searches, kept exact."""

from __future__ import annotations

from bisect import bisect_left

from mtokspec.format.byte_level import BYTE_TO_CHAR
from mtokspec.runtime.shared.text import METASPACE
from mtokspec.runtime.shared.vocab_rows import BYTE_PIECES  # noqa: F401  (the models read it here)


def table_lookup(table):
    """``find(cp)``: the replacement MNN's binary search over a normalizer table finds, or None.

    MNN's loop stops at the first probe equal to ``cp``.  On a table in strictly ascending code
    point order (what the exporter writes) that is a dict look-up; on any other table the same
    probes are made, so the result is MNN's whatever the order.
    """
    cps = [row[0] for row in table]
    if all(a < b for a, b in zip(cps, cps[1:])):
        d = {cp: rep for cp, rep in table}
        return d.get
    reps = [row[1] for row in table]

    def find(cp: int):
        lo, hi = 0, len(cps)
        while lo < hi:
            mid = (lo + hi) // 2
            if cp > cps[mid]:
                lo = mid + 1
            elif cp < cps[mid]:
                hi = mid
            else:
                return reps[mid]
        return None

    return find


def sorted_lookup(keys: list, values: list):
    """``find(key)``: the value of the first row ``std::lower_bound`` finds equal to ``key``, or
    None.  Python's ``bisect_left`` probes exactly the rows ``std::lower_bound`` does, so this holds
    for rows in any order; rows in ascending order (the exporter's) take a dict."""
    if keys == sorted(keys):
        # reversed, so that of equal keys the first row's value is the one kept
        return dict(zip(reversed(keys), reversed(values))).get

    def find(key):
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            return values[i]
        return None

    return find


def i32_all(values: list[int]) -> list[int]:
    """:func:`i32` of each value (the list itself when none reaches 2^31)."""
    if not values or max(values) < 1 << 31:
        return values
    return [i32(v) for v in values]


META = METASPACE.encode()  # SentencePiece's word marker, as MNN spells it in its code


def i32(v: int) -> int:
    """A u32 read into a C++ ``int`` (values from 2^31 on become negative)."""
    return v - (1 << 32) if v >= 1 << 31 else v


def utf8(s: str) -> bytes:
    """The bytes of a tree string, as MNN reads them from the file."""
    return s.encode("utf-8", "surrogatepass")


# The tables the stages read (and hand to the compiled loops, runtime/mnn/_compiled.py) ----------

# Controls and format characters the table normalizer turns into a space (SentencePiece-style);
# tab, CR, LF and NUL are kept
TO_SPACE = frozenset([*range(1, 0x20), 0x7F, *range(0x80, 0xA0), 0x200D, 0x200C, 0x200B, 0xFEFF, 0x200E,
                      0x200F, *range(0x202A, 0x202F), *range(0x2060, 0x206A), *range(0xFFF0, 0xFFF9)]) - {9, 10, 13}

# The code points MNN's Bert normalizer pads with spaces (inclusive ranges)
CHINESE = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
           (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))

# The ASCII characters MNN's Bert pre-tokenizer cuts off as punctuation
ASCII_PUNCT = frozenset([*range(33, 48), *range(58, 65), *range(91, 97), *range(123, 127)])

# byte -> the UTF-8 of its GPT-2 stand-in character
BYTE_MAP = [BYTE_TO_CHAR[b].encode("utf-8") for b in range(256)]

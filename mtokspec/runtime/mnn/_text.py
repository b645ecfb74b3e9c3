"""Small look-up helpers shared by the ``mnn`` stages: MNN's binary searches, kept exact."""

from __future__ import annotations

from bisect import bisect_left

from mtokspec.runtime.shared.text import METASPACE


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
BYTE_PIECES = [b"<0x%02X>" % b for b in range(256)]  # the byte-fallback piece of each byte


def i32(v: int) -> int:
    """A u32 read into a C++ ``int`` (values from 2^31 on become negative)."""
    return v - (1 << 32) if v >= 1 << 31 else v


def utf8(s: str) -> bytes:
    """The bytes of a tree string, as MNN reads them from the file."""
    return s.encode("utf-8", "surrogatepass")

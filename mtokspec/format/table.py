"""``Table``: the list type of parsed bulk tables (vocab, merges, norm tables).

A file's tables are its bulk: 150k vocab rows are 150k bytes objects and tuples, which take longer
to create than the rest of parsing.  ``parse`` therefore checks a table's bounds and keeps its raw
bytes; the rows are decoded, all at once, the first time anything looks at them.  Until then
``len()`` is known and ``build`` copies the raw bytes unchanged.  (Tables of one u16-length string
per row are the exception: the fastest exact bounds check of those unpacks every row, so ``parse``
keeps the columns it read; rows are still made only when asked for.  With the compiled module that
check is ``string_index``, which keeps only each string's place: the strings are cut out when the
columns are first asked for, and a compiled consumer can read them where they are stored,
``string_index()``.)

A ``Table`` is a mutable sequence of row tuples that compares equal to a list with the same rows;
use it like a list (index, slice, iterate, append, sort, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from typing import Any

__all__ = ["Table"]


class Table(MutableSequence):
    __slots__ = ("_rows", "_raw", "_count", "_decode", "_columns", "_width", "_lens", "_cols", "_row_format",
                 "_packed")

    def __init__(self, rows: Iterable[Any] = ()):
        self._rows: list | None = list(rows)
        self._raw: bytes | None = None
        self._count = len(self._rows)
        self._decode: Callable[[bytes, int, Any], list] | None = None
        self._columns: Callable[..., tuple] | None = None
        self._width = len(self._rows[0]) if self._rows and isinstance(self._rows[0], tuple) else 0
        self._lens: list[int] | None = None
        self._cols: tuple | None = None
        self._row_format: str | None = None
        self._packed: tuple | None = None

    @classmethod
    def lazy(cls, raw: bytes, count: int, decode: Callable[[bytes, int, Any], list],
             columns: Callable[[bytes, int, Any], tuple], width: int, lens: list[int] | None = None,
             cols: tuple | None = None, row_format: str | None = None, packed: tuple | None = None) -> Table:
        """A table of ``count`` rows of ``width`` columns whose encoding ``raw`` was bounds-checked.

        ``lens``: the string length of every row, when the bounds check walked them (the decoders
        then need not walk the rows again).  ``cols``: the decoded columns (tuples), when the bounds
        check read them.  ``row_format``: the struct format of one row, when rows are fixed-size.
        ``packed``: ``(index, fixed, packedcols)`` when the compiled walk (``string_index``) checked
        the rows: the strings' places in ``raw``, the fixed fields column by column, and the codec's
        function that decodes them into columns."""
        self = cls.__new__(cls)
        self._rows = None
        self._raw = raw
        self._count = count
        self._decode = decode
        self._columns = columns
        self._width = width
        self._lens = lens
        self._cols = cols
        self._row_format = row_format
        self._packed = packed
        return self

    def columns(self, pack: bool = False) -> tuple[Sequence, ...]:
        """One sequence per column (a snapshot): e.g. ``tokens, ids = vocab.columns()``.

        While the table is still raw this decodes straight into columns without building a tuple
        per row, which is the fastest way to load a large table into other structures.

        ``pack=True`` (tables whose first two columns are u32, e.g. merges) gives those two columns
        as one: ``first | second << 32`` per row, read as one u64 -- a pair key for a dict that
        costs no tuple per row.
        """
        if self._rows is None:
            if self._cols is None and self._packed is not None and not pack:
                index, fixed, packedcols = self._packed
                self._cols = packedcols(self._raw, index, fixed, self._count)
            if self._cols is not None and not pack:
                return self._cols  # tuples: sharing them is a snapshot
            assert self._columns is not None and self._raw is not None
            if pack:
                return self._columns(self._raw, self._count, self._lens, True)
            return self._columns(self._raw, self._count, self._lens)
        cols = tuple(zip(*self._rows)) if self._rows else ((),) * self._width
        if not pack:
            return cols
        if len(cols) < 2 or not all(isinstance(x, int) and 0 <= x < 1 << 32 for x in cols[0] + cols[1]):
            raise ValueError("pack=True needs two leading u32 columns")
        return (tuple(a | b << 32 for a, b in zip(cols[0], cols[1])),) + cols[2:]

    def string_index(self) -> tuple[bytes, bytes, tuple] | None:
        """``(raw, index, typed)`` while the rows are unchanged and the compiled walk checked them,
        else None: for a compiled consumer that reads the rows where they are stored.  ``index``
        gives each row's string as two native uint32, its offset in ``raw`` and its length;
        ``typed`` has one entry per column: None for the strings', a typed sequence of the values
        (a memoryview cast, or a tuple) for the others."""
        if self._rows is None and self._packed is not None:
            assert self._raw is not None
            index, fixed, packedcols = self._packed
            return self._raw, index, packedcols(self._raw, index, fixed, self._count, typed=True)
        return None

    # -- the raw form -------------------------------------------------------------------------
    def raw_bytes(self) -> bytes | None:
        """The encoding the rows were read from, while they are unchanged (else None)."""
        return self._raw if self._rows is None else None

    def fixed_rows(self) -> tuple[bytes, str] | None:
        """``(encoding, struct format of one row)`` while the rows are unchanged and of one size
        (e.g. merges: ``(raw, "<III")``), else None: for a consumer that reads the rows as they are
        stored, told their layout by the codec."""
        if self._rows is None and self._row_format is not None:
            assert self._raw is not None
            return self._raw, self._row_format
        return None

    def _materialize(self) -> list:
        rows = self._rows
        if rows is None:
            assert self._decode is not None and self._raw is not None
            if self._cols is None and self._packed is not None:
                self.columns()
            if self._cols is not None:
                rows = self._rows = list(zip(*self._cols)) if self._count else []
            else:
                rows = self._rows = self._decode(self._raw, self._count, self._lens)
            self._raw = None
            self._decode = None
            self._columns = None
            self._lens = None
            self._cols = None
            self._row_format = None
            self._packed = None
        return rows

    # -- sequence protocol ----------------------------------------------------------------------
    def __len__(self) -> int:
        return self._count if self._rows is None else len(self._rows)

    def __getitem__(self, index):
        return self._materialize()[index]

    def __iter__(self) -> Iterator:
        return iter(self._materialize())

    def __reversed__(self) -> Iterator:
        return reversed(self._materialize())

    def __contains__(self, value: object) -> bool:
        return value in self._materialize()

    def __setitem__(self, index, value) -> None:
        self._materialize()[index] = value

    def __delitem__(self, index) -> None:
        del self._materialize()[index]

    def insert(self, index: int, value: Any) -> None:
        self._materialize().insert(index, value)

    def append(self, value: Any) -> None:
        self._materialize().append(value)

    def extend(self, values: Iterable[Any]) -> None:
        self._materialize().extend(values)

    def sort(self, *, key=None, reverse: bool = False) -> None:
        self._materialize().sort(key=key, reverse=reverse)

    def copy(self) -> list:
        return list(self._materialize())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Table):
            if self._rows is None and other._rows is None and self._raw == other._raw:
                return True
            return self._materialize() == other._materialize()
        if isinstance(other, (list, tuple)):
            return self._materialize() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[Any]) -> list:
        return self._materialize() + list(other)

    def __repr__(self) -> str:
        if self._rows is None:
            return f"Table(<{self._count} rows, not decoded yet>)"
        return f"Table({self._rows!r})"

    def __reduce__(self):
        return (Table, (self._materialize(),))

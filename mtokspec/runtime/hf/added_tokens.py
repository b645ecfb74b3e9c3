"""Added tokens: found in the input before the model runs (HF ``added_vocabulary.rs``).

Design record: ``docs/design/runtime-hf.md``.
"""

from __future__ import annotations

import re
from itertools import groupby
from operator import attrgetter, itemgetter

from mtokspec.format import tree as t
from mtokspec.runtime.hf.normalizers import WHITESPACE

__all__ = ["AddedVocabulary"]

_first_char = itemgetter(0)
_content = attrgetter("content")
_id = attrgetter("id")
_lstrip = attrgetter("lstrip")
_rstrip = attrgetter("rstrip")


class AddedVocabulary:
    """The added tokens of a file: matching, id look-up and the special set."""

    __slots__ = ("tokens", "by_content", "by_id", "special_contents", "special_ids", "_first_re",
                 "_by_first", "_lstrip", "_rstrip")

    def __init__(self, tokens: list[t.AddedToken]):
        self.tokens = list(tokens)
        contents = list(map(_content, self.tokens))
        ids = list(map(_id, self.tokens))
        # HF keeps one entry per content (the later one wins) and one per id
        self.by_content: dict[str, int] = dict(zip(contents, ids))
        self.by_id: dict[int, str] = dict(zip(ids, contents))
        self._lstrip: dict[str, bool] = dict(zip(contents, map(_lstrip, self.tokens)))
        self._rstrip: dict[str, bool] = dict(zip(contents, map(_rstrip, self.tokens)))
        special = [tok for tok in self.tokens if tok.special and tok.content]
        self.special_contents: set[str] = set(map(_content, special))
        self.special_ids: set[int] = set(map(_id, special))
        # candidates by first character, each with the lengths to try, longest first
        by_first: dict[str, tuple[list[int], set[str]]] = {}
        for first, group in groupby(sorted(filter(None, self.by_content)), key=_first_char):
            members = set(group)
            by_first[first] = (sorted(set(map(len, members)), reverse=True), members)
        self._by_first = by_first
        self._first_re = (re.compile("[" + "".join(re.escape(c) for c in sorted(by_first)) + "]")
                          if by_first else None)

    def __bool__(self) -> bool:
        return self._first_re is not None

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """``text`` cut into ``(piece, None)`` and ``(matched text, token id)``, in order.

        The pieces cover the text except white space eaten by ``lstrip``/``rstrip``; empty
        pieces are left out.
        """
        first = self._first_re
        if first is None or not text:
            return [(text, None)] if text else []
        by_first = self._by_first
        by_content = self.by_content
        lstrip = self._lstrip
        rstrip = self._rstrip
        out: list[tuple[str, int | None]] = []
        start_offset = 0  # end of the previous match (after rstrip)
        pos = 0
        n = len(text)
        search = first.search
        ws_from = ws_end = -1  # the last white space run an rstrip crossed: [ws_from, ws_end)
        while pos < n:
            m = search(text, pos)
            if m is None:
                break
            p = m.start()
            lengths, contents = by_first[text[p]]
            hit = None
            for ln in lengths:
                cand = text[p:p + ln]
                if cand in contents:
                    hit = cand
                    break
            if hit is None:
                pos = p + 1
                continue
            # matches are found in the original text, independently of the white space eaten
            # around earlier matches (HF runs the automaton first, then strips)
            start = p
            stop = pos = p + len(hit)
            # (both walks stop where an earlier one did: linear in the text, whatever the matches)
            if lstrip[hit]:
                while start > start_offset and text[start - 1] in WHITESPACE:
                    start -= 1
                if start < start_offset:
                    start = start_offset
            if rstrip[hit]:
                if ws_from <= stop <= ws_end:
                    stop = ws_end
                else:
                    ws_from = stop
                    while stop < n and text[stop] in WHITESPACE:
                        stop += 1
                    ws_end = stop
            if start_offset < start:
                out.append((text[start_offset:start], None))
            if start < stop:  # HF drops empty splits, with their token
                out.append((text[start:stop], by_content[hit]))
            start_offset = stop
        if start_offset < n:
            out.append((text[start_offset:], None))
        return out

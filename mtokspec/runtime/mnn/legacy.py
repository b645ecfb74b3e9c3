"""The legacy ``tokenizer.txt`` types as MNN's C++ runtime runs them (``Sentencepiece``,
``Tiktoken``, ``BertTokenizer``, ``HuggingfaceTokenizer`` in ``tokenizer.cpp``).

None of them has a normalizer or decoder of its own, and their per-id decode is also their
sequence decode (joined, special ids included).

Types 0, 2 and 3 hand their loops to the compiled module when it is built (``_csrc/mnn_legacy.c``
for 0 and 3, ``_csrc/mnn_stages.c`` for 2), chosen once at construction; the code here is the
reference, and runs wherever it raises.
"""

from __future__ import annotations

import heapq
import re
import struct
from array import array
from collections.abc import Iterable
from functools import cached_property

from mtokspec.format import tree as t
from mtokspec.args import token_id
from mtokspec.runtime.shared.merge import merge_lowest_pairs
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.runtime.mnn._text import BYTE_PIECES, META
from mtokspec.errors import UndefinedInMnn
from mtokspec.runtime.mnn.decoders import UNBYTE
from mtokspec.runtime.mnn.pre_tokenizers import BYTE_MAP
from mtokspec.runtime.mnn.tokenizer import MnnTokenizer

_NORMAL, _UNKNOWN, _UNUSED = 1, 2, 5
_STRTOF = re.compile(rb"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.I)


def strtof(text: str) -> float:
    """C ``strtof``: the longest number at the start (0.0 when none), rounded to float32."""
    m = _STRTOF.match(text.encode("ascii", "replace"))
    v = float(m.group(1)) if m else 0.0
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


# the characters of plain numbers: a text of these that float() reads is one number strtof reads
# whole (the same grammar: sign, digits with one point, exponent), so its value is float(text)
_NOT_PLAIN = str.maketrans("", "", "0123456789.eE+-\n")


def strtof_all(texts: list[str]) -> list[float]:
    """``[strtof(s) for s in texts]``, at once when every text is one plain number (what exporters
    write): then each is ``float(s)`` rounded to float32 as C's cast rounds it -- the cast
    :func:`strtof`'s ``struct.pack`` makes, and its overflow to infinity."""
    joined = "\n".join(texts)
    if joined.count("\n") == len(texts) - 1 and not joined.translate(_NOT_PLAIN):
        try:
            return array("f", map(float, texts)).tolist()
        except ValueError:  # one is not a whole number ("1e", "", "1-2"): strtof reads a part
            pass
    return [strtof(x) for x in texts]


def first_ids(keys, ids) -> dict:
    """``{key: the id of its first row}``: a ``setdefault`` loop over the rows, made at C speed
    (the rows inserted last to first, so the first of equal keys is the one kept)."""
    return dict(zip(reversed(keys), reversed(ids)))


def _char_len(lead: int) -> int:
    """SentencePiece's ``one_char_len``: the length a lead byte announces (1 for a continuation)."""
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[lead >> 4]


class Sentencepiece(MnnTokenizer):
    """Type 0: SentencePiece BPE by piece scores over ``▁`` + the text with spaces as ``▁``; only
    *normal* pieces merge; an unknown piece falls back to ``<0xHH>`` pieces (always on)."""

    tree_type = t.SentencePieceTxtFile

    def __init__(self, tree: t.SentencePieceTxtFile, **kw):
        super().__init__(tree, **kw)
        sp = stages()  # the compiled tables and loop (mnn_legacy.c), or None: the code below
        built = None if sp is None else sp.mnn_legacy_sp(tree.pieces)  # None too when a score is NaN
        self._compiled = None
        if built is not None:
            self.pieces, self.normal, self.reserved, self.unk_id, self._compiled = built
            return
        scores = strtof_all([score for _, score, _ in tree.pieces])
        self.pieces = [(tok, score, kind) for (tok, _, kind), score in zip(tree.pieces, scores)]
        self.normal: dict[bytes, int] = {}
        self.reserved: dict[bytes, int] = {}
        self.unk_id = 0
        for i, (tok, _, kind) in enumerate(self.pieces):
            if kind == _NORMAL:
                self.normal.setdefault(tok, i)
            else:
                self.reserved.setdefault(tok, i)
                if kind == _UNKNOWN:
                    self.unk_id = i

    def piece_to_id(self, piece: bytes) -> int:
        i = self.reserved.get(piece)
        if i is None:
            i = self.normal.get(piece, self.unk_id)
        return i

    def _bpe(self, text: bytes) -> list[bytes]:
        # symbols: [start, end) byte spans in a linked list; agenda: best score, then leftmost
        spans = []
        p, n = 0, len(text)
        while p < n:
            q = min(n, p + _char_len(text[p]))
            spans.append([p, q])
            p = q
        m = len(spans)
        if not m:
            return []
        nxt = list(range(1, m)) + [-1]
        prv = list(range(-1, m - 1))
        normal = self.normal
        pieces = self.pieces
        agenda: list = []
        counter = 0

        def add(left: int, right: int) -> None:
            nonlocal counter
            if left == -1 or right == -1:
                return
            a, b = spans[left], spans[right]
            piece = text[a[0]:b[1]] if a[1] == b[0] else text[a[0]:a[1]] + text[b[0]:b[1]]
            i = normal.get(piece)
            if i is None:
                return
            counter += 1
            heapq.heappush(agenda, (-pieces[i][1], left, counter, right, len(piece)))

        for k in range(1, m):
            add(k - 1, k)
        while agenda:
            _, left, _, right, size = heapq.heappop(agenda)
            a, b = spans[left], spans[right]
            # SentencePiece's check: both symbols alive and their sizes still add up
            if a[0] == a[1] or b[0] == b[1] or (a[1] - a[0]) + (b[1] - b[0]) != size:
                continue
            a[1] = a[0] + size
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            b[1] = b[0]
            add(prv[left], left)
            add(left, nxt[left])
        out = []
        k = 0
        while k != -1:
            s = spans[k]
            out.append(text[s[0]:s[1]])
            k = nxt[k]
        return out

    def _encode_piece(self, text: bytes, ids: list[int]) -> None:
        if self._compiled is not None and self._compiled.encode(text, ids):
            return  # (not done where the code below raises)
        normalized = META + text.replace(b" ", META)
        for w in self._bpe(normalized):
            i = self.piece_to_id(w)
            if not 0 <= i < len(self.pieces):  # resegment() reads the piece's type
                raise UndefinedInMnn(f"legacy type 0: piece id {i} for {w!r} is past the {len(self.pieces)} pieces: "
                                     "MNN reads out of bounds")
            if i == self.unk_id:
                ids.extend(self.piece_to_id(BYTE_PIECES[b]) for b in w)
            else:
                ids.append(i)

    def _decode_one(self, i: int) -> bytes:
        if not 0 <= i < len(self.pieces):
            return b""
        piece = self.pieces[i][0]
        pos = piece.find(META)
        if pos != -1:  # std::string::replace(pos, pos + 3, " "): pos + 3 bytes go, not 3
            piece = piece[:pos] + b" " + piece[pos + pos + 3:]
        return piece

    def id_to_token(self, i: int) -> str | None:
        i = token_id("i", i)
        return self.pieces[i][0].decode("utf-8", "replace") if 0 <= i < len(self.pieces) else None

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)


class _TokenLines(MnnTokenizer):
    """A legacy type with one token per line, line index = id: the per-id decode is the token."""

    tokens: list[bytes]

    def _decode_one(self, i: int) -> bytes:
        return self.tokens[i] if 0 <= i < len(self.tokens) else b""

    def id_to_token(self, i: int) -> str | None:
        i = token_id("i", i)
        return self.tokens[i].decode("utf-8", "replace") if 0 <= i < len(self.tokens) else None

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)


class Tiktoken(_TokenLines):
    """Type 1: greedy longest match of the vocabulary's byte strings over the whole text (no
    ranks, no pre-tokenizer); a byte that starts no token is dropped."""

    tree_type = t.TiktokenTxtFile

    def __init__(self, tree: t.TiktokenTxtFile, **kw):
        super().__init__(tree, **kw)
        self.tokens = list(tree.tokens)
        root: dict = {}
        self.root_id = -1
        for i, tok in enumerate(self.tokens):
            if not tok:
                if self.root_id == -1:
                    self.root_id = i
                continue
            node = root
            for b in tok:
                node = node.setdefault(b, {})
            node.setdefault(None, i)  # the first token with this text keeps it
        self.trie = root

    def _encode_piece(self, text: bytes, ids: list[int]) -> None:
        pos, n = 0, len(text)
        root, root_id = self.trie, self.root_id
        while pos < n:
            node = root
            matched, matched_end = root_id, pos if root_id != -1 else pos + 1
            k = pos
            while True:
                if k >= n:
                    if 0 in node:  # MNN reads the string's terminating NUL and goes on past the end
                        raise UndefinedInMnn("legacy type 1: a token continues with a NUL byte at the end "
                                             "of the text, where MNN reads past its buffer")
                    child = None
                else:
                    child = node.get(text[k])
                if child is None:
                    break
                node = child
                k += 1
                if None in node:
                    matched, matched_end = node[None], k
            if matched == -1:
                pos = matched_end  # one byte skipped (MNN prints "No encoding found")
                continue
            if matched_end == pos:
                raise UndefinedInMnn("legacy type 1: an empty token and a byte that starts no token: "
                                     "MNN's encode loop never ends")
            ids.append(matched)
            pos = matched_end



_C_ALNUM = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_C_PUNCT = frozenset(range(33, 127)) - _C_ALNUM
_C_SPACE = frozenset(b" \t\n\v\f\r")
_C_ALNUM_BYTES, _C_SPACE_BYTES = bytes(sorted(_C_ALNUM)), bytes(sorted(_C_SPACE))  # for the compiled loop
_CONTINUATION = b"##"  # the prefix of a WordPiece continuation


class Bert(_TokenLines):
    """Type 2: its own splitter (ASCII letter/digit runs lower-cased, each ASCII punctuation mark
    and each non-ASCII character alone, white space dropped), then WordPiece without a length
    limit, where a word that cannot be covered keeps its pieces so far and ends with ``[UNK]``."""

    tree_type = t.BertTxtFile

    def __init__(self, tree: t.BertTxtFile, **kw):
        super().__init__(tree, **kw)
        self.tokens = list(tree.tokens)
        self.encoder: dict[bytes, int] = first_ids(self.tokens, range(len(self.tokens)))
        self.unk = self.encoder.get(b"[UNK]", 100)
        # no candidate longer than every token can match: the loop stops there (exact, and a long
        # word costs O(length x longest token))
        self.longest = max(map(len, self.encoder), default=0)
        sp = stages()  # the compiled loops (mnn_legacy.c), or None: _words and _word_piece
        self._compiled = None if sp is None else sp.MnnLegacyBert(
            self.tokens, self.unk, _C_ALNUM_BYTES, _C_SPACE_BYTES, _CONTINUATION).encode

    def _words(self, s: bytes) -> list[bytes]:
        words = []
        i, n = 0, len(s)
        while i < n:
            c = s[i]
            if c & 0x80:
                k = 2 if c & 0xE0 == 0xC0 else 3 if c & 0xF0 == 0xE0 else 4 if c & 0xF8 == 0xF0 else 1
                if i + k <= n:
                    words.append(s[i:i + k])
                    i += k
                else:
                    i += 1
            elif c in _C_ALNUM:
                j = i
                while j < n and s[j] in _C_ALNUM:
                    j += 1
                words.append(s[i:j].lower())
                i = j
            elif c in _C_SPACE:
                i += 1
            else:  # punctuation and other single bytes
                words.append(s[i:i + 1])
                i += 1
        return words

    def _word_piece(self, word: bytes) -> list[int]:
        enc = self.encoder
        i = enc.get(word)
        if i is not None:
            return [i]
        ids = []
        start, n = 0, len(word)
        longest = self.longest
        while start < n:
            match, at = -1, 0
            for k in range(min(n - start, longest), 0, -1):
                cand = word[start:start + k] if start == 0 else _CONTINUATION + word[start:start + k]
                j = enc.get(cand)
                if j is not None:
                    match, at = j, k
                    break
            if match == -1:
                ids.append(self.unk)
                break
            ids.append(match)
            start += at
        return ids

    def _encode_piece(self, text: bytes, ids: list[int]) -> None:
        if self._compiled is not None:
            self._compiled(text, ids)
            return
        for w in self._words(text):
            ids.extend(self._word_piece(w))



# MNN's std::regex (ECMAScript, "C" locale, icase) for type 3, in Python's re on Latin-1 text:
# [[:alpha:]] and [[:digit:]] are ASCII there, and bytes >= 0x80 are in no class
_HF_SPLIT = re.compile(
    r"('s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    re.ASCII | re.IGNORECASE)
_HF_SPLIT_WHOLE = re.compile(_HF_SPLIT.pattern.replace("('s", "(?:'s", 1), _HF_SPLIT.flags)  # findall: whole matches


def wide(b: bytes) -> str:
    """``utf8_to_wstring`` of ``tokenizer.cpp``: lead bytes trusted, no checks, a truncated last
    character dropped."""
    try:
        return b.decode("utf-8")  # valid UTF-8 reads the same either way
    except UnicodeDecodeError:
        pass
    out = []
    p, n = 0, len(b)
    while p < n:
        c = b[p]
        if c < 0x80:
            out.append(c)
            p += 1
        elif c < 0xE0:
            if p + 1 < n:
                out.append((c & 0x1F) << 6 | b[p + 1] & 0x3F)
            p += 2
        elif c < 0xF0:
            if p + 2 < n:
                out.append((c & 0x0F) << 12 | (b[p + 1] & 0x3F) << 6 | b[p + 2] & 0x3F)
            p += 3
        elif c < 0xF8:
            if p + 3 < n:
                out.append((c & 0x07) << 18 | (b[p + 1] & 0x3F) << 12 | (b[p + 2] & 0x3F) << 6 | b[p + 3] & 0x3F)
            p += 4
        else:
            p += 1
    # a wchar_t past U+10FFFF (from a lead byte F5-F7) matches no byte-map character and no piece:
    # one stand-in that does neither keeps that, within what a Python str can hold
    return "".join(chr(c) if c <= 0x10FFFF else "\uffff" for c in out)


def _lines_text(lines: list[bytes], errors: str | None) -> list[str] | None:
    """``[x.decode("utf-8", errors) for x in lines]``, decoded at once when all are valid UTF-8 and
    none holds a newline (then each line reads the same alone); else one by one (None when
    ``errors`` is None: the caller reads them its own way)."""
    joined = b"\n".join(lines)
    if joined.count(b"\n") == len(lines) - 1:
        try:
            return joined.decode("utf-8").split("\n") if lines else []
        except UnicodeDecodeError:
            pass
    return None if errors is None else [x.decode("utf-8", errors) for x in lines]


_FIRST_SPACE = re.compile(r"^([^ \n]*) ([^\n]*)$", re.M)


def _first_space_pairs(lines: list[bytes]) -> list[tuple[str, str]] | None:
    """``[(wide(x[:d]), wide(x[d + 1:]))]`` with d each line's first space, in one pass, when every
    line is valid UTF-8 (``wide`` is then the decode), holds a space and no newline; else None."""
    joined = b"\n".join(lines)
    if not lines or joined.count(b"\n") != len(lines) - 1:
        return None
    try:
        text = joined.decode("utf-8")
    except UnicodeDecodeError:
        return None
    pairs = _FIRST_SPACE.findall(text)  # one per line with a space
    return pairs if len(pairs) == len(lines) else None


_LONG_TOKEN = 64  # characters: from here type 3's merge loop is the heap's (MNN's own is quadratic)
_CACHE_LIMIT = 1 << 16  # words kept per tokenizer (MNN keeps none; ours only saves time)


class HuggingFace(_TokenLines):
    """Type 3: GPT-2 byte-level BPE over merges.txt's pairs, split by a C-locale regex, with MNN's
    own merge loop (each step merges the lowest-ranked pair of the *current* pair list)."""

    tree_type = t.HuggingFaceTxtFile

    def __init__(self, tree: t.HuggingFaceTxtFile, **kw):
        super().__init__(tree, **kw)
        self.tokens = list(tree.tokens)
        self._merges = tree.merges
        self._word_ids: dict[str, tuple[int, ...]] = {}
        sp = stages()  # the compiled merges and loop (mnn_legacy.c), or None: the code below
        self._compiled = None if sp is None else sp.MnnLegacyHF(self.tokens, list(tree.merges), BYTE_MAP)
        if self._compiled is None:
            self.encoder, self.ranks  # noqa: B018 (built now, not at the first encode)

    @cached_property
    def encoder(self) -> dict[str, int]:
        return first_ids(_lines_text(self.tokens, "surrogateescape"), range(len(self.tokens)))

    @cached_property
    def ranks(self) -> dict[tuple[str, str], int]:
        # each merge line with a space: (left, right) of its first space -> its first line number
        pairs = _first_space_pairs(self._merges)
        if pairs is not None:
            return first_ids(pairs, range(len(pairs)))
        ranks: dict[tuple[str, str], int] = {}
        for i, line in enumerate(self._merges):
            d = line.find(b" ")
            if d != -1:
                ranks.setdefault((wide(line[:d]), wide(line[d + 1:])), i)
        return ranks

    def _bpe(self, token: str) -> list[str]:
        if len(token) > _LONG_TOKEN:
            return self._bpe_long(token)
        pairs = [[token[i - 1], token[i]] for i in range(1, len(token))]
        merged: set[int] = set()
        ranks = self.ranks
        big = 2**31 - 1

        def left(i: int) -> int:
            for j in range(i - 1, -2, -1):
                if j not in merged:
                    return j
            return -1

        def right(i: int) -> int:
            for j in range(i + 1, len(pairs)):
                if j not in merged:
                    return j
            return len(pairs)

        while True:
            best, to_merge = big, -1
            for i, pr in enumerate(pairs):
                if i not in merged:
                    r = ranks.get((pr[0], pr[1]), big)
                    if r < best:
                        best, to_merge = r, i
            if to_merge == -1:
                break
            merged.add(to_merge)
            into = pairs[to_merge][0] + pairs[to_merge][1]
            lft = left(to_merge)
            if lft >= 0:
                pairs[lft][1] = into
            rgt = right(to_merge)
            if rgt < len(pairs):
                pairs[rgt][0] = into
        if len(merged) == len(pairs):
            return [token]
        out = []
        for i, pr in enumerate(pairs):
            if i not in merged:
                if left(i) < 0:
                    out.append(pr[0])
                out.append(pr[1])
        return out

    def _bpe_long(self, token: str) -> list[str]:
        """:meth:`_bpe`'s result in O(n log n): MNN's loop merges the lowest-ranked pair of the
        current pairs, the leftmost among equals -- :func:`merge_lowest_pairs` gives the same merges."""
        ranks = self.ranks
        big = 2**31 - 1

        def rank(a: str, b: str) -> int | None:
            r = ranks.get((a, b), big)
            return r if r < big else None

        return merge_lowest_pairs(list(token), rank, str.__add__)

    def _encode_piece(self, text: bytes, ids: list[int]) -> None:
        s = text.decode("latin-1")
        cache = self._word_ids
        splits: Iterable[str]
        if self._compiled is not None:
            splits = _HF_SPLIT_WHOLE.findall(s)
            done = self._compiled.encode(splits, cache, _CACHE_LIMIT, ids)
            if done == -1:
                return
            splits = splits[done:]  # from the first split the compiled loop did not do (it raises below)
        else:
            splits = (m.group(0) for m in _HF_SPLIT.finditer(s))
        for split in splits:
            hit = cache.get(split)
            if hit is None:
                hit = self._word(split)
                if len(cache) < _CACHE_LIMIT:
                    cache[split] = hit
            ids.extend(hit)

    def _word(self, split: str) -> tuple[int, ...]:
        """The ids of one split of the regex (a word's ids depend on it alone; one that raises is
        not kept)."""
        out = []
        for piece in self._bpe("".join(BYTE_MAP[ord(c)].decode() for c in split)):
            # wstring_to_utf8 then encoder_.at(): a piece the vocabulary lacks throws
            key = piece.encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")
            i = self.encoder.get(key)
            if i is None:
                raise UndefinedInMnn(f"legacy type 3: {piece!r} is not in the vocabulary: MNN's "
                                     "encoder_.at() throws std::out_of_range")
            out.append(i)
        return tuple(out)

    def _decode_one(self, i: int) -> bytes:
        if not 0 <= i < len(self.tokens):
            return b""
        return bytes(UNBYTE[ch] for ch in (c.encode("utf-8", "surrogatepass") for c in wide(self.tokens[i]))
                     if ch in UNBYTE)

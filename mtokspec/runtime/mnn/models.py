"""Models as MNN's C++ ``PipelineTokenizer`` runs them (``BPEModel``, ``WordPieceModel``,
``UnigramModel`` in ``tokenizer.cpp``), on bytes.

Vocabulary look-ups are MNN's binary searches over the rows in file order (exact for any order);
every id a look-up can produce is the id MNN's would.

These classes are the reference.  When the compiled module is there (``mtokspec/speedups.py``) each
model, once built, hands its look-ups and its ``tokenize`` / ``tokenize_pieces`` to its compiled
twin (``_csrc/mnn_models.c``: the same loops in the same order, built from the table's columns);
:func:`_compiled` is the one place that switches.  A piece where the pure code raises goes back to it.
"""

from __future__ import annotations

import heapq

from mtokspec import speedups
from mtokspec.format import tree as t
from mtokspec.format.table import Table
from mtokspec.runtime.shared.registry import build_from_registry, stage_registry
from mtokspec.runtime.mnn import unicode as U
from mtokspec.errors import UndefinedInMnn
from mtokspec.runtime.mnn.pre_tokenizers import BYTE_MAP
from mtokspec.runtime.mnn._text import BYTE_PIECES, i32, i32_all, sorted_lookup, utf8

_CACHE_LIMIT = 1 << 16  # MNN's cache is unbounded; ours only saves time, so it is capped


def _cached(cache: dict[bytes, list[int]], text: bytes, tokenize) -> list[int]:
    """``tokenize(text)``, kept in ``cache`` (a model's ids depend on the piece alone; a piece
    that raises is not kept)."""
    hit = cache.get(text)
    if hit is not None:
        return list(hit)
    out = tokenize(text)
    if len(cache) < _CACHE_LIMIT:
        cache[text] = out
    return list(out)


def _columns(rows, width: int) -> tuple:
    """The rows' first ``width`` columns (a file's table gives them without a tuple per row)."""
    if isinstance(rows, Table):
        return rows.columns()[:width]
    return tuple(zip(*rows))[:width] if rows else ((),) * width


def _compiled(model, core) -> None:
    """From now on ``model.tokenize`` and ``model.tokenize_pieces`` are ``core``'s (its compiled
    twin, which gives the same ids, and hands back to the pure ``tokenize`` a piece it raises on)."""
    model.core = core
    model.tokenize = core.tokenize
    model.tokenize_pieces = core.tokenize_pieces


def _vocab_core(rows):
    """The compiled look-up over ``rows`` (token, id, ...), or None: not built, or rows it cannot
    hold (an id outside the table, a token not bytes...: the pure code then reports or reads them).
    A table still as the parse's compiled walk left it is read where it is stored (no object per row)."""
    sp = speedups.module()
    if sp is None:
        return None
    stored = rows.string_index() if isinstance(rows, Table) else None
    try:
        if stored is not None:
            raw, index, typed = stored
            return sp.MnnVocab(raw, typed[1], index)
        tokens, ids = _columns(rows, 2)
        return sp.MnnVocab(tokens, ids)
    except (TypeError, ValueError, OverflowError):
        return None


class Vocab:
    """``id_to_token`` (a hole reads as the empty string) and MNN's ``vocab_find``.

    With the compiled look-up, ``id_to_token`` is made when first read (the models read tokens by
    ``token(i)``, which the look-up answers)."""

    def __init__(self, rows, path: str):
        self.core = _vocab_core(rows)
        self._tokens: list[bytes] | None = None
        if self.core is not None:
            self.token_to_id = self.core.find  # type: ignore[method-assign]
            self.token = self.core.token  # type: ignore[method-assign]
            return
        size = len(rows)
        tokens = [row[0] for row in rows]
        ids = i32_all([row[1] for row in rows])
        if ids and (min(ids) < 0 or max(ids) >= size):
            k = next(k for k, i in enumerate(ids) if not 0 <= i < size)
            raise UndefinedInMnn(f"{path}[{k}]: id {ids[k]} is outside 0..{size - 1}: MNN's loader writes "
                                 "past its id table")
        self._tokens = id_to_token = [b""] * size
        for tok, i in zip(tokens, ids):
            id_to_token[i] = tok
        self._find = sorted_lookup(tokens, ids)

    def token_to_id(self, key: bytes) -> int:
        if len(key) > 0xFFFF:  # MNN passes the length as uint16_t
            key = key[:len(key) & 0xFFFF]
        i = self._find(key)
        return -1 if i is None else i

    def token(self, i: int) -> bytes | None:
        return self.id_to_token[i] if 0 <= i < len(self.id_to_token) else None

    def size(self) -> int:
        """The number of ids (``len(id_to_token)``)."""
        return self.core.size if self.core is not None else len(self.id_to_token)

    @property
    def id_to_token(self) -> list[bytes]:
        if self._tokens is None:
            self._tokens = self.core.id_to_token()
        return self._tokens


class _Model:
    """What MNN's three models share: ``tokenize`` (each model's ``_tokenize``, through the piece
    cache), ``tokenize_pieces``, and ``id_to_token`` (an id outside the vocabulary reads as
    ``unk_token``)."""

    unk_token = b""
    vocab: Vocab
    _cache: dict[bytes, list[int]]

    def id_to_token(self, i: int) -> bytes:
        token = self.vocab.token(i)
        return self.unk_token if token is None else token

    def tokenize(self, text: bytes) -> list[int]:
        return _cached(self._cache, text, self._tokenize)

    def tokenize_pieces(self, pieces: list[bytes], out: list[int]) -> None:
        """``out += tokenize(piece)`` for each piece."""
        for s in pieces:
            out.extend(self.tokenize(s))


class BPE(_Model):
    """MNN's BPE: characters (or bytes, for ``byte_level``) to ids, then the lowest-ranked merge of
    adjacent ids, leftmost first, until none applies -- or until a merge's joined text is not in the
    vocabulary, which ends merging for the whole split.  Ranks of 10^9 and up never apply."""

    @classmethod
    def from_tree(cls, n) -> "BPE":
        return cls(n)

    def __init__(self, node: t.BPEModel, end_of_word_suffix: bytes = b"", unk_id: int = -1, fuse_unk: bool = False):
        self.vocab = Vocab(node.vocab, "model.vocab")
        self.byte_level = node.byte_level
        self.core = None
        # format next (mnn-next), on the pure path (the compiled core has neither): the last
        # character of each piece is looked up with the suffix; a character no token covers (nor,
        # with the model's byte_fallback, its byte tokens) becomes unk_id, once per run with fuse_unk
        self.end_of_word_suffix = end_of_word_suffix
        self.unk_id = unk_id
        self.fuse_unk = fuse_unk
        self.byte_fallback = bool(node.byte_fallback)
        merges = node.merges
        core = None if end_of_word_suffix or unk_id >= 0 else self._core(merges)
        if core is not None:
            _compiled(self, core)
            return
        keys = [a << 32 | b for a, b, _ in merges]
        self._rank = sorted_lookup(keys, i32_all([r for _, _, r in merges]))
        self._cache: dict[bytes, list[int]] = {}
        self._joined: dict[int, int] = {}  # pair key -> the id of the two tokens' joined text (or -1)

    def _core(self, merges):
        if self.vocab.core is None:
            return None
        rows = merges.fixed_rows() if isinstance(merges, Table) else None
        if rows is None:
            left, right, ranks = _columns(merges, 3)
            rows = ([a << 32 | b for a, b in zip(left, right)], ranks)
        try:
            return speedups.module().MnnBPE(self.vocab.core, rows, self.byte_level, BYTE_MAP, BYTE_PIECES)
        except (TypeError, ValueError, OverflowError):
            return None  # (a merge the core cannot hold: a rank or an id outside u32)

    def _tokenize(self, text: bytes) -> list[int]:
        if not text:
            return []
        find = self.vocab.token_to_id
        out: list[int] = []
        # format next: the word's last character with the suffix; unk_id for a character no token covers
        suffix, unk, after_unk = self.end_of_word_suffix, self.unk_id, False
        if self.byte_level:
            last = len(text) - 1
            for k, b in enumerate(text):
                i = find(BYTE_MAP[b] + suffix if suffix and k == last else BYTE_MAP[b])
                if i == -1 and unk >= 0:
                    after_unk = self._unknown(out, after_unk)
                    continue
                after_unk = False
                if i != -1:
                    out.append(i)
        else:
            n = len(text)
            for off, r, cp in U.chars(text):
                if cp == U.REPLACEMENT and r == 1:
                    i = find(BYTE_PIECES[text[off]])
                    if i != -1:
                        out.append(i)
                    after_unk = False
                    continue
                ch = text[off:off + r]
                i = find(ch + suffix if suffix and off + r >= n else ch)
                if i == -1 and unk >= 0 and not (self.byte_fallback and all(find(BYTE_PIECES[b]) != -1 for b in ch)):
                    after_unk = self._unknown(out, after_unk)
                    continue
                after_unk = False
                if i != -1:
                    out.append(i)
                    continue
                for b in ch:
                    i = find(BYTE_PIECES[b])
                    if i != -1:
                        out.append(i)
        return self._merge(out)

    def _unknown(self, out: list[int], after_unk: bool) -> bool:
        """Format next's unknown character: ``unk_id`` appended (once per run with ``fuse_unk``)."""
        if not (self.fuse_unk and after_unk):
            out.append(self.unk_id)
        return True

    def _merge(self, ids: list[int]) -> list[int]:
        n = len(ids)
        if n < 2:
            return ids
        rank_of = self._rank
        nxt = list(range(1, n)) + [-1]
        prv = list(range(-1, n - 1))
        ver = [0] * n
        alive = [True] * n
        def rank(i: int, j: int):
            r = rank_of(ids[i] << 32 | ids[j])
            return r if r is not None and 0 <= r < 1_000_000_000 else None

        heap = []
        for i in range(n - 1):
            r = rank(i, i + 1)
            if r is not None:
                heap.append((r, i, 0, i + 1, 0))
        heapq.heapify(heap)
        token = self.id_to_token
        find = self.vocab.token_to_id
        joined = self._joined
        while heap:
            _, i, vi, j, vj = heapq.heappop(heap)
            # a stale entry: one side merged since, or no longer next to the other
            if not alive[i] or ver[i] != vi or nxt[i] != j or ver[j] != vj:
                continue
            key = ids[i] << 32 | ids[j]
            nid = joined.get(key)
            if nid is None:
                nid = find(token(ids[i]) + token(ids[j]))
                if len(joined) < _CACHE_LIMIT:
                    joined[key] = nid
            if nid == -1:
                break
            ids[i] = nid
            ver[i] += 1
            alive[j] = False
            k = nxt[j]
            nxt[i] = k
            if k != -1:
                prv[k] = i
            h = prv[i]
            if h != -1:
                r = rank(h, i)
                if r is not None:
                    heapq.heappush(heap, (r, h, ver[h], i, ver[i]))
            if k != -1:
                r = rank(i, k)
                if r is not None:
                    heapq.heappush(heap, (r, i, ver[i], k, ver[k]))
        out = []
        i = 0
        while i != -1:
            out.append(ids[i])
            i = nxt[i]
        return out


class WordPiece(_Model):
    """Greedy longest match over bytes (a piece may end inside a UTF-8 character); the unknown
    token itself never matches; a word that cannot be covered is the unknown id alone, and a
    word longer than ``max_input_chars_per_word`` *bytes* too."""

    @classmethod
    def from_tree(cls, n) -> "WordPiece":
        return cls(n)

    def __init__(self, node: t.WordPieceModel):
        self.vocab = Vocab(node.vocab, "model.vocab")
        self.unk_token = utf8(node.unk_token)
        self.prefix = utf8(node.continuing_subword_prefix)
        self.max_chars = i32(node.max_input_chars_per_word)
        self.unk_id = self.vocab.token_to_id(self.unk_token)
        # no look-up of a key longer than every token can find one: candidates stop there (exact,
        # and a long word costs O(length x longest token) instead of O(length^2))
        if self.vocab.core is None:
            self.longest = max(map(len, self.vocab.id_to_token), default=0)
        else:
            self.longest = self.vocab.core.max_len()  # (the same, read by the compiled vocabulary)
        self._cache: dict[bytes, list[int]] = {}
        self.core = None
        if self.vocab.core is not None:
            _compiled(self, speedups.module().MnnWordPiece(self.vocab.core, self.prefix, self.max_chars, self.unk_id,
                                                           self.longest))

    def _tokenize(self, text: bytes) -> list[int]:
        if not text:
            return []
        unk = self.unk_id
        if len(text) > self.max_chars:
            return [unk] if unk != -1 else []
        find = self.vocab.token_to_id
        out = []
        start, n = 0, len(text)
        longest = self.longest if self.longest < 0xFFFF else n  # (longer keys are cut by MNN's look-up)
        while start < n:
            end = min(n, start + longest)
            cur = -1
            while end > start:
                sub = text[start:end]
                if start > 0:
                    sub = self.prefix + sub
                i = find(sub)
                if i != -1 and i != unk:
                    cur = i
                    break
                end -= 1
            if cur == -1:
                return [unk]
            out.append(cur)
            start = end
        return out


class Unigram(_Model):
    """MNN's Viterbi: over byte offsets (a piece may start or end inside a character), the
    shortest piece first with ties kept; byte fallback only for one-byte steps; an offset no
    piece reaches takes the unknown id over the character before it; adjacent unknowns fuse."""

    @classmethod
    def from_tree(cls, n) -> "Unigram":
        return cls(n)

    def __init__(self, node: t.UnigramModel, hf_ties: bool = False):
        rows = node.vocab
        self.vocab = Vocab(rows, "model.vocab")  # (token, id, score) rows: it reads token and id
        self.unk_id = i32(node.unk_id)
        self.byte_fallback = node.byte_fallback
        self.unk_token = self.vocab.token(self.unk_id) or b""
        self._cache: dict[bytes, list[int]] = {}
        self.core = None
        # format next (mnn-next), on the pure path (the compiled lattice keeps MNN's ties): of equal
        # scores at an offset, the longest last piece
        self.hf_ties = hf_ties
        if not hf_ties and self.vocab.core is not None and self._compile(rows):
            return
        tokens = self.vocab.id_to_token
        scores = [0.0] * len(rows)
        for tok, i, s in rows:
            scores[i32(i)] = s
        self.scores = scores
        self.max_len = max(map(len, tokens), default=0)
        self.lengths = _candidate_lengths({len(row[0]) for row in rows}, self.max_len)

    def _compile(self, rows) -> bool:
        """``max_len`` and ``lengths`` read by the compiled vocabulary, and the compiled lattice
        (False: rows it cannot hold)."""
        vcore = self.vocab.core
        max_len = vcore.max_len()
        lengths = _candidate_lengths(set(vcore.row_lengths()), max_len)
        try:
            stored = rows.string_index() if isinstance(rows, Table) else None
            scores = stored[2][2] if stored is not None else _columns(rows, 3)[2]
            core = speedups.module().MnnUnigram(vcore, scores, self.unk_id, self.byte_fallback,
                                                lengths, BYTE_PIECES, self._handed_back)
        except (TypeError, ValueError, OverflowError):
            return False
        self.max_len, self.lengths = max_len, lengths
        self.scores = None  # read from the core when the pure code first needs them
        _compiled(self, core)
        return True

    def _handed_back(self, text: bytes) -> list[int]:
        """The pure ``tokenize`` of a piece the compiled lattice hands back (it raises there)."""
        if self.scores is None:
            self.scores = self.core.scores()
        return Unigram.tokenize(self, text)

    def _score(self, i: int) -> float:
        if i < 0:
            raise UndefinedInMnn(f"MNN's Unigram reads scores[{i}] here (no such piece)")
        return self.scores[i]

    def _unk_score(self) -> float:
        return self._score(self.unk_id) if self.unk_id < len(self.scores) else -10.0

    def _tokenize(self, text: bytes) -> list[int]:
        if not text:
            return []
        n = len(text)
        NEG = -1e18
        best = [NEG] * (n + 1)
        best_id = [-1] * (n + 1)
        prev = [0] * (n + 1)
        best[0] = 0.0
        find = self.vocab.token_to_id
        unk = self.unk_id
        scores = self.scores
        lengths = self.lengths
        hf_ties = self.hf_ties
        for i in range(1, n + 1):
            bi = best[i]
            # the starts MNN tries, nearest first, but those where no look-up can succeed
            starts = [i - k for k in lengths if k <= i]
            for j in starts:
                bj = best[j]
                if bj <= -1e17:
                    continue
                fid = find(text[j:i])
                if fid != -1 and fid != unk:
                    tid, score = fid, scores[fid]
                elif self.byte_fallback and i - j == 1:
                    bf = find(BYTE_PIECES[text[j]])
                    if bf != unk:
                        tid, score = bf, self._score(bf)
                    else:
                        tid, score = unk, self._unk_score()
                else:
                    continue
                s = bj + score
                if s > bi or bi <= -1e17 or (s == bi and hf_ties):
                    bi = s
                    best[i] = s
                    prev[i] = j
                    best_id[i] = tid
            if bi <= -1e17:
                char_len = 1
                for k in range(1, 5):
                    if i - k < 0:
                        break
                    c = text[i - k]
                    if c & 0xC0 != 0x80:
                        expected = 4 if c >= 0xF0 else 3 if c >= 0xE0 else 2 if c >= 0xC0 else 1
                        if expected == k:
                            char_len = k
                        break
                p = best[i - char_len]
                if p > -1e17:
                    best[i] = p + self._unk_score()
                    prev[i] = i - char_len
                    best_id[i] = unk
        if best[n] <= -1e17:
            return []
        out: list[int] = []
        cur = n
        while cur > 0:
            tid = best_id[cur]
            if not out or tid != unk or out[-1] != unk:
                out.append(tid)
            cur = prev[cur]
        out.reverse()
        return out


def _candidate_lengths(token_lengths: set[int], max_len: int) -> list[int]:
    """The candidate lengths (up to ``max_len``) at which MNN's Viterbi can find a piece, shortest
    first (the order it visits them): a piece's length, 1 (byte fallback), and past 0xFFFF every
    length whose key MNN's look-up cuts to a piece's length (it passes the length as uint16_t)."""
    out = {1}
    for k in token_lengths:
        if k > 0xFFFF:
            continue  # no key reaches it
        if k:
            out.add(k)
        out.update(range(k + 0x10000, max_len + 1, 0x10000))
    return sorted(x for x in out if x <= max_len)


# tree class -> the model MNN's loader builds for it
REGISTRY: dict[type, type | None] = stage_registry("Model", BPE, WordPiece, Unigram)


def from_tree(node):
    return build_from_registry(REGISTRY, node, "model")

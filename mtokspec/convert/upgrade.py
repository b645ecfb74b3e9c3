"""Legacy ``tokenizer.txt`` (types 0-3) -> an equivalent ``.mtok`` tree.

    from mtokspec.convert.upgrade import upgrade
    result = upgrade(mtokspec.parse(open("tokenizer.txt", "rb").read()))   # .tree, .losses
    tok = mtokspec.Tokenizer.from_tree(result.tree)                        # the legacy file, runnable
    doc = mtokspec.convert.to_hf(result.tree)                               # ... and as tokenizer.json

Design record: ``docs/design/convert.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import regex

from mtokspec.format import tree as t
from mtokspec.convert import unicode_tables
from mtokspec.format.byte_level import bytes_to_unicode
from mtokspec.errors import ArgumentTypeError
from mtokspec.args import instance, items, mapping, texts, token_text
from mtokspec.convert.result import ConversionResult
from mtokspec.convert.loss import ConversionError, Loss
from mtokspec.runtime.shared.text import GPT2_PATTERN, METASPACE

__all__ = ["upgrade", "GPT2_PATTERN", "tiktoken_merges", "sentencepiece_merges", "byte_level_spelling",
           "LEGACY_TYPES"]

"""GPT-2's pre-tokenizer pattern (tiktoken ``gpt2``; HF ``ByteLevel(use_regex=True)``)."""

LEGACY_TYPES = {cls: t.ROOT_TYPES[cls] for cls in t.LEGACY_ROOTS}

_SPACE = METASPACE
_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER, _SP_UNUSED, _SP_BYTE = 1, 2, 3, 4, 5, 6


def byte_level_spelling(token: bytes) -> bytes:
    """``token``'s bytes spelled with GPT-2's byte-to-unicode characters, as UTF-8."""
    instance("token", token, (bytes, bytearray, memoryview), "bytes")
    m = bytes_to_unicode()
    return "".join(m[b] for b in token).encode("utf-8")


def upgrade(txt_tree, *, split_pattern: str = GPT2_PATTERN, lowercase: bool = False,
            sentencepiece_model: str = "bpe", sentencepiece_normalization: str = "identity",
            strict: bool = False) -> ConversionResult:
    """Upgrade a parsed legacy ``tokenizer.txt`` tree to an ``MtokFile`` (see the module doc).

    ``split_pattern`` (type 1 only): the regular expression that splits text before byte-level BPE;
    the file does not hold it.  ``lowercase`` (type 2 only): the model lower-cases and strips
    accents (BERT *uncased*).  ``sentencepiece_model`` (type 0 only): ``"bpe"`` (SentencePiece BPE,
    what MNN runs) or ``"unigram"``; ``sentencepiece_normalization`` (type 0 only): SentencePiece's
    ``"identity"`` rule (dummy ``▁`` prefix, every space escaped: Llama) or ``"nmt_nfkc"`` (its
    default: NFKC, white-space runs collapsed, ``▁`` before every word: T5).  ``strict=True`` raises :class:`ConversionError` listing the losses.
    """
    instance("txt_tree", txt_tree, t.TokenizerFile, "a legacy tokenizer.txt tree")
    token_text("split_pattern", split_pattern)
    token_text("sentencepiece_model", sentencepiece_model)
    token_text("sentencepiece_normalization", sentencepiece_normalization)
    if isinstance(txt_tree, t.MtokFile):
        raise ConversionError("already a .mtok tree: nothing to upgrade")
    if sentencepiece_model not in ("bpe", "unigram"):
        raise ConversionError(f"sentencepiece_model must be 'bpe' or 'unigram', not {sentencepiece_model!r}")
    if sentencepiece_normalization not in ("identity", "nmt_nfkc"):
        raise ConversionError("sentencepiece_normalization must be 'identity' or 'nmt_nfkc', "
                              f"not {sentencepiece_normalization!r}")
    if isinstance(txt_tree, t.TiktokenTxtFile):
        try:
            regex.compile(split_pattern)
        except regex.error as e:
            raise ConversionError(f"split pattern {split_pattern!r} is not a regular expression: {e}") from e
    if type(txt_tree) not in LEGACY_TYPES:
        raise ConversionError(f"not a legacy tokenizer.txt tree: {type(txt_tree).__name__}")
    up = _Upgrader(txt_tree)
    if isinstance(txt_tree, t.TiktokenTxtFile):
        tree = up.tiktoken(split_pattern)
    elif isinstance(txt_tree, t.HuggingFaceTxtFile):
        tree = up.huggingface()
    elif isinstance(txt_tree, t.BertTxtFile):
        tree = up.bert(lowercase)
    else:
        tree = up.sentencepiece(sentencepiece_model, sentencepiece_normalization)
    if strict and up.losses:
        raise ConversionError("upgrade would lose information (strict mode)", up.losses)
    return ConversionResult(tree, up.losses, unicode_tables.UNIDATA_VERSION)


# ---------------------------------------------------------------------------------------------
# merge derivations


def _byte_pair_merge(ranks: dict[bytes, int], piece: bytes, max_rank: int) -> list[bytes]:
    """tiktoken's ``byte_pair_merge`` on ``piece``, using only ranks below ``max_rank``."""
    parts = [piece[i:i + 1] for i in range(len(piece))]
    get = ranks.get
    while len(parts) > 1:
        best, at = max_rank, -1
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            if r is not None and r < best:  # strict: the leftmost of equal ranks
                best, at = r, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def tiktoken_merges(tokens: Iterable[bytes], skip: Iterable[int] = ()) -> tuple[list[tuple[int, int, int]], list[int]]:
    """BPE merges equivalent to tiktoken ranks: ``([(left id, right id, rank)], unreachable ids)``.

    ``tokens[i]`` has rank ``i`` (ids listed in ``skip`` -- special tokens -- take no part); a
    repeated token keeps its first rank.  Ranks of the result are 0, 1, ... in the order of the
    merged tokens' ranks.
    """
    tokens = items("tokens", texts("tokens", tokens), (bytes, bytearray), "bytes")
    skip = set(items("skip", texts("skip", skip), int, "ints"))
    ranks: dict[bytes, int] = {}
    for i, tok in enumerate(tokens):
        if i not in skip and tok and tok not in ranks:
            ranks[tok] = i
    merges: list[tuple[int, int, int]] = []
    unreachable: list[int] = []
    for tok, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(tok) < 2:
            continue
        parts = _byte_pair_merge(ranks, tok, r)
        # two parts that are tokens; a single byte without a token of its own (a hand-made file:
        # tiktoken ranks all 256) is no part, and a token spelled with one is unreachable too
        left, right = (ranks.get(parts[0]), ranks.get(parts[1])) if len(parts) == 2 else (None, None)
        if left is None or right is None:
            unreachable.append(r)
            continue
        merges.append((left, right, len(merges)))
    return merges, unreachable


def _sentencepiece_arguments(pieces, vocab, mergeable) -> list[int]:
    items("pieces", pieces, (tuple, list), "(text, score, type) triples")
    for i, p in enumerate(pieces):
        if len(p) != 3 or not isinstance(p[0], str) or isinstance(p[1], bool) or not isinstance(p[1], (int, float)):
            raise ArgumentTypeError(f"pieces: expected (text, score, type) triples, item {i} is not one")
    mapping("vocab", vocab)
    if not all(isinstance(k, str) for k in vocab):
        raise ArgumentTypeError("vocab: expected a dict of str keys")
    ids = items("mergeable", texts("mergeable", mergeable), int, "ints")
    for pid in ids:
        if not 0 <= pid < len(pieces):
            raise ConversionError(f"mergeable: piece id {pid} is not in pieces (0 to {len(pieces) - 1})")
    return ids


def sentencepiece_merges(pieces: list[tuple[str, float, int]], vocab: dict[str, int],
                         mergeable: Iterable[int]) -> list[tuple[int, int, int]]:
    """SentencePiece BPE as merges: every split ``l + r`` of a mergeable piece into vocab pieces.

    ``pieces[i] = (text, score, type)``; ``vocab``: text -> id of the vocab entries; ``mergeable``:
    ids of the pieces a merge may produce.  Order: descending score, then piece id, then
    ``(id(l), id(r))``; ranks 0, 1, ...  Only the split points where both sides have the length of
    some vocab entry are looked up: a long piece costs its length times the number of distinct
    lengths, not its length squared.
    """
    mergeable = _sentencepiece_arguments(pieces, vocab, mergeable)
    found: list[tuple[float, int, int, int]] = []
    lengths = sorted({len(v) for v in vocab})
    length_set = frozenset(lengths)
    for pid in mergeable:
        text, score, _ = pieces[pid]
        local = []
        n = len(text)
        for k in lengths:
            if k >= n:
                break
            if k < 1 or n - k not in length_set:
                continue
            left, right = vocab.get(text[:k]), vocab.get(text[k:])
            if left is not None and right is not None:
                local.append((left, right))
        local.sort()
        found.extend((-score, pid, left, right) for left, right in local)
    found.sort()
    return [(left, right, rank) for rank, (_, _, left, right) in enumerate(found)]


# ---------------------------------------------------------------------------------------------


def _ids_text(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:8]))
    return f"id{'s' if len(ids) != 1 else ''} {shown}{', ...' if len(ids) > 8 else ''} ({len(ids)})"


class _Upgrader:
    def __init__(self, src):
        self.src = src
        self.losses: list[Loss] = []
        h = src.header
        self.special, self.stop, self.prefix = t.header_roles(h)

    def loss(self, path: str, what: str, replacement: str, may_change: bool) -> None:
        self.losses.append(Loss(path, what, replacement, may_change))

    # -- shared pieces ----------------------------------------------------------------------------

    def header(self) -> t.Header:
        h = self.src.header
        return t.make_header(h.special, h.stop, h.prefix)

    def token_text(self, tokens: list[bytes], i: int) -> str | None:
        if not 0 <= i < len(tokens) or not tokens[i]:
            return None
        try:
            return tokens[i].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def special_added(self, tokens: list[bytes], path: str, note: str = "") -> list[t.AddedToken]:
        """Header special ids -> special added tokens (first occurrence of each id)."""
        out, seen, missing = [], set(), []
        for i in self.special:
            if i in seen:
                continue
            seen.add(i)
            text = self.token_text(tokens, i)
            if text is None:
                missing.append(i)
                continue
            out.append(t.AddedToken(i, True, False, False, text))
        if missing:
            self.loss("header.special_ids", f"special {_ids_text(missing)} without a UTF-8 token line",
                      "not added tokens (not matched in text)", True)
        if out:
            self.loss(f"{path}[special ids]", "added-token flags (lstrip, rstrip, single_word, normalized) "
                      f"of {len(out)} special tokens{note}", "all false; matched in the text as is", True)
        out.sort(key=lambda a: a.id)
        return out

    def trailing(self, tree: t.MtokFile, text_of) -> t.MtokFile:
        """Post-processor from the prefix ids, BOS/EOS texts, empty chat template, flags 0."""
        ops: list[t.PostOp] = [t.SpecialTokenOp(i) for i in self.prefix]
        if ops:
            ops.append(t.SequenceOp())
        tree.post_processor = t.PostProcessorProgram(ops)
        tree.bos_token = (text_of(self.prefix[0]) or "") if len(self.prefix) == 1 else ""
        tree.eos_token = (text_of(self.stop[0]) or "") if len(self.stop) == 1 else ""
        tree.chat_template = ""
        tree.flags = 0
        if len(self.stop) > 1:
            self.loss("header.stop_ids", f"{len(self.stop)} stop ids", "no EOS token text (ambiguous)", False)
        self.loss("tokenizer_config", "chat template, clean_up_tokenization_spaces, the post-processor "
                  "of add_special_tokens beyond the prefix ids", "not in the file: empty / 0 / "
                  f"{'prefix ids then A' if ops else 'none'}", True)
        return tree

    def vocab_rows(self, tokens: list[bytes], spell, path: str) -> tuple[list[tuple[bytes, int]], dict[bytes, int]]:
        """Sorted ``(spelling, id)`` rows; a repeated or empty token keeps its first id only."""
        first: dict[bytes, int] = {}
        dup, empty = [], []
        for i, tok in enumerate(tokens):
            if not tok:
                empty.append(i)
                continue
            s = spell(tok)
            if s in first:
                dup.append(i)
                continue
            first[s] = i
        if empty:
            self.loss(path, f"empty token line at {_ids_text(empty)}", "no vocab entry (never produced)", False)
        if dup:
            self.loss(path, f"token repeating an earlier line at {_ids_text(dup)}",
                      "no vocab entry (the first id is used; these decode only when special)", False)
        return sorted((s, i) for s, i in first.items()), first

    # -- type 1 -----------------------------------------------------------------------------------

    def tiktoken(self, split_pattern: str) -> t.MtokFile:
        tokens = self.src.tokens
        special = {i for i in self.special if 0 <= i < len(tokens)}
        rows, _ = self.vocab_rows(tokens, byte_level_spelling, "tokens")
        merges, unreachable = tiktoken_merges(tokens, skip=special)
        if unreachable:
            self.loss("tokens", f"{len(unreachable)} tokens are no merge of two lower-ranked tokens "
                      f"({_ids_text(unreachable)})", "unreachable by BPE (tiktoken emits them only when a "
                      "whole pre-token equals one)", True)
        if split_pattern == GPT2_PATTERN:
            self.loss("pre_tokenizer", "split pattern (not in a type-1 file)", "GPT-2's pattern", True)
        else:
            self.loss("pre_tokenizer", "split pattern (not in a type-1 file)", f"given pattern {split_pattern!r}", True)
        added = self.special_added(tokens, "tokens")
        tree = t.MtokFile(
            header=self.header(), normalizer=t.NoNormalizer(),
            pre_tokenizer=t.SequencePreTokenizer([t.SplitPreTokenizer(split_pattern, False, 0),
                                                  t.ByteLevelPreTokenizer(False)]),
            model=t.BPEModel(False, False, rows, sorted(merges, key=lambda m: (m[0], m[1]))),
            decoder=t.ByteLevelDecoder(), added_tokens=added)
        return self.trailing(tree, lambda i: self.token_text(tokens, i))

    # -- type 3 -----------------------------------------------------------------------------------

    def huggingface(self) -> t.MtokFile:
        tokens = self.src.tokens
        rows, first = self.vocab_rows(tokens, lambda b: b, "tokens")
        lines = list(self.src.merges)
        if lines and lines[0].startswith(b"#version"):
            lines = lines[1:]
        merges: list[tuple[int, int, int]] = []
        bad: list[int] = []
        for k, line in enumerate(lines):
            left, sp, right = line.rstrip(b"\r\n").partition(b" ")
            a, b = first.get(left), first.get(right)
            if not sp or a is None or b is None or (left + right) not in first:
                bad.append(k)
                continue
            merges.append((a, b, len(merges)))
        if bad:
            self.loss("merges", f"{len(bad)} merge lines without a space or naming tokens not in the vocab "
                      f"(lines {', '.join(str(k) for k in bad[:8])}{', ...' if len(bad) > 8 else ''})",
                      "skipped", True)
        added = self.special_added(tokens, "tokens", note=" (the type-3 exporter lists every added token "
                                   "here, special or not: all are special)")
        self.loss("pre_tokenizer", "ByteLevel add_prefix_space, trim_offsets (not in a type-3 file)",
                  "no prefix space", True)
        tree = t.MtokFile(header=self.header(), normalizer=t.NoNormalizer(),
                          pre_tokenizer=t.ByteLevelPreTokenizer(True),
                          model=t.BPEModel(False, False, rows, sorted(merges, key=lambda m: (m[0], m[1]))),
                          decoder=t.ByteLevelDecoder(), added_tokens=added)
        return self.trailing(tree, lambda i: self.token_text(tokens, i))

    # -- type 2 -----------------------------------------------------------------------------------

    def bert(self, lowercase: bool) -> t.MtokFile:
        tokens = self.src.tokens
        bad = [i for i, tok in enumerate(tokens) if tok and self.token_text(tokens, i) is None]
        if bad:
            raise ConversionError(f"tokens: {_ids_text(bad)} are not UTF-8; a WordPiece vocab is text")
        rows, first = self.vocab_rows(tokens, lambda b: b, "tokens")
        unk = "[UNK]"
        if b"[UNK]" not in first:
            self.loss("tokens", "no [UNK] token", "unk_token '[UNK]' (an unknown word cannot be encoded)", True)
        upper = sum(1 for s, _ in rows if any(c.isupper() for c in s.decode("utf-8")))
        evidence = (f"the vocab has {upper} tokens with upper-case letters" if upper else
                    "the vocab has no upper-case letter: the model is probably uncased (--lowercase)")
        self.loss("normalizer", f"lower-casing and accent stripping (not in a type-2 file; {evidence})",
                  f"lowercase={lowercase}, strip_accents={lowercase}", True)
        self.loss("model", "max_input_chars_per_word (not in a type-2 file)", "100 (HF default)", True)
        if lowercase:
            norm: t.Normalizer = t.BertNFDNormalizer(True, True, True, True, unicode_tables.nfd_table())
        else:
            norm = t.BertNormalizer(True, True, False, False)
        added = self.special_added(tokens, "tokens")
        tree = t.MtokFile(header=self.header(), normalizer=norm, pre_tokenizer=t.BertPreTokenizer(),
                          model=t.WordPieceModel(unk, "##", 100, rows),
                          decoder=t.WordPieceDecoder("##", True), added_tokens=added)
        return self.trailing(tree, lambda i: self.token_text(tokens, i))

    # -- type 0 -----------------------------------------------------------------------------------

    def sentencepiece(self, model: str, normalization: str) -> t.MtokFile:
        src_pieces = self.src.pieces
        pieces: list[tuple[str, float, int]] = []
        spaced, not_text, bad_score = 0, [], []
        for i, (tok, score, ptype) in enumerate(src_pieces):
            if b" " in tok:
                spaced += 1
                tok = tok.replace(b" ", _SPACE.encode("utf-8"))
            try:
                text = tok.decode("utf-8")
            except UnicodeDecodeError:
                not_text.append(i)
                text = ""
            try:
                value = float(score)
            except ValueError:
                bad_score.append(i)
                value = 0.0
            pieces.append((text, value, ptype))
        if spaced:
            self.loss("pieces", f"{spaced} pieces hold ' ' (the exporter's rewrite of '▁')",
                      "read back as '▁' (a piece with a real space cannot be told apart)", False)
        if not_text:
            self.loss("pieces", f"pieces that are not UTF-8 at {_ids_text(not_text)}", "no vocab entry", True)
        if bad_score:
            self.loss("pieces", f"scores that are not numbers at {_ids_text(bad_score)}", "score 0", True)
        if any(p[2] not in range(1, 7) for p in pieces):
            self.loss("pieces.type", "piece types outside 1..6", "treated as control pieces (never produced)", True)
        tokens = [p[0].encode("utf-8") for p in pieces]
        rows, _ = self.vocab_rows(tokens, lambda b: b, "pieces")
        vocab = {s.decode("utf-8"): i for s, i in rows}
        special = set(self.special)
        types = [p[2] for p in pieces]
        byte_fallback = any(ty == _SP_BYTE for ty in types)
        normal = [i for i, (text, _, ty) in enumerate(pieces)
                  if ty == _SP_NORMAL and i not in special and vocab.get(text) == i]
        flat = len({pieces[i][1] for i in normal}) <= 1 and len(normal) > 1

        added = self.special_added(tokens, "pieces")
        have = {a.id for a in added}
        for i, (text, _, ty) in enumerate(pieces):
            if ty == _SP_USER and i not in have and text and vocab.get(text) == i:
                added.append(t.AddedToken(i, False, False, False, text))
        added.sort(key=lambda a: a.id)

        unknown = [i for i, ty in enumerate(types) if ty == _SP_UNKNOWN]
        m: t.Model
        if model == "unigram":
            m = self._unigram(pieces, rows, normal, unknown, flat, byte_fallback)
        else:
            m = self._sp_bpe(pieces, vocab, rows, normal, unknown, flat, byte_fallback)
        if model == "unigram" or not flat:
            self.loss("model", "the SentencePiece algorithm (not in a type-0 file)",
                      f"{'Unigram' if model == 'unigram' else 'BPE'} (as asked)", True)

        if normalization == "nmt_nfkc":
            normalizer: t.Normalizer = t.TableNormalizer(unicode_tables.nfkc_table())
            pre: t.PreTokenizer = t.SequencePreTokenizer([t.SplitPreTokenizer("\\s+", False, 1),
                                                          t.MetaspacePreTokenizer(_SPACE, True)])
            how = "nmt_nfkc (as asked): NFKC, split at white-space runs (removed), '▁' before every word"
        else:
            normalizer = t.SequenceNormalizer([t.PrependNormalizer(_SPACE), t.ReplaceNormalizer(" ", _SPACE)])
            pre = t.NoPreTokenizer()
            how = "identity (as asked): prepend '▁', replace each ' ' by '▁'"
        self.loss("normalizer", "SentencePiece normalisation (NFKC or a precompiled map, whitespace "
                  "collapsing, dummy prefix; not in a type-0 file)", how + ", nothing else", True)
        tree = t.MtokFile(
            header=self.header(), normalizer=normalizer, pre_tokenizer=pre, model=m,
            decoder=t.SequenceDecoder([t.ReplaceDecoder(_SPACE, " "), t.ByteFallbackDecoder(), t.FuseDecoder(),
                                       t.StripDecoder(" ", 1, 0)]),
            added_tokens=added)
        return self.trailing(tree, lambda i: self.token_text(tokens, i))

    def _sp_bpe(self, pieces, vocab, rows, normal, unknown, flat, byte_fallback) -> t.BPEModel:
        mergeable = [i for i in normal if len(pieces[i][0]) > 1]
        merges = sentencepiece_merges(pieces, vocab, mergeable)
        if unknown or not byte_fallback:
            what = f"unknown piece {pieces[unknown[0]][0]!r} (id {unknown[0]})" if unknown else \
                "the model's unknown token (no piece of type 2)"
            cover = "characters outside the vocab go to byte pieces" if byte_fallback else \
                "characters outside the vocab are dropped (no byte pieces either)"
            self.loss("model.unk", what, f"not stored in a BPE model: {cover}", not byte_fallback)
        unused = [i for i, p in enumerate(pieces) if p[2] == _SP_UNUSED]
        if unused:
            self.loss("pieces", f"unused pieces at {_ids_text(unused)}",
                      "no merges produce them (SentencePiece merges, then re-splits them)", True)
        if flat:
            self.loss("pieces.score", f"all {len(normal)} normal pieces have score {pieces[normal[0]][1]!r} "
                      "(the exporter's fallback path: the algorithm and the scores are lost)",
                      "BPE, merge order = piece id order (a Unigram model is not reproduced; "
                      "see sentencepiece_model='unigram')", True)
        return t.BPEModel(byte_fallback, False, rows, sorted(merges, key=lambda m: (m[0], m[1])))

    def _unigram(self, pieces, rows, normal, unknown, flat, byte_fallback) -> t.UnigramModel:
        n = len(pieces)
        if flat:
            # Zipf's law: the i-th most frequent piece (SentencePiece orders pieces by descending
            # score) has log-probability -ln(i + 1) - ln(H_n), H_n ~ ln(n) + Euler's gamma.
            h = math.log(math.log(max(n, 2)) + 0.5772156649015329)
            scores = [-math.log(i + 1) - h for i in range(n)]
            self.loss("pieces.score", f"all {len(normal)} normal pieces have score {pieces[normal[0]][1]!r} "
                      "(the exporter's fallback path lost the scores)",
                      "Zipf estimate -ln(id + 1) - ln(ln(n) + 0.5772) from the piece order", True)
        else:
            scores = [p[1] for p in pieces]
        if unknown:
            unk_id = unknown[0]
        else:
            names = [i for i, p in enumerate(pieces) if p[0] == "<unk>"]
            unk_id = names[0] if names else 0
            self.loss("model.unk_id", "no piece of type 2 (unknown)",
                      f"unk_id {unk_id} ({'the piece named <unk>' if names else 'id 0, a guess'})", True)
        return t.UnigramModel(unk_id, byte_fallback, [(s, i, scores[i]) for s, i in rows])

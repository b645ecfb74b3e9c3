"""The vocabulary levers of ``--target mnn``: texts written for MNN's reading of the rows.

MNN's loader stores each row at ``id_to_token[id]``, row after row, and looks texts up by binary
search over the sorted rows: rows may share an id (each text looks it up, the id decodes as its
last row's text) and equal texts may follow each other (the look-up finds the first).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import regex

from mtokspec.format import tree as t
from mtokspec.runtime.hf.pre_tokenizers import BERT_PUNCTUATION
from mtokspec.runtime.shared.text import METASPACE
from mtokspec.runtime.shared.vocab_rows import BYTE_PIECES, LEAD_BYTES, hf_unk_id, looked_up, texts_by_id, unknown_rows_id

__all__ = ["JOINED_PREFIX", "JOINED_PREFIXES", "WORD_MARK", "CARRIED", "joined_wordpiece_tokens", "bpe_unknown_rows", "bpe_continuing_prefix"]


JOINED_PREFIXES = ("\x7f", "@\x7f")
"""The continuing-subword prefixes :func:`joined_wordpiece_tokens` may write, each above every
character that can begin a token HF's clean-up joins (a token's own text sorts before its prefixed
row); the second also below ``[UNK]``, for rows of the unknown id that must sort before it."""

JOINED_PREFIX = JOINED_PREFIXES[0]


def _isolates_punctuation(tree: t.MtokFile, tj: dict | None) -> bool:
    """Whether every punctuation character ends up a piece of its own: BERT's pre-tokenizer (or a
    Sequence holding it: later stages only cut further), or HF's Punctuation with ``isolated``."""
    pre = tree.pre_tokenizer
    kids = pre.pretokenizers if isinstance(pre, t.SequencePreTokenizer) else [pre]
    if any(isinstance(k, t.BertPreTokenizer) for k in kids):
        return True
    node = (tj or {}).get("pre_tokenizer")
    nodes = (node.get("pretokenizers") or []) if isinstance(node, dict) and node.get("type") == "Sequence" else [node]
    return any(isinstance(n, dict) and n.get("type") == "Punctuation" and n.get("behavior", "isolated").lower() == "isolated"
               for n in nodes)


def _joined_rows(m: t.WordPieceModel, joined: list[tuple[bytes, int]], new: bytes, words_may_start_with_prefix: bool,
                 blocked: set[bytes], unk: tuple[bytes, int] | None) -> list[tuple[bytes, int]] | None:
    """The rows of :func:`joined_wordpiece_tokens` with the prefix ``new``, or None when none joins."""
    old = m.continuing_subword_prefix.encode()
    keep = [(tok, i) for tok, i in joined if tok < new + tok and (tok not in blocked or (
        unk is not None and new + tok < unk[0]))]
    if not keep:
        return None
    rows: list[tuple[bytes, int, int]] = []  # (text, order among equal texts, id)
    for tok, i in ((row[0], row[1]) for row in m.vocab):
        if tok.startswith(old):
            rows.append((new + tok[len(old):], 0, i))
            if words_may_start_with_prefix:  # HF looks a word's first piece up among all texts
                if not old + tok[len(old):] < new + tok[len(old):]:
                    return None
                rows.append((tok, 0, i))
            continue
        rows.append((tok, 1, i))
    for tok, i in keep:
        if tok in blocked and unk is not None:  # MNN's look-up of a continuation passes over the unknown id
            rows.append((new + tok, 1, unk[1]))
        rows.append((new + tok, 2, i))
    rows.sort()
    return [(s, i) for s, _, i in rows]


def joined_wordpiece_tokens(tree: t.MtokFile, tj: dict | None = None) -> t.MtokFile:
    """A BERT WordPiece vocabulary on which MNN prints, token by token, what HF's decoder with
    ``cleanup`` gives: no space before a token ``x`` (after the first) that HF's clean-up joins to
    the one before (``cleanup(" " + x) == x``: ``. , ? !`` and tokens starting so).  MNN's one-id
    print (its stream) and its ``decode`` put a space before every token that does not start with the
    decoder's prefix; such a token is written as prefix + ``x`` (the text it decodes to), plus a
    row ``x`` of the same id (MNN's look-up of a word's first piece).  MNN's loader keeps the last
    row of an id as its text and its look-up finds the first row of a text, so the prefix is renamed
    (:data:`JOINED_PREFIXES`, in model and decoder), above ``x``'s first character; a continuing
    piece ``##x`` has the same text as prefix + ``x`` and its row comes first.

    Where MNN may look ``x`` up as a continuation that is no token (no ``##x``, after a
    pre-tokenizer that leaves punctuation inside words), a row prefix + ``x`` of the unknown id
    comes first: MNN's look-up passes over the unknown id, as HF finds nothing (only while that row
    sorts before the unknown token's text: ``[UNK]``).  Where a word may start with the old prefix,
    each continuation keeps a row of its HF text too.  Only with HF's WordPiece decoder with
    clean-up and the model's prefix, no token starting with the new prefix.  ``tj``: the folder's
    ``tokenizer.json`` (None: the file alone, whose pre-tokenizer shows BERT's only).  Bound: text
    without the new prefix at the start of a word."""
    from mtokspec.runtime.hf.decoders import wordpiece_cleanup

    m, dec = tree.model, tree.decoder
    if not (isinstance(m, t.WordPieceModel) and isinstance(dec, t.WordPieceDecoder) and dec.cleanup
            and m.continuing_subword_prefix and dec.prefix == m.continuing_subword_prefix):
        return tree
    old = m.continuing_subword_prefix.encode()
    isolated = _isolates_punctuation(tree, tj)
    words_may_start_with_prefix = not (isolated and regex.fullmatch(f"[{BERT_PUNCTUATION}]+", m.continuing_subword_prefix))
    texts = texts_by_id(m.vocab)
    continuations = {tok[len(old):] for tok in texts.values() if tok.startswith(old)}
    content = {a.id: a.content for a in tree.added_tokens}  # HF decodes an added token by its content
    joined = []
    for i, tok in sorted(texts.items()):
        text = tok.decode("utf-8", "surrogateescape")
        if not tok.startswith(old) and content.get(i, text) == text and text and wordpiece_cleanup(" " + text) == text:
            joined.append((tok, i))
    # a joined token MNN may look up as a continuation HF does not have
    blocked = set() if isolated else {tok for tok, _ in joined if tok not in continuations}
    unk_text = m.unk_token.encode()
    unk_id = looked_up(m.vocab, unk_text)
    unk = (unk_text, unk_id) if unk_id is not None and texts.get(unk_id) == unk_text else None
    best: tuple[int, str, list[tuple[bytes, int]]] | None = None
    for prefix in JOINED_PREFIXES:
        new = prefix.encode()
        if any(row[0].startswith(new) for row in m.vocab):
            continue
        rows = _joined_rows(m, joined, new, words_may_start_with_prefix, blocked, unk)
        if rows is not None and (best is None or len(rows) > best[0]):
            best = (len(rows), prefix, rows)
    if best is None:
        return tree
    _, prefix, rows = best
    if any(len(m.vocab) <= a.id < len(rows) for a in tree.added_tokens):
        return tree  # (an added id past the rows would read a hole of the longer table: "", not unk_token)
    return replace(tree, model=replace(m, continuing_subword_prefix=prefix, vocab=rows),
                   decoder=replace(dec, prefix=prefix))


def bpe_unknown_rows(tree: t.MtokFile, tj: dict) -> t.MtokFile:
    """A BPE vocabulary on which MNN gives HF's unknown id for each character no token covers
    (HF's ``unk_token`` without ``byte_fallback`` or ``fuse_unk``): MNN's BPE looks such a
    character's bytes up as ``<0xHH>`` pieces (whatever the byte-fallback flag says) and drops those
    it does not find, so a row ``<0xHH>`` of the unknown id for each byte that begins a character
    (``LEAD_BYTES``), none for the bytes that continue one, gives one unknown id per character
    (:func:`~mtokspec.runtime.shared.vocab_rows.unknown_rows_id` reads them back).

    Only where nothing else can change: no ``<0xHH>`` token in the vocabulary, and the unknown
    token's text (its id's last row) sorts after the ``<0xHH>`` rows (``[UNK]``, ``<unk>``), so
    that it stays the id's text (MNN's loader keeps the last row of an id)."""
    m, node = tree.model, tj.get("model")
    if not (isinstance(m, t.BPEModel) and isinstance(node, dict) and node.get("type") == "BPE"
            and isinstance(node.get("unk_token"), str) and not node.get("byte_fallback") and not node.get("fuse_unk")
            and not node.get("end_of_word_suffix") and isinstance(node.get("vocab"), dict)):
        return tree
    unk_id = hf_unk_id(node)
    texts = texts_by_id(m.vocab)
    pieces = frozenset(BYTE_PIECES)
    if unk_id not in texts or texts[unk_id] <= BYTE_PIECES[0xF4] or any(row[0] in pieces for row in m.vocab):
        return tree
    rows = sorted([*m.vocab, *((BYTE_PIECES[b], unk_id) for b in sorted(LEAD_BYTES))])
    return replace(tree, model=replace(m, vocab=rows))


WORD_MARK = METASPACE
"""The mark :func:`bpe_continuing_prefix` puts before each word (MNN's Metaspace, which its one-id
print turns into a space as HF's WordPiece decoder spaces a word's first token)."""

_SPACE_FREE = ("BertPreTokenizer", "Whitespace", "WhitespaceSplit")
"""HF pre-tokenizers whose pieces hold no space (so MNN's Metaspace after them only marks each)."""


def _space_free(pre: Any) -> bool:
    if not isinstance(pre, dict):
        return False
    if pre.get("type") == "Sequence":
        kids = pre.get("pretokenizers") or []
        return bool(kids) and _space_free(kids[0])
    return pre.get("type") in _SPACE_FREE


def bpe_continuing_prefix(tree: t.MtokFile, tj: dict) -> t.MtokFile:
    """HF's BPE with a ``continuing_subword_prefix`` (``##``) on MNN's BPE, which has none: each
    word is marked at its start instead (a last pre-tokenizer, Metaspace, puts U+2581 before each
    piece), and the tokens renamed to match -- a word's first piece ``t`` as U+2581 ``t``, a
    continuing ``##x`` as ``x`` -- so that each HF merge, kept by id, joins the renamed texts into
    the renamed result (HF's ``a`` + ``##b`` makes ``ab``: U+2581 ``a`` + ``b``).  The mark has an
    id of its own, merged first with the character after it into that character's first-piece id
    (a character that is only ever a first piece gets a row of a new id for the merge), or with
    HF's unknown id (a word starting with a character no token covers: :func:`bpe_unknown_rows`)
    into the unknown id; its text (last row) is U+2581 U+0001, so that those merges look up rows
    sorting before each id's own text.  MNN's
    one-id print turns U+2581 into a space, as HF's WordPiece decoder spaces a first piece; the
    decoder is Metaspace (HF's clean-up of ``. , ? !`` is lost).

    Only where it holds: HF's decoder is WordPiece with the same prefix, the pre-tokenizer leaves
    no space in a piece (BERT's, Whitespace, WhitespaceSplit first), no byte fallback, every merge's
    right side continuing, the renamed texts distinct.  Bound: text without U+2581."""
    m, node, dec = tree.model, tj.get("model"), tj.get("decoder")
    prefix = node.get("continuing_subword_prefix") if isinstance(node, dict) else None
    if not (isinstance(m, t.BPEModel) and not m.byte_level and not m.byte_fallback and isinstance(prefix, str)
            and prefix and not node.get("end_of_word_suffix") and not node.get("byte_fallback")
            and not node.get("fuse_unk") and isinstance(dec, dict) and dec.get("type") == "WordPiece"
            and dec.get("prefix") == prefix and _space_free(tj.get("pre_tokenizer"))):
        return tree
    old, mark = prefix.encode(), WORD_MARK.encode()
    texts = texts_by_id(m.vocab)
    if not all(texts.get(b, b"").startswith(old) for _, b, _ in m.merges):
        return tree
    added = {a.id for a in tree.added_tokens}
    renamed = {i: tok[len(old):] if tok.startswith(old) and i not in added else mark + tok for i, tok in texts.items()}
    if len(set(renamed.values())) != len(renamed) or any(not v for v in renamed.values()):
        return tree
    by_text = {v: i for i, v in renamed.items()}
    used = set(texts) | added
    mark_id = max(used) + 1
    rows: list[tuple[bytes, int]] = [(v, i) for i, v in renamed.items()] + [(mark, mark_id)]
    firsts: list[tuple[int, int]] = []  # (continuing id of a character, its first-piece id)
    fresh = mark_id + 1
    for i, v in sorted(renamed.items()):
        if not v.startswith(mark) or i in added:
            continue
        char = v[len(mark):]
        if len(char.decode("utf-8", "surrogateescape")) != 1:
            continue
        cont = by_text.get(char)
        if cont is None:  # only ever a first piece: a row of its own for the merge
            rows.append((char, fresh))
            cont, fresh = fresh, fresh + 1
        firsts.append((cont, i))
    # the mark's text (its last row) is mark + \x01, so that its merges look up rows that sort
    # before every token's own text: mark + \x01 + a character for that character's first piece, and
    # mark + \x01 + the unknown token's text for HF's unknown id (a character no token covers, which
    # bpe_unknown_rows gives the unknown id, starting a word)
    link = mark + b"\x01"
    rows.append((link, mark_id))
    char_of = {i: v for v, i in rows}  # a continuing character's text (renamed or a fresh row)
    firsts = [(cont, first) for cont, first in firsts if char_of[cont][:1] > b"\x01"]  # (sorting after link)
    rows += [(link + char_of[cont], first) for cont, first in firsts]
    unk_id = hf_unk_id(node)
    pairs = [(mark_id, cont) for cont, _ in firsts]
    if unk_id in renamed and renamed[unk_id][len(mark):len(mark) + 1] > b"\x01" and (mark_id, unk_id) not in pairs:
        rows.append((link + renamed[unk_id], unk_id))
        pairs.append((mark_id, unk_id))
    if fresh > len(rows) or len({v for v, _ in rows}) != len(rows):
        return tree  # (MNN's loader writes id_to_token[id] into a table of the row count; a text twice:
        # a token of HF's that starts with U+0001 would meet a row of the mark's look-ups)
    k = len(pairs)
    merges = [(a, b, rank) for rank, (a, b) in enumerate(pairs)]
    merges += [(a, b, rank + k) for a, b, rank in m.merges]
    model = replace(m, vocab=sorted(rows), merges=sorted(merges, key=lambda r: (r[0] << 32) | r[1]))
    pre = tree.pre_tokenizer
    meta = t.MetaspacePreTokenizer(WORD_MARK, True)
    kids = list(pre.pretokenizers) if isinstance(pre, t.SequencePreTokenizer) else (
        [] if isinstance(pre, t.NoPreTokenizer) else [pre])
    return replace(tree, model=model, pre_tokenizer=t.SequencePreTokenizer([*kids, meta]),
                   decoder=t.MetaspaceDecoder(WORD_MARK, True))


def _carries_unknown(tree: t.MtokFile) -> bool:
    m = tree.model
    return isinstance(m, t.BPEModel) and unknown_rows_id(m.vocab, m.byte_fallback) is not None


def _marks_words(tree: t.MtokFile) -> bool:
    pre = tree.pre_tokenizer
    return (isinstance(tree.model, t.BPEModel) and isinstance(pre, t.SequencePreTokenizer) and bool(pre.pretokenizers)
            and pre.pretokenizers[-1] == t.MetaspacePreTokenizer(WORD_MARK, True)
            and tree.decoder == t.MetaspaceDecoder(WORD_MARK, True))


CARRIED = {"model.unk_token": ("model.BPE[unk_token]", _carries_unknown),
           "model.continuing_subword_prefix": ("model.BPE[continuing_subword_prefix]", _marks_words)}
"""The exporter's model losses a lever here carries: loss path -> (the key of the decision-table row
that says how, whether a written tree shows the lever applied)."""

"""Semantic checks of a parsed file: what the bytes can hold but MNN's loader or runtime cannot use.

Each :class:`Finding` has a severity (``error``: MNN's loader misbehaves or reads out of bounds;
``warning``: it loads, but tokenization or decoding will be wrong or surprising; ``info``: worth
knowing), the field path and a message.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mtokspec.format import tree as t
from mtokspec.errors import ArgumentTypeError, MtokFormatError
from mtokspec.format.files import tree_of
from mtokspec.format.growth import pattern_refusal

__all__ = ["Finding", "validate", "ERROR", "WARNING", "INFO"]

ERROR, WARNING, INFO = "error", "warning", "info"
_MAX_CP = 0x10FFFF
_I32_MAX = 2**31 - 1  # MNN keeps ids in C++ int


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str
    path: str
    message: str
    code: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message} [{self.code}]"


class _Checker:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, severity: str, path: str, code: str, message: str) -> None:
        self.findings.append(Finding(severity, path, message, code))


def validate(tree_or_bytes: t.TokenizerFile | bytes | bytearray | memoryview | str | os.PathLike[str]
             ) -> list[Finding]:
    """Check a tree (or the bytes of a file, or a file's path, as :func:`mtokspec.load` takes
    them) and return the findings, errors first.

    Bytes that cannot be parsed at all raise :class:`MtokFormatError` (there is no tree to check);
    a path is read as ``load`` reads it (``FileNotFoundError``, a folder refused with what to run).
    """
    tree: t.TokenizerFile = tree_of(tree_or_bytes)
    if not isinstance(tree, (*t.LEGACY_ROOTS, t.MtokFile)):
        raise ArgumentTypeError(f"tree_or_bytes: expected a tokenizer file tree, bytes or a path, "
                                f"got {type(tree_or_bytes).__name__}")
    ck = _Checker()
    if tree is tree_or_bytes:  # (a tree parsed from bytes always builds)
        _buildable(ck, tree)
    if isinstance(tree, t.MtokFile):
        _check_mtok(ck, tree)
    else:
        try:
            _check_txt(ck, tree)
        except _BAD_FIELD as e:
            _section_failed(ck, e, "<root>")
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    return sorted(ck.findings, key=lambda f: order[f.severity])


# what a hand-built tree with a field of the wrong type makes a check raise
_BAD_FIELD = (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError)


def _buildable(ck: _Checker, tree: t.TokenizerFile) -> bool:
    """Whether the codec can write the tree; else its finding (the field's path) is added."""
    from mtokspec.format.files import build

    try:
        build(tree)
        return True
    except MtokFormatError as e:
        ck.add(ERROR, e.path, "bad-field", e.message)
    except Exception as e:  # noqa: BLE001 - a hand-built tree the codec's checks miss
        ck.add(ERROR, "<root>", "bad-field", f"the codec cannot write the tree: {type(e).__name__}: {str(e)[:200]}")
    return False


def _section_failed(ck: _Checker, e: Exception, section: str) -> None:
    """A section whose checks could not run (a field of the wrong type): named unless the codec's
    check already named a field in it."""
    if not any(f.code == "bad-field" and (f.path.startswith(section) or f.path == "<root>") for f in ck.findings):
        ck.add(ERROR, section, "bad-field", f"a field has the wrong type: {type(e).__name__}: {str(e)[:200]}")


def _check_mtok(ck: _Checker, tree: t.MtokFile) -> None:
    def section(path: str, fn: Callable[..., Any], *args: Any, default: Any = None) -> Any:
        try:
            return fn(ck, *args)
        except _BAD_FIELD as e:
            _section_failed(ck, e, path)
            return default

    known = section("model", _check_model, tree.model, default=set())
    added_ids = section("added_tokens", _check_added, tree.added_tokens, known, default=set())
    all_ids = known | added_ids
    section("header", _check_header, tree.header, all_ids)
    section("eos_token", _check_eos, tree)
    section("normalizer", _check_normalizer, tree.normalizer, "normalizer")
    section("pre_tokenizer", _check_pre_tokenizer, tree.pre_tokenizer, "pre_tokenizer")
    section("decoder", _check_decoder, tree.decoder, "decoder")
    section("<root>", _check_tails, tree, all_ids)
    section("<root>", _check_growth, tree)


def _check_growth(ck: _Checker, tree: t.MtokFile) -> None:
    from mtokspec.format.growth import amplifying_findings

    for path, message in amplifying_findings(tree):
        ck.add(WARNING, path, "amplifying-pipeline",
               f"{message}; the runtime refuses such growth past max_expansion (MNN runs out of memory)")


# ---------------------------------------------------------------------------------------------


def _check_header(ck: _Checker, h: t.Header, ids: set[int]) -> None:
    for role in t.HEADER_ROLES:
        for i, v in enumerate(getattr(h, role)):
            if v not in ids:
                ck.add(WARNING, f"header.{role}[{i}]", "header-unknown-id",
                       f"id {v} is neither in the vocab nor an added token")
    if len(set(h.special)) != len(h.special):
        ck.add(INFO, "header.special", "header-duplicate-special",
               "special ids repeat (the reference exporter writes such files; harmless)")
    if not h.stop:
        ck.add(WARNING, "header.stop", "header-no-stop",
               "no stop id: generation on a device never ends at a token (set one: mtokspec set --stop)")


def _check_eos(ck: _Checker, tree: t.MtokFile) -> None:
    eos = tree.eos_token
    if eos is None:
        return
    text = eos.encode("utf-8", "surrogatepass")
    if any(a.content == eos for a in tree.added_tokens) or any(row[0] == text for row in tree.model.vocab):
        return
    what = "is empty" if not eos else f"{eos!r} is neither an added token nor a vocab token"
    ck.add(WARNING, "eos_token", "eos-not-token",
           f"eos_token {what}: chat templates end turns with it and MNN's engine knows no end of text "
           "(set it: mtokspec set --eos)")


def _check_vocab(ck: _Checker, vocab: Sequence[tuple[Any, ...]], path: str) -> set[int]:
    """Rows sorted by token bytes (equal texts may follow each other: MNN's look-up finds the first);
    ids inside the row count.  Rows of one id are aliases: each text looks the id up, and the id
    decodes as its last row's text (MNN's loader writes ``id_to_token[id]`` row after row)."""
    n = len(vocab)
    rows_of: dict[int, list[int]] = {}
    prev = None
    for i, row in enumerate(vocab):
        tok, tid = row[0], row[1]
        if prev is not None and tok < prev:
            ck.add(ERROR, f"{path}[{i}].token", "vocab-order",
                   f"{tok!r} is out of order: MNN's loader binary-searches the vocab sorted by token bytes")
        elif tok == prev:
            ck.add(INFO, f"{path}[{i}].token", "vocab-duplicate",
                   f"{tok!r} repeats: MNN's look-up finds the row before, this id ({tid}) is reached by its id only")
        prev = tok
        if tid >= n:
            ck.add(ERROR, f"{path}[{i}].id", "vocab-id-range",
                   f"id {tid} >= vocab size {n}: MNN's loader writes id_to_token[{tid}] out of bounds")
        rows_of.setdefault(tid, []).append(i)
    for tid, at in rows_of.items():
        if len(at) > 1:
            texts = [vocab[i][0] for i in at]
            shown = ", ".join(map(repr, texts[:3])) + (f" and {len(texts) - 3} more" if len(texts) > 3 else "")
            ck.add(INFO, f"{path}[{at[-1]}].id", "vocab-id-alias",
                   f"id {tid} has {len(at)} rows ({shown}): each looks it up, it decodes as the last ({texts[-1]!r})")
    return set(rows_of)


def _check_model(ck: _Checker, m: t.Model) -> set[int]:
    ids = _check_vocab(ck, m.vocab, "model.vocab")
    n = len(m.vocab)
    if isinstance(m, t.BPEModel):
        prev = -1
        ranks: set[int] = set()
        token_of = {row[1]: row[0] for row in m.vocab}
        tokens = set(token_of.values())
        for i, (a, b, rank) in enumerate(m.merges):
            key = (a << 32) | b
            if key <= prev:
                ck.add(ERROR, f"model.merges[{i}]", "merge-order" if key < prev else "merge-duplicate",
                       f"merge ({a}, {b}) {'repeats' if key == prev else 'is out of order'}: MNN's loader "
                       "binary-searches merges sorted by (left << 32) | right")
            prev = key
            if a >= n or b >= n:
                ck.add(ERROR, f"model.merges[{i}]", "merge-id-range",
                       f"merge ({a}, {b}) names an id >= vocab size {n}")
            left, right = token_of.get(a), token_of.get(b)
            if left is not None and right is not None and left + right not in tokens:
                ck.add(WARNING, f"model.merges[{i}]", "merge-output-missing",
                       f"merge ({a}, {b}) makes {left + right!r}, which is not in the vocab: HF refuses the "
                       "file, and mtokspec's runtime fails when the merge applies")
            if rank in ranks:
                ck.add(ERROR, f"model.merges[{i}].rank", "merge-rank-duplicate", f"rank {rank} used twice")
            ranks.add(rank)
        if m.byte_fallback and n and not any(row[0] == b"<0x00>" for row in m.vocab):
            ck.add(WARNING, "model.byte_fallback", "byte-fallback-tokens",
                   "byte_fallback is set but the vocab has no <0x00> byte token")
    elif isinstance(m, t.WordPieceModel):
        tokens = {row[0] for row in m.vocab}
        if m.unk_token.encode() not in tokens:
            ck.add(WARNING, "model.unk_token", "unk-not-in-vocab",
                   f"unk_token {m.unk_token!r} is not in the vocab")
    elif isinstance(m, t.UnigramModel):
        if n and m.unk_id >= n:
            ck.add(ERROR, "model.unk_id", "unk-id-range", f"unk_id {m.unk_id} >= vocab size {n}")
        for i, row in enumerate(m.vocab):
            if not math.isfinite(row[2]):
                ck.add(WARNING, f"model.vocab[{i}].score", "score-not-finite", f"score {row[2]!r}")
    return ids


def _check_added(ck: _Checker, added: list[t.AddedToken], vocab_ids: set[int]) -> set[int]:
    ids: set[int] = set()
    for i, a in enumerate(added):
        if a.id > _I32_MAX:
            ck.add(ERROR, f"added_tokens[{i}].id", "added-id-range", f"id {a.id} does not fit MNN's int")
        if a.id in ids:
            ck.add(WARNING, f"added_tokens[{i}].id", "added-id-duplicate", f"id {a.id} added twice")
        if not a.content:
            ck.add(WARNING, f"added_tokens[{i}].content", "added-empty", "empty added token never matches")
        ids.add(a.id)
    return ids


def _check_table(ck: _Checker, table: Sequence[tuple[int, bytes]], path: str) -> None:
    prev = -1
    for i, (cp, norm) in enumerate(table):
        if cp <= prev:
            ck.add(ERROR, f"{path}[{i}].codepoint", "norm-order",
                   f"U+{cp:04X} {'repeats' if cp == prev else 'is out of order'}: readers binary-search the table")
        prev = cp
        if cp > _MAX_CP or 0xD800 <= cp <= 0xDFFF:
            ck.add(ERROR, f"{path}[{i}].codepoint", "norm-codepoint", f"{cp:#x} is not a Unicode scalar value")
        try:
            norm.decode("utf-8")
        except UnicodeDecodeError:
            ck.add(ERROR, f"{path}[{i}].normalized", "norm-utf8", f"normal form of U+{cp:04X} is not UTF-8")


def _check_normalizer(ck: _Checker, n: t.Normalizer, path: str) -> None:
    if isinstance(n, t.SequenceNormalizer):
        for i, child in enumerate(n.normalizers):
            if isinstance(child, t.NoNormalizer):
                ck.add(INFO, f"{path}.normalizers[{i}]", "sequence-none",
                       "a None normalizer inside a Sequence (the exporter's stand-in for an unsupported type)")
            _check_normalizer(ck, child, f"{path}.normalizers[{i}]")
    elif isinstance(n, t.TableNormalizer):
        _check_table(ck, n.table, f"{path}.table")
    elif isinstance(n, t.BertNFDNormalizer) and n.nfd_table is not None:
        _check_table(ck, n.nfd_table, f"{path}.nfd_table")
    elif isinstance(n, t.ReplaceNormalizer) and n.pattern == "":
        ck.add(WARNING, f"{path}.pattern", "replace-empty",
               "empty pattern: the reference exporter writes this for a Regex pattern it cannot store")


def _check_pre_tokenizer(ck: _Checker, p: t.PreTokenizer, path: str) -> None:
    if isinstance(p, t.SequencePreTokenizer):
        for i, child in enumerate(p.pretokenizers):
            _check_pre_tokenizer(ck, child, f"{path}.pretokenizers[{i}]")
    elif isinstance(p, t.SplitPreTokenizer):
        if p.behavior > 2:
            ck.add(ERROR, f"{path}.behavior", "split-behavior",
                   f"behaviour {p.behavior} is not 0, 1 or 2 (MNN's loader treats it as Removed)")
        why = pattern_refusal(p.pattern)  # the bounds first: compiling past them takes gigabytes
        if why is not None:
            ck.add(WARNING, f"{path}.pattern", "split-pattern", f"the runtimes refuse this pattern: {why}")
        else:
            try:
                import regex

                regex.compile(p.pattern, regex.VERSION0)
            except Exception as e:  # regex raises its own error types, RecursionError, MemoryError
                ck.add(WARNING, f"{path}.pattern", "split-pattern",
                       f"pattern does not compile: {str(e) or type(e).__name__}")
    elif isinstance(p, t.MetaspacePreTokenizer) and len(p.replacement) != 1:
        ck.add(WARNING, f"{path}.replacement", "metaspace-replacement",
               f"replacement {p.replacement!r} is not one character")


def _check_decoder(ck: _Checker, d: t.Decoder, path: str) -> None:
    if isinstance(d, t.SequenceDecoder):
        for i, child in enumerate(d.decoders):
            _check_decoder(ck, child, f"{path}.decoders[{i}]")
    elif isinstance(d, t.StripDecoder) and len(d.content) != 1:
        ck.add(WARNING, f"{path}.content", "strip-content", f"content {d.content!r} is not one character")


def _check_tails(ck: _Checker, tree: t.MtokFile, ids: set[int]) -> None:
    if tree.flags is not None and tree.flags & ~sum(t.MtokFlags):
        ck.add(WARNING, "flags", "flags-unknown-bits", f"flags {tree.flags:#04x} set bits other than bit 0")
    if tree.extension is not None and tree.extension.magic != t.ExtensionMagic.MNX1:
        ck.add(ERROR, "extension.magic", "extension-magic",
               f"magic {tree.extension.magic:#x} is not MNX1 ({int(t.ExtensionMagic.MNX1):#x}): a patched MNN "
               "ignores the section")
    pp = tree.post_processor
    if pp is None:
        return
    if isinstance(pp, t.LegacyPostProcessor):
        ck.add(INFO, "post_processor", "post-legacy", "older layout (sequence A, then ids)")
        for i, v in enumerate(pp.ids):
            if v not in ids:
                ck.add(WARNING, f"post_processor.ids[{i}]", "post-unknown-id", f"id {v} is not a known token")
        return
    seqs = sum(isinstance(op, t.SequenceOp) for op in pp.ops)
    if pp.ops and seqs != 1:
        ck.add(WARNING, "post_processor.ops", "post-sequence-count",
               f"{seqs} sequence ops; a single-sequence program has exactly one")
    for i, op in enumerate(pp.ops):
        if isinstance(op, t.SpecialTokenOp) and op.token_id not in ids and op.token_id < 2**31:
            ck.add(WARNING, f"post_processor.ops[{i}].token_id", "post-unknown-id",
                   f"id {op.token_id} is not a known token")
    n = len(pp.ops)
    size = seqs + 5 * (n - seqs)
    if n and size == 4 * n:
        ck.add(WARNING, "post_processor", "post-misread-by-mnn",
               "this program's size equals count*4, so MNN's C++ loader reads it as the older layout "
               "(sequence A then raw u32 ids) and inserts wrong ids; mtokspec reads it as written")


# ---------------------------------------------------------------------------------------------
# Legacy tokenizer.txt
# ---------------------------------------------------------------------------------------------

_PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}


def _check_txt(ck: _Checker, tree: t.SentencePieceTxtFile | t.TiktokenTxtFile | t.BertTxtFile | t.HuggingFaceTxtFile) -> None:
    if isinstance(tree, t.SentencePieceTxtFile):
        tokens = [row[0] for row in tree.pieces]
        for i, (_, score, kind) in enumerate(tree.pieces):
            try:
                float(score)
            except ValueError:
                ck.add(ERROR, f"pieces[{i}].score", "score-not-number", f"score {score!r} is not a number")
            if kind not in _PIECE_TYPES:
                ck.add(ERROR, f"pieces[{i}].type", "piece-type", f"piece type {kind} is not 1-6")
    else:
        tokens = list(tree.tokens)
    _check_header(ck, tree.header, set(range(len(tokens))))
    seen: dict[bytes, int] = {}
    for i, tok in enumerate(tokens):
        if tok in seen:
            ck.add(WARNING, f"{'pieces' if isinstance(tree, t.SentencePieceTxtFile) else 'tokens'}[{i}]",
                   "token-duplicate", f"{tok!r} repeats entry {seen[tok]}: MNN's loader keeps one of them")
        else:
            seen[tok] = i
    if isinstance(tree, t.HuggingFaceTxtFile):
        for i, line in enumerate(tree.merges):
            if i == 0 and line.startswith(b"#version"):
                continue
            parts = line.split(b" ")
            if len(parts) != 2:
                ck.add(ERROR, f"merges[{i}]", "merge-line", f"{line[:40]!r} is not 'left right'")
                continue
            missing = [p for p in parts if p not in seen]
            if missing or (parts[0] + parts[1]) not in seen:
                ck.add(WARNING, f"merges[{i}]", "merge-unknown-token",
                       f"merge {line[:40]!r} names or makes a token that is not in the vocab")

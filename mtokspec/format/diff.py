"""What differs between two tokenizer files, section by section, by meaning rather than by bytes.

:func:`diff` compares two trees and returns one :class:`SectionDiff` per section that differs: the
header's ids per role (with their tokens), the normalizer, pre-tokenizer, decoder and
post-processor trees, the model's settings, its vocabulary by token (added, removed, renumbered)
and its merges by token pair, the added tokens by text, the chat template as a unified diff, the
eos/bos texts and the flags.  Legacy ``tokenizer.txt`` files compare their header and their token
lines.  An empty list means the two files mean the same thing (they may still differ in bytes: the
header's trailing space, say, which :func:`diff` reports under ``header`` too).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from mtokspec.format import tree as t
from mtokspec.format.token_names import token_text, tokens_by_id

__all__ = ["SectionDiff", "diff", "format_text", "to_json"]

#: how many examples of each kind of change a section keeps (the counts are always whole)
EXAMPLES = 20


@dataclass
class SectionDiff:
    """One differing section: ``section`` (a tree field name), one-line ``changes`` a person reads,
    and ``data`` (plain JSON-able detail: counts, the changed items, up to ``EXAMPLES`` of each);
    a list of changes cut at ``EXAMPLES`` ends with "... and N more" (``data`` keeps the counts)."""

    section: str
    changes: list[str]
    data: dict[str, Any] = field(default_factory=dict)


def _capped(items: list[Any], show: Any = str, limit: int = EXAMPLES) -> list[str]:
    """The first ``limit`` items, each as ``show`` gives it, then "... and N more" for the rest."""
    out = [show(x) for x in items[:limit]]
    if len(items) > limit:
        out.append(f"... and {len(items) - limit:,} more")
    return out


def _label(i: int, names: dict[int, bytes]) -> str:
    text = token_text(names.get(i))
    return f"{i} {'(not a token)' if text is None else repr(text)}"


def _header(a: t.TokenizerFile, b: t.TokenizerFile, na: dict[int, bytes], nb: dict[int, bytes]) -> SectionDiff | None:
    ha, hb = a.header, b.header
    changes: list[str] = []
    data: dict[str, Any] = {}
    for role in t.HEADER_ROLES:
        ra, rb = getattr(ha, role), getattr(hb, role)
        if ra == rb:
            continue
        added = [i for i in rb if i not in ra]
        removed = [i for i in ra if i not in rb]
        entry = {"added": [{"id": i, "token": token_text(nb.get(i))} for i in added],
                 "removed": [{"id": i, "token": token_text(na.get(i))} for i in removed],
                 "a": ra, "b": rb}
        data[role] = entry
        if added:
            changes.append(f"{role} + " + ", ".join(_capped(added, lambda i: _label(i, nb))))
        if removed:
            changes.append(f"{role} - " + ", ".join(_capped(removed, lambda i: _label(i, na))))
        if not added and not removed:
            changes.append(f"{role}: the same ids in another order or repeated: {ra} -> {rb}")
    if ha.trailing_space != hb.trailing_space:
        data["trailing_space"] = {"a": ha.trailing_space, "b": hb.trailing_space}
        changes.append(f"line 3 ends with a space: {ha.trailing_space} -> {hb.trailing_space}")
    return SectionDiff("header", changes, data) if changes else None


def _plain_lines(node: Any) -> list[str]:
    return json.dumps(t.to_dict(node) if node is not None else None, indent=1, ensure_ascii=False,
                      default=str).splitlines()


def _component(name: str, na: Any, nb: Any) -> SectionDiff | None:
    if na == nb:
        return None
    from mtokspec.format.inspect import describe

    da = "absent" if na is None else describe(na)
    db = "absent" if nb is None else describe(nb)
    lines = list(difflib.unified_diff(_plain_lines(na), _plain_lines(nb), "a", "b", lineterm="", n=1))[2:]
    changes = [f"{da} -> {db}"] if da != db else [f"{da}, changed inside:"]
    if da == db:
        changes += _capped(lines, limit=EXAMPLES * 2)
    return SectionDiff(name, changes, {"a": da, "b": db, "unified": lines})


def _settings(model: Any) -> dict[str, Any]:
    return {f: getattr(model, f) for f, d in t.SCHEMA[type(model).__name__] if d[0] not in ("list",)}


def _vocab(a_rows: dict[bytes, int], b_rows: dict[bytes, int], what: str) -> SectionDiff | None:
    added = [(k, i) for k, i in b_rows.items() if k not in a_rows]
    removed = [(k, i) for k, i in a_rows.items() if k not in b_rows]
    renumbered = [(k, a_rows[k], i) for k, i in b_rows.items() if k in a_rows and a_rows[k] != i]
    if not (added or removed or renumbered):
        return None
    changes = [f"{len(a_rows):,} -> {len(b_rows):,} {what}s: {len(added):,} added, {len(removed):,} removed, "
               f"{len(renumbered):,} renumbered"]
    changes += _capped(sorted(added, key=lambda r: r[1]), lambda r: f"+ {r[1]} {token_text(r[0])!r}")
    changes += _capped(sorted(removed, key=lambda r: r[1]), lambda r: f"- {r[1]} {token_text(r[0])!r}")
    changes += _capped(sorted(renumbered, key=lambda r: r[1]), lambda r: f"~ {token_text(r[0])!r} {r[1]} -> {r[2]}")
    data = {"count": {"a": len(a_rows), "b": len(b_rows)},
            "added": [{"id": i, "token": token_text(k)} for k, i in added[:EXAMPLES]], "added_count": len(added),
            "removed": [{"id": i, "token": token_text(k)} for k, i in removed[:EXAMPLES]],
            "removed_count": len(removed),
            "renumbered": [{"token": token_text(k), "a": x, "b": y} for k, x, y in renumbered[:EXAMPLES]],
            "renumbered_count": len(renumbered)}
    return SectionDiff("vocab", changes, data)


def _merges(a: Any, b: Any, na: dict[int, bytes], nb: dict[int, bytes]) -> SectionDiff | None:
    def pairs(model: Any, names: dict[int, bytes]) -> dict[tuple[bytes | None, bytes | None], int]:
        return {(names.get(m[0]), names.get(m[1])): m[2] for m in model.merges}

    pa, pb = pairs(a, na), pairs(b, nb)
    if pa == pb:
        return None
    added = [p for p in pb if p not in pa]
    removed = [p for p in pa if p not in pb]
    reranked = [p for p in pb if p in pa and pa[p] != pb[p]]

    def show(p: tuple[bytes | None, ...]) -> str:
        return " ".join(repr(token_text(x)) for x in p)

    changes = [f"{len(pa):,} -> {len(pb):,} merges: {len(added):,} added, {len(removed):,} removed, "
               f"{len(reranked):,} with another rank"]
    changes += _capped(added, lambda p: f"+ {show(p)} (rank {pb[p]})")
    changes += _capped(removed, lambda p: f"- {show(p)} (rank {pa[p]})")
    changes += _capped(reranked, lambda p: f"~ {show(p)} rank {pa[p]} -> {pb[p]}")
    data = {"count": {"a": len(pa), "b": len(pb)}, "added_count": len(added), "removed_count": len(removed),
            "reranked_count": len(reranked),
            "added": [[token_text(x) for x in p] for p in added[:EXAMPLES]],
            "removed": [[token_text(x) for x in p] for p in removed[:EXAMPLES]]}
    return SectionDiff("merges", changes, data)


def _added_tokens(a: list[t.AddedToken], b: list[t.AddedToken]) -> SectionDiff | None:
    ka = {x.content: x for x in a}
    kb = {x.content: x for x in b}
    if ka == kb and len(a) == len(b):
        return None
    rows: list[dict[str, Any]] = []
    kinds: dict[str, list[str]] = {"added": [], "changed": [], "removed": []}

    def flags(x: t.AddedToken) -> str:
        return ", ".join(f for f in ("special", "lstrip", "rstrip") if getattr(x, f)) or "plain"

    for content, x in kb.items():
        if content not in ka:
            kinds["added"].append(f"+ {x.id} {content!r} ({flags(x)})")
            rows.append({"change": "added", "token": content, "id": x.id})
        elif ka[content] != x:
            y = ka[content]
            kinds["changed"].append(f"~ {content!r}: {y.id} ({flags(y)}) -> {x.id} ({flags(x)})")
            rows.append({"change": "changed", "token": content, "a": t.to_dict(y), "b": t.to_dict(x)})
    for content, y in ka.items():
        if content not in kb:
            kinds["removed"].append(f"- {y.id} {content!r} ({flags(y)})")
            rows.append({"change": "removed", "token": content, "id": y.id})
    changes = [line for lines in kinds.values() for line in _capped(lines)]
    if not changes:
        changes.append(f"the same tokens, {len(a)} -> {len(b)} entries (repeated or reordered)")
    return SectionDiff("added_tokens", changes, {"changes": rows})


def _text(name: str, va: str | None, vb: str | None) -> SectionDiff | None:
    if va == vb:
        return None
    if name == "chat_template" and va and vb:
        lines = list(difflib.unified_diff(va.splitlines(), vb.splitlines(), "a", "b", lineterm=""))
        return SectionDiff(name, lines, {"a_chars": len(va), "b_chars": len(vb), "unified": lines})
    def show(v: str | None) -> str:
        return "absent" if v is None else (f"{len(v):,} characters" if name == "chat_template" else repr(v))

    return SectionDiff(name, [f"{show(va)} -> {show(vb)}"], {"a": va, "b": vb})


def _flags(fa: int | None, fb: int | None) -> SectionDiff | None:
    if fa == fb:
        return None

    def names(f: int | None) -> str:
        if f is None:
            return "absent"
        on = [flag.name for flag in t.MtokFlags if f & flag]
        return f"{f:#04x} ({', '.join(n for n in on if n) or 'none set'})"

    return SectionDiff("flags", [f"{names(fa)} -> {names(fb)}"], {"a": fa, "b": fb})


def _rows_by_token(tree: t.TokenizerFile) -> dict[bytes, int]:
    if isinstance(tree, t.MtokFile):
        return {row[0]: row[1] for row in tree.model.vocab}
    tokens = [p[0] for p in tree.pieces] if isinstance(tree, t.SentencePieceTxtFile) else list(tree.tokens)
    out: dict[bytes, int] = {}
    for i, token in enumerate(tokens):
        out.setdefault(token, i)
    return out


def diff(a: t.TokenizerFile, b: t.TokenizerFile) -> list[SectionDiff]:
    """The sections in which ``b`` differs from ``a``, in file order (empty: the same meaning)."""
    out: list[SectionDiff | None] = []
    if type(a) is not type(b):
        return [SectionDiff("format", [f"{t.format_key(a)} -> {t.format_key(b)}"],
                            {"a": t.format_key(a), "b": t.format_key(b)})]
    na, nb = tokens_by_id(a), tokens_by_id(b)
    out.append(_header(a, b, na, nb))
    if isinstance(a, t.MtokFile) and isinstance(b, t.MtokFile):
        out.append(_component("normalizer", a.normalizer, b.normalizer))
        out.append(_component("pre_tokenizer", a.pre_tokenizer, b.pre_tokenizer))
        ma, mb = a.model, b.model
        if type(ma) is not type(mb) or _settings(ma) != _settings(mb):
            from mtokspec.format.inspect import describe

            out.append(SectionDiff("model", [f"{describe(ma)} -> {describe(mb)}"],
                                   {"a": {"type": type(ma).__name__, **_settings(ma)},
                                    "b": {"type": type(mb).__name__, **_settings(mb)}}))
        out.append(_vocab(_rows_by_token(a), _rows_by_token(b), "token"))
        if isinstance(ma, t.UnigramModel) and isinstance(mb, t.UnigramModel):
            sa = {row[0]: row[2] for row in ma.vocab}
            moved = [k for k, s in ((row[0], row[2]) for row in mb.vocab) if k in sa and sa[k] != s]
            if moved:
                out.append(SectionDiff("scores", [f"{len(moved):,} pieces score differently"] + _capped(
                    moved, lambda k: f"~ {token_text(k)!r}"), {"count": len(moved)}))
        if isinstance(ma, t.BPEModel) and isinstance(mb, t.BPEModel):
            out.append(_merges(ma, mb, na, nb))
        out.append(_component("decoder", a.decoder, b.decoder))
        out.append(_added_tokens(a.added_tokens, b.added_tokens))
        out.append(_text("chat_template", a.chat_template, b.chat_template))
        out.append(_text("eos_token", a.eos_token, b.eos_token))
        out.append(_flags(a.flags, b.flags))
        out.append(_text("bos_token", a.bos_token, b.bos_token))
        out.append(_component("post_processor", a.post_processor, b.post_processor))
    else:
        out.append(_vocab(_rows_by_token(a), _rows_by_token(b), "token"))
        if isinstance(a, t.SentencePieceTxtFile) and isinstance(b, t.SentencePieceTxtFile):
            rescored = [i for i, (x, y) in enumerate(zip(a.pieces, b.pieces)) if x[1:] != y[1:]]
            if rescored:
                out.append(SectionDiff("pieces", [f"{len(rescored):,} pieces with another score or type"] + _capped(
                    rescored, lambda i: f"~ {i} {token_text(a.pieces[i][0])!r}: {a.pieces[i][1:]} -> {b.pieces[i][1:]}"),
                    {"count": len(rescored)}))
        if isinstance(a, t.HuggingFaceTxtFile) and isinstance(b, t.HuggingFaceTxtFile) and a.merges != b.merges:
            lines_a, lines_b = set(a.merges), set(b.merges)
            new, gone = len(lines_b - lines_a), len(lines_a - lines_b)
            out.append(SectionDiff("merges", [
                f"{len(a.merges):,} -> {len(b.merges):,} merge lines: {new:,} added, {gone:,} removed"
                + ("" if new or gone else ", reordered")], {"added_count": new, "removed_count": gone}))
    return [d for d in out if d is not None]


def format_text(diffs: list[SectionDiff], name_a: str = "a", name_b: str = "b") -> str:
    """The report a person reads: one block per section, its changes indented."""
    if not diffs:
        return f"{name_a} and {name_b}: the same tokenizer\n"
    lines = [f"--- {name_a}", f"+++ {name_b}"]
    for d in diffs:
        lines.append(f"{d.section}:")
        lines.extend("  " + c for c in d.changes)
    return "\n".join(lines) + "\n"


def to_json(diffs: list[SectionDiff]) -> dict[str, Any]:
    """Plain data: ``{"same": bool, "sections": {name: {"changes": [...], **data}}}``."""
    return {"same": not diffs, "sections": {d.section: {"changes": d.changes, **d.data} for d in diffs}}


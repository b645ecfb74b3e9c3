"""Streaming decode with HF semantics, and the hold table that describes it per id.

``HfTokenizer.stream()`` prints, as ids arrive, exactly what HF's ``decode`` of the ids so far adds
(``decode(ids[:n])`` past ``decode(ids[:n-1])``), holding back what a later id can still change: an
incomplete UTF-8 character, a ``<0xHH>`` byte-fallback run, trailing characters a ``Strip`` removes at
the end.  ``flush()`` prints the rest, so the joined output is ``decode(ids)``.

:func:`compile_hold_table` turns the file's decoder into a per-id table (:class:`HoldTable`, JSON by
:meth:`HoldTable.to_json`) and :class:`TableStream` is the loop over it, reading only what the JSON
holds: the loop an app writes in C++/Kotlin/Swift.  A decoder the table cannot describe (a stage
that acts across tokens, e.g. a multi-character ``Replace`` after ``Fuse``) raises
:class:`~mtokspec.errors.TokenizerError` there, and ``stream()`` decodes the prefix at each id
instead (:class:`~mtokspec.runtime.shared.stream.PrefixStream`).  Design: ``docs/design/streaming.md``.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Union

from mtokspec.args import token_id
from mtokspec.errors import TokenizerError
from mtokspec.runtime.hf import decoders as d
from mtokspec.runtime.hf.added_tokens import AddedVocabulary
from mtokspec.runtime.hf.pre_tokenizers import UNICODE_TO_BYTES
from mtokspec.runtime.shared.stream import PrefixStream

__all__ = ["HOLD_TABLE_FORMAT", "HOLD_TABLE_VERSION", "HOLD_REASONS", "HoldTable", "TableStream",
           "compile_hold_table", "stream"]

HOLD_TABLE_FORMAT = "mtokspec-hold-table"
HOLD_TABLE_VERSION = 1



class _Tokenizer(Protocol):
    """What this module reads of a :class:`~mtokspec.runtime.hf.HfTokenizer` (named here: the
    tokenizer imports this module, never the other way)."""

    @property
    def decoder(self) -> d.Decoder: ...
    @property
    def model(self) -> Any: ...
    @property
    def added(self) -> AddedVocabulary: ...
    @property
    def _special_set(self) -> frozenset[int]: ...
    def _tokens(self, ids: list[int], skip_special_tokens: bool) -> list[str]: ...
    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str: ...
    def hold_table(self) -> HoldTable: ...


Piece = Union[bytes, int]
"""What one id contributes: bytes, or (an int 0-255) one byte of a ``<0xHH>`` byte-fallback run."""

ALGORITHM = [
    "State: first = true; run = [] (byte-fallback bytes); a UTF-8 decoder (utf8 'bytes'); lead = strip.start; "
    "held = '' (text).",
    "step(id): e = tokens[id]; if e is missing, or skip_special_tokens and e.special: print nothing. "
    "piece = e.first if first and 'first' in e else e.next; first = false.",
    "If piece is an int (a byte-fallback byte): append it to run, print nothing.",
    "Else text = close_run() + assemble(hex-decoded piece); print emit(text).",
    "close_run(): if run is empty: ''. If run's bytes are valid UTF-8 as a whole: their text, else one "
    "U+FFFD per byte of run. Then run = [].",
    "assemble(b): utf8 'text': b is complete UTF-8, its text. utf8 'bytes': feed b to an incremental UTF-8 "
    "decoder that replaces each maximal invalid subpart with one U+FFFD (Unicode's recommended practice, "
    "as Rust's from_utf8_lossy and Python's 'replace') and keeps an incomplete character pending.",
    "emit(text): with strip (char c): while lead > 0 and text starts with c: drop it, lead -= 1; if text is "
    "still non-empty: lead = 0. s = held + text; k = min(strip.stop, the number of c ending s); "
    "held = the last k characters of s; return s without them. Without strip: return text.",
    "flush(): text = close_run() + the decoder's pending bytes as U+FFFD (finish); out = emit(text); drop held; "
    "return out.",
    "Joined, the printed text is HF tokenizers' decode(ids, skip_special_tokens); after each id it is the "
    "part of decode(ids so far) that no later id can change.",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One id: its piece after the first token, its piece as the first one, whether it is special."""

    next: Piece
    first: Piece
    special: bool


@dataclass(frozen=True, slots=True)
class HoldTable:
    """The per-id table of a decoder (see :data:`ALGORITHM`): ``utf8`` is ``"text"`` or ``"bytes"``
    (byte-level: pieces are raw bytes assembled as UTF-8), ``strip`` ``(char, start, stop)`` or None."""

    utf8: str
    strip: tuple[str, int, int] | None
    entries: dict[int, Entry]

    def to_json(self) -> dict[str, Any]:
        """The table as plain JSON data, with the loop it drives in its header (``algorithm``)."""
        tokens: list[dict[str, Any]] = []
        reasons: dict[str, int] = {}
        for i in sorted(self.entries):
            e = self.entries[i]
            row: dict[str, Any] = {"id": i, "next": _piece_json(e.next)}
            if e.first != e.next:
                row["first"] = _piece_json(e.first)
            if e.special:
                row["special"] = True
            hold = self.hold_reasons(e)
            if hold:
                row["hold"] = hold
                for r in hold:
                    reasons[r] = reasons.get(r, 0) + 1
            tokens.append(row)
        return {
            "format": HOLD_TABLE_FORMAT,
            "version": HOLD_TABLE_VERSION,
            "semantics": "hf",
            "algorithm": ALGORITHM,
            "fields": {
                "format, version": f"{HOLD_TABLE_FORMAT}, {HOLD_TABLE_VERSION}: a reader refuses any other",
                "semantics": "hf: the loop prints what Hugging Face tokenizers' decode prints",
                "hold_counts": "how many ids have each hold reason",
                "utf8": "'text': pieces are UTF-8 text; 'bytes': pieces are raw bytes of a byte-level "
                        "vocabulary, assembled as UTF-8 across ids",
                "strip": "null, or {char, start, stop}: at most start leading and stop trailing char are "
                         "removed from the whole text (HF Strip after Fuse)",
                "tokens[].next": "hex of the bytes the id adds, or an int 0-255: a <0xHH> byte-fallback byte",
                "tokens[].first": "the same when the id is the first one decoded (absent: as next)",
                "tokens[].special": "true: skipped when skip_special_tokens",
                "tokens[].hold": "why the loop may buffer this id (informational): "
                                 + "; ".join(f"{k}: {v}" for k, v in HOLD_REASONS.items()),
            },
            "utf8": self.utf8,
            "strip": None if self.strip is None else
            {"char": self.strip[0], "start": self.strip[1], "stop": self.strip[2]},
            "hold_counts": dict(sorted(reasons.items())),
            "tokens": tokens,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "HoldTable":
        """The table back from :meth:`to_json`'s data (what an app reads: nothing else is needed)."""
        if not isinstance(doc, dict) or doc.get("format") != HOLD_TABLE_FORMAT or doc.get("version") != HOLD_TABLE_VERSION:
            raise TokenizerError(f"not a {HOLD_TABLE_FORMAT} version {HOLD_TABLE_VERSION} document")
        try:
            strip = doc["strip"]
            entries = {}
            for row in doc["tokens"]:
                nxt = _piece_from_json(row["next"])
                entries[int(row["id"])] = Entry(nxt, _piece_from_json(row["first"]) if "first" in row else nxt,
                                                bool(row.get("special", False)))
            utf8 = doc["utf8"]
            if utf8 not in ("text", "bytes"):
                raise ValueError(f"utf8 {utf8!r}")
            rule = None if strip is None else (str(strip["char"]), int(strip["start"]), int(strip["stop"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise TokenizerError(f"hold table: malformed document ({type(e).__name__}: {e})") from e
        return cls(utf8, rule, entries)

    def hold_reasons(self, e: Entry) -> list[str]:
        """Why the loop may buffer ``e`` (the keys of :data:`HOLD_REASONS`)."""
        out = []
        if isinstance(e.next, int) or isinstance(e.first, int):
            out.append("byte-fallback")
        if self.utf8 == "bytes" and any(isinstance(p, bytes) and not _complete_utf8(p) for p in (e.next, e.first)):
            out.append("incomplete-utf8")
        if e.first != e.next:
            out.append("first-token")
        if self.strip is not None:
            c = self.strip[0].encode("utf-8")
            if self.strip[2] and any(isinstance(p, bytes) and p.endswith(c) for p in (e.next, e.first)):
                out.append("strip-trailing")
            if self.strip[1] and any(isinstance(p, bytes) and p.startswith(c) for p in (e.next, e.first)):
                out.append("strip-leading")
        if e.special:
            out.append("special")
        return out


HOLD_REASONS = {
    "byte-fallback": "a <0xHH> byte: held until the run of such bytes ends (the run is one text, or one "
                     "U+FFFD per byte when it is not valid UTF-8 as a whole)",
    "incomplete-utf8": "its bytes are not whole UTF-8 characters: held until the character completes",
    "first-token": "its text differs when it is the first id decoded (Metaspace drops the replacement "
                   "character, WordPiece keeps ## and adds no space)",
    "strip-trailing": "it ends with the strip character: held until more text follows, dropped at the end",
    "strip-leading": "it starts with the strip character: dropped at the start of the text",
    "special": "a special token: printed only without skip_special_tokens",
}


def _piece_json(p: Piece) -> str | int:
    return p if isinstance(p, int) else p.hex()


def _piece_from_json(v: Any) -> Piece:
    if isinstance(v, bool):
        raise TokenizerError("hold table: a piece is a hex string or an int 0-255")
    if isinstance(v, int):
        if not 0 <= v < 256:
            raise TokenizerError(f"hold table: byte {v} out of range")
        return v
    return bytes.fromhex(v)


def _complete_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# --- compiling a decoder into a table ------------------------------------------------------------

_PER_TOKEN = (d.Replace, d.Strip, d.Metaspace, d.WordPiece)


def _flat(decoder: d.Decoder) -> list[d.Decoder]:
    if isinstance(decoder, d.Sequence):
        return [x for child in decoder.decoders for x in _flat(child)]
    return [decoder]


@dataclass(slots=True)
class _Plan:
    token_stages: list[d.Decoder]
    byte_fallback: bool
    utf8: str
    strip: tuple[str, int, int] | None


def _plan(decoder: d.Decoder) -> _Plan:
    """The decoder as per-token stages, byte fallback, byte-level assembly and one whole-text strip,
    or TokenizerError saying which stage acts across tokens."""
    plan = _Plan([], False, "text", None)
    whole = False  # after Fuse or ByteLevel: one token, the whole text
    for stage in _flat(decoder):
        name = type(stage).__name__
        if not whole:
            if isinstance(stage, _PER_TOKEN):
                if plan.byte_fallback:
                    raise TokenizerError(f"hold table: {name} after ByteFallback acts on a byte run's text")
                plan.token_stages.append(stage)
            elif isinstance(stage, d.ByteFallback):
                if plan.byte_fallback:
                    raise TokenizerError("hold table: ByteFallback twice reads a byte run's text again")
                plan.byte_fallback = True
            elif isinstance(stage, d.Fuse):
                whole = True
            elif isinstance(stage, d.ByteLevel):
                if plan.byte_fallback:
                    raise TokenizerError("hold table: ByteLevel after ByteFallback maps a byte run's text")
                plan.utf8 = "bytes"
                whole = True
            else:
                raise TokenizerError(f"hold table: unknown decoder stage {name}")
        elif isinstance(stage, d.Fuse):
            continue
        elif isinstance(stage, d.Strip):
            if len(stage.content) != 1 or not (stage.start or stage.stop):
                continue  # HF compares one character: any other content strips nothing
            if plan.strip is not None:
                raise TokenizerError("hold table: two Strip stages on the whole text")
            plan.strip = (stage.content, stage.start, stage.stop)
        elif isinstance(stage, d.WordPiece) and not stage.cleanup:
            continue  # the whole text is the first token: nothing to change
        else:
            raise TokenizerError(f"hold table: {name} on the whole text (after Fuse or ByteLevel) acts "
                                 f"across tokens")
    return plan


def _run_token_stages(stages: list[d.Decoder], tokens: list[str]) -> list[str]:
    for stage in stages:
        tokens = stage.decode_chain(tokens)
    return tokens


def _assemble(plan: _Plan, piece: str) -> Piece:
    if plan.byte_fallback:
        b = d._byte_token(piece)
        if b is not None:
            return b
    if plan.utf8 == "bytes":
        m = UNICODE_TO_BYTES
        try:
            return bytes([m[c] for c in piece])
        except KeyError:
            pass
    return piece.encode("utf-8", "surrogatepass")


def compile_hold_table(tok: _Tokenizer) -> HoldTable:
    """The hold table of ``tok``'s decoder and vocabulary (TokenizerError when a stage acts across
    tokens, so that no per-id table describes it)."""
    plan = _plan(tok.decoder)
    entries: dict[int, Entry] = {}
    model = tok.model
    ids = set(model.vocab.values()) | set(tok.added.by_id)
    by_id = tok.added.by_id
    special_contents = tok.added.special_contents
    special_ids = tok._special_set
    stages = plan.token_stages
    for i in sorted(ids):
        text = by_id.get(i)
        if text is None:
            text = model.id_to_token(i)
            if text is None:
                continue
        if stages:
            first = _run_token_stages(stages, [text])[0]
            nxt = _run_token_stages(stages, ["x", text])[1]
        else:
            first = nxt = text
        entries[i] = Entry(_assemble(plan, nxt), _assemble(plan, first),
                           text in special_contents or i in special_ids)
    return HoldTable(plan.utf8, plan.strip, entries)


# --- the loop over a table -----------------------------------------------------------------------

class TableStream:
    """The loop of :data:`ALGORITHM` over a :class:`HoldTable`: ``step(id)`` returns the new text
    ("" while it holds), ``flush()`` the rest; joined they are HF's ``decode(ids)``."""

    __slots__ = ("table", "skip_special_tokens", "_first", "_run", "_utf8", "_lead", "_held")

    def __init__(self, table: HoldTable, skip_special_tokens: bool = False):
        self.table = table
        self.skip_special_tokens = bool(skip_special_tokens)
        self._first = True
        self._run = bytearray()
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace") if table.utf8 == "bytes" else None
        self._lead = table.strip[1] if table.strip else 0
        self._held = ""

    def step(self, token_id_: int) -> str:
        e = self.table.entries.get(token_id("token_id", token_id_))
        if e is None or (e.special and self.skip_special_tokens):
            return ""
        piece = e.first if self._first else e.next
        self._first = False
        if isinstance(piece, int):
            self._run.append(piece)
            return ""
        utf8 = self._utf8
        text = self._close_run() + (utf8.decode(piece) if utf8 is not None
                                    else piece.decode("utf-8", "surrogatepass"))
        return self._emit(text)

    def flush(self) -> str:
        """The text still held (a byte run, an incomplete character as U+FFFD); the trailing strip
        characters are dropped, as HF's decode of the whole sequence drops them."""
        text = self._close_run()
        if self._utf8 is not None:
            text += self._utf8.decode(b"", final=True)
        out = self._emit(text)
        self._held = ""
        return out

    def _close_run(self) -> str:
        run = self._run
        if not run:
            return ""
        try:
            text = run.decode("utf-8")
        except UnicodeDecodeError:
            text = "\ufffd" * len(run)
        self._run = bytearray()
        return text

    def _emit(self, text: str) -> str:
        strip = self.table.strip
        if strip is None:
            return text
        c, _, stop = strip
        if self._lead:
            k = 0
            while k < self._lead and k < len(text) and text[k] == c:
                k += 1
            text = text[k:]
            self._lead = 0 if text else self._lead - k
        s = self._held + text
        k = 0
        while k < stop and k < len(s) and s[len(s) - 1 - k] == c:
            k += 1
        self._held = s[len(s) - k:] if k else ""
        return s[:len(s) - k] if k else s


def _hf_stable_end(tok: _Tokenizer, skip: bool, byte_fallback: bool) -> Callable[[list[int], str], int]:
    def stable_end(ids: list[int], text: str) -> int:
        end = len(text)
        if byte_fallback:  # a trailing byte-fallback run is not final: decode what precedes it
            tokens = tok._tokens(ids, skip)
            k = len(tokens)
            while k and d._byte_token(tokens[k - 1]) is not None:
                k -= 1
            if k < len(tokens):
                end = min(end, len(tok.decoder.decode(tokens[:k])) if k else 0)
        while end and text[end - 1] == "\ufffd":  # an incomplete character (or a real U+FFFD: held)
            end -= 1
        return end
    return stable_end


def _nothing_final(ids: list[int], text: str) -> int:
    return 0


def stream(tok: _Tokenizer, skip_special_tokens: bool = False) -> TableStream | PrefixStream:
    """The streaming decoder of ``tok`` (see the module doc)."""
    try:
        table = tok.hold_table()
    except TokenizerError:
        flat = _flat(tok.decoder)
        skip = bool(skip_special_tokens)
        stable = (_nothing_final if _acts_across(flat) else
                  _hf_stable_end(tok, skip, any(isinstance(x, d.ByteFallback) for x in flat)))
        return PrefixStream(lambda ids: tok.decode(ids, skip), stable)
    return TableStream(table, skip_special_tokens)


def _acts_across(flat: list[d.Decoder]) -> bool:
    """A stage after Fuse/ByteLevel that can change text across token boundaries."""
    whole = False
    for stage in flat:
        if whole and (isinstance(stage, d.Replace) and len(stage.pattern) != 1
                      or isinstance(stage, d.WordPiece) and stage.cleanup
                      or isinstance(stage, (d.ByteFallback, d.ByteLevel, d.Metaspace))):
            return True
        if isinstance(stage, (d.Fuse, d.ByteLevel)):
            whole = True
    return False

"""A tokenizer file's fingerprint: a short hash of its structure and of its behaviour.

    fp = mtokspec.fingerprint("tokenizer.mtok")
    fp.behaviour            # 16 hex digits: equal for files that answer every probe alike
    fp.structure, fp.hf, fp.mnn, fp.chat

The behaviour hashes are over the answers to one fixed, versioned probe set (:data:`PROBE_SET`):
the probe texts (:data:`~mtokspec.convert.mnn_target.reference.BASE_TEXTS` and seeded random texts of
its pieces, and :data:`SWITCH_TEXTS`) encoded with and without special tokens and decoded back;
every id of the vocabulary decoded alone, its token text and its text encoded again, a byte-level
token that is part of a character also inside a whole character (so one changed vocabulary row,
merge or added token shows); seeded runs of ids decoded together; the header's roles; and the chat
template rendered on fixed conversations at a fixed clock.
``hf`` and ``mnn`` run each semantics, ``chat`` both renderers (transformers' and MNN's engine).
A refusal is an answer too (its error class).  ``structure`` hashes the file's canonical bytes
(``build(parse(data))``).  Design and the contrast with llama.cpp's ``chkhsh``:
``docs/design/fingerprint.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Iterator

import regex

from mtokspec.errors import ArgumentTypeError, Error
from mtokspec.format import build
from mtokspec.format import tree as t
from mtokspec.format.files import tree_of
from mtokspec.names import CURRENT, Semantics

__all__ = ["PROBE_SET", "PROBE_SET_DIGEST", "probe_digest", "Fingerprint", "fingerprint", "probe_texts", "id_sequences", "completed"]

PROBE_SET = "mtokspec-probes/1"
"""The probe set's name and version: a change to any probe (texts, conversations, what is asked)
is a new version, and fingerprints of different versions are not compared."""

PROBE_SET_DIGEST = "29e284c4b555a05087a343b65977b8d5be9301458bd6cf8961c1a65fe5bc203e"
"""SHA-256 of this version's texts, conversations and clock (:func:`probe_digest`): the texts are
borrowed from :mod:`mtokspec.convert.mnn_target.reference`, and a test fails when they change
without a new :data:`PROBE_SET`."""

_RANDOM_TEXTS = 256
_RANDOM_SEED = 34
_ID_SEQUENCES = 256

SWITCH_TEXTS: tuple[str, ...] = (
    "a 's b n't c 'm d 've e 're f ' g . h , i ? j ! k do not",
    " <0x41> ## \u2581x Ġx <unk> [UNK] <s> </s> <pad> <|endoftext|>",
)
"""Texts for the switches no other probe text reaches: the clean-up replacements (a flag MNN
applies), spellings tokenizers give meaning to."""

CONVERSATIONS: tuple[tuple[dict[str, str], ...], ...] = (
    ({"role": "user", "content": "Hi"},),
    ({"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "And 3+3? 你好 👍🏽"}),
)
"""The chat probes, each rendered with and without the generation prompt."""

CHAT_CLOCK = "2024-06-01T12:00:00"
"""The time ``strftime_now`` reads in the chat probes (a template that prints the date renders the
same every day)."""

HASH_DIGITS = 16


def probe_texts() -> list[str]:
    """The texts of :data:`PROBE_SET`: the project's probe texts and seeded random ones."""
    from mtokspec.convert.mnn_target.reference import BASE_TEXTS, random_texts

    return list(BASE_TEXTS) + list(SWITCH_TEXTS) + random_texts([], n=_RANDOM_TEXTS, seed=_RANDOM_SEED)


def probe_digest() -> str:
    """The SHA-256 of what :data:`PROBE_SET_DIGEST` pins."""
    data = json.dumps([probe_texts(), CONVERSATIONS, CHAT_CLOCK], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def id_sequences(ids: list[int]) -> list[list[int]]:
    """Seeded runs of 1-8 of ``ids`` (a file's ids): decoded together, they reach what a decoder does
    across tokens (joins, clean-up, byte runs, first-token rules)."""
    import random

    rng = random.Random(_RANDOM_SEED)
    if not ids:
        return []
    return [[rng.choice(ids) for _ in range(rng.randrange(1, 9))] for _ in range(_ID_SEQUENCES)]


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """``behaviour``: the hash of ``hf``, ``mnn`` and ``chat`` together (the file's identity);
    ``structure``: of its canonical bytes; each 16 hex digits, under ``probe_set``."""

    behaviour: str
    structure: str
    hf: str
    mnn: str
    chat: str
    probe_set: str = PROBE_SET

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    def __str__(self) -> str:
        return (f"{self.behaviour} (structure {self.structure}, hf {self.hf}, mnn {self.mnn}, chat {self.chat}; "
                f"{self.probe_set})")


class _Hasher:
    """Answers fed as one JSON line each (a refusal as its error class)."""

    def __init__(self, label: str):
        self._h = hashlib.sha256(f"{PROBE_SET}\n{label}\n".encode())

    def add(self, *answer: Any) -> None:
        self._h.update(json.dumps(answer, ensure_ascii=False, default=_json_default).encode("utf-8", "surrogatepass"))
        self._h.update(b"\n")

    def ask(self, what: str, fn: Callable[[], Any]) -> None:
        try:
            value = fn()
        except Error as e:
            value = {"refused": type(e).__name__}
        self.add(what, value)

    def digest(self) -> str:
        return self._h.hexdigest()[:HASH_DIGITS]


def _json_default(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return {"hex": bytes(v).hex()}
    raise TypeError(type(v).__name__)


def _ids_of(tok: Any, tree: t.TokenizerFile) -> Iterator[int]:
    extra = set(tok.special_ids) | set(tok.stop_ids) | set(tok.prefix_ids)
    if isinstance(tree, t.MtokFile):
        extra |= {a.id for a in tree.added_tokens}
    n = tok.vocab_size
    yield from range(n)
    yield from sorted(i for i in extra if not 0 <= i < n)


def _semantics_hash(tree: t.TokenizerFile, semantics: Semantics, texts: list[str]) -> str:
    from mtokspec.tokenizer import load

    h = _Hasher(semantics)
    try:
        tok = load(tree, semantics=semantics)
    except Error as e:
        h.add("load", {"refused": type(e).__name__})
        return h.digest()
    h.add("roles", tok.special_ids, tok.stop_ids, tok.prefix_ids, tok.bos_token, tok.eos_token)
    for text in texts:
        h.ask("encode", lambda: tok.encode(text, add_special_tokens=False))
        h.ask("encode+special", lambda: tok.encode(text, add_special_tokens=True))
        h.ask("round trip", lambda: _round_trip(tok, text))
    ids = list(_ids_of(tok, tree))
    raw = _raw_bytes(tok, tree)
    for i in ids:
        h.ask("id", lambda: _id_probe(tok, i, raw))
    for seq in id_sequences(ids):
        h.ask("ids", lambda: [tok.decode_bytes(seq), tok.decode_bytes(seq, skip_special_tokens=True),
                              tok.decode_bytes(seq, stream=True)])
    return h.digest()


def _round_trip(tok: Any, text: str) -> list[Any]:
    ids = tok.encode(text, add_special_tokens=True)
    return [tok.decode_bytes(ids), tok.decode_bytes(ids, skip_special_tokens=True),
            tok.decode_bytes(ids, stream=True)]


_LETTER = regex.compile(r"\p{L}")

_LEADS = (b"", b"\xd0", b"\xe5", b"\xf0")
"""Lead bytes before 1-3 leading continuation bytes: Cyrillic (U+0400-043F) and CJK (U+5000-5FFF)
letters, whatever the continuation bytes, so the GPT-2 split keeps them with a following letter."""

_TAILS = {0xC2: b"\xaa", 0xE0: b"\xa4\x85", 0xE2: b"\xb0\x80", 0xED: b"\x80\x80", 0xEF: b"\xbc\xa1",
          0xF0: b"\xa0\x80\x80"}
"""Continuation bytes after a lead byte alone that make a letter (default: B8 80, or 80 for a
two-byte lead: U+1E00, U+4E00-BE00 and Latin-1 letters)."""


def completed(raw: bytes) -> str | None:
    """``raw`` (a token's bytes, perhaps part of a character) made whole UTF-8 text, letters where
    a byte is missing: a lead byte before leading continuation bytes, continuation bytes after an
    unfinished character; None when no text holds these bytes."""
    k = 0
    while k < min(3, len(raw)) and 0x80 <= raw[k] < 0xC0:
        k += 1
    data = _LEADS[k] + raw
    tails = [b""]
    j = 0  # the trailing continuation bytes, after the last lead byte
    while j < min(3, len(data)) and 0x80 <= data[len(data) - 1 - j] < 0xC0:
        j += 1
    if j < len(data) and data[len(data) - 1 - j] >= 0xC0:
        lead = data[len(data) - 1 - j]
        if j == 0:
            tails.append(_TAILS.get(lead, b"\x80" if lead < 0xE0 else b"\xb8\x80" if lead < 0xF0 else b"\x80\x80\x80"))
    tails += [b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\xa0", b"\xa0\x80", b"\x90", b"\x90\x80",
              b"\x90\x80\x80"]
    texts = []
    for tail in tails[1:] + tails[:1]:
        try:
            texts.append((data + tail).decode("utf-8"))
        except UnicodeDecodeError:
            continue
    # a completion that ends in a letter keeps the GPT-2 split from cutting the token's last character off
    return next((x for x in texts if x and _LETTER.match(x[-1])), texts[0] if texts else None)


def _id_probe(tok: Any, i: int, raw: Callable[[int], bytes]) -> list[Any]:
    token = tok.id_to_token(i)
    if token is None:
        return [None]
    out: list[Any] = [token, tok.is_special(i), tok.is_stop(i)]
    try:
        text = tok.decode([i])
        out += [tok.decode_bytes([i]), tok.decode_bytes([i], stream=True), tok.encode(text, add_special_tokens=False)]
        whole = completed(raw(i))  # a byte-level token that is part of a character, in a character
        if whole is not None and whole != text:
            out.append(tok.encode(whole, add_special_tokens=False))
    except Error as e:
        out.append({"refused": type(e).__name__})
    return out


def _raw_bytes(tok: Any, tree: t.TokenizerFile) -> Callable[[int], bytes]:
    """A token's own bytes: its byte-level spelling read back when the file is byte-level, else the
    bytes its decode gives."""
    from mtokspec.format.byte_level import bytes_to_unicode

    byte_level = isinstance(tree, t.MtokFile) and any(
        isinstance(node, (t.ByteLevelDecoder, t.ByteLevelPreTokenizer))
        for stage in (tree.decoder, tree.pre_tokenizer) for node, _ in t.walk_stage(stage))
    if not byte_level:
        return lambda i: tok.decode_bytes([i])
    back = {c: b for b, c in bytes_to_unicode().items()}

    def raw(i: int) -> bytes:
        token = tok.id_to_token(i) or ""
        try:
            return bytes(back[c] for c in token)
        except KeyError:
            return token.encode("utf-8", "surrogatepass")
    return raw


def render_probe(tok: Any, conversation: Iterable[dict[str, str]], add_generation_prompt: bool) -> str:
    """One chat probe: the file's template on ``conversation``, the clock at :data:`CHAT_CLOCK`."""
    return str(tok.apply_chat_template([dict(m) for m in conversation], add_generation_prompt=add_generation_prompt,
                                       strftime_now=CHAT_CLOCK))


def _chat_hash(tree: t.TokenizerFile) -> str:
    from mtokspec.tokenizer import load

    h = _Hasher("chat")
    for semantics in CURRENT:  # today's runtimes: a release's answers are not the file's fingerprint
        try:
            tok = load(tree, semantics=semantics)
        except Error as e:
            h.add(semantics, "load", {"refused": type(e).__name__})
            continue
        h.add(semantics, "template", tok.chat_template)
        if not tok.chat_template:
            continue
        for conv in CONVERSATIONS:
            for prompt in (True, False):
                h.ask(semantics, lambda: render_probe(tok, conv, prompt))
    return h.digest()


def fingerprint(source: t.TokenizerFile | bytes | str | os.PathLike[str]) -> Fingerprint:
    """The fingerprint of a file (a path, its bytes or a parsed tree) under :data:`PROBE_SET`."""
    tree = tree_of(source)
    if not isinstance(tree, t.TokenizerFile):
        raise ArgumentTypeError(f"source: expected a tree, bytes or a path, got {type(source).__name__}")
    structure = hashlib.sha256(build(tree)).hexdigest()[:HASH_DIGITS]
    texts = probe_texts()
    hf = _semantics_hash(tree, "hf", texts)
    mnn = _semantics_hash(tree, "mnn", texts)
    chat = _chat_hash(tree)
    both = hashlib.sha256(f"{PROBE_SET}\n{hf}\n{mnn}\n{chat}\n".encode()).hexdigest()[:HASH_DIGITS]
    return Fingerprint(both, structure, hf, mnn, chat)


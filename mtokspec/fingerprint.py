"""A tokenizer file's fingerprint: a short hash of its structure and of its behaviour.

    fp = mtokspec.fingerprint("tokenizer.mtok")
    fp.behaviour            # 16 hex digits: equal for files that answer every probe alike
    fp.structure, fp.hf, fp.mnn, fp.chat

The behaviour hashes are over the answers to one fixed, versioned probe set (:data:`PROBE_SET`):
the probe texts (:data:`~mtokspec.convert.mnn_target.reference.BASE_TEXTS` and seeded random texts of
its pieces) encoded with and without special tokens and decoded back; every id of the vocabulary
decoded alone, its token text and its text encoded again (so one changed vocabulary row, merge or
added token shows); the header's roles; and the chat template rendered on fixed conversations.
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
from typing import Any, Callable, Iterator

from mtokspec.errors import ArgumentTypeError, Error
from mtokspec.format import build, parse
from mtokspec.format import tree as t
from mtokspec.reading import read_file

__all__ = ["PROBE_SET", "Fingerprint", "fingerprint", "probe_texts"]

PROBE_SET = "mtokspec-probes/1"
"""The probe set's name and version: a change to any probe (texts, conversations, what is asked)
is a new version, and fingerprints of different versions are not compared."""

_RANDOM_TEXTS = 256
_RANDOM_SEED = 34

CONVERSATIONS: tuple[tuple[dict[str, str], ...], ...] = (
    ({"role": "user", "content": "Hi"},),
    ({"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "And 3+3? 你好 👍🏽"}),
)
"""The chat probes, each rendered with and without the generation prompt."""

HASH_DIGITS = 16


def probe_texts() -> list[str]:
    """The texts of :data:`PROBE_SET`: the project's probe texts and seeded random ones."""
    from mtokspec.convert.mnn_target.reference import BASE_TEXTS, random_texts

    return list(BASE_TEXTS) + random_texts([], n=_RANDOM_TEXTS, seed=_RANDOM_SEED)


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


def _semantics_hash(tree: t.TokenizerFile, semantics: str, texts: list[str]) -> str:
    from mtokspec.tokenizer import load

    h = _Hasher(semantics)
    try:
        tok = load(tree, semantics=semantics)  # type: ignore[arg-type]
    except Error as e:
        h.add("load", {"refused": type(e).__name__})
        return h.digest()
    h.add("roles", tok.special_ids, tok.stop_ids, tok.prefix_ids, tok.bos_token, tok.eos_token)
    for text in texts:
        h.ask("encode", lambda: tok.encode(text, add_special_tokens=False))
        h.ask("encode+special", lambda: tok.encode(text, add_special_tokens=True))
        h.ask("round trip", lambda: _round_trip(tok, text))
    for i in _ids_of(tok, tree):
        h.ask("id", lambda: _id_probe(tok, i))
    return h.digest()


def _round_trip(tok: Any, text: str) -> list[Any]:
    ids = tok.encode(text, add_special_tokens=True)
    return [tok.decode_bytes(ids), tok.decode_bytes(ids, skip_special_tokens=True),
            tok.decode_bytes(ids, stream=True)]


def _id_probe(tok: Any, i: int) -> list[Any]:
    token = tok.id_to_token(i)
    if token is None:
        return [None]
    out: list[Any] = [token, tok.is_special(i), tok.is_stop(i)]
    try:
        text = tok.decode([i])
        out += [tok.decode_bytes([i]), tok.decode_bytes([i], stream=True), tok.encode(text, add_special_tokens=False)]
    except Error as e:
        out.append({"refused": type(e).__name__})
    return out


def _chat_hash(tree: t.TokenizerFile) -> str:
    from mtokspec.tokenizer import load

    h = _Hasher("chat")
    for semantics in ("hf", "mnn"):
        try:
            tok = load(tree, semantics=semantics)  # type: ignore[arg-type]
        except Error as e:
            h.add(semantics, "load", {"refused": type(e).__name__})
            continue
        h.add(semantics, "template", tok.chat_template)
        if not tok.chat_template:
            continue
        for conv in CONVERSATIONS:
            for prompt in (True, False):
                h.ask(semantics, lambda: tok.apply_chat_template([dict(m) for m in conv], add_generation_prompt=prompt))
    return h.digest()


def fingerprint(source: t.TokenizerFile | bytes | str | os.PathLike[str]) -> Fingerprint:
    """The fingerprint of a file (a path, its bytes or a parsed tree) under :data:`PROBE_SET`."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        tree = parse(bytes(source))
    elif isinstance(source, (str, os.PathLike)):
        tree = parse(read_file(source))
    elif isinstance(source, t.TokenizerFile):
        tree = source
    else:
        raise ArgumentTypeError(f"source: expected a tree, bytes or a path, got {type(source).__name__}")
    structure = hashlib.sha256(build(tree)).hexdigest()[:HASH_DIGITS]
    texts = probe_texts()
    hf = _semantics_hash(tree, "hf", texts)
    mnn = _semantics_hash(tree, "mnn", texts)
    chat = _chat_hash(tree)
    both = hashlib.sha256(f"{PROBE_SET}\n{hf}\n{mnn}\n{chat}\n".encode()).hexdigest()[:HASH_DIGITS]
    return Fingerprint(both, structure, hf, mnn, chat)


"""HF's answers for a model folder, and the texts that probe every component a file uses.

:class:`HFReference` answers with HF ``tokenizers`` on the folder's ``tokenizer.json`` (the ``hf``
extra; without it the reference refuses), or, only when asked (``reference="mtokspec"``), with
mtokspec's own HF semantics of the ``--target mnn`` tree -- which is not HF wherever the format
cannot hold the pipeline; ``source`` names which one answered, and its version.  ``decode`` is HF's
``decode(ids)`` with special tokens kept (``skip_special_tokens=False``, transformers' default).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mtokspec.convert.loss import ConversionError
from mtokspec.errors import TokenizerError, hf_failure
from mtokspec.format import tree as t
from mtokspec.args import instance, items, mapping, number, token_text
from mtokspec.args import path as path_arg
from mtokspec.names import REFERENCES

__all__ = ["check_reference", "HFReference", "FileReference", "probe_texts", "random_texts", "read_texts", "BASE_TEXTS", "PIECES",
           "RUN_TEXTS", "CONTROL_TEXTS"]

BASE_TEXTS: tuple[str, ...] = (
    "Hello world",
    "Hello, world! How are you? I'm fine.",
    "A",
    " leading and trailing spaces ",
    "a  b   c\t\td\n\ne \r\n f",
    "          ",
    "\n",
    "don't I'm it's we've they're you'll he'd do not",
    "end . of , sentence ? really !",
    "12345 3.14159 1,000,000 2024-12-01 0x1F 007",
    "café naïve Ångström façade jalapeño Zürich",
    "e\u0301 a\u0308 n\u0303 (combining marks)",
    "ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ ① ² ﬁ ™ ½",
    "你好，世界！这是一个测试。",
    "日本語のテキストです。カタカナ",
    "한국어 텍스트입니다",
    "Привет, мир! Ελληνικά العربية עברית हिन्दी ไทย",
    "emoji 👍🏽 🤗 😈 👨‍👩‍👧 🇫🇷",
    "@#$%^&*()[]{}<>|\\/~`'\"_-+=;:",
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    "http://example.com/path?q=1&r=2 user@example.org",
    "a\u200bb a\u200db a\u200cb \ufeffx \u00adsoft",
    "\x8f\x85 \u2028 \u3000 \u00a0 nbsp",
    "İstanbul ǅ ß ẞ ﬀ",
    "\u0f00 \U0001d11e \U00010348 \ue000 \ufffd",
    "supercalifragilisticexpialidocious" * 4,
    "ä" * 60 + " " + "日本" * 20,
    "!!!!!! ...... ???? ---- ==== ****** ~~~",
    "ThisIsCamelCase and snake_case_words and SCREAMING",
    "a\u2028's b\x85'll c\u3000'd d\u00a0'm e\u2029've",
    "①23 ²4 x½ ٣٤ Ⅻ 𝟙",
    "x\u2028y z\x85w \u2029 \u205f \u1680 \u180e",
    "Mixed 中文 and English 混合 text 123 测试",
)
"""Texts for every component a tokenizer file uses: white space runs, digits, accents and
compatibility characters, CJK, other scripts, emoji sequences, symbols, code, control and format
characters, rare characters (byte fallback), a long word."""

RUN_TEXTS: tuple[str, ...] = (
    "../../../../ :::: 11110 ====== ------ \n      x",
    "xxxxxxx ......... 111111111 :::::",
)
"""Runs of one character: where a Unigram lattice holds segmentations of exactly equal score
(probed besides :data:`BASE_TEXTS`; not among the fingerprint's texts)."""

CONTROL_TEXTS: tuple[str, ...] = (
    "a\x01b 0\x020 x\x03y z\x04w m\x05n v\x06u s\x07t",
    "p\U000f0000q \U0010fffd r\U000e0001s",
)
"""ASCII controls inside words, where MNN's regex engine reads U+0001-U+0007 as the class stand-ins
it folds text to, and private-use and tag characters past the BMP, which clean-ups drop (probed
besides :data:`BASE_TEXTS`; not among the fingerprint's texts)."""


PIECES: tuple[str, ...] = (
    " ", "  ", "\n", "\t", "\r\n", "a", "Z", "The", " the", "ab", "don", "'s", "'", "t", "1", "23", "456",
    ".", ",", "!", "?", "-", "(", "\"", "é", "ü", "n\u0303", "e\u0301", "İ", "ß", "ﬁ", "①", "²", "½", "٣", "中", "文",
    "ー", "한", "😀", "👍🏽", "👨\u200d👩", "\u200d", "\u200b", "\u200c", "\ufeff", "\u00ad", "\u0301",
    "\u00a0", "\u3000", "\u2028", "\u2029", "\x85", "\x8f", "\x00", "\x7f", "\x1b", "\ufffd", "\ue000",
    "\U00010348", "\U0001d11e", "\u0f00", "Ｆ", "ｶ", "Ġ", "▁", "##", "<0x41>", "_", "@", "#",
)
"""Pieces random probe texts are made of: characters of every class the runtimes treat
differently (white space of each kind, format and control characters, marks, numbers that are
not digits, compatibility characters) and strings tokenizers give meaning to."""


MAX_RANDOM_TEXTS = 1_000_000


def random_texts(added_contents: list[str], n: int = 400, seed: int = 0) -> list[str]:
    """``n`` texts of 1-8 pieces of :data:`PIECES` and the added tokens' contents (a fixed seed:
    the same texts every run)."""
    import random

    items("added_contents", added_contents, str, "strs")
    number("n", n, integral=True)
    number("seed", seed, integral=True)
    if n > MAX_RANDOM_TEXTS:
        raise ConversionError(f"n: at most {MAX_RANDOM_TEXTS:,} random texts, got {n:,}")
    rng = random.Random(seed)
    pool = list(PIECES) + [c for c in added_contents[:10] if c]
    return ["".join(rng.choice(pool) for _ in range(rng.randrange(1, 9))) for _ in range(n)]


def probe_texts(added_contents: list[str], extra: list[str] | None = None, limit: int = 64) -> list[str]:
    """:data:`BASE_TEXTS`, :data:`RUN_TEXTS` and :data:`CONTROL_TEXTS`, each added token spelled out in context (the first
    ``limit``; the specials first, so the rest is left out of a long list), :func:`random_texts`,
    then ``extra``."""
    items("added_contents", added_contents, str, "strs")
    items("extra", extra, str, "strs", optional=True)
    number("limit", limit, integral=True)
    out = [*BASE_TEXTS, *RUN_TEXTS, *CONTROL_TEXTS]
    for c in added_contents[:limit]:
        out += [c, f"a{c}b", f"Hi {c} there", f"{c}{c} \n{c}", f"x\u3000{c}\u00a0y\x85"]
    out += random_texts(added_contents)
    out += list(extra or [])
    return list(dict.fromkeys(out))


def read_texts(path: str | os.PathLike) -> list[str]:
    """Texts from a file: a JSON list of strings, or one text per line."""
    p = Path(path_arg("path", path))
    try:
        data = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:  # not UTF-8; a NUL or a lone surrogate in the path
        raise ConversionError(f"{p}: cannot read texts: {e}") from e
    if p.suffix == ".json":
        try:
            texts = json.loads(data)
        except ValueError as e:
            raise ConversionError(f"{p}: not JSON: {e}") from e
        if not isinstance(texts, list) or not all(isinstance(x, str) for x in texts):
            raise ConversionError(f"{p}: expected a JSON list of strings")
        return texts
    return data.splitlines()


def _utf8(name: str, text: object) -> None:
    """``text`` as HF ``tokenizers`` takes it: a ``str`` of UTF-8 text (no lone surrogate)."""
    try:
        token_text(name, text).encode("utf-8")
    except UnicodeEncodeError:
        raise ConversionError(f"{name}: a lone surrogate: HF tokenizers takes UTF-8 text only") from None


NO_TOKENIZERS = ("HF tokenizers is not installed: it answers for HF here (pip install 'mtokspec[hf]'); "
                 "reference='mtokspec' (--reference mtokspec) checks against mtokspec's own HF semantics "
                 "of the written file instead, which is not HF wherever the format loses something")


def check_reference(reference: object) -> str:
    """``reference`` checked: one of :data:`mtokspec.names.REFERENCES`."""
    token_text("reference", reference)
    if reference not in REFERENCES:
        raise ConversionError(f"reference {reference!r}: expected one of {', '.join(REFERENCES)}")
    return str(reference)


class HFReference:
    """HF's ``encode`` / ``decode`` for a parsed ``tokenizer.json`` (see the module doc);
    with ``reference="mtokspec"``, ``fallback_tree`` run with mtokspec's HF semantics instead."""

    def __init__(self, tokenizer_json: dict, fallback_tree=None, reference: str = "hf"):
        mapping("tokenizer_json", tokenizer_json)
        if fallback_tree is not None:
            instance("fallback_tree", fallback_tree, t.MtokFile, "an MtokFile tree or None")
        check_reference(reference)
        tokenizers = None
        if reference == "hf":
            try:
                import tokenizers
            except ImportError:
                raise ConversionError(NO_TOKENIZERS) from None
        self._hf = None
        if tokenizers is not None:
            self._guard = _PatternGuard(tokenizer_json)
            try:
                self._hf = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json))
            except Exception as e:  # tokenizers raises its own Exception for a file it refuses
                raise ConversionError(f"tokenizer.json: HF tokenizers cannot load it: {e}") from e
            self.source = f"HF tokenizers {tokenizers.__version__}"
        else:
            from mtokspec.runtime.hf import HfTokenizer as Tokenizer

            if fallback_tree is None:
                raise ConversionError("reference 'mtokspec': no tree to run mtokspec's HF semantics on")
            self._ours = Tokenizer.from_tree(fallback_tree)
            self.source = _ours_source()

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        if self._hf is not None:
            _utf8("text", text)
            self._guard.check(text)
            with hf_failure(f"encode {text[:20]!r}", ConversionError):
                return self._hf.encode(text, add_special_tokens=add_special_tokens).ids
        return self._ours.encode(text, add_special_tokens=add_special_tokens)

    def normalize(self, text: str) -> str | None:
        """HF's normalizer on ``text`` (None without HF ``tokenizers`` or a normalizer)."""
        if self._hf is None or self._hf.normalizer is None:
            return None
        _utf8("text", text)
        self._guard.check(text)
        with hf_failure(f"normalize {text[:20]!r}", ConversionError):
            return self._hf.normalizer.normalize_str(text)

    def decode(self, ids: list[int]) -> str:
        if self._hf is not None:
            with hf_failure(f"decode {ids[:8]}", ConversionError):
                return self._hf.decode(ids, skip_special_tokens=False)
        return self._ours.decode(ids, skip_special_tokens=False)


class _PatternGuard:
    """What is refused before HF's Oniguruma, which backtracks for as long as it takes (``(a+){2}é``
    on 2,000 ``a``: 12 minutes) and may panic, runs a ``tokenizer.json``'s regular expressions: a
    pattern past the bounds of one mtokspec compiles, one repeating without bound a group that
    holds a quantifier or a choice, and a text on which mtokspec's own bounded run of a pattern
    (its HF ``Split``, on Python's ``regex``) runs out of the call's regex time.  A pattern in
    Oniguruma syntax Python's ``regex`` cannot read is left to HF alone."""

    def __init__(self, tokenizer_json: dict) -> None:
        from mtokspec.format.growth import nested_quantifier, pattern_refusal
        from mtokspec.runtime.hf.pre_tokenizers import Split

        self.splits: list[tuple[str, Split]] = []
        stack: list[tuple[str, object]] = [("", tokenizer_json)]
        while stack:
            where, node = stack.pop()
            if isinstance(node, dict):
                regex = node.get("pattern")
                if isinstance(regex, dict) and isinstance(regex.get("Regex"), str):
                    why = pattern_refusal(regex["Regex"]) or (
                        "it repeats without bound a group holding a quantifier or a choice" if nested_quantifier(
                            regex["Regex"]) else None)
                    if why is not None:
                        raise ConversionError(f"tokenizer.json{where}.pattern: {why}; {_NOT_ASKED}")
                    try:
                        self.splits.append((f"tokenizer.json{where}.pattern", Split(regex["Regex"])))
                    except TokenizerError:
                        pass  # Oniguruma syntax Python's regex lacks (a+{100}): HF runs it unguarded
                stack += [(f"{where}.{k}", v) for k, v in node.items() if k not in ("vocab", "merges", "added_tokens")]
            elif isinstance(node, list):
                stack += [(f"{where}[{i}]", v) for i, v in enumerate(node)]

    def check(self, text: str) -> None:
        for where, split in self.splits:
            try:
                split.split(text)
            except TokenizerError as e:
                raise ConversionError(f"{where} on {text[:20]!r}: {e}; {_NOT_ASKED}") from None


_NOT_ASKED = ("HF tokenizers is not asked to run it (its time on such a pattern cannot be bounded; "
              "reference='mtokspec' checks against mtokspec's own HF semantics, which is bounded)")


def _ours_source() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("mtokspec")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        v = "unknown"
    return f"mtokspec {v}'s own HF semantics (not HF tokenizers)"


class FileReference:
    """A tree's own HF semantics as the reference (when no ``tokenizer.json`` is at hand)."""

    source = "the file's own HF semantics (mtokspec; no tokenizer.json to check against)"

    def __init__(self, tree: t.MtokFile) -> None:
        from mtokspec.runtime.hf import HfTokenizer as Tokenizer

        instance("tree", tree, t.MtokFile, "an MtokFile tree")
        self._tok = Tokenizer.from_tree(tree)

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return self._tok.encode(text, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)

    def normalize(self, text: str) -> None:
        return None

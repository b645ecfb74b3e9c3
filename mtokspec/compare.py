"""Compare the runtime with HF ``tokenizers`` on a list of texts.

    from mtokspec.compare import compare
    report = compare("mnn.mtok", "tokenizer.json", ["Hello world", "你好"])
    print(report.summary())

HF ``tokenizers`` is imported only when :func:`compare` runs; without it a clear error is raised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mtokspec.reading import read_file
from mtokspec.format import tree as t
from mtokspec.errors import TokenizerError
from mtokspec.divergences import EXPORTER_LOSS
from mtokspec.format import parse
from mtokspec.runtime.shared.pickling import remember_source
from mtokspec.tokenizer import Tokenizer

__all__ = ["compare", "compare_runtimes", "CompareReport", "Mismatch", "SAMPLE_TEXTS"]

SAMPLE_TEXTS = [
    "Hello world! This is a test.",
    "  leading and trailing spaces  ",
    "The year 2024 had 366 days; π ≈ 3.14159.",
    "def f(x):\n    return x ** 2  # square\n",
    "你好，世界！机器学习正在改变世界。",
    "こんにちは、Привет, مرحبا, 안녕하세요",
    "Emoji: 🚀 😶\u200d🌫️ 👍🏽 and combining: e\u0301 a\u0308",
    "tabs\tand\nnewlines\r\n and   runs    of spaces",
    "",
]


@dataclass
class Mismatch:
    index: int
    text: str
    ours: list[int]
    theirs: list[int]
    position: int  # first differing position
    ours_tokens: list[str | None] = field(default_factory=list)  # None: id not in the vocabulary
    theirs_tokens: list[str] = field(default_factory=list)
    rules: list[str] | None = None  # compare_runtimes: the divergence rules, [] = unexplained


@dataclass
class CompareReport:
    total: int
    matched: int
    mismatches: list[Mismatch]
    add_special_tokens: bool = False
    ours_name: str = "ours"
    theirs_name: str = "HF"
    unexplained: int = 0  # compare_runtimes: differing cases no rule explains (all of them counted)

    @property
    def match_rate(self) -> float:
        return self.matched / self.total if self.total else 1.0

    def summary(self, limit: int = 5) -> str:
        lines = [f"{self.matched}/{self.total} texts encode identically "
                 f"({100 * self.match_rate:.2f}%)"
                 + (" with special tokens" if self.add_special_tokens else "")]
        explained = any(m.rules is not None for m in self.mismatches)
        if explained:
            lines[0] += f"; {self.total - self.matched - self.unexplained} differences explained, " \
                        f"{self.unexplained} unexplained"
        w = max(len(self.ours_name), len(self.theirs_name)) + 1
        for m in self.mismatches[:limit]:
            lines.append(f"- text {m.index} {m.text[:60]!r}: first difference at token {m.position}")
            if m.rules is not None:
                lines.append(f"    because: {', '.join(m.rules) if m.rules else 'UNEXPLAINED'}")
                lines.append(f"    {(self.ours_name + ':').ljust(w)} {m.ours}")
                lines.append(f"    {(self.theirs_name + ':').ljust(w)} {m.theirs}")
            lines.append(f"    {(self.ours_name + ':').ljust(w)} {m.ours_tokens}")
            lines.append(f"    {(self.theirs_name + ':').ljust(w)} {m.theirs_tokens}")
        if len(self.mismatches) > limit:
            lines.append(f"... and {len(self.mismatches) - limit} more")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"total": self.total, "matched": self.matched, "match_rate": self.match_rate,
                "ours": self.ours_name, "theirs": self.theirs_name, "unexplained": self.unexplained,
                "mismatches": [m.__dict__ for m in self.mismatches]}


def _hf():
    try:
        import tokenizers
    except ImportError:
        raise TokenizerError("comparing needs Hugging Face `tokenizers` "
                             "(pip install tokenizers, or pip install 'mtokspec[hf]')") from None
    return tokenizers


class _HfCase:
    """One text through the runtime and through HF ``tokenizers`` (picklable: runs in workers)."""

    def __init__(self, ours, theirs, add_special_tokens: bool):
        self.ours, self.theirs, self.add_special_tokens = ours, theirs, add_special_tokens

    def __call__(self, text: str) -> tuple[list[int], list[int]]:
        return (self.ours.encode(text, add_special_tokens=self.add_special_tokens),
                self.theirs.encode(text, add_special_tokens=self.add_special_tokens).ids)


def compare(mtok, tokenizer_json: str | os.PathLike, texts, *, add_special_tokens: bool = False,
            max_mismatches: int = 20, context: int = 3, jobs: int = 1, progress=None) -> CompareReport:
    """Encode each text with the runtime (``mtok``: a path or an :class:`MtokFile` tree) and with
    HF ``tokenizers`` (``tokenizer.json``); report the match rate and the first mismatches, each
    with the tokens around the first difference.  ``jobs`` processes share the texts
    (:func:`mtokspec.parallel.ordered_map`; the report is the same for any ``jobs``);
    ``progress(done, total)`` is called as texts finish."""
    from mtokspec.parallel import ordered_map

    tokenizers = _hf()
    if isinstance(mtok, Tokenizer):
        ours = mtok
    elif isinstance(mtok, t.MtokFile):
        ours = Tokenizer.from_tree(mtok)
    else:
        ours = Tokenizer.from_file(mtok)
    theirs = tokenizers.Tokenizer.from_file(str(Path(tokenizer_json)))
    matched = 0
    mismatches: list[Mismatch] = []
    texts = list(texts)
    results = ordered_map(_HfCase(ours, theirs, add_special_tokens), texts, jobs=jobs, progress=progress)
    for i, (text, (a, b)) in enumerate(zip(texts, results)):
        if a == b:
            matched += 1
            continue
        if len(mismatches) >= max_mismatches:
            continue
        mismatches.append(_mismatch(i, text, a, b, ours.id_to_token, theirs.id_to_token, context))
    return CompareReport(len(texts), matched, mismatches, add_special_tokens)


def _mismatch(i, text, a, b, ours_token, theirs_token, context, rules=None) -> Mismatch:
    pos = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, pos - context)
    return Mismatch(i, text, a, b, pos, [ours_token(x) for x in a[lo:pos + context + 1]],
                    [theirs_token(x) for x in b[lo:pos + context + 1]], rules)


class _RuntimeCase:
    """One text the way MNN runs it and the way HF does, with the rules that explain a difference
    (picklable: runs in workers).  ``theirs`` is HF ``tokenizers`` (``tokenizer.json``) or None
    (the file's own HF semantics)."""

    def __init__(self, mnn, hf_file, theirs, add_special_tokens: bool):
        self.mnn, self.hf_file, self.theirs, self.add_special_tokens = mnn, hf_file, theirs, add_special_tokens

    def __call__(self, text: str) -> tuple[list[int], list[int], list[str] | None]:
        from mtokspec.divergences.explain import explain_encode

        special = self.add_special_tokens
        a = self.mnn.encode(text, add_special_tokens=special)
        if self.theirs is None:
            b = self.hf_file.encode(text, add_special_tokens=special)
        else:
            b = self.theirs.encode(text, add_special_tokens=special).ids
        if a == b:
            return a, b, None
        rules: list[str] = []
        file_ids = b if self.theirs is None else self.hf_file.encode(text, add_special_tokens=special)
        if file_ids != b:
            rules.append(EXPORTER_LOSS)
        if file_ids != a:
            rules += explain_encode(self.hf_file, self.mnn, text, special)
        return a, b, rules


def compare_runtimes(file, texts, *, against: str | os.PathLike | None = None, add_special_tokens: bool = True,
                     max_mismatches: int = 20, context: int = 3, jobs: int = 1, progress=None) -> CompareReport:
    """Encode each text the way MNN's C++ runtime does (``semantics="mnn"``) and the way HF does:
    HF ``tokenizers`` loading ``against`` (a ``tokenizer.json``), or, without it, the file's own HF
    semantics.  Each differing case names the divergence rules that explain it
    (:mod:`mtokspec.divergences`); ``[]`` marks it unexplained.  Against a ``tokenizer.json``, a
    case where the file's HF semantics already differs from it is put down to the exporter
    (:data:`mtokspec.divergences.EXPORTER_LOSS`) as well.  ``jobs`` and ``progress``: as
    :func:`compare`."""
    from mtokspec.parallel import ordered_map
    from mtokspec.runtime.mnn import MnnTokenizer

    tree = file if isinstance(file, t.TokenizerFile.__args__) else None  # type: ignore[attr-defined]
    data = None
    if tree is None:
        data = read_file(file)
        tree = parse(data)
    mnn = remember_source(MnnTokenizer.from_tree(tree), data)
    hf_file = Tokenizer.from_tree(tree)
    remember_source(hf_file, data if hf_file.tree is tree else None)
    if against is not None:
        theirs = _hf().Tokenizer.from_file(str(Path(against)))
        theirs_token = theirs.id_to_token
        theirs_name = "HF (tokenizer.json)"
    else:
        theirs = None
        theirs_token = hf_file.id_to_token
        theirs_name = "HF (this file)"
    matched = unexplained = 0
    mismatches: list[Mismatch] = []
    texts = list(texts)
    results = ordered_map(_RuntimeCase(mnn, hf_file, theirs, add_special_tokens), texts, jobs=jobs,
                          progress=progress)
    for i, (text, (a, b, rules)) in enumerate(zip(texts, results)):
        if rules is None:
            matched += 1
            continue
        if not rules:
            unexplained += 1
        if len(mismatches) < max_mismatches:
            mismatches.append(_mismatch(i, text, a, b, mnn.id_to_token, theirs_token, context, rules))
    return CompareReport(len(texts), matched, mismatches, add_special_tokens, "MNN", theirs_name, unexplained)

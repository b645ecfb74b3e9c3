"""Compare the runtime with HF ``tokenizers`` on a list of texts.

    from mtokspec.compare import compare
    report = compare("mnn.mtok", "tokenizer.json", ["Hello world", "你好"])
    print(report.summary())

HF ``tokenizers`` is imported only when :func:`compare` runs; without it a clear error is raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtokspec.format import tree as t
from mtokspec.format.files import tree_and_bytes, tree_of
from mtokspec.errors import TokenizerError, hf_failure
from mtokspec.runtime.shared.pickling import remember_source
from mtokspec.tokenizer import Semantics, Tokenizer, load

TokenName = Callable[[int], "str | None"]
"""A token's text by id (None: no such token)."""

__all__ = ["compare", "compare_runtimes", "device_tally", "CompareReport", "DeviceTally", "Mismatch", "SAMPLE_TEXTS"]

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
    theirs_tokens: list[str | None] = field(default_factory=list)
    rules: list[str] | None = None  # compare_runtimes: the divergence rules, [] = unexplained
    set: str = ""  # the text set the case came from
    window: list[str] = field(default_factory=list)  # ours, theirs: the tokens around the first difference


@dataclass
class CompareReport:
    total: int
    matched: int
    mismatches: list[Mismatch]
    add_special_tokens: bool = False
    ours_name: str = "ours"
    theirs_name: str = "HF"
    unexplained: int = 0  # compare_runtimes: differing cases no rule explains (all of them counted)
    sets: dict[str, list[int]] = field(default_factory=dict)  # text set -> [cases, identical]
    differing: int = 0  # every differing case, kept in ``mismatches`` or not

    @property
    def match_rate(self) -> float:
        return self.matched / self.total if self.total else 1.0

    def rule_counts(self) -> dict[str, int]:
        """Differing cases per divergence rule (``UNEXPLAINED`` for none), most first, over the
        recorded mismatches."""
        counts: dict[str, int] = {}
        for m in self.mismatches:
            for rule in (m.rules or ["UNEXPLAINED"]) if m.rules is not None else ():
                counts[rule] = counts.get(rule, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self, limit: int | None = 5) -> str:
        """The headline, a table per text set (when several) and per rule, then ``limit`` mismatches
        (None: all), each as the tokens around its first difference."""
        lines = [f"{self.matched}/{self.total} texts encode identically "
                 f"({100 * self.match_rate:.2f}%)"
                 + (" with special tokens" if self.add_special_tokens else "")]
        explained = any(m.rules is not None for m in self.mismatches)
        if explained:
            lines[0] += f"; {self.total - self.matched - self.unexplained} differences explained, " \
                        f"{self.unexplained} unexplained"
        if len(self.sets) > 1:
            w = max(len("text set"), *map(len, self.sets))
            lines.append(f"  {'text set':<{w}}  {'cases':>7}  {'same':>7}  rate")
            for name, (n, same) in self.sets.items():
                lines.append(f"  {name:<{w}}  {n:>7,}  {same:>7,}  {100 * same / n if n else 100:.2f}%")
        rules = self.rule_counts()
        if rules:
            w = max(len("rule"), *map(len, rules))
            lines.append(f"  {'rule':<{w}}  {'cases':>7}")
            lines.extend(f"  {rule:<{w}}  {n:>7,}" for rule, n in rules.items())
        w = max(len(self.ours_name), len(self.theirs_name)) + 1
        shown = self.mismatches if limit is None else self.mismatches[:limit]
        for m in shown:
            where = f" ({m.set})" if len(self.sets) > 1 else ""
            lines.append(f"- text {m.index}{where} {m.text[:60]!r}: first difference at token {m.position}")
            if m.rules is not None:
                lines.append(f"    because: {', '.join(m.rules) if m.rules else 'UNEXPLAINED'}")
            lines.append(f"    {(self.ours_name + ':').ljust(w)} {m.window[0]}")
            lines.append(f"    {(self.theirs_name + ':').ljust(w)} {m.window[1]}")
        if self.differing > len(shown):
            lines.append(f"... and {self.differing - len(shown)} more (--show N, --all, --json, --jsonl)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "matched": self.matched, "match_rate": self.match_rate,
                "ours": self.ours_name, "theirs": self.theirs_name, "unexplained": self.unexplained,
                "sets": {k: {"cases": n, "same": s} for k, (n, s) in self.sets.items()},
                "rules": self.rule_counts(), "differing": self.differing,
                "mismatches": [m.__dict__ for m in self.mismatches]}


def _hf() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise TokenizerError("comparing needs Hugging Face `tokenizers` "
                             "(pip install tokenizers, or pip install 'mtokspec[hf]')") from None
    return tokenizers


class _HfCase:
    """One text through the runtime and through HF ``tokenizers`` (picklable: runs in workers)."""

    def __init__(self, ours: Any, theirs: Any, add_special_tokens: bool) -> None:
        self.ours, self.theirs, self.add_special_tokens = ours, theirs, add_special_tokens

    def __call__(self, text: str) -> tuple[list[int], list[int], None]:
        ours = self.ours.encode(text, add_special_tokens=self.add_special_tokens)
        with hf_failure(f"encode {text[:20]!r}"):
            return ours, self.theirs.encode(text, add_special_tokens=self.add_special_tokens).ids, None


def _results(case: Callable[[str], Any], texts: list[str], jobs: int,
             progress: Callable[[int], None] | None) -> list[Any]:
    """``case`` of each text in ``jobs`` processes (:func:`mtokspec.parallel.ordered_map`), in order."""
    from mtokspec.parallel import ordered_map

    done = None if progress is None else (lambda n, _total: progress(n))
    return ordered_map(case, texts, jobs=jobs, progress=done)


def _tokenizer_json(path: str | os.PathLike[str]) -> str:
    """``path``, or the ``tokenizer.json`` inside it when it is a model folder."""
    p = Path(path)
    return str(p / "tokenizer.json" if p.is_dir() else p)


def compare(mtok: Tokenizer | t.MtokFile | str | os.PathLike[str], tokenizer_json: str | os.PathLike[str],
            texts: Iterable[str], *, add_special_tokens: bool = False, max_mismatches: int | None = None,
            context: int = 3, sets: Sequence[str] | None = None,
            progress: Callable[[int], None] | None = None, jobs: int = 1) -> CompareReport:
    """Encode each text with the runtime (``mtok``: a path or an :class:`MtokFile` tree) and with
    HF ``tokenizers`` (``tokenizer.json``, or the model folder holding it); report the match rate and the mismatches (the first
    ``max_mismatches``; None: all), each with the tokens around the first difference.  ``sets``
    names the text set of each text (a table per set); ``progress(n)`` is called as texts finish.
    ``jobs`` processes share the texts; the report is the same for any ``jobs``."""
    tokenizers = _hf()
    if isinstance(mtok, Tokenizer):
        ours = mtok
    elif isinstance(mtok, t.MtokFile):
        ours = Tokenizer.from_tree(mtok)
    else:
        ours = Tokenizer.from_file(mtok)
    theirs = tokenizers.Tokenizer.from_file(_tokenizer_json(tokenizer_json))
    texts = list(texts)
    results = _results(_HfCase(ours, theirs, add_special_tokens), texts, jobs, progress)
    run = _Run(texts, sets, add_special_tokens, max_mismatches, context, None)
    for i, text in run:
        a, b, _ = results[i]
        run.record(i, text, a, b, ours.id_to_token, theirs.id_to_token)
    return run.report()


class _Run:
    """The loop both comparisons share: texts with their set names, the counts, the mismatches kept."""

    def __init__(self, texts: list[str], sets: Sequence[str] | None, add_special_tokens: bool,
                 max_mismatches: int | None, context: int, progress: Callable[[int], None] | None) -> None:
        self.texts = texts
        self.set_of = list(sets) if sets is not None else ["texts"] * len(texts)
        if len(self.set_of) != len(texts):
            raise TokenizerError(f"{len(self.set_of)} set names for {len(texts)} texts")
        self.sets: dict[str, list[int]] = {}
        for name in self.set_of:
            self.sets.setdefault(name, [0, 0])[0] += 1
        self.add_special_tokens = add_special_tokens
        self.max_mismatches = max_mismatches
        self.context = context
        self.progress = progress
        self.matched = self.differing = self.unexplained = 0
        self.mismatches: list[Mismatch] = []

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for i, text in enumerate(self.texts):
            if self.progress is not None:
                self.progress(i)
            yield i, text

    def record(self, i: int, text: str, a: list[int], b: list[int], ours_token: TokenName,
               theirs_token: TokenName, rules: list[str] | None = None) -> None:
        if a == b:
            self.matched += 1
            self.sets[self.set_of[i]][1] += 1
            return
        self.differing += 1
        if rules is not None and not rules:
            self.unexplained += 1
        if self.max_mismatches is None or len(self.mismatches) < self.max_mismatches:
            m = _mismatch(i, text, a, b, ours_token, theirs_token, self.context, rules)
            m.set = self.set_of[i]
            self.mismatches.append(m)

    def report(self, ours_name: str = "ours", theirs_name: str = "HF") -> CompareReport:
        return CompareReport(len(self.texts), self.matched, self.mismatches, self.add_special_tokens, ours_name,
                             theirs_name, self.unexplained, {k: v for k, v in self.sets.items()}, self.differing)


def _mismatch(i: int, text: str, a: list[int], b: list[int], ours_token: TokenName, theirs_token: TokenName,
              context: int, rules: list[str] | None = None) -> Mismatch:
    from mtokspec.behaviour import first_difference, token_window

    pos = first_difference(a, b)
    assert pos is not None  # only differing lists are recorded
    lo = max(0, pos - context)
    window = [token_window(a, pos, ours_token, 2), token_window(b, pos, theirs_token, 2)]
    return Mismatch(i, text, a, b, pos, [ours_token(x) for x in a[lo:pos + context + 1]],
                    [theirs_token(x) for x in b[lo:pos + context + 1]], rules, window=window)


class _RuntimeCase:
    """One text the way MNN runs it and the way HF does, with the rules that explain a difference
    (picklable: runs in workers).  ``theirs`` is HF ``tokenizers`` (``tokenizer.json``) or None
    (the file's own HF semantics)."""

    def __init__(self, mnn: Any, hf_file: Any, theirs: Any, add_special_tokens: bool, rows: Any = ()) -> None:
        self.mnn, self.hf_file, self.theirs, self.add_special_tokens = mnn, hf_file, theirs, add_special_tokens
        self.rows = list(rows)

    def __call__(self, text: str) -> tuple[list[int], list[int], list[str] | None]:
        from mtokspec.divergences.explain import explain_encode

        special = self.add_special_tokens
        a = self.mnn.encode(text, add_special_tokens=special)
        if self.theirs is None:
            b = self.hf_file.encode(text, add_special_tokens=special)
        else:
            with hf_failure(f"encode {text[:20]!r}"):
                b = self.theirs.encode(text, add_special_tokens=special).ids
        if a == b:
            return a, b, None
        rules: list[str] = []
        file_ids = b if self.theirs is None else self.hf_file.encode(text, add_special_tokens=special)
        if file_ids != b:
            from mtokspec.convert.mnn_target.report import format_causes

            norm = self.theirs.normalizer
            file_norm = self.hf_file._normalize
            with hf_failure(f"normalize {text[:20]!r}"):
                differs = norm is not None and norm.normalize_str(text) != (file_norm(text) if file_norm else text)
            rules += format_causes(self.rows, differs)
        if file_ids != a:
            rules += explain_encode(self.hf_file, self.mnn, text, special)
        return a, b, rules


def _named(token: TokenName, names: dict[int, bytes]) -> TokenName:
    """``token(id)``, or the file's own text for an id the runtime has no text for (added tokens)."""
    from mtokspec.format.token_names import token_text

    def name(i: int) -> str | None:
        text = token(i)
        return text if text is not None else token_text(names.get(i))

    return name


def compare_runtimes(file: t.TokenizerFile | str | os.PathLike[str], texts: Iterable[str], *,
                     against: str | os.PathLike[str] | None = None, add_special_tokens: bool = True,
                     max_mismatches: int | None = None, context: int = 3, sets: Sequence[str] | None = None,
                     progress: Callable[[int], None] | None = None, jobs: int = 1,
                     semantics: Semantics = "mnn") -> CompareReport:
    """Encode each text the way MNN's C++ runtime does (``semantics``: ``"mnn"``, or ``"mnn-next"``
    for MNN with ``patches/mnn/``) and the way HF does:
    HF ``tokenizers`` loading ``against`` (a ``tokenizer.json`` or its model folder), or, without it, the file's own HF
    semantics.  Each differing case names the divergence rules that explain it
    (:mod:`mtokspec.divergences`); ``[]`` marks it unexplained.  Against a ``tokenizer.json``, a
    case where the file's HF semantics already differs from it also names what the format lost
    (:func:`mtokspec.convert.mnn_target.report.format_causes`).  ``max_mismatches``, ``sets``,
    ``progress`` and ``jobs`` as :func:`compare`."""
    from mtokspec.format.token_names import tokens_by_id

    tree, data = tree_and_bytes(file)
    mnn = remember_source(load(tree, semantics=semantics), data)
    hf_file = Tokenizer.from_tree(tree)
    remember_source(hf_file, data if hf_file.tree is tree else None)
    names = tokens_by_id(tree)
    rows: list[Any] = []
    if against is not None:
        import json

        from mtokspec.convert.mnn_target.variants import rows_of

        theirs: Any = _hf().Tokenizer.from_file(_tokenizer_json(against))
        theirs_token: TokenName = theirs.id_to_token
        theirs_name = "HF (tokenizer.json)"
        rows = rows_of(json.loads(theirs.to_str()))
    else:
        theirs = None
        theirs_token = _named(hf_file.id_to_token, names)
        theirs_name = "HF (this file)"
    ours_token = _named(mnn.id_to_token, names)
    texts = list(texts)
    results = _results(_RuntimeCase(mnn, hf_file, theirs, add_special_tokens, rows), texts, jobs, progress)
    run = _Run(texts, sets, add_special_tokens, max_mismatches, context, None)
    for i, text in run:
        a, b, rules = results[i]
        run.record(i, text, a, b, ours_token, theirs_token, rules)
    return run.report("MNN", theirs_name)


@dataclass
class DeviceTally:
    """What a device gets against HF, per output MNN's runtime produces: ``outputs`` maps
    ``encode``, ``raw`` (no special tokens), ``seq`` (``decode(ids)``), ``stream`` (the engine's
    per-id print) and ``chat`` (the chat template's prompts, when the file has one) to ``(agreeing,
    cases)``; ``causes`` the rules behind the differences, per output; ``reference`` what
    answered for HF."""

    outputs: dict[str, tuple[int, int]]
    causes: dict[str, dict[str, int]]
    reference: str

    def summary(self) -> str:
        cells = ", ".join(f"{o} {a}/{n}" for o, (a, n) in self.outputs.items())
        lines = [f"per output (MNN against {self.reference}): {cells}"]
        for o, rules in self.causes.items():
            if rules:
                lines.append(f"  {o}: " + ", ".join(f"{r} ({n})" for r, n in sorted(rules.items(), key=lambda x: -x[1])))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "causes": self.causes,
                "outputs": {o: {"agree": a, "cases": n} for o, (a, n) in self.outputs.items()}}


def device_tally(file: t.TokenizerFile | str | os.PathLike[str], texts: Iterable[str], *,
                 against: str | os.PathLike[str] | None = None, semantics: str = "mnn") -> DeviceTally:
    """Every output a device produces for ``file``, against HF ``tokenizers`` on ``against`` (a
    ``tokenizer.json`` or its folder) or, without it, the file's own HF semantics (named so).
    The chat output renders the built-in conversations of ``goldens`` with the file's template,
    as transformers and as MNN's engine."""
    from mtokspec.chat.compare import compare_chat
    from mtokspec.convert.inputs import load_hf
    from mtokspec.convert.mnn_target.goldens import CONVERSATIONS
    from mtokspec.convert.mnn_target.reference import FileReference, HFReference
    from mtokspec.convert.mnn_target.report import mnn_report
    from mtokspec.convert.mnn_target.variants import rows_of
    from mtokspec.convert.upgrade import upgrade

    tree = tree_of(file)
    if not isinstance(tree, t.MtokFile):
        tree = upgrade(tree).tree
    if against is not None:
        tj = load_hf(against).tokenizer_json
        ref: Any = HFReference(tj, tree)
        rows = rows_of(tj)
    else:
        ref, rows = FileReference(tree), []
    texts = list(texts)
    report = mnn_report(tree, ref, texts, rows, semantics=semantics)
    outputs = {o: (n - bad, n) for o, (bad, n) in report.agreement.items()}
    causes: dict[str, dict[str, int]] = {o: {} for o in outputs}
    for loss in report.losses:
        causes[loss.output][loss.rule] = loss.cases
    if tree.chat_template:
        convs = [(c["name"], c["messages"], c["add_generation_prompt"]) for c in CONVERSATIONS]
        chat = compare_chat(tree.chat_template, convs, bos_token=tree.bos_token, eos_token=tree.eos_token)
        outputs["chat"] = (sum(c.same for c in chat), len(chat))
        causes["chat"] = {}
        for c in chat:
            for r in c.rules or ([] if c.same else ["unexplained"]):
                causes["chat"][r] = causes["chat"].get(r, 0) + 1
    return DeviceTally(outputs, causes, ref.source)

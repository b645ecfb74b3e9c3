"""What MNN's runtime still does differently from HF on a ``--target mnn`` file: one loss per
divergence rule and output, with a minimal example.

Every probe text (:func:`~.reference.probe_texts`) goes through HF (:class:`~.reference.HFReference`)
and through the file under the ``mnn`` semantics, for the four outputs of MNN's runtime: ``encode``
(``encode(text)`` against HF with special tokens), ``raw`` (``encode(text, false)`` against HF
without), ``seq`` (``Tokenizer::decode(ids)`` of HF's ids against HF's decode) and ``stream`` (the
engine's per-id decode, joined).  Each differing case is put down to the rules
:mod:`mtokspec.divergences.explain` names, and, where the file's own HF semantics already differs
from HF (what the format cannot hold), to the ``format:`` cause of each of the folder's
:mod:`.variants` rows that is not exact at the stage that differs (the normalizer's output is
compared with HF's own normalizer), or to the stage itself where no row says (:func:`format_causes`).
Each rule's shortest differing text is
cut down, character by character, to a minimal one that still differs for that rule.
:func:`mnn_report` also counts, per output, the probes where MNN differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtokspec.format import tree as t
from mtokspec.convert.loss import Loss
from mtokspec.format.tree import walk_stage as walk
from mtokspec.runtime.mnn.versions import HEAD, version_of

__all__ = ["MnnLoss", "MnnReport", "OUTPUTS", "mnn_losses", "mnn_report", "rules_of"]

OUTPUTS = ("encode", "raw", "seq", "stream")


@dataclass(frozen=True, slots=True)
class MnnLoss(Loss):
    """A difference MNN's runtime keeps on the file: ``rule`` (a code of
    :mod:`mtokspec.divergences`, or a ``format:`` cause), ``output`` (one of
    :data:`OUTPUTS`), ``cases`` (differing probe texts of ``probes``), ``example`` (HF's answer
    and MNN's) and ``text``, the minimal text of the example."""

    rule: str = ""
    output: str = ""
    cases: int = 0
    probes: int = 0
    example: str = ""
    text: str = ""

    def __str__(self) -> str:
        return (f"{self.output}: [{self.rule}] differs on {self.cases} of {self.probes} probe texts; "
                f"e.g. {self.example}")


def _show(v) -> str:
    """A value for the report: text with invisible and combining characters escaped."""
    if isinstance(v, bytes):
        try:
            v = v.decode("utf-8")
        except UnicodeDecodeError:
            return f"bytes {v.hex()}"
    if isinstance(v, str):
        import unicodedata

        return "'" + "".join(c if c == " " or (c.isprintable() and unicodedata.category(c)[0] not in "MZC")
                             and c not in "'\\" else c.encode("unicode_escape").decode("ascii") if c != "'"
                             else "\\'" for c in v) + "'"
    return repr(v)


@dataclass(frozen=True)
class MnnReport:
    """``losses`` (one per output and rule), ``agreement`` (per output: ``(differing probes,
    probes)``) and ``differing`` (probes where any output differs)."""

    losses: list[MnnLoss]
    agreement: dict[str, tuple[int, int]]
    differing: int


class _Prober:
    def __init__(self, tree: t.MtokFile, ref, rows=(), semantics: str = "mnn"):
        from mtokspec.runtime.hf import HfTokenizer as Tokenizer
        from mtokspec.runtime.mnn.next import device_tokenizer

        self.mnn = device_tokenizer(tree, semantics)
        # the runtime the divergence rules describe (mnn, mnn-next); a release's own difference
        # from HEAD is its rule, mnn@VERSION
        release = version_of(semantics) not in (None, HEAD)
        self.head = device_tokenizer(tree, "mnn") if release else self.mnn
        self.hf_file = Tokenizer.from_tree(tree)
        self.ref = ref
        from mtokspec.convert.mnn_target.variants import Verdict

        self.rows = [v for v in rows if v.verdict is not Verdict.EXACT]

    def outputs(self, output: str, text: str):
        """``(HF's answer, MNN's answer)`` for one output of one text."""
        mnn, ref = self.mnn, self.ref
        if output in ("encode", "raw"):
            special = output == "encode"
            return ref.encode(text, special), mnn.encode(text, add_special_tokens=special)
        ids = ref.encode(text, False)
        return ref.decode(ids).encode("utf-8", "surrogatepass"), mnn.decode_bytes(ids, stream=output == "stream")

    def rules(self, output: str, text: str) -> list[str]:
        """The rules that explain a differing case (``[]``: none does)."""
        from mtokspec.errors import UndefinedInMnn

        try:
            return self._rules(output, text)
        except UndefinedInMnn:
            return ["mnn-undefined"]

    def _rules(self, output: str, text: str) -> list[str]:
        from mtokspec.divergences.explain import explain_decode, explain_encode

        hf_file, mnn, ref = self.hf_file, self.head, self.ref
        version = [self.mnn.semantics] if mnn is not self.mnn and self._version_differs(output, text) else []
        if output in ("encode", "raw"):
            special = output == "encode"
            want = ref.encode(text, special)
            rules = []
            if hf_file.encode(text, add_special_tokens=special) != want:
                # a version without the program: its ids after the text are not in the file
                lost = special and not self.mnn.version.post_processor and \
                    hf_file.encode(text, add_special_tokens=False) == ref.encode(text, False)
                rules += [self.mnn.semantics] if lost else self._format_rules(text)
            if hf_file.encode(text, add_special_tokens=special) != mnn.encode(text, add_special_tokens=special):
                rules += explain_encode(hf_file, mnn, text, special)
            return list(dict.fromkeys(rules + version))
        ids = ref.encode(text, False)
        stream = output == "stream"
        want = ref.decode(ids).encode("utf-8", "surrogatepass")
        file_text = hf_file.decode(ids, skip_special_tokens=False).encode("utf-8", "surrogatepass")
        rules = format_causes(self.rows, False, decode=True) if file_text != want else []
        if file_text != mnn.decode_bytes(ids, stream=stream):
            rules += explain_decode(hf_file, mnn, ids, stream=stream)
        return rules + version

    def _version_differs(self, output: str, text: str) -> bool:
        """Whether the version's answer differs from HEAD's."""
        if output in ("encode", "raw"):
            special = output == "encode"
            return self.mnn.encode(text, add_special_tokens=special) != self.head.encode(text, add_special_tokens=special)
        ids = self.ref.encode(text, False)
        stream = output == "stream"
        return self.mnn.decode_bytes(ids, stream=stream) != self.head.decode_bytes(ids, stream=stream)

    def _format_rules(self, text: str) -> list[str]:
        """What a case where the file's own HF semantics differs from HF is put down to
        (:func:`format_causes`), and a table's per-code-point mapping (``mnn-table-normalizer``:
        HF's own normalizer works per grapheme, composes, reorders) where the normalizer differs."""
        want = self.ref.normalize(text)
        norm = self.hf_file._normalize
        normalizer_differs = want is not None and (norm(text) if norm is not None else text) != want
        rules = format_causes(self.rows, normalizer_differs)
        if normalizer_differs and any(isinstance(n, t.TableNormalizer) for n, _ in walk(self.mnn.tree.normalizer)):
            rules.append("mnn-table-normalizer")
        return rules

    def differs(self, output: str, text: str) -> bool:
        """Whether MNN's answer differs from HF's (an answer MNN's behaviour leaves undefined
        differs: ``rules`` then names ``mnn-undefined``)."""
        from mtokspec.errors import UndefinedInMnn

        try:
            want, got = self.outputs(output, text)
        except UndefinedInMnn:
            return True
        return want != got

    def minimal(self, output: str, text: str, rule: str, budget: int = 400) -> str:
        """``text`` cut down (whole characters, greedily) while it still differs for ``rule``."""
        cur = text
        changed = True
        while changed and budget > 0:
            changed = False
            for width in (16, 4, 1):
                k = 0
                while k < len(cur) and budget > 0:
                    cand = cur[:k] + cur[k + width:]
                    budget -= 1
                    if cand != cur and self.differs(output, cand) and rule in self.rules(output, cand):
                        cur, changed = cand, True
                    else:
                        k += width
        return cur


def rules_of(tree: t.MtokFile, ref, rows, semantics: str, cases) -> list[list[str] | None]:
    """For each ``(output, text)`` of ``cases``: the rules that name why MNN (``semantics``) gives
    other than ``ref`` on ``tree`` (``[]``: none does), or None where it gives ``ref``'s answer;
    ``rows``: the folder's :mod:`.variants` rows, as :func:`mnn_report` takes them."""
    pr = _Prober(tree, ref, rows, semantics)
    return [pr.rules(o, text) if pr.differs(o, text) else None for o, text in cases]


def format_causes(rows, normalizer_differs: bool, decode: bool = False) -> list[str]:
    """The ``format:`` causes of a case where the written file's own HF semantics differs from HF:
    of the folder's :mod:`.variants` rows whose written form is not HF's (``format_loss``), those
    of the normalizer when its output differs, else those of the later stages (``decode``: the
    decoder's and the model's); without such a row the stage itself, ``format:normalizer`` or
    ``format:pre_tokenizer/model`` (``format:decoder``): never an anonymous difference."""
    lossy = [v for v in rows if v.format_loss]
    if decode:
        stages: tuple[str, ...] = ("decoder", "model")
        fallback = "format:decoder"
    elif normalizer_differs:
        stages, fallback = ("normalizer",), "format:normalizer"
    else:
        stages, fallback = ("pre_tokenizer", "model", "added_tokens", "post_processor"), "format:pre_tokenizer/model"
    return [v.cause for v in lossy if v.stage in stages or set(v.also_in) & set(stages)] or [fallback]


def mnn_losses(tree: t.MtokFile, ref, texts: list[str]) -> list[MnnLoss]:
    """The differences MNN keeps on ``tree`` over ``texts``, one :class:`MnnLoss` per output and rule."""
    return mnn_report(tree, ref, texts).losses


def _summary(rule: str):
    """``(component, summary)`` of a rule code: a divergence rule, or a ``format:`` row."""
    from mtokspec.convert.mnn_target.variants import by_cause
    from mtokspec.divergences import RULES

    r = RULES.get(rule)
    if r is not None:
        return r.component, r.summary
    version = version_of(rule)
    if version is not None:
        return "file", f"MNN {version.name} differs from HEAD: {version.describe()}"
    v = by_cause(rule)
    if v is not None:
        return v.stage, v.describe()
    return "file", rule


def mnn_report(tree: t.MtokFile, ref, texts: list[str], rows=(), semantics: str = "mnn") -> MnnReport:
    """:class:`MnnReport` of MNN on ``tree`` against ``ref`` over ``texts``; ``rows`` are the
    folder's :mod:`.variants` rows (:func:`~.variants.rows_of`), which name what the format lost;
    ``semantics``: the device runtime (``mnn``, ``mnn-next`` or ``mnn@VERSION``, whose own
    differences from HEAD are the rule ``mnn@VERSION``)."""
    from mtokspec.divergences import RULES
    from mtokspec.errors import ArgumentTypeError, UndefinedInMnn
    from mtokspec.args import instance, items

    instance("tree", tree, t.MtokFile, "an MtokFile tree")
    if not all(callable(getattr(ref, m, None)) for m in ("encode", "decode", "normalize")):
        raise ArgumentTypeError(f"ref: expected a reference (HFReference, FileReference), got {type(ref).__name__}")
    items("texts", texts, str, "strs")
    try:
        pr = _Prober(tree, ref, rows, semantics)
    except UndefinedInMnn as e:  # MNN cannot even load the file
        return MnnReport([MnnLoss("loader", f"load: {RULES['mnn-undefined'].summary}", "MNN's answer", True,
                                  "mnn-undefined", output, len(texts), len(texts), str(e), "") for output in OUTPUTS],
                         {o: (len(texts), len(texts)) for o in OUTPUTS}, len(texts))
    found: dict[tuple[str, str], list[str]] = {}
    bad: dict[str, int] = dict.fromkeys(OUTPUTS, 0)
    any_bad: set[int] = set()
    for output in OUTPUTS:
        for k, text in enumerate(texts):
            if not pr.differs(output, text):
                continue
            bad[output] += 1
            any_bad.add(k)
            for rule in dict.fromkeys(pr.rules(output, text)) or ["unexplained"]:
                found.setdefault((output, rule), []).append(text)
    losses = []
    for (output, rule), cases in found.items():
        text = pr.minimal(output, min(cases, key=len), rule)
        try:
            want, got = pr.outputs(output, text)
        except UndefinedInMnn as e:
            want, got = pr.ref.encode(text, output == "encode"), f"undefined ({e})"
        component, summary = _summary(rule)
        example = f"{_show(text)}: HF {_show(want)}, MNN {_show(got)}"
        losses.append(MnnLoss(component, f"{output}: {summary}", "MNN's answer", output in ("encode", "raw"), rule,
                              output, len(cases), len(texts), example, text))
    return MnnReport(losses, {o: (bad[o], len(texts)) for o in OUTPUTS}, len(any_bad))

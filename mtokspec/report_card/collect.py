"""Collect a :class:`~.data.Card` for a model folder or a tokenizer file.

The numbers come from the comparisons mtokspec already has, and this module only adapts them:

- ``encode`` and ``raw`` are :func:`mtokspec.compare.compare_runtimes` with and without special
  tokens (its ``matched``/``total``, ``unexplained`` and each mismatch's rules);
- ``stream`` and ``seq`` decode HF's ids (``encode(text, add_special_tokens=False)``) with MNN's
  two decodes and compare them with HF's ``decode(ids)`` (special tokens kept), the rules named by
  :func:`mtokspec.divergences.explain.explain_decode` -- as ``convert --target mnn``'s report and
  ``tools/mnn_agreement`` count them (:class:`_DecodeCase`; replace it by compare's own decode
  outputs once it has them);
- ``chat`` is :func:`mtokspec.chat.compare.compare_chat` on the file's chat template, its
  reference prompt transformers' rendering of the folder's own template when one is known.

A model folder is converted with ``--target mnn`` first and compared with its ``tokenizer.json``.
HF ``tokenizers`` answers when installed; without it the card says plainly that the reference is
mtokspec's own HF semantics of the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from mtokspec.compare import CompareReport, compare_runtimes
from mtokspec.errors import TokenizerError, UndefinedInMnn, hf_failure
from mtokspec.format import tree as t
from mtokspec.report_card.data import (ChatCase, Card, DeviceResult, Example, OutputResult, Reference,
                                       RuleCount, Side)

__all__ = ["collect_card", "UNEXPLAINED", "TEMPLATE_DIFFERS", "EXAMPLES_PER_RULE", "CHAT_CLOCK"]

UNEXPLAINED = "UNEXPLAINED"
"""The rule code of differing cases no divergence rule explains."""

TEMPLATE_DIFFERS = "chat-template-differs"
"""The code of a chat case where MNN renders the file's template as transformers does, but the
file's template is not the model folder's and transformers renders the two differently."""

EXAMPLES_PER_RULE = 3
"""How many side-by-side examples a rule keeps (the shortest texts)."""

CHAT_CLOCK = datetime(2024, 6, 1, 12, 0, 0)
"""The clock both chat renderings read (``strftime_now``), so a date never makes a difference."""

Progress = Callable[[str], None]


def _summary(code: str) -> str:
    from mtokspec.divergences import EXPORTER_LOSS, RULES

    if code in RULES:
        return RULES[code].summary
    if code == EXPORTER_LOSS:
        return ("the file's own HF semantics already differs from tokenizer.json: what the format "
                "does not hold (the converter reports it)")
    if code == TEMPLATE_DIFFERS:
        return ("the file's chat template is not the model folder's, and transformers renders the two "
                "differently (MNN renders the file's as transformers does)")
    if code == UNEXPLAINED:
        return "no divergence rule explains it (a gap in the registry, or in the model of MNN)"
    return code


def _rule_counts(cases: Sequence[tuple[Example, Sequence[str] | None]]) -> tuple[RuleCount, ...]:
    """Per rule, the differing cases it explains (a case counts for each of its rules) and the
    shortest :data:`EXAMPLES_PER_RULE` of them; most cases first."""
    by_rule: dict[str, list[Example]] = {}
    for example, rules in cases:
        for code in dict.fromkeys(rules or [UNEXPLAINED]):
            by_rule.setdefault(code, []).append(example)
    out = [RuleCount(code, _summary(code), len(exs),
                     tuple(sorted(exs, key=lambda e: (len(e.text), e.index))[:EXAMPLES_PER_RULE]))
           for code, exs in by_rule.items()]
    return tuple(sorted(out, key=lambda r: (-r.cases, r.code)))


class _Names:
    """Token texts by id: the file's own (:func:`~mtokspec.format.token_names.tokens_by_id`), or
    HF ``tokenizers``' ``id_to_token``."""

    def __init__(self, tree: t.TokenizerFile, hf: Any = None) -> None:
        from mtokspec.format.token_names import tokens_by_id

        self.table = tokens_by_id(tree) if hf is None else None
        self.hf = hf

    def __call__(self, ids: Sequence[int]) -> tuple[str | None, ...]:
        from mtokspec.format.token_names import token_text

        if self.table is not None:
            return tuple(token_text(self.table.get(i)) for i in ids)
        return tuple(self.hf.id_to_token(i) for i in ids)


def _encode_output(report: CompareReport, output: str, mnn_names: _Names, hf_names: _Names) -> OutputResult:
    """An encode output from :func:`~mtokspec.compare.compare_runtimes`' report (every mismatch kept)."""
    cases = []
    for m in report.mismatches:
        ex = Example(m.index, m.text, m.position, Side(tuple(m.theirs), hf_names(m.theirs)),
                     Side(tuple(m.ours), mnn_names(m.ours)))
        cases.append((ex, m.rules))
    return OutputResult(output, report.total, report.matched, report.unexplained, _rule_counts(cases))


def _text(b: bytes) -> str:
    """Decoded bytes as text; bytes that are not UTF-8 as ``\\x`` escapes."""
    return b.decode("utf-8", "backslashreplace")


class _DecodeCase:
    """One text's decode outputs: HF's ids, HF's decode of them, and MNN's stream and sequence
    decodes with the rules behind a difference (picklable: runs in workers)."""

    def __init__(self, tree: t.TokenizerFile, theirs: Any) -> None:
        self.tree, self.theirs = tree, theirs
        self._mnn: Any = None
        self._hf: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"tree": self.tree, "theirs": self.theirs, "_mnn": None, "_hf": None}

    def _tokenizers(self) -> tuple[Any, Any]:
        if self._mnn is None:
            from mtokspec.runtime.mnn import MnnTokenizer
            from mtokspec.tokenizer import Tokenizer

            self._mnn = MnnTokenizer.from_tree(self.tree)
            self._hf = Tokenizer.from_tree(self.tree)
        return self._mnn, self._hf

    def __call__(self, text: str) -> tuple[list[int], str, dict[str, tuple[str | None, str | None, list[str] | None]]]:
        from mtokspec.divergences import EXPORTER_LOSS
        from mtokspec.divergences.explain import explain_decode

        mnn, hf_file = self._tokenizers()
        if self.theirs is not None:
            with hf_failure(f"encode and decode {text[:20]!r}"):
                ids = self.theirs.encode(text, add_special_tokens=False).ids
                want = self.theirs.decode(ids, skip_special_tokens=False)
        else:
            ids = hf_file.encode(text, add_special_tokens=False)
            want = hf_file.decode(ids, skip_special_tokens=False)
        want_b = want.encode("utf-8", "surrogatepass")
        file_b = hf_file.decode(ids, skip_special_tokens=False).encode("utf-8", "surrogatepass")
        out: dict[str, tuple[str | None, str | None, list[str] | None]] = {}
        for output in ("stream", "seq"):
            stream = output == "stream"
            try:
                got = mnn.decode_bytes(ids, stream=stream)
            except UndefinedInMnn as e:
                out[output] = (None, str(e), ["mnn-undefined"])
                continue
            if got == want_b:
                out[output] = (_text(got), None, None)
                continue
            rules = [EXPORTER_LOSS] if file_b != want_b else []
            if file_b != got:
                try:
                    rules += explain_decode(hf_file, mnn, ids, stream=stream)
                except UndefinedInMnn:
                    rules.append("mnn-undefined")
            out[output] = (_text(got), None, rules)
        return ids, want, out


def _first_difference(a: str, b: str) -> int:
    return next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))


def _decode_outputs(tree: t.TokenizerFile, texts: list[str], theirs: Any, jobs: int) -> list[OutputResult]:
    from mtokspec.parallel import ordered_map

    results = ordered_map(_DecodeCase(tree, theirs), texts, jobs=jobs)
    outputs = []
    for output in ("stream", "seq"):
        same = unexplained = 0
        cases = []
        for i, (text, (ids, want, got)) in enumerate(zip(texts, results)):
            mnn_text, error, rules = got[output]
            if rules is None:
                same += 1
                continue
            unexplained += not rules
            pos = _first_difference(want, mnn_text) if mnn_text is not None else 0
            cases.append((Example(i, text, pos, Side(text=want), Side(text=mnn_text, error=error), tuple(ids)), rules))
        outputs.append(OutputResult(output, len(texts), same, unexplained, _rule_counts(cases)))
    return outputs


def _chat_output(file_template: str | None, tokens: tuple[str | None, str | None],
                 reference_template: str | None, reference_tokens: tuple[str | None, str | None],
                 conversations: list[tuple[str, list[dict[str, Any]], bool | None]]
                 ) -> tuple[OutputResult, tuple[ChatCase, ...]]:
    """The chat output: each conversation rendered by MNN's engine with the file's template and
    its ``(bos, eos)`` tokens (:func:`~mtokspec.chat.compare.compare_chat`, whose rules explain
    the device's rendering), against transformers' rendering of ``reference_template`` with
    ``reference_tokens`` (default: the file's template and tokens)."""
    from mtokspec.chat.compare import compare_chat
    from mtokspec.chat.rewrite import transformers_prompt

    if not file_template:
        note = ("the file holds no chat template" + (" (the model folder has one: a device cannot render it)"
                                                      if reference_template else ""))
        return OutputResult("chat", 0, 0, note=note), ()
    bos, eos = tokens
    ref_template = reference_template or file_template
    ref_bos, ref_eos = reference_tokens if reference_template else tokens
    compared = compare_chat(file_template, conversations, bos_token=bos, eos_token=eos, strftime_now=CHAT_CLOCK)
    cases = []
    for c, (_, messages, _) in zip(compared, conversations):
        reference, ref_error = c.transformers, c.transformers_error
        if ref_template != file_template:
            out = transformers_prompt(ref_template, messages, c.add_generation_prompt, ref_bos, ref_eos, CHAT_CLOCK)
            reference, ref_error = out, None
            if out.startswith("\0raise:"):
                reference, ref_error = None, f"raise_exception({out[len(chr(0) + 'raise:'):]!r})"
            elif out.startswith("\0"):
                reference, ref_error = None, out[len("\0error:"):]
        same = ref_error is None and c.mnn_error is None and reference == c.mnn
        first = None if same else _first_difference(reference or "", c.mnn or "")
        rules = tuple(c.rules) if not same else ()
        if not same and ref_template != file_template and c.same:
            rules = (TEMPLATE_DIFFERS,)  # the file's template renders alike on both; the folder's does not
        cases.append(ChatCase(c.name, c.add_generation_prompt, reference, c.mnn, ref_error, c.mnn_error, first, rules,
                              tuple(c.present) if not same else ()))
    examples = [(Example(i, c.name, c.first_difference or 0, Side(text=c.reference, error=c.reference_error),
                         Side(text=c.mnn, error=c.mnn_error)), list(c.rules))
                for i, c in enumerate(cases) if not c.same]
    result = OutputResult("chat", len(cases), sum(c.same for c in cases),
                          sum(1 for c in cases if not c.same and not c.rules), _rule_counts(examples))
    return result, tuple(cases)


def _tokenizer_json(against: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """``(tokenizer.json, model folder or None)`` of an ``--against`` path."""
    p = Path(against)
    if p.is_dir():
        tj = p / "tokenizer.json"
        if not tj.is_file():
            raise FileNotFoundError(f"{p}: no tokenizer.json in the folder")
        return tj, p
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    return p, p.parent if (p.parent / "tokenizer_config.json").is_file() else None


def _hf_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        return None
    return tokenizers


def collect_card(path: str | os.PathLike[str], *, against: str | os.PathLike[str] | None = None,
                 texts: list[str] | None = None, texts_name: str | None = None,
                 conversations: list[tuple[str, list[dict[str, Any]], bool | None]] | None = None,
                 device: DeviceResult | None = None, goldens: tuple[str, list[Any]] | None = None,
                 name: str | None = None, jobs: int = 1, progress: Progress | None = None) -> Card:
    """The card of ``path``: a model folder (its ``tokenizer.json``; converted with ``--target
    mnn``, compared against the folder) or a ``.mtok`` / ``tokenizer.txt`` (compared against
    ``against``, a ``tokenizer.json`` or a model folder, else against its own HF semantics).
    ``texts`` default to the converter's probe texts
    (:func:`mtokspec.convert.mnn_target.reference.probe_texts`); ``conversations`` to the goldens'
    (:data:`mtokspec.convert.mnn_target.goldens.CONVERSATIONS`); ``device`` is put on the card as
    it is, else ``goldens`` (``(source, lines)``: :func:`.device.read_goldens`) are run on the
    compared file (:func:`.device.run_goldens`).  Missing paths raise ``FileNotFoundError``; a
    file mtokspec cannot read or compare, an :class:`mtokspec.Error`; an argument of the wrong
    type, :class:`mtokspec.ArgumentTypeError` naming it."""
    import mtokspec
    from mtokspec.chat.compare import load_conversations
    from mtokspec.convert.mnn_target.goldens import CONVERSATIONS, chat_template_of
    from mtokspec.convert.mnn_target.reference import probe_texts
    from mtokspec.runtime.mnn import MNN_COMMIT

    from mtokspec.errors import ArgumentTypeError
    from mtokspec import args as a
    from mtokspec.format.files import tree_of

    a.path("path", path)
    if against is not None:
        a.path("against", against)
    a.items("texts", texts, str, "strs", optional=True)
    a.optional_text("texts_name", texts_name)
    a.items("conversations", conversations, (tuple, list), "(name, messages, add_generation_prompt) triples",
            optional=True)
    if device is not None:
        a.instance("device", device, DeviceResult, "a DeviceResult or None")
    if goldens is not None and not (isinstance(goldens, tuple) and len(goldens) == 2 and isinstance(goldens[0], str)
                                    and isinstance(goldens[1], list)):
        raise ArgumentTypeError("goldens: expected a (source, lines) pair or None")
    a.optional_text("name", name)
    if a.number("jobs", jobs, integral=True) < 1:
        raise ValueError(f"jobs must be a positive int, got {jobs!r}")
    if progress is not None and not callable(progress):
        raise ArgumentTypeError(f"progress: expected a callable or None, got {type(progress).__name__}")
    say = progress or (lambda _msg: None)
    src = Path(path)
    notes: list[str] = []
    folder: Path | None
    if src.is_dir():
        from mtokspec.convert import from_hf

        if against is not None:
            raise TokenizerError("a model folder is compared with its own tokenizer.json (no --against)")
        tj, folder = _tokenizer_json(src)
        say("converting with --target mnn")
        tree: t.TokenizerFile = from_hf(src, target="mnn").tree
        file_desc = f"converted from the folder with `mtokspec convert --target mnn` (mtokspec {mtokspec.__version__})"
        card_name = name or src.resolve().name
    else:
        tree = tree_of(src)
        tj_or_none = None
        folder = None
        if against is not None:
            tj, folder = _tokenizer_json(against)
            tj_or_none = tj
        file_desc = str(src)
        card_name = name or f"{src.resolve().parent.name}/{src.name}"
    tok_json: Path | None = tj if src.is_dir() else tj_or_none
    tokenizers = _hf_tokenizers()
    theirs = None
    if tok_json is not None and tokenizers is not None:
        try:
            theirs = tokenizers.Tokenizer.from_file(str(tok_json))
        except Exception as e:  # noqa: BLE001 - tokenizers raises a plain Exception for a file it refuses
            raise TokenizerError(f"{tok_json}: HF tokenizers cannot load it: {e}") from None
        reference = Reference("hf-tokenizers", f"HF tokenizers {tokenizers.__version__} loading {tok_json}",
                              tokenizers.__version__, str(tok_json))
    elif tok_json is not None:
        reference = Reference("mtokspec-hf", "mtokspec's own HF semantics of the file: HF tokenizers is not "
                              f"installed, so {tok_json} was not run (pip install tokenizers)", None, str(tok_json))
        notes.append("HF tokenizers is not installed: the reference is mtokspec's HF semantics, not HF's code")
        tok_json = None
    else:
        reference = Reference("mtokspec-hf", "mtokspec's own HF semantics of the file (no tokenizer.json given: "
                              "no HF code ran)")
    if texts is None:
        added = sorted(getattr(tree, "added_tokens", None) or [], key=lambda a: not a.special)
        texts = probe_texts([a.content for a in added])
        texts_desc = f"{len(texts)} probe texts (mtokspec.convert.mnn_target.reference.probe_texts)"
    else:
        texts_desc = f"{len(texts)} texts" + (f" from {texts_name}" if texts_name else "")
    mnn_names = _Names(tree)
    hf_names = _Names(tree, theirs) if theirs is not None else mnn_names
    outputs = []
    for output, special in (("encode", True), ("raw", False)):
        say(f"{output}: {len(texts)} texts")
        report = compare_runtimes(tree, texts, against=tok_json, add_special_tokens=special, jobs=jobs)
        outputs.append(_encode_output(report, output, mnn_names, hf_names))
    say(f"stream and sequence decode: {len(texts)} texts")
    outputs += _decode_outputs(tree, texts, theirs, jobs)
    file_template = getattr(tree, "chat_template", None) or None
    ref_template, ref_bos, ref_eos = chat_template_of(folder) if folder is not None else (None, None, None)
    file_tokens = ((tree.bos_token or None, tree.eos_token or None) if isinstance(tree, t.MtokFile)
                   else (None, None))
    convs = conversations if conversations is not None else load_conversations(list(CONVERSATIONS))
    say("chat")
    chat_result, chat_cases = _chat_output(file_template, file_tokens, ref_template, (ref_bos, ref_eos), convs)
    outputs.append(chat_result)
    chat_ref = ("transformers' rendering (mtokspec's sandboxed jinja2) of "
                + ("the model folder's chat template" if ref_template else "the file's chat template"))
    reference = Reference(reference.kind, reference.description, reference.version, reference.path, chat_ref)
    if device is None and goldens is not None:
        from mtokspec.report_card.device import run_goldens

        say("goldens")
        device = run_goldens(tree, goldens[1], card_name.split("/")[0], goldens[0])
    return Card(card_name, str(src), file_desc, reference, MNN_COMMIT, mtokspec.__version__, texts_desc,
                tuple(outputs), chat_cases, device, tuple(notes))

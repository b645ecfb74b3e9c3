"""Hostile runtime cases: small files and inputs that make a tokenizer amplify its text, backtrack
or loop over lengths the file chooses.  Each runs in a child process under an address-space limit
and a timeout, in three configurations: ``hf`` (compiled module), ``hf-pure`` (``MTOKSPEC_PURE=1``)
and ``mnn`` (``semantics="mnn"``).  An outcome is ``ok`` (a result), ``refused`` (an
``mtokspec.Error``), ``escape`` (any other exception, ``MemoryError`` included) or ``hang``.

    python -m tools.hostile [--timeout S] [--memory GB] [CASE ...]   # the table, with time and peak memory
    python -m tools.hostile --patterns N   # N drawn hostile patterns through every entry point
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hypothesis import strategies as st

from mtokspec.format import tree as t
from mtokspec.runtime.shared.bounds import PATTERN_DEPTH

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("hf", "hf-pure", "mnn")


@dataclass(frozen=True)
class Case:
    """``make()`` gives ``(tree, call)``: ``call(tokenizer)`` is the work measured (for ``upgrade``
    cases the tree is a legacy one and ``call`` receives it)."""

    make: Callable
    what: str
    kind: str = "tokenizer"  # or "upgrade", "check" (run once per path: the tree given to ``call``)


def _vocab(tokens) -> list[tuple[bytes, int]]:
    return sorted((tok.encode(), i) for i, tok in enumerate(tokens))


def _file(normalizer=None, pre=None, model=None, decoder=None, added=()) -> t.MtokFile:
    return t.MtokFile(header=t.make_header(), normalizer=normalizer or t.NoNormalizer(),
                      pre_tokenizer=pre or t.NoPreTokenizer(),
                      model=model or t.BPEModel(False, False, _vocab(["a", "aa", "b", "é"]), [(0, 0, 0)]),
                      decoder=decoder or t.FuseDecoder(), added_tokens=list(added))


def _encode(text: str):
    return lambda tok: tok.encode(text)


def _decode(ids: list[int]):
    return lambda tok: tok.decode(ids)


def _bpe_aa() -> t.BPEModel:
    return t.BPEModel(False, False, _vocab(["a", "aa", "aaaa", "b", "é"]), [(0, 0, 0), (1, 1, 1)])


def _split(pattern: str, text: str):
    return _file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated)), _encode(text)


def _added_segments(pattern: str, segment: str, count: int):
    sep = t.AddedToken(9, True, False, False, "<sep>")
    return (_file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated), added=[sep]),
            _encode("<sep>".join([segment] * count)))


def _wordpiece(word: str):
    vocab = _vocab(["[UNK]", "a", "##a", "##aa", "b"])
    model = t.WordPieceModel("[UNK]", "##", 2**31 - 1, vocab)
    return _file(pre=t.BertPreTokenizer(), model=model, decoder=t.WordPieceDecoder("##", True)), _encode(word)


def _unigram(piece_len: int, text: str):
    vocab = [(b"<unk>", 0, 0.0), (b"a", 1, -1.0), (b"a" * piece_len, 2, -2.0), (b"b", 3, -1.0)]
    return _file(model=t.UnigramModel(0, False, sorted(vocab)), decoder=t.FuseDecoder()), _encode(text)


def _legacy_bert(text: str):
    tokens = [b"[UNK]", b"a", b"##a", b"##aa", b"b"]
    return t.BertTxtFile(header=t.make_header(), tokens=tokens), _encode(text)


def _legacy_hf(text: str):
    tokens = [b"a", b"aa", b"aaaa", b"b"]
    return (t.HuggingFaceTxtFile(header=t.make_header(), tokens=tokens, merges=[b"a a", b"aa aa"]),
            _encode(text))


def _upgrade_long_piece(n: int):
    from mtokspec.convert.upgrade import upgrade

    piece = b"a" * n
    pieces = [(b"<unk>", "0", 2), (b"a", "-1", 1), (piece, "-2", 1)]
    return t.SentencePieceTxtFile(header=t.make_header(), pieces=pieces), lambda tree: upgrade(tree)


def _nested_repeats(k: int, count: int, tail: str = "") -> str:
    return "(?:" * k + "a" + "".join(f"{{{count}}})" for _ in range(k)) + tail  # (?:(?:a{c}){c}){c}...


NESTED_1000_CUBED = _nested_repeats(3, 1000)
DEEP_GROUPS = "(" * 3000 + "é" + ")" * 3000
ASTRAL = "".join(chr(0x10000 + i) for i in range(100_000))
ASTRAL_CLASS = "[" + ASTRAL[::4][:21_000] + "]"  # 21,000 distinct astral characters


def _checked(pattern: str):
    """validate and lint of a file whose Split holds ``pattern`` (run once, kind "check")."""
    def call(tree):
        import mtokspec

        findings = mtokspec.validate(tree) + mtokspec.lint(tree, target="mnn")
        bad = [f for f in findings if f.path.endswith(".pattern") and not f.message]
        assert not bad, bad
    return _file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated)), call


CASES: dict[str, Case] = {
    # issue 25
    "normalizer-replace-sequence": Case(
        lambda: (_file(normalizer=t.SequenceNormalizer([t.ReplaceNormalizer("a", "aa")] * 40)), _encode("a" * 64)),
        'normalizer Sequence of 40 Replace("a" -> "aa"), text "a" x 64'),
    "normalizer-table-sequence": Case(
        lambda: (_file(normalizer=t.SequenceNormalizer([t.TableNormalizer([(0xE9, "éé".encode())])] * 40)),
                 _encode("é" * 64)),
        "normalizer Sequence of 40 tables mapping é -> éé, text é x 64"),
    "normalizer-replace-huge": Case(
        lambda: (_file(normalizer=t.ReplaceNormalizer("a", "a" * 65535)), _encode("a" * 100_000)),
        'one Replace("a" -> 65,535 x "a"), text of 100,000 "a"'),
    "pre-tokenizer-bytelevel-sequence": Case(
        lambda: (_file(pre=t.SequencePreTokenizer([t.ByteLevelPreTokenizer(False)] * 40)), _encode("é" * 64)),
        "pre-tokenizer Sequence of 40 ByteLevel, text é x 64"),
    "decoder-replace-sequence": Case(
        lambda: (_file(decoder=t.SequenceDecoder([t.ReplaceDecoder("a", "aa")] * 40)), _decode([0] * 64)),
        'decoder Sequence of 40 Replace("a" -> "aa"), decode 64 ids'),
    "split-(a|a)*b-1MB": Case(lambda: _split("(a|a)*b", "a" * (1 << 20)), 'Split("(a|a)*b"), a 1 MB line'),
    "split-(a+)+é-31": Case(lambda: _split("(a+)+é", "a" * 30 + "!"),
                            'Split("(a+)+é") (std::wregex path), 31 characters'),
    "split-(a|aa)+é$-5000": Case(lambda: _split("(a|aa)+é$", "a" * 4999 + "!"),
                                 'Split("(a|aa)+é$"), 5,000 characters'),
    "split-[^é]+-30000": Case(lambda: _split("[^é]+", "b" * 30_000),
                              'Split("[^é]+") (std::wregex path), one match of 30,000 characters'),
    "bpe-no-pre-tokenizer-1MB": Case(lambda: (_file(model=_bpe_aa()), _encode("a" * (1 << 20))),
                                     'BPE with merges, no pre-tokenizer, a 1 MB line of "a"'),
    # issue 26
    "split-deadline-200-segments": Case(lambda: _added_segments("(a|aa)+é$", "a" * 26 + "!", 200),
                                        'Split("(a|aa)+é$"), 200 segments of 27 characters between added tokens'),
    "wordpiece-2^31-cap-10KB": Case(lambda: _wordpiece("a" * 10_000 + "b"),
                                    "WordPiece, max_input_chars_per_word 2^31-1, a 10 KB word"),
    "unigram-64KB-piece": Case(lambda: _unigram(1 << 16, "a" * (1 << 16) + "b" + "a" * 1000),
                               "Unigram with a 64 KB piece, 65 KB of text"),
    "legacy-bert-10KB": Case(lambda: _legacy_bert("a" * 10_000 + "b"), 'legacy BERT tokenizer.txt, 10 KB of "a"'),
    "legacy-bpe-100KB": Case(lambda: _legacy_hf("a" * 100_000), 'legacy BPE tokenizer.txt, 100 KB of "a"'),
    "added-lstrip-10KB-spaces": Case(
        lambda: (_file(added=[t.AddedToken(9, True, True, True, " "), t.AddedToken(10, True, False, False, "zz")]),
                 _encode(" " * 10_000 + "a")),
        'an added token " " with lstrip and rstrip, and one never found, 10 KB of spaces'),
    "upgrade-700KB-piece": Case(lambda: _upgrade_long_piece(700_000), "upgrade of a type 0 file with a 700 KB piece",
                                kind="upgrade"),
    # issue 33: patterns whose compiled size, nesting or classes are hostile
    "split-nested-repeats-1000^3": Case(lambda: _split(NESTED_1000_CUBED, "aaaa"),
                                        'Split("(?:(?:(?:a{1000}){1000}){1000})"), "aaaa"'),
    "split-nested-repeats-1000^3-é": Case(lambda: _split(NESTED_1000_CUBED + "é", "aaaa"),
                                          'Split("(?:(?:(?:a{1000}){1000}){1000})é") (std::wregex path), "aaaa"'),
    "split-3000-nested-groups-é": Case(lambda: _split(DEEP_GROUPS, "aé" * 10), "Split of 3,000 nested groups around é"),
    "split-21000-astral-class": Case(lambda: _split(ASTRAL_CLASS, ASTRAL),
                                     "Split of a 21,000-character astral class, 100,000 distinct astral characters"),
    "split-repeat-count-past-int": Case(lambda: _split("a{99999999999}b", "aaab"),
                                        'Split("a{99999999999}b"): a count past std::stoi\'s int'),
    "split-class-run-every-position": Case(lambda: _split("[^x]{50000}y", "a" * 100_000),
                                           'Split("[^x]{50000}y"), 100,000 "a": a 50,000-character class run at each place'),
    "check-nested-repeats-1000^3-é": Case(lambda: _checked(NESTED_1000_CUBED + "é"),
                                          "validate and lint of Split(\"(?:(?:(?:a{1000}){1000}){1000})é\")", kind="check"),
    "check-3000-nested-groups-é": Case(lambda: _checked(DEEP_GROUPS), "validate and lint of 3,000 nested groups",
                                       kind="check"),
}


# the cases each configuration ends in well under a second or two when bounded (the 1 MB lines
# and the length-driven loops are for the table)
QUICK = ["normalizer-replace-sequence", "normalizer-table-sequence", "normalizer-replace-huge",
         "pre-tokenizer-bytelevel-sequence", "decoder-replace-sequence", "split-(a+)+é-31",
         "split-(a|aa)+é$-5000", "split-[^é]+-30000", "split-deadline-200-segments",
         "wordpiece-2^31-cap-10KB", "added-lstrip-10KB-spaces", "unigram-64KB-piece",
         "split-nested-repeats-1000^3", "split-nested-repeats-1000^3-é", "split-3000-nested-groups-é",
         "split-repeat-count-past-int", "split-class-run-every-position", "check-nested-repeats-1000^3-é",
         "check-3000-nested-groups-é"]


@st.composite
def amplifying_files(draw) -> t.MtokFile:
    """A small file whose pipeline grows its text geometrically: a sequence of steps that each
    rewrite a character into a longer string holding it (Replace, tables, stacked ByteLevel,
    Metaspace with a replacement holding a space), in the normalizer, pre-tokenizer or decoder."""
    k = draw(st.integers(8, 40))
    grow = draw(st.integers(2, 4))
    where = draw(st.sampled_from(["normalizer", "pre_tokenizer", "decoder"]))
    if where == "normalizer":
        step = draw(st.sampled_from([t.ReplaceNormalizer("a", "a" * grow),
                                     t.TableNormalizer([(0xE9, "é".encode() * grow)]),
                                     t.PrependNormalizer("a" * grow)]))
        return _file(normalizer=t.SequenceNormalizer([step] * k))
    if where == "pre_tokenizer":
        step = draw(st.sampled_from([t.ByteLevelPreTokenizer(False), t.MetaspacePreTokenizer(" " * grow, True)]))
        return _file(pre=t.SequencePreTokenizer([step] * k))
    return _file(decoder=t.SequenceDecoder([t.ReplaceDecoder("a", "a" * grow)] * k))


@st.composite
def hostile_patterns(draw) -> str:
    """A pattern hostile to compile or to run: counted repeats nested (their product past any
    bound), groups nested deep (past mtokspec's parsers, near or past MNN's stack), huge classes
    (BMP or astral, with ranges, negated, repeated), or one of those inside another; with or
    without a non-ASCII literal (which sends it to MNN's ``std::wregex`` path)."""
    kind = draw(st.sampled_from(["repeats", "deep", "class", "mixed"]))
    tail = draw(st.sampled_from(["", "é", "b", "é$"]))
    if kind == "repeats":
        k = draw(st.integers(1, 4))
        counts = draw(st.lists(st.sampled_from([1, 2, 7, 100, 999, 1000, 5000, 100_000, 100_001, 2**31]),
                               min_size=k, max_size=k))
        atom = draw(st.sampled_from(["a", "[ab]", "a|b", "a+", "é"]))
        pattern = "(?:" * k + atom + "".join(f"{{{c}}})" for c in counts)
    elif kind == "deep":
        depth = draw(st.sampled_from([1, 10, PATTERN_DEPTH, PATTERN_DEPTH + 1, 200, 3000, 19_500]))
        opener = draw(st.sampled_from(["(", "(?:"]))
        quant = draw(st.sampled_from(["", "*", "+", "{2}"]))
        pattern = opener * depth + draw(st.sampled_from(["a", "é", "a+"])) + (")" + quant) * depth
    elif kind == "class":
        pattern = draw(_classes())
    else:
        inner = draw(_classes())
        k = draw(st.integers(1, 3))
        pattern = "(?:" * k + inner + "".join(f"{{{draw(st.sampled_from([2, 50, 1000]))}}})" for _ in range(k))
    return pattern + tail


@st.composite
def _classes(draw) -> str:
    size = draw(st.sampled_from([1, 100, 5000, 21_000, 70_000]))
    base = draw(st.sampled_from([0x10000, 0x4E00, 0x100]))
    step = draw(st.sampled_from([1, 4]))
    chars = [chr(base + i * step) for i in range(size)]
    if draw(st.booleans()):  # ranges
        chars = [f"{a}-{chr(ord(a) + 1)}" for a in chars[::3]]
    body = "".join(chars)
    return ("[^" if draw(st.booleans()) else "[") + body + "]" + draw(st.sampled_from(["", "+", "{3}", "*x"]))


HOSTILE_TEXTS = ["aaaa", "a" * 2000 + "!", "é" * 300 + "b", ASTRAL[:20_000], "ab" * 5000 + "é",
                 "".join(chr(0x4E00 + i) for i in range(20_000))]

CASE_SECONDS = 10.0  # every hostile case: an answer or the library's error within this (CPU time)


def check_entry_points(pattern: str, text: str) -> list[tuple[str, str, float]]:
    """Each entry point that compiles ``pattern`` (HF and MNN encode, ``validate``, ``lint``),
    with ``text``: ``(entry, outcome, CPU seconds)``; an exception other than ``mtokspec.Error``,
    an empty finding message or a case past :data:`CASE_SECONDS` raises ``AssertionError``."""
    import mtokspec

    tree = _file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated))
    calls = {"encode hf": lambda: mtokspec.Tokenizer.from_tree(tree).encode(text),
             "encode mnn": lambda: mtokspec.Tokenizer.from_tree(tree, semantics="mnn").encode(text),
             "validate": lambda: mtokspec.validate(tree), "lint": lambda: mtokspec.lint(tree, target="mnn")}
    out = []
    for entry, call in calls.items():
        t0 = time.process_time()
        try:
            result = call()
            outcome = "ok"
            if entry in ("validate", "lint"):
                assert all(f.message for f in result), (entry, pattern[:80], result)
        except mtokspec.Error as e:
            outcome = type(e).__name__
            assert str(e), (entry, pattern[:80])
        spent = time.process_time() - t0
        assert spent < CASE_SECONDS, f"{entry} of {pattern[:80]!r} on {text[:20]!r}: {spent:.1f} s"
        out.append((entry, outcome, spent))
    return out


def hf_folder(path: Path, pattern: str) -> Path:
    """An HF folder, made with ``tokenizers``, whose ``Split`` holds ``pattern`` (written into the
    saved ``tokenizer.json``: Oniguruma would refuse to compile some of them)."""
    from tokenizers import Regex, Tokenizer as HFTokenizer, models, pre_tokenizers

    path.mkdir(parents=True, exist_ok=True)
    tok = HFTokenizer(models.BPE(vocab={"a": 0, "b": 1, "aa": 2, "é": 3}, merges=[("a", "a")]))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("a+"), "isolated")
    tok.save(str(path / "tokenizer.json"))
    doc = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    doc["pre_tokenizer"]["pattern"]["Regex"] = pattern
    (path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    return path


def _goldens_are_hf(folder: Path) -> None:
    """``goldens`` of a hostile folder: every basic line is HF ``tokenizers``' own answer (asked here
    again, outside goldens), or goldens refuses with the library's error."""
    import tokenizers

    from mtokspec.convert.mnn_target.goldens import goldens

    lines = goldens(folder, list(HOSTILE_TEXTS), [])[0]
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for line in lines:
        if line.get("type") == "basic":
            raw = hf.encode(line["input"], add_special_tokens=False).ids
            assert line["ids_raw"] == raw, f"goldens ids_raw of {line['input'][:20]!r}: not HF's"
            assert line["ids_full"] == hf.encode(line["input"], add_special_tokens=True).ids
            assert line["decoded_full"] == hf.decode(raw, skip_special_tokens=False)


def fuzz_patterns(examples: int, folders: int, workdir: str) -> int:
    """The property run (in a child under a memory limit: ``tests/runtime/test_pattern_hostile.py``):
    ``examples`` drawn patterns through :func:`check_entry_points`, ``folders`` of them as HF
    folders through ``convert.from_hf(target="mnn")`` and ``goldens`` (its lines checked against HF
``tokenizers`` asked again); one JSON line per case."""
    from hypothesis import HealthCheck, given, settings

    import mtokspec
    from mtokspec.convert import from_hf

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hostile_patterns(), st.sampled_from(HOSTILE_TEXTS))
    def entry_points(pattern, text):
        for entry, outcome, spent in check_entry_points(pattern, text):
            print(json.dumps({"pattern": pattern[:60], "entry": entry, "outcome": outcome, "seconds": round(spent, 3)}),
                  flush=True)

    made = []

    @settings(max_examples=folders, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hostile_patterns())
    def convert_folders(pattern):
        folder = hf_folder(Path(workdir) / f"f{len(made)}", pattern)
        made.append(folder)
        for entry, call in (("convert mnn", lambda: from_hf(folder, target="mnn")),
                            ("goldens", lambda: _goldens_are_hf(folder))):
            t0 = time.process_time()
            try:
                call()
                outcome = "ok"
            except mtokspec.Error as e:
                outcome = type(e).__name__
            spent = time.process_time() - t0
            assert spent < CASE_SECONDS, f"{entry} of {pattern[:80]!r}: {spent:.1f} s"
            print(json.dumps({"pattern": pattern[:60], "entry": entry, "outcome": outcome,
                              "seconds": round(spent, 3)}), flush=True)

    entry_points()
    if folders:
        convert_folders()
    return 0


def _outcome(call) -> dict:
    import mtokspec

    t0 = time.perf_counter()
    try:
        call()
        outcome, detail = "ok", ""
    except mtokspec.Error as e:
        outcome, detail = "refused", f"{type(e).__name__}: {str(e)[:200]}"
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"outcome": outcome, "detail": detail, "seconds": seconds, "peak_kib": peak}


def run_child(names: list[str], config: str) -> int:
    """In the child: run each case, print one JSON line each (outcome, seconds, peak KiB so far).
    A name ``@PATH`` is a JSON file ``{"files": [...], "text": ...}``: each file encoded."""
    from mtokspec import Tokenizer

    semantics = "mnn" if config == "mnn" else "hf"
    for name in names:
        if name.startswith("@"):
            job = json.loads(Path(name[1:]).read_text(encoding="utf-8"))
            for path in job["files"]:
                def call(path=path):
                    Tokenizer.from_file(path, semantics=semantics).encode(job["text"])
                print(json.dumps({"case": path, **_outcome(call)}), flush=True)
            continue
        case = CASES[name]
        tree, work = case.make()
        if case.kind in ("upgrade", "check"):
            def call():
                work(tree)
        else:
            def call():
                work(Tokenizer.from_tree(tree, semantics=semantics))
        print(json.dumps({"case": name, **_outcome(call)}), flush=True)
    return 0


def run(names: list[str], config: str, timeout: float = 60.0, memory_gb: float = 4.0) -> dict[str, dict]:
    """Run cases in one child process under ``memory_gb`` of address space and ``timeout`` seconds:
    ``{case: result}``; a case the child never reported is a ``hang`` (timeout) or an ``escape``."""
    env = dict(os.environ)
    env.pop("MTOKSPEC_PURE", None)
    if config == "hf-pure":
        env["MTOKSPEC_PURE"] = "1"
    limit = int(memory_gb * (1 << 30))

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.perf_counter()
    hung = False
    with subprocess.Popen([sys.executable, "-m", "tools.hostile", "--child", config, *names], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=limit_memory) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            hung = True
    results = {}
    for line in out.splitlines():
        r = json.loads(line)
        results[r.pop("case")] = r
    last = (err.strip().splitlines() or ["(no output)"])[-1]
    missing = [n for n in names if n not in results and not n.startswith("@")]
    for n in missing[:1]:
        results[n] = {"outcome": "hang" if hung else "escape",
                      "detail": f"no answer in {timeout:.0f} s" if hung else last[:300],
                      "seconds": time.perf_counter() - t0, "peak_kib": None}
    if hung and not missing:
        results["<files>"] = {"outcome": "hang", "detail": f"no answer in {timeout:.0f} s", "seconds": timeout,
                              "peak_kib": None}
    elif p.returncode and not missing:
        results["<files>"] = {"outcome": "escape", "detail": last[:300], "seconds": 0.0, "peak_kib": None}
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.hostile", description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--memory", type=float, default=4.0, help="address-space limit in GB")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--child", metavar="CONFIG", help=argparse.SUPPRESS)
    ap.add_argument("--patterns", type=int, metavar="N", help="the property run instead: N drawn hostile patterns "
                    "through every entry point (and N // 8 HF folders through convert --target mnn)")
    args = ap.parse_args(argv)
    if args.patterns is not None:
        import tempfile

        with tempfile.TemporaryDirectory() as work:
            return fuzz_patterns(args.patterns, args.patterns // 8, work)
    if args.child:
        return run_child(args.cases, args.child)
    bad = 0
    print("| case | " + " | ".join(args.configs.split(",")) + " |")
    print("|---|" + "---|" * len(args.configs.split(",")))
    for name in args.cases or CASES:
        cells = []
        for config in args.configs.split(","):
            if CASES[name].kind in ("upgrade", "check") and config == "mnn":
                cells.append("n/a")
                continue
            r = run([name], config, args.timeout, args.memory)[name]
            bad += r["outcome"] in ("escape", "hang")
            peak = f", {r['peak_kib'] / 1024:.0f} MB" if r["peak_kib"] else ""
            cells.append(f"{r['outcome']} {r['seconds']:.2f} s{peak}")
            if r["outcome"] in ("escape", "hang"):
                cells[-1] += f" ({r['detail']})"
        print(f"| {CASES[name].what} | " + " | ".join(cells) + " |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

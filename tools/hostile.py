"""Hostile runtime cases: small files and inputs that make a tokenizer amplify its text, backtrack
or loop over lengths the file chooses.  Each runs in a child process under an address-space limit
and a timeout, in three configurations: ``hf`` (compiled module), ``hf-pure`` (``MTOKSPEC_PURE=1``)
and ``mnn`` (``semantics="mnn"``).  An outcome is ``ok`` (a result), ``refused`` (an
``mtokspec.Error``), ``escape`` (any other exception, ``MemoryError`` included) or ``hang``.

    python -m tools.hostile [--timeout S] [--memory GB] [CASE ...]   # the table, with time and peak memory
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

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("hf", "hf-pure", "mnn")


@dataclass(frozen=True)
class Case:
    """``make()`` gives ``(tree, call)``: ``call(tokenizer)`` is the work measured (for ``upgrade``
    cases the tree is a legacy one and ``call`` receives it)."""

    make: Callable
    what: str
    kind: str = "tokenizer"  # or "upgrade" (run once, the configuration's codec path)


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
}


# the cases each configuration ends in well under a second or two when bounded (the 1 MB lines
# and the length-driven loops are for the table)
QUICK = ["normalizer-replace-sequence", "normalizer-table-sequence", "normalizer-replace-huge",
         "pre-tokenizer-bytelevel-sequence", "decoder-replace-sequence", "split-(a+)+é-31",
         "split-(a|aa)+é$-5000", "split-[^é]+-30000", "split-deadline-200-segments",
         "wordpiece-2^31-cap-10KB", "added-lstrip-10KB-spaces", "unigram-64KB-piece"]


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
        if case.kind == "upgrade":
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
    args = ap.parse_args(argv)
    if args.child:
        return run_child(args.cases, args.child)
    bad = 0
    print("| case | " + " | ".join(args.configs.split(",")) + " |")
    print("|---|" + "---|" * len(args.configs.split(",")))
    for name in args.cases or CASES:
        cells = []
        for config in args.configs.split(","):
            if CASES[name].kind == "upgrade" and config == "mnn":
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

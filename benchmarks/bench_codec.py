"""Parse/build speed of the generated codec, against construct and HF `tokenizers` in the same run.

    python benchmarks/bench_codec.py [--repeat 5] [--vocab 150000]

Every ratio is a speed ratio, **the reference's time / ours** (above 1: faster than the reference).

Measures (best of --repeat; the construct reference once, it is slow):
  * every corpus file (mnn.mtok, and mnn.txt where the exporter wrote one) against HF
    `tokenizers.Tokenizer.from_str` of the folder's tokenizer.json (target: parse speed >= 4, i.e.
    at most a quarter of HF's time);
  * the largest corpus .mtok (../shared/corpus, skipped when absent) and
  * a synthetic BPE file with --vocab tokens and as many merges,
each as: mtokspec.parse, mtokspec.build, construct reference parse/build of the same bytes, and
HF from_str of an equivalent tokenizer.json.
Targets: parse >= 30x faster than construct and >= 4x HF from_str; build >= 20x faster than
construct.  With the compiled module (mtokspec/speedups.py) tables of strings are cut in C;
MTOKSPEC_PURE=1 measures the pure-Python codec.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mtokspec  # noqa: E402
from mtokspec.format import tree as t  # noqa: E402
from records import record  # noqa: E402
from spec import reference_build, reference_parse  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def byte_level_alphabet() -> list[str]:
    from mtokspec.format.byte_level import bytes_to_unicode

    return list(bytes_to_unicode().values())


def synthetic(n_vocab: int, seed: int = 7) -> tuple[bytes, str]:
    """A consistent byte-level BPE: every merge makes a token that is in the vocab."""
    rng = random.Random(seed)
    tokens = byte_level_alphabet()
    known = set(tokens)
    short = list(tokens)
    merges = []
    while len(tokens) < n_vocab:
        a, b = rng.choice(short), rng.choice(short)
        ab = a + b
        if ab in known:
            continue
        known.add(ab)
        tokens.append(ab)
        merges.append((a, b))
        if len(ab) <= 6:
            short.append(ab)
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tree = t.MtokFile(
        header=t.make_header(),
        pre_tokenizer=t.ByteLevelPreTokenizer(True),
        model=t.BPEModel(
            vocab=sorted((tok.encode(), i) for tok, i in vocab.items()),
            merges=sorted((vocab[a], vocab[b], r) for r, (a, b) in enumerate(merges)),
        ),
        decoder=t.ByteLevelDecoder(),
        chat_template="", eos_token="", flags=0, bos_token="", post_processor=t.PostProcessorProgram([]),
    )
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    return mtokspec.build(tree), json.dumps(doc, ensure_ascii=False)


def measure(label: str, data: bytes, hf_json: str | None, repeat: int) -> None:
    tree = mtokspec.parse(data)
    assert mtokspec.build(tree) == data
    p = best(lambda: mtokspec.parse(data), repeat)
    b = best(lambda: mtokspec.build(tree), repeat)
    t0 = time.perf_counter()
    ref_tree = reference_parse(data)
    rp = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference_build(ref_tree)
    rb = time.perf_counter() - t0
    def decode_all():
        fresh = mtokspec.parse(data)
        for table in (fresh.model.vocab, getattr(fresh.model, "merges", [])):
            len(table[:1])
        return fresh

    pd = best(decode_all, repeat)
    decoded = decode_all()
    bd = best(lambda: mtokspec.build(decoded), repeat)
    hf = None
    if hf_json is not None:
        try:
            from tokenizers import Tokenizer

            hf = best(lambda: Tokenizer.from_str(hf_json), repeat)
        except ImportError:
            pass
    print(f"\n{label}: {len(data):,} bytes, {len(tree.model.vocab):,} tokens, "
          f"{len(getattr(tree.model, 'merges', [])):,} merges")
    print(f"  parse  {p * 1e3:8.1f} ms   construct {rp * 1e3:8.1f} ms  -> {rp / p:5.1f}x faster (target >= 30x)")
    if hf is not None:
        print(f"         HF from_str {hf * 1e3:8.1f} ms  -> {hf / p:5.2f}x faster (target >= 4)")
    print(f"  build  {b * 1e3:8.1f} ms   construct {rb * 1e3:8.1f} ms  -> {rb / b:5.1f}x faster (target >= 20x)")
    print(f"  with every table row decoded (parse, then touch vocab and merges): parse {pd * 1e3:.1f} ms "
          f"({rp / pd:.1f}x construct" + (f", {hf / pd:.2f}x HF)" if hf else ")"))
    print(f"  build from decoded rows (no raw copy): {bd * 1e3:.1f} ms ({rb / bd:.1f}x construct)")


def corpus_files(corpus: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Parse of every corpus file against HF from_str of its folder's tokenizer.json."""
    from tokenizers import Tokenizer

    print("parse of every corpus file vs HF Tokenizer.from_str (speed = HF's time / ours, above 1 is faster)")
    print(f"{'file':40} {'bytes':>10} {'parse':>9} {'HF':>9} {'speed':>6}")
    speeds = []
    recorded: dict[str, dict[str, float]] = {}
    for folder in sorted(p for p in corpus.iterdir() if (p / "tokenizer.json").is_file()):
        doc = (folder / "tokenizer.json").read_text(encoding="utf-8")
        hf = best(lambda: Tokenizer.from_str(doc), repeat)
        for name in ("mnn.mtok", "mnn.txt"):
            f = folder / name
            if not f.is_file():
                continue
            data = f.read_bytes()
            ours = best(lambda: mtokspec.parse(data), repeat)
            speeds.append(hf / ours)
            recorded.setdefault(folder.name, {})["parse " + name.split(".")[1]] = round(hf / ours, 1)
            print(f"{folder.name + '/' + name:40} {len(data):10,} {ours * 1e3:7.2f}ms {hf * 1e3:7.2f}ms {hf / ours:6.2f}")
    print(f"lowest {min(speeds):.2f} (target >= 4)")
    return recorded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--vocab", type=int, default=150_000)
    ap.add_argument("--record", action="store_true",
                    help="merge the parse speeds into benchmarks/records/speed.json (the README's table)")
    args = ap.parse_args()
    corpus = ROOT.parent / "shared" / "corpus" / "tok"
    files = sorted(corpus.glob("*/mnn.mtok"), key=lambda p: p.stat().st_size) if corpus.is_dir() else []
    if files:
        parse = corpus_files(corpus, args.repeat)
        if args.record:
            record("parse", parse)
        big = files[-1]
        measure(f"corpus {big.parent.name}", big.read_bytes(),
                (big.parent / "tokenizer.json").read_text(encoding="utf-8"), args.repeat)
    else:
        print("corpus absent: skipping the corpus file")
    data, doc = synthetic(args.vocab)
    measure(f"synthetic BPE {args.vocab:,}/{args.vocab:,}", data, doc, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

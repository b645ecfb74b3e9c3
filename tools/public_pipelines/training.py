"""The trained models the folders are made from: the training text, the SentencePiece models and
the deterministic BPE / WordPiece vocabularies."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
# the training text: a prefix of each bench file (characters), ~300 KB in all
TEXT_BUDGET = (("bench_en.txt", 150_000), ("bench_zh.txt", 60_000), ("bench_code.txt", 90_000))
SPM_VOCAB = 3000
HF_VOCAB = 3000


class BuildError(Exception):
    """A folder its source cannot build (reported and skipped, never faked)."""


def training_lines(corpus: Path = CORPUS) -> list[str]:
    """The fixed training text: non-empty lines of the bench prefixes, in file order."""
    lines: list[str] = []
    for name, budget in TEXT_BUDGET:
        path = corpus / "text" / name
        if not path.is_file():
            raise BuildError(f"training text {path} is missing")
        lines += [x for x in path.read_text(encoding="utf-8")[:budget].splitlines() if x.strip()]
    return lines


# ----------------------------------------------------------------------------------- trained models

class Models:
    """Trains each small model once per build and hands out copies (keyed by its training options)."""

    def __init__(self, lines: list[str], work: Path) -> None:
        self.lines = lines
        self.work = work
        self._cache: dict[Any, Any] = {}

    def spm(self, model_type: str, byte_fallback: bool = False, **specials: Any) -> Path:
        """A SentencePiece model file trained with these options (special ids and pieces in ``specials``)."""
        key = ("spm", model_type, byte_fallback, tuple(sorted((k, str(v)) for k, v in specials.items())))
        if key not in self._cache:
            import sentencepiece as spm

            buf = io.BytesIO()
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(self.lines), model_writer=buf, model_type=model_type,
                vocab_size=SPM_VOCAB, num_threads=1, byte_fallback=byte_fallback, character_coverage=0.9995,
                shuffle_input_sentence=False, minloglevel=2, **specials)
            path = self.work / f"spm{len(self._cache)}.model"
            path.write_bytes(buf.getvalue())
            self._cache[key] = path
        return self._cache[key]

    def bpe(self, kind: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """A BPE vocab/merges without special tokens: ``bytelevel``, ``clip`` (byte-level, ``</w>``,
        lowercase), ``gpt`` (characters, ``</w>``, lowercase), ``herbert`` (characters, ``</w>``),
        ``prefix`` (characters, ``##`` continuing prefix)."""
        key = ("bpe", kind)
        if key not in self._cache:
            from tokenizers import Regex, normalizers, pre_tokenizers

            if kind == "bytelevel":
                self._cache[key] = train_bpe(self._words(None, pre_tokenizers.ByteLevel(add_prefix_space=False)),
                                             pre_tokenizers.ByteLevel.alphabet())
            elif kind == "clip":
                pre = pre_tokenizers.Sequence([
                    pre_tokenizers.Split(Regex(r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""),
                                         behavior="removed", invert=True),
                    pre_tokenizers.ByteLevel(add_prefix_space=False)])
                norm = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
                self._cache[key] = train_bpe(self._words(norm, pre), pre_tokenizers.ByteLevel.alphabet(),
                                             suffix="</w>")
            else:
                norm = normalizers.Lowercase() if kind == "gpt" else None
                words = self._words(norm, pre_tokenizers.BertPreTokenizer())
                if kind == "prefix":
                    self._cache[key] = train_bpe(words, _alphabet(words), prefix="##")
                else:
                    self._cache[key] = train_bpe(words, _alphabet(words), suffix="</w>")
        vocab, merges = self._cache[key]
        return dict(vocab), list(merges)

    def wordpiece(self, lowercase: bool, prefix: str = "##") -> list[str]:
        """A WordPiece vocabulary (tokens in id order, no special tokens), trained the way HF's
        ``WordPieceTrainer`` does: BPE with a continuing-subword prefix, the vocab kept."""
        key = ("wp", lowercase, prefix)
        if key not in self._cache:
            from tokenizers import normalizers, pre_tokenizers

            words = self._words(normalizers.BertNormalizer(lowercase=lowercase), pre_tokenizers.BertPreTokenizer())
            self._cache[key] = list(train_bpe(words, _alphabet(words), prefix=prefix)[0])
        return list(self._cache[key])

    def _words(self, normalizer: Any, pre: Any) -> Counter[str]:
        counts: Counter[str] = Counter()
        for line in self.lines:
            text = normalizer.normalize_str(line) if normalizer is not None else line
            counts.update(w for w, _ in pre.pre_tokenize_str(text))
        return counts


ALPHABET = 600


def _alphabet(words: Counter[str]) -> list[str]:
    """The ``ALPHABET`` most frequent characters of the words (count, then code point)."""
    counts: Counter[str] = Counter()
    for w, n in words.items():
        for c in w:
            counts[c] += n
    return [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:ALPHABET]]


def train_bpe(words: Counter[str], alphabet: list[str], vocab_size: int = HF_VOCAB, prefix: str = "",
              suffix: str = "") -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A BPE vocab and merges, deterministically: the most frequent pair first, ties by the pair's strings.

    HF's trainers break count ties in hash order, so two runs differ; this is their algorithm (words of
    ``alphabet`` characters, ``prefix`` on each non-first symbol, ``suffix`` on the last) with a total order.
    Words holding a character outside ``alphabet`` are left out.  The vocab is the alphabet (with its
    affixed forms, sorted) and then each merge's result in merge order.
    """
    import heapq

    allowed = set(alphabet)
    seqs: list[list[str]] = []
    freq: list[int] = []
    for w, n in sorted(words.items()):
        if not w or any(c not in allowed for c in w):
            continue
        sym = [c if i == 0 else prefix + c for i, c in enumerate(w)]
        sym[-1] += suffix
        seqs.append(sym)
        freq.append(n)
    vocab: dict[str, int] = {}
    for t in sorted({t for sym in seqs for t in sym} | set(alphabet)):
        vocab[t] = len(vocab)
    pairs: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for i, sym in enumerate(seqs):
        for pair in zip(sym, sym[1:]):
            pairs[pair] += freq[i]
            where.setdefault(pair, set()).add(i)
    heap = [(-c, p) for p, c in pairs.items()]
    heapq.heapify(heap)
    merges: list[tuple[str, str]] = []
    while len(vocab) < vocab_size and heap:
        c, pair = heapq.heappop(heap)
        if -c != pairs.get(pair, 0) or c == 0:
            continue
        a, b = pair
        new = a + (b[len(prefix):] if prefix and b.startswith(prefix) else b)
        merges.append(pair)
        vocab.setdefault(new, len(vocab))
        touched: Counter[tuple[str, str]] = Counter()
        for i in sorted(where.pop(pair, ())):
            sym, n = seqs[i], freq[i]
            for p in zip(sym, sym[1:]):
                pairs[p] -= n
                touched[p] += 0
            out: list[str] = []
            k = 0
            while k < len(sym):
                if k + 1 < len(sym) and sym[k] == a and sym[k + 1] == b:
                    out.append(new)
                    k += 2
                else:
                    out.append(sym[k])
                    k += 1
            seqs[i] = out
            for p in zip(out, out[1:]):
                pairs[p] += n
                touched[p] += 0
                where.setdefault(p, set()).add(i)
        for p in sorted(touched):
            if pairs[p] > 0:
                heapq.heappush(heap, (-pairs[p], p))
            else:
                pairs.pop(p, None)
    return vocab, merges


def with_specials(front: list[str], trained: dict[str, int] | list[str], back: list[str] = ()) -> dict[str, int]:
    """A vocab with ``front`` specials first, the trained tokens next (their order kept), ``back`` last."""
    tokens = list(trained) if isinstance(trained, list) else [t for t, _ in sorted(trained.items(), key=lambda kv: kv[1])]
    out: dict[str, int] = {}
    for t in [*front, *tokens, *back]:
        out.setdefault(t, len(out))
    return out

"""Hugging Face model folders whose pipelines were written by code mtokspec did not write.

    python -m tools.public_pipelines OUT_DIR [--only NAME ...] [--list]

Two kinds of folder, each ``tokenizer.json`` + ``tokenizer_config.json`` + ``special_tokens_map.json``:

* ``converter``: transformers' own slow->fast converters (``transformers.convert_slow_tokenizer``)
  applied to small models trained here: SentencePiece models (``sentencepiece``, unigram and bpe,
  byte fallback for the Llama/Gemma kind) and BPE / WordPiece vocabularies (HF ``tokenizers``).
  A converter takes a slow tokenizer; transformers 5 has none, so a ``Slow`` stand-in carries exactly
  the attributes the converter reads.  The Llama kind's BOS template is written by transformers'
  ``TokenizersBackend.update_post_processor``, as the fast class does on load.
* ``tokenizers-api``: pipeline variants public models use that no converter produces, assembled with
  the ``tokenizers`` API on the same trained vocabularies.

Deterministic: fixed training text (the corpus's bench_*.txt prefixes), ``num_threads=1``; a build
twice gives the same bytes.  A folder its converter cannot build is reported (``SKIP``) and not
written.  Needs ``sentencepiece``, ``protobuf``, ``tokenizers`` and ``transformers``.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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


# ----------------------------------------------------------------------------------- the stand-in

class Slow:
    """The attributes of a slow tokenizer that a converter reads, and its id look-ups.

    ``ids`` maps tokens to the ids the converted tokenizer gives them (the converter's vocab, then the
    extra special tokens in order); ``<name>_token_id`` reads it for ``<name>_token``.
    """

    def __init__(self, ids: dict[str, int] | None = None, **attrs: Any) -> None:
        self.ids: dict[str, int] = dict(ids or {})
        self.__dict__.update(attrs)

    def __getattr__(self, name: str) -> Any:
        if name.endswith("_token_id") and not name.startswith("_"):
            token = self.__dict__.get(name[: -len("_id")])
            return None if token is None else self.convert_tokens_to_ids(token)
        raise AttributeError(name)

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, list):
            return [self.convert_tokens_to_ids(t) for t in tokens]
        if str(tokens) not in self.ids:
            raise BuildError(f"the converter asks for the id of {tokens!r}, which the model does not have")
        return self.ids[str(tokens)]

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        inv = {v: k for k, v in self.ids.items()}
        return [inv[i] for i in ids] if isinstance(ids, list) else inv[ids]


# ----------------------------------------------------------------------------------- folder specs

@dataclass
class Spec:
    """One folder: how its tokenizer is made and what its config says."""

    name: str
    source: str                      # converter class name, or "tokenizers-api"
    build: Callable[[Models], Any]   # -> tokenizers.Tokenizer
    config: dict[str, Any] = field(default_factory=dict)
    chat: str | None = None          # a /work/shared/corpus/chat/*.json file whose "template" is used


def _spm_ids(conv: Any, extras: list[str]) -> dict[str, int]:
    vocab = conv.vocab(conv.proto)
    ids: dict[str, int] = {}
    for i, (piece, _) in enumerate(vocab):
        ids.setdefault(piece, i)
    for t in extras:
        ids.setdefault(t, len(vocab) + extras.index(t))
    return ids


def spm_converter(cls_name: str, spm: Callable[[Models], Path], extras: tuple[str, ...] = (),
                  bos_template: dict[str, Any] | None = None, provisional: dict[str, int] | None = None,
                  **attrs: Any) -> Callable[[Models], Any]:
    """Build with ``transformers.convert_slow_tokenizer.<cls_name>`` on a SentencePiece model.

    ``extras`` are special tokens the fast class adds after the converter's vocab (language codes,
    masks); ``provisional`` ids the converter's ``vocab()`` reads before the vocab exists (Pegasus's
    mask); ``bos_template`` the ``add_bos_token``/``add_eos_token`` flags ``update_post_processor`` reads.
    """

    def build(models: Models) -> Any:
        import transformers.convert_slow_tokenizer as cst
        from tokenizers import AddedToken

        import sentencepiece

        path = spm(models)
        sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        # provisional ids (the model's own) for the converters whose vocab() already asks for some
        stand = Slow(ids={sp.id_to_piece(i): i for i in range(sp.get_piece_size())} | (provisional or {}),
                     vocab_file=str(path), **attrs)
        conv = getattr(cst, cls_name)(stand)
        stand.ids = _spm_ids(conv, list(extras))
        tok = conv.converted()
        if extras:
            tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extras])
            for t in extras:
                if tok.token_to_id(t) != stand.ids[t]:
                    raise BuildError(f"{t!r} got id {tok.token_to_id(t)}, the converter was told {stand.ids[t]}")
        return _with_template(tok, attrs, bos_template)

    return build


def v5_class(cls_name: str, spm: Callable[[Models], Path], **kwargs: Any) -> Callable[[Models], Any]:
    """Build with transformers 5's own class: ``<cls_name>.from_pretrained`` on a folder holding only the
    SentencePiece ``tokenizer.model`` (the class writes the pipeline), ``kwargs`` as its config."""

    def build(models: Models) -> Any:
        import shutil
        import tempfile

        import transformers

        with tempfile.TemporaryDirectory() as d:
            shutil.copy(spm(models), Path(d) / "tokenizer.model")
            fast = getattr(transformers, cls_name).from_pretrained(d, **kwargs)
        return fast._tokenizer

    return build


def _with_template(tok: Any, attrs: dict[str, Any], flags: dict[str, Any] | None) -> Any:
    if flags is None:
        return tok
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=attrs.get("bos_token"),
                                   eos_token=attrs.get("eos_token"), unk_token=attrs.get("unk_token"))
    fast.add_bos_token = flags.get("add_bos_token", False)
    fast.add_eos_token = flags.get("add_eos_token", False)
    fast.update_post_processor()
    return fast._tokenizer


def bpe_converter(cls_name: str, kind: str, front: list[str], back: list[str] = (), extras: tuple[str, ...] = (),
                  ids_extra: Callable[[Slow], dict[str, Any]] | None = None, **attrs: Any) -> Callable[[Models], Any]:
    """Build with a BPE converter (``encoder``/``bpe_ranks``) on a vocab trained with ``Models.bpe(kind)``."""

    def build(models: Models) -> Any:
        import transformers.convert_slow_tokenizer as cst
        from tokenizers import AddedToken

        trained, merges = models.bpe(kind)
        encoder = with_specials(front, trained, list(back))
        ids = dict(encoder)
        for t in extras:
            ids.setdefault(t, len(encoder) + extras.index(t))
        stand = Slow(ids=ids, encoder=encoder, bpe_ranks={m: i for i, m in enumerate(merges)}, **attrs)
        if ids_extra is not None:
            stand.__dict__.update(ids_extra(stand))
        tok = getattr(cst, cls_name)(stand).converted()
        specials = [t for t in [*front, *back] if t.startswith(("<", "[")) and len(t) > 2]
        if specials:
            tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
        if extras:
            tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extras])
            for t in extras:
                if tok.token_to_id(t) != ids[t]:
                    raise BuildError(f"{t!r} got id {tok.token_to_id(t)}, the converter was told {ids[t]}")
        return tok

    return build


def wp_converter(cls_name: str, lowercase: bool, front: list[str], chinese: bool = True,
                 **attrs: Any) -> Callable[[Models], Any]:
    """Build with a WordPiece converter (``vocab``, ``basic_tokenizer``) on a trained WordPiece vocab."""

    def build(models: Models) -> Any:
        import transformers.convert_slow_tokenizer as cst
        from tokenizers import AddedToken

        vocab = with_specials(front, models.wordpiece(lowercase))
        basic = Slow(do_lower_case=lowercase, tokenize_chinese_chars=chinese, strip_accents=None)
        stand = Slow(ids=vocab, vocab=vocab, basic_tokenizer=basic, **attrs)
        tok = getattr(cst, cls_name)(stand).converted()
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in front])
        return tok

    return build


# SentencePiece training options per family: the ids and pieces each family's real model has
def _spm(model_type: str, byte_fallback: bool = False, **specials: Any) -> Callable[[Models], Path]:
    return lambda m: m.spm(model_type, byte_fallback, **specials)


SPM_DEFAULT = _spm("unigram")                                         # <unk> <s> </s>
SPM_BPE = _spm("bpe")
SPM_ALBERT = _spm("unigram", pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols="[CLS],[SEP],[MASK]")
SPM_T5 = _spm("unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
SPM_XLNET = _spm("unigram", unk_id=0, bos_id=1, eos_id=2,
                 control_symbols="<cls>,<sep>,<pad>,<mask>,<eod>,<eop>")
SPM_BARTHEZ = _spm("unigram", bos_id=0, pad_id=1, eos_id=2, unk_id=3)
SPM_PEGASUS = _spm("unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
SPM_BIGBIRD = _spm("unigram", pad_id=0, eos_id=1, bos_id=2, unk_id=3, user_defined_symbols="[SEP],[CLS],[MASK]")
SPM_DEBERTA = _spm("unigram", pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]", eos_id=2,
                   eos_piece="[SEP]", unk_id=3, unk_piece="[UNK]", control_symbols="[MASK]")
# the Llama and Gemma models' own normalizer spec: no NFKC table, spaces kept, digits split
_LLAMA_NORM = dict(normalization_rule_name="identity", remove_extra_whitespaces=False, split_digits=True,
                   allow_whitespace_only_pieces=True)
SPM_LLAMA = _spm("bpe", True, **_LLAMA_NORM)
_GEMMA_IDS = dict(pad_id=0, pad_piece="<pad>", eos_id=1, eos_piece="<eos>", bos_id=2, bos_piece="<bos>", unk_id=3,
                  user_defined_symbols="<start_of_turn>,<end_of_turn>", add_dummy_prefix=False, **_LLAMA_NORM)
SPM_GEMMA = _spm("bpe", True, **_GEMMA_IDS)
SPM_GEMMA_UNIGRAM = _spm("unigram", True, **_GEMMA_IDS)
SPM_UNIGRAM_BF = _spm("unigram", True, **_LLAMA_NORM)

S, ES, U, P = "<s>", "</s>", "<unk>", "<pad>"
FAIRSEQ = dict(bos_token=S, eos_token=ES, unk_token=U, pad_token=P, cls_token=S, sep_token=ES, mask_token="<mask>")
BERT = dict(unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
BERT_FRONT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_FRONT = [S, P, ES, U]
PHI3_EXTRAS = ("<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>", "<|placeholder3|>",
               "<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>")
QWEN_EXTRAS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
WHISPER_EXTRAS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|translate|>", "<|transcribe|>",
                  "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>")


def _nllb_codes() -> tuple[str, ...]:
    from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES
    return tuple(FAIRSEQ_LANGUAGE_CODES)


def _mbart_codes(name: str) -> tuple[str, ...]:
    import transformers.convert_slow_tokenizer as cst
    return tuple(getattr(cst, name))


def _lazy_extras(cls_name: str, spm: Callable[[Models], Path], extras: Callable[[], tuple[str, ...]],
                 **attrs: Any) -> Callable[[Models], Any]:
    return lambda m: spm_converter(cls_name, spm, extras(), **attrs)(m)


def converter_specs() -> list[Spec]:
    """The folders transformers' converters write."""
    llama = dict(bos_token=S, eos_token=ES, unk_token=U)
    gemma = dict(bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>")
    return [
        Spec("albert", "AlbertConverter", spm_converter("AlbertConverter", SPM_ALBERT, do_lower_case=True,
             keep_accents=False), dict(tokenizer_class="AlbertTokenizer", do_lower_case=True, keep_accents=False,
             bos_token="[CLS]", eos_token="[SEP]", unk_token=U, sep_token="[SEP]", pad_token=P, cls_token="[CLS]",
             mask_token="[MASK]")),
        Spec("fnet", "AlbertConverter", spm_converter("AlbertConverter", SPM_ALBERT, do_lower_case=False,
             keep_accents=True), dict(tokenizer_class="FNetTokenizer", do_lower_case=False, keep_accents=True,
             unk_token=U, sep_token="[SEP]", pad_token=P, cls_token="[CLS]", mask_token="[MASK]")),
        Spec("xlnet", "XLNetConverter", spm_converter("XLNetConverter", SPM_XLNET, do_lower_case=False,
             keep_accents=False), dict(tokenizer_class="XLNetTokenizer", bos_token=S, eos_token=ES, unk_token=U,
             sep_token="<sep>", pad_token=P, cls_token="<cls>", mask_token="<mask>", padding_side="left")),
        Spec("t5", "T5Converter", spm_converter("T5Converter", SPM_T5, _extra_ids=100,
             extras=tuple(f"<extra_id_{i}>" for i in range(99, -1, -1))),
             dict(tokenizer_class="T5Tokenizer", eos_token=ES, unk_token=U, pad_token=P, extra_ids=100)),
        Spec("udop", "UdopConverter", spm_converter("UdopConverter", SPM_T5),
             dict(tokenizer_class="UdopTokenizer", eos_token=ES, unk_token=U, pad_token=P)),
        Spec("reformer", "ReformerConverter", spm_converter("ReformerConverter", SPM_BPE),
             dict(tokenizer_class="ReformerTokenizer", eos_token=ES, unk_token=U)),
        Spec("reformer-unigram", "ReformerConverter", spm_converter("ReformerConverter", SPM_DEFAULT),
             dict(tokenizer_class="ReformerTokenizer", eos_token=ES, unk_token=U)),
        Spec("xlm-roberta", "XLMRobertaConverter", spm_converter("XLMRobertaConverter", SPM_DEFAULT),
             dict(tokenizer_class="XLMRobertaTokenizer", **FAIRSEQ)),
        Spec("camembert", "CamembertConverter", spm_converter("CamembertConverter", SPM_DEFAULT),
             dict(tokenizer_class="CamembertTokenizer", **FAIRSEQ)),
        Spec("mbart", "MBartConverter",
             _lazy_extras("MBartConverter", SPM_DEFAULT, lambda: (*_mbart_codes("MBART_LANGUAGES"), "<mask>")),
             dict(tokenizer_class="MBartTokenizer", src_lang="en_XX", **FAIRSEQ)),
        Spec("mbart50", "MBart50Converter",
             _lazy_extras("MBart50Converter", SPM_DEFAULT, lambda: (*_mbart_codes("MBART50_LANGUAGES"), "<mask>")),
             dict(tokenizer_class="MBart50Tokenizer", src_lang="en_XX", **FAIRSEQ)),
        Spec("nllb", "NllbConverter", _lazy_extras("NllbConverter", SPM_DEFAULT,
             lambda: (*_nllb_codes(), "<mask>")),
             dict(tokenizer_class="NllbTokenizer", src_lang="eng_Latn", **FAIRSEQ)),
        Spec("seamless-m4t", "SeamlessM4TConverter", spm_converter("SeamlessM4TConverter", SPM_DEFAULT,
             extras=("__eng__", "__cmn__", "<mask>"), unk_token=U),
             dict(tokenizer_class="SeamlessM4TTokenizer", src_lang="eng", **FAIRSEQ)),
        Spec("xglm", "XGLMConverter", spm_converter("XGLMConverter", SPM_DEFAULT),
             dict(tokenizer_class="XGLMTokenizer", bos_token=S, eos_token=ES, unk_token=U, pad_token=P,
                  sep_token=ES, cls_token=ES)),
        Spec("barthez", "BarthezConverter", spm_converter("BarthezConverter", SPM_BARTHEZ, extras=("<mask>",)),
             dict(tokenizer_class="BarthezTokenizer", **FAIRSEQ)),
        Spec("pegasus", "PegasusConverter", spm_converter("PegasusConverter", SPM_PEGASUS, pad_token=P,
             eos_token=ES, mask_token="<mask_2>", mask_token_sent="<mask_1>", offset=103,
             provisional={"<mask_2>": 3}),
             dict(tokenizer_class="PegasusTokenizer", pad_token=P, eos_token=ES, unk_token=U,
                  mask_token="<mask_2>", mask_token_sent="<mask_1>", offset=103)),
        Spec("bigbird", "BigBirdConverter", spm_converter("BigBirdConverter", SPM_BIGBIRD),
             dict(tokenizer_class="BigBirdTokenizer", bos_token=S, eos_token=ES, unk_token=U, pad_token=P,
                  sep_token="[SEP]", cls_token="[CLS]", mask_token="[MASK]")),
        Spec("rembert", "RemBertConverter", spm_converter("RemBertConverter", SPM_ALBERT, do_lower_case=False,
             keep_accents=False), dict(tokenizer_class="RemBertTokenizer", bos_token="[CLS]", eos_token="[SEP]",
             unk_token=U, sep_token="[SEP]", pad_token=P, cls_token="[CLS]", mask_token="[MASK]")),
        Spec("deberta-v2", "DebertaV2Converter", spm_converter("DebertaV2Converter", SPM_DEBERTA,
             do_lower_case=False, split_by_punct=False), dict(tokenizer_class="DebertaV2Tokenizer",
             bos_token="[CLS]", eos_token="[SEP]", **BERT)),
        Spec("deberta-v2-punct", "DebertaV2Converter", spm_converter("DebertaV2Converter", SPM_DEBERTA,
             do_lower_case=True, split_by_punct=True), dict(tokenizer_class="DebertaV2Tokenizer",
             do_lower_case=True, split_by_punct=True, bos_token="[CLS]", eos_token="[SEP]", **BERT)),
        Spec("llama", "LlamaConverter", spm_converter("LlamaConverter", SPM_LLAMA,
             bos_template=dict(add_bos_token=True), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, add_eos_token=False, legacy=True, **llama),
             chat="llamacpp-test-mistralai-Mistral-7B-Instruct-v0.2-mistralai-v1-template-with-a-system-prompt.json"),
        Spec("llama-nonlegacy", "LlamaConverter", spm_converter("LlamaConverter", SPM_LLAMA, legacy=False,
             add_prefix_space=True, bos_template=dict(add_bos_token=True), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, legacy=False, **llama),
             chat="llamacpp-test-bofenghuang-vigogne-2-70b-chat.json"),
        Spec("llama-noprefix", "LlamaConverter", spm_converter("LlamaConverter", SPM_LLAMA, legacy=True,
             add_prefix_space=False, bos_template=dict(add_bos_token=True, add_eos_token=True), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, add_eos_token=True,
                  add_prefix_space=False, **llama)),
        Spec("phi3", "LlamaConverter", spm_converter("LlamaConverter", SPM_LLAMA, extras=PHI3_EXTRAS,
             legacy=False, bos_template=dict(add_bos_token=False), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=False, legacy=False, bos_token=S,
                  eos_token="<|endoftext|>", unk_token=U, pad_token="<|endoftext|>"),
             chat="llamacpp-test-Phi-3-mini.json"),
        # the Llama converter on a unigram model runs (its BPE path is what fails above)
        Spec("llama-unigram", "LlamaConverter", spm_converter("LlamaConverter", SPM_UNIGRAM_BF,
             bos_template=dict(add_bos_token=True), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, legacy=True, **llama)),
        Spec("llama-unigram-nonlegacy", "LlamaConverter", spm_converter("LlamaConverter", SPM_UNIGRAM_BF,
             legacy=False, add_prefix_space=True, bos_template=dict(add_bos_token=True), **llama),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, legacy=False, **llama)),
        Spec("gemma", "GemmaConverter", spm_converter("GemmaConverter", SPM_GEMMA,
             bos_template=dict(add_bos_token=True), **gemma),
             dict(tokenizer_class="GemmaTokenizer", add_bos_token=True, **gemma),
             chat="llamacpp-google-gemma-2-2b-it.json"),
        Spec("gemma-unigram", "GemmaConverter", spm_converter("GemmaConverter", SPM_GEMMA_UNIGRAM,
             bos_template=dict(add_bos_token=True), **gemma),
             dict(tokenizer_class="GemmaTokenizer", add_bos_token=True, **gemma),
             chat="llamacpp-google-gemma-2-2b-it.json"),
        # transformers 5's own classes from a bare tokenizer.model (the path a folder without tokenizer.json takes)
        Spec("llama-v5", "LlamaTokenizer", v5_class("LlamaTokenizer", SPM_LLAMA, add_bos_token=True),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, legacy=False, **llama),
             chat="llamacpp-test-mistralai-Mistral-7B-Instruct-v0.2-mistralai-v1-template-with-a-system-prompt.json"),
        Spec("llama-v5-legacy", "LlamaTokenizer", v5_class("LlamaTokenizer", SPM_LLAMA, add_bos_token=True,
             legacy=True), dict(tokenizer_class="LlamaTokenizer", add_bos_token=True, legacy=True, **llama),
             chat="llamacpp-test-bofenghuang-vigogne-2-70b-chat.json"),
        Spec("codellama-v5", "CodeLlamaTokenizer", v5_class("CodeLlamaTokenizer", SPM_LLAMA),
             dict(tokenizer_class="CodeLlamaTokenizer", add_bos_token=True, **llama)),
        Spec("phi3-v5", "LlamaTokenizer", v5_class("LlamaTokenizer", SPM_LLAMA, add_bos_token=False,
             extra_special_tokens=list(PHI3_EXTRAS), eos_token="<|endoftext|>", pad_token="<|endoftext|>"),
             dict(tokenizer_class="LlamaTokenizer", add_bos_token=False, bos_token=S, eos_token="<|endoftext|>",
                  unk_token=U, pad_token="<|endoftext|>"), chat="llamacpp-test-Phi-3-mini.json"),
        Spec("gemma-v5", "GemmaTokenizer", v5_class("GemmaTokenizer", SPM_GEMMA),
             dict(tokenizer_class="GemmaTokenizer", add_bos_token=True, **gemma),
             chat="llamacpp-google-gemma-2-2b-it.json"),
        Spec("t5-v5", "T5Tokenizer", v5_class("T5Tokenizer", SPM_T5),
             dict(tokenizer_class="T5Tokenizer", eos_token=ES, unk_token=U, pad_token=P, extra_ids=100)),
        Spec("xlm-roberta-v5", "XLMRobertaTokenizer", v5_class("XLMRobertaTokenizer", SPM_DEFAULT),
             dict(tokenizer_class="XLMRobertaTokenizer", **FAIRSEQ)),
        # BPE vocab.json / merges.txt converters
        Spec("gpt2", "GPT2Converter", bpe_converter("GPT2Converter", "bytelevel", [], ["<|endoftext|>"],
             add_prefix_space=False), dict(tokenizer_class="GPT2Tokenizer", bos_token="<|endoftext|>",
             eos_token="<|endoftext|>", unk_token="<|endoftext|>")),
        Spec("opt", "GPT2Converter", bpe_converter("GPT2Converter", "bytelevel", [S, P, ES, U],
             add_prefix_space=False, add_bos_token=True, bos_token=ES),
             dict(tokenizer_class="GPT2Tokenizer", bos_token=ES, eos_token=ES, unk_token=U, pad_token=P,
                  add_bos_token=True)),
        Spec("codegen", "GPT2Converter", bpe_converter("GPT2Converter", "bytelevel", [], ["<|endoftext|>"],
             add_prefix_space=True), dict(tokenizer_class="CodeGenTokenizer", add_prefix_space=True,
             bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>")),
        Spec("roberta", "RobertaConverter", bpe_converter("RobertaConverter", "bytelevel", ROBERTA_FRONT,
             ["<mask>"], add_prefix_space=False, **FAIRSEQ), dict(tokenizer_class="RobertaTokenizer", **FAIRSEQ)),
        Spec("layoutlmv3", "RobertaConverter", bpe_converter("RobertaConverter", "bytelevel", ROBERTA_FRONT,
             ["<mask>"], add_prefix_space=True, **FAIRSEQ),
             dict(tokenizer_class="LayoutLMv3Tokenizer", add_prefix_space=True, **FAIRSEQ)),
        Spec("deberta", "DebertaConverter", bpe_converter("DebertaConverter", "bytelevel", BERT_FRONT,
             add_prefix_space=False), dict(tokenizer_class="DebertaTokenizer", bos_token="[CLS]",
             eos_token="[SEP]", **BERT)),
        Spec("blenderbot", "BlenderbotConverter", bpe_converter("BlenderbotConverter", "bytelevel", ROBERTA_FRONT,
             ["<mask>"], add_prefix_space=True, eos_token=ES),
             dict(tokenizer_class="BlenderbotTokenizer", add_prefix_space=True, **FAIRSEQ)),
        Spec("markuplm", "MarkupLMConverter", bpe_converter("MarkupLMConverter", "bytelevel", ROBERTA_FRONT,
             ["<mask>"], add_prefix_space=False, **FAIRSEQ),
             dict(tokenizer_class="MarkupLMTokenizer", **FAIRSEQ)),
        Spec("whisper", "WhisperConverter", bpe_converter("WhisperConverter", "bytelevel", [], [],
             extras=WHISPER_EXTRAS, add_prefix_space=False, eos_token="<|endoftext|>",
             ids_extra=lambda s: {"prefix_tokens": s.convert_tokens_to_ids(
                 ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"])}),
             dict(tokenizer_class="WhisperTokenizer", bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                  unk_token="<|endoftext|>", pad_token="<|endoftext|>")),
        Spec("qwen2", "Qwen2Converter", bpe_converter("Qwen2Converter", "bytelevel", [], [], extras=QWEN_EXTRAS,
             add_prefix_space=False), dict(tokenizer_class="Qwen2Tokenizer", bos_token=None,
             eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None), chat="ortx-qwen2.5.json"),
        Spec("clip", "CLIPConverter", bpe_converter("CLIPConverter", "clip", [],
             ["<|startoftext|>", "<|endoftext|>"], unk_token="<|endoftext|>", bos_token="<|startoftext|>",
             eos_token="<|endoftext|>"), dict(tokenizer_class="CLIPTokenizer", bos_token="<|startoftext|>",
             eos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>")),
        Spec("openai-gpt", "OpenAIGPTConverter", bpe_converter("OpenAIGPTConverter", "gpt", [U], unk_token=U),
             dict(tokenizer_class="OpenAIGPTTokenizer", unk_token=U)),
        Spec("herbert", "HerbertConverter", bpe_converter("HerbertConverter", "herbert", [S, P, ES, U],
             ["<mask>"], **FAIRSEQ), dict(tokenizer_class="HerbertTokenizer", **FAIRSEQ)),
        # WordPiece vocab.txt converters
        Spec("bert-uncased", "BertConverter", wp_converter("BertConverter", True, BERT_FRONT, **BERT),
             dict(tokenizer_class="BertTokenizer", do_lower_case=True, **BERT)),
        Spec("bert-cased", "BertConverter", wp_converter("BertConverter", False, BERT_FRONT, **BERT),
             dict(tokenizer_class="BertTokenizer", do_lower_case=False, **BERT)),
        Spec("bert-nochinese", "BertConverter", wp_converter("BertConverter", False, BERT_FRONT, chinese=False,
             **BERT), dict(tokenizer_class="BertTokenizer", do_lower_case=False, tokenize_chinese_chars=False,
             **BERT)),
        Spec("funnel", "FunnelConverter", wp_converter("FunnelConverter", True,
             [U, "<sep>", P, "<cls>", "<mask>", S, ES], unk_token=U, sep_token="<sep>", cls_token="<cls>"),
             dict(tokenizer_class="FunnelTokenizer", do_lower_case=True, unk_token=U, sep_token="<sep>",
                  pad_token=P, cls_token="<cls>", mask_token="<mask>", bos_token=S, eos_token=ES)),
        Spec("mpnet", "MPNetConverter", wp_converter("MPNetConverter", True, [S, P, ES, U, "<mask>"],
             unk_token="[UNK]" if False else U, cls_token=S, sep_token=ES),
             dict(tokenizer_class="MPNetTokenizer", do_lower_case=True, **FAIRSEQ)),
        Spec("layoutlmv2", "LayoutLMv2Converter", wp_converter("LayoutLMv2Converter", True, BERT_FRONT, **BERT),
             dict(tokenizer_class="LayoutLMv2Tokenizer", do_lower_case=True, **BERT)),
        Spec("splinter", "SplinterConverter", wp_converter("SplinterConverter", False,
             [*BERT_FRONT, "[QUESTION]", "."], question_token="[QUESTION]", padding_side="right", **BERT),
             dict(tokenizer_class="SplinterTokenizer", do_lower_case=False, question_token="[QUESTION]", **BERT)),
    ]


# ----------------------------------------------------------------------------------- variants

def _wp(models: Models, prefix: str = "##", lowercase: bool = True) -> Any:
    from tokenizers import AddedToken, Tokenizer, models as m

    vocab = with_specials(BERT_FRONT, models.wordpiece(lowercase, prefix))
    tok = Tokenizer(m.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix=prefix))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in BERT_FRONT])
    return tok


def _bl(models: Models, **kw: Any) -> Any:
    from tokenizers import AddedToken, Tokenizer, models as m

    trained, merges = models.bpe("bytelevel")
    vocab = with_specials(ROBERTA_FRONT, trained, ["<mask>"])
    tok = Tokenizer(m.BPE(vocab, merges, **kw))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in [*ROBERTA_FRONT, "<mask>"]])
    return tok


def _unigram(models: Models, byte_fallback: bool = False) -> Any:
    import sentencepiece as spm
    from tokenizers import AddedToken, Tokenizer, models as m

    sp = spm.SentencePieceProcessor(model_file=str(models.spm("unigram", byte_fallback)))
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tok = Tokenizer(m.Unigram(vocab, unk_id=sp.unk_id(), byte_fallback=byte_fallback))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (U, S, ES)])
    return tok


def _variant(base: Callable[[Models], Any], normalizer: Any = None, pre: Any = None, decoder: Any = None,
             post: Any = None) -> Callable[[Models], Any]:
    """A base model with pipeline parts; each part is a factory ``() -> component`` (or ``tok -> component``)."""

    def build(models: Models) -> Any:
        tok = base(models)
        for attr, part in (("normalizer", normalizer), ("pre_tokenizer", pre), ("decoder", decoder),
                           ("post_processor", post)):
            if part is not None:
                setattr(tok, attr, part(tok))
        return tok

    return build


def variant_specs() -> list[Spec]:
    """Pipelines public models use that no converter writes, on the trained vocabularies."""
    from tokenizers import Regex, decoders as d, normalizers as n, pre_tokenizers as p, processors as pp

    def bert_post(t: Any) -> Any:
        return pp.BertProcessing(("[SEP]", t.token_to_id("[SEP]")), ("[CLS]", t.token_to_id("[CLS]")))

    def roberta_post(t: Any) -> Any:
        return pp.RobertaProcessing((ES, t.token_to_id(ES)), (S, t.token_to_id(S)), trim_offsets=True,
                                    add_prefix_space=True)

    def bos_post(t: Any) -> Any:
        return pp.TemplateProcessing(single=f"{S} $A", pair=f"{S} $A {S} $B", special_tokens=[(S, t.token_to_id(S))])

    def seq_post(t: Any) -> Any:
        return pp.Sequence([pp.ByteLevel(trim_offsets=False), bos_post(t)])

    def wp_dec(t: Any) -> Any:
        return d.WordPiece(prefix="##")

    def bl_dec(t: Any) -> Any:
        return d.ByteLevel()

    bert_cfg = dict(tokenizer_class="BertTokenizer", **BERT)
    rob_cfg = dict(tokenizer_class="RobertaTokenizer", **FAIRSEQ)
    sp_cfg = dict(tokenizer_class="PreTrainedTokenizerFast", bos_token=S, eos_token=ES, unk_token=U)
    out = [
        Spec("v-bert-punct-contiguous", "tokenizers-api", _variant(
            _wp, lambda t: n.BertNormalizer(lowercase=True),
            lambda t: p.Sequence([p.BertPreTokenizer(), p.Punctuation(behavior="contiguous")]), wp_dec, bert_post),
             bert_cfg),
        Spec("v-wp-strip-digits", "tokenizers-api", _variant(
            _wp, lambda t: n.Sequence([n.Strip(left=True, right=True), n.NFD(), n.Lowercase(), n.StripAccents()]),
            lambda t: p.Sequence([p.Whitespace(), p.Digits(individual_digits=True)]), wp_dec, bert_post),
             bert_cfg),
        Spec("v-wp-digits-grouped", "tokenizers-api", _variant(
            _wp, lambda t: n.Sequence([n.Strip(left=False, right=True), n.Lowercase()]),
            lambda t: p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(individual_digits=False)]),
            wp_dec, bert_post), bert_cfg),
        Spec("v-wp-prefix-at", "tokenizers-api", _variant(
            lambda m: _wp(m, prefix="@@"), lambda t: n.Lowercase(), lambda t: p.BertPreTokenizer(),
            lambda t: d.WordPiece(prefix="@@", cleanup=False), bert_post), bert_cfg),
        Spec("v-wp-unicode-scripts", "tokenizers-api", _variant(
            _wp, lambda t: n.Sequence([n.NFKC(), n.Lowercase()]),
            lambda t: p.Sequence([p.UnicodeScripts(), p.Whitespace()]), wp_dec, bert_post), bert_cfg),
        Spec("v-wp-char-delimiter", "tokenizers-api", _variant(
            _wp, lambda t: n.Sequence([n.Replace(Regex(r"\s+"), " "), n.Lowercase()]),
            lambda t: p.CharDelimiterSplit(" "), wp_dec, bert_post), bert_cfg),
        Spec("v-bytelevel-prefix", "tokenizers-api", _variant(
            _bl, None, lambda t: p.ByteLevel(add_prefix_space=True), bl_dec, roberta_post), rob_cfg),
        Spec("v-bytelevel-replace-ws", "tokenizers-api", _variant(
            _bl, lambda t: n.Sequence([n.Replace(Regex(r"\s+"), " "), n.Strip(left=True, right=False)]),
            lambda t: p.ByteLevel(add_prefix_space=False), bl_dec, seq_post), rob_cfg),
        Spec("v-bytelevel-ignore-merges", "tokenizers-api", _variant(
            lambda m: _bl(m, ignore_merges=True), None,
            lambda t: p.Sequence([p.Split(Regex(r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
                                                 r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""),
                                           behavior="isolated"), p.ByteLevel(add_prefix_space=False, use_regex=False)]),
            bl_dec, bos_post), rob_cfg),
        Spec("v-bytelevel-template", "tokenizers-api", _variant(
            _bl, lambda t: n.NFKC(), lambda t: p.ByteLevel(add_prefix_space=False, trim_offsets=False), bl_dec,
            lambda t: pp.TemplateProcessing(single=f"{S} $A {ES}", pair=f"{S} $A {ES} {ES} $B {ES}",
                                            special_tokens=[(S, t.token_to_id(S)), (ES, t.token_to_id(ES))])),
             rob_cfg),
    ]
    for beh in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
        for invert in (False, True):
            pattern = Regex(r"\s+") if not invert else Regex(r"[\p{L}\p{N}]+|[^\s\p{L}\p{N}]+")
            out.append(Spec(f"v-split-{beh.replace('_', '-')}{'-invert' if invert else ''}", "tokenizers-api",
                            _variant(_bl, None, lambda t, pat=pattern, b=beh, inv=invert: p.Sequence([
                                p.Split(pat, behavior=b, invert=inv), p.ByteLevel(add_prefix_space=False,
                                                                                  use_regex=False)]),
                                     bl_dec, lambda t: pp.ByteLevel(trim_offsets=False)), rob_cfg))
    out.append(Spec("v-split-string-space", "tokenizers-api", _variant(
        _bl, None, lambda t: p.Sequence([p.Split(" ", behavior="merged_with_next"),
                                         p.ByteLevel(add_prefix_space=False, use_regex=False)]), bl_dec), rob_cfg))
    for scheme in ("first", "never", "always"):
        for split in (True, False):
            out.append(Spec(f"v-metaspace-{scheme}-{'split' if split else 'nosplit'}", "tokenizers-api", _variant(
                _unigram, lambda t: n.Sequence([n.Strip(left=False, right=True), n.Replace(Regex(" {2,}"), " ")]),
                lambda t, s=scheme, sp=split: p.Metaspace(replacement="\u2581", prepend_scheme=s, split=sp),
                lambda t, s=scheme: d.Metaspace(replacement="\u2581", prepend_scheme=s), bos_post), sp_cfg))
    out += [
        Spec("v-unigram-byte-fallback", "tokenizers-api", _variant(
            lambda m: _unigram(m, byte_fallback=True), lambda t: n.Replace(" ", "\u2581"),
            lambda t: p.Split("\u2581", behavior="merged_with_next"),
            lambda t: d.Sequence([d.Replace("\u2581", " "), d.ByteFallback(), d.Fuse(),
                                  d.Strip(content=" ", left=1, right=0)]), bos_post), sp_cfg),
        Spec("v-unigram-strip-decoder", "tokenizers-api", _variant(
            _unigram, lambda t: n.Sequence([n.Prepend("\u2581"), n.Replace(" ", "\u2581")]), None,
            lambda t: d.Sequence([d.Replace("\u2581", " "), d.Fuse(), d.Strip(content=" ", left=1, right=0)]),
            bos_post), sp_cfg),
        Spec("v-bpe-suffix-whitespace", "tokenizers-api", _bpe_suffix_variant, dict(
            tokenizer_class="PreTrainedTokenizerFast", unk_token=U)),
        Spec("v-bpe-continuing-prefix", "tokenizers-api", _bpe_prefix_variant, dict(
            tokenizer_class="PreTrainedTokenizerFast", unk_token=U)),
        Spec("v-bpe-fuse-unk", "tokenizers-api", _bpe_fuse_unk_variant, dict(
            tokenizer_class="PreTrainedTokenizerFast", unk_token=U)),
        Spec("v-ctc-chars", "tokenizers-api", _ctc_variant, dict(
            tokenizer_class="Wav2Vec2CTCTokenizer", unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")),
    ]
    return out


def _bpe_suffix_variant(models: Models) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders as d, models as m, normalizers as n, pre_tokenizers as p

    trained, merges = models.bpe("herbert")
    vocab = with_specials([U], trained)
    tok = Tokenizer(m.BPE(vocab, merges, unk_token=U, end_of_word_suffix="</w>", dropout=None))
    tok.add_special_tokens([AddedToken(U, special=True, normalized=False)])
    tok.normalizer = n.Sequence([n.NFC(), n.Strip()])
    tok.pre_tokenizer = p.Sequence([p.WhitespaceSplit(), p.Punctuation(behavior="isolated")])
    tok.decoder = d.BPEDecoder(suffix="</w>")
    return tok


def _bpe_prefix_variant(models: Models) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders as d, models as m, normalizers as n, pre_tokenizers as p

    trained, merges = models.bpe("prefix")
    vocab = with_specials([U], trained)
    tok = Tokenizer(m.BPE(vocab, merges, unk_token=U, continuing_subword_prefix="##"))
    tok.add_special_tokens([AddedToken(U, special=True, normalized=False)])
    tok.normalizer = n.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = p.BertPreTokenizer()
    tok.decoder = d.WordPiece(prefix="##")
    return tok


def _bpe_fuse_unk_variant(models: Models) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders as d, models as m, pre_tokenizers as p

    trained, merges = models.bpe("herbert")
    # the same merges without the suffix: a character BPE whose rare characters fall to one fused <unk>
    vocab = with_specials([U], {k: v for k, v in trained.items() if not k.endswith("</w>")})
    merges = [(a, b) for a, b in merges if a in vocab and b in vocab and a + b in vocab]
    tok = Tokenizer(m.BPE(vocab, merges, unk_token=U, fuse_unk=True))
    tok.add_special_tokens([AddedToken(U, special=True, normalized=False)])
    tok.pre_tokenizer = p.Whitespace()
    tok.decoder = d.Fuse()
    return tok


def _ctc_variant(models: Models) -> Any:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders as d, models as m, normalizers as n, pre_tokenizers as p

    chars = sorted({c for line in models.lines for c in line.lower() if c.isascii() and (c.isalnum() or c in "'")})
    vocab = with_specials(["<pad>", "<s>", "</s>", "<unk>", "|"], chars)
    tok = Tokenizer(m.WordLevel(vocab, unk_token="<unk>"))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<pad>", "<s>", "</s>", "<unk>")])
    tok.normalizer = n.Sequence([n.Lowercase(), n.Replace(" ", "|")])
    tok.pre_tokenizer = p.Split(Regex("."), behavior="isolated")
    tok.decoder = d.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True)
    return tok


def all_specs() -> list[Spec]:
    """Every folder, converters first."""
    return converter_specs() + variant_specs()


# ----------------------------------------------------------------------------------- writing

def _kind(obj: Any) -> str:
    if obj is None:
        return "-"
    if obj.get("type") == "Sequence":
        inner = obj.get("normalizers") or obj.get("pretokenizers") or obj.get("decoders") or obj.get("processors") or []
        return "Seq[" + ",".join(_kind(x) for x in inner) + "]"
    return str(obj.get("type"))


def summary(tokenizer_json: dict[str, Any]) -> str:
    """``normalizer / pre_tokenizer / model / decoder / post_processor`` types of a tokenizer.json."""
    j = tokenizer_json
    return " / ".join([_kind(j.get("normalizer")), _kind(j.get("pre_tokenizer")), str(j["model"]["type"]),
                       _kind(j.get("decoder")), _kind(j.get("post_processor"))])


SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def write_folder(out: Path, spec: Spec, tok: Any, corpus: Path = CORPUS) -> dict[str, Any]:
    """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``; the parsed tokenizer.json."""
    out.mkdir(parents=True, exist_ok=True)
    text = tok.to_str(pretty=True)
    (out / "tokenizer.json").write_text(text + "\n", encoding="utf-8")
    tj = json.loads(text)
    config: dict[str, Any] = {"added_tokens_decoder": {
        str(a["id"]): {k: a[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
        for a in tj["added_tokens"]}}
    config.update(spec.config)
    config.setdefault("clean_up_tokenization_spaces", False)
    config.setdefault("model_max_length", 512)
    if spec.chat:
        config["chat_template"] = json.loads((corpus / "chat" / spec.chat).read_text(encoding="utf-8"))["template"]
    smap = {k: config[k] for k in SPECIAL_KEYS if config.get(k) is not None}
    extra = [a["content"] for a in tj["added_tokens"] if a["special"] and a["content"] not in smap.values()]
    if extra:
        smap["additional_special_tokens"] = extra
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
    (out / "special_tokens_map.json").write_text(json.dumps(smap, indent=2, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
    return tj


def _add_config_specials(tok: Any, config: dict[str, Any]) -> None:
    """The config's special tokens as added special tokens, as transformers' fast class does on load."""
    from tokenizers import AddedToken

    have = {a.content for a in tok.get_added_tokens_decoder().values()}
    new = [config[k] for k in SPECIAL_KEYS if config.get(k) is not None and config[k] not in have]
    if new:
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in dict.fromkeys(new)])


def build(out_dir: Path, only: list[str] | None = None, corpus: Path = CORPUS,
          log: Callable[[str], None] = print) -> dict[str, str]:
    """Build the folders into ``out_dir``; returns name -> summary, or ``"SKIP: reason"``."""
    import tempfile

    specs = all_specs()
    names = {s.name for s in specs}
    unknown = [x for x in only or [] if x not in names]
    if unknown:
        raise BuildError(f"unknown folder name(s): {', '.join(unknown)}")
    chosen = [s for s in specs if not only or s.name in only]
    logging.getLogger("transformers").setLevel(logging.ERROR)
    results: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as work:
        models = Models(training_lines(corpus), Path(work))
        for spec in chosen:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tok = spec.build(models)
                    _add_config_specials(tok, spec.config)
                tj = write_folder(out_dir / spec.name, spec, tok, corpus)
                results[spec.name] = summary(tj)
            except Exception as e:  # noqa: BLE001 - a converter's own failure is the finding, reported
                results[spec.name] = f"SKIP: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            log(f"{spec.name:30s} {spec.source:22s} {results[spec.name]}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the folders are written under this directory")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="build only these folders")
    ap.add_argument("--list", action="store_true", help="print the folder names and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in all_specs():
            print(f"{s.name:30s} {s.source}")
        return 0
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        build(args.out, args.only)
    except (BuildError, ImportError) as e:
        print(f"public_pipelines: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

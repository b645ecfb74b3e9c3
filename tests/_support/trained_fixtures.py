"""Tokenizers trained with HF ``tokenizers`` inside the test session, as pairs (HF, mtokspec).

Each fixture of :data:`FIXTURES` is trained with HF's own trainers on :data:`TRAIN_TEXT` and turned
into an ``.mtok`` tree by :func:`tree_from_hf` (a small test-local converter following the
exporter's mapping in ``export_mtok``, built directly from :mod:`mtokspec.format.tree` classes);
:func:`pair` gives HF loaded from its ``tokenizer.json`` and mtokspec's ``hf`` runtime on the tree,
and :data:`texts` generates text for them: every Unicode category, white-space runs, emoji, CJK,
combining marks, digits and the fixtures' added tokens.

Generated characters are those assigned in Unicode 3.2 plus explicit emoji (see
:mod:`tests._support.unicode_stable`).
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache

import pytest
from hypothesis import strategies as st

from mtokspec import Tokenizer, speedups
from mtokspec.format import tree as t
from tests._support.unicode_stable import STABLE_CHARS

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) trains the fixtures")
from tokenizers import (  # noqa: E402
    AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers,
)

__all__ = ["TRAIN_TEXT", "ADDED_TEXT", "FIXTURES", "pair", "texts", "tree_from_hf"]

TRAIN_TEXT = """\
The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX! It's 2024; we've seen 3.14159.
Tokenizers split text into pieces: words, sub-words, bytes. Don't they? I'm sure they'll do.
def encode(self, text: str) -> list[int]:
    return [self.vocab[t] for t in text.split()]  # 42 items, 1000000 calls
Café naïve résumé coöperate Ångström façade — “quotes” and ‘single’ … ellipsis.
机器学习正在改变世界。今天天气很好，我们去公园散步吧！深度学习模型需要大量数据。
こんにちは世界、カタカナとひらがな。안녕하세요 세계. Привет, мир! Ελληνικά γράμματα. مرحبا بالعالم
Emoji: 🚀 🎉 👍🏽 😶‍🌫️ ✅ ❤️ and symbols © ® ™ ½ ² ³ ① ﬁ ﬂ Ｆｕｌｌｗｉｄｔｈ １２３
numbers 0 1 2 3 4 5 6 7 8 9 10 100 12345 2023-11-30 3,000,000 0x1F 1e-5 ٣٤٥ ४५६
tabs\tand\nnewlines   multiple   spaces\t\t and trailing   
""" * 3


# --- test-local converter: tokenizer.json -> MtokFile (the exporter's mapping) --------------------

@lru_cache(maxsize=None)
def norm_table(form: str) -> tuple:
    out = []
    for cp in range(0x110000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000 or unicodedata.is_normalized(form, c):
            continue
        n = unicodedata.normalize(form, c)
        if n != c:
            out.append((cp, n.encode("utf-8")))
    return tuple(out)


def _normalizer(n):
    if n is None:
        return t.NoNormalizer()
    k = n["type"]
    if k == "Sequence":
        return t.SequenceNormalizer([_normalizer(x) for x in n["normalizers"]])
    if k == "Prepend":
        return t.PrependNormalizer(n["prepend"])
    if k == "Replace":
        return t.ReplaceNormalizer(n["pattern"].get("String", ""), n["content"])
    if k in ("NFKC", "NFKD"):
        return t.TableNormalizer(list(norm_table("NFKC")))
    if k == "NFC":
        return t.TableNormalizer(list(norm_table("NFC")))
    if k == "Lowercase":
        return t.BertNormalizer(False, False, False, True)
    if k == "Strip":
        return t.StripNormalizer(n["strip_left"], n["strip_right"])
    if k == "BertNormalizer":
        sa = n["strip_accents"]
        if sa is None and n["lowercase"]:
            return t.BertNFDNormalizer(n["clean_text"], n["handle_chinese_chars"], True,
                                       n["lowercase"], list(norm_table("NFD")))
        return t.BertNormalizer(n["clean_text"], n["handle_chinese_chars"], bool(sa), n["lowercase"])
    raise AssertionError(k)


_BEHAVIOR = {"Isolated": 0, "MergedWithPrevious": 2}


def _pre(p):
    if p is None:
        return t.NoPreTokenizer()
    k = p["type"]
    if k == "ByteLevel":
        return t.ByteLevelPreTokenizer(p.get("use_regex", True))
    if k == "Digits":
        return t.DigitsPreTokenizer(p["individual_digits"])
    if k == "Metaspace":
        return t.MetaspacePreTokenizer(p["replacement"], p.get("prepend_scheme", "always") != "never")
    if k == "Split":
        pat = p["pattern"]
        return t.SplitPreTokenizer(pat.get("Regex", pat.get("String")), p["invert"],
                                   _BEHAVIOR.get(p["behavior"], 1))
    if k == "WhitespaceSplit":
        return t.SplitPreTokenizer(r"\s+", False, 1)
    if k == "BertPreTokenizer":
        return t.BertPreTokenizer()
    if k == "Sequence":
        return t.SequencePreTokenizer([_pre(x) for x in p["pretokenizers"]])
    raise AssertionError(k)


def _decoder(d):
    if d is None:
        return t.ByteLevelDecoder()
    k = d["type"]
    simple = {"ByteLevel": t.ByteLevelDecoder, "ByteFallback": t.ByteFallbackDecoder,
              "Fuse": t.FuseDecoder}
    if k in simple:
        return simple[k]()
    if k == "Metaspace":
        return t.MetaspaceDecoder(d["replacement"], d.get("prepend_scheme", "always") != "never")
    if k == "WordPiece":
        return t.WordPieceDecoder(d["prefix"], d["cleanup"])
    if k == "Replace":
        return t.ReplaceDecoder(d["pattern"]["String"], d["content"])
    if k == "Strip":
        return t.StripDecoder(d["content"], d["start"], d["stop"])
    if k == "Sequence":
        return t.SequenceDecoder([_decoder(x) for x in d["decoders"]])
    raise AssertionError(k)


def _contains(p, kind):
    if p is None:
        return False
    if p["type"] == kind:
        return True
    return any(_contains(x, kind) for x in p.get("pretokenizers", []) or p.get("decoders", []))


def _model(m, pre, dec):
    k = m["type"]
    if k == "BPE":
        vocab = sorted(((tok.encode(), i) for tok, i in m["vocab"].items()))
        ids = m["vocab"]
        merges = []
        for rank, mg in enumerate(m["merges"]):
            a, b = mg.split(" ", 1) if isinstance(mg, str) else mg
            merges.append((ids[a], ids[b], rank))
        merges.sort(key=lambda r: (r[0] << 32) | r[1])
        byte_level = (pre is not None and pre["type"] == "Sequence" and not _contains(pre, "ByteLevel")
                      and _contains(dec, "ByteLevel"))
        return t.BPEModel(bool(m.get("byte_fallback")), byte_level, vocab, merges)
    if k == "WordPiece":
        vocab = sorted(((tok.encode(), i) for tok, i in m["vocab"].items()))
        return t.WordPieceModel(m["unk_token"], m["continuing_subword_prefix"],
                                m["max_input_chars_per_word"], vocab)
    if k == "Unigram":
        rows = sorted(((tok.encode(), i, float(s)) for i, (tok, s) in enumerate(m["vocab"])))
        return t.UnigramModel(m["unk_id"], bool(m.get("byte_fallback")), rows)
    raise AssertionError(k)


def tree_from_hf(hf) -> t.MtokFile:
    data = json.loads(hf.to_str())
    added = [t.AddedToken(a["id"], a["special"], a["lstrip"], a["rstrip"], a["content"])
             for a in data["added_tokens"]]
    pp = data.get("post_processor")
    program = t.PostProcessorProgram([])
    if pp and pp["type"] == "TemplateProcessing":
        ops = []
        for item in pp["single"]:
            if "Sequence" in item:
                ops.append(t.SequenceOp())
            else:
                ops.append(t.SpecialTokenOp(pp["special_tokens"][item["SpecialToken"]["id"]]["ids"][0]))
        program = t.PostProcessorProgram(ops)
    header = t.make_header(special=[a.id for a in added if a.special])
    return t.MtokFile(header=header, normalizer=_normalizer(data["normalizer"]),
                      pre_tokenizer=_pre(data["pre_tokenizer"]),
                      model=_model(data["model"], data["pre_tokenizer"], data["decoder"]),
                      decoder=_decoder(data["decoder"]), added_tokens=added, chat_template="",
                      eos_token="", flags=0, bos_token="", post_processor=program)


# --- fixtures -------------------------------------------------------------------------------------

ADDED = [AddedToken("<|end|>", special=True, normalized=False),
         AddedToken("<mask>", special=True, lstrip=True, normalized=False),
         AddedToken("[TOOL]", special=False, rstrip=True, normalized=False),
         AddedToken("<<both>>", special=False, lstrip=True, rstrip=True, normalized=False)]
ADDED_TEXT = [a.content for a in ADDED]


def _finish(tok, post: bool = True):
    tok.add_special_tokens([a for a in ADDED if a.special])
    tok.add_tokens([a for a in ADDED if not a.special])
    if post:
        tok.post_processor = processors.TemplateProcessing(
            single="<|end|> $A <|end|>", special_tokens=[("<|end|>", tok.token_to_id("<|end|>"))])
    return tok


def _train(tok, trainer):
    tok.train_from_iterator(TRAIN_TEXT.split("\n"), trainer=trainer)
    return tok


def byte_level_bpe(pre=None):
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre or pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    _train(tok, trainers.BpeTrainer(vocab_size=700, show_progress=False,
                                    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return _finish(tok)


def sp_bpe(byte_fallback=True):
    """Phi-3 / Llama style: Prepend + Replace, no pre-tokenizer, byte fallback."""
    norm = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    base = tokenizers.Tokenizer(models.BPE())
    base.normalizer = norm
    _train(base, trainers.BpeTrainer(vocab_size=500, show_progress=False, max_token_length=8))
    m = json.loads(base.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token in sorted(m["vocab"], key=m["vocab"].get):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=byte_fallback,
                                          fuse_unk=True))
    tok.normalizer = norm
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken("<unk>", special=True, normalized=False),
                            AddedToken("<s>", special=True, normalized=False),
                            AddedToken("</s>", special=True, normalized=False)])
    _finish(tok, post=False)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return tok


def unigram(normalizer=None, byte_fallback=False, pre="t5"):
    base = tokenizers.Tokenizer(models.Unigram())
    base.normalizer = normalizer
    if pre == "t5":
        base.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                      pre_tokenizers.Metaspace()])
    else:
        base.pre_tokenizer = pre_tokenizers.Metaspace()
    _train(base, trainers.UnigramTrainer(vocab_size=400, show_progress=False, unk_token="<unk>",
                                         special_tokens=["<unk>"]))
    m = json.loads(base.to_str())["model"]
    vocab = [(t, s) for t, s in m["vocab"]]
    if byte_fallback:
        vocab += [(f"<0x{b:02X}>", -30.0) for b in range(256)]
    tok = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=m["unk_id"], byte_fallback=byte_fallback))
    tok.normalizer = normalizer
    tok.pre_tokenizer = base.pre_tokenizer
    tok.decoder = decoders.Metaspace()
    return _finish(tok)


def wordpiece(**bert):
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.BertNormalizer(**bert)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    _train(tok, trainers.WordPieceTrainer(vocab_size=500, show_progress=False,
                                          special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    return _finish(tok)


def _split(behavior, invert=False, digits=None):
    pat = Regex(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    seq = [pre_tokenizers.Split(pat, behavior=behavior, invert=invert)]
    if digits is not None:
        seq.append(pre_tokenizers.Digits(individual_digits=digits))
    seq.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
    return pre_tokenizers.Sequence(seq)


FIXTURES = {
    "bytelevel-bpe": lambda: byte_level_bpe(),
    "bytelevel-bpe-noregex": lambda: byte_level_bpe(
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)),
    "split-isolated-digits-individual": lambda: byte_level_bpe(_split("isolated", digits=True)),
    "split-removed-digits-runs": lambda: byte_level_bpe(_split("removed", digits=False)),
    "split-merged-previous": lambda: byte_level_bpe(_split("merged_with_previous")),
    "split-isolated-invert": lambda: byte_level_bpe(_split("isolated", invert=True)),
    "split-removed-invert": lambda: byte_level_bpe(_split("removed", invert=True)),
    "split-merged-previous-invert": lambda: byte_level_bpe(_split("merged_with_previous", invert=True)),
    "sp-bpe-byte-fallback": lambda: sp_bpe(),
    "unigram-nfkc": lambda: unigram(normalizers.NFKC()),
    "unigram-nfc-byte-fallback": lambda: unigram(normalizers.NFC(), byte_fallback=True, pre="metaspace"),
    "unigram-plain": lambda: unigram(None, pre="metaspace"),
    "wordpiece-bert-lower": lambda: wordpiece(lowercase=True),  # strip accents via the NFD table
    "wordpiece-bert-cased": lambda: wordpiece(lowercase=False, strip_accents=False,
                                              handle_chinese_chars=True, clean_text=True),
    "wordpiece-bert-strip-no-table": lambda: wordpiece(lowercase=False, strip_accents=True,
                                                       handle_chinese_chars=False, clean_text=False),
}


def pair(name: str):
    return _pair(name, speedups.enabled())


@lru_cache(maxsize=None)
def _pair(name: str, compiled: bool):  # one per path
    trained = FIXTURES[name]()
    # HF as users run it: loaded from its tokenizer.json (serde-parsed scores, see models/unigram.py)
    hf = tokenizers.Tokenizer.from_str(trained.to_str())
    return hf, Tokenizer.from_tree(tree_from_hf(trained))


# --- text strategy --------------------------------------------------------------------------------

WORDS = sorted(set(TRAIN_TEXT.split()))
EXTRA = list("🚀🎉👍🏽😶\u200d🌫️✅❤️🥰🫠‍️") + ["e\u0301", "a\u0308\u0323", "ﬁ", "Ⅻ", "①", "½",
                                          "\u3000", "\xa0", "\u2028", "\x85", "\x1c", "\x00",
                                          "\ufffd", "ǅ", "İ", "Σ", "ß", "ΣΑΣ", "'s", "'LL"]
chars = STABLE_CHARS
chunk = st.one_of(
    st.sampled_from(WORDS),
    st.text(st.sampled_from(" \t\n\r\u3000\xa0"), min_size=1, max_size=6),
    st.text(chars, min_size=1, max_size=8),
    st.sampled_from(EXTRA),
    st.sampled_from(ADDED_TEXT),
    st.integers(0, 10**7).map(str),
    st.text(st.sampled_from("机器学习世界天气こんにちは안녕"), min_size=1, max_size=12),
)
texts = st.lists(chunk, max_size=14).map("".join)

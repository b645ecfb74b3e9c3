"""The ``tokenizers-api`` folders: pipeline variants public models use that no converter produces,
assembled with the ``tokenizers`` API on the trained vocabularies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .training import Models, with_specials
from .converters import BERT, BERT_FRONT, ES, FAIRSEQ, ROBERTA_FRONT, S, U, Spec


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
    out += [Spec(name, "tokenizers-api", _variant(_bl, norm, pre, bl_dec, post), rob_cfg)
            for name, norm, pre, post in _public_byte_level()]
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
        Spec("v-bpe-quicktour", "tokenizers-api", _bpe_quicktour_variant, dict(
            tokenizer_class="PreTrainedTokenizerFast", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
            pad_token="[PAD]", mask_token="[MASK]")),
        Spec("v-ctc-chars", "tokenizers-api", _ctc_variant, dict(
            tokenizer_class="Wav2Vec2CTCTokenizer", unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")),
    ]
    return out


_DEEPSEEK_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf"
    "\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
    "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4"
    "\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f"
    "\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
    "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17"
    "\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb"
    "\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943")
"""DeepSeek-LLM's letter class (its tokenizer.json's second Split), as code points."""


O200K_PATTERN = (
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
"""GPT-4o's pre-tokenizer pattern (tiktoken's o200k_base), as Phi-4-mini's tokenizer.json holds it."""


def _public_byte_level() -> list[tuple[str, Any, Any, Any]]:
    """Byte-level BPE pipelines of public models (their ``tokenizer.json``'s normalizer,
    pre-tokenizer and post-processor; the trained vocabulary): Falcon, StarCoder, BLOOM,
    DeepSeek-LLM, DeepSeek-Coder, GPT-NeoX, and GPT-4o's o200k pattern (Phi-4-mini)."""
    from tokenizers import Regex, normalizers as n, pre_tokenizers as p, processors as pp

    def bl(regex: bool) -> Any:
        return p.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=regex)

    def isolated(pattern: str) -> Any:
        return p.Split(Regex(pattern), behavior="isolated")

    return [
        ("v-falcon", None, lambda t: p.Sequence([p.Punctuation(behavior="contiguous"), bl(True),
                                                 p.Digits(individual_digits=False), isolated("[0-9][0-9][0-9]")]),
         lambda t: pp.ByteLevel(trim_offsets=True)),
        ("v-starcoder", None, lambda t: p.Sequence([p.Digits(individual_digits=True), bl(True)]),
         lambda t: pp.ByteLevel(trim_offsets=False)),
        ("v-bloom", None, lambda t: p.Sequence([
            isolated(" ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+"), bl(False)]),
         lambda t: pp.ByteLevel(trim_offsets=False)),
        ("v-deepseek", None, lambda t: p.Sequence([
            isolated("[\r\n]"), isolated("\\s?[" + _DEEPSEEK_LETTERS + "]+"),
            isolated("\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"),
            isolated("\\s+$"), isolated("[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"), isolated("\\p{N}+"),
            bl(False)]), lambda t: pp.ByteLevel(trim_offsets=True)),
        ("v-deepseek-coder", None, lambda t: p.Sequence([
            isolated("[\r\n]"), isolated("\\s?\\p{L}+"), isolated("\\s?\\p{P}+"),
            isolated("[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"), p.Digits(individual_digits=True), bl(False)]),
         lambda t: pp.ByteLevel(trim_offsets=True)),
        ("v-neox", lambda t: n.NFC(), lambda t: bl(True), lambda t: pp.ByteLevel(trim_offsets=True)),
        ("v-o200k", None, lambda t: p.Sequence([isolated(O200K_PATTERN), bl(False)]),
         lambda t: pp.ByteLevel(trim_offsets=False)),
    ]


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


def _bpe_quicktour_variant(models: Models) -> Any:
    """HF tokenizers' quicktour pipeline: BPE with an unknown token ([UNK], not fused, no byte
    fallback), Whitespace, [CLS] $A [SEP], no decoder."""
    from tokenizers import AddedToken, Tokenizer, models as m, pre_tokenizers as p, processors as pp

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    trained, merges = models.bpe("herbert")
    vocab = with_specials(specials, {k: v for k, v in trained.items() if not k.endswith("</w>")})
    merges = [(a, b) for a, b in merges if a in vocab and b in vocab and a + b in vocab]
    tok = Tokenizer(m.BPE(vocab, merges, unk_token="[UNK]"))
    tok.add_special_tokens([AddedToken(x, special=True, normalized=False) for x in specials])
    tok.pre_tokenizer = p.Whitespace()
    tok.post_processor = pp.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                               special_tokens=[(x, tok.token_to_id(x)) for x in ("[CLS]", "[SEP]")])
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

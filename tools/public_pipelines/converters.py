"""The ``converter`` folders: transformers' slow->fast converters (and transformers 5 classes)
applied to the trained models, through the ``Slow`` stand-in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .training import BuildError, Models, with_specials


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

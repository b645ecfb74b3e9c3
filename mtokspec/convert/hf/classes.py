"""transformers 5's tokenizer classes as the header rules see them: their special-token defaults,
the classes that rebuild the post-processor, and those whose ``__init__`` builds the pipeline."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mtokspec.convert import unicode_tables
from mtokspec.format import tree as t

SPECIAL_ATTRS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                 "mask_token")

_LLAMA = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
_GPT2 = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
_GEMMA = {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"}
_NEOX = {**_GPT2, "pad_token": "<|padding|>"}
# the fill-in-the-middle tokens are *_token arguments: named special tokens in transformers 5
_CODE_LLAMA = {**_LLAMA, "prefix_token": "\u2581<PRE>", "middle_token": "\u2581<MID>", "suffix_token": "\u2581<SUF>",
               "eot_token": "\u2581<EOT>", "fill_token": "<FILL_ME>"}
_BERT = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
CLASS_DEFAULTS: dict[str, dict[str, str]] = {
    "LlamaTokenizer": _LLAMA, "CodeLlamaTokenizer": _CODE_LLAMA, "GemmaTokenizer": _GEMMA,
    "GPTNeoXTokenizer": _NEOX,
    "T5Tokenizer": {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    "BertTokenizer": _BERT, "GPT2Tokenizer": _GPT2, "WhisperTokenizer": _GPT2,
    "RobertaTokenizer": {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                         "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"},
    "Qwen2Tokenizer": {"unk_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
}
"""Defaults of the special-token arguments of transformers 5.24's tokenizer classes (rule S1), by
class name without ``Fast`` (transformers 5 has one class for both names)."""

TEMPLATE_FROM_FLAGS: dict[str, tuple[bool, bool]] = {"CodeLlamaTokenizer": (True, False),
                                                     "GPTNeoXTokenizer": (False, False)}
"""Classes whose post-processor transformers 5 rebuilds whatever the file holds (rule S5), with the
``(add_bos_token, add_eos_token)`` their ``__init__`` passes (the config's values are dropped)."""


def add_prefix_space(conv: Any, default: bool) -> bool:
    aps = (conv.tc or {}).get("add_prefix_space")
    return default if aps is None else bool(aps)


def _unk(conv: Any, word_start: str):
    """``(unknown token, text before the word)`` when a class BPE with byte fallback may need its
    unknown token (not every byte has a <0xNN> token), else None."""
    # the classes pass str(unk_token): an unset one is the text "None"
    unk = str(conv.special_tokens()[0].get("unk_token"))
    return None if all_byte_tokens(conv) else (unk, word_start)


def _metaspace_class(conv: Any, body: t.MtokFile, *, unk: bool, strip_always: bool):
    """Llama and CodeLlama: no normalizer; Metaspace (prepend unless ``add_prefix_space`` is
    false; "first"/"always" and ``split=False`` are the same on one word); BPE with byte fallback;
    decoder Replace ▁, ByteFallback, Fuse, Strip one leading space.  Llama's BPE has no unknown
    token (what it cannot spell is dropped, as by mtokspec's BPE); CodeLlama's has one."""
    aps = add_prefix_space(conv, True)
    decoders: list[t.Decoder] = [t.ReplaceDecoder("\u2581", " "), t.ByteFallbackDecoder(), t.FuseDecoder()]
    if aps or strip_always:
        decoders.append(t.StripDecoder(" ", 1, 0))
    tree = replace(body, normalizer=t.NoNormalizer(), pre_tokenizer=t.MetaspacePreTokenizer("\u2581", aps),
                   model=t.BPEModel(True, False, body.model.vocab, body.model.merges),
                   decoder=t.SequenceDecoder(decoders))
    return tree, False, (_unk(conv, "\u2581" if aps else "") if unk else None)


def _byte_level_class(conv: Any, body: t.MtokFile, *, nfc: bool, split: str | None):
    """GPT-2, GPT-NeoX, Qwen2: [NFC]; [Split(pattern, isolated)] and ByteLevel with
    ``add_prefix_space`` (default false; a space before the text); BPE without unknown token or
    byte fallback; decoder ByteLevel."""
    aps = add_prefix_space(conv, False)
    pre: t.PreTokenizer = t.ByteLevelPreTokenizer(split is None)
    if split is not None:
        if aps:  # after a Split, HF prefixes every piece: a space before the text is not that
            return None
        pre = t.SequencePreTokenizer([t.SplitPreTokenizer(split, False, 0), t.ByteLevelPreTokenizer(False)])
    tree = replace(body, normalizer=t.TableNormalizer(unicode_tables.nfc_table()) if nfc else t.NoNormalizer(),
                   pre_tokenizer=pre, model=t.BPEModel(False, False, body.model.vocab, body.model.merges),
                   decoder=t.ByteLevelDecoder())
    return tree, aps, None


def _gemma_class(conv: Any, body: t.MtokFile):
    """Gemma: Replace " " -> ▁, Split on " " merged with the previous piece, BPE with byte
    fallback and an unknown token, decoder Replace ▁, ByteFallback, Fuse."""
    tree = replace(body, normalizer=t.ReplaceNormalizer(" ", "\u2581"), pre_tokenizer=t.SplitPreTokenizer(" ", False, 2),
                   model=t.BPEModel(True, False, body.model.vocab, body.model.merges),
                   decoder=t.SequenceDecoder([t.ReplaceDecoder("\u2581", " "), t.ByteFallbackDecoder(),
                                              t.FuseDecoder()]))
    return tree, False, _unk(conv, "")


def all_byte_tokens(conv: Any) -> bool:
    return all(conv.vocab_has(f"<0x{b:02X}>") for b in range(256))


QWEN2_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
               r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
"""transformers 5's ``Qwen2Tokenizer`` pre-split pattern."""

_PIPELINES = {
    "LlamaTokenizer": lambda c, b: _metaspace_class(c, b, unk=False, strip_always=False),
    "CodeLlamaTokenizer": lambda c, b: _metaspace_class(c, b, unk=True, strip_always=True),
    "GemmaTokenizer": _gemma_class,
    "GPT2Tokenizer": lambda c, b: _byte_level_class(c, b, nfc=False, split=None),
    "GPTNeoXTokenizer": lambda c, b: _byte_level_class(c, b, nfc=True, split=None),
    "Qwen2Tokenizer": lambda c, b: _byte_level_class(c, b, nfc=True, split=QWEN2_SPLIT),
}


def _class_pipeline(name: str):
    build = _PIPELINES[name]

    def pipeline(conv: Any, body: t.MtokFile):
        return build(conv, body) if isinstance(body.model, t.BPEModel) else None
    return pipeline


CLASS_PIPELINES = {name: _class_pipeline(name) for name in _PIPELINES}
"""transformers 5 classes whose ``__init__`` builds the pipeline (from the file's vocabulary and
merges) that encode runs, as ``(mtokspec tree, prefix space, unknown token)`` (rules S6-S8); a BPE
vocabulary is needed; other classes run the file's pipeline."""

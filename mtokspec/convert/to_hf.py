"""``.mtok`` tree -> Hugging Face ``tokenizer.json`` document (an independent oracle for any file).

Design record: ``docs/design/convert.md``.
"""

from __future__ import annotations

from typing import Any

from mtokspec.format import tree as t
from mtokspec.convert import unicode_tables
from mtokspec.convert.loss import ConversionError
from mtokspec.args import instance
from mtokspec.runtime.shared.text import REGEX_META

__all__ = ["to_hf", "to_hf_with_notes"]




def to_hf(tree: t.MtokFile) -> dict:
    """A ``tokenizer.json`` document for ``tree``."""
    return to_hf_with_notes(tree)[0]


def to_hf_with_notes(tree: t.MtokFile) -> tuple[dict, list[str]]:
    """``(document, notes)``: notes say where the mapping had to choose (e.g. table not identical)."""
    instance("tree", tree, t.TokenizerFile, "a tokenizer file tree")
    if not isinstance(tree, t.MtokFile):
        raise ConversionError(f"to_hf takes an MtokFile tree, got {type(tree).__name__} "
                              "(a legacy tokenizer.txt tree: mtokspec.convert.upgrade(tree).tree first)")
    notes: list[str] = []
    model, vocab_text = _model(tree.model)
    pre = _pre_tokenizer(tree.pre_tokenizer)
    if isinstance(tree.model, t.BPEModel) and tree.model.byte_level and not _has_byte_level(pre):
        bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
        if pre is None:
            pre = bl
        elif pre.get("type") == "Sequence":
            pre = {"type": "Sequence", "pretokenizers": [*pre["pretokenizers"], bl]}
        else:
            pre = {"type": "Sequence", "pretokenizers": [pre, bl]}
    id_to_text = dict(vocab_text)
    for at in tree.added_tokens:
        id_to_text[at.id] = at.content
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": at.id, "content": at.content, "single_word": False, "lstrip": at.lstrip,
             "rstrip": at.rstrip, "normalized": False, "special": at.special}
            for at in tree.added_tokens
        ],
        "normalizer": _normalizer(tree.normalizer, notes),
        "pre_tokenizer": pre,
        "post_processor": _post_processor(tree, id_to_text),
        "decoder": _decoder(tree.decoder),
        "model": model,
    }
    return doc, notes


def _normalizer(n: t.Normalizer, notes: list[str]) -> dict | None:
    if isinstance(n, t.NoNormalizer):
        return None
    if isinstance(n, t.LegacyNFKCNormalizer):
        return {"type": "NFKC"}
    if isinstance(n, t.TableNormalizer):
        form, exact = unicode_tables.closest_form(n.table)
        if not exact:
            notes.append(f"normalizer table ({len(n.table)} rows) equals no {unicode_tables.UNIDATA_VERSION} "
                         f"table; closest form {form}")
        return {"type": form}
    if isinstance(n, t.PrependNormalizer):
        return {"type": "Prepend", "prepend": n.prepend}
    if isinstance(n, t.ReplaceNormalizer):
        if not n.pattern:
            return None
        return {"type": "Replace", "pattern": {"String": n.pattern}, "content": n.content}
    if isinstance(n, t.SequenceNormalizer):
        kids = [k for k in (_normalizer(c, notes) for c in n.normalizers) if k is not None]
        return {"type": "Sequence", "normalizers": kids}
    if isinstance(n, (t.BertNormalizer, t.BertNFDNormalizer)):
        return {"type": "BertNormalizer", "clean_text": n.clean_text,
                "handle_chinese_chars": n.handle_chinese_chars, "strip_accents": n.strip_accents,
                "lowercase": n.lowercase}
    if isinstance(n, t.StripNormalizer):
        return {"type": "Strip", "strip_left": n.strip_left, "strip_right": n.strip_right}
    raise ConversionError(f"unknown normalizer {type(n).__name__}")


def _has_byte_level(pre: dict | None) -> bool:
    """Does the pre-tokenizer already map bytes (then ``byte_level`` adds nothing, as in the runtime)?"""
    if pre is None:
        return False
    if pre.get("type") == "Sequence":
        return any(_has_byte_level(child) for child in pre["pretokenizers"])
    return pre.get("type") == "ByteLevel"


def _pre_tokenizer(p: t.PreTokenizer) -> dict | None:
    if isinstance(p, t.NoPreTokenizer):
        return None
    if isinstance(p, t.ByteLevelPreTokenizer):
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                "use_regex": p.use_regex}
    if isinstance(p, t.DigitsPreTokenizer):
        return {"type": "Digits", "individual_digits": p.individual_digits}
    if isinstance(p, t.MetaspacePreTokenizer):
        _one_char(p.replacement, "pre_tokenizer Metaspace replacement")
        return {"type": "Metaspace", "replacement": p.replacement,
                "prepend_scheme": "always" if p.add_prefix_space else "never", "split": True}
    if isinstance(p, t.SplitPreTokenizer):
        kind = "Regex" if any(c in REGEX_META for c in p.pattern) else "String"
        try:
            behavior = t.SplitBehavior(p.behavior).name
        except ValueError:  # an unnamed value: Removed, as the exporter writes every unknown behaviour
            behavior = "Removed"
        return {"type": "Split", "pattern": {kind: p.pattern}, "behavior": behavior, "invert": p.invert}
    if isinstance(p, t.BertPreTokenizer):
        return {"type": "BertPreTokenizer"}
    if isinstance(p, t.SequencePreTokenizer):
        kids = [k for k in (_pre_tokenizer(c) for c in p.pretokenizers) if k is not None]
        return {"type": "Sequence", "pretokenizers": kids}
    raise ConversionError(f"unknown pre-tokenizer {type(p).__name__}")


def _one_char(s: str, where: str) -> None:
    if len(s) != 1:
        raise ConversionError(f"{where} {s!r}: HF tokenizers needs exactly one character")


def _text(b: bytes, where: str) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConversionError(f"{where}: token {b!r} is not UTF-8; tokenizer.json cannot hold it") from e


def _model(m: t.Model) -> tuple[dict, dict[int, str]]:
    if not m.vocab and isinstance(m, t.UnigramModel):
        raise ConversionError("model.vocab: HF tokenizers cannot load an empty Unigram vocab")
    if isinstance(m, t.BPEModel):
        vocab = {_text(tok, "model.vocab"): tid for tok, tid in m.vocab}
        id_text = {tid: tok for tok, tid in vocab.items()}
        merges = []
        for left, right, _rank in sorted(m.merges, key=lambda r: r[2]):
            if left not in id_text or right not in id_text:
                raise ConversionError(f"model.merges: ({left}, {right}) names an id that is not in the vocab")
            if id_text[left] + id_text[right] not in vocab:
                raise ConversionError(f"model.merges: {id_text[left]!r} + {id_text[right]!r} is not in the vocab; "
                                      "HF tokenizers refuses such a merge")
            merges.append([id_text[left], id_text[right]])
        return ({"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": m.byte_fallback,
                 "ignore_merges": False, "vocab": vocab, "merges": merges}, id_text)
    if isinstance(m, t.WordPieceModel):
        vocab = {_text(tok, "model.vocab"): tid for tok, tid in m.vocab}
        return ({"type": "WordPiece", "unk_token": m.unk_token,
                 "continuing_subword_prefix": m.continuing_subword_prefix,
                 "max_input_chars_per_word": m.max_input_chars_per_word, "vocab": vocab},
                {tid: tok for tok, tid in vocab.items()})
    if isinstance(m, t.UnigramModel):
        by_id = sorted(m.vocab, key=lambda r: r[1])
        if [r[1] for r in by_id] != list(range(len(by_id))):
            raise ConversionError("model.vocab: Unigram ids must be exactly 0..n-1 for tokenizer.json")
        uni_vocab: list[list[Any]] = [[_text(tok, "model.vocab"), score] for tok, _id, score in by_id]
        return ({"type": "Unigram", "unk_id": m.unk_id, "vocab": uni_vocab, "byte_fallback": m.byte_fallback},
                {i: v[0] for i, v in enumerate(uni_vocab)})
    raise ConversionError(f"unknown model {type(m).__name__}")


def _decoder(d: t.Decoder) -> dict:
    if isinstance(d, t.ByteLevelDecoder):
        return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    if isinstance(d, t.ByteFallbackDecoder):
        return {"type": "ByteFallback"}
    if isinstance(d, t.MetaspaceDecoder):
        _one_char(d.replacement, "decoder Metaspace replacement")
        return {"type": "Metaspace", "replacement": d.replacement,
                "prepend_scheme": "always" if d.add_prefix_space else "never", "split": True}
    if isinstance(d, t.WordPieceDecoder):
        return {"type": "WordPiece", "prefix": d.prefix, "cleanup": d.cleanup}
    if isinstance(d, t.FuseDecoder):
        return {"type": "Fuse"}
    if isinstance(d, t.ReplaceDecoder):
        return {"type": "Replace", "pattern": {"String": d.pattern}, "content": d.content}
    if isinstance(d, t.StripDecoder):
        _one_char(d.content, "decoder Strip content")
        return {"type": "Strip", "content": d.content, "start": d.start, "stop": d.stop}
    if isinstance(d, t.SequenceDecoder):
        return {"type": "Sequence", "decoders": [_decoder(c) for c in d.decoders]}
    raise ConversionError(f"unknown decoder {type(d).__name__}")


def _post_processor(tree: t.MtokFile, id_to_text: dict[int, str]) -> dict | None:
    pp = tree.post_processor
    items: list[Any]
    if isinstance(pp, t.PostProcessorProgram):
        if not pp.ops:
            return None
        # an op whose id is negative as an int32 inserts nothing (MNN skips it; a padding op)
        items = ["A" if isinstance(op, t.SequenceOp) else op.token_id for op in pp.ops
                 if isinstance(op, t.SequenceOp) or op.token_id < 2**31]
    elif isinstance(pp, t.LegacyPostProcessor):
        items = ["A", *pp.ids]
    else:
        h = tree.header
        prefix = t.header_roles(h).prefix
        if not prefix:
            return None
        items = [*prefix, "A"]
    special_tokens: dict[str, dict] = {}
    single: list[dict] = []
    for x in items:
        if x == "A":
            single.append({"Sequence": {"id": "A", "type_id": 0}})
            continue
        text = id_to_text.get(x, f"<id {x}>")
        name = text
        if name in special_tokens and special_tokens[name]["ids"] != [x]:
            name = f"{text}#{x}"  # two ids with one text: keys must differ, only ids matter
        special_tokens[name] = {"id": name, "ids": [x], "tokens": [text]}
        single.append({"SpecialToken": {"id": name, "type_id": 0}})
    pair = [*single, {"Sequence": {"id": "B", "type_id": 1}}]
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": special_tokens}

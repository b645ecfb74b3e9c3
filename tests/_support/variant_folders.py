"""Hugging Face model folders built with HF ``tokenizers`` around one row of the ``--target mnn``
decision table (:mod:`mtokspec.convert.mnn_target.variants`).

:func:`folder_for` trains a small tokenizer whose pipeline holds the row's ``example`` node at the
row's stage (on a base pipeline of the row's ``model`` kind that MNN runs exactly), and saves it as
a folder (``tokenizer.json``, ``tokenizer_config.json``): a real HF tokenizer, written by HF's own
serializer, that the test suite converts and runs through the ``mnn`` semantics against HF.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) builds the folders")
from tokenizers import AddedToken, trainers  # noqa: E402

from tests._support.trained_fixtures import TRAIN_TEXT  # noqa: E402

__all__ = ["folder_for", "PROBE_EXTRA"]

PROBE_EXTRA = [
    "Hi!!? you..x,(a)b", "a--b-c", "x ... y", "``quoted'' and ''more``", "a\u2581b \u2581c", "\u2581lead",
    "tab\tnew\nline\r\n  runs   of    spaces", " \u3000\u00a0\u2028\x85 ", "$100 + <tag> ^ `x` | ~y", "a.b.c.",
    "1234 ٣٤٥ ①② ½", "a\x01b\x0bc\x1fd\x7fe\x8ff\u200bg\ufeffh\ufffdi", "  lead and trail  ", "\u2028x\x85",
    "don't stop-believing...", "e\u0301 n\u0303 ﬁ Ａ", "İstanbul ẞ", "<|x|> zz qq <|y|>a <|y|> b",
]
"""Texts each row's behaviour turns on (punctuation runs, the replacement character, white space of
every kind, controls), probed besides :func:`mtokspec.convert.mnn_target.reference.probe_texts`."""

_BYTE_LEVEL_PRE = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_BYTE_LEVEL_RAW = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
_SP_NORMALIZER = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
_SP_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
    {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}


def _doc(model: dict, normalizer=None, pre=None, decoder=None, post=None) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
            "pre_tokenizer": pre, "post_processor": post, "decoder": decoder, "model": model}


def _base(kind: str) -> tuple[dict, object]:
    """``(tokenizer.json with an empty model, trainer)`` of a base pipeline MNN runs exactly."""
    if kind == "bpe":
        return (_doc({"type": "BPE", "vocab": {}, "merges": []}, pre=_BYTE_LEVEL_RAW,
                     decoder={**_BYTE_LEVEL_PRE, "add_prefix_space": True}),
                trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                    initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()))
    if kind in ("bpe-fallback", "bpe-unk"):
        return (_doc({"type": "BPE", "vocab": {}, "merges": []}, normalizer=_SP_NORMALIZER, decoder=_SP_DECODER),
                trainers.BpeTrainer(vocab_size=500, show_progress=False, max_token_length=8))
    if kind == "wordpiece":
        return (_doc({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {}},
                     normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                 "strip_accents": None, "lowercase": True},
                     pre={"type": "BertPreTokenizer"}, decoder={"type": "WordPiece", "prefix": "##", "cleanup": True}),
                trainers.WordPieceTrainer(vocab_size=500, show_progress=False, special_tokens=["[UNK]"]))
    if kind in ("unigram", "unigram-fallback"):
        return (_doc({"type": "Unigram", "unk_id": None, "vocab": []},
                     pre={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
                     decoder={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}),
                trainers.UnigramTrainer(vocab_size=400, show_progress=False, unk_token="<unk>",
                                        special_tokens=["<unk>"]))
    if kind == "wordlevel":
        return (_doc({"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}, normalizer={"type": "Lowercase"},
                     pre={"type": "WhitespaceSplit"}),
                trainers.WordLevelTrainer(vocab_size=300, show_progress=False, special_tokens=["[UNK]"]))
    raise ValueError(kind)


def _with_byte_fallback(doc: dict) -> dict:
    """A trained BPE with the 256 ``<0xHH>`` pieces (Llama's layout) and byte fallback on."""
    m = doc["model"]
    vocab = {"<unk>": 0}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token in sorted(m["vocab"], key=m["vocab"].get):
        vocab.setdefault(token, len(vocab))
    doc["model"] = {**m, "vocab": vocab, "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True}
    doc["added_tokens"] = [{"id": 0, "content": "<unk>", "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}]
    return doc


def _train(doc: dict, trainer) -> dict:
    tok = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok.train_from_iterator(TRAIN_TEXT.split("\n"), trainer=trainer)
    return json.loads(tok.to_str())


def _specials(doc: dict, names: list[str]) -> dict[str, int]:
    """Add special tokens ``names`` (after the vocabulary) and return their ids."""
    tok = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok.add_special_tokens([AddedToken(n, special=True, normalized=False) for n in names])
    doc.clear()
    doc.update(json.loads(tok.to_str()))
    return {n: tok.token_to_id(n) for n in names}


def _fill_ids(node, ids: dict[str, int]):
    """A post-processor example with its placeholder ids set to the real ones of its tokens."""
    if isinstance(node, dict):
        out = {k: _fill_ids(v, ids) for k, v in node.items()}
        for key in ("sep", "cls"):
            if isinstance(out.get(key), list):
                out[key] = [out[key][0], ids[out[key][0]]]
        if out.get("type") == "TemplateProcessing":
            out["special_tokens"] = {n: {"id": n, "ids": [ids[n]], "tokens": [n]} for n in ("[CLS]", "[SEP]")}
        return out
    if isinstance(node, list):
        return [_fill_ids(v, ids) for v in node]
    return node


def folder_for(row, root: Path) -> Path:
    """A model folder for ``row`` under ``root`` (see the module doc)."""
    kind = row.model
    if row.stage == "decoder" and kind == "bpe" and row.type != "ByteLevel":
        kind = "bpe-fallback"
    doc, trainer = _base(kind)
    example = copy.deepcopy(dict(row.example or {}))
    if row.stage == "normalizer":
        doc["normalizer"] = example
    elif row.stage == "pre_tokenizer":
        if kind == "bpe" and row.type != "ByteLevel":
            doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [example, _BYTE_LEVEL_RAW]}
        else:
            doc["pre_tokenizer"] = example
            if kind == "bpe-fallback":
                doc["normalizer"] = None
    elif row.stage == "decoder":
        doc["decoder"] = example
    elif row.stage == "model":
        if kind == "bpe":
            opts = {k: v for k, v in example.items() if k in ("end_of_word_suffix", "continuing_subword_prefix")}
            if opts:
                trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False, **opts,
                                              initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    trained = _train(doc, trainer)
    if kind in ("bpe-fallback", "bpe-unk"):
        trained = _with_byte_fallback(trained)
    if kind == "bpe-unk":  # the unknown token without the byte pieces
        kept = [k for k in sorted(trained["model"]["vocab"], key=trained["model"]["vocab"].get)
                if not (k.startswith("<0x") and len(k) == 6)]
        trained["model"].update(byte_fallback=False, vocab={k: i for i, k in enumerate(kept)})
    if kind == "unigram-fallback":
        m = trained["model"]
        m["vocab"] = m["vocab"] + [[f"<0x{b:02X}>", 0.0] for b in range(256)]  # SentencePiece scores them 0
        m["byte_fallback"] = True
    if row.stage == "model":
        trained["model"].update({k: v for k, v in example.items() if k in ("ignore_merges", "fuse_unk")})
    if row.stage == "post_processor":
        ids = _specials(trained, ["[CLS]", "[SEP]"])
        trained["post_processor"] = _fill_ids(example, ids)
    if row.stage == "added_tokens":
        trained.setdefault("added_tokens", [])
        new_id = len(trained["model"]["vocab"]) + len(trained["added_tokens"])
        trained["added_tokens"].append({"id": new_id, **example})
    # HF itself must load what was written (the folder is real)
    text = json.dumps(trained, ensure_ascii=False)
    tokenizers.Tokenizer.from_str(text)
    folder = root / row.key.replace("/", "_").replace(" ", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"clean_up_tokenization_spaces": False}),
                                                  encoding="utf-8")
    return folder

"""Write ``tests/fixtures/precompiled_caps/``: a SentencePiece Unigram tokenizer whose own
normalization rules rewrite capital letters (``A`` -> ``Ua``, ...), as a ``tokenizer.json``.

    python -m tools.make_precompiled_fixture [OUT_DIR]

SentencePiece (``pip install sentencepiece``) trains the model with a custom rule table (TSV: source
code points, tab, target code points); its compiled character map (``precompiled_charsmap``) and
pieces are read from the model's protobuf by hand (no protobuf package) and written as HF's
``Precompiled`` normalizer, ``Metaspace`` pre-tokenizer and decoder, ``Unigram`` model and a
template ``<s> A`` (BOS first, so the exporter's prefix probe ``encode("A")`` matters; the
vocabulary holds a piece ``A`` -- a user-defined symbol -- which only text that skips the rules
reaches).  The rules also map fullwidth capitals to small letters, ``e`` + U+0301 to ``é`` (a key
of two characters), delete U+200B and make U+3000 a space.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "precompiled_caps"

RULES = [([ord(c)], [ord("U"), ord(c.lower())]) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
RULES += [([0xFF21 + k], [0x61 + k]) for k in range(26)]  # fullwidth capitals -> small letters
RULES += [([0x65, 0x301], [0xE9]), ([0x200B], []), ([0x3000], [0x20])]

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.", "A tokenizer maps text to ids and back again.",
    "MNN runs large language models on phones and small devices.", "Hello World, Hello Again!",
    "Normalization rules rewrite Capital Letters before the model sees them.",
    "café résumé naïve e\u0301te\u0301", "Numbers: 12345 and 67890; symbols # $ % &.",
    "ＦＵＬＬＷＩＤＴＨ letters become small ones.", "Zero\u200bwidth and ideographic\u3000space.",
]


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b: bytes):
    """``(field number, wire type, value)`` of a protobuf message (varint, fixed32, bytes)."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def read_model(proto: bytes) -> tuple[list[tuple[str, float, int]], bytes]:
    """``(pieces as (text, score, type), precompiled_charsmap)`` of a SentencePiece ModelProto."""
    pieces, charsmap = [], b""
    for num, _, v in _fields(proto):
        if num == 1:
            piece, score, kind = "", 0.0, 1
            for n2, _, v2 in _fields(v):
                if n2 == 1:
                    piece = v2.decode("utf-8")
                elif n2 == 2:
                    score = struct.unpack("<f", v2)[0]
                elif n2 == 3:
                    kind = v2
            pieces.append((piece, score, kind))
        elif num == 3:
            for n2, _, v2 in _fields(v):
                if n2 == 2:
                    charsmap = v2
    return pieces, charsmap


def main(argv=None) -> int:
    import sentencepiece as spm

    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    with tempfile.TemporaryDirectory() as tmp:
        tsv = Path(tmp) / "rules.tsv"
        tsv.write_text("".join(" ".join(f"{c:X}" for c in src) + "\t" + " ".join(f"{c:X}" for c in dst) + "\n"
                               for src, dst in RULES), encoding="utf-8")
        text = Path(tmp) / "text.txt"
        text.write_text("\n".join(SENTENCES * 20) + "\n", encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(text), model_prefix=str(Path(tmp) / "m"), vocab_size=100, model_type="unigram",
            normalization_rule_tsv=str(tsv), unk_id=2, bos_id=1, eos_id=0, pad_id=-1,
            character_coverage=1.0, user_defined_symbols=["A"], minloglevel=2)
        proto = (Path(tmp) / "m.model").read_bytes()
    pieces, charsmap = read_model(proto)
    specials = {kind_id: p for kind_id, (p, _, kind) in enumerate(pieces) if kind in (2, 3)}
    tj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, p in sorted(specials.items())],
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False,
                  "vocab": [[p, s] for p, s, _ in pieces]},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "clean_up_tokenization_spaces": False},
        indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(pieces)} pieces, character map of {len(charsmap)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

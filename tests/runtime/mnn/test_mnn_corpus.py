"""The ``mnn`` semantics against what MNN's own C++ tokenizer recorded for the corpus.

``../shared/corpus/tok/*/ref_mnn.json`` holds, for each corpus ``mnn.mtok`` and ``mnn.txt`` and each
text set, MNN's ``encode``, ``encode_raw``, ``decode_stream`` and ``decode_seq`` (the decodes of
HF's ``no_special`` ids).  All four must agree on every case; and every case where the ``hf`` and
``mnn`` semantics of a file differ must be explained by a divergence rule.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from mtokspec.divergences import RULES
from mtokspec import Tokenizer
from mtokspec.runtime.mnn import MNN_COMMIT
from mtokspec.divergences.explain import explain_decode, explain_encode
from tests._support import CORPUS
from tests._support.corpus_rules import EXPECTED_RULES

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")

FILES = [(n, f) for n in ("bert-base-cased-derived", "phi-3-mini", "roberta-base", "t5-small", "tokenizer-wiki",
                          "whisper.tiny") for f in ("mnn.mtok", "mnn.txt")
         if (CORPUS / "tok" / n / f).exists()] if CORPUS.exists() else []
TEXT_SETS = ("en", "zh", "code", "edge", "mixed")


def _bytes(v) -> bytes:
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else v.encode("utf-8")


@lru_cache(maxsize=None)
def _texts(ts: str) -> list[str]:
    return json.loads((CORPUS / "text" / f"{ts}.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _hf_ids(name: str, ts: str) -> list[list[int]]:
    return json.loads((CORPUS / "tok" / name / f"ref_{ts}.json").read_text(encoding="utf-8"))["no_special"]


@lru_cache(maxsize=None)
def _tokenizers(name: str, fn: str):
    path = CORPUS / "tok" / name / fn
    return Tokenizer.from_file(path), Tokenizer.from_file(path, semantics="mnn")


@pytest.mark.parametrize("name,fn", FILES, ids=[f"{n}/{f}" for n, f in FILES])
def test_mnn_semantics_reproduces_mnn(name, fn):
    ref = json.loads((CORPUS / "tok" / name / "ref_mnn.json").read_text(encoding="utf-8"))
    assert ref["mnn_commit"] == MNN_COMMIT  # the code modelled is the code that recorded
    _, mnn = _tokenizers(name, fn)
    wrong = []
    for ts in TEXT_SETS:
        rec = ref["files"][fn][ts]
        for k, text in enumerate(_texts(ts)):
            ids = _hf_ids(name, ts)[k]
            got = {"encode": mnn.encode(text), "encode_raw": mnn.encode(text, add_special_tokens=False),
                   "decode_stream": mnn.decode_bytes(ids, stream=True), "decode_seq": mnn.decode_bytes(ids)}
            for out, value in got.items():
                expected = rec[out][k] if out.startswith("encode") else _bytes(rec[out][k])
                if value != expected:
                    wrong.append((ts, k, out))
    assert not wrong, f"{len(wrong)} outputs differ from MNN's, first: {wrong[:5]}"


@pytest.mark.parametrize("name,fn", FILES, ids=[f"{n}/{f}" for n, f in FILES])
def test_every_difference_is_explained(name, fn):
    """Each case where the two semantics differ has a rule, and each file's differences come from
    the rules expected for it."""
    hf, mnn = _tokenizers(name, fn)
    unexplained, differing, seen = [], 0, set()
    for ts in TEXT_SETS:
        for k, text in enumerate(_texts(ts)):
            cases = [("encode", special, hf.encode(text, special) != mnn.encode(text, special))
                     for special in (False, True)]
            ids = _hf_ids(name, ts)[k]
            cases += [("decode", stream, hf.decode_bytes(ids) != mnn.decode_bytes(ids, stream=stream))
                      for stream in (False, True)]
            for what, flag, differs in cases:
                if not differs:
                    continue
                differing += 1
                rules = (explain_encode(hf, mnn, text, flag) if what == "encode"
                         else explain_decode(hf, mnn, ids, flag))
                assert set(rules) <= set(RULES)
                seen.update(rules)
                if not rules:
                    unexplained.append((ts, k, what, flag))
    assert not unexplained, f"{len(unexplained)} of {differing} differences unexplained: {unexplained[:5]}"
    assert seen == EXPECTED_RULES[(name, fn)]

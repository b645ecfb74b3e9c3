"""An annotated golden file (``tests/golden/*.hex``, fontTools' ``deHexStr`` style): readable
without the corpus, it parses to a known tree and that tree builds back to the same bytes."""

from __future__ import annotations

import pytest

import mtokspec
from mtokspec.format import tree as t
from tests._support.golden import GOLDEN, de_hex

# every test here runs on both paths of the codec and models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")

SMALL = t.MtokFile(
    header=t.Header(special=[3], stop=[3], prefix=[], trailing_space=False),
    normalizer=t.SequenceNormalizer([t.PrependNormalizer("\u2581"), t.StripNormalizer(True, False)]),
    pre_tokenizer=t.SplitPreTokenizer(" ", False, t.SplitBehavior.MergedWithPrevious),
    model=t.BPEModel(byte_fallback=False, byte_level=False, vocab=[(b"a", 0), (b"ab", 2), (b"b", 1)],
                     merges=[(0, 1, 0)]),
    decoder=t.SequenceDecoder([t.ByteFallbackDecoder(), t.FuseDecoder()]),
    added_tokens=[t.AddedToken(3, True, False, False, "</s>")],
    chat_template="{{x}}", eos_token="</s>", flags=t.MtokFlags.clean_up_tokenization_spaces, bos_token="",
    post_processor=t.PostProcessorProgram([t.SequenceOp(), t.SpecialTokenOp(3)]),
)


def test_de_hex_skips_comments_and_space():
    assert de_hex("34 33  # '43'\n30 # 0\n") == b"430"


def test_golden_file_parses_to_its_tree_and_builds_back():
    data = de_hex((GOLDEN / "small.mtok.hex").read_text(encoding="utf-8"))
    assert len(data) == 131
    assert mtokspec.to_dict(mtokspec.parse(data)) == mtokspec.to_dict(SMALL)
    assert mtokspec.build(SMALL) == data
    assert mtokspec.validate(SMALL) == []

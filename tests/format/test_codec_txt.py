"""The legacy tokenizer.txt codec (types 0-3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import mtokspec
from mtokspec.format import plainio
from mtokspec.testing import strategies as mst
from mtokspec.format import tree as t
from mtokspec.errors import MtokFormatError
from spec import reference_build, reference_parse
from tests._support import CORPUS
from tests._support.codec import deadline, plain, tree_plain

TXT_FILES = sorted(CORPUS.glob("tok/*/mnn.txt")) if CORPUS.is_dir() else []
txt_param = pytest.mark.parametrize(
    "path", TXT_FILES or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))],
    ids=[p.parent.name for p in TXT_FILES] or None,
)
EXPECTED_TYPE = {"t5-small": t.SentencePieceTxtFile, "whisper.tiny": t.TiktokenTxtFile,
                 "bert-base-cased-derived": t.BertTxtFile, "roberta-base": t.HuggingFaceTxtFile}


@txt_param
def test_corpus_txt_round_trips_and_validates(path):
    data = path.read_bytes()
    tree = mtokspec.parse(data)
    assert type(tree) is EXPECTED_TYPE[path.parent.name]
    assert mtokspec.build(tree) == data
    assert [f for f in mtokspec.validate(tree) if f.severity == "error"] == []
    assert tree_plain(tree) == plain(reference_parse(data))
    assert reference_build(mtokspec.to_dict(tree)) == data
    assert mtokspec.build(mtokspec.from_dict(plainio.load_json(plainio.dump_json(mtokspec.to_dict(tree))))) == data


def test_corpus_details(corpus):
    roberta = mtokspec.parse((corpus / "tok" / "roberta-base" / "mnn.txt").read_bytes())
    assert roberta.header.trailing_space and roberta.merges[0] == b"#version: 0.2"
    assert roberta.merges[1] == "Ġ t".encode()
    t5 = mtokspec.parse((corpus / "tok" / "t5-small" / "mnn.txt").read_bytes())
    assert t5.pieces[0] == (b"<pad>", "0.0", 1)


@pytest.mark.parametrize("file_type", range(4))
def test_generated_txt_round_trip(file_type):
    @settings(max_examples=60)
    @given(mst.txt_files(file_type, valid=False))
    def check(tree):
        data = mtokspec.build(tree)
        assert mtokspec.parse(data) == tree
        assert plain(reference_parse(data)) == tree_plain(tree)
        assert reference_build(mtokspec.to_dict(tree)) == data

    check()


@settings(max_examples=60)
@given(mst.txt_files())
def test_valid_txt_trees_validate_clean(tree):
    assert [f for f in mtokspec.validate(mtokspec.build(tree)) if f.severity == "error"] == []


def test_every_truncation_of_a_small_txt_file():
    for tree in (
        t.SentencePieceTxtFile(t.make_header([0], [1], trailing_space=True), [(b"<s>", "0.0", 3), (b" a", "-1.5", 1)]),
        t.HuggingFaceTxtFile(t.make_header([0]), [b"<s>", b"a", b"b", b"ab"], [b"#version: 0.2", b"a b"], False),
    ):
        data = mtokspec.build(tree)
        # a last merge line without its newline may be cut anywhere and still read as a shorter line
        last_line = data.rindex(b"\n") + 1 if isinstance(tree, t.HuggingFaceTxtFile) else len(data)
        for n in range(len(data)):
            if n > last_line:
                assert mtokspec.build(mtokspec.parse(data[:n])) == data[:n]
                continue
            with deadline(1.0), pytest.raises(MtokFormatError) as info:
                mtokspec.parse(data[:n])
            assert info.value.offset is not None and info.value.offset <= n


@pytest.mark.parametrize(
    "data, path, message",
    [
        (b"430 2\n0 0 0\n\n1\nYQ\n", "tokens[0]", "bad base64"),
        (b"430 2\n0 0 0\n\n1\nYR==\n", "tokens[0]", "non-canonical base64"),
        (b"430 0\n0 0 0\n\n1\nYQ== 0.0\n", "pieces[0]", "expected 3"),
        (b"430 0\n0 0 0\n\n1\nYQ== 0.0 x\n", "pieces[0].type", "bad integer"),
        (b"430 3\n0 0 0\n\n1\n", "counts", "expected 2 decimal"),
        (b"430 1\n0 0 0\n\n2\nYQ==\n", "tokens[1]", "truncated"),
        (b"430 1\n0 0 0\n\n1\nYQ==\nextra", "<root>", "trailing bytes"),
        (b"430 9\n0 0 0\n\n", "header.magic", "not an MNN tokenizer file"),
    ],
)
def test_txt_errors_name_offset_and_field(data, path, message):
    with pytest.raises(MtokFormatError, match=message) as info:
        mtokspec.parse(data)
    assert info.value.path == path


def test_txt_build_refuses_values_that_break_lines():
    with pytest.raises(MtokFormatError) as info:
        mtokspec.build(t.HuggingFaceTxtFile(tokens=[b"a\nb"]))
    assert info.value.path == "tokens[0]"
    with pytest.raises(MtokFormatError):
        mtokspec.build(t.SentencePieceTxtFile(pieces=[(b"a", "1 2", 1)]))
    with pytest.raises(MtokFormatError):
        mtokspec.build(t.HuggingFaceTxtFile(tokens=[b"a"], merges=[b""], final_newline=False))


@pytest.mark.parametrize("data", [b"430 1\n1 0 0\n-0\n0\n", b"430 0\n0 0 0\n\n1\nYQ== 0.0 -0\n",
                                  b"430 4\n1 0 0\n007\n"])
def test_non_canonical_numbers_are_refused(data):
    """'-0' or '007' would read as 0 or 7 and write back differently."""
    with pytest.raises(MtokFormatError):
        mtokspec.parse(data)

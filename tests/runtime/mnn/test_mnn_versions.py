"""``semantics="mnn@VERSION"`` against what each released MNN version's own code answered.

``tests/fixtures/mnn_versions.json`` holds, per version (and HEAD), the answers of an ``mnn_tok``
built from that tag (``python -m tools.mnn_versions VERSION=BIN --record``): the corpus files on
every text set, files holding what the versions read otherwise, the corpus chat templates and
templates using ``|join``.  The semantics must give every one; with ``MNN_VERSION_BINS``
(``3.6.1=/path/mnn_tok,...``) the binaries are run live as well.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

import mtokspec
from mtokspec.format import tree as t
from mtokspec.names import CURRENT, DEVICES, MNN_VERSIONS, SEMANTICS, TARGETS
from mtokspec.runtime.mnn.versions import HEAD, VERSIONS, version_of
from tests._support import CORPUS, TESTS
from tools.mnn_versions import REFUSED, check_version, record_version

FIXTURE = json.loads((TESTS / "fixtures" / "mnn_versions.json").read_text(encoding="utf-8"))
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
LIVE = dict(item.split("=", 1) for item in os.environ.get("MNN_VERSION_BINS", "").split(",") if "=" in item)


def test_every_version_is_recorded_from_its_commit():
    assert set(FIXTURE) == {*VERSIONS, HEAD.name}
    for name, rec in FIXTURE.items():
        assert rec["commit"] == (HEAD if name == HEAD.name else VERSIONS[name]).commit


@needs_corpus
@pytest.mark.parametrize("version", sorted(FIXTURE))
def test_semantics_gives_the_recorded_answers(version):
    result = check_version(version, FIXTURE[version], CORPUS)
    assert not result["differ"], result["differ"][:5]
    assert result["corpus"][1] > 0 and result["probes"][1] > 0 and result["chat"][1] > 0


@needs_corpus
@pytest.mark.parametrize("version", sorted(LIVE) or [pytest.param(None, marks=pytest.mark.skip(
    reason="MNN_VERSION_BINS=3.6.1=/path/mnn_tok,... not set (tools/mnn_release/build.sh builds them)"))])
def test_semantics_gives_the_binary_answers_live(version, tmp_path: Path):
    result = check_version(version, record_version(version, LIVE[version], CORPUS, tmp_path), CORPUS)
    assert not result["differ"], result["differ"][:5]


def test_the_records_differ_where_the_versions_do():
    """The probes and templates tell the versions apart (so agreeing with them means something)."""
    head, v350, v361 = FIXTURE["HEAD"], FIXTURE["3.5.0"], FIXTURE["3.6.1"]
    program = "program-and-prefix"
    assert head["probes"][program]["encode"] != v361["probes"][program]["encode"]
    assert head["probes"][program]["encode_raw"] == v361["probes"][program]["encode_raw"]
    for probe in ("strip", "strip-in-sequence", "null-normalizer-child", "null-pre-tokenizer-child"):
        assert v361["probes"][probe] == head["probes"][probe]
        assert REFUSED in v350["probes"][probe]["encode"] and REFUSED not in head["probes"][probe]["encode"]
    assert head["chat"]["join-contents"] != v361["chat"]["join-contents"]
    assert FIXTURE["3.6.0"] == {**v361, "commit": FIXTURE["3.6.0"]["commit"]}
    # the corpus: only encode (the post-processor program) differs from HEAD
    for key, sets in head["corpus"].items():
        for ts, modes in sets.items():
            assert {m for m in modes if modes[m] != v361["corpus"][key][ts][m]} <= {"encode"}


def test_semantics_names_are_declared_once():
    """mtokspec.names declares the versions; the switches, semantics, devices and targets follow it."""
    releases = tuple(f"mnn@{v}" for v in MNN_VERSIONS)
    assert tuple(VERSIONS) == MNN_VERSIONS
    assert SEMANTICS == (*CURRENT, *releases) and set(releases) <= set(DEVICES) & set(TARGETS)
    assert version_of("mnn") is HEAD and version_of("mnn@3.6.1") is VERSIONS["3.6.1"]
    assert version_of("hf") is None and version_of("mnn@3.4.1") is None


def test_an_unknown_version_is_refused():
    data = mtokspec.build(_bert())
    with pytest.raises(mtokspec.TokenizerError, match="semantics must be one of"):
        mtokspec.load(data, semantics="mnn@3.4.1")
    with pytest.raises(mtokspec.ArgumentTypeError, match="version"):
        mtokspec.load(data, semantics="mnn@3.6.1", version="3.5.0")


def _bert() -> t.MtokFile:
    from tests._support import corpus_path

    return mtokspec.parse((corpus_path() / "tok" / "bert-base-cased-derived" / "mnn.mtok").read_bytes())


@needs_corpus
def test_a_version_tokenizer_pickles_as_that_version():
    tok = mtokspec.load(mtokspec.build(_bert()), semantics="mnn@3.6.1")
    again = pickle.loads(pickle.dumps(tok))
    assert again.semantics == "mnn@3.6.1" and again.encode("Hello") == tok.encode("Hello") == [8667]
    assert mtokspec.load(mtokspec.build(_bert()), semantics="mnn").encode("Hello") == [101, 8667, 102]


@needs_corpus
def test_cli_runs_a_version(capsys):
    from mtokspec.cli import main

    path = str(CORPUS / "tok" / "bert-base-cased-derived" / "mnn.mtok")
    assert main(["encode", path, "Hello", "--runtime", "mnn@3.5.0"]) == 0
    assert capsys.readouterr().out.split() == ["8667"]


@needs_corpus
@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_target_version_moves_the_program_before_the_text_into_prefix_ids(version):
    pytest.importorskip("tokenizers", reason="the --target report runs HF tokenizers")
    from mtokspec.convert import from_hf

    folder = CORPUS / "tok" / "bert-base-cased-derived"
    head = from_hf(folder, target="mnn")
    result = from_hf(folder, target=f"mnn@{version}")
    assert result.tree.post_processor is None and list(result.tree.header.prefix) == [101]
    assert isinstance(head.tree.post_processor, t.PostProcessorProgram)
    assert any(loss.path == "post_processor" and "[102]" in loss.what for loss in result.losses)
    tok = mtokspec.load(result.tree, semantics=f"mnn@{version}")
    assert tok.encode("Hello") == [101, 8667]
    # the report puts the lost [SEP] down to the version
    assert any(getattr(loss, "rule", "") == f"mnn@{version}" for loss in result.losses)


def test_target_version_leaves_out_what_the_version_cannot_read():
    from mtokspec.convert.mnn_target.versions import for_version

    tree = t.MtokFile(header=t.make_header(), normalizer=t.SequenceNormalizer(
        [t.StripNormalizer(True, True), t.NoNormalizer(), t.PrependNormalizer("x")]),
        pre_tokenizer=t.SequencePreTokenizer([t.NoPreTokenizer()]), model=None, decoder=None)
    old, losses = for_version(tree, VERSIONS["3.5.0"], None)
    assert old.normalizer == t.SequenceNormalizer([t.PrependNormalizer("x")])
    assert old.pre_tokenizer == t.NoPreTokenizer()
    assert [loss.path for loss in losses] == ["normalizer"]
    new, losses = for_version(tree, VERSIONS["3.6.1"], None)
    assert new == tree and losses == []
    assert for_version(tree, HEAD, None) == (tree, [])


@needs_corpus
def test_cli_converts_for_a_version(tmp_path: Path, capsys):
    pytest.importorskip("tokenizers", reason="the --target report runs HF tokenizers")
    from mtokspec.cli import main

    out = tmp_path / "v.mtok"
    main(["convert", str(CORPUS / "tok" / "t5-small"), "--target", "mnn@3.6.1", "-o", str(out)])
    tree = mtokspec.parse(out.read_bytes())
    assert tree.post_processor is None and list(tree.header.prefix) == []
    assert "mnn@3.6.1" in capsys.readouterr().err  # the lost </s> is put down to the version

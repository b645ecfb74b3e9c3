"""Format next: the ``extension`` section, ``--target mnn-next`` and the ``mnn-next`` semantics.

Live against MNN's own code when the binaries are there (released: ``MNN_TOK_BIN`` or
``../mnnbuild/mnn_tok``; patched: ``MNN_NEXT_TOK_BIN`` or ``../mnnbuild-next/mnn_tok``, built by
``tools/mnn_next_build.sh``); without them, the recorded answers of ``tools/mnn_next_check.py``
(``tests/fixtures/format_next/``) are replayed through the semantics.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from hypothesis import given, settings

import mtokspec
from mtokspec.errors import MtokFormatError
from mtokspec.format import tree as t
from mtokspec.testing import strategies
from tests._support import CORPUS, ROOT, TESTS

RECORDS = TESTS / "fixtures" / "format_next"
RELEASED = os.environ.get("MNN_TOK_BIN", str(ROOT.parent / "mnnbuild" / "mnn_tok"))
PATCHED = os.environ.get("MNN_NEXT_TOK_BIN", str(ROOT.parent / "mnnbuild-next" / "mnn_tok"))
CORPUS_FOLDERS = sorted(p for p in (CORPUS / "tok").glob("*") if (p / "tokenizer.json").is_file()) if CORPUS.is_dir() else []
EXT = t.Extension(int(t.ExtensionMagic.MNX1), [t.DecodeCleanupField(False), t.StreamDecodeField()])
TAILS = {"chat_template": "", "eos_token": "", "flags": 0, "bos_token": ""}


def _file(pp, ext=EXT, **kw) -> t.MtokFile:
    return t.MtokFile(**TAILS, post_processor=pp, extension=ext, **kw)


# --- the section ----------------------------------------------------------------------------------
def test_the_extension_follows_the_program_and_reads_back():
    tree = _file(t.PostProcessorProgram([t.SpecialTokenOp(1), t.SequenceOp(), t.SpecialTokenOp(2)]))
    data = mtokspec.build(tree)
    assert data.endswith(b"MNX1" + b"\x02\x00" + b"\x01\x00" + b"\x02")
    assert mtokspec.parse(data) == tree
    assert mtokspec.parse(mtokspec.build(replace(tree, extension=None))).extension is None


@pytest.mark.parametrize(("pp", "why"), [
    (t.LegacyPostProcessor([5]), "current-layout"),
    (None, "cannot follow an absent"),
    (t.PostProcessorProgram([]), "count\\*4"),  # MNN reads an empty program as [A], with the section as []
    (t.PostProcessorProgram([t.SpecialTokenOp(1), t.SpecialTokenOp(2), t.SequenceOp(), t.SpecialTokenOp(3)]),
     "count\\*4"),  # whisper's program: MNN misreads the plain file, not the extended one
])
def test_build_refuses_an_extension_released_mnn_would_not_ignore(pp, why):
    with pytest.raises(MtokFormatError, match=why):
        mtokspec.build(_file(pp))


def test_build_refuses_an_extension_that_makes_the_program_misread():
    # 3 sequence ops and one special: 8 bytes, count*4 = 16; an empty extension (6 bytes) plus a
    # DecodeCleanupField (2) makes 16: MNN would take the older layout
    pp = t.PostProcessorProgram([t.SequenceOp()] * 3 + [t.SpecialTokenOp(9)])
    with pytest.raises(MtokFormatError, match="older layout") as info:
        mtokspec.build(_file(pp, t.Extension(int(t.ExtensionMagic.MNX1), [t.DecodeCleanupField(True)])))
    assert info.value.path == "extension"
    assert mtokspec.build(_file(pp, t.Extension(int(t.ExtensionMagic.MNX1), [])))


def test_fields_ascend_once_each():
    pp = t.PostProcessorProgram([t.SequenceOp()])
    for fields in ([t.StreamDecodeField(), t.DecodeCleanupField(True)], [t.StreamDecodeField()] * 2):
        with pytest.raises(MtokFormatError, match="ascend") as info:
            mtokspec.build(_file(pp, t.Extension(int(t.ExtensionMagic.MNX1), fields)))
        assert info.value.path == "extension.fields[1]"


# --- the mnn-next semantics -------------------------------------------------------------------------
def _wordpiece(ext) -> t.MtokFile:
    vocab = [(b"[UNK]", 0), (b"a", 1), (b".", 2), (b"##b", 3)]
    return _file(t.PostProcessorProgram([t.SequenceOp()]), ext,
                 model=t.WordPieceModel(vocab=vocab, unk_token="[UNK]", continuing_subword_prefix="##",
                                        max_input_chars_per_word=100),
                 decoder=t.WordPieceDecoder("##", False))


def test_decode_cleanup_field():
    plain, extended = _wordpiece(None), _wordpiece(t.Extension(int(t.ExtensionMagic.MNX1), [t.DecodeCleanupField(False)]))
    for semantics in ("mnn", "mnn-next"):  # released MNN cleans up whatever the file says
        assert mtokspec.Tokenizer.from_tree(plain, semantics=semantics).decode([1, 3, 2]) == "ab."
    assert mtokspec.Tokenizer.from_tree(extended, semantics="mnn").decode([1, 3, 2]) == "ab."
    assert mtokspec.Tokenizer.from_tree(extended, semantics="mnn-next").decode([1, 3, 2]) == "ab ."


def test_stream_field_prints_what_hf_decodestream_prints():
    tokenizers = pytest.importorskip("tokenizers")
    from mtokspec.convert.to_hf import to_hf

    tree = _wordpiece(EXT)
    hf = tokenizers.Tokenizer.from_str(json.dumps(to_hf(tree)))
    ids = [1, 3, 2, 1, 1, 3]
    from tokenizers.decoders import DecodeStream

    stream = DecodeStream(skip_special_tokens=False)
    want = "".join(filter(None, (stream.step(hf, i) for i in ids)))
    nxt = mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next")
    assert nxt.decode_bytes(ids, stream=True).decode() == want == "ab . a ab"
    assert mtokspec.Tokenizer.from_tree(tree, semantics="mnn").decode_bytes(ids, stream=True) == b" ab . a ab"
    s = nxt.decode_stream()
    assert "".join(filter(None, map(s.step, ids))) + s.flush() == want


def test_bpe_suffix_field_marks_the_last_character_of_each_piece():
    vocab = sorted([(b"a", 0), (b"b", 1), (b"b</w>", 2), (b"ab</w>", 3), (b"a</w>", 4)])
    bpe = t.BPEModel(vocab=vocab, merges=[(0, 2, 0)])
    pre = t.SplitPreTokenizer(" ", False, t.SplitBehavior.Removed)
    ext = t.Extension(int(t.ExtensionMagic.MNX1), [t.BPESuffixField("</w>")])
    tree = _file(t.PostProcessorProgram([t.SequenceOp()]), ext, model=bpe, pre_tokenizer=pre)
    assert mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next").encode("ab a b") == [3, 4, 2]
    assert mtokspec.Tokenizer.from_tree(tree, semantics="mnn").encode("ab a b") == [0, 1, 0, 1]


def test_bpe_decoder_field_turns_the_suffix_into_spaces():
    vocab = sorted([(b"a", 0), (b"b</w>", 1), (b"ab</w>", 2)])
    ext = t.Extension(int(t.ExtensionMagic.MNX1), [t.BPEDecoderField("</w>")])
    tree = _file(t.PostProcessorProgram([t.SequenceOp()]), ext, model=t.BPEModel(vocab=vocab), decoder=t.FuseDecoder())
    assert mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next").decode([2, 0, 1, 2]) == "ab ab ab"
    assert mtokspec.Tokenizer.from_tree(tree, semantics="mnn").decode([2, 0, 1, 2]) == "ab</w>ab</w>ab</w>"


def test_the_stream_holds_an_incomplete_character():
    from mtokspec.runtime.mnn.next import _ends_incomplete

    assert [_ends_incomplete(b) for b in (b"", b"a", b"\xc3", b"\xc3\xa9", b"\xe2\x82", b"\xbd", b"\xef\xbf\xbd")] == \
        [False, False, True, False, True, True, True]


def test_lint_for_mnn_next_drops_what_the_fields_carry():
    from mtokspec.divergences.lint import lint

    tree = _wordpiece(EXT)
    assert {"mnn-stream-decode", "mnn-wordpiece-cleanup"} <= {f.code for f in lint(tree)}
    assert not {"mnn-stream-decode", "mnn-wordpiece-cleanup"} & {f.code for f in lint(tree, target="mnn-next")}


# --- against MNN's own code, live or recorded --------------------------------------------------------
def _binary(path: str, what: str) -> str:
    if not os.access(path, os.X_OK):
        pytest.skip(f"{what} mnn_tok not found at {path}")
    return path


@pytest.mark.parametrize("folder", CORPUS_FOLDERS or [pytest.param(None, marks=pytest.mark.skip(
    reason=f"reference corpus not found at {CORPUS}"))], ids=[p.name for p in CORPUS_FOLDERS] or None)
@pytest.mark.parametrize("mode", ["compat", "patched"])
def test_live_on_the_corpus(folder, mode, tmp_path):
    """compat: released MNN gives the same answers on the extended file and on the plain one;
    patched: the mnn-next semantics gives the patched binary's answers (probe texts only: the
    whole corpus is ``python -m tools.mnn_next_check``)."""
    from tools.mnn_next_check import run

    binary = _binary(RELEASED, "released") if mode == "compat" else _binary(PATCHED, "patched (tools/mnn_next_build.sh)")
    row = run(mode, folder, binary, [], tmp_path)
    assert row["extension"]
    assert [row[o] for o in ("encode", "raw", "stream", "seq")] == [0, 0, 0, 0], row["examples"]


def _recorded(name: str) -> list[dict]:
    path = RECORDS / name
    if not path.is_file():
        pytest.skip(f"{path.name} not recorded (python -m tools.mnn_next_check ... --record)")
    return json.loads(path.read_text(encoding="utf-8"))["rows"]


@pytest.mark.parametrize(("record", "semantics"), [("compat-corpus.json", "mnn"), ("patched-corpus.json", "mnn-next")])
def test_recorded_corpus_answers_replay(record, semantics):
    """The binaries' recorded answers on the corpus (``--target mnn-next`` files, probe and corpus
    texts): released MNN's equal the ``mnn`` semantics of the file without its extension, the patched
    MNN's the ``mnn-next`` semantics of the file."""
    from tools.folder_agreement import corpus_texts
    from tools.mnn_next_check import OUTPUTS, case, digest, semantics_outputs

    rows = _recorded(record)
    if not CORPUS.is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS}")
    extra = corpus_texts()
    for row in rows:
        tree, texts, ids = case(CORPUS / "tok" / row["folder"], extra)
        assert len(texts) == row["cases"], f"{row['folder']}: the probe texts changed; re-record"
        run_tree = replace(tree, extension=None) if semantics == "mnn" else tree
        got = semantics_outputs(run_tree, semantics, texts, ids)
        assert {o: digest(got[o]) for o in OUTPUTS} == row["digests"], row["folder"]


def test_recorded_rows_answers_replay(tmp_path):
    """As above, on the decision table's folders (built with HF tokenizers: no corpus needed)."""
    pytest.importorskip("tokenizers")
    from mtokspec.convert.mnn_target.variants import rows as variant_rows
    from tests._support.variant_folders import PROBE_EXTRA, folder_for
    from tools.mnn_next_check import OUTPUTS, case, digest, semantics_outputs, source_sha256

    records = {name: {r["folder"]: r for r in _recorded(name)} for name in ("compat-rows.json", "patched-rows.json")}
    replayed = 0
    for v in variant_rows():
        if v.example is None:
            continue
        folder = folder_for(v, tmp_path)
        for name, semantics in (("compat-rows.json", "mnn"), ("patched-rows.json", "mnn-next")):
            row = records[name].get(folder.name)
            if row is None or row["source_sha256"] != source_sha256(folder):
                continue  # not recorded, or HF's trainer made another folder this time
            replayed += 1
            tree, texts, ids = case(folder, list(PROBE_EXTRA))
            assert len(texts) == row["cases"], f"{folder.name}: the probe texts changed; re-record"
            got = semantics_outputs(replace(tree, extension=None) if semantics == "mnn" else tree, semantics, texts, ids)
            assert {o: digest(got[o]) for o in OUTPUTS} == row["digests"], (name, folder.name)
    assert replayed >= 100, f"only {replayed} recorded folders were built again as recorded"


def test_the_command_line_takes_the_new_target(tmp_path, capsys):
    """convert --target mnn-next writes the section; lint, encode and decode --stream take it."""
    pytest.importorskip("tokenizers")
    from mtokspec.cli import main
    from mtokspec.convert.to_hf import to_hf

    (tmp_path / "tokenizer.json").write_text(json.dumps(to_hf(_wordpiece(None))), encoding="utf-8")
    out = tmp_path / "next.mtok"
    assert main(["convert", str(tmp_path), "--target", "mnn-next", "-o", str(out)]) in (0, 3)
    assert mtokspec.parse(out.read_bytes()).extension.fields == [t.DecodeCleanupField(False), t.StreamDecodeField()]
    main(["lint", "--target", "mnn-next", "--json", str(out)])
    assert "mnn-stream-decode" not in capsys.readouterr().out
    assert main(["decode", str(out), "1", "3", "2", "--runtime", "mnn-next", "--stream"]) == 0
    assert capsys.readouterr().out.strip() == "ab ."


@settings(max_examples=60)
@given(strategies.runnable())
def test_mnn_next_runs_every_file_the_mnn_semantics_runs(case):
    """Whatever its extension, a file both runtimes run is run by mnn-next too (refusals are Errors);
    without fields its answers are the mnn semantics'."""
    tree, text = case
    nxt = mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next")
    try:
        ids = nxt.encode(text)
        nxt.decode_bytes(ids)
        streamed = nxt.decode_bytes(ids, stream=True)
    except mtokspec.Error:
        return
    assert isinstance(streamed, bytes)
    if tree.extension is None or not tree.extension.fields:
        mnn = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
        assert (ids, streamed) == (mnn.encode(text), mnn.decode_bytes(ids, stream=True))


@pytest.mark.parametrize(("key", "fuse"), [("model.BPE[unk_token]", True), ("model.BPE[unk_token]", False),
                                           ("model.BPE[end_of_word_suffix]", False)])
def test_bpe_unknown_field_gives_hf_unknown_ids(tmp_path, key, fuse):
    """``BPEUnknownField``: on folders HF ``tokenizers`` builds (a BPE with an unknown token, fused
    or not; a byte-level BPE with a suffix and an unknown token, as clip), the mnn-next semantics
    gives HF's ids where released MNN drops the characters no token covers (a run fused, or with a
    suffix; without them the file's unknown-token rows give HF's ids on released MNN too)."""
    tokenizers = pytest.importorskip("tokenizers")
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.reference import probe_texts
    from mtokspec.convert.mnn_target.variants import rows
    from tests._support.variant_folders import PROBE_EXTRA, folder_for

    folder = folder_for(next(v for v in rows() if v.key == key), tmp_path)
    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    model = tj["model"]
    model["fuse_unk"] = fuse
    if not model.get("unk_token"):
        model["unk_token"] = min(model["vocab"], key=model["vocab"].get)
    (folder / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tree = from_hf(folder, target="mnn-next").tree
    assert t.BPEUnknownField(model["vocab"][model["unk_token"]], fuse) in tree.extension.fields
    nxt = mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next")
    mnn = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
    texts = [*probe_texts([]), *PROBE_EXTRA, "日本語 ü x", "ab中文字 z", "\u0f00\u0f00 a"]
    assert [nxt.encode(s, add_special_tokens=False) for s in texts] == \
        [hf.encode(s, add_special_tokens=False).ids for s in texts]
    released = [mnn.encode(s, add_special_tokens=False) == hf.encode(s, add_special_tokens=False).ids for s in texts]
    # released MNN: the unknown token's rows give HF's ids unless the run is fused (rows.bpe_unknown_rows)
    assert all(released) if not fuse and key == "model.BPE[unk_token]" else not all(released)


def test_unigram_ties_field_keeps_hf_segmentation_of_equal_scores(tmp_path):
    """``UnigramTiesField``: where two segmentations score the same (runs of one character over
    pieces of it), the mnn-next semantics keeps HF's (the longest last piece) on a Unigram folder HF
    ``tokenizers`` trains; released MNN keeps another."""
    tokenizers = pytest.importorskip("tokenizers")
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.reference import RUN_TEXTS, probe_texts
    from mtokspec.convert.mnn_target.variants import rows
    from tests._support.variant_folders import folder_for

    folder = folder_for(next(v for v in rows() if v.key == "model.Unigram[byte_fallback=false]"), tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tree = from_hf(folder, target="mnn-next").tree
    assert t.UnigramTiesField() in tree.extension.fields
    nxt = mtokspec.Tokenizer.from_tree(tree, semantics="mnn-next")
    mnn = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
    ties = [*RUN_TEXTS, "111 1111 11111", "::: :::::", "lll lllll", "0000000 000000000"]
    assert [nxt.encode(s) for s in ties] == [hf.encode(s).ids for s in ties]
    assert any(mnn.encode(s) != hf.encode(s).ids for s in ties)
    # elsewhere the field changes nothing MNN did not already get wrong (e.g. a text starting with ▁)
    texts = probe_texts([])
    wrong_next = {s for s in texts if nxt.encode(s) != hf.encode(s).ids}
    assert wrong_next <= {s for s in texts if mnn.encode(s) != hf.encode(s).ids}

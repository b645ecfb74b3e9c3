"""A ``--target mnn`` file decodes special tokens as transformers' default ``decode(ids)`` does
(kept), in the Python API of both semantics, the CLI and the engine's stream alike."""

from __future__ import annotations

import pytest

import mtokspec
from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.variants import rows

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tests._support.variant_folders import folder_for  # noqa: E402


def test_special_tokens_are_kept_everywhere(tmp_path, capsys):
    from mtokspec.cli import main

    row = next(v for v in rows() if v.key == "post_processor.BertProcessing")
    folder = folder_for(row, tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = hf.encode("Hi there").ids
    want = hf.decode(ids, skip_special_tokens=False)
    assert "[CLS]" in want and "[SEP]" in want and want != hf.decode(ids)  # HF's own default drops them
    path = tmp_path / "t.mtok"
    path.write_bytes(mtokspec.build(from_hf(folder, target="mnn").tree))
    mnn = mtokspec.Tokenizer.from_file(path, semantics="mnn")
    ours = mtokspec.Tokenizer.from_file(path)
    assert mnn.decode_bytes(ids) == want.encode() == ours.decode(ids).encode()
    stream = mnn.decode_stream()
    printed = "".join(filter(None, map(stream.step, ids)))
    assert "[CLS]" in printed and "[SEP]" in printed
    assert main(["decode", str(path), *map(str, ids)]) == 0
    assert capsys.readouterr().out == want + "\n"
    assert main(["decode", str(path), "--runtime", "mnn", *map(str, ids)]) == 0
    assert capsys.readouterr().out == want + "\n"


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_added_tokens_past_the_vocabulary_decode_as_hf(tmp_path, kind):
    """nllb's language codes: added tokens whose ids follow the model's vocabulary decode to their
    text on MNN (its decode looks ids up in the vocabulary only: "<unk>" or nothing without a row),
    and the rows ``--target mnn`` gives them never change an encoding."""
    import json

    from mtokspec.convert.mnn_target.reference import probe_texts
    from tests._support.variant_folders import PROBE_EXTRA, _base, _specials, _train

    doc, trainer = _base(kind)
    trained = _train(doc, trainer)
    codes = ["ace_Arab", "zul_Latn", "<mask>", "eng_Latn"]
    ids = _specials(trained, [*codes, "\U0010fffe", "yo_Latn"])  # no piece ends in U+10FFFE: no row
    assert min(ids.values()) == len(trained["model"]["vocab"])  # past the vocabulary, as nllb's
    folder = tmp_path / kind
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(trained, ensure_ascii=False), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tree = from_hf(folder, target="mnn").tree
    tokens = {row[0] for row in tree.model.vocab}
    assert tokens >= {c.encode() for c in codes}
    assert "\U0010fffe".encode() not in tokens and b"yo_Latn" not in tokens  # the rows stay one id range
    assert sorted(row[1] for row in tree.model.vocab) == list(range(len(tree.model.vocab)))
    path = tmp_path / "t.mtok"
    path.write_bytes(mtokspec.build(tree))
    mnn = mtokspec.Tokenizer.from_file(path, semantics="mnn")
    for text in ["ace_Arab", "Hi ace_Arab there", "<mask> zul_Latneng_Latn", "x ace_Arabzul_Latn y"]:
        got = hf.encode(text, add_special_tokens=False).ids
        assert mnn.encode(text, add_special_tokens=False) == got, text
        assert mnn.decode_bytes(got) == hf.decode(got, skip_special_tokens=False).encode(), text
    # the rows change no encoding: the same tree without them encodes every probe alike
    from dataclasses import replace

    plain = replace(tree, model=replace(tree.model, vocab=[r for r in tree.model.vocab if r[1] < min(ids.values())]))
    (tmp_path / "plain.mtok").write_bytes(mtokspec.build(plain))
    without = mtokspec.Tokenizer.from_file(tmp_path / "plain.mtok", semantics="mnn")
    texts = [*probe_texts(codes), *PROBE_EXTRA, "ace Arab zul_Lat n", "acm_Arab ace_Ara b", "ａｃｅ＿Ａｒａｂ"]
    assert [mnn.encode(s) for s in texts] == [without.encode(s) for s in texts]

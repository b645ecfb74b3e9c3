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

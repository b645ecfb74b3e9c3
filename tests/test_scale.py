"""Corpus-scale work: tokenizers pickle as their file's bytes, batches keep their order, and
``compare --jobs N`` (processes) or Dask give what one process gives."""

from __future__ import annotations

import json
import pickle

import pytest

import mtokspec
from mtokspec.cli import main
from mtokspec.compare import compare_runtimes
from mtokspec.parallel import dask_map, ordered_map
from tests._support import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")

FILES = ["t5-small/mnn.mtok", "roberta-base/mnn.txt", "whisper.tiny/mnn.mtok"]


def _texts(n: int = 60) -> list[str]:
    out: list[str] = []
    for kind in ("en", "zh", "code"):
        lines = [x for x in (CORPUS / "text" / f"bench_{kind}.txt").read_text(encoding="utf-8").splitlines() if x]
        out += lines[: n // 3]
    return out + ["", " ", "a\u0301\U0001F680 <|endoftext|>"]


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("name", FILES)
def test_a_tokenizer_pickles_as_its_file(name, semantics):
    path = CORPUS / "tok" / name
    tok = mtokspec.Tokenizer.from_file(path, semantics=semantics, max_expansion=7)
    data = pickle.dumps(tok)
    if semantics == "mnn" or name.endswith(".mtok"):  # (an upgraded legacy file pickles as its new tree)
        assert len(data) < path.stat().st_size + 1024
    back = pickle.loads(data)
    assert type(back) is type(tok) and back.semantics == semantics and back.max_expansion == 7
    texts = _texts(30)
    assert back.encode_batch(texts) == tok.encode_batch(texts)
    # a tokenizer built from a tree pickles as the codec writes the tree
    from_tree = mtokspec.Tokenizer.from_tree(mtokspec.parse(path.read_bytes()), semantics=semantics)
    assert pickle.loads(pickle.dumps(from_tree)).encode_batch(texts) == tok.encode_batch(texts)


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
def test_encode_batch_keeps_order(semantics):
    tok = mtokspec.Tokenizer.from_file(CORPUS / "tok" / "whisper.tiny" / "mnn.mtok", semantics=semantics)
    texts = _texts(30)
    texts = texts + texts[::-1]
    assert tok.encode_batch(texts) == [tok.encode(x) for x in texts]


def _square(x: int) -> int:
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * x


def test_ordered_map_is_one_process_in_order():
    seen = []
    items = list(range(500))
    assert ordered_map(_square, items, jobs=2, progress=lambda d, n: seen.append((d, n))) == [x * x for x in items]
    assert seen[-1] == (500, 500) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert ordered_map(_square, items, jobs=1) == [x * x for x in items]
    with pytest.raises(ValueError, match="negative: -3"):
        ordered_map(_square, [*items, -3], jobs=2)
    with pytest.raises(ValueError, match="jobs"):
        ordered_map(_square, items, jobs=0)


@pytest.mark.parametrize("name", ["whisper.tiny/mnn.mtok", "bert-base-cased-derived/mnn.txt"])
def test_compare_jobs_gives_the_one_process_report(name):
    path = CORPUS / "tok" / name
    texts = _texts(90)
    one = compare_runtimes(path, texts, jobs=1)
    two = compare_runtimes(path, texts, jobs=2)
    assert two.to_dict() == one.to_dict() and one.total == len(texts)


def test_cli_compare_jobs(tmp_path, capsys):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_texts(60)), encoding="utf-8")
    path = str(CORPUS / "tok" / "bert-base-cased-derived" / "mnn.mtok")
    outs = []
    for jobs in ("1", "2"):
        code = main(["compare", path, "--runtime", "mnn", "--text", str(cases), "--json", "--jobs", jobs])
        outs.append((code, capsys.readouterr().out))
    assert outs[0] == outs[1] and json.loads(outs[0][1])["total"] == 63
    assert main(["compare", path, "--runtime", "mnn", "--jobs", "0"]) == 2


def test_dask_runs_the_same_cases():
    pytest.importorskip("dask.bag", reason="dask is an optional extra (pip install 'mtokspec[dask]')")
    distributed = pytest.importorskip("distributed", reason="distributed is part of the dask extra")
    path = CORPUS / "tok" / "t5-small" / "mnn.mtok"
    texts = _texts(30)
    tok = mtokspec.Tokenizer.from_file(path, semantics="mnn")
    expected = tok.encode_batch(texts)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert dask_map(tok.encode, texts, client=client) == expected


def test_goldens_jobs_gives_the_one_process_file(tmp_path):
    cases = tmp_path / "texts.json"
    cases.write_text(json.dumps(_texts(40)), encoding="utf-8")
    folder = str(CORPUS / "tok" / "roberta-base")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"cases{jobs}.jsonl"
        assert main(["goldens", folder, "--text", str(cases), "-o", str(out), "--jobs", jobs, "-q"]) == 0
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1] and outs[0].count('"type": "basic"') >= 40
    assert main(["goldens", folder, "-o", str(tmp_path / "x.jsonl"), "--jobs", "0"]) == 2
    assert not (tmp_path / "x.jsonl").exists()

"""The README's tables of numbers come from the recorded runs, never typed by hand."""

from __future__ import annotations

import json

import pytest

from mtokspec.runtime.mnn import MNN_COMMIT
from tools import mnn_report, readme_tables
from tests._support import CORPUS, ROOT


def test_readme_tables_are_generated_from_the_records():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_tables.render(text) == text, "run python -m tools.readme_tables"


def test_the_agreement_record_is_this_corpus_and_this_mnn():
    """The record names the MNN commit the semantics models and covers every recorded file and output
    with every case of the corpus (the corpus tests check each case on every run)."""
    if not CORPUS.is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS}")
    record = json.loads((ROOT / "benchmarks" / "records" / "mnn_agreement.json").read_text(encoding="utf-8"))
    assert record["mnn_commit"] == MNN_COMMIT
    cases = sum(len(json.loads((CORPUS / "text" / f"{name}.json").read_text(encoding="utf-8")))
                for name in mnn_report.TEXT_SETS)
    files = {f"{d.name}/{fn}" for d in (CORPUS / "tok").iterdir() if (d / "ref_mnn.json").is_file()
             for fn in json.loads((d / "ref_mnn.json").read_text(encoding="utf-8"))["files"]}
    rows = record["rows"]
    assert {r["file"] for r in rows} == files
    assert {(r["file"], r["output"]) for r in rows} == {(f, o) for f in files for o in readme_tables.OUTPUTS}
    assert all(r["cases"] == cases and r["mnn_semantics_equals_mnn"] == cases for r in rows)


def test_the_public_pipelines_record_merges_by_folder_and_tallies_per_kind(tmp_path):
    """``tools.folder_agreement --record`` keeps one row per folder (a later run of some folders
    replaces theirs), and the README's table tallies the rows per target and kind of folder."""
    pytest.importorskip("tokenizers", reason="the record names HF tokenizers' version")
    from tools import folder_agreement

    def row(folder: str, ok: int, device: str) -> dict:
        return {"folder": folder, "cases": 10, "encode": ok, "raw": ok, "stream": ok, "stream_lenient": 10,
                "seq": 10, "seq_lenient": 10, "test_tokenizer": device, "examples": {}, "convert_s": 0.1}

    path = tmp_path / "public_pipelines.json"
    binary = str(tmp_path / "mnn_tok")
    folder_agreement.record([row("gpt2", 10, "4/4 passed"), row("v-bloom", 5, "3/4 passed, 1 failed")],
                            "mnn", binary, 10, path)
    folder_agreement.record([row("v-bloom", 10, "4/4 passed")], "mnn", binary, 10, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = doc["targets"]["mnn"]["rows"]
    assert [(r["folder"], r["kind"], r["encode"]) for r in rows] == [("gpt2", "converter", 10),
                                                                      ("v-bloom", "tokenizers-api", 10)]
    assert "examples" not in rows[0] and doc["targets"]["mnn"]["mnn_commit"] == MNN_COMMIT
    table = readme_tables.pipelines_table(doc)
    assert "| `--target mnn` | all | 2 | 100% | 100% | 2 | 8 / 8 = 100% | 2 |" in table
    assert [readme_tables._percent(*x) for x in ((99_999, 100_000), (185_406, 185_416), (1, 3))] == [
        "99.99%", "99.99%", "33.3%"]
    assert "| `--target mnn` | written by transformers' converters | 1 |" in table


def test_the_public_pipelines_record_covers_every_folder_the_builder_makes():
    """Freshness: each target's record holds a row for every ``tokenizers``-API folder
    ``tools.public_pipelines`` builds (a folder added to the builder needs ``tools.folder_agreement
    --record`` again; a converter folder is left out where transformers' converter fails) and none
    for a folder it no longer builds, each measured on the same texts, by the MNN commit the
    semantics models."""
    pytest.importorskip("tokenizers", reason="the builder's specs are tokenizers components")
    from tools.public_pipelines import all_specs

    record = json.loads((ROOT / "benchmarks" / "records" / "public_pipelines.json").read_text(encoding="utf-8"))
    names = {s.name for s in all_specs()}
    api = {s.name for s in all_specs() if s.source == "tokenizers-api"}
    for target, section in record["targets"].items():
        folders = {r["folder"] for r in section["rows"]}
        assert api <= folders <= names, (target, sorted(api - folders), sorted(folders - names))
        assert {r["cases"] for r in section["rows"]} == {section["texts"]} and section["mnn_commit"] == MNN_COMMIT


def test_every_differing_output_of_the_record_is_named():
    """The recorded run of ``--target mnn`` puts each differing output down to rules (no
    ``unexplained``, no ``semantics-gap``), and the README's "why the rest differs" tallies them."""
    record = json.loads((ROOT / "benchmarks" / "records" / "public_pipelines.json").read_text(encoding="utf-8"))
    for r in record["targets"]["mnn"]["rows"]:
        causes = r.get("causes")
        assert causes is not None, (r["folder"], "recorded without causes: run tools.folder_agreement --record")
        assert not {"unexplained", "semantics-gap"} & set(causes), (r["folder"], causes)
        for k, output in enumerate(("encode", "raw", "stream", "seq")):
            differing = r["cases"] - r[output]
            named = [counts[k] for counts in causes.values()]
            assert (max(named, default=0) > 0) == (differing > 0) and max(named, default=0) <= differing, (
                r["folder"], output)
    table = readme_tables.causes_table(record)
    assert "| `mnn-stream-decode` |" in table and "| `format:model.BPE[end_of_word_suffix]` | impossible |" in table


def test_causes_names_the_rules_of_a_folder(tmp_path):
    """``tools.folder_agreement.causes`` on a folder built with HF ``tokenizers`` (no binary: the mnn
    semantics): a SentencePiece-style stream starts with a space, MNN's per-id print."""
    tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers builds the folder and is the reference")
    from tokenizers import decoders, models, pre_tokenizers

    from mtokspec.convert import from_hf
    from tools import folder_agreement

    tok = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("\u2581", -1.0), ("a", -2.0), ("\u2581a", -1.5),
                                               ("b", -2.0), ("\u2581b", -1.5)], unk_id=0))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.save(str(tmp_path / "tokenizer.json"))
    tree = from_hf(tmp_path, target="mnn").tree
    texts = ["a b", "b"]
    got = folder_agreement.causes(tmp_path, tree, "mnn", texts, {"encode": [], "raw": [], "stream": [0, 1], "seq": []})
    assert got == {"mnn-stream-decode": [0, 0, 2, 0]}
    assert folder_agreement.causes(tmp_path, tree, "mnn", texts, {"encode": [0], "raw": [], "stream": [],
                                                                  "seq": []}) == {"semantics-gap": [1, 0, 0, 0]}

"""Every row of the ``--target mnn`` decision table holds on a folder HF ``tokenizers`` builds.

For each row with an ``example``: a folder is trained around it (:mod:`tests._support.variant_folders`),
converted with ``target="mnn"``, and the written file run through the ``mnn`` semantics (exact
against MNN's C++ runtime on every recorded case) against HF ``tokenizers`` itself, live, on the
probe texts: an exact row (or one exact within its bound, on the probes within it) differs on no text; any
other row differs only where the report names a cause, and an impossible row's cause is its own.
"""

from __future__ import annotations

import pytest

from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.reference import probe_texts
from mtokspec.convert.mnn_target.report import MnnLoss
from mtokspec.convert.mnn_target.variants import Verdict, rows, rows_of, table_markdown
from mtokspec.runtime.mnn import MnnTokenizer

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
from tests._support.variant_folders import PROBE_EXTRA, folder_for  # noqa: E402

ROWS = [v for v in rows() if v.example is not None]
ENCODE_STAGES = ("normalizer", "pre_tokenizer", "model", "post_processor", "added_tokens")


def _outputs(row) -> tuple[str, ...]:
    return ("seq",) if row.stage == "decoder" else ("encode", "raw")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("variants")


@pytest.mark.parametrize("row", ROWS, ids=[v.key for v in ROWS])
def test_row_holds_on_a_folder_hf_builds(row, root):
    folder = folder_for(row, root)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tj = __import__("json").loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    assert row in rows_of(tj), f"the folder does not use the row: {[v.key for v in rows_of(tj)]}"
    result = from_hf(folder, target="mnn")
    assert result.reference.startswith("HF tokenizers ")
    mnn = MnnTokenizer.from_tree(result.tree)
    added = [a["content"] for a in tj.get("added_tokens") or []]
    texts = probe_texts(added, PROBE_EXTRA)
    differing: dict[str, list[str]] = {o: [] for o in _outputs(row)}
    for text in texts:
        ids = hf.encode(text, add_special_tokens=False).ids
        got = {"encode": lambda: mnn.encode(text), "raw": lambda: mnn.encode(text, add_special_tokens=False),
               "seq": lambda: mnn.decode_bytes(ids)}
        want = {"encode": lambda: hf.encode(text).ids, "raw": lambda: ids,
                "seq": lambda: hf.decode(ids, skip_special_tokens=False).encode("utf-8")}
        for o in differing:
            if got[o]() != want[o]():
                differing[o].append(text)
    named = {(loss.output, loss.rule) for loss in result.losses if isinstance(loss, MnnLoss)}
    if row.verdict in (Verdict.EXACT, Verdict.BOUNDED):
        past = row.past_bound or (lambda text: False)
        within = {o: [x for x in v if not past(x)] for o, v in differing.items()}
        assert not any(within.values()), {o: [repr(x) for x in v[:5]] for o, v in within.items() if v}
        # past the bound MNN may differ, and the report names the row's rule for it (and nothing else)
        assert all(o not in differing or (differing[o] and rule == row.rule) for o, rule in named), named
        assert all((o, row.rule) in named for o, v in differing.items() if v), (row.rule, named)
        return
    for o, cases in differing.items():
        if cases:
            assert any(out == o for out, _ in named), (o, cases[:3])
            assert all(rule not in ("unexplained", "file-differs-from-tokenizer.json") for out, rule in named), named
    if row.verdict is Verdict.IMPOSSIBLE and any(differing.values()):
        assert any(rule == row.cause for _, rule in named), (row.cause, named)


def test_every_stage_has_rows_and_the_table_lists_them():
    stages = {v.stage for v in rows()}
    assert stages == {"normalizer", "pre_tokenizer", "model", "decoder", "post_processor", "added_tokens"}
    table = table_markdown()
    assert all(f"`{v.type}`" in table for v in rows())
    assert len({v.key for v in rows()}) == len(list(rows()))


def test_readme_and_docs_tables_are_generated_from_the_rows():
    from tools import readme_variants
    from tools.readme_sections import README

    assert readme_variants.DOC.read_text(encoding="utf-8") == readme_variants.render_doc(), \
        "run python -m tools.readme_variants"
    text = README.read_text(encoding="utf-8")
    assert readme_variants.render(text) == text, "run python -m tools.readme_variants"


def test_the_semantics_agrees_with_mnn_on_every_rows_folder():
    """``tools/mnn_semantics_check.py --rows --record``: MNN's own ``mnn_tok`` and the ``mnn``
    semantics gave the same four answers on every case of every row's folder (the tests above use
    the semantics in MNN's place)."""
    import json

    from tests._support import ROOT

    record = json.loads((ROOT / "benchmarks" / "records" / "mnn_semantics_new.json").read_text(encoding="utf-8"))
    seen = {r["folder"]: r for r in record["rows"]}
    for v in rows():
        if v.example is not None:
            name = v.key.replace("/", "_").replace(" ", "_")
            assert name in seen, f"{v.key}: not in the record (run python -m tools.mnn_semantics_check --rows --record)"
            assert seen[name]["agree"] == seen[name]["cases"] > 0, seen[name]


def test_bert_clean_text_drops_private_use_as_hf(root):
    """The BertNormalizer row's table after MNN's clean-up deletes the BMP's private-use characters
    (HF drops every Co; MNN keeps them), and U+2065, U+FFF0-U+FFF8, which that table would space and HF
    keeps, cross it unchanged; planes 15-16 stay past the bound the lint names."""
    from mtokspec.divergences.lint import lint

    row = next(v for v in rows() if v.key == "normalizer.BertNormalizer")
    folder = folder_for(row, root)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tree = from_hf(folder, target="mnn").tree
    mnn = MnnTokenizer.from_tree(tree)
    for text in ["a\ue000b", "x \uf8ff\ue123 y", "the\ue000re", "a\ufff0b \ufff8", "\ue000", "x\u2065y"]:
        assert mnn.encode(text) == hf.encode(text).ids, repr(text)
    assert mnn.encode("a\U000f0000b") != hf.encode("a\U000f0000b").ids
    codes = {(f.code, f.severity) for f in lint(tree, target="mnn")}
    assert ("mnn-bert-normalizer", "warning") in codes and ("mnn-table-normalizer", "info") in codes

"""``goldens --reference mtokspec`` never passes a device case that HF's own goldens fail.

For every row of the ``--target mnn`` decision table, on the folder HF ``tokenizers`` builds around
it (:mod:`tests._support.variant_folders`): the goldens mtokspec's own HF semantics writes are either
refused (a ``ConversionError`` naming what the ``.mtok`` loses) or the very lines HF's goldens hold,
the meta line apart.  An impossible or approximated row must be refused where it changes an answer.
"""

from __future__ import annotations

import pytest

from mtokspec.convert import ConversionError
from mtokspec.convert.mnn_target.goldens import goldens
from mtokspec.convert.mnn_target.reference import BASE_TEXTS
from mtokspec.convert.mnn_target.variants import rows

pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) writes the goldens compared against")
from tests._support.variant_folders import PROBE_EXTRA, folder_for  # noqa: E402

ROWS = [v for v in rows() if v.example is not None]
TEXTS = [*BASE_TEXTS[:40], *PROBE_EXTRA]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("goldens-reference")


def _cases(lines: list[dict]) -> list[dict]:
    return [x for x in lines if x.get("type") != "meta"]


@pytest.mark.parametrize("row", ROWS, ids=[v.key for v in ROWS])
def test_mtokspec_goldens_are_refused_or_hf_s_own(row, root):
    folder = folder_for(row, root)
    hf = goldens(folder, TEXTS, [])[0]
    assert "HF tokenizers" in hf[0]["reference"]
    try:
        ours = goldens(folder, TEXTS, [], reference="mtokspec")[0]
    except ConversionError as e:  # what the format loses, or the plain .mtok refused outright (WordLevel)
        assert ("cannot stand in for HF tokenizers" in str(e) and "install HF tokenizers" in str(e)
                or "no such model" in str(e)), e
        return
    assert "not HF tokenizers" in ours[0]["reference"]
    differing = [(a["input"], a, b) for a, b in zip(_cases(ours), _cases(hf)) if a != b]
    assert len(_cases(ours)) == len(_cases(hf)) and not differing, differing[:2]


def test_the_suffix_bpe_of_clip_is_refused(root):
    row = next(v for v in ROWS if v.stage == "model" and "end_of_word_suffix" in v.option)
    with pytest.raises(ConversionError, match="end_of_word_suffix"):
        goldens(folder_for(row, root), TEXTS[:4], [], reference="mtokspec")

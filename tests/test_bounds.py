"""Bounded work for any input (``mtokspec.runtime.shared.bounds``), one answer whatever the threads, and
the error contract of the tokenizers' public methods.

The hostile cases (``tools/hostile.py``) run in child processes under a memory limit and a
generous timeout, in the three configurations (compiled, pure, ``mnn``): a hang or an exception
that is not an ``mtokspec.Error`` fails.  Their times and peak memory are printed by
``python -m tools.hostile``, never asserted.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from tests._support import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import tree as t
from mtokspec import Tokenizer
from mtokspec.errors import TokenizerError
from mtokspec.runtime.shared import bounds
from mtokspec.runtime.mnn.regex import uses_wregex
from tools import hostile

QUICK = hostile.QUICK
TIMEOUT = 120.0  # seconds for all the quick cases and variants of one configuration together
MEMORY_GB = 2.0


# --- generated amplifying pipelines ---------------------------------------------------------------

def _variant_job(tmp_path) -> str:
    files = []

    @settings(max_examples=12, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(hostile.amplifying_files())
    def collect(tree):
        path = tmp_path / f"variant{len(files)}.mtok"
        try:
            path.write_bytes(mtokspec.build(tree))
        except mtokspec.Error:  # e.g. a Metaspace replacement the format cannot hold
            return
        files.append(str(path))

    collect()
    job = tmp_path / "variants.json"
    job.write_text(json.dumps({"files": files, "text": "aé " * 40}), encoding="utf-8")
    return f"@{job}"


@pytest.mark.parametrize("config", hostile.CONFIGS)
def test_hostile_cases_end_in_bounded_time_and_memory(config, tmp_path):
    results = hostile.run(QUICK + [_variant_job(tmp_path)], config, timeout=TIMEOUT, memory_gb=MEMORY_GB)
    bad = {name: r for name, r in results.items() if r["outcome"] not in ("ok", "refused")}
    assert not bad, bad
    assert set(QUICK) <= set(results)


@settings(max_examples=40, database=None, deadline=None)
@given(hostile.amplifying_files(), st.sampled_from(["hf", "mnn"]))
def test_amplifying_pipelines_are_refused_naming_the_stage(tree, semantics):
    try:
        tok = Tokenizer.from_tree(tree, semantics=semantics)
    except TokenizerError:  # e.g. HF's Metaspace takes one character
        return
    try:
        tok.decode([0] * 64) if isinstance(tree.decoder, t.SequenceDecoder) else tok.encode("aé " * 40)
    except TokenizerError as e:
        assert "max_expansion" in str(e) or "backtrack" in str(e)


def test_max_expansion_is_the_callers_to_raise(monkeypatch):
    monkeypatch.setattr(bounds, "MIN_OUTPUT", 1000)  # the floor (1 MiB) lowered to keep the texts short
    tree = hostile._file(normalizer=t.ReplaceNormalizer("a", "a" * 100))
    for semantics in ("hf", "mnn"):
        with pytest.raises(TokenizerError, match=r"normalizer Replace: .*max_expansion=64"):
            Tokenizer.from_tree(tree, semantics=semantics).encode("a" * 100)
        assert Tokenizer.from_tree(tree, semantics=semantics, max_expansion=200).encode("a" * 100)
    with pytest.raises(TypeError, match="max_expansion"):
        Tokenizer.from_tree(tree, max_expansion="big")
    with pytest.raises(ValueError, match="max_expansion"):
        Tokenizer.from_tree(tree, semantics="mnn", max_expansion=0)


def test_post_processor_repeating_the_sequence_is_bounded():
    tree = hostile._file()
    tree.post_processor = t.PostProcessorProgram([t.SequenceOp()] * 100)
    tok = Tokenizer.from_tree(tree)
    assert tok.encode("ab", add_special_tokens=True) == tok.encode("ab") * 1 == tok.encode("ab", False)
    with pytest.raises(TokenizerError, match="post-processor"):
        tok.encode("b" * 20_000, add_special_tokens=True)
    mnn = Tokenizer.from_tree(tree, semantics="mnn")
    try:
        mnn.encode("b" * 20_000, add_special_tokens=True)
    except TokenizerError as e:
        assert "post-processor" in str(e)


def test_one_regex_deadline_per_call():
    # each segment alone is quick to refuse or pass; together they share one deadline
    tree, work = hostile.CASES["split-deadline-200-segments"].make()
    with pytest.raises(TokenizerError, match="regex time"):
        work(Tokenizer.from_tree(tree))


def test_bpe_heap_merge_is_the_list_merge():
    from mtokspec.runtime.hf.models import bpe as B

    vocab = ["a", "b", "c", "ab", "bc", "abc", "ca", "cab", "aa", "aaa", "bb"]
    ids = {tok: i for i, tok in enumerate(vocab)}
    rows = sorted((tok.encode(), i) for tok, i in ids.items())
    merges = [(ids["a"], ids["b"], 0), (ids["b"], ids["c"], 1), (ids["ab"], ids["c"], 2), (ids["c"], ids["a"], 3),
              (ids["ca"], ids["b"], 4), (ids["a"], ids["a"], 5), (ids["aa"], ids["a"], 6), (ids["b"], ids["b"], 7)]
    model = B.BPE.from_tree(t.BPEModel(False, False, rows, merges))
    rng = random.Random(25)
    for _ in range(300):
        word = "".join(rng.choice("abc") for _ in range(rng.randint(2, 400)))
        syms = model._symbols(word)
        assert model._merge_long(list(syms)) == _list_merge(model, list(syms)), word


def _list_merge(model, syms):
    from mtokspec.runtime.hf.models import bpe as B

    saved = B._LONG_WORD
    B._LONG_WORD = 1 << 30
    try:
        return model._merge(syms)
    finally:
        B._LONG_WORD = saved


# --- one answer whatever the threads ----------------------------------------------------------------

def _thread_texts() -> list[str]:
    texts = []
    for ts in ("edge", "mixed", "code"):
        texts += json.loads((CORPUS / "text" / f"{ts}.json").read_text(encoding="utf-8"))[:25]
    return texts


def _same_answers_in_threads(tok, texts, threads: int = 8) -> None:
    def run(text):
        try:
            ids = tok.encode(text)
        except TokenizerError as e:
            return ("refused", type(e).__name__)
        return ("ok", ids, tok.decode(ids))

    alone = [run(x) for x in texts]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        with ThreadPoolExecutor(threads) as pool:
            together = list(pool.map(run, texts * 2))
    finally:
        sys.setswitchinterval(old)
    assert together == alone * 2


_CORPUS_FILES = sorted(str(p.relative_to(CORPUS / "tok")) for p in (CORPUS / "tok").glob("*/mnn.*")) \
    if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("name", _CORPUS_FILES)
def test_one_tokenizer_many_threads_one_answer(name, semantics):
    tok = Tokenizer.from_file(CORPUS / "tok" / name, semantics=semantics)
    _same_answers_in_threads(tok, _thread_texts())


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("pattern", ["(a|a)*b", "(a+)+é", "(a|aa)+é$", "a*a*a*a*a*a*b"])
def test_regex_budgets_are_per_call_not_shared(pattern, semantics, monkeypatch):
    monkeypatch.setattr(bounds, "REGEX_SECONDS", 0.25)  # the hopeless texts refused sooner
    # mtokspec's step budgets are exact, so any text gives one answer; a time bound (HF's Split,
    # std::wregex) is wall-clock, so those texts are far inside it or hopelessly past it
    tree = hostile._file(pre=t.SplitPreTokenizer(pattern, False, t.SplitBehavior.Isolated))
    tok = Tokenizer.from_tree(tree, semantics=semantics)
    texts = ["a" * n + end for n in range(0, 14, 3) for end in ("b", "!", "é")] + ["a" * 200 + "!", "aé" * 10]
    if semantics == "mnn" and not uses_wregex(pattern.encode()):
        texts += ["a" * 24 + "!", "a" * 45 + "!"]
    _same_answers_in_threads(tok, texts)


def test_every_stage_under_threads():
    # every stage with a per-call state: budgets, a regex deadline, lazily built tables and caches
    tree = hostile._file(
        normalizer=t.SequenceNormalizer([t.ReplaceNormalizer("a", "aa"), t.TableNormalizer([(0xE9, b"e")])]),
        pre=t.SequencePreTokenizer([t.SplitPreTokenizer(r"\s+|(a|a)*b", False, 0), t.ByteLevelPreTokenizer(False)]),
        decoder=t.SequenceDecoder([t.ReplaceDecoder("a", "aa"), t.ByteLevelDecoder()]))
    tree.model = t.BPEModel(False, False, sorted((bytes([b]), b) for b in range(256)), [])
    # (the HF pattern search is exponential in the run of "a": quick up to 8, hopeless from 20)
    texts = [("a" * n + "é b ") * (n % 5 + 1) for n in [*range(8), 20, 40]] + ["é b" * 300]
    for semantics in ("hf", "mnn"):
        _same_answers_in_threads(Tokenizer.from_tree(tree, semantics=semantics), texts)


# --- the error contract -------------------------------------------------------------------------------

_WRONG = [None, 1.5, b"x", ["x"], object()]


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
def test_wrong_python_types_are_type_errors_naming_the_parameter(semantics):
    tok = Tokenizer.from_tree(hostile._file(), semantics=semantics)
    calls = {
        "token": [lambda v: tok.token_to_id(v)],
        "i": [lambda v: tok.id_to_token(v), lambda v: tok.is_special(v), lambda v: tok.is_stop(v)],
        "ids": [lambda v: tok.decode(v), lambda v: tok.decode([v]), lambda v: tok.decode_bytes([v])],
        "token_id": [lambda v: tok.decode_stream().step(v)],
    }
    for param, fns in calls.items():
        for fn in fns:
            for value in _WRONG + [True]:
                if param == "token" and isinstance(value, str):
                    continue
                with pytest.raises(TypeError, match=f"^{param}: "):
                    fn(value)
    with pytest.raises(TypeError, match="^text: "):
        tok.encode(None)
    with pytest.raises(TypeError, match="^texts: "):
        tok.encode_batch(None)
    with pytest.raises(TypeError, match="^batch: "):
        tok.decode_batch(None)


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
def test_edge_values_are_data(semantics):
    tok = Tokenizer.from_tree(hostile._file(added=[t.AddedToken(9, True, False, False, "<x>")]), semantics=semantics)
    for i in (-1, -2**31, 2**31, 2**32, 2**63, 2**70):
        assert tok.id_to_token(i) is None
        assert isinstance(tok.decode([i, 0]), str)
        assert tok.is_special(i) in (True, False)
        assert tok.decode_stream().step(i) is None
    for text in ("", "\x00", "\ud800", "a\udcff\x00é", "<x>" * 3):
        ids = tok.encode(text)
        assert all(type(i) is int for i in ids)
        assert isinstance(tok.decode(ids), str)
    assert tok.token_to_id("") is None and tok.token_to_id("\ud800") is None


def test_validate_reports_hand_built_trees_never_raises():
    trees = [
        (t.MtokFile(header=t.make_header(), model=t.BPEModel(False, False, [(b"a", 0)], None)), "<root>"),
        (t.MtokFile(header=None, model=5), "header"),
        (t.MtokFile(header=t.make_header(), normalizer=t.ReplaceNormalizer(None, 3)), "normalizer.pattern"),
        (t.BertTxtFile(header=t.make_header(), tokens=[1, None]), "tokens[0]"),
        (t.MtokFile(header=t.make_header(), pre_tokenizer=t.SequencePreTokenizer([None, "x"])), "pre_tokenizer"),
        (t.MtokFile(header=t.make_header(), model=t.WordPieceModel(None, 5, "x", [(b"a", "0")])), "model"),
    ]
    for tree, path in trees:
        findings = mtokspec.validate(tree)
        assert any(f.severity == "error" and f.path.startswith(path) for f in findings), (tree, findings)
    with pytest.raises(TypeError, match="^tree_or_bytes: "):
        mtokspec.validate(None)
    with pytest.raises(TypeError, match="^target: "):
        mtokspec.lint(hostile._file(), target=None)


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
def test_missing_file_is_file_not_found(tmp_path, semantics):
    with pytest.raises(FileNotFoundError):
        Tokenizer.from_file(tmp_path / "absent.mtok", semantics=semantics)


def test_threads_share_no_budget():
    seen = []

    def run():
        with bounds.budget(10) as b:
            seen.append(b)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len({id(b) for b in seen}) == 4 and bounds._CURRENT.get() is None


def test_unigram_long_pieces_found_in_the_text_give_the_table_lattice(monkeypatch):
    from mtokspec.runtime.hf.models import unigram as U

    rng = random.Random(26)
    for _ in range(60):
        toks = sorted({rng.choice(["a", "b", "ab", "ba", "aab"]) for _ in range(4)}
                      | {"a" * 300, ("ab" * 200)[:rng.choice([260, 301])], "b" * 520})
        rows = sorted([(b"<unk>", 0, 0.0)] + [(x.encode(), i + 1, -rng.randint(1, 20) / 3) for i, x in enumerate(toks)])
        node = t.UnigramModel(0, False, rows)
        text = "".join(rng.choice(["a", "b", "ab" * 150, "a" * 300, "c", "b" * 600]) for _ in range(rng.randint(1, 10)))
        cut = U.Unigram.from_tree(node).segment(text)
        monkeypatch.setattr(U, "LONG_PIECE", 1 << 30)  # every piece through the prefix table
        assert U.Unigram.from_tree(node).segment(text) == cut, text
        monkeypatch.undo()


def test_compiled_unigram_leaves_long_words_to_the_lattice_when_pieces_are_long():
    # the compiled trie walk follows the text as far as a piece does from every start: quadratic
    # in a long word when pieces are long (12.8 s on the hostile 64 KB case); the pure lattice finds
    # long pieces in the text instead
    from mtokspec import speedups
    from mtokspec.runtime.hf.models import unigram as U

    if speedups.module() is None:
        pytest.skip("the compiled module is not built")
    rows = sorted([(b"<unk>", 0, 0.0), (b"a", 1, -1.0), (b"b", 2, -1.5), (b"a" * 300, 3, -2.0)])
    model = U.Unigram.from_tree(t.UnigramModel(0, False, rows))
    calls: list[int] = []

    class Spy:
        def __init__(self, core):
            self.core = core

        def word(self, w):
            calls.append(len(w))
            return self.core.word(w)

    model._core = Spy(model._accel())
    long_word = "a" * 700 + "b"
    pure = U.Unigram.from_tree(t.UnigramModel(0, False, rows))
    pure._core = False  # the pure lattice
    assert model.tokenize(long_word) == pure.tokenize(long_word) == (1,) * 100 + (3, 3, 2)
    assert model.tokenize("ab") and calls == [2]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")
def test_legacy_bpe_heap_merge_is_mnn_list_merge(monkeypatch):
    # type 3 (roberta's tokenizer.txt): the shared heap loop gives MNN's quadratic loop's merges
    from mtokspec.runtime.mnn import legacy

    tok = Tokenizer.from_file(CORPUS / "tok" / "roberta-base" / "mnn.txt", semantics="mnn")
    rng = random.Random(3)
    alphabet = sorted({c for s, _ in list(tok.ranks)[:3000] for c in s})
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 90))) for _ in range(300)]
    long_merges = [tok._bpe_long(w) for w in words]
    monkeypatch.setattr(legacy, "_LONG_TOKEN", 1 << 30)  # every token through MNN's own loop
    assert [tok._bpe(w) for w in words] == long_merges

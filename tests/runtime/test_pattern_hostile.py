"""Hostile patterns at every entry point that compiles one (issue 33): a cost bound read before
compiling (``mtokspec.format.growth.pattern_cost``, the bounds in ``mtokspec.runtime.shared.bounds``),
MNN's own refusals where MNN throws or crashes, class reads counted as steps, and the HF regex
time budget held per thread.  The property run draws patterns (nested counted repeats, deep groups,
huge classes, one inside another) through HF and MNN encode, ``validate``, ``lint`` and, as HF
folders made with ``tokenizers``, ``convert.from_hf(target="mnn")`` and ``goldens`` (every line HF's
own answer, asked again, or the library's refusal): in a child process under
2 GiB, each case within 10 s of CPU time (``tools/hostile.py``: ``check_entry_points``).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

import mtokspec
from mtokspec import Tokenizer
from mtokspec.errors import TokenizerError, UndefinedInMnn
from mtokspec.format import tree as t
from mtokspec.format.growth import pattern_cost
from mtokspec.runtime.mnn import wregex as W, wregex_compile as WC
from mtokspec.runtime.shared import bounds
from tests._support.bounded_run import run_bounded
from tools import hostile

MEMORY = 2 << 30  # every hostile case: under 2 GiB


def _tree(pattern: str) -> t.MtokFile:
    return hostile._split(pattern, "")[0]


def _encode(pattern: str, text: str, semantics: str):
    return Tokenizer.from_tree(_tree(pattern), semantics=semantics).encode(text)


# --- the cost bound -------------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "size", "depth", "repeat", "cls"), [
    ("(?:(?:(?:a{1000}){1000}){1000})", 1_001_001_001, 3, 1000, 0),
    ("(?:ab){3}", 9, 1, 3, 0),
    ("a{2}{3}", 6, 0, 3, 0),
    (r"\p{N}{1,3}", 3, 0, 3, 0),
    ("[a-z0-9_]{2,}", 9, 0, 2, 3),  # 3 items, 2 copies and the repeat's own
    ("(" * 3000 + "é" + ")" * 3000, 3001, 3000, 0, 0),
    (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", 29, 1, 0, 3),
])
def test_pattern_cost_is_the_product_of_counted_repeats(pattern, size, depth, repeat, cls):
    cost = pattern_cost(pattern)
    assert (cost.size, cost.depth, cost.largest_repeat, cost.largest_class) == (size, depth, repeat, cls)


def test_a_count_of_thousands_of_digits_is_counted_without_int():
    cost = pattern_cost("a{" + "7" * 5000 + "}")  # int() of 5,000 digits raises ValueError
    assert cost.size > bounds.PATTERN_SIZE and bounds.pattern_refusal("a{" + "7" * 5000 + "}")


# the last count libstdc++ compiles for each family (mnn_tok: N answers, N + 1 throws "Number of NFA
# states exceeds limit"), measured at MNN 6192cd9's reference build
_LIBSTDCXX_LAST_OK = {"a{N}é": 99_992, "(?:ab){N}é": 24_997, "(a|b){N}é": 12_498, "(?:a{10}){N}é": 7_141,
                      "é{2,N}": 49_997, "(?:é+){N}": 24_997, "(?:[ab]?x){N,}é": 16_663,
                      "(?=a)(?:b*|c){N}é": 12_497}


@pytest.mark.parametrize("family", sorted(_LIBSTDCXX_LAST_OK))
def test_wregex_state_count_is_libstdcxx_count(family):
    n = _LIBSTDCXX_LAST_OK[family]
    states = [WC.states(WC.parse(family.replace("N", str(k)))) for k in (n, n + 1)]
    assert states[0] <= WC.STATE_LIMIT < states[1]
    with pytest.raises(UndefinedInMnn, match="error_space"):
        _encode(family.replace("N", str(n + 1)), "ab", "mnn")


@pytest.mark.skipif(not os.environ.get("MNN_TOK_BIN"), reason="MNN_TOK_BIN (MNN's C++ tokenizer driver) not set")
def test_wregex_state_limit_is_mnns(tmp_path):
    def throws(pattern: str) -> bool:
        path = tmp_path / "p.mtok"
        path.write_bytes(mtokspec.build(_tree(pattern)))
        out = subprocess.run([os.environ["MNN_TOK_BIN"], "encode-raw", str(path)], input='{"text": "ab"}\n',
                             capture_output=True, text=True, timeout=60).stdout
        return "NFA states" in out

    n = _LIBSTDCXX_LAST_OK["(a|b){N}é"]
    assert not throws(f"(a|b){{{n}}}é") and throws(f"(a|b){{{n + 1}}}é")


# --- the cases ----------------------------------------------------------------------------

def test_nested_repeats_refused_before_compiling():
    pattern = hostile.NESTED_1000_CUBED
    t0 = time.process_time()
    with pytest.raises(TokenizerError, match="compiled size is 1,001,001,001"):
        _encode(pattern, "aaaa", "hf")
    # MNN's own engine keeps a counted repeat as one node: it answers, and so does mtokspec
    assert _encode(pattern, "aaaa", "mnn") == [1, 1]
    # std::wregex copies it: libstdc++ throws past its state limit, so MNN's encode throws
    with pytest.raises(UndefinedInMnn, match="past libstdc\\+\\+'s 100,000"):
        _encode(pattern + "é", "aaaa", "mnn")
    assert time.process_time() - t0 < 5


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("inner", ["a", "é"])
def test_deep_groups_are_the_librarys_error(semantics, inner):
    pattern = "(" * 3000 + inner + ")" * 3000
    with pytest.raises(TokenizerError, match="nested 3000 deep") as caught:
        _encode(pattern, "aé", semantics)
    assert type(caught.value) is TokenizerError  # MNN answers (mnn_tok: 19,335 levels); mtokspec does not follow


def test_groups_past_mnns_stack_are_undefined():
    pattern = "(" * 20_000 + "é" + ")" * 20_000  # mnn_tok crashes (SIGSEGV) from about 19,400
    with pytest.raises(UndefinedInMnn, match="overflow an 8 MiB stack"):
        _encode(pattern, "aé", "mnn")


def test_depth_at_the_bound_runs():
    depth = bounds.PATTERN_DEPTH
    pattern = "(?:" * depth + "a" + ")" * depth
    for semantics in ("hf", "mnn"):
        assert _encode(pattern, "aa", semantics) == [0, 0]  # each "a" a match of its own
        with pytest.raises(TokenizerError, match="past the 64 levels"):
            _encode("(" + pattern + ")", "aa", semantics)


def test_astral_class_is_fast_and_counted():
    t0 = time.process_time()
    assert _encode(hostile.ASTRAL_CLASS, hostile.ASTRAL[:20_000], "mnn") == []  # no token matches
    assert time.process_time() - t0 < 5
    # each test of the class costs its binary search, as libstdc++ makes it, in steps
    prog = WC.compile(hostile.ASTRAL_CLASS)
    cost = 1 + (21_000).bit_length() // WC.COMPARES_PER_STEP
    steps, spans = W.check(prog, hostile.ASTRAL[:1000], 10**9, b"")
    assert len(spans) == 250 and steps >= 1000 * cost
    assert WC.parse(hostile.ASTRAL_CLASS)[1][0][1].cost == cost


def test_a_class_of_ranges_costs_each_range():
    ranges = "".join(f"{chr(0x10000 + 3 * i)}-{chr(0x10000 + 3 * i + 1)}" for i in range(5000))
    assert WC.parse("[" + ranges + "]")[1][0][1].cost == 1 + 5000 // WC.COMPARES_PER_STEP
    # single characters: a binary search
    assert WC.parse("[" + ranges[::3] + "]")[1][0][1].cost == 1 + (5000).bit_length() // WC.COMPARES_PER_STEP
    with pytest.raises(UndefinedInMnn, match="std::wregex backtracks"):
        _encode("[" + ranges + "]", "\U0010ffff" * 4000, "mnn")  # 4,000 tests of 5,000 ranges each


def test_class_reads_are_steps_on_both_paths(runtime_path):
    # a 50,000-character run at every place: 5e9 reads, one _match step each place before
    with pytest.raises(UndefinedInMnn, match="each character a class reads counted"):
        _encode("[^x]{50000}y", "a" * 100_000, "mnn")
    # a long linear scan is not backtracking: the place's window does not count it
    assert _encode("[a]+", "a" * 1_000_000, "mnn") == [1] * 500_000


def test_repeat_count_past_int_is_mnns_throw():
    with pytest.raises(UndefinedInMnn, match="std::stoi"):
        _encode("a{99999999999}b", "aaab", "mnn")
    with pytest.raises(TokenizerError, match="Oniguruma"):  # HF refuses it too: too big number for repeat range
        _encode("a{99999999999}b", "aaab", "hf")
    assert _encode("a{2147483647}b", "aab", "mnn") == [1, 2]  # std::stoi takes it: no match, "aa" "b"


@pytest.mark.parametrize(("pattern", "says"), [
    (hostile.NESTED_1000_CUBED, "compiled size is 1,001,001,001"),
    (hostile.NESTED_1000_CUBED + "é", "compiled size"),
    (hostile.DEEP_GROUPS, "nested 3000 deep"),
    ("(bad", "does not compile: missing )"),
])
def test_validate_names_why_a_pattern_is_refused(pattern, says):
    t0 = time.process_time()
    found = [f for f in mtokspec.validate(_tree(pattern)) if f.code == "split-pattern"]
    assert len(found) == 1 and says in found[0].message, found
    assert time.process_time() - t0 < 2


def test_lint_predicts_mnns_own_refusals():
    def messages(pattern):
        return [f.message for f in mtokspec.lint(_tree(pattern), target="mnn") if f.code == "mnn-regex-backtracking"]

    assert any("error_space" in m for m in messages(hostile.NESTED_1000_CUBED + "é"))
    assert any("std::stoi" in m for m in messages("a{99999999999}"))
    assert messages(hostile.NESTED_1000_CUBED) == []  # MNN's own engine runs it
    assert messages(hostile.DEEP_GROUPS) == []  # MNN runs it; mtokspec's own bound is no MNN finding


# --- the HF regex budget, thread by thread -------------------------------------------------------

def test_hf_regex_budget_holds_per_thread_and_spares_the_others():
    hostile_tok = Tokenizer.from_tree(_tree("(a|aa)+é$"))
    text = "a" * 4999 + "!"
    bound = bounds.REGEX_SECONDS + bounds.REGEX_SECONDS_PER_CHAR * len(text)
    normal = Tokenizer.from_file(hostile.ROOT / "examples" / "tiny.mtok")
    lines = [f"Hello, world {k}! naïve café {k * 7}" for k in range(50)]
    expected = [normal.encode(x) for x in lines]
    refused: list[tuple[str, float]] = []
    answers: list[list[list[int]]] = []
    errors: list[BaseException] = []

    def attack():
        t0 = time.thread_time()
        try:
            hostile_tok.encode(text)
            refused.append(("answered", 0.0))
        except TokenizerError as e:
            refused.append((str(e), time.thread_time() - t0))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def work():
        try:
            for _ in range(5):
                answers.append([normal.encode(x) for x in lines])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=attack) for _ in range(3)] + [threading.Thread(target=work)]
    wall = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    wall = time.monotonic() - wall
    assert not errors and not any(th.is_alive() for th in threads)
    assert len(refused) == 3
    for message, spent in refused:
        assert "ran out of the call's regex time" in message
        assert spent < bound * 2 + 0.5, (spent, bound)  # each thread's own CPU time, whatever the others do (2x: the
        # deadline is polled between searches, and a loaded machine stretches the last one; 2.03 s was seen)
    assert answers == [expected] * 5  # the normal encodes: unaffected, same answers
    assert wall < 60


def test_hf_panicking_on_a_pattern_is_the_librarys_error(tmp_path):
    """HF tokenizers panics (Oniguruma's retry limit; pyo3's PanicException is no Exception) on
    ``(?:a+{100})é$``: goldens and convert name it as the reference failing (the property run
    found it escaping)."""
    pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
    from mtokspec.convert import ConversionError

    folder = hostile.hf_folder(tmp_path / "panics", "(?:a+{100})\u00e9$")
    with pytest.raises(ConversionError, match="HF tokenizers failed .PanicException"):
        hostile._goldens_are_hf(folder)


def test_hf_is_not_asked_to_run_a_pattern_past_the_bounds(tmp_path):
    """Groups nested 200 deep: HF's Oniguruma takes a third of a second a text (26 s for goldens'
    texts, found by the property run); the reference refuses the folder at once, naming the bound."""
    pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) is the reference")
    from mtokspec.convert import ConversionError

    folder = hostile.hf_folder(tmp_path / "deep", "(" * 200 + "a" + ")*" * 200)
    t0 = time.process_time()
    with pytest.raises(ConversionError, match="nested 200 deep.*HF tokenizers is not asked"):
        hostile._goldens_are_hf(folder)
    assert time.process_time() - t0 < 2
    # within the bounds of a pattern, one that backtracks: Oniguruma took 12 minutes on goldens' texts;
    # mtokspec's own bounded run of it refuses the text first
    folder = hostile.hf_folder(tmp_path / "repeats", "(a+){2}\u00e9")
    t0 = time.process_time()
    with pytest.raises(ConversionError, match="ran out of the call's regex time.*reference='mtokspec'"):
        hostile._goldens_are_hf(folder)
    assert time.process_time() - t0 < 10


def test_compiled_pattern_caches_keep_the_newest_few():
    """A process that reads many files keeps at most ``PATTERN_CACHE`` compiled patterns per engine
    (a long run of drawn patterns grew to 24 GB: ``(?:(?:(?:é{1000}){7}){7})``'s automaton alone is
    49,000 states)."""
    from mtokspec.runtime.mnn import regex as R, regex_compile as RC

    for i in range(bounds.PATTERN_CACHE + 10):
        R.split("aaa\u00e9".encode(), f"a{{1,{i + 1}}}\u00e9".encode(), False, "Isolated")  # std::wregex
        R.split(b"abc", f"\\p{{L}}{{1,{i + 1}}}".encode(), False, "Isolated")  # MNN's own engine
    assert max(len(R._wregex_cache), len(RC._compiled), len(R._programs)) <= bounds.PATTERN_CACHE
    assert f"\\p{{L}}{{1,{bounds.PATTERN_CACHE + 10}}}".encode() in RC._compiled  # the newest stays


# --- the property run -------------------------------------------------------------------------------

def test_drawn_hostile_patterns_at_every_entry_point():
    out = run_bounded(["-m", "tools.hostile", "--patterns", "40"], memory=MEMORY, timeout=600,
                      label="hostile patterns")
    assert out.returncode == 0, out.err[-3000:]
    rows = [line for line in out.stdout.decode().splitlines() if line.startswith("{")]
    assert len(rows) >= 40 * 4 + 5

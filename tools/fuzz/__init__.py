"""Fuzz every public entry point: only an ``mtokspec.Error`` may escape, and every call ends in time.

    python -m tools.fuzz --minutes 10                # each entry point for 10 minutes
    python -m tools.fuzz --minutes 1 --only runtime  # one entry point

The entry points (``TARGETS``) and their input strategies are shared with ``tests/test_fuzz.py``,
which runs each for a bounded number of examples.  Here each runs in batches of fresh random
examples (no example database) until its time is up; a failure is shrunk by Hypothesis, printed
and counted, and the run goes on.  Exit 1 when anything failed.

Inputs: ``.mtok`` and legacy files from :mod:`mtokspec.testing.strategies` (``valid=False``) with random
byte edits; ``to_dict`` documents and ``tokenizer.json`` folders with random edits (:func:`mutated`:
a key or element deleted, or a value replaced by null, a bool, a number, a string, a list or a
dict); texts and ids of any kind (lone surrogates, ints < 0 and >= 2**32); hostile sizes: files
with decimals of 11 to 20,000 digits, YAML alias bombs and long numbers in plain documents,
templates with huge ``strftime_now`` widths, growing string methods and deeply nested expressions.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.fuzz import calls
from tools.fuzz.calls import _leaves, describe
from tools.fuzz.inputs import hf_folders, legacy_files, parsed_files, tokenizer_file_bytes
from tools.fuzz.entry_points import (
    check_cli, check_codec, check_from_dict, check_from_hf, check_hostile, check_lint, check_runtime,
    check_runtime_mnn, check_to_hf, check_upgrade, cli_inputs, dict_documents, hostile_inputs,
    runtime_inputs,
)
from tools.fuzz.hostile import (
    chat_bound_templates, check_chat_bounds, check_plain, long_decimal_files, plain_texts,
)


@dataclass(frozen=True)
class Target:
    name: str
    inputs: Callable[[], st.SearchStrategy]
    check: Callable[[object], None]


TARGETS = {t.name: t for t in [
    Target("codec", tokenizer_file_bytes, check_codec),
    Target("from_dict", dict_documents, check_from_dict),
    Target("runtime", runtime_inputs, check_runtime),
    Target("runtime_mnn", runtime_inputs, check_runtime_mnn),
    Target("lint", tokenizer_file_bytes, check_lint),
    Target("to_hf", parsed_files, check_to_hf),
    Target("upgrade", legacy_files, check_upgrade),
    Target("from_hf", hf_folders, check_from_hf),
    Target("cli", cli_inputs, check_cli),
    Target("long_decimals", long_decimal_files, check_codec),
    Target("plain_text", plain_texts, check_plain),
    Target("chat_bounds", chat_bound_templates, check_chat_bounds),
    Target("hostile", hostile_inputs, check_hostile),
]}


def fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), print_blob=True)


def run_target(target: Target, seconds: float, batch: int = 200, log=print) -> tuple[int, list[str]]:
    """Batches of ``batch`` fresh examples until ``seconds`` are spent: (inputs tried, failures)."""
    tried = 0
    failures: list[str] = []
    deadline = time.monotonic() + seconds

    def count(x):
        nonlocal tried
        tried += 1
        target.check(x)

    while time.monotonic() < deadline:
        test = settings(fuzz_settings(batch))(given(target.inputs())(count))
        try:
            test()
        except Exception as e:  # a broken contract: keep its shrunk report and go on
            for one in _leaves(e):
                failures.append(describe(one))
                log(f"  FAIL {target.name}: {failures[-1]}")
    return tried, failures


def warm_up() -> None:
    """Build what a process builds once, whatever the input (the Unicode normalisation tables:
    about 0.2 s per form), so that the time bound measures each input's own cost."""
    from mtokspec.convert import unicode_tables
    for form in unicode_tables.FORMS:
        unicode_tables.normalization_table(form)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=1.0, help="per entry point (default 1)")
    parser.add_argument("--only", action="append", choices=sorted(TARGETS), help="these entry points only")
    parser.add_argument("--memory", type=float, metavar="MB",
                        help="also fail a call whose allocations peak above MB megabytes (slower: tracemalloc)")
    args = parser.parse_args(argv)
    if args.memory:
        calls.MEMORY_LIMIT = int(args.memory * 2**20)
        tracemalloc.start()
    warnings.simplefilter("ignore")  # Hypothesis' warnings about big reprs of failing inputs
    warm_up()
    total_failures = 0
    for name in args.only or list(TARGETS):
        start = time.monotonic()
        tried, failures = run_target(TARGETS[name], args.minutes * 60)
        total_failures += len(failures)
        print(f"{name}: {tried} inputs in {time.monotonic() - start:.0f} s, {len(failures)} failure(s)", flush=True)
    return 1 if total_failures else 0

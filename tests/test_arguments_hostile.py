"""Odd arguments at the public surface (issue 33): ``load``'s options and ``upgrade_options``,
``max_expansion``, and ``mtokspec.parallel.ordered_map``/``dask_map``.  Whatever Hypothesis draws,
the call gives a result or an ``mtokspec.Error``; a wrong type is an ``ArgumentTypeError`` and a
right-typed value out of range an ``ArgumentValueError``, each message starting with the parameter's
name (README: "The error contract and the bounds of a call")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import ArgumentTypeError, ArgumentValueError, Tokenizer
from mtokspec.parallel import dask_map, ordered_map
from tests._support import ROOT

TINY = ROOT / "examples" / "tiny.mtok"
ANY = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                st.text(max_size=5), st.binary(max_size=5), st.lists(st.integers(), max_size=3),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
SETTINGS = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _named(e: mtokspec.Error, *names: str) -> None:
    assert str(e).split(":")[0] in names, str(e)


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("value", [0, -1, -2**70])
def test_max_expansion_out_of_range(semantics, value):
    with pytest.raises(ArgumentValueError, match="^max_expansion: expected an int of at least 1, got"):
        Tokenizer.from_file(TINY, semantics=semantics, max_expansion=value)


@pytest.mark.parametrize("semantics", ["hf", "mnn"])
def test_unknown_option_names_itself(semantics):
    with pytest.raises(ArgumentTypeError, match="^bogus: not an option of semantics="):
        Tokenizer.from_file(TINY, semantics=semantics, bogus=1)


def test_upgrade_options_are_checked():
    legacy = mtokspec.build(mtokspec.parse(TINY.read_bytes()))  # an .mtok: options refused as before
    with pytest.raises(ArgumentTypeError, match="^upgrade_options: expected a dict or None, got str"):
        mtokspec.load(legacy, upgrade_options="x")
    with pytest.raises(ArgumentTypeError, match="^upgrade_options: 'nope' is not an option of mtokspec.convert.upgrade"):
        mtokspec.load(legacy, upgrade_options={"nope": 1})
    with pytest.raises(mtokspec.TokenizerError, match="legacy tokenizer.txt files only"):
        mtokspec.load(legacy, upgrade_options={"lowercase": True})


@SETTINGS
@given(semantics=st.sampled_from(["hf", "mnn", None, 1, "HF"]), options=st.dictionaries(
    st.sampled_from(["max_expansion", "serde_scores", "bogus", "upgrade_options"]), ANY, max_size=3))
def test_load_options_are_a_result_or_the_librarys_error(semantics, options):
    try:
        tok = mtokspec.load(TINY, semantics=semantics, **options)
    except ArgumentTypeError as e:
        _named(e, "semantics", *options)
    except ArgumentValueError as e:
        _named(e, "max_expansion")
    except mtokspec.Error:
        pass
    else:
        assert tok.encode("Hi")


def _double(x):
    return 2 * x


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    ({"jobs": 0}, ArgumentValueError, "jobs"), ({"jobs": -3}, ArgumentValueError, "jobs"),
    ({"jobs": 1.5}, ArgumentTypeError, "jobs"), ({"jobs": True}, ArgumentTypeError, "jobs"),
    ({"chunk_size": "x"}, ArgumentTypeError, "chunk_size"), ({"chunk_size": 1.5}, ArgumentTypeError, "chunk_size"),
    ({"chunk_size": -1}, ArgumentValueError, "chunk_size"), ({"chunk_size": 0}, ArgumentValueError, "chunk_size"),
    ({"fn": None}, ArgumentTypeError, "fn"), ({"progress": 3}, ArgumentTypeError, "progress"),
    ({"items": 5}, ArgumentTypeError, "items"), ({"items": "abc"}, ArgumentTypeError, "items"),
])
def test_ordered_map_checks_its_arguments(kwargs, error, name):
    call = {"fn": _double, "items": [1, 2, 3], **kwargs}
    with pytest.raises(error) as caught:
        ordered_map(call.pop("fn"), call.pop("items"), **call)
    _named(caught.value, name)


@SETTINGS
@given(jobs=st.one_of(st.none(), ANY), chunk_size=st.one_of(st.none(), ANY), items=st.lists(st.integers(), max_size=9))
def test_ordered_map_is_a_result_or_the_librarys_error(jobs, chunk_size, items):
    if isinstance(jobs, int) and not isinstance(jobs, bool) and jobs > 1:
        jobs = 1  # the worker pool is test_scale's; here the checks and the one-process path
    try:
        out = ordered_map(_double, items, jobs=jobs, chunk_size=chunk_size)
    except (ArgumentTypeError, ArgumentValueError) as e:
        _named(e, "jobs", "chunk_size")
    else:
        assert out == [2 * x for x in items]


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    ({"fn": None}, ArgumentTypeError, "fn"), ({"partitions": 0}, ArgumentValueError, "partitions"),
    ({"partitions": "2"}, ArgumentTypeError, "partitions"), ({"items": 7}, ArgumentTypeError, "items"),
])
def test_dask_map_checks_its_arguments(kwargs, error, name):
    call = {"fn": _double, "items": [1, 2, 3], **kwargs}
    with pytest.raises(error) as caught:
        dask_map(call.pop("fn"), call.pop("items"), **call)
    _named(caught.value, name)

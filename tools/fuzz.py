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
import builtins
import contextlib
import gc
import io
import json
import re
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies as ms
from mtokspec.names import SEMANTICS

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

SLOW_CALL_SECONDS = 1.0
"""The bound on one call with hostile input (the issue's contract)."""


class TooSlow(AssertionError):
    """A call took longer than the bound."""


MEMORY_LIMIT: int | None = None
"""With ``--memory MB``: the bound on the peak of memory allocated during one call (tracemalloc)."""


class TooBig(AssertionError):
    """A call allocated more than the bound."""


@contextlib.contextmanager
def timed(what: str, limit: float):
    """Bound the work of the block by the process's CPU time (not the wall clock, which other
    processes on a shared CI machine stretch), with the cyclic garbage collector paused so that a
    collection of the whole test session's heap is not billed to the call under test.  The wall
    clock still bounds waiting (ten times the limit), where no CPU time is spent."""
    if MEMORY_LIMIT is not None:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    collecting = gc.isenabled()
    gc.disable()
    start, wall_start = time.process_time(), time.perf_counter()
    try:
        yield
    finally:
        spent, waited = time.process_time() - start, time.perf_counter() - wall_start
        if collecting:
            gc.enable()
    if MEMORY_LIMIT is not None:
        peak = tracemalloc.get_traced_memory()[1] - base
        if peak > MEMORY_LIMIT:
            raise TooBig(f"{what} allocated {peak / 2**20:.1f} MB (bound {MEMORY_LIMIT / 2**20:.0f} MB)")
        limit *= 4  # tracing slows every allocation down
    if spent > limit:
        raise TooSlow(f"{what} took {spent:.2f} s of CPU time (bound {limit} s)")
    if waited > 10 * limit:
        raise TooSlow(f"{what} took {waited:.2f} s (bound {10 * limit} s while waiting)")


def refused_or_ok(what: str, fn: Callable, *args, limit: float = SLOW_CALL_SECONDS, **kw):
    """``fn(*args, **kw)``, or None when it raised an ``mtokspec.Error``; anything else escapes."""
    with timed(what, limit):
        try:
            return fn(*args, **kw)
        except mtokspec.Error:
            return None


# ---------------------------------------------------------------------------------------------
# inputs

ANY_TEXT = st.text(st.characters(codec=None), max_size=40)  # lone surrogates included
ANY_ID = st.one_of(st.integers(-3, 40), st.integers(-2**70, 2**70), st.sampled_from([2**32, 2**32 - 1, 2**63, -2**31]))
IDS = st.lists(ANY_ID, max_size=12)


@st.composite
def byte_edits(draw, data: bytes) -> bytes:
    """``data`` with 0-4 random byte edits: a byte changed, bytes inserted or deleted, cut short."""
    b = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(b)))
        if kind == 0 and at < len(b):
            b[at] = draw(st.integers(0, 255))
        elif kind == 1:
            b[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif kind == 2:
            del b[at:at + draw(st.integers(1, 4))]
        else:
            del b[at:]
    return bytes(b)


def tokenizer_file_bytes() -> st.SearchStrategy[bytes]:
    """``.mtok`` (valid or not, as the strategies make them) and legacy files, then byte edits."""
    files = st.one_of(ms.mtok_bytes(valid=False), ms.mtok_bytes(valid=True), ms.txt_bytes())
    return files.flatmap(lambda d: st.one_of(st.just(d), byte_edits(d)))


def parsed_files() -> st.SearchStrategy:
    """Trees of files that parse (the runtime and the converters start from one)."""
    return tokenizer_file_bytes().map(_parse_or_none).filter(lambda tree: tree is not None)


def _parse_or_none(data: bytes):
    try:
        return mtokspec.parse(data)
    except mtokspec.MtokFormatError:
        return None


def legacy_files() -> st.SearchStrategy:
    """Legacy tokenizer.txt trees that parse (valid ones and edited bytes)."""
    files = st.one_of(ms.txt_bytes(), ms.txt_bytes().flatmap(byte_edits))
    return files.map(_parse_or_none).filter(lambda tree: tree is not None)


_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                          st.sampled_from([-1, 0, 1, 2**32, 2**63, 1e308, -0.5]), st.floats(allow_nan=False),
                          st.text(max_size=6))
_JSON_VALUES = st.one_of(_JSON_SCALARS, st.lists(_JSON_SCALARS, max_size=3),
                         st.dictionaries(st.text(max_size=6), _JSON_SCALARS, max_size=3))


def _paths(doc, limit: int = 4000) -> list[tuple]:
    """Paths to the values of a JSON document, shallow ones first; long lists contribute their
    first, second and last elements only, so a vocabulary does not crowd out the structure."""
    out: list[tuple] = []
    todo = [((), doc)]
    while todo and len(out) < limit:
        nxt = []
        for path, v in todo:
            if isinstance(v, dict):
                items = list(v.items())
                if len(items) > 24:
                    items = items[:2] + items[-1:]
                kids = [(path + (k,), x) for k, x in items]
            elif isinstance(v, list):
                idx = range(len(v)) if len(v) <= 24 else (0, 1, len(v) - 1)
                kids = [(path + (i,), v[i]) for i in idx]
            else:
                continue
            out.extend(p for p, _ in kids)
            nxt.extend(kids)
        todo = nxt
    return out[:limit]


def _edit(doc, path: tuple, value, delete: bool):
    """A copy of ``doc`` with the value at ``path`` replaced or deleted; only the containers on the
    path are copied (documents share the rest, so a big vocabulary costs nothing)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    new = dict(doc) if isinstance(doc, dict) else list(doc)
    if rest:
        new[head] = _edit(doc[head], rest, value, delete)
    elif delete:
        del new[head]
    else:
        new[head] = value
    return new


@st.composite
def mutated(draw, doc, max_edits: int = 4):
    """``doc`` (a JSON document) with 1-``max_edits`` random edits: a key or element deleted, or a
    value replaced by null, a bool, a number, a string, a list or a dict."""
    for _ in range(draw(st.integers(1, max_edits))):
        paths = _paths(doc)
        if not paths:
            return draw(_JSON_VALUES)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        delete = draw(st.booleans())
        doc = _edit(doc, path, None if delete else draw(_JSON_VALUES), delete)
    return doc


# ---------------------------------------------------------------------------------------------
# tokenizer.json folders

def _small_corpus_docs() -> list[tuple[dict, dict | None]]:
    """The corpus tokenizer.json documents cut to a small vocabulary (the first merges and the
    tokens they name, added tokens, special tokens), with their tokenizer_config.json."""
    out = []
    for folder in sorted(CORPUS.glob("tok/*")) if CORPUS.is_dir() else []:
        tj_path = folder / "tokenizer.json"
        if not tj_path.is_file():
            continue
        tj = json.loads(tj_path.read_text(encoding="utf-8"))
        model = dict(tj["model"])
        vocab = model.get("vocab")
        if isinstance(vocab, dict):
            merges = model.get("merges") or []
            keep = merges[:40]
            names = set(list(vocab)[:60])
            for m in keep:
                names.update(m.split(" ", 1) if isinstance(m, str) else m)
            model["vocab"] = {k: v for k, v in vocab.items() if k in names}
            if "merges" in model:
                model["merges"] = keep
        elif isinstance(vocab, list):
            model["vocab"] = vocab[:80]
        tj = {**tj, "model": model}
        cfg_path = folder / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else None
        out.append((tj, cfg))
    return out


_SEEDS: list | None = None


def hf_seed_docs() -> list[tuple[dict, dict | None]]:
    """(tokenizer.json, tokenizer_config.json) pairs to mutate: the corpus ones, cut small, and the
    ``to_hf`` documents of two example files (so the fuzzer has seeds without the corpus)."""
    global _SEEDS
    if _SEEDS is None:
        from mtokspec.convert import to_hf
        seeds = _small_corpus_docs()
        example = mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes())
        seeds.append((to_hf(example), {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True,
                                       "bos_token": "<s>", "eos_token": "</s>", "chat_template": "{{ messages }}"}))
        _SEEDS = seeds
    return _SEEDS


@st.composite
def hf_folders(draw) -> dict[str, object]:
    """A model folder as ``{file name: content}``: a JSON document (mutated), raw bytes (malformed
    JSON), or the marker ``DIRECTORY`` (a folder where the file should be); a file may be absent."""
    tj, cfg = draw(st.sampled_from(hf_seed_docs()))
    files: dict[str, object] = {}
    for name, doc in (("tokenizer.json", tj), ("tokenizer_config.json", cfg),
                      ("special_tokens_map.json", {"bos_token": "<s>", "additional_special_tokens": ["<x>"]}),
                      ("generation_config.json", {"eos_token_id": [2, 7]})):
        if doc is None:
            continue
        # tokenizer.json mostly mutated (without it the converter stops at once)
        kind = draw(st.sampled_from(["as is"] + ["mutated"] * (8 if name == "tokenizer.json" else 3)
                                    + ["absent", "bytes", "directory"]))
        if kind == "as is":
            files[name] = doc
        elif kind == "mutated":
            files[name] = draw(mutated(doc))
        elif kind == "bytes":
            files[name] = byte_edit_json(draw, doc)
        elif kind == "directory":
            files[name] = DIRECTORY
    return files


DIRECTORY = object()


def byte_edit_json(draw, doc) -> bytes:
    text = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return draw(st.one_of(byte_edits(text[:2000]), st.binary(max_size=20)))


def write_folder(root: Path, files: dict[str, object]) -> None:
    for name, content in files.items():
        p = root / name
        if content is DIRECTORY:
            p.mkdir()
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")


# ---------------------------------------------------------------------------------------------
# the entry points: each takes one drawn input and raises only when the contract is broken


def check_codec(data: bytes) -> None:
    """parse, then validate and to_dict of what parsed, and :func:`check_from_dict` of that."""
    tree = refused_or_ok("parse", mtokspec.parse, data)
    if tree is None:
        return
    refused_or_ok("validate", mtokspec.validate, tree)
    doc = refused_or_ok("to_dict", mtokspec.to_dict, tree)
    if doc is not None:
        check_from_dict(doc)


@st.composite
def dict_documents(draw):
    tree = draw(parsed_files())
    return draw(mutated(mtokspec.to_dict(tree)))


def check_from_dict(doc) -> None:
    """from_dict of an edited document, then build and validate of what it accepted."""
    tree = refused_or_ok("from_dict", mtokspec.from_dict, doc)
    if tree is None:
        return
    refused_or_ok("validate", mtokspec.validate, tree)
    data = refused_or_ok("build", mtokspec.build, tree)
    if data is not None:
        refused_or_ok("parse", mtokspec.parse, data)


_MESSAGES = st.one_of(
    st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool"]),
                                    "content": ANY_TEXT}), max_size=3),
    st.lists(st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=3), max_size=3),
    _JSON_VALUES,
)


def runtime_inputs():
    return st.tuples(parsed_files(), ANY_TEXT, IDS, st.booleans(), _MESSAGES, st.one_of(st.none(), st.text(max_size=40)))


def check_runtime(args) -> None:
    """Tokenizer.from_tree, then encode / encode_batch / decode / decode_stream / apply_chat_template."""
    from mtokspec import Tokenizer

    tree, text, ids, special, messages, template = args
    tok = refused_or_ok("Tokenizer.from_tree", Tokenizer.from_tree, tree)
    if tok is None:
        return
    refused_or_ok("encode", tok.encode, text, add_special_tokens=special)
    refused_or_ok("encode_batch", tok.encode_batch, [text, text[::-1], ""], add_special_tokens=not special)
    refused_or_ok("decode", tok.decode, ids, skip_special_tokens=special)
    stream = tok.decode_stream(skip_special_tokens=special)
    for i in ids:
        refused_or_ok("decode_stream.step", stream.step, i)
    _check_stream(tok, ids, special, "")
    refused_or_ok("hold_table", mtokspec.hold_table, tok)
    refused_or_ok("apply_chat_template", tok.apply_chat_template, messages, template=template)


def _check_stream(tok, ids, special: bool, label: str) -> None:
    """Tokenizer.stream(): each step and the flush refused or text; joined, the decode when that is one."""
    stream = refused_or_ok(f"{label}stream", tok.stream, skip_special_tokens=special)
    if stream is None:
        return
    out = []
    for i in ids:
        piece = refused_or_ok(f"{label}stream.step", stream.step, i)
        if piece is None:
            return
        out.append(piece)
    rest = refused_or_ok(f"{label}stream.flush", stream.flush)
    whole = refused_or_ok(f"{label}decode", tok.decode, ids, skip_special_tokens=special)
    if rest is not None and whole is not None:
        assert "".join(out) + rest == whole, f"{label}stream joined {''.join(out) + rest!r} != decode {whole!r}"


def check_to_hf(tree) -> None:
    """to_hf of any parsed file (legacy ones through upgrade)."""
    from mtokspec.convert import to_hf, upgrade
    if not isinstance(tree, mtokspec.MtokFile):
        result = refused_or_ok("upgrade", upgrade, tree)
        if result is None:
            return
        tree = result.tree
    refused_or_ok("to_hf", to_hf, tree)


def check_upgrade(tree) -> None:
    """upgrade of any parsed legacy file (and its refusal of a .mtok), then build."""
    from mtokspec.convert import upgrade
    result = refused_or_ok("upgrade", upgrade, tree)
    if result is not None:
        refused_or_ok("build", mtokspec.build, result.tree)


def check_from_hf(files: dict[str, object]) -> None:
    """from_hf on a written folder, then build of the tree."""
    from mtokspec.convert import from_hf
    from mtokspec.convert.targets import UNCHECKED
    with tempfile.TemporaryDirectory(prefix="mtokspec-fuzz-") as tmp:
        write_folder(Path(tmp), files)
        try:
            with timed("from_hf", SLOW_CALL_SECONDS):
                result = from_hf(tmp)
        except mtokspec.Error as e:
            assert UNCHECKED not in str(e), f"refused without a field check: {describe(e.__cause__)}"
            result = None
        if result is not None:
            refused_or_ok("build", mtokspec.build, result.tree)


_COMMANDS = [
    ["inspect", "{f}"], ["inspect", "--json", "{f}"], ["validate", "{f}"], ["dump", "{f}"],
    ["dump", "--format", "json", "{f}"], ["build", "{f}", "-o", "{o}"], ["encode", "{f}", "{text}"],
    ["decode", "{f}", "{id}", "{id}"], ["chat", "{f}", "--messages", "{f}"], ["upgrade", "{f}", "-o", "{o}"],
    ["export-hf", "{f}", "-o", "{o}"], ["convert", "{d}", "-o", "{o}"],
    ["compare", "{f}", "--against", "{d}/tokenizer.json"],
    ["lint", "{f}"], ["lint", "--json", "--all", "{f}"], ["encode", "{f}", "{text}", "--runtime", "mnn"],
    ["decode", "{f}", "{id}", "{id}", "--runtime", "mnn", "--stream"], ["compare", "{f}", "--runtime", "mnn"],
    ["stream", "{f}", "{id}", "{id}"], ["stream", "{f}", "{id}", "{id}", "--runtime", "mnn", "--json"],
    ["hold-table", "{f}", "-o", "{o}"],
]


def check_runtime_mnn(args) -> None:
    """Tokenizer.from_tree(semantics="mnn"), then encode (str and raw bytes) / encode_batch /
    decode / decode_bytes (both decodes) / decode_stream / apply_chat_template."""
    from mtokspec import Tokenizer

    tree, text, ids, special, messages, template = args
    tok = refused_or_ok("Tokenizer.from_tree(semantics='mnn')", Tokenizer.from_tree, tree, semantics="mnn")
    if tok is None:
        return
    refused_or_ok("mnn encode", tok.encode, text, add_special_tokens=special)
    raw = text.encode("utf-8", "surrogatepass")[::-1]  # bytes, often not UTF-8
    refused_or_ok("mnn encode bytes", tok.encode, raw, add_special_tokens=not special)
    refused_or_ok("mnn encode_batch", tok.encode_batch, [text, ""], add_special_tokens=special)
    refused_or_ok("mnn decode", tok.decode, ids)
    refused_or_ok("mnn decode_bytes", tok.decode_bytes, ids, stream=special)
    stream = tok.decode_stream()
    for i in ids:
        refused_or_ok("mnn decode_stream.step", stream.step, i)
    _check_stream(tok, ids, special, "mnn ")
    refused_or_ok("mnn apply_chat_template", tok.apply_chat_template, messages, template=template)


HOSTILE_CALL_SECONDS = 10.0
"""The bound on one call of a hostile case or an amplifying pipeline: they are refused past the
1 MiB floor of the size bound, which the ``mnn`` semantics' Python stages take seconds to reach."""


def hostile_inputs():
    """An amplifying pipeline (``tools.hostile.amplifying_files``) or one of the quick hostile cases,
    and the semantics to run it with."""
    from tools import hostile

    amplifying = hostile.amplifying_files().map(lambda tree: (tree, None))
    cases = st.sampled_from(hostile.QUICK).map(lambda name: hostile.CASES[name].make())
    return st.tuples(st.one_of(amplifying, cases), st.sampled_from(SEMANTICS))


def check_hostile(args) -> None:
    """Encode and decode of a file built to amplify or backtrack: a result or an ``mtokspec.Error``
    within HOSTILE_CALL_SECONDS."""
    from mtokspec import Tokenizer

    (tree, work), semantics = args
    tok = refused_or_ok("from_tree", Tokenizer.from_tree, tree, semantics=semantics)
    if tok is None:
        return
    if work is not None:
        refused_or_ok("hostile case", work, tok, limit=HOSTILE_CALL_SECONDS)
        return
    refused_or_ok("encode", tok.encode, "aé " * 40, limit=HOSTILE_CALL_SECONDS)
    refused_or_ok("decode", tok.decode, [0, 3] * 32, limit=HOSTILE_CALL_SECONDS)


def check_lint(data: bytes) -> None:
    """lint(target="mnn") of any bytes (what does not parse is refused like parse refuses it)."""
    refused_or_ok("lint", mtokspec.lint, data)


@st.composite
def cli_inputs(draw):
    argv = draw(st.sampled_from(_COMMANDS))
    data = draw(st.one_of(tokenizer_file_bytes(), st.binary(max_size=40),
                          st.sampled_from([b"{}", b"[]", b"null", b"model: 1\n", b"- a\n"])))
    return argv, data, draw(hf_folders()), draw(ANY_TEXT.filter(lambda s: "\x00" not in s)), draw(ANY_ID)


def check_cli(args) -> None:
    """A command on a hostile file: exit 0, 1 or 2; on 2 one line on stderr; never a traceback."""
    from mtokspec.cli import main
    template, data, folder, text, some_id = args
    with tempfile.TemporaryDirectory(prefix="mtokspec-fuzz-") as tmp:
        f, o, d = Path(tmp) / "in.bin", Path(tmp) / "out.bin", Path(tmp) / "model"
        f.write_bytes(data)
        d.mkdir()
        write_folder(d, folder)
        argv = [a.format(f=f, o=o, d=d, text=text, id=some_id) for a in template]
        if argv[-1].startswith("-"):
            argv.insert(len(argv) - 1, "--")
        out, err = io.StringIO(), io.StringIO()
        # a command also imports, reads and writes (with fsync) files: a looser bound
        with timed(f"mtokspec {template[0]}", SLOW_CALL_SECONDS * 5), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's own usage errors
                code = e.code
        message = err.getvalue()
        assert code in (0, 1, 2), f"exit {code!r}: {message}"
        assert "Traceback" not in message, message
        if code == 2 and template[0] not in ("convert", "upgrade"):  # these print a loss report too
            assert message.count("\n") <= 1 or message.startswith("usage:"), f"more than one line: {message!r}"


# ---------------------------------------------------------------------------------------------
# hostile sizes: long decimals, YAML aliases, strftime widths, deep template expressions

_LONG_DIGITS = st.one_of(st.integers(11, 30), st.integers(4290, 4310), st.integers(5000, 20000))
_DECIMAL_RUN = re.compile(rb"(?<![0-9A-Za-z+/=])-?[0-9]+(?![0-9A-Za-z+/=])")


@st.composite
def long_decimal_files(draw) -> bytes:
    """A legacy or .mtok file with one of its decimals (a header count or id, a count line, a type
    column) replaced by one of 11 to 20,000 digits, some around Python's int() limit (4300)."""
    data = draw(st.one_of(ms.txt_bytes(), ms.mtok_bytes(valid=True)))
    runs = [m.span() for m in _DECIMAL_RUN.finditer(data, 0, _text_part(data))]
    digits = draw(_LONG_DIGITS)
    long = draw(st.sampled_from([b"", b"-"])) + b"1" + b"9" * (digits - 1)
    if not runs:
        return data
    a, b = runs[draw(st.integers(0, len(runs) - 1))]
    return data[:a] + long + data[b:]


def _text_part(data: bytes) -> int:
    """Where the decimal text of a file ends: after the header of a .mtok, the whole legacy file."""
    if data.startswith(b"430 4\n"):
        third = data.find(b"\n", data.find(b"\n", 6) + 1)
        return third + 1 if third > 0 else len(data)
    return len(data)


@st.composite
def plain_texts(draw) -> tuple[str, str]:
    """(YAML or JSON text, format): a YAML alias bomb (up to 9 levels of 9 aliases), shared or
    recursive anchors, or a dumped tree with a long integer in an int, float or text field."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        depth, width = draw(st.integers(1, 9)), draw(st.integers(1, 9))
        lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, depth + 1)]
        return "\n".join(lines) + "\n", "yaml"
    if kind == 1:
        return draw(st.sampled_from(["a: &x [1]\nb: *x\n", "a: &x [*x]\n", "a: &x {b: *x}\n",
                                     "format: mtok\nheader: &h {ids: [1]}\nh2: *h\n"])), "yaml"
    doc = mtokspec.to_dict(draw(parsed_files()))
    paths = _paths(doc)
    digits = draw(_LONG_DIGITS)
    if paths:
        doc = _edit(doc, paths[draw(st.integers(0, len(paths) - 1))], _LongNumber(digits), False)
    fmt = draw(st.sampled_from(["json", "yaml"]))
    text = json.dumps(doc, default=_LongNumber.placeholder)
    return text.replace(_LongNumber.MARK, "9" * digits), fmt


class _LongNumber:
    """A placeholder written into a document as a long run of digits."""

    MARK = '"@@long-number@@"'

    def __init__(self, digits: int):
        self.digits = digits

    @staticmethod
    def placeholder(_value) -> str:
        return "@@long-number@@"


def check_plain(args) -> None:
    """plainio.loads of hostile YAML/JSON, then from_dict and build of what loads."""
    from mtokspec.format import plainio
    text, fmt = args
    doc = refused_or_ok("plainio.loads", plainio.loads, text, fmt)
    if isinstance(doc, dict):
        check_from_dict(doc)


_STRFTIME_DIRECTIVE = st.builds(
    lambda flag, width, letter: f"%{flag}{width}{letter}",
    st.sampled_from(["", "-", "_", "0", "^", "#"]),
    st.one_of(st.just(""), st.integers(0, 10**6).map(str), st.integers(10**9, 10**13).map(str),
              st.integers(1, 6000).map(lambda n: "9" * n)),
    st.sampled_from(list("YmdHMSyBbAacxXpjUWZz%")))
_WRAPPERS = ["({})", "not {}", "{} + x", "{} and x", "{} or x", "{}|trim", "f({})", "[{}]", "{} ~ x", "({},)",
             "{{'k': {}}}", "{} if x else y", "-{}", "{}[0]", "{}.a"]


@st.composite
def chat_bound_templates(draw) -> str:
    """Templates that try to grow a value past the render limit (strftime_now widths, growing
    str methods on its result) or to nest expressions and statements deeper than any parser."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        fmt = "".join(draw(st.lists(_STRFTIME_DIRECTIVE, min_size=1, max_size=4)))
        times = draw(st.sampled_from([1, 2, 1000, 166666]))
        method = draw(st.sampled_from(["", ".split()", ".split('0')", ".encode('utf-8').hex()", ".upper()",
                                       ".splitlines()", "|length", "|upper", "|urlencode"]))
        return "{{ strftime_now(%r * %d)%s }}" % (fmt, times, method)
    if kind == 1:
        base = draw(st.sampled_from(["'é'", "'a '", "'\\n'", "'<'"]))
        times = draw(st.sampled_from([1000, 300000, 999999]))
        method = draw(st.sampled_from([".split()", ".split(' ')", ".splitlines()", ".encode('utf-8').hex()",
                                       ".upper()", ".title()", "|urlencode", "|escape", "|upper"]))
        return "{{ (%s * %d)%s }}" % (base, times, method)
    expr = "x"
    for i in draw(st.lists(st.integers(0, len(_WRAPPERS) - 1), max_size=400)):
        expr = _WRAPPERS[i].format(expr)
    if draw(st.booleans()):
        return "{{ %s }}" % expr
    depth = draw(st.integers(0, 300))
    return "{% if x %}" * depth + "{% if " + expr + " %}a{% endif %}" + "{% endif %}" * depth


def check_chat_bounds(template: str) -> None:
    """render_chat_template and lint_chat_template of a hostile template: an mtokspec.Error or an
    answer, in time."""
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.chat.render import render_chat_template
    messages = [{"role": "user", "content": "Hi"}]
    refused_or_ok("render_chat_template", render_chat_template, template, messages, timeout_seconds=0.5)
    refused_or_ok("lint_chat_template", lint_chat_template, template)


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


# hypothesis reports several distinct failures as an exception group (built in from Python 3.11)
_GROUP = getattr(builtins, "BaseExceptionGroup", ())


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, _GROUP):
        return [x for sub in e.exceptions for x in _leaves(sub)]
    return [e]


def describe(e: BaseException) -> str:
    """``Type: message at file:line`` (the innermost frame inside mtokspec), and the shrunk input."""
    import traceback
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/mtokspec/" in f.filename]
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno} ({frames[-1].name})" if frames else ""
    notes = " | ".join(getattr(e, "__notes__", []))[:600]
    return f"{type(e).__name__}: {str(e)[:300]}{where} | {notes}"


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
        global MEMORY_LIMIT
        MEMORY_LIMIT = int(args.memory * 2**20)
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


if __name__ == "__main__":
    sys.exit(main())

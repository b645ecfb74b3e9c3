"""The entry points the fuzzer calls: each takes one drawn input and raises only when the
contract is broken."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from hypothesis import strategies as st

import mtokspec
from mtokspec.names import SEMANTICS

from tools.fuzz.calls import SLOW_CALL_SECONDS, describe, refused_or_ok, timed
from tools.fuzz.inputs import (
    ANY_ID, ANY_TEXT, IDS, _JSON_VALUES, hf_folders, mutated, parsed_files, tokenizer_file_bytes,
    write_folder,
)

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
    from mtokspec.convert.loss import UNCHECKED
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

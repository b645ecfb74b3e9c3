"""The device result on a card: MNN's ``test_tokenizer`` log, or goldens run on the ``mnn`` semantics.

MNN's ``transformers/llm/engine/test/test_tokenizer.cpp`` prints, per model folder, ``Testing:
NAME ...`` and then ``  P/T passed[, F failed][, S skipped]`` (in ANSI colours, which are set
aside here).  :func:`parse_test_tokenizer_log` reads those lines.  :func:`run_goldens` applies the
same test to a ``test_cases.jsonl`` (``mtokspec goldens``) with mtokspec's ``mnn`` semantics in
place of the device: ``basic`` cases pass when ``encode(input)`` is ``ids_raw`` or a non-empty
``ids_full`` and ``decode(ids_raw)`` is ``decoded_full`` (or it with one space before it);
``chat`` cases when the device's prompt is ``formatted_text`` with its ``Today Date: `` line set
to the expected one (skipped when the file has no chat template); other lines are skipped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mtokspec.errors import Error, TokenizerError
from mtokspec.format import tree as t
from mtokspec.report_card.data import DeviceResult

__all__ = ["LogError", "parse_test_tokenizer_log", "run_goldens", "read_goldens"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TESTING = re.compile(r"^Testing: (.*) \.\.\.$")
_RESULT = re.compile(r"^\s*(\d+)/(\d+) passed(?:, (\d+) failed)?(?:, (\d+) skipped)?\s*$")


class LogError(TokenizerError):
    """A device log or goldens file that cannot be read as one."""


def parse_test_tokenizer_log(text: str, source: str = "test_tokenizer log") -> list[DeviceResult]:
    """One :class:`~.data.DeviceResult` per model the log reports a result for, in order (a model
    the test skipped whole prints none).  A log without any is a :class:`LogError`."""
    from mtokspec.args import token_text

    token_text("text", text)
    token_text("source", source)
    out: list[DeviceResult] = []
    model: str | None = None
    for raw in text.splitlines():
        line = _ANSI.sub("", raw).rstrip("\r")
        m = _TESTING.match(line)
        if m:
            model = m.group(1)
            continue
        r = _RESULT.match(line)
        if r and model is not None:
            passed, total = int(r.group(1)), int(r.group(2))
            out.append(DeviceResult(source, model, passed, total, int(r.group(3) or 0), int(r.group(4) or 0)))
            model = None
    if not out:
        raise LogError(f"{source}: no 'Testing: NAME ...' line followed by 'N/M passed' (not a test_tokenizer log)")
    return out


def read_goldens(text: str, source: str = "goldens") -> list[Any]:
    """The lines of a ``test_cases.jsonl`` as JSON values (``None`` for a line MNN's parser
    rejects, which its test skips; empty lines left out)."""
    from mtokspec.args import token_text

    token_text("text", text)
    token_text("source", source)
    out: list[Any] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append(None)
    if not out:
        raise LogError(f"{source}: no test cases")
    return out


def _ids(v: Any) -> list[int] | None:
    if isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return v
    return None


def _today_aside(actual: str, expected: str) -> str:
    prefix = "Today Date: "
    e, a = expected.find(prefix), actual.find(prefix)
    if e < 0 or a < 0:
        return actual
    e_end, a_end = expected.find("\n", e), actual.find("\n", a)
    if e_end < 0 or a_end < 0:
        return actual
    return actual[:a + len(prefix)] + expected[e + len(prefix):e_end] + actual[a_end:]


def run_goldens(tree: t.TokenizerFile, lines: list[Any], model: str, source: str = "goldens") -> DeviceResult:
    """MNN's device test of ``lines`` (:func:`read_goldens`) on ``tree``, with the ``mnn``
    semantics standing in for the device (see the module)."""
    from mtokspec.runtime.mnn import MnnTokenizer
    from mtokspec.args import instance, items, token_text

    instance("tree", tree, tuple(t.ROOT_TYPES), "a tokenizer tree (MtokFile or a legacy root)")
    items("lines", lines, object, "JSON values")
    token_text("model", model)
    token_text("source", source)
    tok = MnnTokenizer.from_tree(tree)
    template = getattr(tree, "chat_template", None)
    passed = failed = skipped = 0
    for case in lines:
        kind = case.get("type") if isinstance(case, dict) else None
        if kind == "chat":
            messages = case.get("messages")
            if not template:
                skipped += 1
                continue
            expected = case.get("formatted_text")
            try:
                ok = isinstance(messages, list) and isinstance(expected, str) and _today_aside(
                    tok.apply_chat_template(messages, bool(case.get("add_generation_prompt", True))),
                    expected) == expected
            except Error:
                ok = False
            passed, failed = passed + ok, failed + (not ok)
            continue
        if kind != "basic":
            skipped += 1
            continue
        text, raw, full, decoded = (case.get("input"), _ids(case.get("ids_raw")), _ids(case.get("ids_full")),
                                    case.get("decoded_full"))
        ok = False
        if isinstance(text, str) and raw is not None and isinstance(decoded, str):
            try:
                ids = tok.encode(text)
                got = tok.decode_bytes(raw)
                want = decoded.encode("utf-8", "surrogatepass")
                ok = (ids == raw or (bool(full) and ids == full)) and (got == want or got == b" " + want)
            except Error:
                ok = False
        passed, failed = passed + ok, failed + (not ok)
    return DeviceResult(f"{source}, run on mtokspec's mnn semantics (MNN {_short_commit()}) in place of a device",
                        model, passed, passed + failed, failed, skipped)


def _short_commit() -> str:
    from mtokspec.runtime.mnn import MNN_COMMIT

    return MNN_COMMIT[:9]

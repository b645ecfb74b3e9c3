"""Record transformers' and MNN's renderings of the collected chat templates for the rewrite's tests.

    MNN_TOK_BIN=/path/mnn_tok python -m tools.record_collected_chat

Reads ``tests/chat/data/collected/SOURCES.json`` (each template's file, source, license, BOS/EOS
strings) and writes ``tests/chat/data/collected/cases.json``: for every template and every
conversation of :data:`CONVERSATIONS` with and without the generation prompt, transformers' own
rendering (``transformers.utils.chat_template_utils.render_jinja_template``, ``strftime_now``
frozen to :data:`NOW`; a ``raise_exception`` as ``{"raise": message}``, any other error as
``{"error": ...}``), and the SHA-256 of what MNN's own engine (``mnn_tok chat``, a copy of the
corpus' phi-3-mini ``.mtok`` carrying the template, ``tools`` as its ``jinja.context``, 2 GiB and
20 s limits per rendering) renders from the original template and from ``rewrite_for_mnn``'s, which is recorded
with them.  MNN reads the clock: its renderings hold ``recorded_on``'s date.  The tests compare
:func:`mtokspec.chat.mnn.render_mnn` with these recordings; they need neither transformers nor
``mnn_tok``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "chat" / "data" / "collected"
BASE = ROOT.parent / "shared" / "corpus" / "tok" / "phi-3-mini" / "mnn.mtok"
NOW = dt.datetime(2024, 7, 26)

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit"}},
        "required": ["location"]}}}]
_CALL_DICT = {"id": "call_1", "type": "function",
              "function": {"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}}
_CALL_STR = {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\", \"unit\": \"celsius\"}"}}

#: name -> {"messages": [...], "tools": [...] (optional)}
CONVERSATIONS: dict[str, dict] = {
    "multi_turn": {"messages": [{"role": "system", "content": "You are a helpful assistant."},
                                {"role": "user", "content": "Hello"},
                                {"role": "assistant", "content": "Hi there! How can I help?"},
                                {"role": "user", "content": "Who are you?"}]},
    "single_user": {"messages": [{"role": "user", "content": "What is 2 + 2?"}]},
    "no_system": {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "  Hello!  "},
                               {"role": "user", "content": "Line one\nline two\n\ttabbed \u00e9\u4e16\u754c\U0001F600"}]},
    "tools_offered": {"messages": [{"role": "system", "content": "You can call tools."},
                                   {"role": "user", "content": "What's the weather in Paris?"}], "tools": TOOLS},
    "tool_call_dict": {"messages": [{"role": "user", "content": "What's the weather in Paris?"},
                                    {"role": "assistant", "content": "", "tool_calls": [_CALL_DICT]},
                                    {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
                                     "content": "{\"temperature\": 22}"},
                                    {"role": "assistant", "content": "It is 22 degrees in Paris."},
                                    {"role": "user", "content": "Thanks"}], "tools": TOOLS},
    "tool_call_str": {"messages": [{"role": "system", "content": "Use tools when needed."},
                                   {"role": "user", "content": "Weather in Paris?"},
                                   {"role": "assistant", "content": None, "tool_calls": [_CALL_STR]},
                                   {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
                                    "content": "sunny"}], "tools": TOOLS},
    "assistant_first": {"messages": [{"role": "assistant", "content": "Welcome!"}, {"role": "user", "content": "Hi"}]},
    "two_users": {"messages": [{"role": "system", "content": "Sys"}, {"role": "user", "content": "A"},
                               {"role": "user", "content": "B"}]},
}


def case_keys() -> list[tuple[str, bool]]:
    return [(name, agp) for name in CONVERSATIONS for agp in (True, False)]


def _transformers(template: str, conv: dict, agp: bool, bos: str | None, eos: str | None) -> object:
    import jinja2
    import transformers.utils.chat_template_utils as ctu

    class _Frozen(dt.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001 - datetime's signature
            return NOW

    ctu.datetime = _Frozen  # strftime_now reads datetime.now()
    kw = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
    try:
        return ctu.render_jinja_template([conv["messages"]], tools=conv.get("tools"), chat_template=template,
                                         add_generation_prompt=agp, **kw)[0][0]
    except jinja2.exceptions.TemplateError as e:
        if type(e) is jinja2.exceptions.TemplateError:  # raise_exception's own class
            return {"raise": str(e)}
        return {"error": f"{type(e).__name__}: {e}"}
    except Exception as e:  # noqa: BLE001 - any error of the template's Python calls
        return {"error": f"{type(e).__name__}: {e}"}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _run(binary: str, path: Path, requests: list[dict], timeout: float) -> list[dict] | None:
    """``mnn_tok chat`` on JSON lines: one row per request, or None when it did not answer them all."""
    data = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in requests).encode()
    try:
        p = subprocess.run([binary, "chat", str(path)], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, preexec_fn=_limited)
    except subprocess.TimeoutExpired:
        return None
    rows = [json.loads(x) for x in p.stdout.decode("utf-8", "surrogateescape").splitlines() if x.strip()]
    return rows if len(rows) == len(requests) else None


def _mnn(binary: str, template: str, bos: str | None, eos: str | None) -> dict[str, object]:
    import mtokspec

    tree = mtokspec.parse(BASE.read_bytes())
    tree.chat_template, tree.bos_token, tree.eos_token = template, bos or "", eos or ""
    requests = []
    for name, agp in case_keys():
        conv = CONVERSATIONS[name]
        req: dict = {"messages": conv["messages"], "add_generation_prompt": agp}
        if "tools" in conv:
            req["context"] = {"tools": conv["tools"]}
        requests.append(req)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.mtok"
        path.write_bytes(mtokspec.build(tree))
        rows = _run(binary, path, requests, 60)  # all at once; one by one where that fails
        if rows is None:
            rows = [(_run(binary, path, [r], 20) or [{"error": "no answer in 20 s (2 GiB)"}])[0] for r in requests]
    out: dict[str, object] = {}
    for (name, agp), row in zip(case_keys(), rows):
        if "text" in row or "hex" in row:
            raw = bytes.fromhex(row["hex"]) if "hex" in row else row["text"].encode("utf-8", "surrogateescape")
            out[key(name, agp)] = hashlib.sha256(raw).hexdigest()
        else:
            out[key(name, agp)] = {"error": row.get("error", "?")}
    return out


def key(name: str, agp: bool) -> str:
    return f"{name}/{'gen' if agp else 'nogen'}"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    import jinja2
    import transformers

    from mtokspec.chat.rewrite import rewrite_for_mnn

    binary = os.environ.get("MNN_TOK_BIN", "mnn_tok")
    sources = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
    templates = []
    for name, src in sources.items():
        template = (DATA / src["file"]).read_text(encoding="utf-8")
        bos, eos = src["bos_token"], src["eos_token"]
        rewritten = rewrite_for_mnn(template, bos_token=bos, eos_token=eos).template
        templates.append({
            "name": name,
            "expected": {key(n, agp): _transformers(template, CONVERSATIONS[n], agp, bos, eos) for n, agp in case_keys()},
            "rewritten": rewritten,
            "mnn": _mnn(binary, template, bos, eos),
            "mnn_rewritten": _mnn(binary, rewritten, bos, eos),
        })
        print(name, file=sys.stderr)
    doc = {"about": "transformers' renderings of the collected templates (strftime_now frozen), and the SHA-256 of "
                    "MNN's own (mnn_tok chat; the clock of recorded_on) of each and of its rewrite for MNN "
                    "(tools/record_collected_chat.py)",
           "transformers_version": transformers.__version__, "jinja2_version": jinja2.__version__,
           "strftime_now_frozen_to": NOW.date().isoformat(), "recorded_on": dt.date.today().isoformat(),
           "conversations": CONVERSATIONS, "templates": templates}
    (DATA / "cases.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

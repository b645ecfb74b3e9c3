"""The prompt transformers builds against the prompt a device builds, per conversation.

:func:`compare_chat` renders each conversation with a file's chat template twice, as transformers
does (:func:`mtokspec.chat.render.render_chat_template`) and as MNN's engine does
(:func:`mtokspec.chat.mnn.render_mnn`), both at the same clock, and finds the first difference and
the rules that explain it: each rewrite of :mod:`mtokspec.chat.rewrite` applied alone that changes
MNN's prompt names its rule, the rule of an engine failure is named, and the lint's other findings
(constructs no rewrite handles) are listed as present.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mtokspec.chat import rewrite as _rw
from mtokspec.chat.rewrite.names import Unprintable
from mtokspec.chat.rewrite.printer import print_template
from mtokspec.errors import ArgumentTypeError, ConversationsError
from mtokspec.args import instance, items, number, optional_text, token_text

__all__ = ["ChatComparison", "compare_chat", "load_conversations", "format_comparison"]


@dataclass
class ChatComparison:
    """One conversation: both prompts (``None`` where that side failed, with ``*_error``), the first
    differing character (``None`` when equal) and the rules that explain the difference."""

    name: str
    add_generation_prompt: bool
    transformers: str | None
    mnn: str | None
    transformers_error: str | None = None
    mnn_error: str | None = None
    first_difference: int | None = None
    rules: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return self.transformers_error is None and self.mnn_error is None and self.transformers == self.mnn

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("name", "add_generation_prompt", "transformers", "mnn",
                                              "transformers_error", "mnn_error", "first_difference", "rules",
                                              "present")} | {"same": self.same}


def load_conversations(data: Any) -> list[tuple[str, list[dict], bool | None]]:
    """``(name, messages, add_generation_prompt or None)`` from a conversations document: a list of
    messages (one conversation), a list of conversations, or an object of named conversations; a
    conversation is a list of messages or an object with ``messages`` (and optionally ``name``,
    ``add_generation_prompt``).  Anything else is a :class:`~mtokspec.errors.ConversationsError`
    (data, as from a JSON file: also a ``ValueError``)."""
    def one(name: str, conv: Any) -> tuple[str, list[dict], bool | None]:
        agp = None
        if isinstance(conv, dict) and "messages" in conv:
            name = str(conv.get("name", name))
            agp = conv.get("add_generation_prompt")
            if agp is not None and not isinstance(agp, bool):
                raise ConversationsError(f"{name}: add_generation_prompt must be true or false")
            conv = conv["messages"]
        if not isinstance(conv, list) or not all(isinstance(m, dict) for m in conv):
            raise ConversationsError(f"{name}: expected a list of messages ({{'role': ..., 'content': ...}})")
        return name, conv, agp

    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return [one("conversation", data)]
    if isinstance(data, list):
        return [one(f"#{i}", c) for i, c in enumerate(data)]
    if isinstance(data, dict) and "messages" in data:
        return [one("conversation", data)]
    if isinstance(data, dict):
        return [one(str(k), v) for k, v in data.items()]
    raise ConversationsError("expected a list of messages, a list of conversations or an object of named conversations")


def _explain(template: str, messages, agp: bool, bos, eos, now, mnn_text: str) -> list[str]:
    from mtokspec.chat.environment import parsing_environment

    try:
        ast = parsing_environment().parse(template)
    except Exception:  # noqa: BLE001 - transformers cannot parse it: the lenient parser is the story
        return ["mnn-jinja-lenient-parser"]
    bos_empty = None if bos is None else not bos
    rules = []
    for group in _rw.GROUPS:
        try:
            alone, applied = print_template(ast, {group}, bos_empty)
        except Unprintable:
            return rules
        if group in applied and _rw.mnn_prompt(alone, messages, agp, bos, eos, now) != mnn_text:
            rules.append(group)
    plain, _ = print_template(ast, set(), bos_empty)
    if _rw.mnn_prompt(plain, messages, agp, bos, eos, now) != mnn_text:
        rules.append("mnn-jinja-whitespace")  # or string escapes: the text as MNN's lexer reads it
    return rules


def compare_chat(template: str, conversations: list[tuple[str, list[dict], bool | None]], *,
                 bos_token: str | None = None, eos_token: str | None = None,
                 add_generation_prompt: bool = True, strftime_now: datetime | None = None) -> list[ChatComparison]:
    """Compare transformers' and MNN's prompts for each conversation (see the module)."""
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.chat.render import _to_datetime

    token_text("template", template)
    optional_text("bos_token", bos_token)
    optional_text("eos_token", eos_token)
    for i, conv in enumerate(items("conversations", conversations, (list, tuple),
                                   "(name, messages, add_generation_prompt) triples")):
        if len(conv) != 3 or not isinstance(conv[0], str):
            raise ArgumentTypeError(f"conversations: item {i} is not a (name, messages, add_generation_prompt) triple")
        items("conversations", conv[1], dict, "triples whose messages are dicts")
    now = _to_datetime(strftime_now) or datetime.now()
    lint_codes = sorted({f.code for f in lint_chat_template(template, bos_token=bos_token)})
    out = []
    for name, messages, agp in conversations:
        agp = add_generation_prompt if agp is None else agp
        hf = _rw.transformers_prompt(template, messages, agp, bos_token, eos_token, now)
        mnn = _rw.mnn_prompt(template, messages, agp, bos_token, eos_token, now)
        c = ChatComparison(name, agp, None if hf.startswith("\0") else hf, None if mnn.startswith("\0") else mnn)
        if hf.startswith("\0raise:"):
            c.transformers_error = "raise_exception(" + repr(hf[len("\0raise:"):]) + ")"
        elif hf.startswith("\0"):
            c.transformers_error = hf[len("\0error:"):]
        if mnn.startswith("\0"):
            c.mnn_error = mnn[len("\0mnn-error:"):]
        if not c.same:
            a, b = c.transformers or "", c.mnn or ""
            c.first_difference = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            if c.mnn_error is not None and c.mnn_error.endswith("]") and "[" in c.mnn_error:
                c.rules = [c.mnn_error[c.mnn_error.rindex("[") + 1:-1]]
            elif c.mnn is not None:
                c.rules = _explain(template, messages, agp, bos_token, eos_token, now, c.mnn)
            if hf.startswith("\0raise:"):
                c.rules = sorted({*c.rules, "mnn-jinja-raise-noop"})
            c.present = [code for code in lint_codes if code not in c.rules]
        out.append(c)
    return out


def _show(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r")


def format_comparison(c: ChatComparison, width: int | None = None) -> str:
    """A conversation's two prompts side by side, ``width`` columns each (1-1,000; default: half the
    terminal), lines marked ``*`` from the first difference on, then the first difference and the rules."""
    instance("c", c, ChatComparison, "a ChatComparison")
    number("width", width, optional=True, integral=True)
    if width is None:
        width = max(30, (shutil.get_terminal_size((160, 24)).columns - 5) // 2)
    width = min(max(width, 1), 1000)  # columns per side
    head = f"== {c.name} (add_generation_prompt={str(c.add_generation_prompt).lower()}): "
    if c.same:
        return head + "same prompt\n"
    lines = [head + "DIFFERENT", f"{'transformers':<{width}} | MNN", f"{'-' * width}-+-{'-' * width}"]
    left = (c.transformers.split("\n") if c.transformers is not None else [f"<fails: {c.transformers_error}>"])
    right = (c.mnn.split("\n") if c.mnn is not None else [f"<fails: {c.mnn_error}>"])
    diff_line = (c.transformers or "")[:c.first_difference or 0].count("\n")
    for i in range(max(len(left), len(right))):
        a = _show(left[i]) if i < len(left) else ""
        b = _show(right[i]) if i < len(right) else ""
        mark = "*" if i >= diff_line and (a != b or i == diff_line) else " "
        rows = max(1, -(-len(a) // width), -(-len(b) // width))
        for r in range(rows):
            lines.append(f"{a[r * width:(r + 1) * width]:<{width}} {mark if r == 0 else ' '} "
                         f"{b[r * width:(r + 1) * width]}".rstrip())
    if c.first_difference is not None:
        i = c.first_difference
        a, b = c.transformers or "", c.mnn or ""
        line = a[:i].count("\n") + 1
        col = i - (a.rfind("\n", 0, i) + 1) + 1
        lines.append(f"first difference at character {i} (line {line}, column {col}): "
                     f"transformers {a[i:i + 30]!r}, MNN {b[i:i + 30]!r}")
    if c.rules:
        lines.append("explained by: " + ", ".join(c.rules))
    elif c.transformers_error is not None:
        lines.append("transformers refuses this input; MNN's engine cannot refuse any")
    if c.present:
        lines.append("also in the template: " + ", ".join(c.present))
    return "\n".join(lines) + "\n"

"""Rewrite a chat template so that MNN's Jinja engine renders it as transformers renders the original.

:func:`rewrite_for_mnn` parses the template with jinja2 (transformers' syntax) and prints the tree
back as Jinja that MNN's engine reads as meant, replacing each construct MNN renders differently by
an equivalent both engines render as transformers renders the original:

* text MNN's lexer keeps (a leading newline, trailing blanks before a tag, a literal ``{{``/``{%``/
  ``{#`` as string expressions); string literals with only the escapes MNN knows; no comments or
  white-space markers;
* ``x['key']`` as ``x.key``, ``x['a-b'] is defined`` as ``'a-b' in x``, ``x[i] is defined`` by
  length; ``loop.revindex(0)`` from ``loop.length`` and ``loop.index``, ``loop.previtem``/``nextitem``
  by index; ``x % k`` and ``x // k`` (k > 0 constant, x >= 0) with ``range``, ``x * k`` (k from 0
  to 16) as a sum, constants folded; tuples as lists; a mapping literal iterated in its own order;
* filters, tests and methods MNN lacks: ``default``, ``first``, ``last``, ``count``, ``replace``;
  ``select``/``reject``/``selectattr``/``rejectattr`` as a loop hoisted before the statement;
  ``tojson`` (with or without ``indent``) by macros keeping the keys' order; ``odd``, ``even``,
  ``divisibleby``, ``in``, ``eq``, ``ne``; ``mapping``/``iterable``/``sequence`` right for undefined
  values and mappings; ``.get()``, ``.items()``, ``.upper()``, ``.lower()``; ``dict(k=v)``;
* ``bos_token`` as ``''``, ``tools``/``documents`` as ``none`` and ``add_generation_prompt`` as
  ``false`` where MNN leaves them undefined; ``a if b`` with an undefined ``else``; ``and``/``or``
  outside conditions giving their operand; a printed (or ``|string``) value that may not be a string
  in Python's form, in its mapping's order, nothing when undefined; ``~`` of an undefined operand as
  ``''``; macro parameter defaults set in the body; ``strftime_now('%-d')``/``'%-m'`` without the
  zero;
* ``break``/``continue`` through a namespace that guards the rest of the loop body; ``for ... else``
  as an ``if`` after the loop; a ``{% set x %}`` block as a macro whose output is assigned;
* macro defaults passed by every call (MNN binds none); ``'...'|safe + x`` with markupsafe's escape
  of ``x`` written out; ``str.title()``/``|title`` and ``|dictsort`` by an engine switch
  (``raise_exception is defined``: transformers' own on transformers, words capitalized / a loop
  over the mapping on MNN); ``trim``/``upper``/``lower``/``capitalize`` of a non-string on Python's
  ``str()``; ``tojson`` with transformers' default keyword arguments;
* ``raise_exception(msg)``: transformers stops with an error; MNN cannot stop, so the rewritten
  template renders its body into a macro and, when a raise was reached, the prompt is :data:`RAISED`
  followed by the first message instead (:func:`device_raise` tells it from other prompts).  On
  transformers the call still raises where it stood.

What cannot be rewritten stays as it was and is reported (:class:`Loss`, coded with the rules of
``mtokspec/divergences/rules/chat_template.py``: the lint's findings on the rewritten template,
which it reads through the rewrite's guards, ``mtokspec/chat/lint/guards.py``).
Each group of rewrites (one per rule) is checked with the emulated engine on probe conversations
(and any the caller gives): a group is left out when it would make one render worse on MNN than the
original did, or change transformers' rendering.  The printer's choices are recorded in
``docs/design/chat-mnn.md``.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import jinja2

from mtokspec.chat.bounds import TIMEOUT_SECONDS

from mtokspec.chat.mnn import render_mnn
from mtokspec.chat.render import render_chat_template
from mtokspec.chat.lint import RAISED
from mtokspec.chat.rewrite.names import Unprintable
from mtokspec.chat.rewrite.printer import print_template, raise_probe
from mtokspec.errors import ChatTemplateError
from mtokspec.args import items, optional_text, token_text

__all__ = ["rewrite_for_mnn", "Rewrite", "Loss", "RAISED", "PROBE_CONVERSATIONS", "matches", "transformers_prompt",
           "mnn_prompt", "device_raise"]


#: Groups of rewrites, by the rule each answers; a group is dropped when it makes a probe worse.
GROUPS = ("mnn-jinja-missing-item-defined", "mnn-jinja-loop-attribute", "mnn-jinja-unparsed-operator",
          "mnn-jinja-unsupported-filter", "mnn-jinja-unsupported-test", "mnn-jinja-unsupported-method",
          "mnn-jinja-special-token-undefined", "mnn-jinja-context-undefined", "mnn-jinja-condexpr-no-else",
          "mnn-jinja-print-non-string", "mnn-jinja-undefined-concat", "mnn-jinja-tojson-order",
          "mnn-jinja-raise-noop", "mnn-jinja-macro-default", "mnn-jinja-unknown-function",
          "mnn-jinja-strftime-flag", "mnn-jinja-unsupported-statement")

PROBE_CONVERSATIONS: list[list[dict]] = [
    [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}],
    [{"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "  caf\u00e9 \u4e16\u754c \U0001F600 'q' \"d\" \\ {{x}}\n"},
     {"role": "assistant", "content": ""}, {"role": "user", "content": "ok"}],
    [{"role": "user", "content": "What is the weather?"},
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "a": 1}}}]},
     {"role": "tool", "name": "get_weather", "content": "sunny"}],
    [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}],
]


@dataclass(frozen=True)
class Loss:
    """A construct left as it was: MNN still renders it differently (``code``: the rule)."""

    code: str
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.message} [{self.code}]"


@dataclass
class Rewrite:
    """The rewritten template, the rules it rewrote, and what it could not."""

    template: str
    applied: list[str] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def __iter__(self):  # (template, losses) = rewrite_for_mnn(...)
        return iter((self.template, self.losses))



# --- checking --------------------------------------------------------------------------------------

class _Raised(ChatTemplateError):
    """raise_exception() of the template (not any other error)."""


def _raise(message: Any) -> None:
    raise _Raised(str(message))


def transformers_prompt(template: str, messages, add_generation_prompt: bool, bos_token, eos_token,
                        strftime_now) -> str:
    """transformers' rendering; where it raises, ``"\0raise:" + message`` for the template's
    ``raise_exception`` and ``"\0error:" + message`` for any other error (input it refuses)."""
    seconds = _render_seconds(template)
    try:
        return render_chat_template(template, messages, add_generation_prompt=add_generation_prompt,
                                    bos_token=bos_token, eos_token=eos_token, strftime_now=strftime_now,
                                    raise_exception=_raise,
                                    **({} if seconds is None else {"timeout_seconds": seconds}))
    except _Raised as e:
        return "\0raise:" + str(e)
    except ChatTemplateError as e:
        return "\0error:" + str(e)


_hf = transformers_prompt


def mnn_prompt(template: str, messages, add_generation_prompt: bool, bos_token, eos_token, strftime_now) -> str:
    """MNN's rendering (the emulation); ``"\0mnn-error:" + message`` where its engine fails."""
    seconds = _render_seconds(template)
    try:
        return render_mnn(template, messages, add_generation_prompt=add_generation_prompt, bos_token=bos_token,
                          eos_token=eos_token, strftime_now=strftime_now,
                          **({} if seconds is None else {"timeout_seconds": seconds}))
    except ChatTemplateError as e:
        return "\0mnn-error:" + str(e)


_mnn = mnn_prompt


def matches(hf: str, mnn: str) -> bool:
    """Whether MNN's rendering is transformers' (:func:`transformers_prompt`): the same text, or,
    where the template raised, :data:`RAISED` and the message.  Input transformers refuses with
    another error never matches: MNN's engine renders it anyway."""
    token_text("hf", hf)
    token_text("mnn", mnn)
    if hf.startswith("\0raise:"):
        return mnn == RAISED + hf[len("\0raise:"):]
    if hf.startswith("\0error:"):
        return False
    return hf == mnn


def _score(template: str, cases, hf_out, bos, eos, now, same_on_hf: bool = False) -> list[bool]:
    """Per case: MNN renders ``template`` as transformers rendered the original (and, with
    ``same_on_hf``, transformers renders ``template`` as the original)."""
    return [matches(h, _mnn(template, m, agp, bos, eos, now))
            and (not same_on_hf or _same_hf(_hf(template, m, agp, bos, eos, now), h)) for (m, agp), h in zip(cases, hf_out)]


def _same_hf(a: str, b: str) -> bool:
    """The same transformers rendering (refusing the input counts the same whatever the message)."""
    return a == b or (a.startswith("\0error:") and b.startswith("\0error:"))


def rewrite_for_mnn(template: str, *, bos_token: str | None = None, eos_token: str | None = None,
                    conversations: list[list[dict]] | None = None, strftime_now=None) -> Rewrite:
    """Rewrite ``template`` so that MNN's engine renders what transformers renders from it, and
    transformers renders it as the original.

    ``bos_token``/``eos_token``: the file's strings (``None``: unknown).  ``conversations``: extra
    conversations to check the rewrite on, besides :data:`PROBE_CONVERSATIONS` (each with and
    without the generation prompt).  Returns a :class:`Rewrite`: ``template`` (the original when
    nothing could be rewritten), ``applied`` (rules rewritten), ``losses`` (what MNN still renders
    differently), ``dropped`` (rewrites left out because a check rendered worse with them).
    """
    from datetime import datetime

    from mtokspec.chat.environment import parsing_environment
    from mtokspec.chat.lint import lint_chat_template
    from mtokspec.chat.render import _to_datetime

    token_text("template", template)
    optional_text("bos_token", bos_token)
    optional_text("eos_token", eos_token)
    for conversation in items("conversations", conversations, (list, tuple), "conversations (lists of messages)",
                              optional=True) or ():
        items("conversations", conversation, dict, "conversations of dicts (messages)")
    now = _to_datetime(strftime_now) if strftime_now is not None else datetime(2024, 7, 26)
    try:
        ast = parsing_environment().parse(template)
    except (jinja2.TemplateSyntaxError, RecursionError):  # nested deeper than the parser goes: as unparsable
        return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
    if 2 * _compile_seconds(template) >= REWRITE_SECONDS:  # the original and a rewrite cannot both compile
        return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
    token = _DEADLINE.set(_Budget(time.thread_time() + REWRITE_SECONDS))
    try:
        return _rewrite(template, ast, bos_token, eos_token, conversations, now)
    except (_OutOfTime, RecursionError):  # the checks cannot finish: the template stays as it is
        return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
    finally:
        _DEADLINE.reset(token)


REWRITE_SECONDS = 6.0
"""The CPU time (of the calling thread, so a loaded machine gives the same answer) one
:func:`rewrite_for_mnn` call may spend checking its rewrites (each render is also bounded on its
own); past it the template is returned as it was.  What follows the deadline
(parsing before it, the lint of the kept template after it) stays inside the 10 s bound of a call."""

COMPILE_SECONDS_PER_CHAR = 25e-6
"""CPU seconds jinja2 may take to compile one character of a template for a render (parse, free
names, code generation: 10 to 21 us a character on the drawn hostile templates of 100-220 KB),
which no clock stops: a render of a template not compiled yet starts only while a compile of its
length still ends before the deadline."""


def _compile_seconds(template: str) -> float:
    return COMPILE_SECONDS_PER_CHAR * len(template)


@dataclass
class _Budget:
    """The current rewrite's deadline (``time.thread_time()``), and the templates it has compiled."""

    deadline: float
    compiled: set[str] = field(default_factory=set)


_DEADLINE: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("rewrite_deadline", default=None)


class _OutOfTime(Exception):
    """The call's checks ran past :data:`REWRITE_SECONDS`."""


def _render_seconds(template: str) -> float | None:
    """What is left of the current rewrite's time for one render of ``template`` (None: no rewrite
    running); out of time when its compile (the first render of it) could not end before the deadline."""
    budget = _DEADLINE.get()
    if budget is None:
        return None
    left = budget.deadline - time.thread_time()
    if template not in budget.compiled:
        if left <= _compile_seconds(template):
            raise _OutOfTime
        budget.compiled.add(template)
    if left <= 0:
        raise _OutOfTime
    return min(left, TIMEOUT_SECONDS)


def _rewrite(template, ast, bos_token, eos_token, conversations, now) -> Rewrite:
    from mtokspec.chat.lint import lint_chat_template

    cases = [(m, agp) for m in [*PROBE_CONVERSATIONS, *(conversations or [])] for agp in (True, False)]
    hf_out = [_hf(template, m, agp, bos_token, eos_token, now) for m, agp in cases]
    before = _score(template, cases, hf_out, bos_token, eos_token, now)
    groups = set(GROUPS)
    bos_empty = None if bos_token is None else not bos_token
    dropped: list[str] = []
    while True:
        try:
            new, applied = print_template(ast, groups, bos_empty)
        except Unprintable:
            return Rewrite(template, [], _losses(template, bos_token, lint_chat_template))
        after = _score(new, cases, hf_out, bos_token, eos_token, now)
        hf_same = [_same_hf(_hf(new, m, agp, bos_token, eos_token, now), h) for (m, agp), h in zip(cases, hf_out)]
        worse = [i for i, (b, a, same) in enumerate(zip(before, after, hf_same)) if (b and not a) or not same]
        if not worse:
            break
        # leave out, one at a time, the group whose removal repairs the most worse cases
        best, best_fixed = None, -1
        for g in sorted(applied):
            trial, _ = print_template(ast, groups - {g}, bos_empty)
            score = _score(trial, [cases[i] for i in worse], [hf_out[i] for i in worse], bos_token, eos_token, now,
                           same_on_hf=True)
            if sum(score) > best_fixed:
                best, best_fixed = g, sum(score)
        if best is None:
            return Rewrite(template, [], _losses(template, bos_token, lint_chat_template), sorted(groups))
        groups.discard(best)
        dropped.append(best)
    return Rewrite(new, sorted(applied), _losses(new, bos_token, lint_chat_template), dropped)


def device_raise(template: str, prompt: str, render: Callable[[str], str]) -> str | None:
    """The message of the ``raise_exception`` MNN reached, when ``prompt`` is the marker a template
    :func:`rewrite_for_mnn` wrote renders in its place (:data:`RAISED` and the message); ``None``
    otherwise.  ``render(t)`` renders a template on MNN as ``prompt`` was rendered (same messages
    and options): it is called once, on the template printing only whether a raise was reached,
    and only when ``prompt`` starts with the marker (so a prompt that merely begins with those words
    is not taken for one)."""
    token_text("template", template)
    token_text("prompt", prompt)
    if not prompt.startswith(RAISED):
        return None
    probe = raise_probe(template)
    if probe is None or render(probe) != "true":
        return None
    return prompt[len(RAISED):]


def _losses(template: str, bos_token, lint) -> list[Loss]:
    """The lint's findings on the rewritten template (it reads the rewrite's guards as MNN does,
    ``mtokspec/chat/lint/guards.py``): what ``lint --target mnn`` says of a file carrying it."""
    seen = []
    for f in lint(template, bos_token=bos_token):
        loss = Loss(f.code, f.severity, f.message)
        if loss not in seen:
            seen.append(loss)
    return seen

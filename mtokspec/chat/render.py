"""Render a Hugging Face chat template as ``transformers`` renders it, treating the template as
untrusted: sandboxed, bounded in size and time, every failure a :class:`ChatTemplateError`
(``docs/design/chat.md`` lists the semantics and the bounds)."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Generator, cast

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.meta
import jinja2.utils
from jinja2.exceptions import TemplateSyntaxError

from mtokspec.chat.bounds import MAX_OUTPUT_CHARS, MAX_TEMPLATE_CHARS, TIMEOUT_SECONDS, RenderBounds
from mtokspec.chat.sandbox import ENV
from mtokspec.chat.sandbox_checks import SSTI_NAMES, STATE
from mtokspec.errors import ArgumentTypeError, ChatTemplateError
from mtokspec.args import items, number, optional_text, token_text

__all__ = ["ChatTemplateError", "render_chat_template", "render_file_template"]


@functools.lru_cache(maxsize=64)
def _compile(template: str) -> tuple[jinja2.Template, frozenset[str]]:
    try:
        tree = ENV.parse(template)
        free = frozenset(jinja2.meta.find_undeclared_variables(tree))
        return ENV.from_string(tree), free
    except TemplateSyntaxError as e:
        raise ChatTemplateError(f"template syntax error (line {e.lineno}): {e.message}") from e
    except ChatTemplateError:
        raise
    except Exception as e:  # RecursionError on absurd nesting, etc.
        raise ChatTemplateError(f"cannot compile template: {type(e).__name__}: {e}") from e


def _convert(exc: BaseException) -> ChatTemplateError:
    if isinstance(exc, ChatTemplateError):
        return exc
    if isinstance(exc, TemplateSyntaxError):
        return ChatTemplateError(f"template syntax error (line {exc.lineno}): {exc.message}")
    if isinstance(exc, RecursionError):
        return ChatTemplateError(f"RecursionError: {exc} (recursive macro or loop?)")
    return ChatTemplateError(f"{type(exc).__name__}: {exc}")


def _to_datetime(value: datetime | str | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ChatTemplateError(f"strftime_now: not an ISO-8601 date and time: {value!r}") from None
    raise ArgumentTypeError(f"strftime_now: expected a datetime, an ISO-8601 string or None, got {type(value).__name__}")


def checked_limits(max_output_chars: Any, timeout_seconds: Any) -> tuple[int, float]:
    """The renderers' bounds: ``max_output_chars`` an int >= 0, ``timeout_seconds`` a number > 0 or
    ``None`` (no time limit); a wrong type is :class:`ArgumentTypeError`, a wrong value
    :class:`ChatTemplateError`."""
    number("max_output_chars", max_output_chars, integral=True)
    number("timeout_seconds", timeout_seconds, optional=True)
    if timeout_seconds is None:
        timeout_seconds = math.inf
    if max_output_chars < 0 or not timeout_seconds > 0:
        raise ChatTemplateError("max_output_chars must be >= 0 and timeout_seconds > 0")
    return max_output_chars, timeout_seconds


def checked_messages(messages: Any) -> list:
    """``messages``: a list (or tuple) of dicts, as a list (the same check in both semantics)."""
    return list(items("messages", messages, dict, "dicts (messages)"))


def checked_file(file: Any) -> Any:
    """``file`` of ``render_file_*``: a tokenizer file tree or a tokenizer (anything with
    ``chat_template``, ``bos_token`` and ``eos_token``)."""
    if not all(hasattr(file, a) for a in ("chat_template", "bos_token", "eos_token")):
        raise ArgumentTypeError("file: expected a tokenizer file (chat_template, bos_token, eos_token), "
                                f"got {type(file).__name__}")
    return file


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def render_chat_template(
    template: str,
    messages: list[dict],
    *,
    add_generation_prompt: bool = True,
    tools: list | None = None,
    documents: Any = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    strftime_now: datetime | str | None = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    timeout_seconds: float = TIMEOUT_SECONDS,
    continue_final_message: bool = False,
    **kwargs: Any,
) -> str:
    """Render ``template`` for ``messages`` exactly as transformers' ``render_jinja_template``.

    ``bos_token`` / ``eos_token`` are defined in the template only when not ``None``; every other
    keyword argument becomes a template variable.  ``strftime_now`` freezes the clock seen by the
    template's ``strftime_now(format)`` (a datetime or an ISO-8601 string).
    ``continue_final_message`` trims the output after the final message as upstream does.

    Limits: output longer than ``max_output_chars`` raises as soon as it is produced; no
    intermediate value may exceed ``max(max_output_chars, MIN_VALUE_LIMIT)`` characters
    (:mod:`mtokspec.chat.bounds`).

    Time bound: cooperative, without signals or threads.  The deadline
    (``timeout_seconds`` after the call) is checked for every output chunk, every iteration of
    every ``{% for %}`` loop, every call, attribute/item lookup and intercepted operator the
    template performs.  A template cannot run unboundedly without reaching one of these points
    (loops, recursion and calls are the only sources of repetition in jinja), and between two
    checks it executes a single operation whose input and output sizes are capped by the value
    limit above, so the overrun past the deadline is bounded by the cost of one such operation
    (milliseconds for the default limits; a ``RecursionError`` ends unbounded recursion first).
    Template compilation (cached per template string) is not covered by the timeout; templates
    longer than ``MAX_TEMPLATE_CHARS`` (:mod:`mtokspec.chat.bounds`) are refused.

    Raises:
        ChatTemplateError: any failure while compiling or rendering the template.
        ArgumentTypeError: an argument of the wrong type (a non-str template, messages, tools or
            documents that are not lists of dicts), naming the parameter.
    """
    token_text("template", template)
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ChatTemplateError(f"template too long (limit {MAX_TEMPLATE_CHARS} characters)")
    messages = checked_messages(messages)
    optional_text("bos_token", bos_token)
    optional_text("eos_token", eos_token)
    # JSON schemas (dicts): converting Python callables is not supported
    items("tools", tools, dict, "dicts (JSON schemas)", optional=True)
    items("documents", documents, dict, "dicts with 'title' and 'text' keys", optional=True)
    frozen = _to_datetime(strftime_now)
    max_output_chars, timeout_seconds = checked_limits(max_output_chars, timeout_seconds)

    final_message: Any = None
    if continue_final_message:
        messages = copy.deepcopy(messages)
        if not messages:
            raise ChatTemplateError("continue_final_message is set but there are no messages")
        content = messages[-1].get("content")
        if content is None:
            raise ChatTemplateError("continue_final_message is set but the final message has no content to continue!")
        if isinstance(content, (list, tuple)):
            for block in reversed(content):
                if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                    final_message = block["text"]
                    block["text"] = block["text"] + _CONTINUE_TAG
                    break
            else:
                raise ChatTemplateError(
                    "continue_final_message is set but we could not find any text to continue in the final message!"
                )
        elif isinstance(content, str):
            final_message = content
            messages[-1]["content"] = content + _CONTINUE_TAG
        else:
            raise ChatTemplateError("continue_final_message is set but the final message's content is a "
                                    f"{type(content).__name__}, not text to continue")

    compiled, free_names = _compile(template)

    variables: dict[str, Any] = dict(kwargs)
    if bos_token is not None:
        variables["bos_token"] = bos_token
    if eos_token is not None:
        variables["eos_token"] = eos_token
    variables.update(
        messages=messages, tools=tools, documents=documents,
        add_generation_prompt=add_generation_prompt,
    )
    refused = sorted(
        n for n in free_names
        if n not in variables and (n in SSTI_NAMES or n.startswith("_"))
    )
    if refused:
        raise ChatTemplateError(
            f"template refers to undefined name(s) {refused} typical of template-injection payloads"
        )

    state = RenderBounds.start(max_output_chars, timeout_seconds, frozen)
    token = STATE.set(state)
    parts: list[str] = []
    produced = 0
    gen = cast(Generator[str, None, None], compiled.generate(**variables))
    try:
        for chunk in gen:
            produced += len(chunk)
            if produced > max_output_chars:
                raise ChatTemplateError(f"output exceeds max_output_chars={max_output_chars}")
            state.tick()
            parts.append(chunk)
    except ChatTemplateError:
        raise
    except Exception as e:
        raise _convert(e) from e
    finally:
        gen.close()
        STATE.reset(token)
    rendered = "".join(parts)

    if continue_final_message:
        if final_message.strip() not in rendered or _CONTINUE_TAG.strip() not in rendered:
            raise ChatTemplateError(
                "continue_final_message is set but the final message does not appear in the chat "
                "after applying the chat template"
            )
        loc = rendered.rindex(_CONTINUE_TAG.strip())
        if rendered[loc: loc + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
            rendered = rendered[:loc]
        else:
            rendered = rendered[:loc].rstrip()
    return rendered


def render_file_template(file: Any, messages: list[dict], *, template: str | None = None,
                         add_generation_prompt: bool = True, tools: list | None = None, **kwargs: Any) -> str:
    """:func:`render_chat_template` for a tokenizer file (anything with ``chat_template``,
    ``bos_token`` and ``eos_token``): its template unless ``template`` is given, its BOS/EOS strings
    unless passed (an empty one counts as absent, as the exporter writes absent ones)."""
    checked_file(file)
    messages = checked_messages(messages)
    optional_text("template", template)
    source = template if template is not None else file.chat_template
    if not source:
        raise ChatTemplateError("the file has no chat template; pass template=...")
    kwargs.setdefault("bos_token", file.bos_token or None)
    kwargs.setdefault("eos_token", file.eos_token or None)
    return render_chat_template(source, messages, add_generation_prompt=add_generation_prompt, tools=tools, **kwargs)

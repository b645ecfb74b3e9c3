"""Rendering as MNN's engine does (``jinja.hpp``: ``Context``, the nodes' ``render`` and the
expressions' ``evaluate``; ``Template::apply_chat_template``; ``Tokenizer::apply_chat_template``).

Scopes: the template's default context (``eos_token``, ``bos_token`` when non-empty, and the
strings ``"<function range>"`` ... for the three functions; it persists across the renders of one
template, probe renders included), the render context, then one scope per loop iteration or macro
call.  ``set`` writes to the innermost scope (a loop iteration's scope dies with it); ``set a.b``
changes ``a`` where it lives (``namespace``), turning a non-object ``a`` into an object.  Every
value stored in a variable is a copy, as rapidjson's ``CopyFrom`` makes it.  Operators do not
short-circuit; ``and``/``or`` give booleans.

Bounds (:mod:`mtokspec.chat.bounds`, as the transformers renderer's): every value the engine makes
(literals, operators, filters, methods, functions, stored variables) is weighed
(:func:`~mtokspec.chat.mnn.values.weight`) and refused past the value limit before it is built;
printing writes into the output up to ``max_output_chars`` and stops there; the clock is checked
at every node, loop iteration and every 4,096 items a writer writes.  Where MNN's engine itself
would never return or crash, :class:`~mtokspec.chat.mnn.values.MnnEngineFailure` names the
divergence rule.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from mtokspec.chat.mnn import builtins as B
from mtokspec.chat.mnn import nodes as N
from mtokspec.chat.mnn.parser import parse
from mtokspec.chat.mnn.lexer import tokenize
from mtokspec.chat.bounds import MAX_OUTPUT_CHARS, MAX_TEMPLATE_CHARS, TIMEOUT_SECONDS, RenderBounds
from mtokspec.chat.mnn.values import (Room, compare, dump_into, equal, from_python, is_undefined,
                                      py_str_into, truthy, undefined, weight, wrap64)
from mtokspec.errors import ArgumentTypeError, ChatTemplateError
from mtokspec.args import mapping, optional_text, token_text

_PROBE = b"<__jinja_content_probe__>"
class _Frame:
    """One render: the scope stack, the macros registered so far, the limits."""

    __slots__ = ("scopes", "macros", "limits", "depth", "missing")

    def __init__(self, scopes: list[dict], limits: RenderBounds, missing: frozenset[bytes] = frozenset()):
        self.scopes = scopes
        self.macros: dict[bytes, N.MacroNode] = {}
        self.limits = limits
        self.depth = 0
        self.missing = missing  # filters the engine's version lacks: they pass their input through

    def get(self, name: bytes) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return undefined()

    def tick(self) -> None:
        self.limits.tick()

    def check_size(self, value: Any, what: str) -> Any:
        limit = self.limits.value_limit
        if weight(value, limit) > limit:
            raise self.limits.too_large(what)
        return value


def _is_num(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _in(left: Any, right: Any) -> bool | None:
    if type(right) is list:
        return any(equal(e, left) for e in right)
    if type(right) is dict and type(left) is bytes:
        return left in right
    if type(right) is bytes and type(left) is bytes:
        return left in right
    return None


def _binary(op: bytes, left: Any, right: Any, bounds: RenderBounds) -> Any:
    """A binary operator's value; a ``+`` or ``~`` result past the value limit is refused before
    it is made."""
    if op == b"+":
        if type(left) is bytes and type(right) is bytes:
            if len(left) + len(right) + 1 > bounds.value_limit:
                raise bounds.too_large("a + of strings", len(left) + len(right) + 1)
            return left + right
        if _is_num(left) and _is_num(right):
            if type(left) is float or type(right) is float:
                return float(left) + float(right)
            return wrap64(left + right)
        if type(left) is list or type(right) is list:
            limit = bounds.value_limit
            size = weight(left, limit)
            size += weight(right, limit - size + 1)
            if size > limit:
                raise bounds.too_large("a + of lists")
            if type(left) is list and type(right) is list:
                return left + right
            if type(left) is list:
                return left + [right]
            return [left] + right
        return b""
    if op == b"-":
        if _is_num(left) and _is_num(right):
            if type(left) is float or type(right) is float:
                return float(left) - float(right)
            return wrap64(left - right)
        return b""
    if op == b"==":
        return compare(left, right) == 0
    if op == b"!=":
        return compare(left, right) != 0
    if op == b"<":
        return compare(left, right) < 0
    if op == b">":
        return compare(left, right) > 0
    if op == b"<=":
        return compare(left, right) <= 0
    if op == b">=":
        return compare(left, right) >= 0
    if op == b"in":
        r = _in(left, right)
        return False if r is None else r
    if op == b"not in":
        r = _in(left, right)
        return True if r is None else not r
    if op == b"and":
        return truthy(left) and truthy(right)
    if op == b"or":
        return truthy(left) or truthy(right)
    if op == b"~":
        room = Room(bounds.value_limit, bounds, lambda: bounds.too_large("a ~ concatenation"))
        py_str_into(left, room)
        py_str_into(right, room)
        return bytes(room.out)
    return b""


def _slice(seq: list, key: dict) -> list:
    n = len(seq)
    start_v, stop_v, step_v = key.get(b"start"), key.get(b"stop"), key.get(b"step")
    step = B.get_long(step_v, "a slice step") if step_v is not None else 1
    if step == 0:
        step = 1
    if start_v is not None:
        start = B.get_long(start_v, "a slice start")
        if start < 0:
            start += n
        start = min(max(start, 0), n)
    else:
        start = 0 if step > 0 else n - 1
    if stop_v is not None:
        stop = B.get_long(stop_v, "a slice stop")
        if stop < 0:
            stop += n
    else:
        stop = n if step > 0 else -1
    if step > 0:
        return [seq[i] for i in range(start, min(stop, n), step)]
    out = []
    i = start
    while i > stop and 0 <= i < n:
        out.append(seq[i])
        i += step
    return out


class _Evaluator:
    """Evaluates expressions and renders nodes for one :class:`_Frame`."""

    def __init__(self, frame: _Frame):
        self.f = frame

    # expressions
    def ev(self, e: N.Expr) -> Any:
        t = type(e)
        if t is N.Lit:
            return e.value
        if t is N.Var:
            return self.f.get(e.name)
        if t is N.GetAttr:
            obj = self.ev(e.obj)
            if type(obj) is dict and e.name in obj:
                return obj[e.name]
            if type(obj) is list and e.name == b"length":
                return len(obj)
            return undefined()
        if t is N.GetItem:
            return self._getitem(e)
        if t is N.Slice:
            return {b"_type": b"slice",
                    b"start": self.ev(e.start) if e.start is not None else None,
                    b"stop": self.ev(e.stop) if e.stop is not None else None,
                    b"step": self.ev(e.step) if e.step is not None else None}
        if t is N.Call:
            self.f.tick()  # calls, methods, filters and operators do the work: the deadline between them
            return self._call(e)
        if t is N.Method:
            self.f.tick()
            obj = self.ev(e.obj)
            return B.call_method(obj, e.name, e.args, self.ev, self.f.limits)
        if t is N.Filter:
            self.f.tick()
            val = self.ev(e.left)
            if e.name in self.f.missing:
                return val
            return B.apply_filter(e.name, val, e.args, self.ev, self.f.limits)
        if t is N.Binary:
            self.f.tick()
            left = self.ev(e.left)
            right = self.ev(e.right)
            return _binary(e.op, left, right, self.f.limits)
        if t is N.Test:
            r = B.apply_test(e.name, self.ev(e.expr))
            return (not r) if e.negated else r
        if t is N.Ternary:
            return self.ev(e.yes) if truthy(self.ev(e.cond)) else self.ev(e.no)
        if t is N.ListLit:
            limit = self.f.limits.value_limit
            size = 1
            items = []
            for i in e.items:
                item = self.ev(i)
                size += weight(item, limit - size)
                if size > limit:
                    raise self.f.limits.too_large("a list literal")
                items.append(item)
            return items
        if t is N.DictLit:
            limit = self.f.limits.value_limit
            size = 1
            obj: dict = {}
            for k, v in e.items:
                key = self.ev(k)
                key = key if type(key) is bytes else b""
                value = self.ev(v)
                size += len(key) + weight(value, limit - size)
                if size > limit:
                    raise self.f.limits.too_large("a dict literal")
                obj[key] = value
            return obj
        raise AssertionError(t)

    def _getitem(self, e: N.GetItem) -> Any:
        obj = self.ev(e.obj)
        key = self.ev(e.key)
        if type(obj) is list:
            if type(key) is dict and key.get(b"_type") == b"slice":
                return _slice(obj, key)
            if type(key) is int:
                i = key + len(obj) if key < 0 else key
                if 0 <= i < len(obj):
                    return obj[i]
        elif type(obj) is dict:
            if type(key) is bytes and key in obj:
                return obj[key]
        return b""

    def _call(self, e: N.Call) -> Any:
        if e.name in B.FUNCTIONS:
            args = [(n, self.ev(a)) for n, a in e.args]
            if e.name == b"namespace":
                args = [(n, copy.deepcopy(v)) for n, v in args]
            return B.call_function(e.name, args, self._now, self.f.limits)
        macro = self.f.macros.get(e.name)
        if macro is None:
            return b""
        scope: dict = {}
        i = 0
        for n, a in e.args:
            if n:
                scope[n] = copy.deepcopy(self.ev(a))
            elif i < len(macro.params):
                scope[macro.params[i]] = copy.deepcopy(self.ev(a))
                i += 1
        self.f.scopes.append(scope)
        out = bytearray()
        try:
            self.render(macro.body, out)
        finally:
            self.f.scopes.pop()
        return bytes(out)

    def _now(self) -> datetime:
        return self.f.limits.now if self.f.limits.now is not None else datetime.now()

    # statements
    def render(self, nodes: list[N.Node], out: bytearray) -> None:
        f = self.f
        for node in nodes:
            f.tick()
            t = type(node)
            if t is N.TextNode:
                out += node.text
            elif t is N.PrintNode:
                val = self.ev(node.expr)
                if is_undefined(val):
                    continue
                if type(val) is bytes:
                    if len(out) + len(val) > f.limits.max_output:
                        raise f.limits.output_exceeded()
                    out += val
                else:  # written into the output, up to its bound
                    dump_into(val, Room(f.limits.max_output - len(out), f.limits, f.limits.output_exceeded, out))
            elif t is N.IfNode:
                self.render(node.yes if truthy(self.ev(node.cond)) else node.no, out)
            elif t is N.ForNode:
                self._for(node, out)
            elif t is N.SetNode:
                self._set(node)
            elif t is N.MacroNode:
                f.macros[node.name] = node
            if len(out) > f.limits.max_output:
                raise f.limits.output_exceeded()

    def _bind(self, names: list[bytes], item: Any) -> dict:
        scope: dict = {}
        if len(names) == 1:
            scope[names[0]] = copy.deepcopy(item)
        elif type(item) is list and len(item) >= len(names):
            for n, v in zip(names, item):
                scope[n] = copy.deepcopy(v)
        elif names:
            scope[names[0]] = copy.deepcopy(item)
        return scope

    def _for(self, node: N.ForNode, out: bytearray) -> None:
        it = self.ev(node.iterable)
        if is_undefined(it):
            return
        if type(it) is list:
            items = list(it)
        elif type(it) is dict:
            items = sorted(it)
        else:
            items = []
        if node.cond is not None:
            kept = []
            for item in items:
                self.f.tick()
                self.f.scopes.append(self._bind(node.vars, item))
                try:
                    ok = truthy(self.ev(node.cond))
                finally:
                    self.f.scopes.pop()
                if ok:
                    kept.append(item)
            items = kept
        n = len(items)
        for index, item in enumerate(items):
            self.f.tick()
            scope = self._bind(node.vars, item)
            scope[b"loop"] = {b"index0": index, b"index": index + 1, b"first": index == 0,
                              b"last": index == n - 1, b"length": n}
            self.f.scopes.append(scope)
            try:
                self.render(node.body, out)
            finally:
                self.f.scopes.pop()

    def _set(self, node: N.SetNode) -> None:
        val = self.ev(node.value)
        target = node.target
        f = self.f
        if type(target) is N.Var:
            f.check_size(val, f"the value of {target.name.decode('utf-8', 'replace')}")
            f.scopes[-1][target.name] = copy.deepcopy(val)
        elif type(target) is N.GetAttr and type(target.obj) is N.Var:
            name = target.obj.name
            home = next((s for s in reversed(f.scopes) if name in s), None)
            obj = home[name] if home is not None else undefined()
            if obj is None:
                return
            if type(obj) is not dict:
                obj = {}
            obj[target.name] = copy.deepcopy(val)
            f.check_size(obj, f"the value of {name.decode('utf-8', 'replace')}")
            (home if home is not None else f.scopes[-1])[name] = obj


class MnnTemplate:
    """A chat template compiled as MNN's ``jinja::Template`` compiles it, with its default
    context (which, as in MNN, persists across its renders)."""

    def __init__(self, source: str | bytes, *, eos_token: str = "", bos_token: str = "",
                 missing_filters: frozenset[str] = frozenset()):
        self.missing = frozenset(name.encode() for name in missing_filters)
        if not isinstance(source, (str, bytes, bytearray)):
            raise ArgumentTypeError(f"source: expected a str or bytes, got {type(source).__name__}")
        optional_text("eos_token", eos_token)
        optional_text("bos_token", bos_token)
        try:
            src = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else bytes(source)
        except UnicodeEncodeError:
            raise ChatTemplateError("source: a lone surrogate is not UTF-8 text (MNN's engine takes UTF-8)") from None
        if len(src) > MAX_TEMPLATE_CHARS:
            raise ChatTemplateError(f"template too long (limit {MAX_TEMPLATE_CHARS} bytes)")
        self.default: dict = {b"eos_token": from_python(eos_token or "")}
        if bos_token:
            self.default[b"bos_token"] = from_python(bos_token)
        for name in B.FUNCTIONS:
            self.default.setdefault(name, b"<function " + name + b">")
        try:
            self.nodes = parse(tokenize(src))
        except RecursionError:
            raise ChatTemplateError("the template nests expressions too deeply to emulate MNN's "
                                    "parser (its C++ recursion may overflow the stack)") from None

    def render(self, context: dict, limits: RenderBounds) -> bytes:
        """``Template::render`` of an engine-side context (values of :mod:`.values`)."""
        frame = _Frame([self.default, context] if context else [self.default], limits, self.missing)
        out = bytearray()
        try:
            _Evaluator(frame).render(self.nodes, out)
        except RecursionError:
            raise ChatTemplateError("recursion too deep: MNN's engine would overflow its stack "
                                    "(a macro calling itself without end, or a value nested too deeply)") from None
        return bytes(out)

    def apply(self, messages: list, add_generation_prompt: bool, extra: dict, limits: RenderBounds) -> bytes:
        """``Template::apply_chat_template``: the probe renders, parts if needed, then the render."""
        str_out = self.render({b"messages": [{b"role": b"user", b"content": _PROBE}]}, limits)
        typed_out = self.render(
            {b"messages": [{b"role": b"user", b"content": [{b"type": b"text", b"text": _PROBE}]}]}, limits)
        msgs = copy.deepcopy(messages)
        if _PROBE not in str_out and _PROBE in typed_out:
            for m in msgs:
                if type(m) is dict and type(m.get(b"content")) is bytes and m[b"content"]:
                    m[b"content"] = [{b"type": b"text", b"text": m[b"content"]}]
        context = dict(extra)
        context[b"messages"] = msgs
        if add_generation_prompt:
            context[b"add_generation_prompt"] = True
        return self.render(context, limits)


def engine_messages(messages: list[dict]) -> list:
    """Messages as MNN's callers hand them to the engine: a message of exactly a string ``role``
    and a string ``content`` as that pair (role first); any other as its whole JSON object."""
    from mtokspec.chat.render import checked_messages

    out = []
    for i, m in enumerate(checked_messages(messages)):
        if len(m) == 2 and isinstance(m.get("role"), str) and isinstance(m.get("content"), str):
            out.append({b"role": from_python(m["role"], f"messages[{i}].role"),
                        b"content": from_python(m["content"], f"messages[{i}].content")})
        else:
            out.append(from_python(m, f"messages[{i}]"))
    return out


def render_mnn(template: str, messages: list[dict], *, add_generation_prompt: bool = True,
               bos_token: str | None = None, eos_token: str | None = None,
               context: dict | None = None, strftime_now: datetime | str | None = None,
               max_output_chars: int = MAX_OUTPUT_CHARS, timeout_seconds: float | None = TIMEOUT_SECONDS,
               missing_filters: frozenset[str] = frozenset()) -> str:
    """The prompt MNN's ``Tokenizer::apply_chat_template`` renders for ``messages``.

    ``bos_token``/``eos_token`` are the file's strings (``None`` = empty: MNN defines
    ``eos_token`` always and ``bos_token`` only when non-empty); ``context`` is the extra context
    MNN takes from ``llm_config.json``'s ``jinja.context`` (the only way a ``tools`` list or other
    variables reach its templates); ``strftime_now`` freezes the clock (a datetime or an ISO-8601
    string); ``missing_filters`` are filters an older MNN's engine lacks (see
    :mod:`mtokspec.runtime.mnn.versions`).  The result is the engine's bytes as text (bytes that
    are not UTF-8, which MNN's byte-wise string operations can make, as surrogate escapes).

    Raises:
        ChatTemplateError: messages or context that are not JSON objects (MNN takes nothing else);
            the render exceeds the time/output/value bounds of the transformers renderer;
            :class:`~mtokspec.chat.mnn.values.MnnEngineFailure` (a subclass) where MNN's engine
            itself would never return, run out of memory or crash.
    """
    from mtokspec.chat.render import _to_datetime, checked_limits

    token_text("template", template)
    optional_text("bos_token", bos_token)
    optional_text("eos_token", eos_token)
    max_output_chars, timeout_seconds = checked_limits(max_output_chars, timeout_seconds)
    mapping("context", context, optional=True)  # MNN's jinja.context is a JSON object
    now = _to_datetime(strftime_now)
    try:
        try:
            extra = from_python(context or {}, "context")
            messages_in = engine_messages(messages)
        except RecursionError:
            raise ChatTemplateError("messages or context nest too deeply") from None
        if type(extra) is not dict:
            raise ChatTemplateError("context must be a JSON object (MNN's jinja.context is one)")
        limits = RenderBounds.start(max_output_chars, timeout_seconds, now)
        tpl = MnnTemplate(template, eos_token=eos_token or "", bos_token=bos_token or "",
                          missing_filters=missing_filters)
        out = tpl.apply(messages_in, bool(add_generation_prompt), extra, limits)
    except UnicodeEncodeError as e:  # a lone surrogate: no UTF-8 text, and MNN takes nothing else
        raise ChatTemplateError(f"not UTF-8 text (MNN's engine reads bytes): {e}") from None
    return out.decode("utf-8", "surrogateescape")


def render_file_mnn(file: Any, messages: list[dict], *, template: str | None = None,
                    add_generation_prompt: bool = True, tools: list | None = None, context: dict | None = None,
                    **kwargs: Any) -> str:
    """:func:`render_mnn` for a tokenizer file (anything with ``chat_template``, ``bos_token`` and
    ``eos_token``): its template unless ``template`` is given, its BOS/EOS strings unless passed.
    MNN's API takes no ``tools`` nor template variables: a device app hands them over through
    ``llm_config.json``'s ``jinja.context``, which is where ``tools`` and every keyword other than
    ``strftime_now``, ``max_output_chars``, ``timeout_seconds`` and ``missing_filters`` go (``context``
    is that object)."""
    from mtokspec.chat.render import checked_file, checked_messages

    checked_file(file)
    messages = checked_messages(messages)
    optional_text("template", template)
    mapping("context", context, optional=True)
    source = template if template is not None else file.chat_template
    if not source:
        raise ChatTemplateError("the file has no chat template; pass template=...")
    bos = kwargs.pop("bos_token", file.bos_token)
    eos = kwargs.pop("eos_token", file.eos_token)
    options = {k: kwargs.pop(k) for k in ("strftime_now", "max_output_chars", "timeout_seconds", "missing_filters")
               if k in kwargs}
    extra = dict(context or {})
    if tools is not None:
        extra["tools"] = tools
    extra.update(kwargs)
    return render_mnn(source, messages, add_generation_prompt=add_generation_prompt, bos_token=bos, eos_token=eos,
                      context=extra, **options)

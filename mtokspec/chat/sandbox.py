"""The sandbox chat templates render in: transformers' jinja environment, hardened.

Every operation that can amplify memory in one C-level step is bounded before it runs (operators,
``~``, container literals, ``str`` methods, size-taking filters, printed values), loops and calls
tick a cooperative clock, and unsafe attributes raise at once.  :func:`mtokspec.chat.render.
render_chat_template` sets the per-render limits (:class:`RenderState`).
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import json
import math
import re
import string
from datetime import datetime
from typing import Any, Callable, cast

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.meta
import jinja2.nodes as nodes
import jinja2.utils
from jinja2.exceptions import SecurityError
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from mtokspec.chat.bounds import MAX_TEMPLATE_CHARS, MIN_VALUE_LIMIT, RenderBounds  # noqa: F401  # re-exported
from mtokspec.chat.environment import TEMPLATE_SYNTAX
from mtokspec.errors import ChatTemplateError


# ---------------------------------------------------------------------------------------------
# Limits and per-render state
# ---------------------------------------------------------------------------------------------

#: Largest integer (in bits) that ``*`` / ``**`` may produce.
_MAX_INT_BITS = 100_000
#: Longest ``tojson`` indent accepted (characters, or spaces when given as an int).
_MAX_JSON_INDENT = 256
#: ``lipsum`` bounds.
_MAX_LIPSUM_PARAGRAPHS = 100
_MAX_LIPSUM_WORDS = 1_000
#: Free variables refused unless the caller supplies them: they only occur in SSTI probes.
SSTI_NAMES = frozenset({"config", "request", "session", "url_for", "get_flashed_messages"})


RenderState = RenderBounds
"""The per-render limits the sandbox reads (:class:`mtokspec.chat.bounds.RenderBounds`)."""

_DEFAULT_STATE = RenderState(math.inf, math.inf, MIN_VALUE_LIMIT, None)
STATE: contextvars.ContextVar[RenderState | None] = contextvars.ContextVar(
    "mtokspec_chat_template_state", default=None
)


def _state() -> RenderState:
    st = STATE.get()
    return _DEFAULT_STATE if st is None else st


def _tick() -> None:
    st = STATE.get()
    if st is not None:
        st.tick()


def _too_big(what: str, size: int) -> None:
    limit = _state().value_limit
    if size > limit:
        raise ChatTemplateError(f"{what} would produce {size} characters/items (limit {limit})")


def _weight(value: Any, limit: int | None = None) -> int:
    """Approximate length of ``repr(value)``, counting shared references each time.

    Raises ChatTemplateError as soon as the weight exceeds ``limit`` (default: the value limit),
    so the walk costs O(min(unique nodes, limit)).
    """
    if limit is None:
        limit = _state().value_limit
    memo: dict[int, int] = {}

    def w(o: Any) -> int:
        if isinstance(o, (str, bytes)):
            return len(o) + 2
        if isinstance(o, bool) or o is None:
            return 5
        if isinstance(o, int):
            return o.bit_length() // 3 + 2
        if isinstance(o, jinja2.utils.Namespace):
            try:
                o = object.__getattribute__(o, "_Namespace__attrs")
            except AttributeError:
                return 16
        if not isinstance(o, (list, tuple, dict, set, frozenset)):
            return 16
        key = id(o)
        if key in memo:
            return memo[key]
        memo[key] = 0  # cycles cannot be built in the immutable sandbox; be safe anyway
        total = 2
        if isinstance(o, dict):
            for k, v in o.items():
                total += w(k) + w(v) + 4
                if total > limit:
                    break
        else:
            for e in o:
                total += w(e) + 2
                if total > limit:
                    break
        if total > limit:
            raise ChatTemplateError(f"value too large to render (more than {limit} characters)")
        memo[key] = total
        return total

    total = w(value)
    if total > limit:
        raise ChatTemplateError(f"value too large to render (more than {limit} characters)")
    return total


def _check_value(value: Any) -> Any:
    """Reject a value whose printed form would exceed the value limit; return it unchanged."""
    if isinstance(value, str):
        _too_big("string", len(value))
    elif isinstance(value, (list, tuple, dict, set, frozenset, jinja2.utils.Namespace)):
        _weight(value)
    return value


# ---------------------------------------------------------------------------------------------
# Pre-checks for amplifying operations
# ---------------------------------------------------------------------------------------------

_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def _ints_in(args: Any) -> list[int]:
    if isinstance(args, dict):
        args = list(args.values())
    elif not isinstance(args, (list, tuple)):
        args = [args]
    return [a for a in args if isinstance(a, int) and not isinstance(a, bool)]


def _check_percent_format(fmt: str, args: Any) -> None:
    limit = _state().value_limit
    star = False
    for m in _PERCENT_SPEC.finditer(fmt):
        for g in m.groups():
            if g == "*":
                star = True
            elif g is not None and int(g) > limit:
                _too_big("%-format width", int(g))
    if star:
        for i in _ints_in(args):
            _too_big("%-format width", abs(i))
    _weight(args)


def _check_brace_format(fmt: str, args: tuple, kwargs: dict) -> None:
    try:
        parsed = list(string.Formatter().parse(fmt))
    except (ValueError, TypeError):
        return  # the real call will raise the proper error
    nested = False
    for _literal, _field, spec, _conv in parsed:
        if not spec:
            continue
        if "{" in spec:
            nested = True
        for d in _DIGITS.findall(spec):
            _too_big("format width", int(d))
    if nested:
        for i in _ints_in(list(args) + list(kwargs.values())):
            _too_big("format width", abs(i))
    _weight(args)
    _weight(kwargs)


def _count_occurrences(s: Any, old: Any, count: Any) -> int:
    n = len(s) + 1 if len(old) == 0 else s.count(old)
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        n = min(n, count)
    return n


def _precheck_str_method(obj: Any, args: tuple, kwargs: dict) -> tuple:
    """Bound str/bytes methods that can allocate much more than their inputs."""
    owner = getattr(obj, "__self__", None)
    if not isinstance(owner, (str, bytes)):
        return args
    name = getattr(obj, "__name__", "")
    if name in ("center", "ljust", "rjust", "zfill"):
        width = args[0] if args else kwargs.get("width")
        if isinstance(width, int):
            _too_big(f"str.{name}", width)
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int):
            _too_big("str.expandtabs", len(owner) + max(size, 0) * cast(Any, owner).count("\t" if isinstance(owner, str) else b"\t"))
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if isinstance(old, type(owner)) and isinstance(new, type(owner)):
            n = _count_occurrences(owner, old, count)
            _too_big("str.replace", len(owner) + n * max(len(new) - len(old), 0))
    elif name == "join" and args:
        items = args[0]
        if not isinstance(items, (list, tuple)):
            items = list(items)
            args = (items,) + tuple(args[1:])
        total = len(owner) * max(len(items) - 1, 0)
        for it in items:
            total += len(it) if isinstance(it, (str, bytes)) else 0
            if total > _state().value_limit:
                break
        _too_big("str.join", total)
    elif name == "translate" and args and isinstance(args[0], dict):
        longest = max((len(v) for v in args[0].values() if isinstance(v, (str, bytes))), default=1)
        _too_big("str.translate", len(owner) * max(longest, 1))
    elif name in _GROWING:
        _too_big(f"str.{name}", len(owner))
    elif name in ("split", "rsplit", "splitlines"):
        _too_big(f"str.{name}", len(owner) + 4 * _parts(owner, name, args, kwargs))
    return args


#: str/bytes methods whose result may be a few times longer than their owner (``encode``: 4 UTF-8
#: bytes a character; ``hex``: 2 digits and a separator a byte; case mappings: 3 characters, as
#: "ﬃ".upper()): the owner must be within the value limit, so the result is at most 4 times the
#: limit when ``call`` measures it
_GROWING = frozenset({"encode", "hex", "upper", "lower", "casefold", "swapcase", "title", "capitalize"})
_SPACE_RUNS = {str: re.compile(r"\s+"), bytes: re.compile(rb"\s+")}
_LINE_ENDS = {str: re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]"), bytes: re.compile(rb"\r\n|[\n\r]")}


def _parts(owner: Any, name: str, args: tuple, kwargs: dict) -> int:
    """At most how many parts ``owner.<name>(...)`` (split, rsplit, splitlines) returns: counted
    before the call, in one scan, so that the list is weighed before it is made."""
    if name == "splitlines":
        pattern = _LINE_ENDS[type(owner)]
        return sum(1 for _ in pattern.finditer(owner)) + 1
    sep = args[0] if args else kwargs.get("sep")
    limit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if isinstance(sep, (str, bytes)) and type(sep) is type(owner) and sep:
        n = owner.count(sep)
    else:
        n = sum(1 for _ in _SPACE_RUNS[type(owner)].finditer(owner))
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        n = min(n, limit)
    return n + 1


def _guarded_binop(op: str, left: Any, right: Any) -> None:
    seq = (str, bytes, list, tuple)
    if op == "*":
        if isinstance(left, seq) and isinstance(right, int):
            _too_big("sequence repetition", len(left) * max(right, 0))
            if not isinstance(left, (str, bytes)) and right > 1:
                _weight(left, _state().value_limit // right + 1)
        elif isinstance(right, seq) and isinstance(left, int):
            _too_big("sequence repetition", len(right) * max(left, 0))
            if not isinstance(right, (str, bytes)) and left > 1:
                _weight(right, _state().value_limit // left + 1)
        elif isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > _MAX_INT_BITS:
                raise ChatTemplateError(f"integer product too large (limit {_MAX_INT_BITS} bits)")
    elif op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if right * abs(left).bit_length() > _MAX_INT_BITS:
                raise ChatTemplateError(f"integer power too large (limit {_MAX_INT_BITS} bits)")
    elif op == "+":
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
            _too_big("concatenation", len(left) + len(right))
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            _too_big("concatenation", len(left) + len(right))
            limit = _state().value_limit
            _too_big("concatenation", _weight(left, limit) + _weight(right, limit))
    elif op == "%":
        if isinstance(left, str):
            _check_percent_format(left, right)


# ---------------------------------------------------------------------------------------------
# Template globals and filters
# ---------------------------------------------------------------------------------------------


def _raise_exception(message: Any) -> None:
    raise ChatTemplateError(str(message))


_STRFTIME_SPEC = re.compile(r"%[-_0^#]*([0-9]*)[EO]?(.?)", re.S)
#: the longest text one strftime directive writes without a width (``%c``, a time zone name)
_STRFTIME_NATURAL = 64


def _strftime_now(format: str) -> str:
    """The current (or the render's fixed) time formatted; the size of the result is bounded
    before formatting (the C library pads to any width a directive asks) and checked after."""
    if not isinstance(format, str):
        raise ChatTemplateError(f"strftime_now expects a format string, got {type(format).__name__}")
    _too_big("strftime_now format", len(format))
    limit = _state().value_limit
    size = len(format)
    for m in _STRFTIME_SPEC.finditer(format):
        width = m.group(1)
        if len(width) > len(str(limit)):
            _too_big("strftime_now width", limit + 1)
        size += max(int(width or 0), _STRFTIME_NATURAL)
        if size > limit:
            _too_big("strftime_now", size)
    now = _state().now
    return _check_value((now if now is not None else datetime.now()).strftime(format))


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    if isinstance(indent, int) and not isinstance(indent, bool) and indent > _MAX_JSON_INDENT:
        raise ChatTemplateError(f"tojson indent too large (limit {_MAX_JSON_INDENT})")
    if isinstance(indent, str) and len(indent) > _MAX_JSON_INDENT:
        raise ChatTemplateError(f"tojson indent too large (limit {_MAX_JSON_INDENT})")
    if separators is not None:
        _weight(separators, _MAX_JSON_INDENT)
    _weight(x)
    out = json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                     sort_keys=sort_keys)
    _too_big("tojson", len(out))
    return out


_orig_lipsum = jinja2.utils.generate_lorem_ipsum


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    if not isinstance(n, int) or not isinstance(max, int) or not isinstance(min, int):
        raise ChatTemplateError("lipsum arguments must be integers")
    if n > _MAX_LIPSUM_PARAGRAPHS or max > _MAX_LIPSUM_WORDS or min > _MAX_LIPSUM_WORDS:
        raise ChatTemplateError("lipsum arguments too large")
    return _orig_lipsum(n=n, html=html, min=min, max=max)


def _wrap_filter(original: Callable, check: Callable[..., None] | None = None,
                 check_result: bool = False, weigh_input: bool = False, check_text: bool = False) -> Callable:
    """Wrap a jinja filter with a pre-check (same arguments, minus the pass_* first argument)
    and/or a check of its result (``check_text``: only a text result, by its length); the jinja
    pass_* marker is preserved by functools.wraps."""
    passes_arg = hasattr(original, "jinja_pass_arg")

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        user_args = args[1:] if passes_arg else args
        if weigh_input and user_args and not isinstance(user_args[0], str):
            _check_value(user_args[0])
        if check is not None:
            check(*user_args, **kwargs)
        result = original(*args, **kwargs)
        if check_result:
            _check_value(result)
        elif check_text and isinstance(result, (str, bytes)):
            _too_big(f"filter {original.__name__}", len(result))
        return result

    return wrapper


def _chk_width(value: Any, width: Any = 80, *a: Any, **k: Any) -> None:
    if isinstance(width, int):
        _too_big("center", width)


def _chk_indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    if not isinstance(s, str):
        return
    unit = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    _too_big("indent", len(s) + max(unit, 0) * (s.count("\n") + 1))


def _chk_format(value: Any, *args: Any, **kwargs: Any) -> None:
    if isinstance(value, str):
        _check_percent_format(value, kwargs or args)


def _chk_replace(s: Any, old: Any = None, new: Any = None, count: Any = None) -> None:
    if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
        n = _count_occurrences(s, old, count if count is not None else -1)
        _too_big("replace", len(s) + n * max(len(new) - len(old), 0))


def _chk_batch(value: Any, linecount: Any = 1, fill_with: Any = None) -> None:
    if fill_with is not None and isinstance(linecount, int):
        _too_big("batch", linecount)


def _chk_slice(value: Any, slices: Any = 1, fill_with: Any = None) -> None:
    if isinstance(slices, int) and slices > MAX_RANGE:
        raise ChatTemplateError(f"slice count too large (limit {MAX_RANGE})")


def _chk_wordwrap(s: Any, width: Any = 79, break_long_words: bool = True,
                  wrapstring: Any = None, break_on_hyphens: bool = True) -> None:
    if isinstance(s, str) and isinstance(width, int):
        sep = len(wrapstring) if isinstance(wrapstring, str) else 1
        _too_big("wordwrap", len(s) + (len(s) // max(width, 1) + 1) * sep)


def _join_filter(original: Callable) -> Callable:
    @functools.wraps(original)
    def wrapper(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)
        if attribute is not None:
            getter = jinja2.filters.make_attrgetter(eval_ctx.environment, attribute)
            items = [getter(x) for x in items]
        limit = _state().value_limit
        total = len(d) * max(len(items) - 1, 0) if isinstance(d, str) else 0
        for it in items:
            total += len(it) if isinstance(it, str) else _weight(it, limit)
            if total > limit:
                break
        _too_big("join", total)
        return original(eval_ctx, items, d)

    return wrapper


def _sum_filter(original: Callable) -> Callable:
    @functools.wraps(original)
    def wrapper(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        if isinstance(start, (list, tuple)):
            items = list(iterable)
            if attribute is not None:
                getter = jinja2.filters.make_attrgetter(environment, attribute)
                items = [getter(x) for x in items]
            if all(type(x) is type(start) for x in items):
                # linear instead of quadratic, same result as sum()
                total = len(start) + sum(len(x) for x in items)
                _too_big("sum", total)
                return _check_value(type(start)(itertools.chain(start, *items)))
            return original(environment, items, start=start)
        return original(environment, iterable, attribute=attribute, start=start)

    return wrapper


def _concat(items: list) -> str:
    """``a ~ b ~ ...`` with a size check (same result as jinja's ``str_join``)."""
    parts = []
    total = 0
    for x in items:
        _check_value(x)
        s = str(x)
        total += len(s)
        _too_big("~ concatenation", total)
        parts.append(s)
    return "".join(parts)


def _loop_guard(iterable: Any) -> Any:
    """Wraps the iterable of every ``{% for %}``: checks the deadline at each iteration."""
    for item in iterable:
        _tick()
        yield item


def _finalize(value: Any) -> Any:
    """Applied to every ``{{ ... }}`` value before it is converted with ``str()``."""
    if not isinstance(value, str):
        _check_value(value)
    return value


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------


def _env_call(name: str, arg: nodes.Expr) -> nodes.Expr:
    call = nodes.Call(nodes.EnvironmentAttribute(name), [arg], [], None, None)
    return cast(nodes.Expr, call.set_lineno(arg.lineno or 1))


class _Hardener(NodeTransformer):
    """Rewrites the parsed template so that loops, ``~`` and container literals are checked."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        node = cast(nodes.For, self.generic_visit(node))
        node.iter = _env_call("mtok_loop_guard", cast(nodes.Expr, node.iter))
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        node = cast(nodes.Concat, self.generic_visit(node))
        items = cast(nodes.Expr, nodes.List(node.nodes).set_lineno(node.lineno or 1))
        return _env_call("mtok_concat", items)

    def visit_List(self, node: nodes.List) -> nodes.Node:
        return _env_call("mtok_check", cast(nodes.Expr, self.generic_visit(node)))

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        return _env_call("mtok_check", cast(nodes.Expr, self.generic_visit(node)))

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        node = cast(nodes.Tuple, self.generic_visit(node))
        return _env_call("mtok_check", node) if node.ctx == "load" else node


class _ChatSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    # reachable from compiled code only (EnvironmentAttribute nodes); templates cannot name them
    mtok_loop_guard = staticmethod(_loop_guard)
    mtok_concat = staticmethod(_concat)
    mtok_check = staticmethod(_check_value)

    def _parse(self, source: str, name: Any, filename: Any) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        tree = _Hardener().visit(tree)
        tree.set_environment(self)
        return tree

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        _guarded_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _tick()
        args = _precheck_str_method(obj, args, kwargs)
        result = super().call(context, obj, *args, **kwargs)
        if isinstance(result, (str, bytes)):
            _too_big("call result", len(result))
        elif isinstance(result, (list, tuple, dict, set, frozenset, jinja2.utils.Namespace)):
            _weight(result)
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        _tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _tick()
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe."
        )

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__
        is_map = value.__name__ == "format_map"

        @functools.wraps(wrapped)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if is_map and len(args) == 1 and not kwargs:
                _check_brace_format(fmt, (), args[0] if isinstance(args[0], dict) else {})
            else:
                _check_brace_format(fmt, args, kwargs)
            return _check_value(wrapped(*args, **kwargs))

        return checked


#: the filters _build_env replaces or wraps with their own checks
_CHECKED_FILTERS = frozenset({"tojson", "center", "indent", "format", "replace", "batch", "slice", "wordwrap", "join",
                              "sum", "list", "sort", "reverse", "dictsort", "groupby"})


def _build_env() -> _ChatSandbox:
    env = _ChatSandbox(
        **TEMPLATE_SYNTAX,
        finalize=_finalize,
    )
    f = env.filters
    f["tojson"] = _tojson
    f["center"] = _wrap_filter(f["center"], _chk_width)
    f["indent"] = _wrap_filter(f["indent"], _chk_indent)
    f["format"] = _wrap_filter(f["format"], _chk_format)
    f["replace"] = _wrap_filter(f["replace"], _chk_replace, weigh_input=True)
    f["batch"] = _wrap_filter(f["batch"], _chk_batch)
    f["slice"] = _wrap_filter(f["slice"], _chk_slice)
    f["wordwrap"] = _wrap_filter(f["wordwrap"], _chk_wordwrap, weigh_input=True)
    f["join"] = _join_filter(f["join"])
    f["sum"] = _sum_filter(f["sum"])
    # filters that stringify their input: weigh containers first
    for name in ("string", "pprint", "e", "escape", "forceescape", "trim", "upper", "lower",
                 "title", "capitalize", "striptags", "urlize", "wordcount", "truncate",
                 "urlencode"):
        f[name] = _wrap_filter(f[name], weigh_input=True)
    # filters that build lists from existing references: weigh the result
    for name in ("list", "sort", "reverse", "dictsort", "groupby"):
        f[name] = _wrap_filter(f[name], check_result=True)
    # every other filter: a text result is measured as it is made (upper, escape, urlencode,
    # title... write more characters than they read)
    for name, original in list(f.items()):
        if name not in _CHECKED_FILTERS:
            f[name] = _wrap_filter(original, check_text=True)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["lipsum"] = _lipsum
    return env


ENV = _build_env()

"""The sandbox chat templates render in: transformers' jinja environment, hardened.

Every operation that can amplify memory in one C-level step is bounded before it runs (operators,
``~``, container literals, ``str`` methods, size-taking filters, printed values), loops and calls
tick a cooperative clock, and unsafe attributes raise at once.  :func:`mtokspec.chat.render.
render_chat_template` sets the per-render limits (:class:`.sandbox_checks.RenderState`).  This module builds the
environment; the state and the pre-checks are in :mod:`.sandbox_checks`, the globals and filters in
:mod:`.sandbox_filters`.
"""
from __future__ import annotations

import functools
from typing import Any, cast

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.meta
import jinja2.nodes as nodes
import jinja2.utils
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from mtokspec.chat.environment import TEMPLATE_SYNTAX
from mtokspec.chat.sandbox_checks import (
    _check_brace_format, _check_value, _guarded_binop, _precheck_str_method, _tick, _too_big, _weight,
)
from mtokspec.chat.sandbox_filters import (
    _chk_batch, _chk_format, _chk_indent, _chk_replace, _chk_slice, _chk_width, _chk_wordwrap, _concat,
    _finalize, _join_filter, _lipsum, _loop_guard, _raise_exception, _strftime_now, _sum_filter, _tojson,
    _wrap_filter,
)


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

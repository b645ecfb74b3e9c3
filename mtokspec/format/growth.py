"""What makes a runtime amplify or backtrack, predicted from the file alone.

* :func:`growth_steps`: the stages of a pipeline that grow their text by a factor and can compound
  (a ``Replace`` whose content holds its pattern, a table mapping a character to a longer string
  holding it, ``ByteLevel`` after ``ByteLevel``, a ``Metaspace`` replacement holding a space, a
  ``Replace`` decoder likewise).  Two or more in one pipeline grow the text geometrically; one
  that multiplies by more than :data:`mtokspec.runtime.shared.bounds.MAX_EXPANSION` is refused alone.
  MNN bounds none of them: the device runs out of memory.
* :func:`nested_quantifier`: a group repeated without bound (``*``, ``+``, ``{n,}``) that holds a
  quantifier or an alternation -- ``(a+)+``, ``(a|aa)*``: a backtracking engine (MNN's own, and
  ``std::wregex``) may take exponential time on a text that almost matches.
* :func:`pattern_cost`: what compiling a pattern costs, read before any engine compiles it (the
  product of the counted repeats along its nesting, the depth of its groups, its largest class);
  :func:`pattern_refusal` names the bound (:data:`PATTERN_SIZE`, :data:`PATTERN_DEPTH`) it passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtokspec.format import tree as t

__all__ = ["growth_steps", "amplifying_findings", "nested_quantifier", "MAX_EXPANSION", "PATTERN_SIZE",
           "PATTERN_DEPTH", "PatternCost", "pattern_cost", "pattern_refusal"]

MAX_EXPANSION = 64
"""How many times its input a call's text may grow by default (the runtimes' bound,
:mod:`mtokspec.runtime.shared.bounds`)."""


PATTERN_SIZE = 200_000
"""The largest compiled size of a pattern mtokspec compiles (:func:`pattern_cost`): past it the
``regex`` module needs seconds and gigabytes (``(?:(?:(?:a{1000}){1000}){1000})``: 10^9)."""

PATTERN_DEPTH = 64
"""The deepest nesting of groups mtokspec's pattern parsers follow (they recurse, in Python)."""


def walk(node, path: str):
    return t.walk_stage(node, path)


def _factor(pattern: str, content: str) -> float:
    return len(content) / len(pattern) if pattern and pattern in content and len(content) > len(pattern) else 1.0


def growth_steps(tree: t.MtokFile) -> list[tuple[str, str, float]]:
    """``(path, what, factor)`` of each stage that can multiply the length of its text."""
    steps: list[tuple[str, str, float]] = []
    for node, path in walk(tree.normalizer, "normalizer"):
        if isinstance(node, t.ReplaceNormalizer) and _factor(node.pattern, node.content) > 1:
            steps.append((path, f"Replace {node.pattern!r:.20} -> a string holding it", _factor(node.pattern, node.content)))
        elif isinstance(node, (t.TableNormalizer, t.BertNFDNormalizer)):
            table = getattr(node, "table", None) or getattr(node, "nfd_table", None) or []
            worst = 1.0
            for cp, rep in table:
                try:
                    worst = max(worst, _factor(chr(cp), rep.decode("utf-8")))
                except (ValueError, UnicodeDecodeError, OverflowError):
                    continue
            if worst > 1:
                steps.append((path, "a table mapping a character to a longer string holding it", worst))
    byte_levels = 0
    for node, path in walk(tree.pre_tokenizer, "pre_tokenizer"):
        if isinstance(node, t.ByteLevelPreTokenizer):
            byte_levels += 1
            if byte_levels > 1:
                steps.append((path, "ByteLevel after ByteLevel (each maps non-ASCII bytes to two)", 2.0))
        elif isinstance(node, t.MetaspacePreTokenizer) and " " in node.replacement and len(node.replacement) > 1:
            steps.append((path, "a Metaspace replacement holding a space", float(len(node.replacement))))
    for node, path in walk(tree.decoder, "decoder"):
        if isinstance(node, t.ReplaceDecoder) and _factor(node.pattern, node.content) > 1:
            steps.append((path, f"Replace {node.pattern!r:.20} -> a string holding it", _factor(node.pattern, node.content)))
    return steps


def amplifying_findings(tree: t.MtokFile) -> list[tuple[str, str]]:
    """``(path, message)`` for a pipeline whose growth compounds or one step past the bound."""
    out = []
    by_stage: dict[str, list] = {}
    for step in growth_steps(tree):
        by_stage.setdefault(step[0].split(".")[0], []).append(step)
    for stage, steps in by_stage.items():
        big = [s for s in steps if s[2] > MAX_EXPANSION]
        if len(steps) > 1:
            total = 1.0
            for s in steps:
                total *= s[2]
            out.append((stage, f"{len(steps)} steps grow the text, together by a factor of up to {total:.3g} "
                               f"({steps[0][1]} at {steps[0][0]}, ...): a short input needs gigabytes"))
        elif big:
            out.append((big[0][0], f"{big[0][1]} multiplies the text by up to {big[0][2]:.0f}"))
    return out


def nested_quantifier(pattern: str) -> bool:
    """Does ``pattern`` repeat without bound a group that holds a quantifier or an alternation?"""
    stack: list[bool] = []  # per open group: whether it holds a quantifier or '|'
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            continue
        if c == "(":
            stack.append(False)
        elif c == "|" and stack:
            stack[-1] = True
        elif c in "*+" or (c == "{" and _open_repeat(pattern, i)):
            if stack:
                stack[-1] = True
        elif c == ")" and stack:
            inner = stack.pop()
            if inner and _unbounded_after(pattern, i + 1):
                return True
            if stack and inner:
                stack[-1] = True
        i += 1
    return False


def _open_repeat(pattern: str, i: int) -> bool:
    end = pattern.find("}", i)
    return end != -1 and "," in pattern[i:end]


def _unbounded_after(pattern: str, i: int) -> bool:
    if i >= len(pattern):
        return False
    c = pattern[i]
    if c in "*+":
        return True
    if c == "{":
        end = pattern.find("}", i)
        body = pattern[i + 1:end] if end != -1 else ""
        return body.endswith(",") or ("," in body and not body.split(",")[1].strip().isdigit())
    return False


@dataclass(frozen=True)
class PatternCost:
    """What compiling a pattern costs: ``size``, its characters and class items, each counted once
    per copy a counted repeat makes (``(?:ab){3}``: 6; ``*``, ``+``, ``?`` copy nothing); ``depth``,
    the deepest nesting of groups; ``largest_repeat``, the largest count of one ``{m,n}``;
    ``largest_class``, the items of the largest ``[...]`` (a range is one)."""

    size: int
    depth: int
    largest_repeat: int
    largest_class: int


_CAP = 1 << 62  # counts past this are all "too many" (a repeat count of 5,000 digits included)


def _count(digits: str) -> int:
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) < 19 else _CAP


def _interval(pattern: str, i: int) -> tuple[int, int, int] | None:
    """``(copies, largest count, end)`` of a counted repeat ``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}``
    at ``i`` (copies: n, or m + 1 for ``{m,}``), or None when the brace is a literal."""
    end = pattern.find("}", i)
    if end == -1:
        return None
    lo, comma, hi = pattern[i + 1:end].partition(",")
    if not (lo.isdigit() or (comma and not lo)) or (hi and not hi.isdigit()) or (not lo and not hi):
        return None
    if not lo.isascii() or not hi.isascii():
        return None
    m = _count(lo) if lo else 0
    top = _count(hi) if hi else m
    copies = top if hi or not comma else m + 1
    return max(copies, m, 1), max(m, top), end + 1


def _item_end(pattern: str, i: int) -> int:
    """Where the character, escape (``\\p{L}``, ``\\x{10FFFF}`` whole) or ``[:name:]`` at ``i`` ends."""
    if pattern[i] == "\\":
        i += 2
        if i < len(pattern) and pattern[i] == "{" and pattern[i - 1] in "pPxNuo":
            close = pattern.find("}", i)
            return close + 1 if close != -1 else len(pattern)
        return i
    if pattern.startswith("[:", i):
        close = pattern.find(":]", i + 2)
        if close != -1:
            return close + 2
    return i + 1


def pattern_cost(pattern: str) -> PatternCost:
    """:class:`PatternCost` of ``pattern`` from one pass over its text (no recursion, no engine):
    the syntax the regex engines share (groups, ``[...]`` classes, ``\\`` escapes, quantifiers)."""
    # per open group: [size of its finished items, size of its last item (a quantifier's operand)]
    stack: list[list[int]] = [[0, 0]]
    depth = largest_repeat = largest_class = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        top = stack[-1]
        if c == "(":
            stack.append([0, 1])
            depth = max(depth, len(stack) - 1)
            i += 1
            if pattern.startswith("?", i):  # (?: (?= (?! (?<= ...: the group's kind, no character
                i += 2 if i + 1 < n and pattern[i + 1] in ":=!<>" else 1
            continue
        if c == ")" and len(stack) > 1:
            inner = stack.pop()
            top = stack[-1]
            top[0] += top[1]
            top[1] = min(inner[0] + inner[1], _CAP)
            i += 1
            continue
        if c == "|":
            top[0] += top[1]
            top[1] = 0
            i += 1
            continue
        if c in "*+?":
            i += 1
            continue
        if c == "{":
            found = _interval(pattern, i)
            if found is not None:
                copies, count, i = found
                largest_repeat = max(largest_repeat, count)
                top[1] = min(top[1] * copies, _CAP)
                continue
        weight = 1
        if c == "\\":
            i = _item_end(pattern, i)
        elif c == "[":
            i += 1
            items = 0
            if i < n and pattern[i] == "^":
                i += 1
            first = True
            while i < n and (pattern[i] != "]" or first):
                first = False
                i = _item_end(pattern, i)
                if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
                    i = _item_end(pattern, i + 1)
                items += 1
            i += 1
            weight = max(items, 1)
            largest_class = max(largest_class, items)
        else:
            i += 1
        top[0] = min(top[0] + top[1], _CAP)
        top[1] = weight
    while len(stack) > 1:  # groups never closed: as if closed at the end
        inner = stack.pop()
        stack[-1][0] += stack[-1][1]
        stack[-1][1] = min(inner[0] + inner[1], _CAP)
    size = min(stack[0][0] + stack[0][1], _CAP)
    return PatternCost(size, depth, largest_repeat, largest_class)


def pattern_refusal(pattern: str, cost: PatternCost | None = None) -> str | None:
    """Why mtokspec will not compile ``pattern`` (the bound it passes, in a sentence), or None."""
    cost = cost or pattern_cost(pattern)
    if cost.depth > PATTERN_DEPTH:
        return (f"groups nested {cost.depth} deep, past the {PATTERN_DEPTH} levels mtokspec's pattern "
                "parsers follow")
    if cost.size > PATTERN_SIZE:
        size = f"{cost.size:,}" if cost.size < _CAP else "beyond counting"
        return (f"its compiled size is {size} (its characters and class items, times the counted "
                f"repeats around them), past mtokspec's bound of {PATTERN_SIZE:,}")
    return None

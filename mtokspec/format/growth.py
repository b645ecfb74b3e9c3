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
"""

from __future__ import annotations

from mtokspec.format import tree as t

__all__ = ["growth_steps", "amplifying_findings", "nested_quantifier", "MAX_EXPANSION"]

MAX_EXPANSION = 64
"""How many times its input a call's text may grow by default (the runtimes' bound,
:mod:`mtokspec.runtime.shared.bounds`)."""


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

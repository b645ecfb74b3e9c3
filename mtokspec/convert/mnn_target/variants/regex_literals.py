"""Regular expressions that are literal text, or runs of a set of characters, in literal terms.

MNN's ``Replace`` (normalizer and decoder) and its ``std::wregex`` path take plain strings; a HF
``Regex`` pattern can be carried exactly when it is a literal once unescaped (:func:`literal`) or a
run of one character set, ``X+`` / ``X{m,}`` (:func:`char_run`), which a chain of literal Replaces
rewrites (:func:`run_replaces`); a pattern that is one character class or a run of one
(:func:`class_pattern`: ``\\s+``, ``[\\p{L}\\p{N}]``, ``[^,;]+``) in terms of its characters and
one-letter properties.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mtokspec.runtime.hf.normalizers import WHITESPACE_STR
from mtokspec.format.growth import pattern_refusal
from mtokspec.runtime.shared.text import QUANTIFIER, REGEX_META, flatten_sets

__all__ = ["literal", "wregex_ranges", "CharRun", "char_run", "run_replaces", "COLLAPSE_PASSES", "escape", "ClassPattern",
           "class_pattern", "class_alternatives", "PROPERTIES", "wregex_pattern", "LETTER_CASES",
           "spell_letter_cases"]

COLLAPSE_PASSES = 20
"""Passes of ``ss -> s`` a run collapse writes: runs of up to 2**20 characters collapse exactly."""
TRIPLE_PASSES = 36
"""Passes of ``sss -> ss`` that bring a run of up to 2**20 characters (more than 3 * 2**19) down to
two: each pass takes a run of ``3q + r`` to ``2q + r``, 34 passes at most."""

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}
_CLASSES = {"s": WHITESPACE_STR}


def _atom(p: str, i: int) -> tuple[str | None, int]:
    """The characters one atom at ``p[i]`` stands for (a literal, an escape, ``\\s``), and the end."""
    c = p[i]
    if c == "\\":
        if i + 1 >= len(p):
            return None, i
        e = p[i + 1]
        if e in _CLASSES:
            return _CLASSES[e], i + 2
        if e in _ESCAPES:
            return _ESCAPES[e], i + 2
        if e == "x" and i + 4 <= len(p):
            try:
                return chr(int(p[i + 2:i + 4], 16)), i + 4
            except ValueError:
                return None, i
        if e == "u" and i + 6 <= len(p):
            try:
                return chr(int(p[i + 2:i + 6], 16)), i + 6
            except ValueError:
                return None, i
        if not e.isalnum():
            return e, i + 2
        return None, i
    if c in REGEX_META:
        return None, i
    return c, i + 1


def literal(pattern: str) -> str | None:
    """The text a pattern matches when it is a literal (escapes allowed), else None."""
    out, i = [], 0
    while i < len(pattern):
        chars, j = _atom(pattern, i)
        if chars is None or j == i or (len(chars) != 1):
            return None
        out.append(chars)
        i = j
    return "".join(out) or None


def _char_class(p: str, i: int) -> tuple[str | None, int]:
    """``[...]`` of literals, escapes and ``\\s`` (no negation, no ranges) at ``p[i]``."""
    assert p[i] == "["
    i += 1
    chars: list[str] = []
    if i < len(p) and p[i] == "^":
        return None, i
    while i < len(p) and p[i] != "]":
        if p[i] == "-" and chars and i + 1 < len(p) and p[i + 1] != "]":
            return None, i
        got, j = _atom(p, i) if p[i] not in "[" else (None, i)
        if got is None:
            return None, i
        chars.append(got)
        i = j
    if i >= len(p):
        return None, i
    return "".join(dict.fromkeys("".join(chars))), i + 1


@dataclass(frozen=True)
class CharRun:
    """A pattern ``X{minimum,}``: runs of characters of ``chars``, at least ``minimum`` long."""

    chars: str
    minimum: int


def char_run(pattern: str) -> CharRun | None:
    """The :class:`CharRun` a pattern is (``\\s+``, `` {2,}``, ``[ \\t]+``), else None."""
    if not pattern:
        return None
    if pattern[0] == "[":
        chars, i = _char_class(pattern, 0)
    else:
        chars, i = _atom(pattern, 0)
    if not chars or i == 0:
        return None
    rest = pattern[i:]
    if rest == "+":
        return CharRun(chars, 1)
    if rest.startswith("{") and rest.endswith(",}") and rest[1:-2].isdigit():
        return CharRun(chars, int(rest[1:-2]))
    return None


def run_replaces(run: CharRun, content: str) -> list[tuple[str, str]] | None:
    """Literal ``(pattern, content)`` steps, applied in order, equal to replacing every run of
    ``run`` by ``content`` for runs up to ``2**COLLAPSE_PASSES`` characters; None when no literal
    chain can (a minimum of 2 over several characters, a minimum above 2)."""
    chars = run.chars
    if run.minimum < 1 or run.minimum > 2 or (run.minimum == 2 and len(chars) != 1):
        return None
    s = " " if " " in chars else chars[0]
    steps = [(c, s) for c in chars if c != s]
    if run.minimum == 2 and content != s:
        # runs of two or more become content, a lone s stays: every run down to "ss", then "ss" -> content
        return [(s * 3, s * 2)] * TRIPLE_PASSES + [(s * 2, content)]
    steps += [(s + s, s)] * COLLAPSE_PASSES
    if content != s:
        steps.append((s, content))
    return steps


def escape(text: str) -> str:
    """``text`` as a regular expression matching it literally (both of MNN's engines)."""
    return "".join("\\" + c if c in REGEX_META else c for c in text)


PROPERTIES = "LMNPS"
"""The ``\\p{X}`` a class may hold: one-letter general categories that MNN's own engine (which reads a
property by its first letter and folds every non-ASCII character to its category's marker) reads as
the whole category (``Z`` is Zs only there, ``C`` no marker)."""
_RANGE_LIMIT = 4096


@dataclass(frozen=True)
class ClassPattern:
    """A pattern ``C`` or ``C+`` of one character class: its literal characters (``\\s`` written out
    as the White_Space characters, which is Oniguruma's ``\\s``), its one-letter ``properties``,
    whether ``C`` is ``negated`` (``[^...]``) and whether the pattern is a ``run`` (``C+``)."""

    chars: str
    properties: str
    negated: bool
    run: bool


def _property(p: str, i: int) -> tuple[str | None, int]:
    """``\\p{X}`` at ``p[i]`` with ``X`` in :data:`PROPERTIES`, and the end."""
    if p.startswith("\\p{", i) and i + 4 < len(p) and p[i + 4] == "}" and p[i + 3] in PROPERTIES:
        return p[i + 3], i + 5
    return None, i


def _bracket(p: str, i: int) -> tuple[ClassPattern | None, int]:
    """``[...]`` / ``[^...]`` of literals, escapes, ranges, ``\\s`` and ``\\p{X}`` at ``p[i]``."""
    i += 1
    negated = i < len(p) and p[i] == "^"
    i += negated
    chars: list[str] = []
    props: list[str] = []
    while i < len(p) and p[i] != "]":
        if p[i] == "[" or p.startswith("&&", i):
            return None, i  # Oniguruma's nested sets (see flatten_sets) and intersections
        prop, j = _property(p, i)
        if prop is not None:
            props.append(prop)
            i = j
            continue
        if p[i] == "\\":
            got, j = _atom(p, i)
        else:
            got, j = p[i], i + 1
        if got is None or j == i:
            return None, i
        if len(got) == 1 and p.startswith("-", j) and j + 1 < len(p) and p[j + 1] != "]":
            end, k = _atom(p, j + 1) if p[j + 1] == "\\" else (p[j + 1], j + 2)
            if end is None or len(end) != 1 or not ord(got) <= ord(end) < ord(got) + _RANGE_LIMIT:
                return None, i
            got, j = "".join(map(chr, range(ord(got), ord(end) + 1))), k
        chars.append(got)
        i = j
    if i >= len(p) or not (chars or props):
        return None, i
    return ClassPattern("".join(dict.fromkeys("".join(chars))), "".join(dict.fromkeys(props)), negated, False), i + 1


def class_pattern(pattern: str) -> ClassPattern | None:
    """The :class:`ClassPattern` a HF (Oniguruma) pattern is (nested sets joined), else None."""
    pattern = flatten_sets(pattern)
    if not pattern:
        return None
    if pattern[0] == "[":
        got, i = _bracket(pattern, 0)
    else:
        prop, i = _property(pattern, 0)
        if prop is not None:
            got = ClassPattern("", prop, False, False)
        else:
            chars, i = _atom(pattern, 0)
            got = ClassPattern(chars, "", False, False) if chars else None
    if got is None or i == 0 or pattern[i:] not in ("", "+"):
        return None
    return ClassPattern(got.chars, got.properties, got.negated, pattern[i:] == "+")


def class_alternatives(pattern: str) -> list[ClassPattern] | None:
    """The class patterns of ``A|B|...`` when every top-level alternative is one (else None)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        elif c in "()" and not depth:
            return None
        elif c == "|" and not depth:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    got = [class_pattern(p) for p in parts]
    return None if any(g is None for g in got) else [g for g in got if g is not None]


def _wregex_char(c: str) -> str:
    """One character as ``std::wregex`` reads it literally, inside or outside a class."""
    if c in REGEX_META or c in "-/":
        return "\\" + c
    return f"\\x{ord(c):02x}" if ord(c) < 0x20 or c == "\x7f" else c


def _wregex_class(chars: str, negated: bool) -> str:
    """A class of ``chars`` (runs of three or more code points as ranges) for ``std::wregex``."""
    cps = sorted(set(map(ord, chars)))
    runs, k = [], 0
    while k < len(cps):
        j = k
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        runs.append((cps[k], cps[j]))
        k = j + 1
    return wregex_ranges(runs, negated)


def wregex_ranges(ranges: Iterable[tuple[int, int]], negated: bool = False) -> str:
    """A class of the code points of ``(first, last)`` ranges (sorted, apart) for ``std::wregex``:
    runs of three or more as ranges."""
    parts = []
    for a, b in ranges:
        if b - a >= 2:
            parts.append(_wregex_char(chr(a)) + "-" + _wregex_char(chr(b)))
        else:
            parts.extend(_wregex_char(chr(c)) for c in range(a, b + 1))
    return "[" + ("^" if negated else "") + "".join(parts) + "]"


def wregex_pattern(pattern: str) -> str | None:
    """A HF (Oniguruma) pattern spelled for MNN's ``std::wregex`` path with the same matches, or None.

    It takes literals, escapes, ``.``, ``\\s``/``\\S``, classes (ranges, negation, nested literal
    sets), groups, alternation and greedy or lazy quantifiers; the classes and ``\\s`` are written
    as their characters (``.`` as ``[^\\n]``, Oniguruma's), groups non-capturing.  None for anything
    else (properties, anchors, look-around, back-references, flags), for a pattern past the bounds
    mtokspec compiles (:func:`~mtokspec.format.growth.pattern_refusal`), for a repeated group holding
    a choice or a repeat (on which libstdc++'s backtracking search can take exponential time), for
    a pattern that matches the empty string, and for one with no character past ASCII (MNN runs
    those on its own engine)."""
    import regex

    if pattern_refusal(pattern) is not None:
        return None  # past the bounds of a pattern mtokspec compiles
    pattern = flatten_sets(pattern)
    out: list[str] = []
    branching = [False]  # per open group: whether it holds a quantifier or an alternation
    i, quantifiable, closed_branching = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                return None
            i += 3 if pattern.startswith("(?:", i) else 1
            out.append("(?:")
            branching.append(False)
            quantifiable = False
            continue
        if c in ")|":
            if c == ")" and len(branching) == 1:
                return None
            if c == ")":
                closed_branching = branching.pop()
                branching[-1] |= closed_branching
            else:
                branching[-1] = True
            out.append(c)
            i, quantifiable = i + 1, c == ")"
            continue
        if c in "?*+{":
            m = QUANTIFIER.match(pattern, i)
            if m is None or not quantifiable or pattern.startswith("+", m.end()):
                return None
            if out[-1] == ")" and closed_branching:
                return None  # a repeated group of choices: libstdc++'s search is exponential there
            out.append(m.group())
            branching[-1] = True
            i, quantifiable = m.end(), False
            continue
        if c == "[":
            cp, j = _bracket(pattern, i)
            if cp is None or cp.properties:
                return None
            piece = _wregex_class(cp.chars, cp.negated)
        elif c == ".":
            piece, j = "[^\\n]", i + 1
        elif pattern.startswith(("\\s", "\\S"), i):
            piece, j = _wregex_class(WHITESPACE_STR, pattern[i + 1] == "S"), i + 2
        elif c in "^$":
            return None
        else:
            chars, j = _atom(pattern, i)
            if chars is None or j == i or len(chars) != 1:
                return None
            piece = _wregex_char(chars)
        out.append(piece)
        i, quantifiable = j, True
    spelled = "".join(out)
    if len(branching) > 1 or spelled.isascii() or pattern_refusal(spelled) is not None:
        return None
    try:
        return None if regex.fullmatch(spelled, "") is not None else spelled
    except (regex.error, RecursionError, OverflowError, MemoryError):
        return None


LETTER_CASES = {"Lu": "A-Z", "Ll": "a-z", "Lt": "", "Lm": "", "Lo": ""}
"""The ASCII letters of each two-letter letter property (Lt, Lm and Lo have none)."""
NON_ASCII_LETTER = "\u00e9"
"""A letter past ASCII: in a pattern on MNN's own engine it stands for every such letter."""


def spell_letter_cases(pattern: str) -> str | None:
    """A pattern for MNN's own engine (it has a ``\\p{..}``) whose letter-case properties
    (``\\p{Lu}``, ``\\p{Ll}``, ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``, which that engine reads as
    ``\\p{L}``) are spelled as their ASCII letters and a letter past ASCII: exact on ASCII text,
    every letter past ASCII still of every case.  None: nothing to spell, a negated one
    (``\\P{Lu}``), or a pattern left without a ``\\p{..}`` (it would go to ``std::wregex``)."""
    out: list[str] = []
    i, in_class, changed, stand_in = 0, False, False, False
    while i < len(pattern):
        c = pattern[i]
        prop = pattern[i + 3:i + 5] if pattern.startswith(("\\p{", "\\P{"), i) and pattern[i + 5:i + 6] == "}" else ""
        if prop in LETTER_CASES:
            if pattern[i + 1] == "P":
                return None
            if in_class:
                out.append(LETTER_CASES[prop] + ("" if stand_in else NON_ASCII_LETTER))
                stand_in = True
            else:
                out.append("[" + LETTER_CASES[prop] + NON_ASCII_LETTER + "]")
            i, changed = i + 6, True
            continue
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class, stand_in = True, False
        elif c == "]" and in_class and not (out and out[-1] in ("[", "[^")):
            in_class = False
        out.append(c + ("^" if c == "[" and pattern.startswith("^", i + 1) else ""))
        i += 2 if c == "[" and pattern.startswith("^", i + 1) else 1
    spelled = "".join(out)
    return spelled if changed and ("\\p{" in spelled or "\\P{" in spelled) else None

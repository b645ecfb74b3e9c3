"""MNN's own pre-tokenizer regular expressions (``Unicode::regex_scanner`` / ``regex_split``).

MNN does not run a Unicode regex engine.  It folds the text to one byte per character (ASCII as
is, every other character to a class marker: letter, number, white space, mark, punctuation,
symbol, other) and matches a pattern compiled to sets of those bytes with a small backtracking
matcher.  Its behaviour differs from a real regex engine in ways this module keeps exactly:

- a top-level alternative using ``\\b``, ``\\B``, ``\\A``, ``\\Z``, a back-reference, a look-ahead
  ``(?=``, a look-behind or a named group is dropped (all dropped: the GPT-2 pattern is used);
- a group repeats by its first alternative that matches (no backtracking into a group), and a
  group that matches the empty string counts as not matching;
- lazy quantifiers are greedy; ``\\p{..}`` looks only at the first letter of the property; a
  non-ASCII literal stands for its whole class (``é`` matches any letter that is not ASCII);
- a pattern holding non-ASCII bytes and no ``\\p{``/``\\P{`` goes to C++ ``std::wregex``
  (ECMAScript) instead: :func:`uses_wregex`.  Its matches (empty ones too, which cut the text)
  are Python's ``re``'s; the work libstdc++ would do is counted by :mod:`.wregex`, which refuses
  where MNN would hang or crash.  The rest of that engine is approximated with Python's ``re``
  (ASCII classes, as in the C locale); the lint names such patterns.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import regex

from mtokspec import speedups
from mtokspec.runtime.shared.bounds import REGEX_STEPS, Budget, current, pattern_refusal, regex_steps, remember
from mtokspec.runtime.mnn import unicode as U, wregex, wregex_compile
from mtokspec.runtime.mnn.regex_compile import CS, MAX_FRAMES, NEG_LA, check_depth, compile_pattern, frames
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.errors import TokenizerError, UndefinedInMnn


# MNN's matcher backtracks without bound.  The scans of one call together may take
# mtokspec.runtime.shared.bounds.REGEX_STEPS plus REGEX_STEPS_PER_BYTE per byte of the call's input, and
# the attempt at one position at most REGEX_STEPS (a second or two of work; a pattern a tokenizer
# uses takes a few steps per byte).  The counter is the call's (never shared between calls or
# threads).


class _TooSlow(Exception):
    pass


def _try(text: bytes, n: int, pos: int, alts, st: Budget) -> int:
    for branch in alts:
        r = _match(text, n, pos, branch, 0, st)
        if r >= 0:
            return r
    return -1


def _try_at(text: bytes, n: int, pos: int, alts, pattern: bytes, st: Budget) -> int:
    """``try_branches`` at one position, within the call's step budget."""
    st.floor = max(0, st.steps - REGEX_STEPS)
    try:
        return _try(text, n, pos, alts, st)
    except _TooSlow:
        raise _refused(pattern, st) from None
    except RecursionError:  # compile_pattern bounds the nesting; a caller deep in its own stack
        raise TokenizerError(f"pattern {pattern[:60]!r}: MNN's matcher nests deeper here than Python's stack "
                             "follows from this caller") from None


def _refused(pattern: bytes, st: Budget) -> UndefinedInMnn:
    return UndefinedInMnn(
        f"pattern {pattern[:60]!r}: MNN's regex engine backtracks catastrophically here (more than "
        f"{regex_steps(st.n)} steps for an input of {st.n} bytes or {REGEX_STEPS} "
        "at one place, each character a class reads counted); MNN would run for seconds to hours")


def _spans(folded: bytes, pattern: bytes, st: Budget) -> list[tuple[int, int]]:
    """The matches MNN's scan finds in the folded text: at each position from the start, the first
    alternative that matches; a match that does not advance moves one on.  ``(start, end)`` of each
    match that advances, in order.  The compiled matcher runs the same steps when it is present."""
    prog = _program(pattern)
    if prog is not None:
        found = prog[0].mnn_regex_matches(prog[1], folded, st.steps, REGEX_STEPS)
        if found is None:
            raise _refused(pattern, st)
        spans, st.steps = found
        return spans
    alts = compile_pattern(pattern)
    spans = []
    pos, n = 0, len(folded)
    while pos < n:
        end = _try_at(folded, n, pos, alts, pattern, st)
        if end > pos:
            spans.append((pos, end))
            pos = end
        else:
            pos += 1
    return spans


_programs: dict[bytes, Any] = {}


def _as_tuples(alts) -> tuple:
    return tuple(tuple((node.kind, node.cs.to_bytes(32, "little"), node.qmin, node.qmax,
                        _as_tuples(node.alts) if node.kind != CS else ()) for node in branch) for branch in alts)


def _program(pattern: bytes):
    """``(module, program)`` of the compiled matcher for ``pattern``, or None (not built, turned
    off, or a pattern that recurses too deep for it)."""
    sp = speedups.module()
    if sp is None:
        return None
    prog = _programs.get(pattern)
    if prog is None:
        alts = compile_pattern(pattern)
        try:
            prog = sp.mnn_regex_program(_as_tuples(alts)) if frames(alts) <= MAX_FRAMES else False
        except RecursionError:
            prog = False
        remember(_programs, pattern, prog)
    return None if prog is False else (sp, prog)


def _match(text: bytes, n: int, pos: int, nodes, idx: int, st: Budget) -> int:
    st.steps -= 1
    if st.steps < st.floor:
        raise _TooSlow
    if idx >= len(nodes):
        return pos
    node = nodes[idx]
    if node.kind == NEG_LA:
        if _try(text, n, pos, node.alts, st) >= 0:
            return -1
        return _match(text, n, pos, nodes, idx + 1, st)
    if node.kind == CS:
        qmax = n - pos if node.qmax < 0 else node.qmax
        cs = node.cs
        count = 0
        while count < qmax and pos + count < n and cs >> text[pos + count] & 1:
            count += 1
        if count:  # each character the class read is work: the call's steps, not the place's
            st.steps -= count
            floor = st.floor - count
            st.floor = floor if floor > 0 else 0
            if st.steps < st.floor:
                raise _TooSlow
        for c in range(count, node.qmin - 1, -1):
            r = _match(text, n, pos + c, nodes, idx + 1, st)
            if r >= 0:
                return r
        return -1
    qmax = 10000 if node.qmax < 0 else node.qmax
    positions = [pos]
    p = pos
    reps = 0
    while reps < qmax:
        r = _try(text, n, p, node.alts, st)
        if r <= p:
            break
        p = r
        reps += 1
        positions.append(p)
    for c in range(reps, node.qmin - 1, -1):
        r = _match(text, n, positions[c], nodes, idx + 1, st)
        if r >= 0:
            return r
    return -1


def mnn_refusal(pattern: bytes) -> str | None:
    """Why MNN throws or crashes on ``pattern`` whatever the text (an automaton past libstdc++'s
    limit, a pattern ``std::wregex`` rejects, a repeat count ``std::stoi`` rejects, groups nested
    past its stack): the ``UndefinedInMnn`` message its first encode raises, or None."""
    try:
        if uses_wregex(pattern):
            _wregex(pattern)
        else:
            compile_pattern(pattern)
    except UndefinedInMnn as e:
        return str(e)
    except TokenizerError:
        return None  # past what mtokspec follows, not MNN's own refusal
    return None


def uses_wregex(pattern: bytes) -> bool:
    """MNN sends a pattern with non-ASCII bytes and no ``\\p{``/``\\P{`` to ``std::wregex``."""
    return not pattern.isascii() and b"\\p{" not in pattern and b"\\P{" not in pattern


class _FoldTable(dict):
    """``str.translate`` table: a character to its folded byte (as a one-character str)."""

    def __missing__(self, cp: int) -> str:
        f = self[cp] = chr(U.fold(cp))
        return f


class _LengthTable(dict):
    """``str.translate`` table: a character to its UTF-8 length (as a one-character str)."""

    def __missing__(self, cp: int) -> str:
        n = self[cp] = chr(1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4)
        return n


_FOLD_TABLE = _FoldTable()
_LENGTH_TABLE = _LengthTable()


def _fold_text(text: bytes) -> tuple[bytes, list[int]]:
    """The text folded to one byte per character as MNN reads its characters, and the byte offset
    of each character (and the end)."""
    if text.isascii():
        return text, list(range(len(text) + 1))
    try:
        s = text.decode("utf-8")  # valid UTF-8: MNN's decoder reads the same characters
    except UnicodeDecodeError:
        folded = bytearray()
        offsets = []
        for off, _, cp in U.chars(text):
            offsets.append(off)
            folded.append(U.fold(cp))
        offsets.append(len(text))
        return bytes(folded), offsets
    lengths = s.translate(_LENGTH_TABLE).encode("latin-1")
    return s.translate(_FOLD_TABLE).encode("latin-1"), list(accumulate(lengths, initial=0))


_wregex_cache: dict[bytes, Any] = {}


def _wregex(pattern: bytes):
    """The pattern as ``std::wregex`` (ECMAScript, C locale) is approximated: Python's ``re``
    grammar and matching, run by the ``regex`` module (the same matches) for its time-out; and
    the automaton libstdc++ would search, whose work :func:`wregex.check` counts (or None)."""
    found = _wregex_cache.get(pattern)
    if found is None:
        source = pattern.decode("utf-8", "replace")
        check_depth(pattern)  # the readers below recurse
        tree = wregex_compile.parse(source)
        states = wregex_compile.states(tree) if tree is not None else 0
        if states > wregex_compile.STATE_LIMIT:
            raise UndefinedInMnn(
                f"pattern {pattern[:60]!r}: std::wregex's automaton would have {states:,} states, past libstdc++'s "
                f"{wregex_compile.STATE_LIMIT:,}: it throws regex_error (error_space), so MNN's encode throws")
        why = pattern_refusal(source)
        if why is not None:
            raise TokenizerError(f"pattern {pattern[:60]!r}: {why}")
        try:
            rx = re.compile(source, re.ASCII)
        except re.error as e:
            raise UndefinedInMnn(f"pattern {pattern[:60]!r}: std::wregex rejects it ({e}), so MNN's encode throws") from None
        except (RecursionError, OverflowError, MemoryError) as e:
            raise TokenizerError(f"pattern {pattern[:60]!r}: mtokspec cannot compile it ({type(e).__name__})") from None
        try:
            rx = regex.compile(source, regex.ASCII | regex.VERSION0)
        except (regex.error, ValueError, OverflowError, RecursionError, MemoryError):
            pass  # re's own engine, which has no time-out
        found = remember(_wregex_cache, pattern, (rx, wregex_compile.compile(source, tree) if tree is not None else None))
    return found


def _wregex_matches(text: bytes, pattern: bytes) -> list[tuple[int, int]]:
    cps = U.chars(text)
    s = "".join(chr(cp) for _, _, cp in cps)
    offsets = [off for off, _, _ in cps] + [len(text)]
    rx, program = _wregex(pattern)
    b = current(len(text))
    if program is not None:  # MNN's own search would hang or crash here: refused before ours runs
        b.steps -= wregex.check(program, s, max(b.steps, 0), pattern)[0]
    try:
        if isinstance(rx, re.Pattern):
            found = list(rx.finditer(s))
        else:
            found = b.regex(lambda timeout: list(rx.finditer(s, timeout=timeout)))
    except TimeoutError:
        raise UndefinedInMnn(
            f"pattern {pattern[:60]!r}: std::wregex backtracks catastrophically here (over the call's "
            f"{b.regex_seconds():.1f} s of CPU for an input of {b.n} bytes); MNN would run for minutes or hours, "
            "or overflow its stack") from None
    # empty matches too: MNN's split cuts the text there
    return [(offsets[m.start()], offsets[m.end()]) for m in found]


def scan(text: bytes, pattern: bytes) -> list[bytes]:
    """``regex_scanner``: matches, and each character no alternative matches, in order."""
    if not text:
        return []
    out = []
    if uses_wregex(pattern):
        prev = 0
        for a, b in _wregex_matches(text, pattern):
            while prev < a:
                _, r = U.utf8_decode(text, prev)
                out.append(text[prev:prev + r])
                prev += r
            out.append(text[a:b])  # an empty match too, as MNN's scanner keeps it
            prev = b
        while prev < len(text):
            _, r = U.utf8_decode(text, prev)
            out.append(text[prev:prev + r])
            prev += r
        return out
    sp = stages()
    if sp is not None:  # the compiled fold and cut (mnn_stages.c): the loop below
        return sp.mnn_scan_pieces(text, _spans(sp.mnn_fold(text), pattern, current(len(text))))
    folded, offsets = _fold_text(text)
    prev = 0
    for a, b in _spans(folded, pattern, current(len(text))):
        out.extend(text[offsets[k]:offsets[k + 1]] for k in range(prev, a))
        out.append(text[offsets[a]:offsets[b]])
        prev = b
    out.extend(text[offsets[k]:offsets[k + 1]] for k in range(prev, len(folded)))
    return out


_BEHAVIORS = {"Removed": 0, "MergedWithPrevious": 1, "Isolated": 2}  # mnn_split_pieces's codes (else Isolated)


def scan_compiled(pattern: bytes):
    """``(scan_mapped, scan_counted)``: :func:`scan` of a text under ``pattern`` with each piece
    byte-level mapped, in one compiled call (fold, matcher, cut and map); None when the compiled
    module does not run this pattern (then map :func:`scan`'s pieces).  ``scan_mapped(text)``
    spends the running call's step budget; ``scan_counted(text, steps, n) -> (pieces, steps left)``
    spends ``steps`` given by a caller that keeps the count itself (``n``: the call's input length,
    for the refusal's message)."""
    sp = stages()
    prog = None if sp is None or uses_wregex(pattern) else _program(pattern)
    if prog is None:
        return None
    fused, program = sp.mnn_scan_byte_level, prog[1]

    def scan_counted(text: bytes, steps: int, n: int) -> tuple[list[bytes], int]:
        found = fused(text, program, steps, REGEX_STEPS)
        if found is None:
            raise _refused(pattern, Budget(n))
        return found

    def scan_mapped(text: bytes) -> list[bytes]:
        st = current(len(text))
        pieces, st.steps = scan_counted(text, st.steps, st.n)
        return pieces

    return scan_mapped, scan_counted


def split(text: bytes, pattern: bytes, invert: bool, behavior: str) -> list[bytes]:
    """``regex_split``: the text cut at the matches, then ``behavior`` applied."""
    if not text:
        return []
    segs: list[tuple[bytes, bool]] = []
    if uses_wregex(pattern):
        prev = 0
        for a, b in _wregex_matches(text, pattern):
            if a > prev:
                segs.append((text[prev:a], False))
            segs.append((text[a:b], True))
            prev = b
        if prev < len(text):
            segs.append((text[prev:], False))
    else:
        sp = stages()
        if sp is not None:  # the compiled fold and cut (mnn_stages.c): the loop below
            spans = _spans(sp.mnn_fold(text), pattern, current(len(text)))
            return sp.mnn_split_pieces(text, spans, invert, _BEHAVIORS.get(behavior, 2))
        folded, offsets = _fold_text(text)
        prev = 0
        for a, b in _spans(folded, pattern, current(len(text))):
            if a > prev:
                segs.append((text[offsets[prev]:offsets[a]], False))
            segs.append((text[offsets[a]:offsets[b]], True))
            prev = b
        if prev < len(folded):
            segs.append((text[offsets[prev]:], False))
    if invert:
        segs = [(s, not m) for s, m in segs]
    out: list[bytes] = []
    if behavior == "Removed":
        return [s for s, m in segs if not m and s]
    if behavior == "MergedWithPrevious":
        for s, m in segs:
            if m and out:
                out[-1] += s
            elif s:
                out.append(s)
        return out
    return [s for s, _ in segs if s]  # Isolated

"""The work MNN's ``std::wregex`` path would do: libstdc++'s backtracking executor, emulated.

MNN sends a pattern with non-ASCII bytes and no ``\\p{`` to ``std::wregex`` (ECMAScript), which
libstdc++ runs with its depth-first executor: a recursive search over the pattern's automaton with
no memory of what it tried, so a pattern that repeats a group holding a quantifier (``(a+)+é``)
takes 2^n steps on ``n`` characters that almost match, and every character a match attempt consumes
is one more level of recursion, so a long match overflows the stack.

:func:`check` replays the searches ``std::wsregex_iterator`` makes over a text on an automaton
built as libstdc++'s compiler builds it (``regex_compiler.tcc``: repeats with ``_M_rep_count``'s
two-visit rule, alternatives left first, look-aheads as sub-searches) and counts the states it
visits.  It raises :class:`~mtokspec.errors.UndefinedInMnn` when the count passes the call's step
budget (where MNN would run for seconds to hours) or a match attempt consumes more than
:data:`STACK_CHARACTERS` characters (where MNN's search crashes on an 8 MiB stack).  The matches
themselves come from :mod:`mtokspec.runtime.mnn.regex`; a pattern this module cannot read
(back-references, rare escapes) is not checked (:func:`.wregex_compile.compile` gives ``None``).
"""

from __future__ import annotations

from mtokspec.errors import UndefinedInMnn
from mtokspec.runtime.mnn.wregex_compile import (
    ACCEPT, ALT, DUMMY, LINE_BEGIN, LINE_END, MATCH, REPEAT, WORD, Program,
)

__all__ = ["check", "STACK_CHARACTERS"]

# measured: MNN's mnn_tok (g++ -O2, libstdc++ 12) over "[^é]+" and "(?:a|b)*é" answers on 26,171
# characters and crashes (SIGSEGV) from 26,523 on an 8 MiB stack; fewer on a smaller stack
STACK_CHARACTERS = 26_000


def _is_word(cp: int) -> bool:
    return cp == 0x5F or 0x30 <= cp <= 0x39 or 0x41 <= cp <= 0x5A or 0x61 <= cp <= 0x7A


class _Search:
    """libstdc++'s ``_Executor`` in DFS mode (``_M_dfs``), as a loop with an explicit stack.

    ``steps`` counts the states visited (every ``_M_dfs`` call); ``limit`` is where it stops."""

    __slots__ = ("prog", "text", "n", "steps", "limit", "rep", "memo")

    def __init__(self, prog: Program, text: list[int], limit: int):
        self.prog = prog
        self.text = text
        self.n = len(text)
        self.steps = 0
        self.limit = limit
        self.rep: dict[int, tuple[int, int]] = {}
        self.memo: list[dict[int, bool] | None] = [None] * len(prog.op)

    def _matches(self, s: int, cp: int) -> bool:
        pred = self.prog.data[s]
        if isinstance(pred, int):
            return cp == pred
        self.steps += self.prog.cost[s]  # the class's comparisons, as libstdc++ makes them each time
        memo = self.memo[s]
        if memo is None:
            memo = self.memo[s] = {}
        hit = memo.get(cp)
        if hit is None:
            hit = memo[cp] = cp in pred
        return hit

    def run(self, start_state: int, pos: int, not_null: bool) -> int:
        """A prefix search from ``pos``: the end of the first match the executor accepts, or -1."""
        prog = self.prog
        op, nxt, alt = prog.op, prog.next, prog.alt
        text, n = self.text, self.n
        rep = self.rep
        origin = pos
        stack: list[tuple] = [(0, start_state, pos)]
        while stack:
            entry = stack.pop()
            if entry[0] == 1:  # leaving a repeat's body: _M_rep_count restored
                if entry[2] is None:
                    rep.pop(entry[1], None)
                else:
                    rep[entry[1]] = entry[2]
                continue
            if entry[0] == 2:  # a lazy repeat's "once more", after its exit failed
                s, pos = entry[1], entry[2]
                if not self._once_more(stack, s, pos):
                    continue
                s = alt[s]
            else:
                s, pos = entry[1], entry[2]
            while True:
                self.steps += 1
                if self.steps > self.limit:
                    raise _OverBudget
                o = op[s]
                if o == MATCH:
                    if pos < n and self._matches(s, text[pos]):
                        pos += 1
                        if pos - origin > STACK_CHARACTERS:
                            raise _TooDeep
                        s = nxt[s]
                        continue
                    break
                if o == DUMMY:
                    s = nxt[s]
                elif o == ALT:
                    stack.append((0, nxt[s], pos))
                    s = alt[s]
                elif o == REPEAT:
                    if prog.data[s]:  # lazy: the exit first
                        stack.append((2, s, pos))
                        s = nxt[s]
                    else:
                        stack.append((0, nxt[s], pos))
                        if self._once_more(stack, s, pos):
                            s = alt[s]
                        else:
                            break
                elif o == ACCEPT:
                    if not_null and pos == origin:
                        break
                    return pos
                elif o == LINE_BEGIN:
                    if pos != 0:
                        break
                    s = nxt[s]
                elif o == LINE_END:
                    if pos != n:
                        break
                    s = nxt[s]
                elif o == WORD:
                    before = pos > 0 and _is_word(text[pos - 1])
                    after = pos < n and _is_word(text[pos])
                    if (before != after) == prog.data[s]:
                        break
                    s = nxt[s]
                else:  # LOOKAHEAD: a sub-executor from here, with its own repeat counts
                    sub_start, neg = prog.data[s]
                    saved, self.rep = self.rep, {}
                    found = self.run(sub_start, pos, False) != -1
                    self.rep = rep = saved
                    if found == neg:
                        break
                    s = nxt[s]
        return -1

    def _once_more(self, stack: list, s: int, pos: int) -> bool:
        """``_M_rep_once_more``: enter the body at most twice at one position."""
        count = self.rep.get(s)
        if count is None or count[0] != pos:
            stack.append((1, s, count))
            self.rep[s] = (pos, 1)
            return True
        if count[1] < 2:
            stack.append((1, s, count))
            self.rep[s] = (pos, 2)
            return True
        return False


class _OverBudget(Exception):
    pass


class _TooDeep(Exception):
    pass


def check(prog: Program, text: str, steps: int, pattern: bytes) -> tuple[int, list[tuple[int, int]]]:
    """Replay ``std::wsregex_iterator``'s searches of ``text``: the steps they took (at most
    ``steps``) and the matches found (character offsets).  ``UndefinedInMnn`` where MNN would need
    more steps or overflow its stack."""
    cps = [ord(c) for c in text]
    spans: list[tuple[int, int]] = []
    search = _Search(prog, cps, steps)
    n = len(cps)
    pos = 0
    not_null = False
    try:
        while pos <= n:
            end = -1
            start = pos
            while start <= n:
                end = search.run(prog.start, start, not_null)
                if end != -1 or not_null:
                    break
                start += 1
            if not_null and end == -1:  # after an empty match: the same place, then one on
                not_null = False
                pos += 1
                continue
            if end == -1:
                break
            spans.append((start, end))
            not_null = end == start
            pos = end
    except _OverBudget:
        raise UndefinedInMnn(
            f"pattern {pattern[:60]!r}: std::wregex backtracks catastrophically here (past {steps} steps of "
            "libstdc++'s depth-first search for this call); MNN would run for seconds to hours") from None
    except _TooDeep:
        raise UndefinedInMnn(
            f"pattern {pattern[:60]!r}: a std::wregex match attempt here runs past {STACK_CHARACTERS} characters, "
            "one level of recursion each: MNN's search overflows an 8 MiB stack (SIGSEGV)") from None
    return search.steps, spans

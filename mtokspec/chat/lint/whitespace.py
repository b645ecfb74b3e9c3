"""The text each engine keeps between tags: jinja2's lexer for transformers, a re-implementation of
MNN's for MNN (the only part of MNN's engine modelled here)."""

from __future__ import annotations

import re

_NEWLINES = re.compile(r"\r\n|\r|\n")
_BEGIN = {"variable_begin", "block_begin", "comment_begin", "raw_begin"}


def jinja_segments(tokens: list[tuple[int, str, str]]) -> list[tuple[int, int, str]]:
    """The text transformers renders between consecutive tags, with its line (jinja2's lexer,
    trim_blocks + lstrip_blocks, newlines normalised, the template's final newline dropped)."""
    segs: list[tuple[int, int, str]] = []
    text, line = "", 1
    for lineno, kind, value in tokens:
        if kind == "data":
            if not text:
                line = lineno
            text += _NEWLINES.sub("\n", value)
        elif kind in _BEGIN:
            segs.append((line if text else lineno, lineno, text))
            text, line = "", lineno
    if text.endswith("\n"):
        text = text[:-1]  # keep_trailing_newline=False
    segs.append((line, line + text.count("\n"), text))
    return segs


def mnn_segments(src: str) -> list[str]:
    """The text MNN's Lexer::tokenize keeps between consecutive tags (jinja.hpp:315-466)."""
    segs: list[str] = []
    i, n = 0, len(src)
    state = "text"
    trim_next = False
    tail_added = False
    ws = " \n\r\t"
    # the next "{{", "{%", "{#" at or after i, each searched again only once i passed it (so the
    # scan is one pass however many tags there are)
    opens = {1: "{{", 2: "{%", 3: "{#"}
    ahead = {k: -1 for k in opens}
    while i < n:
        if state == "text":
            for k, mark in opens.items():
                if ahead[k] != n and ahead[k] < i:
                    p = src.find(mark, i)
                    ahead[k] = n if p == -1 else p
            found = [(p, k) for k, p in ahead.items() if p != n]
            if not found:
                text = src[i:]
                if trim_next:
                    text, trim_next = text.lstrip(ws), False
                segs.append(text)
                tail_added = True
                break
            nxt, kind = min(found)
            text = src[i:nxt]
            if trim_next:
                text, trim_next = text.lstrip(ws), False
            trim_prev = nxt + 3 <= n and src[nxt + 2] == "-"
            if trim_prev:
                text = text.rstrip(ws)
            elif kind == 2:
                start = text.rfind("\n") + 1
                if len(text) > start and all(c in " \t" for c in text[start:]):
                    text = text[:start]
            segs.append(text)
            i = nxt + 2 + (1 if trim_prev else 0)
            if kind == 3:
                while i < n:
                    if src.startswith("#}", i):
                        i += 2
                        break
                    if src.startswith("-#}", i):
                        i += 3
                        trim_next = True
                        break
                    i += 1
            else:
                state = "expr" if kind == 1 else "block"
        else:
            while i < n and src[i] in " \t\n\v\f\r":
                i += 1
            if i >= n:
                break
            end = "}}" if state == "expr" else "%}"
            if src.startswith("-" + end, i):
                i, state, trim_next = i + 3, "text", True
                continue
            if src.startswith(end, i):
                i, state = i + 2, "text"
                if end == "%}" and i < n and src[i] == "\n":
                    i += 1  # trim_blocks
                continue
            c = src[i]
            if c.isascii() and (c.isalpha() or c == "_"):
                while i < n and src[i].isascii() and (src[i].isalnum() or src[i] == "_"):
                    i += 1
            elif c.isascii() and c.isdigit():
                while i < n and src[i].isascii() and src[i].isdigit():
                    i += 1
            elif c in "'\"":
                i += 1
                while i < n and src[i] != c:
                    i += 2 if src[i] == "\\" and i + 1 < n else 1
                if i < n:
                    i += 1
            elif src.startswith(("==", "!=", "<=", ">="), i):
                i += 2
            else:
                i += 1
    if not tail_added:
        segs.append("")  # the text after the last tag: none
    return segs

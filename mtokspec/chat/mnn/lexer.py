"""MNN's Jinja lexer (``jinja.hpp``, ``class Lexer``), byte for byte.

White-space control as MNN does it: ``{{-``/``{%-``/``{#-`` strip the white space (`` \\n\\r\\t``)
before the tag, ``-}}``/``-%}``/``-#}`` the white space after it; ``%}`` drops one ``\\n`` right
after it (trim_blocks) and the spaces and tabs after the last newline of the text before a
``{%`` go when nothing else follows that newline, even mid-line (lstrip_blocks).  Comments get
neither.  Inside tags: identifiers ``[A-Za-z_][A-Za-z0-9_]*``, numbers are digit runs (no float
literal), strings with the escapes ``\\n \\r \\t \\\\ \\" \\' \\b \\f`` (any other keeps the character
after the backslash), punctuation ``[](){}:.,`` and every other byte a one-byte operator except
``== != <= >=``.
"""

from __future__ import annotations

TEXT, EXPR_START, EXPR_END, BLOCK_START, BLOCK_END, IDENT, STRING, NUMBER, OPERATOR, PUNCT, EOF = range(11)

_WS = b" \n\r\t"
_CSPACE = frozenset(b" \t\n\v\f\r")
_PUNCT = frozenset(b"[](){}:.,")
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("\\"): 92, ord('"'): 34, ord("'"): 39,
            ord("b"): 8, ord("f"): 12}


def _alpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _digit(c: int) -> bool:
    return 48 <= c <= 57


def _lstrip(text: bytes) -> bytes:
    i = 0
    while i < len(text) and text[i] in _WS:
        i += 1
    return text[i:]


def _rstrip(text: bytes) -> bytes:
    i = len(text)
    while i > 0 and text[i - 1] in _WS:
        i -= 1
    return text[:i]


def tokenize(src: bytes) -> list[tuple[int, bytes]]:
    """The token list of ``src`` (ending with ``EOF``)."""
    toks: list[tuple[int, bytes]] = []
    n = len(src)
    cur = 0
    state = TEXT  # TEXT, EXPR_START (inside {{ }}) or BLOCK_START (inside {% %})
    trim_next = False
    while cur < n:
        if state == TEXT:
            cands = [(src.find(b"{{", cur), 1), (src.find(b"{%", cur), 2), (src.find(b"{#", cur), 3)]
            cands = [c for c in cands if c[0] >= 0]
            if not cands:
                text = src[cur:]
                if trim_next:
                    text = _lstrip(text)
                    trim_next = False
                if text:
                    toks.append((TEXT, text))
                cur = n
                continue
            nxt, kind = min(cands)
            text = src[cur:nxt]
            if trim_next:
                text = _lstrip(text)
                trim_next = False
            trim_prev = nxt + 3 <= n and src[nxt + 2] == 45  # '-'
            if trim_prev:
                text = _rstrip(text)
            elif kind == 2:
                start = text.rfind(b"\n") + 1
                if len(text) > start and all(c in b" \t" for c in text[start:]):
                    text = text[:start]
            if text:
                toks.append((TEXT, text))
            cur = nxt
            if kind == 1:
                toks.append((EXPR_START, b"{{"))
                state = EXPR_START
            elif kind == 2:
                toks.append((BLOCK_START, b"{%"))
                state = BLOCK_START
            else:
                cur += 2
                if trim_prev:
                    cur += 1
                while cur < n:
                    if src.startswith(b"#}", cur):
                        cur += 2
                        break
                    if src.startswith(b"-#}", cur):
                        cur += 3
                        trim_next = True
                        break
                    cur += 1
                continue
            if trim_prev:
                cur += 1
            cur += 2
            continue
        while cur < n and src[cur] in _CSPACE:
            cur += 1
        if cur >= n:
            break
        c = src[cur]
        if c == 45 and ((state == EXPR_START and src.startswith(b"-}}", cur))
                        or (state == BLOCK_START and src.startswith(b"-%}", cur))):
            toks.append((EXPR_END, b"}}") if state == EXPR_START else (BLOCK_END, b"%}"))
            cur += 3
            state = TEXT
            trim_next = True
            continue
        if state == EXPR_START and src.startswith(b"}}", cur):
            toks.append((EXPR_END, b"}}"))
            cur += 2
            state = TEXT
            continue
        if state == BLOCK_START and src.startswith(b"%}", cur):
            toks.append((BLOCK_END, b"%}"))
            cur += 2
            state = TEXT
            if cur < n and src[cur] == 10:
                cur += 1
            continue
        if _alpha(c) or c == 95:
            s = cur
            while cur < n and (_alpha(src[cur]) or _digit(src[cur]) or src[cur] == 95):
                cur += 1
            toks.append((IDENT, src[s:cur]))
        elif _digit(c):
            s = cur
            while cur < n and _digit(src[cur]):
                cur += 1
            toks.append((NUMBER, src[s:cur]))
        elif c in (39, 34):
            cur += 1
            val = bytearray()
            while cur < n and src[cur] != c:
                ch = src[cur]
                if ch == 92:
                    if cur + 1 < n:
                        nx = src[cur + 1]
                        val.append(_ESCAPES.get(nx, nx))
                        cur += 2
                    else:
                        val.append(92)
                        cur += 1
                else:
                    val.append(ch)
                    cur += 1
            if cur < n:
                cur += 1
            toks.append((STRING, bytes(val)))
        elif c in _PUNCT:
            toks.append((PUNCT, bytes((c,))))
            cur += 1
        else:
            op = bytes((c,))
            if cur + 1 < n and src[cur + 1] == 61 and c in b"=!<>":  # '=='  '!='  '<='  '>='
                op += b"="
                cur += 1
            toks.append((OPERATOR, op))
            cur += 1
    toks.append((EOF, b""))
    return toks

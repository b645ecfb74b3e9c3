"""A card as one self-contained HTML page, and an index page of several cards.

The page loads nothing: inline CSS, inline SVG bar charts, no script, no font, no image, and a
Content-Security-Policy that forbids every fetch (``default-src 'none'``).  Each number is printed
from the :class:`~.data.Card` and carried again in ``data-`` attributes (``data-output``,
``data-cases``, ``data-same``, ``data-rule``, ...), so a test reads them from the DOM and checks
them against the JSON.
"""

from __future__ import annotations

from html import escape

from mtokspec.report_card.data import _check_card, _check_cards
from mtokspec.report_card.data import OUTPUT_LABELS, Card, ChatCase, Example, OutputResult, RuleCount, Side
from mtokspec.report_card.show import percent as _pct
from mtokspec.report_card.show import visible as _visible

__all__ = ["render_html", "render_html_index", "CSP"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
"""The page's Content-Security-Policy: inline styles only, nothing fetched."""

_STYLE = """
:root { --ok: #1a7f37; --warn: #b7791f; --bad: #c62828; --ink: #1f2328; --muted: #59636e; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0;
       background: #f6f8fa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; min-height: 100vh; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 20px 0 8px; }
.sub { color: var(--muted); margin: 0 0 14px; }
.verdict { font-size: 18px; font-weight: 600; padding: 12px 16px; border-radius: 8px; margin: 12px 0 18px; }
.verdict.ok { background: #dafbe1; color: #0f5323; } .verdict.bad { background: #fff1e5; color: #7a3e00; }
table { border-collapse: collapse; margin: 6px 0 14px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
.rate.ok { color: var(--ok); } .rate.warn { color: var(--warn); } .rate.bad { color: var(--bad); }
.muted { color: var(--muted); }
.rule { margin: 10px 0 18px; padding: 10px 14px; border: 1px solid var(--line); border-radius: 8px; }
.rule h4 { margin: 0 0 4px; font-size: 15px; }
.example { margin: 10px 0 4px; }
.example .input { color: var(--muted); margin-bottom: 4px; }
.pair { display: grid; grid-template-columns: 5.5em 1fr; gap: 4px 8px; align-items: start; }
.pair .who { font-weight: 600; padding-top: 3px; }
.toks { display: flex; flex-wrap: wrap; gap: 3px; }
.tok { display: inline-flex; flex-direction: column; align-items: center; border-radius: 4px; padding: 1px 4px;
       min-width: 1.6em; border: 1px solid transparent; }
.tok .t { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; white-space: pre; }
.tok .i { font-size: 10.5px; color: var(--muted); font-variant-numeric: tabular-nums; }
.tok.d { border-color: var(--bad); box-shadow: inset 0 -2px 0 var(--bad); }
.c0 { background: #ddf4ff; } .c1 { background: #fff8c5; } .c2 { background: #dafbe1; }
.c3 { background: #fbefff; } .c4 { background: #ffebe9; } .c5 { background: #eaeef2; }
.gap { color: var(--muted); align-self: center; padding: 0 2px; }
.text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; white-space: pre-wrap;
        word-break: break-all; background: #f6f8fa; border-radius: 4px; padding: 2px 6px; }
mark { background: #ffd8b5; color: inherit; border-radius: 2px; }
.chat { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
.chat pre { margin: 0; font-size: 12.5px; white-space: pre-wrap; word-break: break-all; background: #f6f8fa;
            padding: 8px; border-radius: 6px; border: 1px solid var(--line); }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; }
.badge.ok { background: #dafbe1; color: #0f5323; } .badge.bad { background: #ffebe9; color: #8a1c1c; }
dl.prov { display: grid; grid-template-columns: 13em 1fr; gap: 4px 12px; }
dl.prov dt { font-weight: 600; } dl.prov dd { margin: 0; word-break: break-word; }
svg text { font-family: system-ui, sans-serif; }
"""


def _rate_class(rate: float | None) -> str:
    if rate is None:
        return "muted"
    return "ok" if rate == 1 else "warn" if rate >= 0.9 else "bad"


def _token_text(tok: str | None) -> str:
    return "\u2205" if tok is None else _visible(tok).replace(" ", "\u2423") or "\u2205"


_WINDOW_BEFORE, _WINDOW_AFTER = 6, 12


def _tokens(side: Side, position: int) -> str:
    """The tokens around the first difference, coloured, ids under them; differing ones marked."""
    lo = max(0, position - _WINDOW_BEFORE)
    hi = min(len(side.ids), position + _WINDOW_AFTER)
    parts = []
    if lo > 0:
        parts.append(f'<span class="gap">\u2026{lo}</span>')
    for k in range(lo, hi):
        cls = f"tok c{k % 6}" + (" d" if k >= position else "")
        tok = side.tokens[k] if k < len(side.tokens) else None
        parts.append(f'<span class="{cls}" data-id="{side.ids[k]}"><span class="t">{escape(_token_text(tok))}</span>'
                     f'<span class="i">{side.ids[k]}</span></span>')
    if hi < len(side.ids):
        parts.append(f'<span class="gap">+{len(side.ids) - hi}\u2026</span>')
    if not side.ids:
        parts.append('<span class="gap">(no ids)</span>')
    return '<div class="toks">' + "".join(parts) + "</div>"


def _marked(text: str | None, error: str | None, position: int) -> str:
    """A text with its part from the first difference on marked."""
    if text is None:
        return f'<span class="text">fails: {escape(error or "")}</span>'
    if not text:
        return '<span class="text muted">(nothing)</span>'
    head, tail = text[:position], text[position:]
    lead = max(0, len(head) - 80)
    shown = ("\u2026" if lead else "") + _visible(head[lead:])
    rest = _visible(tail[:160]) + ("\u2026" if len(tail) > 160 else "")
    return f'<span class="text">{escape(shown)}<mark>{escape(rest) or "&#8203;"}</mark></span>'


def _example(e: Example, encode: bool) -> str:
    inp = escape(_visible(e.text[:200]) + ("\u2026" if len(e.text) > 200 else ""))
    if encode:
        hf, mnn = _tokens(e.hf, e.position), _tokens(e.mnn, e.position)
        where = f"first difference at token {e.position}"
    else:
        hf, mnn = _marked(e.hf.text, e.hf.error, e.position), _marked(e.mnn.text, e.mnn.error, e.position)
        where = f"first difference at character {e.position}"
    ids = ""
    if e.ids:
        shown = " ".join(map(str, e.ids[:24])) + (" \u2026" if len(e.ids) > 24 else "")
        ids = f'<div class="muted mono">HF\'s ids: {escape(shown)}</div>'
    return (f'<div class="example" data-index="{e.index}"><div class="input">case {e.index}: '
            f'<span class="text">{inp}</span> <span class="muted">({where})</span></div>{ids}'
            f'<div class="pair"><div class="who">HF</div>{hf}<div class="who">MNN</div>{mnn}</div></div>')


def _rule(o: OutputResult, r: RuleCount) -> str:
    encode = o.output in ("encode", "raw")
    examples = "".join(_example(e, encode) for e in r.examples) if o.output != "chat" else \
        '<p class="muted">the conversations are shown under <a href="#chat">chat render</a></p>'
    return (f'<div class="rule" data-rule="{escape(r.code)}" data-output="{o.output}" data-cases="{r.cases}">'
            f'<h4><code>{escape(r.code)}</code> <span class="num" data-field="cases">{r.cases}</span> '
            f'<span class="muted">of {o.differing} differing</span></h4>'
            f'<div class="muted">{escape(r.summary)}</div>{examples}</div>')


def _bars(outputs: tuple[OutputResult, ...], width: int = 620) -> str:
    """An inline SVG bar per output: the rate of cases MNN answers as HF does."""
    label_w, bar_w, row_h = 195, width - 195 - 70, 30
    height = row_h * len(outputs) + 8
    rows = []
    colours = {"ok": "#2da44e", "warn": "#d4a72c", "bad": "#cf222e", "muted": "#afb8c1"}
    for k, o in enumerate(outputs):
        y = 4 + k * row_h
        rate = o.rate
        w = 0 if rate is None else max(0.0, min(1.0, rate)) * bar_w
        colour = colours[_rate_class(rate)]
        rows.append(
            f'<g data-output="{o.output}" data-rate="{"" if rate is None else f"{rate:.6f}"}">'
            f'<text x="0" y="{y + 19}" font-size="14" fill="#1f2328">{escape(OUTPUT_LABELS[o.output])}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="20" rx="4" fill="#eaeef2"/>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="20" rx="4" fill="{colour}"/>'
            f'<text x="{label_w + bar_w + 8}" y="{y + 19}" font-size="14" fill="#1f2328">{_pct(rate)}</text></g>')
    return (f'<svg role="img" aria-label="MNN = HF per output" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">{"".join(rows)}</svg>')


def _outputs_table(card: Card) -> str:
    rows = []
    for o in card.outputs:
        same = f"{o.same:,}/{o.cases:,}" if o.cases else "\u2013"
        note = escape(o.note) if o.note else (f"{o.unexplained:,} unexplained" if o.unexplained else "")
        rows.append(f'<tr data-output="{o.output}" data-cases="{o.cases}" data-same="{o.same}" '
                    f'data-unexplained="{o.unexplained}"><td>{escape(OUTPUT_LABELS[o.output])}</td>'
                    f'<td class="num" data-field="same">{same}</td>'
                    f'<td class="num rate {_rate_class(o.rate)}" data-field="rate">{_pct(o.rate)}</td>'
                    f'<td class="muted">{note}</td></tr>')
    return ('<table class="outputs"><tr><th>output</th><th>MNN = HF</th><th>rate</th><th></th></tr>'
            + "".join(rows) + "</table>")


def _chat_case(c: ChatCase) -> str:
    badge = '<span class="badge ok">same prompt</span>' if c.same else '<span class="badge bad">different</span>'
    head = (f'<h3 data-chat="{escape(c.name)}" data-same="{str(c.same).lower()}">{escape(c.name)} {badge} '
            f'<span class="muted">add_generation_prompt={str(c.add_generation_prompt).lower()}</span></h3>')
    if c.same:
        return head + f'<pre class="mono">{escape(c.reference or "")}</pre>'
    pos = c.first_difference or 0

    def side(text: str | None, error: str | None) -> str:
        if text is None:
            return f"<pre>fails: {escape(error or '')}</pre>"
        return f"<pre>{escape(text[:pos])}<mark>{escape(text[pos:]) or '&#8203;'}</mark></pre>"

    rules = ", ".join(f"<code>{escape(r)}</code>" for r in c.rules) or "no rule explains it"
    present = ("; also in the template: " + ", ".join(f"<code>{escape(r)}</code>" for r in c.present)
               if c.present else "")
    return (head + f'<p>first difference at character {pos}; explained by: {rules}{present}</p><div class="chat">'
            f'<div><b>transformers</b>{side(c.reference, c.reference_error)}</div>'
            f'<div><b>MNN (device)</b>{side(c.mnn, c.mnn_error)}</div></div>')


def _page(title: str, body: str) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def _device(card: Card) -> str:
    d = card.device
    if d is None:
        return ('<p class="muted" data-device="none">No device result given (<code>--device-log</code>: '
                "MNN's test_tokenizer output; <code>--goldens</code>: its test cases).</p>")
    rate = d.passed / d.total if d.total else None
    extra = "".join(f", {n:,} {w}" for n, w in ((d.failed, "failed"), (d.skipped, "skipped")) if n)
    return (f'<p data-device="{escape(d.model)}" data-passed="{d.passed}" data-total="{d.total}" '
            f'data-failed="{d.failed}" data-skipped="{d.skipped}"><b class="rate {_rate_class(rate)}" '
            f'data-field="device">{d.passed:,}/{d.total:,} passed</b>{extra} '
            f'<span class="muted">({escape(d.model)}: {escape(d.source)})</span></p>')


def render_html(card: Card) -> str:
    """The card's page (see the module)."""
    _check_card(card)
    scored = [o for o in card.outputs if o.cases]
    ok = all(o.same == o.cases for o in scored)
    parts = [f"<h1>{escape(card.name)}</h1>",
             f'<p class="sub">mtokspec report card: does MNN\'s runtime on a device give Hugging Face\'s '
             f"answers? <span class=\"mono\">{escape(card.source)}</span></p>",
             f'<p class="verdict {"ok" if ok else "bad"}" data-verdict="{escape(card.verdict)}">'
             f"{escape(card.verdict)}</p>",
             _bars(card.outputs), _outputs_table(card), "<h2>Device</h2>", _device(card),
             '<h2 id="rules">What differs, and why</h2>']
    any_rule = False
    for o in card.outputs:
        if not o.rules:
            continue
        any_rule = True
        parts.append(f'<h3>{escape(OUTPUT_LABELS[o.output])}: {o.differing:,} of {o.cases:,} cases differ</h3>')
        parts += [_rule(o, r) for r in o.rules]
    if not any_rule:
        parts.append('<p data-rules="none">No case differs.</p>')
    parts.append('<h2 id="chat">Chat render</h2>')
    chat = card.output("chat")
    if not card.chat:
        parts.append(f'<p class="muted">{escape(chat.note or "no conversations")}</p>')
    parts += [_chat_case(c) for c in card.chat]
    ref = card.reference
    prov = [("reference", ref.description + ("" if ref.kind == "hf-tokenizers" else
                                               " \u2014 not HF's own code: the numbers say how MNN differs "
                                               "from what mtokspec models HF to do")),
            ("chat reference", ref.chat), ("MNN commit", f"{card.mnn_commit} (what the mnn semantics models)"),
            ("file", card.file), ("texts", card.texts), ("mtokspec", card.mtokspec_version)]
    prov += [("note", n) for n in card.notes]
    parts.append('<h2>Provenance</h2><dl class="prov" data-reference="' + escape(ref.kind) + '">' + "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in prov) + "</dl>")
    return _page(f"{card.name}: mtokspec report card", "".join(parts))


def render_html_index(cards: list[tuple[Card, str]]) -> str:
    """A page with a row per card (``(card, link)``): each output's rate and the device result."""
    _check_cards(cards)
    head = "".join(f"<th>{escape(OUTPUT_LABELS[o.output])}</th>" for o in cards[0][0].outputs) if cards else ""
    rows = []
    for card, link in cards:
        cells = []
        for o in card.outputs:
            same = f"{o.same:,}/{o.cases:,}" if o.cases else "\u2013"
            cells.append(f'<td class="num rate {_rate_class(o.rate)}" data-output="{o.output}" data-cases="{o.cases}" '
                         f'data-same="{o.same}">{same}<br><span class="muted">{_pct(o.rate)}</span></td>')
        d = card.device
        dev = "\u2013" if d is None else f"{d.passed:,}/{d.total:,}"
        rows.append(f'<tr data-model="{escape(card.name)}"><td><a href="{escape(link)}">{escape(card.name)}</a></td>'
                    + "".join(cells) + f'<td class="num" data-field="device">{dev}</td>'
                    f'<td class="muted">{escape(card.verdict)}</td></tr>')
    refs = sorted({c.reference.description.split(" loading ")[0] for c, _ in cards})
    body = ("<h1>mtokspec report cards</h1><p class=\"sub\">MNN = HF per output, one row per tokenizer "
            f"(reference: {escape('; '.join(refs))})</p><table class=\"index\"><tr><th>tokenizer</th>{head}"
            f"<th>device</th><th>verdict</th></tr>" + "".join(rows) + "</table>")
    return _page("mtokspec report cards", body)

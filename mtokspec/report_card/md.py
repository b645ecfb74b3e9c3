"""A card as Markdown (a README, an issue, a pull request), and an index table of several."""

from __future__ import annotations

from mtokspec.report_card.data import _check_card, _check_cards
from mtokspec.report_card.data import OUTPUT_LABELS, Card, Example, OutputResult
from mtokspec.report_card.show import percent as _pct
from mtokspec.report_card.show import visible as _visible

__all__ = ["render_markdown", "render_markdown_index"]


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _code(s: str) -> str:
    s = _visible(s)
    fence = "``" if "`" in s else "`"
    return f"{fence} {s} {fence}" if s.startswith("`") or s.endswith("`") else f"{fence}{s}{fence}"


def _tokens(ids: tuple[int, ...], tokens: tuple[str | None, ...], position: int) -> str:
    lo, hi = max(0, position - 6), min(len(ids), position + 12)
    out = [f"{ids[k]}:{'?' if k >= len(tokens) or tokens[k] is None else _visible(tokens[k] or '')}"
           + ("*" if k >= position else "") for k in range(lo, hi)]
    return ("… " if lo else "") + " ".join(out) + (" …" if hi < len(ids) else "")


def _example(o: OutputResult, e: Example) -> list[str]:
    lines = [f"  - case {e.index}: {_cell(_code(e.text[:200]))}"]
    if o.output in ("encode", "raw"):
        lines += [f"    - HF:  {_cell(_code(_tokens(e.hf.ids, e.hf.tokens, e.position)))}",
                  f"    - MNN: {_cell(_code(_tokens(e.mnn.ids, e.mnn.tokens, e.position)))}"]
    else:
        for who, side in (("HF", e.hf), ("MNN", e.mnn)):
            text = f"fails: {side.error}" if side.text is None else side.text[:200]
            lines.append(f"    - {who}: {_cell(_code(text))}")
    return lines


def render_markdown(card: Card) -> str:
    """The card in Markdown: the verdict and table first, then the rules with examples, the chat
    prompts, the device result and the provenance."""
    _check_card(card)
    out = [f"# {card.name}", "", f"**{card.verdict}**", "", "| output | MNN = HF | rate | |", "|---|---:|---:|---|"]
    for o in card.outputs:
        same = f"{o.same:,}/{o.cases:,}" if o.cases else "–"
        note = o.note or (f"{o.unexplained:,} unexplained" if o.unexplained else "")
        out.append(f"| {OUTPUT_LABELS[o.output]} | {same} | {_pct(o.rate)} | {_cell(note)} |")
    out += ["", "## Device", ""]
    d = card.device
    if d is None:
        out.append("No device result given (`--device-log`, `--goldens`).")
    else:
        out.append(f"{d.passed:,}/{d.total:,} passed" + "".join(
            f", {n:,} {w}" for n, w in ((d.failed, "failed"), (d.skipped, "skipped")) if n) + f" ({d.model}: {d.source})")
    out += ["", "## What differs, and why", ""]
    if not any(o.rules for o in card.outputs):
        out.append("No case differs.")
    for o in card.outputs:
        if not o.rules:
            continue
        out += [f"### {OUTPUT_LABELS[o.output]}: {o.differing:,} of {o.cases:,} cases differ", ""]
        for r in o.rules:
            out.append(f"- `{r.code}`: {r.cases:,} cases. {_cell(r.summary)}")
            if o.output != "chat":
                for e in r.examples:
                    out += _example(o, e)
        out.append("")
    out += ["## Chat render", ""]
    if not card.chat:
        out.append(card.output("chat").note or "no conversations")
    for c in card.chat:
        out.append(f"- {c.name} (add_generation_prompt={str(c.add_generation_prompt).lower()}): "
                   + ("same prompt" if c.same else f"different from character {c.first_difference}"
                      + (f", explained by {', '.join(f'`{r}`' for r in c.rules)}" if c.rules else ", unexplained")
                      + (f"; also in the template: {', '.join(f'`{r}`' for r in c.present)}" if c.present else "")))
        if not c.same:
            for who, text, err in (("transformers", c.reference, c.reference_error), ("MNN", c.mnn, c.mnn_error)):
                body = f"fails: {err}" if text is None else text
                out += ["", f"  {who}:", "", "  ```text", *("  " + line for line in body.split("\n")), "  ```"]
    ref = card.reference
    out += ["", "## Provenance", "", f"- reference: {ref.description}", f"- chat reference: {ref.chat}",
            f"- MNN commit: {card.mnn_commit} (what the mnn semantics models)", f"- file: {card.file}",
            f"- texts: {card.texts}", f"- mtokspec: {card.mtokspec_version}"]
    out += [f"- note: {n}" for n in card.notes]
    return "\n".join(out) + "\n"


def render_markdown_index(cards: list[tuple[Card, str]]) -> str:
    """A table with a row per card (``(card, link)``)."""
    _check_cards(cards)
    if not cards:
        return "# mtokspec report cards\n\nNo cards.\n"
    outputs = cards[0][0].outputs
    out = ["# mtokspec report cards", "", "| tokenizer | " + " | ".join(OUTPUT_LABELS[o.output] for o in outputs)
           + " | device |", "|---|" + "---:|" * len(outputs) + "---:|"]
    for card, link in cards:
        cells = [f"{o.same:,}/{o.cases:,}" if o.cases else "–" for o in card.outputs]
        d = card.device
        out.append(f"| [{_cell(card.name)}]({link}) | " + " | ".join(cells)
                   + f" | {'–' if d is None else f'{d.passed:,}/{d.total:,}'} |")
    return "\n".join(out) + "\n"

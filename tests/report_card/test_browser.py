"""The report cards of every corpus folder in a real headless Chromium (the system's ``chromium``,
driven by playwright): each page renders, the numbers its DOM shows are the JSON's, a screenshot
is not blank, and nothing but the page itself is requested.

Skips, loudly, when there is no browser: ``.ci/run`` installs Debian's ``chromium`` and the test
extra installs playwright (no browser download: the system's is launched by its path).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests._support import CORPUS
from tests._support.cards import card_names, chromium_path, corpus_folders, written_cards
from tests._support.png import pixel_stats

FOLDERS = [p.name for p in corpus_folders()]


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("NO BROWSER: the report cards are NOT checked in Chromium here: install the system browser "
                    "(apt-get install -y chromium, as .ci/run does) or set MTOKSPEC_CHROMIUM=/path/to/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("NO PLAYWRIGHT: the report cards are NOT checked in Chromium here: "
                    "pip install -e '.[test]' installs playwright (the browser is the system's)")
    with sync_playwright() as p:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # root in a container
        b = p.chromium.launch(executable_path=path, args=args)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    if not FOLDERS:
        pytest.skip(f"reference corpus not found at {CORPUS}")
    return written_cards(str(tmp_path_factory.mktemp("cards")))


def _open(browser, path: Path):
    """A page showing ``path``, and the list every request it makes is put in (anything but a
    file:// request is aborted, so nothing reaches the network even when a page asks)."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                  else route.abort())
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load")
    return context, page, requests


_DOM = """() => ({
  title: document.title,
  verdict: document.querySelector('[data-verdict]').textContent,
  csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]').content,
  loaders: document.querySelectorAll('script, link, img, iframe, object, embed, video, audio, source').length,
  rows: [...document.querySelectorAll('table.outputs tr[data-output]')].map(e => ({
    output: e.dataset.output, cases: +e.dataset.cases, same: +e.dataset.same, unexplained: +e.dataset.unexplained,
    shown: e.querySelector('[data-field=same]').textContent, rate: e.querySelector('[data-field=rate]').textContent})),
  bars: [...document.querySelectorAll('svg g[data-output]')].map(g => {
    const r = g.querySelectorAll('rect');
    return {output: g.dataset.output, rate: g.dataset.rate, drawn: +r[1].getAttribute('width') / +r[0].getAttribute('width'),
            height: r[1].getBoundingClientRect().height};
  }),
  rules: [...document.querySelectorAll('.rule[data-rule]')].map(e => ({
    output: e.dataset.output, code: e.dataset.rule, cases: +e.dataset.cases,
    shown: e.querySelector('[data-field=cases]').textContent,
    examples: [...e.querySelectorAll('.example')].map(x => ({
      index: +x.dataset.index, ids: [...x.querySelectorAll('.tok')].map(t => +t.dataset.id)}))})),
  device: (d => d === null ? null : {passed: +d.dataset.passed, total: +d.dataset.total,
           shown: d.querySelector('[data-field=device]').textContent})(document.querySelector('[data-device][data-total]')),
  chat: [...document.querySelectorAll('[data-chat]')].map(e => [e.dataset.chat, e.dataset.same === 'true']),
  provenance: document.querySelector('dl.prov').textContent,
  width: document.documentElement.scrollWidth,
})"""


def _same_as_compare(name: str, rows: dict) -> None:
    from mtokspec.compare import compare_runtimes
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.reference import probe_texts

    folder = CORPUS / "tok" / name
    tree = from_hf(folder, target="mnn").tree
    texts = probe_texts([a.content for a in sorted(tree.added_tokens, key=lambda a: not a.special)])
    for output, special in (("encode", True), ("raw", False)):
        report = compare_runtimes(tree, texts, against=folder / "tokenizer.json", add_special_tokens=special)
        row = rows[output]
        assert (row["cases"], row["same"], row["unexplained"]) == (report.total, report.matched, report.unexplained)
        assert row["shown"] == f"{report.matched:,}/{report.total:,}"


@pytest.mark.parametrize("name", card_names() if FOLDERS else [])
def test_card_renders_with_the_jsons_numbers(browser, pages, name, tmp_path):
    from mtokspec.report_card.html import CSP
    from mtokspec.report_card.show import percent

    doc = json.loads((pages / f"{name}.json").read_text(encoding="utf-8"))
    context, page, requests = _open(browser, pages / f"{name}.html")
    try:
        dom = page.evaluate(_DOM)
        png = page.screenshot()
    finally:
        context.close()
    assert requests == [(pages / f"{name}.html").as_uri()]  # the page itself, nothing else
    assert dom["loaders"] == 0 and dom["csp"] == CSP
    assert dom["title"].startswith(doc["name"]) and dom["verdict"] == doc["verdict"]
    assert dom["width"] <= 1100  # nothing wider than the window
    want_rows = [{"output": o["output"], "cases": o["cases"], "same": o["same"], "unexplained": o["unexplained"],
                  "shown": f"{o['same']:,}/{o['cases']:,}" if o["cases"] else "\u2013", "rate": percent(o["rate"])}
                 for o in doc["outputs"]]
    assert dom["rows"] == want_rows
    if name in FOLDERS:  # and the page's encode numbers are compare --runtime mnn's, straight
        _same_as_compare(name, {r["output"]: r for r in dom["rows"]})
    for bar, o in zip(dom["bars"], doc["outputs"], strict=True):
        assert bar["output"] == o["output"] and bar["height"] > 0
        assert bar["rate"] == ("" if o["rate"] is None else f"{o['rate']:.6f}")
        assert bar["drawn"] == pytest.approx(o["rate"] or 0, abs=0.002)
    want_rules = []
    for o in doc["outputs"]:
        for r in o["rules"]:
            examples = [{"index": e["index"], "ids": []} for e in r["examples"]] if o["output"] != "chat" else []
            for e, ex in zip(r["examples"], examples):
                if o["output"] in ("encode", "raw"):  # the window of both sides' ids around the first difference
                    for side in ("hf", "mnn"):
                        ids = e[side]["ids"]
                        lo = max(0, e["position"] - 6)
                        ex["ids"] += ids[lo:e["position"] + 12]
            want_rules.append({"output": o["output"], "code": r["code"], "cases": r["cases"], "shown": str(r["cases"]),
                               "examples": examples})
    assert dom["rules"] == want_rules
    d = doc["device"]
    assert dom["device"] == (None if d is None else {"passed": d["passed"], "total": d["total"],
                                                      "shown": f"{d['passed']:,}/{d['total']:,} passed"})
    assert dom["chat"] == [[c["name"], c["same"]] for c in doc["chat"]]
    assert doc["reference"]["description"] in dom["provenance"] and doc["mnn_commit"] in dom["provenance"]
    variance, colours = pixel_stats(png)
    (tmp_path / f"{name}.png").write_bytes(png)
    keep = os.environ.get("MTOKSPEC_SCREENSHOTS")  # a folder to keep the screenshots in, to look at them
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / f"{name}.png").write_bytes(png)
    assert variance > 200 and colours > 50, (variance, colours)


def test_index_links_every_card(browser, pages):
    doc = json.loads((pages / "index.json").read_text(encoding="utf-8"))
    context, page, requests = _open(browser, pages / "index.html")
    try:
        rows = page.evaluate("""() => [...document.querySelectorAll('tr[data-model]')].map(r => ({
          model: r.dataset.model, link: r.querySelector('a').getAttribute('href'),
          cells: [...r.querySelectorAll('td[data-output]')].map(c => [c.dataset.output, +c.dataset.cases, +c.dataset.same]),
          device: r.querySelector('[data-field=device]').textContent}))""")
        png = page.screenshot()
        page.click(f"a[href='{doc['cards'][0]['link']}']")
        page.wait_for_load_state("load")
        landed = page.evaluate("() => document.querySelector('h1').textContent")
    finally:
        context.close()
    assert requests[0] == (pages / "index.html").as_uri() and all(u.startswith("file://") for u in requests)
    assert landed == doc["cards"][0]["name"]
    assert [r["model"] for r in rows] == [c["name"] for c in doc["cards"]] == card_names()
    for r, c in zip(rows, doc["cards"]):
        assert (pages / r["link"]).is_file() and r["link"] == c["link"]
        assert r["cells"] == [[o["output"], o["cases"], o["same"]] for o in c["outputs"]]
        d = c["device"]
        assert r["device"] == ("\u2013" if d is None else f"{d['passed']:,}/{d['total']:,}")
    variance, colours = pixel_stats(png)
    assert variance > 200 and colours > 20, (variance, colours)


def test_the_network_check_sees_a_page_that_fetches(browser, tmp_path):
    """The control: a page that asks for a style sheet and an image elsewhere is caught by the
    request log, so the cards' log of the page alone means they asked for nothing."""
    body = ('<link rel="stylesheet" href="http://127.0.0.1:9/x.css"><img src="https://example.invalid/x.png">'
            "<p>hello</p>")
    (tmp_path / "fetches.html").write_text(f"<!DOCTYPE html><html><head></head><body>{body}</body></html>")
    context, page, requests = _open(browser, tmp_path / "fetches.html")
    context.close()
    assert sorted(u for u in requests if not u.startswith("file://")) == [
        "http://127.0.0.1:9/x.css", "https://example.invalid/x.png"]

"""The report cards of the corpus folders, collected once per test process and written as pages."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

from tests._support import CORPUS, ROOT, TESTS

__all__ = ["DEVICE_LOG", "CHAT_TEMPLATE", "corpus_folders", "corpus_card", "chat_card", "card_names", "written_cards",
           "chromium_path"]

DEVICE_LOG = TESTS / "fixtures" / "report_card" / "test_tokenizer.log"
"""A real log of MNN's ``test_tokenizer`` (MNN 4d40bdbd7, built from its source) over the
``convert --target mnn`` file and ``mtokspec goldens`` of every corpus folder (the README's
mnn-target table), ANSI colours as it printed them."""


CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% for c in 'ab' %}{{ c }}{% endfor %}\n"
                 "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
"""A chat template MNN renders differently (a for loop over a string: ``mnn-jinja-for-string``)."""


def corpus_folders() -> list[Path]:
    """The corpus model folders (``tok/*`` with a ``tokenizer.json``; empty without the corpus)."""
    return sorted(p for p in CORPUS.glob("tok/*") if (p / "tokenizer.json").is_file()) if CORPUS.is_dir() else []


@functools.lru_cache(maxsize=None)
def corpus_card(name: str):
    """The card of corpus folder ``name``, with the recorded device log's result where it has one."""
    from dataclasses import replace

    from mtokspec.report_card import collect_card
    from mtokspec.report_card.device import parse_test_tokenizer_log

    card = collect_card(CORPUS / "tok" / name)
    results = {r.model: r for r in parse_test_tokenizer_log(DEVICE_LOG.read_text(encoding="utf-8"))}
    return replace(card, device=results.get(name))


@functools.lru_cache(maxsize=None)
def chat_card(folder: str):
    """The card of ``examples/tiny.mtok`` with :data:`CHAT_TEMPLATE` (written into ``folder``),
    against its own HF semantics: every conversation differs."""
    from dataclasses import replace

    import mtokspec
    from mtokspec.report_card import collect_card

    tree = replace(mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes()), chat_template=CHAT_TEMPLATE)
    path = Path(folder) / "tiny-chat.mtok"
    path.write_bytes(mtokspec.build(tree))
    return collect_card(path, name="tiny-chat")


def card_names() -> list[str]:
    """The cards :func:`written_cards` writes: every corpus folder's, then ``tiny-chat``."""
    return [p.name for p in corpus_folders()] + ["tiny-chat"]


@functools.lru_cache(maxsize=None)
def written_cards(folder: str) -> Path:
    """Every corpus card and :func:`chat_card` written to ``folder`` as ``NAME.html``, ``NAME.json``
    and ``NAME.md``, and the index as ``index.html`` / ``index.json``."""
    from mtokspec.report_card.html import render_html, render_html_index
    from mtokspec.report_card.json_out import render_json, render_json_index
    from mtokspec.report_card.md import render_markdown

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    linked = []
    for name in card_names():
        card = chat_card(folder) if name == "tiny-chat" else corpus_card(name)
        (out / f"{name}.html").write_text(render_html(card), encoding="utf-8")
        (out / f"{name}.json").write_text(render_json(card), encoding="utf-8")
        (out / f"{name}.md").write_text(render_markdown(card), encoding="utf-8")
        linked.append((card, f"{name}.html"))
    (out / "index.html").write_text(render_html_index(linked), encoding="utf-8")
    (out / "index.json").write_text(render_json_index(linked), encoding="utf-8")
    json.loads((out / "index.json").read_text(encoding="utf-8"))
    return out


def chromium_path() -> str | None:
    """The system Chromium (``MTOKSPEC_CHROMIUM``, else ``chromium`` / ``chromium-browser`` on the
    PATH, else ``/usr/bin/chromium``), or None."""
    env = os.environ.get("MTOKSPEC_CHROMIUM")
    if env:
        return env if os.path.exists(env) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None

"""The report card's numbers against the comparisons they come from, the device log and goldens,
the Markdown and JSON pages, and ``mtokspec report`` (the browser tests are in test_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mtokspec.convert.mnn_target.goldens import CONVERSATIONS
from tests._support import CORPUS, ROOT, corpus_path
from tests._support.cards import CHAT_TEMPLATE, DEVICE_LOG, chat_card, corpus_card, corpus_folders

FOLDERS = [p.name for p in corpus_folders()]
needs_corpus = pytest.mark.skipif(not FOLDERS, reason=f"reference corpus not found at {CORPUS}")


def _texts(tree) -> list[str]:
    from mtokspec.convert.mnn_target.reference import probe_texts

    added = sorted(tree.added_tokens, key=lambda a: not a.special)
    return probe_texts([a.content for a in added])


@needs_corpus
@pytest.mark.parametrize("name", FOLDERS)
def test_encode_numbers_are_compare_runtimes(name):
    """encode and raw: the card's counts, unexplained cases and rule counts are compare_runtimes'
    on the --target mnn file over the probe texts, against the folder's tokenizer.json."""
    from mtokspec.compare import compare_runtimes
    from mtokspec.convert import from_hf

    folder = corpus_path() / "tok" / name
    tree = from_hf(folder, target="mnn").tree
    texts = _texts(tree)
    card = corpus_card(name)
    assert card.reference.kind == "hf-tokenizers" and card.reference.version
    assert card.texts.startswith(f"{len(texts)} probe texts")
    for output, special in (("encode", True), ("raw", False)):
        report = compare_runtimes(tree, texts, against=folder / "tokenizer.json", add_special_tokens=special)
        got = card.output(output)
        assert (got.cases, got.same, got.unexplained) == (report.total, report.matched, report.unexplained)
        assert {r.code: r.cases for r in got.rules} == report.rule_counts()
        for r in got.rules:  # each example is a differing case of that rule, HF's ids as tokenizers gives them
            for e in r.examples:
                m = next(m for m in report.mismatches if m.index == e.index)
                assert (list(e.hf.ids), list(e.mnn.ids)) == (m.theirs, m.ours)
                assert r.code in (m.rules or ["UNEXPLAINED"])


@needs_corpus
@pytest.mark.parametrize("name", FOLDERS)
def test_per_output_numbers_are_the_converters_report(name):
    """Every output's differing cases are what ``convert --target mnn``'s report counts
    (``agreement``, another path over the same probe texts, with the same reference); for stream
    and seq the rule counts are its losses' too, and ``same`` is the number of texts whose MNN
    decode of HF's ids is HF's decode."""
    import tokenizers

    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.report import MnnLoss
    from mtokspec.runtime.mnn import MnnTokenizer

    folder = corpus_path() / "tok" / name
    result = from_hf(folder, target="mnn")
    card = corpus_card(name)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    mnn = MnnTokenizer.from_tree(result.tree)
    texts = _texts(result.tree)
    assert {o.output: (o.differing, o.cases) for o in card.outputs if o.output != "chat"} == result.agreement
    assert result.reference == f"HF tokenizers {card.reference.version}"
    for output in ("stream", "seq"):
        losses = [x for x in result.losses if isinstance(x, MnnLoss) and x.output == output]
        want = {("UNEXPLAINED" if x.rule == "unexplained" else x.rule): x.cases for x in losses}
        got = card.output(output)
        assert {r.code: r.cases for r in got.rules} == want
        assert all(x.probes == got.cases for x in losses)
        same = 0
        for text in texts:
            ids = hf.encode(text, add_special_tokens=False).ids
            same += mnn.decode_bytes(ids, stream=output == "stream") == hf.decode(ids, skip_special_tokens=False).encode()
        assert (got.cases, got.same) == (len(texts), same)


@needs_corpus
def test_chat_is_transformers_against_the_device():
    """phi-3-mini (the one corpus folder with a chat template): each conversation's reference is
    transformers' rendering of the folder's template, the device's MNN's engine on the file's."""
    from mtokspec.chat.render import render_chat_template
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.goldens import CONVERSATIONS, chat_template_of
    from mtokspec.report_card.collect import CHAT_CLOCK
    from mtokspec.runtime.mnn import MnnTokenizer

    folder = corpus_path() / "tok" / "phi-3-mini"
    card = corpus_card("phi-3-mini")
    template, bos, eos = chat_template_of(folder)
    mnn = MnnTokenizer.from_tree(from_hf(folder, target="mnn").tree)
    assert [c.name for c in card.chat] == [c["name"] for c in CONVERSATIONS]
    for c, conv in zip(card.chat, CONVERSATIONS):
        agp = conv["add_generation_prompt"]
        assert c.reference == render_chat_template(template, conv["messages"], add_generation_prompt=agp,
                                                   bos_token=bos, eos_token=eos, strftime_now=CHAT_CLOCK)
        assert c.mnn == mnn.apply_chat_template(conv["messages"], agp)
        assert c.same == (c.reference == c.mnn)
    chat = card.output("chat")
    assert (chat.cases, chat.same) == (len(CONVERSATIONS), sum(c.same for c in card.chat))
    assert corpus_card("roberta-base").output("chat").note == "the file holds no chat template"


def test_chat_differences_are_shown_with_the_lints_findings(tmp_path):
    """A template MNN renders differently: every conversation differs, each side as its engine
    renders it; compare_chat names no rule for it, the chat lint's finding is listed as present."""
    from mtokspec.chat.render import render_chat_template
    from mtokspec.report_card.collect import CHAT_CLOCK
    from mtokspec.report_card.html import render_html
    from mtokspec.runtime.mnn import MnnTokenizer
    from mtokspec.tokenizer import Tokenizer

    card = chat_card(str(tmp_path))
    assert card.reference.kind == "mtokspec-hf" and "no HF code ran" in card.reference.description
    tok = Tokenizer.from_file(tmp_path / "tiny-chat.mtok")
    mnn = MnnTokenizer.from_file(tmp_path / "tiny-chat.mtok")
    chat = card.output("chat")
    assert (chat.cases, chat.same, chat.unexplained) == (4, 0, 4)
    for c in card.chat:
        messages = next(conv["messages"] for conv in CONVERSATIONS if conv["name"] == c.name)
        assert c.reference == render_chat_template(CHAT_TEMPLATE, messages, add_generation_prompt=c.add_generation_prompt,
                                                   bos_token=tok.bos_token or None, eos_token=tok.eos_token or None,
                                                   strftime_now=CHAT_CLOCK)
        assert c.mnn == mnn.apply_chat_template(messages, c.add_generation_prompt) != c.reference
        assert c.present == ("mnn-jinja-for-string",) and c.rules == ()
        assert c.first_difference == next(i for i, (a, b) in enumerate(zip(c.reference, c.mnn)) if a != b)
    page = render_html(card)
    assert page.count('data-same="false"') == 4 and "<code>mnn-jinja-for-string</code>" in page


def test_device_log_is_read_as_test_tokenizer_prints_it():
    from mtokspec.report_card.device import LogError, parse_test_tokenizer_log

    got = parse_test_tokenizer_log(DEVICE_LOG.read_text(encoding="utf-8"))
    assert [(r.model, r.passed, r.total, r.failed, r.skipped) for r in got] == [
        ("bert-base-cased-derived", 42, 44, 2, 0), ("phi-3-mini", 64, 64, 0, 0), ("roberta-base", 43, 44, 1, 0),
        ("t5-small", 96, 98, 2, 0), ("tokenizer-wiki", 38, 44, 6, 0), ("whisper.tiny", 97, 98, 1, 0)]
    # a skipped model prints no result line; skipped cases are counted
    log = "Testing: a ...\n  SKIP\nTesting: b ...\n\x1b[31m  3/5 passed\x1b[0m\x1b[31m, 1 failed\x1b[0m\x1b[33m, 1 skipped\x1b[0m\n"
    assert [(r.model, r.passed, r.total, r.failed, r.skipped) for r in parse_test_tokenizer_log(log)] == [
        ("b", 3, 5, 1, 1)]
    with pytest.raises(LogError, match="not a test_tokenizer log"):
        parse_test_tokenizer_log("Summary: 0 models tested\n")


@needs_corpus
def test_goldens_on_the_mnn_semantics_give_the_devices_result(tmp_path):
    """MNN's test applied to goldens on the mnn semantics gives the counts the real test_tokenizer
    printed for the same files (the recorded log)."""
    from mtokspec.cli import main
    from mtokspec.format import parse
    from mtokspec.report_card.device import parse_test_tokenizer_log, read_goldens, run_goldens

    device = {r.model: r for r in parse_test_tokenizer_log(DEVICE_LOG.read_text(encoding="utf-8"))}
    for name in ("roberta-base", "phi-3-mini", "tokenizer-wiki"):
        folder = corpus_path() / "tok" / name
        # exit 3: written, and MNN still differs from HF somewhere (the report says where)
        assert main(["convert", str(folder), "--target", "mnn", "-o", str(tmp_path / f"{name}.mtok")]) in (0, 3)
        assert main(["goldens", str(folder), "-o", str(tmp_path / f"{name}.jsonl"), "-q", "-j", "1"]) == 0
        tree = parse((tmp_path / f"{name}.mtok").read_bytes())
        got = run_goldens(tree, read_goldens((tmp_path / f"{name}.jsonl").read_text(encoding="utf-8")), name)
        want = device[name]
        assert (got.passed, got.total, got.failed) == (want.passed, want.total, want.failed)


@needs_corpus
@pytest.mark.parametrize("name", FOLDERS)
def test_markdown_and_json_carry_the_cards_numbers(name):
    from mtokspec.report_card.json_out import render_json
    from mtokspec.report_card.md import render_markdown

    card = corpus_card(name)
    doc = json.loads(render_json(card))
    assert doc == json.loads(json.dumps(card.to_dict()))
    md = render_markdown(card)
    assert md.startswith(f"# {card.name}\n\n**{card.verdict}**")
    for o in doc["outputs"]:
        row = f"| {o['label']} | " + (f"{o['same']:,}/{o['cases']:,}" if o["cases"] else "–") + " |"
        assert row in md
        for r in o["rules"]:
            assert f"- `{r['code']}`: {r['cases']:,} cases." in md
    assert doc["mnn_commit"] in md and doc["reference"]["description"] in md


@needs_corpus
def test_report_command_writes_cards_and_an_index(tmp_path, capsys):
    """Two folders: a card each and an index in the folder; the JSON run has the HTML run's numbers;
    a .mtok with --against and a device log; errors are one line, exit 2."""
    from mtokspec.cli import main

    tok = corpus_path() / "tok"
    log = tmp_path / "roberta.log"  # the device log of roberta-base alone
    lines = DEVICE_LOG.read_text(encoding="utf-8").split("\n")
    at = lines.index("Testing: roberta-base ...")
    log.write_text("\n".join(lines[at:at + 2]) + "\n", encoding="utf-8")
    args = [str(tok / "tokenizer-wiki"), str(tok / "roberta-base"), "-q", "-j", "1", "--device-log", str(log)]
    assert main(["report", *args, "-o", str(tmp_path / "html")]) == 0
    assert main(["report", *args, "-o", str(tmp_path / "json"), "--format", "json"]) == 0
    assert sorted(p.name for p in (tmp_path / "html").iterdir()) == ["index.html", "roberta-base.html",
                                                                      "tokenizer-wiki.html"]
    index = json.loads((tmp_path / "json" / "index.json").read_text(encoding="utf-8"))
    assert [c["link"] for c in index["cards"]] == ["tokenizer-wiki.json", "roberta-base.json"]
    roberta = json.loads((tmp_path / "json" / "roberta-base.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in index["cards"][1].items() if k != "link"} == roberta
    assert roberta["device"]["passed"] == 43 and index["cards"][0]["device"] is None
    page = (tmp_path / "html" / "roberta-base.html").read_text(encoding="utf-8")
    for o in roberta["outputs"]:
        assert f'data-output="{o["output"]}" data-cases="{o["cases"]}" data-same="{o["same"]}"' in page
    assert index["cards"][0]["notes"] == [f"{log} has no result for the model tokenizer-wiki"]
    assert "has no result for the model tokenizer-wiki" in (tmp_path / "html" / "tokenizer-wiki.html").read_text(
        encoding="utf-8")

    assert main(["report", str(tok / "roberta-base" / "mnn.mtok"), "--against", str(tok / "roberta-base"),
                 "-q", "-j", "1", "-o", str(tmp_path / "file.md")]) == 0
    md = (tmp_path / "file.md").read_text(encoding="utf-8")
    assert md.startswith("# roberta-base/mnn.mtok\n") and "HF tokenizers" in md
    assert "| encode | 0/" in md  # the exporter's file: MNN misses RobertaProcessing's <s> ... </s>
    capsys.readouterr()
    assert main(["report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.match(r"mtokspec report: input: .*no such file", err)
    assert main(["report", str(DEVICE_LOG), "-o", str(tmp_path / "x.html"), "-q"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not Path(tmp_path / "x.html").exists()


def test_wrong_arguments_are_refused_by_name():
    import mtokspec
    from mtokspec.report_card import collect_card
    from mtokspec.report_card.device import parse_test_tokenizer_log, run_goldens
    from mtokspec.report_card.html import render_html, render_html_index
    from mtokspec.report_card.json_out import render_json
    from mtokspec.report_card.md import render_markdown_index

    example = ROOT / "examples" / "tiny.mtok"
    for call, name in [(lambda: collect_card(None), "path"), (lambda: collect_card(example, texts="abc"), "texts"),
                       (lambda: collect_card(example, jobs=1.5), "jobs"),
                       (lambda: collect_card(example, progress=3), "progress"),
                       (lambda: collect_card(example, goldens=["x", []]), "goldens"),
                       (lambda: render_html({}), "card"), (lambda: render_json(None), "card"),
                       (lambda: render_html_index([("x", "y")]), "cards"),
                       (lambda: render_markdown_index("x"), "cards"),
                       (lambda: run_goldens(None, [], "m"), "tree"),
                       (lambda: parse_test_tokenizer_log(b"x"), "text")]:
        with pytest.raises(mtokspec.ArgumentTypeError, match=f"^{name}: "):
            call()
    with pytest.raises(FileNotFoundError):
        collect_card("no/such/file.mtok")

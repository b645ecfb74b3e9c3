"""``convert --target mnn``, ``fix`` and ``goldens``: files for which MNN's runtime (the ``mnn``
semantics, which agrees with MNN's C++ code on every recorded case) gives HF's answers, and a
report that lists exactly the differences that remain.

- every dev tokenizer: on every corpus text, each output (encode, raw, seq, stream) equals HF's
  recorded answer unless the report lists a loss for that output; every loss's example really
  differs; ``lint --target mnn`` of the file names exactly the rules of the losses (warnings and
  errors);
- tokenizers trained here with HF ``tokenizers`` for each component the levers touch: the same,
  against HF ``tokenizers`` itself;
- Hypothesis: random text agrees on encode for every file whose report lists no encode loss;
- the default target is still MNN's exporter's bytes; ``fix --against`` of the exporter's file is
  the ``--target mnn`` file; goldens hold HF's ids and transformers' chat renderings.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import tree as t
from mtokspec.convert import from_hf
from mtokspec.convert.mnn_target.choices import NOOP_ID, misread_by_mnn, program
from mtokspec.convert.mnn_target.reference import PIECES
from mtokspec.convert.mnn_target.report import OUTPUTS, MnnLoss
from mtokspec.runtime.mnn import MnnTokenizer
from tests._support import CORPUS, ROOT, TESTS

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is the oracle (a test dependency)")

NAMES = ["bert-base-cased-derived", "phi-3-mini", "roberta-base", "t5-small", "tokenizer-wiki", "whisper.tiny"]
TEXT_SETS = ("en", "zh", "code", "edge", "mixed")
FIXTURES = TESTS / "fixtures"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"reference corpus not found at {CORPUS}")


@lru_cache(maxsize=None)
def _target(folder: str):
    return from_hf(folder, target="mnn")


def _mnn_losses(result) -> list[MnnLoss]:
    return [loss for loss in result.losses if isinstance(loss, MnnLoss)]


def _answers(tok: MnnTokenizer, text: str, ids: list[int]) -> dict:
    return {"encode": tok.encode(text), "raw": tok.encode(text, add_special_tokens=False),
            "seq": tok.decode_bytes(ids), "stream": tok.decode_bytes(ids, stream=True)}


def _hf_answers(hf, text: str) -> tuple[list[int], dict]:
    """HF's ids without special tokens, and its answer for each output."""
    ids = hf.encode(text, add_special_tokens=False).ids
    decoded = hf.decode(ids, skip_special_tokens=False).encode()
    return ids, {"encode": hf.encode(text).ids, "raw": ids, "seq": decoded, "stream": decoded}


def _lint_codes(tree: t.MtokFile) -> set[str]:
    """The rules ``lint --target mnn`` predicts a difference in an answer for (warnings and errors;
    the speed warning mnn-bpe-quadratic and the chat template's findings are about other things)."""
    from mtokspec.divergences.lint import lint
    from mtokspec.format.validate import INFO

    return {f.code for f in lint(tree, target="mnn") if f.severity != INFO and not f.path.startswith("chat_template")
            and f.code != "mnn-bpe-quadratic"}


# --- the dev corpus ---------------------------------------------------------------------------------

def _dev(name: str):
    """``(folder, --target mnn conversion, its file under the mnn semantics)`` of a corpus folder."""
    folder = CORPUS / "tok" / name
    result = _target(str(folder))
    return folder, result, MnnTokenizer.from_tree(result.tree)


@needs_corpus
@pytest.mark.parametrize("name", NAMES)
def test_target_mnn_gives_hf_answers_except_reported_losses(name):
    folder, result, tok = _dev(name)
    lost = {loss.output for loss in _mnn_losses(result)}
    wrong: dict[str, list] = {o: [] for o in OUTPUTS}
    for ts in TEXT_SETS:
        texts = json.loads((CORPUS / "text" / f"{ts}.json").read_text(encoding="utf-8"))
        ref = json.loads((folder / f"ref_{ts}.json").read_text(encoding="utf-8"))
        for k, text in enumerate(texts):
            raw = ref["no_special"][k]
            want = {"encode": ref["special"][k], "raw": raw, "seq": ref["decode_no_special"][k].encode(),
                    "stream": ref["decode_no_special"][k].encode()}
            got = _answers(tok, text, raw)
            for o in OUTPUTS:
                if got[o] != want[o]:
                    wrong[o].append((ts, k))
    unreported = {o: cases[:5] for o, cases in wrong.items() if cases and o not in lost}
    assert not unreported, f"differences the report does not list: {unreported}"


@needs_corpus
@pytest.mark.parametrize("name", NAMES)
def test_losses_are_real_and_lint_names_them(name):
    folder, result, tok = _dev(name)
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for loss in _mnn_losses(result):
        ids, want = _hf_answers(hf, loss.text)
        assert _answers(tok, loss.text, ids)[loss.output] != want[loss.output], loss
        assert loss.cases >= 1 and loss.example
    # what the file alone shows (the lint) is every runtime rule; a format: cause names what the
    # tokenizer.json had and the format could not say, which only the conversion sees
    assert _lint_codes(result.tree) == {loss.rule for loss in _mnn_losses(result) if not loss.rule.startswith("format:")}
    assert all(loss.rule != "file-differs-from-tokenizer.json" for loss in _mnn_losses(result))


@needs_corpus
@pytest.mark.parametrize("name", NAMES)
def test_default_target_is_the_exporter(name):
    folder = CORPUS / "tok" / name
    assert mtokspec.build(from_hf(folder, target="exporter").tree) == (folder / "mnn.mtok").read_bytes()


@needs_corpus
@pytest.mark.parametrize("name", ["roberta-base", "whisper.tiny", "phi-3-mini"])
def test_fix_against_folder_is_the_target_file(name):
    from mtokspec.convert.mnn_target.fix import fix

    folder = CORPUS / "tok" / name
    fixed = fix(mtokspec.parse((folder / "mnn.mtok").read_bytes()), against=folder)
    assert mtokspec.build(fixed.tree) == mtokspec.build(_target(str(folder)).tree)
    assert {(x.output, x.rule) for x in _mnn_losses(fixed)} == {(x.output, x.rule) for x in _mnn_losses(_target(str(folder)))}


@needs_corpus
def test_fix_without_against_repairs_what_the_file_shows():
    from mtokspec.convert.mnn_target.fix import fix
    from mtokspec.runtime.mnn.tokenizer import post_program_ops, written_ops

    folder = CORPUS / "tok" / "whisper.tiny"
    before = mtokspec.parse((folder / "mnn.mtok").read_bytes())
    assert post_program_ops(before.post_processor) != written_ops(before.post_processor)  # misread today
    fixed = fix(before)
    pp = fixed.tree.post_processor
    assert post_program_ops(pp) == written_ops(pp)
    tok = MnnTokenizer.from_tree(fixed.tree)
    ref = json.loads((folder / "ref_en.json").read_text(encoding="utf-8"))
    text = json.loads((CORPUS / "text" / "en.json").read_text(encoding="utf-8"))[0]
    assert tok.encode(text) == ref["special"][0]
    assert any(x.path == "(file)" for x in fixed.losses)  # says what it could not check


# --- the program layout --------------------------------------------------------------------------

def test_program_never_misread_and_pad_inserts_nothing():
    for tpl in ([1, 2, "A", 3], [5, "A", 6, 7], ["A", 1, 2, 3], [1, "A", 2], ["A"], [4, "A"]):
        ops = program(tpl)
        assert not misread_by_mnn(ops)
        tree = t.MtokFile(post_processor=t.PostProcessorProgram(ops), chat_template="", eos_token="", flags=0,
                          bos_token="")
        from mtokspec.runtime.mnn.tokenizer import post_program_ops

        read = [op for op in post_program_ops(tree.post_processor) if op is None or op >= 0]
        # an empty program (HF's template is the text alone) is read as sequence A alone
        assert read == [None if x == "A" else x for x in tpl]
    assert program([1, 2, "A", 3])[-1] == t.SpecialTokenOp(NOOP_ID)


# --- tokenizers trained here, one per component --------------------------------------------------

def _trained(tmp_path: Path, name: str, *, pre=None, norm=None, post=None, dec=None, wordpiece=False) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from mtokspec.convert.mnn_target.reference import BASE_TEXTS

    specials = ["[UNK]", "<s>", "</s>", "<|a|>", "<|b|>"]
    if wordpiece:
        tk = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials)
    else:
        tk = Tokenizer(models.BPE())
        alphabet = pre_tokenizers.ByteLevel.alphabet() if isinstance(pre, pre_tokenizers.ByteLevel) else []
        trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=specials, initial_alphabet=alphabet)
    if pre is not None:
        tk.pre_tokenizer = pre
    if norm is not None:
        tk.normalizer = norm
    tk.train_from_iterator(list(BASE_TEXTS) * 3, trainer)
    if post is not None:
        tk.post_processor = post
    if dec is not None:
        tk.decoder = dec
    d = tmp_path / name
    d.mkdir()
    tk.save(str(d / "tokenizer.json"))
    return d


def _components():
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers, processors

    template = processors.TemplateProcessing(single="<s> <|a|> $A </s>", special_tokens=[
        ("<s>", 1), ("<|a|>", 3), ("</s>", 2)])
    return {
        "whitespace": dict(pre=pre_tokenizers.Whitespace()),
        "whitespace_split": dict(pre=pre_tokenizers.WhitespaceSplit(), dec=decoders.WordPiece(prefix="##")),
        "punctuation_digits": dict(pre=pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                                pre_tokenizers.Punctuation(),
                                                                pre_tokenizers.Digits(individual_digits=False)])),
        "metaspace_nfkd": dict(pre=pre_tokenizers.Metaspace(), norm=normalizers.NFKD(), dec=decoders.Metaspace()),
        "byte_level_roberta": dict(pre=pre_tokenizers.ByteLevel(add_prefix_space=False), dec=decoders.ByteLevel(),
                                   post=processors.RobertaProcessing(("</s>", 2), ("<s>", 1))),
        "template_misread_lowercase": dict(pre=pre_tokenizers.Whitespace(), norm=normalizers.Lowercase(),
                                           post=template),
        "regex_replace_decoders": dict(pre=pre_tokenizers.Metaspace(), dec=decoders.Sequence([
            decoders.Replace(Regex("\u2581"), " "), decoders.Replace(Regex(" +"), " ")])),
        "bert_wordpiece": dict(pre=pre_tokenizers.BertPreTokenizer(), norm=normalizers.BertNormalizer(),
                               dec=decoders.WordPiece(), wordpiece=True,
                               post=processors.BertProcessing(("</s>", 2), ("<s>", 1))),
    }


def _other_texts() -> list[str]:
    """Texts the report does not probe: the corpus texts when present, else variations."""
    if CORPUS.is_dir():
        out: list[str] = []
        for ts in ("en", "edge", "mixed"):
            out += json.loads((CORPUS / "text" / f"{ts}.json").read_text(encoding="utf-8"))
        return out
    from mtokspec.convert.mnn_target.reference import random_texts

    return random_texts(["<s>", "</s>", "<|a|>"], n=300, seed=12345)


@pytest.mark.parametrize("component", list(_components()))
def test_trained_component(tmp_path, component):
    folder = _trained(tmp_path, component, **_components()[component])
    result = from_hf(folder, target="mnn")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = MnnTokenizer.from_tree(result.tree)
    lost = {loss.output for loss in _mnn_losses(result)}
    for text in _other_texts():
        ids, want = _hf_answers(hf, text)
        got = _answers(tok, text, ids)
        for o in OUTPUTS:
            assert got[o] == want[o] or o in lost, (component, o, text)
    for loss in _mnn_losses(result):
        ids, want = _hf_answers(hf, loss.text)
        assert _answers(tok, loss.text, ids)[loss.output] != want[loss.output], loss


# --- Hypothesis: random text where the report lists no encode loss -------------------------------

def _no_encode_loss_files() -> list[str]:
    dev = [str(CORPUS / "tok" / n) for n in NAMES] if CORPUS.is_dir() else []
    return dev + [str(FIXTURES / "precompiled_caps")]


_TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=3)), min_size=1, max_size=8).map("".join)


@pytest.mark.parametrize("component", list(_components()))
def test_random_text_agrees_where_no_encode_loss_trained(tmp_path, component):
    test_random_text_agrees_where_no_encode_loss(str(_trained(tmp_path, component, **_components()[component])))


@pytest.mark.parametrize("folder", _no_encode_loss_files(), ids=lambda f: Path(f).name)
def test_random_text_agrees_where_no_encode_loss(folder):
    result = _target(folder)
    if any(loss.output in ("encode", "raw") for loss in _mnn_losses(result)):
        pytest.skip("the report lists an encode loss for this file")
    hf = tokenizers.Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    tok = MnnTokenizer.from_tree(result.tree)

    @settings(max_examples=60, deadline=None, database=None)
    @given(_TEXT)
    def agree(text):
        text = text.encode("utf-8", "replace").decode("utf-8") if any(0xD800 <= ord(c) < 0xE000 for c in text) else text
        assert tok.encode(text) == hf.encode(text).ids
        assert tok.encode(text, add_special_tokens=False) == hf.encode(text, add_special_tokens=False).ids

    agree()


# --- Precompiled -------------------------------------------------------------------------------------

def test_precompiled_runs_the_char_map_as_hf():
    from mtokspec.runtime.hf.precompiled import charsmap_from_json

    folder = FIXTURES / "precompiled_caps"
    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    cm = charsmap_from_json(tj["normalizer"])
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in ["A", "Hello World", "ＦＵ", "e\u0301te\u0301", "x\u200by\u3000z", "Ae\u0301", "É"]:
        assert cm.normalize(text) == hf.normalizer.normalize_str(text), text
    assert cm.normalize("A") == "Ua"
    # the exporter's prefix probe runs the map: encode("A") ends in a piece that decodes to "a", so no
    # prefix ids (as transformers gives MNN's exporter); reading "A" unchanged gave [1, 4]
    tree = from_hf(folder).tree
    assert tree.header.prefix == []
    assert hf.decode(hf.encode("A").ids[-1:]) != "A"


@needs_corpus
def test_precompiled_t5_per_code_point_table():
    from mtokspec.runtime.hf.precompiled import charsmap_from_json

    tj = json.loads((CORPUS / "tok" / "t5-small" / "tokenizer.json").read_text(encoding="utf-8"))
    cm = charsmap_from_json(tj["normalizer"])
    table = dict(cm.per_code_point())
    assert table[0x8F] == b"" and table[0x200B] == b" " and table[0xFF21] == b"A"
    hf = tokenizers.normalizers.Precompiled(__import__("base64").b64decode(tj["normalizer"]["precompiled_charsmap"]))
    texts = json.loads((CORPUS / "text" / "edge.json").read_text(encoding="utf-8"))
    for text in texts:
        assert cm.normalize(text) == hf.normalize_str(text)


def test_precompiled_refuses_a_malformed_blob():
    from mtokspec.runtime.hf.precompiled import CharsMap, PrecompiledError

    with pytest.raises(PrecompiledError):
        CharsMap(b"\x01")
    with pytest.raises(PrecompiledError):
        CharsMap(b"\xff\x00\x00\x00abcd")


# --- goldens -------------------------------------------------------------------------------------

@needs_corpus
@pytest.mark.parametrize("name", NAMES)
def test_goldens_basic_lines_are_hf(tmp_path, name):
    from mtokspec.convert.mnn_target.goldens import goldens, jsonl

    folder = CORPUS / "tok" / name
    made, _ = goldens(folder)
    # one object a line, lines cut at "\n" only (texts hold U+2028, U+0085)
    lines = [json.loads(x) for x in jsonl(made).split("\n") if x]
    assert lines == made and lines
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert lines[0]["type"] == "meta" and lines[0]["reference"].startswith("HF tokenizers ")
    for x in lines[1:]:
        if x["type"] == "basic":
            assert set(x) == {"type", "input", "ids_raw", "ids_full", "decoded_full"}
            assert x["ids_raw"] == hf.encode(x["input"], add_special_tokens=False).ids
            assert x["ids_full"] == hf.encode(x["input"]).ids
            assert x["decoded_full"] == hf.decode(x["ids_raw"], skip_special_tokens=False)
        else:
            assert set(x) == {"type", "name", "messages", "add_generation_prompt", "formatted_text"}


@needs_corpus
def test_goldens_chat_lines_are_transformers_renderings(tmp_path):
    from mtokspec.convert.mnn_target.goldens import goldens

    checked = 0
    for path in sorted((CORPUS / "chat").glob("*.json"))[:12]:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "cases" not in data or (data.get("template_kwargs") or {}).keys() - {
                "bos_token", "eos_token"}:
            continue
        cases = [c for c in data["cases"] if "expected" in c and set(c) <= {"conversation", "messages",
                                                                            "add_generation_prompt", "expected"}]
        if not cases:
            continue
        folder = tmp_path / path.stem
        folder.mkdir()
        (folder / "tokenizer.json").write_bytes((CORPUS / "tok" / "tokenizer-wiki" / "tokenizer.json").read_bytes())
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"chat_template": data["template"], "bos_token": data.get("bos_token"),
             "eos_token": data.get("eos_token")}), encoding="utf-8")
        convs = [{"name": f"c{i}", "messages": c["messages"], "add_generation_prompt": c["add_generation_prompt"]}
                 for i, c in enumerate(cases)]
        lines, _ = goldens(folder, texts=[], conversations=convs, strftime_now=data.get("strftime_now_frozen_to"))
        chat = [x for x in lines if x["type"] == "chat"]
        assert [x["formatted_text"] for x in chat] == [c["expected"] for c in cases], path.name
        checked += len(chat)
    assert checked


def test_cli_convert_goldens_fix(tmp_path):
    from mtokspec.cli import main

    folder = FIXTURES / "precompiled_caps"
    out = tmp_path / "tokenizer.mtok"
    # MNN differs from HF on some probes of this folder (a Precompiled map, the stream decode):
    # written, exit EXIT_DIFFERS
    from mtokspec.cli.convert import EXIT_DIFFERS

    assert main(["convert", str(folder), "--target", "mnn", "-o", str(out)]) == EXIT_DIFFERS == 3
    assert out.is_file()
    assert main(["goldens", str(folder), "-o", str(tmp_path / "test_cases.jsonl")]) == 0
    assert (tmp_path / "test_cases.jsonl").read_text(encoding="utf-8").count('"type": "basic"') >= 10
    assert main(["fix", str(out), "--against", str(folder), "-o", str(tmp_path / "fixed.mtok")]) == EXIT_DIFFERS
    assert (tmp_path / "fixed.mtok").read_bytes() == out.read_bytes()
    assert main(["goldens", str(tmp_path / "missing"), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert not (tmp_path / "x.jsonl").exists()


@needs_corpus
def test_the_target_record_covers_every_folder():
    """The README's table of MNN's own answers (``benchmarks/records/mnn_target.json``) has both files
    of every corpus folder, each over every corpus case."""
    record = json.loads((ROOT / "benchmarks" / "records" / "mnn_target.json").read_text(encoding="utf-8"))
    cases = sum(len(json.loads((CORPUS / "text" / f"{ts}.json").read_text(encoding="utf-8"))) for ts in TEXT_SETS)
    assert {(r["tokenizer"], r["file"]) for r in record["rows"]} == {
        (d.name, f) for d in (CORPUS / "tok").iterdir() if d.is_dir() for f in ("exporter", "--target mnn")}
    assert all(r["cases"] == cases and "passed" in r["test_tokenizer"] for r in record["rows"])


def test_chat_template_is_rewritten_for_mnn():
    from dataclasses import replace

    from mtokspec.chat.rewrite import rewrite_for_mnn
    from mtokspec.convert.mnn_target.chat import with_chat_template_for_mnn

    tree = from_hf(FIXTURES / "precompiled_caps").tree
    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}{{ messages|first }}"
    out, losses = with_chat_template_for_mnn(replace(tree, chat_template=template, bos_token="<s>",
                                                     eos_token="</s>"))
    done = rewrite_for_mnn(template, bos_token="<s>", eos_token="</s>")
    assert out.chat_template == done.template != template
    assert [loss.what for loss in losses] == [f"{x.message} [{x.code}]" for x in done.losses]
    assert with_chat_template_for_mnn(replace(tree, chat_template="")) == (replace(tree, chat_template=""), [])

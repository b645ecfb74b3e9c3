"""``Tokenizer.stream()`` and the hold table: joined output = HF ``tokenizers``' decode, each step the
part of the prefix's decode that is final (``docs/design/streaming.md``).

Oracles: real HF ``tokenizers`` on every corpus ``tokenizer.json`` (HF's ``no_special`` ids of
every corpus text) and on the trained fixtures; its own ``DecodeStream``; mtokspec's HF decode on
generated trees (every decoder chain the strategies make).
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import tree as t
from mtokspec.runtime.hf.stream import HoldTable, TableStream, stream as hf_stream
from tests._support import CORPUS, ROOT

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is the oracle of the stream")

NAMES = ["bert-base-cased-derived", "phi-3-mini", "roberta-base", "t5-small", "tokenizer-wiki", "whisper.tiny"]
TEXTS = ["en", "zh", "code", "edge", "mixed"]
needs_corpus = pytest.mark.skipif(not (CORPUS / "tok").is_dir(), reason="the reference corpus (../shared/corpus) is absent")


@lru_cache(maxsize=None)
def corpus_tok(name: str):
    if name == "tokenizer-wiki":  # the exporter's file cannot hold its no-decoder join: --target mnn can
        return mtokspec.Tokenizer.from_tree(mtokspec.convert.from_hf(CORPUS / "tok" / name, target="mnn").tree)
    return mtokspec.Tokenizer.from_file(CORPUS / "tok" / name / "mnn.mtok")


@lru_cache(maxsize=None)
def oracle(name: str):
    return tokenizers.Tokenizer.from_file(str(CORPUS / "tok" / name / "tokenizer.json"))


def corpus_ids(name: str, key: str = "no_special") -> list[list[int]]:
    out = []
    for text in TEXTS:
        out += json.loads((CORPUS / "tok" / name / f"ref_{text}.json").read_text(encoding="utf-8"))[key]
    return out


def run(s, ids) -> list[str]:
    return [s.step(i) for i in ids] + [s.flush()]


def json_table(tok) -> HoldTable:
    """The table as an app gets it: through JSON text, nothing else."""
    return HoldTable.from_json(json.loads(json.dumps(tok.hold_table().to_json())))


@needs_corpus
@pytest.mark.parametrize("name", NAMES)
def test_corpus_joined_is_hf_decode(name):
    """Every corpus text's HF ids (without and with special tokens), both skip_special_tokens values:
    the stream and the loop over the JSON table join to HF tokenizers' decode; each step's text so far is a prefix of HF's decode of
    the prefix, and equals it whenever nothing is pending (no U+FFFD end, no open byte run)."""
    tok, hf = corpus_tok(name), oracle(name)
    table = json_table(tok)
    assert isinstance(tok.stream(), TableStream)
    cases = corpus_ids(name)
    assert len(cases) == 946
    for n, ids in enumerate(cases):
        for skip in (False, True):
            want = hf.decode(ids, skip_special_tokens=skip)
            assert "".join(run(tok.stream(skip), ids)) == want, (name, n, skip)
            assert "".join(run(TableStream(table, skip), ids)) == want, (name, n, skip)
    for ids in corpus_ids(name, "special"):  # HF's ids with special tokens: the first-id rules after a skipped one
        for skip in (False, True):
            assert "".join(run(tok.stream(skip), ids)) == hf.decode(ids, skip_special_tokens=skip)
    for ids in cases[::9]:  # every step of every ninth case against HF's decode of the prefix
        s = tok.stream()
        so_far = ""
        for k, i in enumerate(ids, 1):
            so_far += s.step(i)
            prefix = hf.decode(ids[:k], skip_special_tokens=False)
            assert prefix.startswith(so_far)
            last = hf.id_to_token(i) or ""
            if not prefix.endswith("\ufffd") and not (len(last) == 6 and last.startswith("<0x")):
                assert so_far == prefix, (ids[:k], so_far, prefix)


@needs_corpus
@pytest.mark.parametrize("name", ["bert-base-cased-derived", "roberta-base", "t5-small", "whisper.tiny", "phi-3-mini"])
def test_corpus_against_hf_decode_stream(name):
    """HF's own DecodeStream: on WordPiece and Metaspace files each step prints the same; on byte-level
    files ours prints a complete space before an incomplete character where HF waits for the
    character, and on byte-fallback files ours waits for a <0xHH> run to end (see the design)."""
    DecodeStream = pytest.importorskip("tokenizers.decoders").DecodeStream
    tok, hf = corpus_tok(name), oracle(name)
    same = 0
    cases = corpus_ids(name)
    for ids in cases:
        ds, s = DecodeStream(skip_special_tokens=False), tok.stream()
        theirs, ours = [ds.step(hf, i) or "" for i in ids], [s.step(i) for i in ids]
        final = hf.decode(ids, skip_special_tokens=False)
        assert final.startswith("".join(theirs)) and "".join(ours) + s.flush() == final
        same += theirs == ours
    if name in ("bert-base-cased-derived", "t5-small"):
        assert same == len(cases)


def test_byte_run_is_held_where_hf_decode_stream_prints_early():
    """<0x0A> alone decodes to a newline, but <0x0A><0x80> (one run, not UTF-8 as a whole) to two
    U+FFFD: the newline is not final until the run ends, so the stream holds it."""
    tok = mtokspec.Tokenizer.from_tree(_byte_fallback_tree())
    nl, cont, a = tok.token_to_id("<0x0A>"), tok.token_to_id("<0x80>"), tok.token_to_id("a")
    s = tok.stream()
    assert [s.step(nl), s.step(cont), s.step(a), s.flush()] == ["", "", "\ufffd\ufffda", ""]
    assert tok.decode([nl, cont, a]) == "\ufffd\ufffda"
    s = tok.stream()
    assert [s.step(nl), s.step(a)] == ["", "\na"]
    table = tok.hold_table().to_json()
    row = next(r for r in table["tokens"] if r["id"] == nl)
    assert row["next"] == 0x0A and "byte-fallback" in row["hold"]


def _byte_fallback_tree() -> t.MtokFile:
    pieces = ["<unk>", "a", "▁a", "▁"] + [f"<0x{b:02X}>" for b in range(256)]
    vocab = sorted((p.encode(), i) for i, p in enumerate(pieces))
    return t.MtokFile(
        header=t.make_header(special=[0]),
        pre_tokenizer=t.NoPreTokenizer(),
        model=t.BPEModel(vocab=vocab, merges=[]),
        decoder=t.SequenceDecoder([t.ReplaceDecoder("▁", " "), t.ByteFallbackDecoder(), t.FuseDecoder(),
                                   t.StripDecoder(" ", 1, 0)]))


# --- trained fixtures: real HF tokenizers as the oracle ------------------------------------------

from tests._support.trained_fixtures import FIXTURES, pair, texts  # noqa: E402


@pytest.mark.parametrize("name", sorted(FIXTURES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_trained_fixtures(name, data):
    """Texts of every Unicode class encoded by HF, and random id sequences (broken UTF-8, byte runs cut
    anywhere): joined = HF's decode; every step a prefix of HF's decode of the prefix."""
    hf, ours = pair(name)
    n = hf.get_vocab_size(with_added_tokens=True)
    if data.draw(st.booleans()):
        ids = hf.encode(data.draw(texts), add_special_tokens=data.draw(st.booleans())).ids
    else:
        ids = data.draw(st.lists(st.integers(0, n - 1), max_size=16))
    skip = data.draw(st.booleans())
    s = ours.stream(skip)
    so_far = ""
    for k, i in enumerate(ids, 1):
        so_far += s.step(i)
        assert hf.decode(ids[:k], skip_special_tokens=skip).startswith(so_far)
    assert so_far + s.flush() == hf.decode(ids, skip_special_tokens=skip)
    try:
        table = json_table(ours)
    except mtokspec.TokenizerError:
        return
    assert "".join(run(TableStream(table, skip), ids)) == hf.decode(ids, skip_special_tokens=skip)


# --- generated trees: every decoder chain, mtokspec's HF decode as the oracle ----------------------

BYTE_TOKENS = ["<0x41>", "<0xE4>", "<0xB8>", "<0xAD>", "<0x80>", "<0x20>", "▁", " ", "##a", "\u2581x", "ab"]


@st.composite
def trees_and_ids(draw):
    tree = draw(mtokspec.strategies.mtok_files())
    try:
        vocab = mtokspec.Tokenizer.from_tree(tree).get_vocab()
    except mtokspec.TokenizerError:
        assume(False)
    base = max(list(vocab.values()) + [a.id for a in tree.added_tokens] + [0]) + 1
    extra = [t.AddedToken(id=base + k, special=draw(st.booleans()), lstrip=False, rstrip=False, content=c)
             for k, c in enumerate(BYTE_TOKENS)]
    tree.added_tokens = [a for a in tree.added_tokens if a.content not in BYTE_TOKENS] + extra
    ids = sorted(set(vocab.values()) | {a.id for a in tree.added_tokens})
    seq = draw(st.lists(st.sampled_from(ids), max_size=12))
    return tree, seq


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=trees_and_ids(), skip=st.booleans())
def test_generated_decoders(case, skip):
    """On any decoder chain: joined = decode(ids), each step a prefix of the prefix's decode, and
    where the chain has a table, the JSON loop gives the same steps as the stream."""
    tree, ids = case
    try:
        tok = mtokspec.Tokenizer.from_tree(tree)
        whole = tok.decode(ids, skip)
        prefixes = [tok.decode(ids[:k], skip) for k in range(1, len(ids) + 1)]
    except mtokspec.TokenizerError:
        assume(False)
    s = tok.stream(skip)
    so_far = ""
    for i, prefix in zip(ids, prefixes):
        so_far += s.step(i)
        assert prefix.startswith(so_far)
    assert so_far + s.flush() == whole
    if isinstance(s, TableStream):
        assert run(TableStream(json_table(tok), skip), ids) == run(hf_stream(tok, skip), ids)


# --- the mnn semantics -----------------------------------------------------------------------------

MNN_FILES = [f"{n}/{f}" for n in NAMES for f in ("mnn.mtok", "mnn.txt") if (CORPUS / "tok" / n / f).is_file()]


@needs_corpus
@pytest.mark.parametrize("path", MNN_FILES)
def test_mnn_stream_joins_to_mnn_decode(path):
    """The mnn semantics: the stream of HF's ids joins to MNN's Tokenizer::decode(ids), each step a
    prefix of the prefix's decode (the engine's per-id print stays decode_stream)."""
    tok = mtokspec.Tokenizer.from_file(CORPUS / "tok" / path, semantics="mnn")
    name = path.split("/")[0]
    for ids in corpus_ids(name)[::3]:
        s = tok.stream()
        so_far = ""
        for k, i in enumerate(ids, 1):
            so_far += s.step(i)
            if k % 7 == 0:
                assert tok.decode(ids[:k]).startswith(so_far)
        assert so_far + s.flush() == tok.decode(ids)


def test_stream_refuses_non_int_ids():
    tok = mtokspec.Tokenizer.from_file("examples/tiny.mtok")
    for semantics in ("hf", "mnn"):
        s = mtokspec.Tokenizer.from_file("examples/tiny.mtok", semantics=semantics).stream()
        with pytest.raises(mtokspec.ArgumentTypeError):
            s.step("7")  # type: ignore[arg-type]
    assert isinstance(tok.stream(), mtokspec.tokenizer.TextStream)


# --- the API function and the command line ---------------------------------------------------------

def test_hold_table_api_and_cli(tmp_path, capsys):
    from mtokspec.cli import main

    doc = mtokspec.hold_table("examples/tiny.mtok")
    assert doc["format"] == "mtokspec-hold-table" and doc["version"] == 1 and doc["algorithm"]
    assert doc["utf8"] == "bytes" and len(doc["tokens"]) == 420
    assert doc == mtokspec.hold_table(mtokspec.Tokenizer.from_file("examples/tiny.mtok"))
    with pytest.raises(mtokspec.ArgumentTypeError):
        mtokspec.hold_table(mtokspec.Tokenizer.from_file("examples/tiny.mtok", semantics="mnn"))
    out = tmp_path / "hold.json"
    assert main(["hold-table", "examples/tiny.mtok", "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == doc
    assert "420 ids" in capsys.readouterr().err
    # a decoder that acts across tokens: no table, one line, exit 2
    tree = mtokspec.parse(open("examples/tiny.mtok", "rb").read())
    tree.decoder = t.SequenceDecoder([t.FuseDecoder(), t.ReplaceDecoder("ab", "X")])
    bad = tmp_path / "across.mtok"
    bad.write_bytes(mtokspec.build(tree))
    assert main(["hold-table", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Replace on the whole text" in err
    tok = mtokspec.Tokenizer.from_tree(tree)
    ids = tok.encode("a b ab")
    s = tok.stream()
    assert [s.step(i) for i in ids] == [""] * len(ids) and s.flush() == tok.decode(ids)


def test_stream_cli(capsys):
    from mtokspec.cli import main

    tok = mtokspec.Tokenizer.from_file("examples/tiny.mtok")
    ids = tok.encode("Hi 你好")
    assert main(["stream", "examples/tiny.mtok", *map(str, ids), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in steps[:-1]] == ids and "".join(x.get("text", x.get("flush")) for x in steps) == "Hi 你好"
    assert "" in [x["text"] for x in steps[:-1]]  # a piece of a character: held
    assert main(["stream", "examples/tiny.mtok", *map(str, ids), "--runtime", "mnn"]) == 0
    assert capsys.readouterr().out == "Hi 你好\n"


@pytest.mark.parametrize("doc", [None, {}, {"format": "mtokspec-hold-table", "version": 1},
                                 {"format": "mtokspec-hold-table", "version": 1, "utf8": "text", "strip": None,
                                  "tokens": [{"id": 1, "next": "zz"}]},
                                 {"format": "mtokspec-hold-table", "version": 1, "utf8": "utf16", "strip": None,
                                  "tokens": []},
                                 {"format": "mtokspec-hold-table", "version": 1, "utf8": "text", "strip": None,
                                  "tokens": [{"id": 1, "next": 300}]}])
def test_malformed_table_documents_are_refused(doc):
    with pytest.raises(mtokspec.TokenizerError):
        HoldTable.from_json(doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=trees_and_ids(), flag=st.booleans())
def test_generated_decoders_mnn(case, flag):
    """The mnn semantics on any decoder chain (and the clean-up flag either way): joined = MNN's
    sequence decode, each step a prefix of the prefix's decode, never a refusal of printed text."""
    tree, ids = case
    tree.flags = int(flag)
    try:
        tok = mtokspec.Tokenizer.from_tree(tree, semantics="mnn")
        whole = tok.decode(ids)
        prefixes = [tok.decode(ids[:k]) for k in range(1, len(ids) + 1)]
    except mtokspec.TokenizerError:
        assume(False)
    s = tok.stream()
    so_far = ""
    for i, prefix in zip(ids, prefixes):
        so_far += s.step(i)
        assert prefix.startswith(so_far)
    assert so_far + s.flush() == whole


# --- the loop written from the JSON alone, in another language --------------------------------------

NODE = __import__("shutil").which("node")


@needs_corpus
@pytest.mark.skipif(NODE is None, reason="node (for examples/stream_loop.js) is not installed")
@pytest.mark.parametrize("name", NAMES)
def test_javascript_loop_from_the_json(name, tmp_path):
    """examples/stream_loop.js, written from the table's header only: on every corpus tokenizer's
    table, each case's steps are the Python stream's and join to HF's decode."""
    import subprocess

    tok, hf = corpus_tok(name), oracle(name)
    table = tmp_path / "hold.json"
    table.write_text(json.dumps(tok.hold_table().to_json()), encoding="utf-8")
    cases = [{"ids": ids, "skip": skip} for ids in corpus_ids(name)[::4] + corpus_ids(name, "special")[::16]
             for skip in (False, True)]
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run([NODE, str(ROOT / "examples" / "stream_loop.js"), str(table), "--cases", str(tmp_path / "cases.json")],
                          capture_output=True, text=True, check=True, encoding="utf-8")
    for case, steps in zip(cases, json.loads(done.stdout), strict=True):
        assert steps == run(tok.stream(case["skip"]), case["ids"])
        assert "".join(steps) == hf.decode(case["ids"], skip_special_tokens=case["skip"])

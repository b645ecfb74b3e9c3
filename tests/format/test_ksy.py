"""generated/mtok.ksy: the Kaitai compiler accepts it, and Kaitai's parsers read what mtokspec reads.

Needs node and the pinned compiler (``npm ci --prefix tools/ksc``, which ``.ci/run`` does); the
Python parser also needs the ``kaitaistruct`` runtime (the ``test`` extra).  Without them the tests
skip with the reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import warnings

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies
from mtokspec.errors import MtokFormatError
from tests._support import CORPUS, ROOT, corpus_mtok_files
from tests._support.golden import GOLDEN, de_hex
from tests._support.kaitai_plain import first_difference, js_value, kaitai_plain, kaitai_txt_plain, tree_plain

KSC = ROOT / "tools" / "ksc"
KSY = ROOT / "generated" / "mtok.ksy"
TXT_KSY = ROOT / "generated" / "tokenizer_txt.ksy"
TARGETS = ("python", "javascript", "cpp_stl", "java")
CORPUS_FILES = corpus_mtok_files()
CORPUS_TXT_FILES = sorted(CORPUS.glob("tok/*/mnn.txt")) if CORPUS.is_dir() else []


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The compiler's output for every target (compiled once for this module)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the Kaitai compiler is a JavaScript program)")
    if not (KSC / "node_modules" / "kaitai-struct-compiler").is_dir():
        pytest.skip("kaitai-struct-compiler is not installed: run `npm ci --prefix tools/ksc`")
    out = tmp_path_factory.mktemp("ksc")
    for ksy in (KSY, TXT_KSY):
        run = subprocess.run(["node", str(KSC / "compile.js"), str(ksy), str(out), *TARGETS],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert "0 warning(s)" in run.stdout, run.stdout + run.stderr
    return out


def load_parser(compiled, module_name: str, class_name: str):
    """A root class of the Kaitai-generated Python parsers."""
    pytest.importorskip("kaitaistruct", reason="the kaitaistruct runtime is in the test extra")
    spec = importlib.util.spec_from_file_location(f"ksc_{module_name}", compiled / "python" / f"{module_name}.py")
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        # ksc 0.11 copies the docs into Python docstrings unescaped: "Split('\\s+', 0, 1)" warns
        warnings.filterwarnings("ignore", "invalid escape sequence", DeprecationWarning)
        spec.loader.exec_module(module)
    return getattr(module, class_name)


@pytest.fixture(scope="module")
def kaitai_mtok(compiled):
    return load_parser(compiled, "mtok_file", "MtokFile")


@pytest.fixture(scope="module")
def kaitai_txt(compiled):
    return load_parser(compiled, "tokenizer_txt_file", "TokenizerTxtFile")


def test_compiler_writes_every_target(compiled):
    for target in TARGETS:
        assert any((compiled / target).iterdir()), target
    assert "class MtokFile" in (compiled / "python" / "mtok_file.py").read_text()
    assert "class TokenizerTxtFile" in (compiled / "python" / "tokenizer_txt_file.py").read_text()


def kaitai_tree(kaitai_mtok, data: bytes):
    return kaitai_plain(kaitai_mtok.from_bytes(data))


def assert_agree(kaitai_mtok, data: bytes) -> None:
    expected = tree_plain(mtokspec.parse(data))
    difference = first_difference(expected, kaitai_tree(kaitai_mtok, data))
    assert difference is None, difference


@pytest.mark.skipif(not CORPUS_FILES, reason="reference corpus not found at ../shared/corpus")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.parent.name for p in CORPUS_FILES])
def test_python_parser_agrees_on_corpus(kaitai_mtok, path):
    assert_agree(kaitai_mtok, path.read_bytes())


def test_python_parser_agrees_on_the_golden_file(kaitai_mtok):
    assert_agree(kaitai_mtok, de_hex((GOLDEN / "small.mtok.hex").read_text(encoding="utf-8")))


@settings(max_examples=60)
@given(data=strategies.mtok_bytes(valid=False))
def test_python_parser_agrees_on_generated_files(kaitai_mtok, data):
    assert_agree(kaitai_mtok, data)


@pytest.mark.parametrize("cls", [
    cls for union in ("Normalizer", "PreTokenizer", "Decoder", "Model", "PostOp")
    for cls in mtokspec.format.tree.UNIONS[union]
] + ["PostProcessorProgram", "LegacyPostProcessor"])
@settings(max_examples=10)
@given(data=st.data())
def test_python_parser_agrees_on_every_variant(kaitai_mtok, cls, data):
    """Each variant placed where it lives in a file (hypothesis's whole files may miss a rare one)."""
    node = data.draw(strategies.variants(getattr(mtokspec.format.tree, cls)))
    assert_agree(kaitai_mtok, mtokspec.build(file_with(cls, node)))


SECTIONS = {"Normalizer": "normalizer", "PreTokenizer": "pre_tokenizer", "Model": "model", "Decoder": "decoder",
            "PostProcessor": "post_processor"}


def file_with(cls: str, node):
    """The smallest file holding ``node`` where its class lives."""
    t = mtokspec.format.tree
    if cls in ("SequenceOp", "SpecialTokenOp"):
        cls, node = "PostProcessorProgram", t.PostProcessorProgram(ops=[node])
    section = SECTIONS[t.VARIANTS[cls][0]]
    if section == "post_processor":  # the last optional section: the ones before it must be present
        return t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="", post_processor=node)
    return t.MtokFile(**{section: node})


def read_or_none(parse, data: bytes):
    """What ``parse`` reads, or None when it fails (each parser fails in its own way: that it fails
    is the point)."""
    try:
        return parse(data)
    except Exception:
        return None


@settings(max_examples=20)
@given(data=strategies.mtok_bytes())
def test_truncated_files_fail_in_kaitai_too(kaitai_mtok, data):
    """Every cut of a file: Kaitai fails where mtokspec fails, and agrees where it reads (a cut at a
    section boundary is a valid file without the optional sections after it)."""
    for end in range(len(data)):
        cut = data[:end]
        try:
            expected = tree_plain(mtokspec.parse(cut))
        except MtokFormatError:
            assert read_or_none(lambda b: kaitai_tree(kaitai_mtok, b), cut) is None, end
        else:
            assert first_difference(expected, kaitai_tree(kaitai_mtok, cut)) is None, end


@pytest.mark.skipif(not CORPUS_FILES, reason="reference corpus not found at ../shared/corpus")
def test_truncated_corpus_file_fails_in_kaitai(kaitai_mtok):
    data = CORPUS_FILES[0].read_bytes()
    for end in (5, 20, len(data) // 3, len(data) // 2, len(data) - 1):
        with pytest.raises(MtokFormatError):
            mtokspec.parse(data[:end])
        assert read_or_none(lambda b: kaitai_tree(kaitai_mtok, b), data[:end]) is None, end


def node_trees(compiled, paths, root: str = "MtokFile") -> list[dict]:
    """What the Kaitai-generated JavaScript parser reads from each file (tools/ksc/dump.js)."""
    env = {**os.environ, "NODE_PATH": str(KSC / "node_modules")}
    run = subprocess.run(["node", str(KSC / "dump.js"), str(compiled / "javascript" / f"{root}.js"), root,
                          *map(str, paths)], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    # one JSON document per "\n" (str.splitlines would also split at U+2028, U+0085... inside strings)
    return [json.loads(line) for line in run.stdout.split("\n") if line]


@pytest.mark.skipif(not CORPUS_FILES, reason="reference corpus not found at ../shared/corpus")
def test_javascript_parser_agrees_on_corpus(compiled):
    for path, line in zip(CORPUS_FILES, node_trees(compiled, CORPUS_FILES), strict=True):
        assert line["ok"], (path, line.get("error"))
        expected = tree_plain(mtokspec.parse(path.read_bytes()))
        difference = first_difference(expected, kaitai_plain(js_value(line["tree"])))
        assert difference is None, (path.parent.name, difference)


# no shrinking: each example is a node run of 62 files, and a shrink would take minutes
@settings(max_examples=3, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_javascript_parser_agrees_on_generated_and_truncated_files(compiled, tmp_path_factory, data):
    """A hypothesis file of every variant and a cut of each, in one node run per example: the cut
    fails where mtokspec refuses it and reads the same where it is a valid file."""
    t = mtokspec.format.tree
    files = []
    for union in SECTIONS:
        for cls in t.UNIONS[union]:
            whole = mtokspec.build(file_with(cls, data.draw(strategies.variants(getattr(t, cls)))))
            files += [whole, whole[: data.draw(st.integers(0, len(whole) - 1))]]
    folder = tmp_path_factory.mktemp("js")
    paths = [folder / f"{i}.mtok" for i in range(len(files))]
    for path, blob in zip(paths, files, strict=True):
        path.write_bytes(blob)
    for blob, line in zip(files, node_trees(compiled, paths), strict=True):
        try:
            expected = tree_plain(mtokspec.parse(blob))
        except MtokFormatError:
            assert not line["ok"], blob
            continue
        assert line["ok"], (blob, line.get("error"))
        difference = first_difference(expected, kaitai_plain(js_value(line["tree"])))
        assert difference is None, (blob, difference)


def test_readme_javascript_example_reads_the_vocabulary_size(compiled, tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```js\n(.*?)```", text, re.S)
    (tmp_path / "vocab_size.js").write_text(block, encoding="utf-8")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "ksc").symlink_to(compiled)
    example = ROOT / "examples" / "tiny.mtok"
    env = {**os.environ, "NODE_PATH": str(KSC / "node_modules")}
    run = subprocess.run(["node", "vocab_size.js", str(example)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    tree = mtokspec.parse(example.read_bytes())
    assert run.stdout.splitlines()[0] == (f"BPE_MODEL: {len(tree.model.vocab)} tokens, {len(tree.model.merges)} merges, "
                                          f"{len(tree.added_tokens)} added tokens")


def assert_txt_agrees(kaitai_txt, data: bytes) -> None:
    expected = tree_plain(mtokspec.parse(data))
    difference = first_difference(expected, kaitai_txt_plain(kaitai_txt.from_bytes(data)))
    assert difference is None, difference


@pytest.mark.skipif(not CORPUS_TXT_FILES, reason="reference corpus not found at ../shared/corpus")
@pytest.mark.parametrize("path", CORPUS_TXT_FILES, ids=[p.parent.name for p in CORPUS_TXT_FILES])
def test_python_parser_agrees_on_legacy_corpus_files(kaitai_txt, path):
    assert_txt_agrees(kaitai_txt, path.read_bytes())


@settings(max_examples=80)
@given(data=strategies.txt_bytes())
def test_python_parser_agrees_on_generated_legacy_files(kaitai_txt, data):
    assert_txt_agrees(kaitai_txt, data)


@settings(max_examples=15)
@given(data=strategies.txt_bytes())
def test_truncated_legacy_files_fail_in_kaitai_too(kaitai_txt, data):
    """Every cut: where mtokspec refuses, Kaitai does too, except a type 3 file cut right after a
    line's newline while merge lines are still due, which the .ksy reads as an empty last merge
    line (FORMAT.md lists it)."""
    for end in range(len(data)):
        cut = data[:end]
        try:
            expected = tree_plain(mtokspec.parse(cut))
        except MtokFormatError:
            got = read_or_none(lambda b: kaitai_txt_plain(kaitai_txt.from_bytes(b)), cut)
            if got is not None:
                assert cut.startswith(b"430 3\n") and cut.endswith(b"\n") and got["merges"][-1] == b"", end
        else:
            assert first_difference(expected, kaitai_txt_plain(kaitai_txt.from_bytes(cut))) is None, end


@pytest.mark.skipif(not CORPUS_TXT_FILES, reason="reference corpus not found at ../shared/corpus")
def test_javascript_parser_agrees_on_legacy_corpus_files(compiled):
    for path, line in zip(CORPUS_TXT_FILES, node_trees(compiled, CORPUS_TXT_FILES, "TokenizerTxtFile"), strict=True):
        assert line["ok"], (path, line.get("error"))
        expected = tree_plain(mtokspec.parse(path.read_bytes()))
        difference = first_difference(expected, kaitai_txt_plain(js_value(line["tree"])))
        assert difference is None, (path.parent.name, difference)


def test_javascript_output_keeps_line_separators_in_text(compiled, tmp_path):
    """Text holding U+2028, U+0085 and the like stays one JSON line (a hypothesis run found it)."""
    t = mtokspec.format.tree
    path = tmp_path / "separators.mtok"
    path.write_bytes(mtokspec.build(t.MtokFile(normalizer=t.PrependNormalizer("a\u2028b\x85c\x1cd"))))
    (line,) = node_trees(compiled, [path])
    assert line["ok"], line.get("error")
    assert kaitai_plain(js_value(line["tree"]))["normalizer"]["prepend"] == "a\u2028b\x85c\x1cd"


def test_javascript_output_keeps_the_sign_of_zero(compiled, tmp_path):
    """A score of -0.0 reads as -0.0 (JavaScript's String(-0) is "0"; a hypothesis run found it)."""
    t = mtokspec.format.tree
    path = tmp_path / "zero.mtok"
    path.write_bytes(mtokspec.build(t.MtokFile(model=t.UnigramModel(0, False, [(b"a", 0, -0.0), (b"b", 1, 0.0)]))))
    (line,) = node_trees(compiled, [path])
    assert line["ok"], line.get("error")
    expected = tree_plain(mtokspec.parse(path.read_bytes()))
    assert first_difference(expected, kaitai_plain(js_value(line["tree"]))) is None

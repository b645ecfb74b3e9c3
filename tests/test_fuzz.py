"""Every public entry point refuses hostile input with an ``mtokspec.Error``, and only that.

The entry points and their input strategies live in ``tools/fuzz/`` (``python -m tools.fuzz
--minutes N`` runs them for longer); here each runs for a bounded number of examples, and the
failures found so far are pinned as regression tests.
"""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

import mtokspec
from mtokspec.format import tree as t
from mtokspec.chat.render import ChatTemplateError
from mtokspec.cli import main
from mtokspec.convert import ConversionError, from_hf, to_hf, upgrade
from mtokspec.convert.upgrade import tiktoken_merges
from mtokspec.errors import MtokFormatError
from mtokspec import TokenizerError
from tools import fuzz
from tools.fuzz.inputs import mutated

# examples per entry point: together about 40 s on one core
EXAMPLES = {"codec": 150, "from_dict": 80, "runtime": 150, "runtime_mnn": 150, "lint": 100, "to_hf": 150,
            "upgrade": 300, "from_hf": 250, "cli": 100, "long_decimals": 100, "plain_text": 60, "chat_bounds": 60,
            "hostile": 15}


@pytest.mark.parametrize("name", sorted(fuzz.TARGETS))
def test_entry_point_refuses_only_with_mtokspec_error(name):
    fuzz.warm_up()
    target = fuzz.TARGETS[name]
    check = settings(max_examples=EXAMPLES[name], deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))(given(target.inputs())(target.check))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Hypothesis warns about big reprs of big inputs
        check()


# --- the base class ----------------------------------------------------------------------------

@pytest.mark.parametrize("cls, old_base", [(MtokFormatError, ValueError), (TokenizerError, ValueError),
                                           (ConversionError, ValueError), (ChatTemplateError, Exception)])
def test_every_error_is_an_mtokspec_error_and_keeps_its_base(cls, old_base):
    assert issubclass(cls, mtokspec.Error) and issubclass(cls, old_base)
    assert mtokspec.Error is mtokspec.errors.Error


# --- the mutator ------------------------------------------------------------------------------

def test_mutator_edits_copies_and_leaves_the_seed_alone():
    seed = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}, "added_tokens": [{"id": 0}]}
    before = json.dumps(seed, sort_keys=True)
    seen = set()

    @settings(max_examples=60, database=None)
    @given(mutated(seed))
    def collect(doc):
        seen.add(json.dumps(doc, sort_keys=True, default=repr))

    collect()
    assert json.dumps(seed, sort_keys=True) == before
    assert len(seen) > 10


# --- regressions: the failures the issue and the fuzzer found --------------------------------

def _bpe_tree(vocab):
    return t.MtokFile(header=t.make_header([], [], []),
                      pre_tokenizer=t.SequencePreTokenizer([t.ByteLevelPreTokenizer(False)]),
                      model=t.BPEModel(False, False, vocab, [(0, 0, 0), (1, 0, 1)]))


def test_bpe_vocab_token_that_is_not_utf8_does_not_break_encode():
    # a long word is cut by the bigrams of the vocabulary text, where b"\x80" is a lone surrogate
    vocab = [(b"0", 0), (b"00", 1), (b"000", 3), (b"\x80", 2)]
    with_it = mtokspec.Tokenizer.from_tree(_bpe_tree(vocab))
    without = mtokspec.Tokenizer.from_tree(_bpe_tree(vocab[:3]))
    for text in ("0" * 14, "000\x80\x80\U00010000" * 3):
        assert with_it.encode(text) == without.encode(text)
    assert with_it.encode("0" * 14) == [1] * 7


def test_issue_example_file_encodes():
    data = (b"430 4\n0 0 0\n\n\x00\x06\x01\x00\x00\x00\x01\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            b"\x00\x00\x00\x00\x00\x00\x01\x000\x00\x00\x00\x00\x02\x0000\x00\x00\x00\x00\x01\x00\x80\x00\x00"
            b"\x00\x00\x00\x00\x00\x00\x00")
    ids = mtokspec.Tokenizer.from_bytes(data).encode("000\x80\x80\U00010000")
    assert all(i == 0 for i in ids)  # every token of this file has id 0


def test_a_normal_form_that_is_not_utf8_loads():
    # found by `python -m tools.fuzz --minutes 10` after the merge: an NFD table row whose normal form
    # is b"\x80" made the hf runtime raise UnicodeDecodeError; it now keeps the bytes as surrogates
    tree = t.MtokFile(normalizer=t.BertNFDNormalizer(False, False, True, False, [(0x41, b"\x80"), (0x42, b"b")]),
                      model=t.BPEModel(vocab=[(b"b", 0)]))
    tok = mtokspec.Tokenizer.from_bytes(mtokspec.build(tree))
    assert tok.encode("b\xe9") == [0]  # a non-ASCII character makes it read the table; é is no token


def test_tiktoken_merges_skip_tokens_whose_bytes_have_no_token():
    # b"AB" needs b"B", which no line holds: BPE cannot reach it (it used to raise KeyError b'B')
    assert tiktoken_merges([b"A", b"AB"]) == ([], [1])
    assert tiktoken_merges([b"A", b"B", b"AB", b"+C"]) == ([(0, 1, 0)], [3])


def test_upgrade_of_a_tiktoken_file_without_single_bytes_reports_unreachable_tokens():
    result = upgrade(mtokspec.parse(b"430 1\n0 0 0\n\n1\nAAA=\n"))  # one token, b"\x00\x00"
    assert result.tree.model.merges == []
    assert any("unreachable" in loss.replacement for loss in result.losses)


@pytest.mark.parametrize("tree, message", [
    (t.MtokFile(header=t.make_header([], [], []), model=t.UnigramModel(0, False, [])), "empty Unigram vocab"),
    (t.MtokFile(header=t.make_header([], [], []), model=t.BPEModel(False, False, [(b"a", 0)], [(0, 1, 0)])),
     "names an id that is not in the vocab"),
    (t.MtokFile(header=t.make_header([], [], []), decoder=t.StripDecoder("", 1, 0),
                model=t.BPEModel(False, False, [(b"a", 0)], [])), "exactly one character"),
])
def test_to_hf_refusals_are_conversion_errors(tree, message):
    with pytest.raises(ConversionError, match=message):
        to_hf(tree)


def _folder(tmp_path, tokenizer_json, **others):
    for name, doc in {"tokenizer.json": tokenizer_json, **others}.items():
        (tmp_path / name).write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return tmp_path


_BPE = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
        "added_tokens": [{"id": 3, "content": "<s>", "special": True}]}


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["added_tokens"][0].pop("id"), r"added_tokens\[0\]\.id"),
    (lambda d: d["added_tokens"][0].update(content=None), r"added_tokens\[0\]\.content"),
    (lambda d: d["added_tokens"][0].update(lstrip="yes"), r"added_tokens\[0\]\.lstrip"),
    (lambda d: d.update(added_tokens={"id": 3}), "added_tokens: expected a list"),
    (lambda d: d["model"]["vocab"].update(a="0"), r"model\.vocab\['a'\]"),
    (lambda d: d["model"]["vocab"].update({"\ud800": 5}), "lone surrogate"),
    (lambda d: d["model"].update(byte_fallback=2), r"model\.byte_fallback"),
    (lambda d: d["model"].update(merges={"a": "b"}), "model.merges: expected a list"),
    (lambda d: d.update(normalizer={"type": "Sequence", "normalizers": 3}), r"normalizer\.normalizers"),
    (lambda d: d.update(normalizer={"type": "BertNormalizer", "lowercase": "no"}), r"normalizer\.lowercase"),
    (lambda d: d.update(decoder={"type": "Strip", "content": " ", "start": "1"}), r"decoder\.start"),
    (lambda d: d.update(post_processor={"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "x"}}],
                                        "special_tokens": []}), r"post_processor\.special_tokens"),
    (lambda d: d.update(post_processor={"type": "TemplateProcessing", "single": [
        {"SpecialToken": {"id": "x", "type_id": 0}}], "special_tokens": {"x": {"ids": [-1]}}}), "token id"),
])
def test_from_hf_names_the_malformed_field(tmp_path, edit, field):
    doc = json.loads(json.dumps(_BPE))
    edit(doc)
    with pytest.raises(ConversionError, match=field):
        from_hf(_folder(tmp_path, doc))


def test_from_hf_refuses_unreadable_files(tmp_path):
    (tmp_path / "tokenizer.json").mkdir()  # a directory where the file should be
    with pytest.raises(ConversionError, match="no tokenizer.json"):
        from_hf(tmp_path)
    deep = tmp_path / "deep"
    deep.mkdir()
    _folder(deep, "[" * 100_000)  # nested beyond the JSON reader's recursion limit
    with pytest.raises(ConversionError, match="cannot read"):
        from_hf(deep)
    bad_config = tmp_path / "config"
    bad_config.mkdir()
    _folder(bad_config, _BPE, **{"generation_config.json": {"eos_token_id": ["2"]}})
    with pytest.raises(ConversionError, match="eos_token_id"):
        from_hf(bad_config)


def test_cli_error_is_one_line_on_stderr(tmp_path, capsys):
    bad_yaml = tmp_path / "tree.yaml"
    bad_yaml.write_bytes(b"model: \x01\n")  # YAML's own message spans several lines
    assert main(["build", str(bad_yaml), "-o", str(tmp_path / "out.mtok")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("cls_value", [{"a": 1}, ["<s>", 1e309], [], "x", None])
def test_roberta_processing_with_a_malformed_cls_is_not_a_template(cls_value):
    # found by the 10-minute from_hf fuzz after the merge: a dict as "cls" raised KeyError inside
    # the template reader (caught by the last guard, which the fuzz counts as a failure)
    from mtokspec.convert.inputs import post_processor_template

    assert post_processor_template({"type": "RobertaProcessing", "cls": cls_value, "sep": ["</s>", 2]}) is None

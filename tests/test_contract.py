"""The error contract (README, "The error contract and the bounds of a call") over the converters
(:mod:`mtokspec.convert`, its ``mnn`` target) and the chat renderers (:mod:`mtokspec.chat`,
``Tokenizer.apply_chat_template`` in both semantics).

Every public function is called with each parameter in turn given values of a wrong Python type
(an :class:`~mtokspec.ArgumentTypeError` whose message starts with the parameter's name) and edge
values of the right type (a result or an :class:`mtokspec.Error`, never a bare ``TypeError``,
``ValueError``, ``KeyError`` ... from inside).  Chat messages of every shape are generated.
"""

from __future__ import annotations

import importlib
import json
from datetime import datetime
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec import ArgumentTypeError, Tokenizer
from mtokspec.chat import compare, lint, mnn, render, rewrite
from mtokspec.convert import from_hf, from_hf_inputs, from_hf_tree, load_hf, render_json, render_text, to_hf
from mtokspec.convert import to_hf_with_notes, upgrade
from mtokspec.convert.mnn_target import chat as mnn_chat
from mtokspec.convert import loss, unicode_tables
from mtokspec.convert.mnn_target import fix, goldens, reference, report, retarget
from mtokspec.format import tree as t
from tests._support import ROOT

TREE = mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes())
FOLDER = ROOT / "examples" / "tiny-bpe"
TEMPLATE = TREE.chat_template
MESSAGES = [{"role": "user", "content": "Hi"}]
BERT = t.BertTxtFile(t.make_header(), [b"a", b"b"])
TIKTOKEN = t.TiktokenTxtFile(t.make_header(), [b"a", b"b", b"ab"])
TOKENIZERS = {s: Tokenizer.from_tree(TREE, semantics=s) for s in ("hf", "mnn")}
UPGRADE = importlib.import_module("mtokspec.convert.upgrade")  # (the package's name `upgrade` is the function)
INPUTS = load_hf(FOLDER)
COMPARISON = compare.compare_chat(TEMPLATE, [("c", MESSAGES, None)])[0]

# --- the values: per kind of parameter, what is of a wrong type and what is an edge of the right one

_ODD = [None, 1.5, b"x", ["x"], object(), True, 2**70, -1]
WRONG: dict[str, list[Any]] = {
    "str": _ODD + [("x",)],
    "opt_str": [v for v in _ODD if v is not None],
    "path": _ODD + [b"examples/tiny-bpe"],
    "opt_path": [v for v in _ODD if v is not None],
    "int": [None, 1.5, "7", b"x", True, [1], object()],
    "opt_number": ["7", b"x", True, [1], object()],
    "messages": [None, 1.5, "x", b"x", object(), True, 2**70, {"role": "user", "content": "x"}, ["x"], [None],
                 [MESSAGES[0], 7], [[MESSAGES[0]]]],
    "opt_dicts": [1.5, "x", b"x", object(), True, -1, ["x"], [None], [1], {"a": 1}],
    "opt_mapping": [1.5, "x", b"x", object(), True, -1, ["x"], [("a", 1)]],
    "tree": [None, 1.5, b"x", "x", ["x"], object(), True, 2**70],
    "mtok": [None, 1.5, b"x", "x", ["x"], object(), True, 2**70],
    "losses": [None, 1.5, "x", b"x", ["x"], [None], object(), True],
    "opt_strs": [1.5, "x", b"x", object(), True, [b"x"], [None], [1]],
    "strs": [None, 1.5, "x", b"x", object(), True, [b"x"], [None], [1]],
    "strftime": [1.5, b"x", True, object(), 2**70, ["2024-01-01"]],
    "file": [None, 1.5, b"x", "x", ["x"], object(), True, {"chat_template": TEMPLATE}],
    "inputs": [None, 1.5, b"x", "x", object(), True, {"tokenizer_json": {}}],
    "lines": [None, 1.5, "x", b"x", object(), True, ["x"], [None]],
    "triples": [None, 1.5, "x", object(), True, [("c", MESSAGES)], [(1, MESSAGES, None)], [("c", "x", None)],
                [("c", [None], None)]],
    "conversations": [1.5, "x", object(), True, [MESSAGES[0]], [[None]], [["x"]]],
    "goldens_conversations": [1.5, "x", object(), True, ["x"], [{}], [{"messages": "x"}]],
    "flag": [],
    "any": [],
    "bytes": [None, 1.5, "x", ["x"], object(), True, 7],
    "bytes_list": [None, 1.5, "x", b"x", object(), True, [1], ["x"], [None]],
    "ints": [None, 1.5, "x", b"x", object(), ["x"], [1.5], [True]],
    "pieces": [None, 1.5, "x", object(), [None], [("a",)], [(1, 0.0, 1)], [("a", "0", 1)]],
    "vocab": [None, 1.5, "x", [1], object(), {1: 0}],
    "table": [None, 1.5, "x", object(), [None], [(1, "x")], [("x", b"x")], [(True, b"x")], [(1, b"x", 2)]],
    "count": [None, 1.5, "7", True, [1], object()],
    "reference": [None, 1.5, "x", object(), TREE],
    "json_object": [None, 1.5, "x", [1], object(), True],
    "opt_mtok": [1.5, "x", object(), BERT, True],
    "template_items": [1.5, "x", object(), True, [1.5], [None], [[1]]],
    "comparison": [None, 1.5, "x", object(), True, {"name": "c"}],
    "opt_int": [1.5, "7", True, [1], object()],
    "source": [None, 1.5, ["x"], object(), True, 7],
}
_STRINGS = ["", "\ud800", "\0", "x\0y", "\ud800\udc00", "{{", "{% for %}", "\U0001F600" * 50]
EDGE: dict[str, list[Any]] = {
    "str": _STRINGS,
    "opt_str": [None, *_STRINGS],
    "path": ["", "\ud800", "\0", str(FOLDER / "tokenizer.json"), str(ROOT)],
    "opt_path": [None, "\0", str(FOLDER)],
    "int": [0, 1, -1, 2**70, -(2**70)],
    "opt_number": [None, 0, -1, 1e-12, 0.5, 2**70, float("nan"), float("inf")],
    "messages": [[], [{}], [{"role": "user"}], [{"content": "x"}], [{"role": 7, "content": "x"}],
                 [{"role": "user", "content": 1.5}], [{"role": "user", "content": None}],
                 [{"role": "user", "content": ["x", None, {"type": "text"}]}],
                 [{"role": "user", "content": [{"type": "text", "text": "\ud800"}]}],
                 [{"role": "user", "content": "\ud800\0"}], [{"role": "\0", "content": 2**70}],
                 [{"role": "user", "content": {"nested": [b"bytes", object()]}}],
                 [{1: "x", None: "y"}], [{"role": "user", "content": float("nan")}]],
    "opt_dicts": [None, [], [{}], [{"type": "function", "function": {"name": "\ud800"}}], [{"x": object()}]],
    "opt_mapping": [None, {}, {"x": "\ud800"}, {"x": 2**70}, {1: "x"}, {"x": object()}, {"x": [float("nan")]}],
    "tree": [BERT, TIKTOKEN, t.MtokFile(header=t.make_header()), t.SentencePieceTxtFile(t.make_header(), [])],
    "mtok": [t.MtokFile(header=t.make_header()), t.MtokFile(header=t.make_header(), chat_template="{{")],
    "losses": [[], ()],
    "opt_strs": [None, [], ["", "\0", "\ud800", "x" * 3000]],
    "strs": [[], ["", "\0", "\ud800", "x" * 3000]],
    "strftime": [None, "", "2024-13-45", "\ud800", "\0", "2024-01-01T00:00", datetime(1, 1, 1)],
    "file": [TREE, TOKENIZERS["hf"], TOKENIZERS["mnn"], t.MtokFile(header=t.make_header())],
    "inputs": [],
    "lines": [[], [{}], [{"x": "\ud800"}]],
    "triples": [[], [("c", [], None)], [("", MESSAGES, True)], [("c", [{}], False)]],
    "conversations": [None, [], [[]], [[{}]], [[{"role": "user", "content": 1.5}]]],
    "goldens_conversations": [None, [], [{"messages": []}], [{"messages": [{}], "name": 7}]],
    "flag": [None, 0, 1.5, "x", "", b"x", [], object(), 2**70],
    "any": [None, 0, 1.5, "\ud800", b"x", [1, None], {"x": object()}, object()],
    "bytes": [b"", b"\0", bytearray(b"\xff"), memoryview(b"ab")],
    "bytes_list": [[], [b""], [b"a", b"a"], [b"\xff" * 100], (b"a", b"b", b"ab")],
    "ints": [[], [2**70], [-1], (0, 0)],
    "pieces": [[], [("a", 2**70, 1), ("b", -1.5, 1), ("ab", float("nan"), 1)]],
    "vocab": [{}, {"\ud800": 0, "": 2**70}],
    "table": [[], [(2**70, b"")], [(-1, b"\0")], ((0x41, bytearray(b"a")),)],
    "count": [0, -1, 3, 2**70],
    "reference": [reference.FileReference(TREE)],
    "json_object": [{}, {"model": {}}, {"model": {"type": "BPE", "vocab": {"\ud800": 0}, "merges": []}}],
    "opt_mtok": [None, TREE, t.MtokFile(header=t.make_header())],
    "template_items": [None, [], ["A"], ["B"], [2**70], [-1], ["A", 0, "A"]],
    "comparison": [COMPARISON, compare.ChatComparison("\ud800", True, None, "\0", "x", "y", 2**70)],
    "opt_int": [None, 0, -1, 30, 2**70],
    "source": ["", b"", "\ud800", b"\xff", "{{", "{% for %}"],
}


class Api:
    """One public function: how to call it, and the kind of each parameter swept."""

    def __init__(self, name: str, fn: Callable, args: tuple, kwargs: dict, params: dict[str, str]):
        self.name, self.fn, self.args, self.kwargs, self.params = name, fn, args, kwargs, params

    def call(self, param: str, value: Any) -> Any:
        import inspect

        names = list(inspect.signature(self.fn).parameters)
        args, kwargs = list(self.args), dict(self.kwargs)
        if param in names and names.index(param) < len(args):
            args[names.index(param)] = value
        else:
            kwargs[param] = value
        return self.fn(*args, **kwargs)


def _apply(semantics: str) -> Callable:
    return lambda messages, **kw: TOKENIZERS[semantics].apply_chat_template(messages, **kw)


_CHAT = {"add_generation_prompt": "flag", "bos_token": "opt_str", "eos_token": "opt_str", "strftime_now": "strftime",
         "max_output_chars": "int", "timeout_seconds": "opt_number"}
APIS = [
    # mtokspec.convert
    Api("from_hf", from_hf, (str(FOLDER),), {},
        {"path": "path", "strict": "flag", "exact_whitespace": "flag", "model_type": "opt_str", "target": "str"}),
    Api("from_hf_tree", from_hf_tree, (str(FOLDER),), {}, {"path": "path", "target": "str"}),
    Api("from_hf_inputs", from_hf_inputs, (load_hf(FOLDER),), {},
        {"inputs": "inputs", "strict": "flag", "exact_whitespace": "flag", "model_type": "opt_str", "target": "str"}),
    Api("load_hf", load_hf, (FOLDER,), {}, {"path": "path"}),
    Api("render_text", render_text, ([],), {}, {"losses": "losses"}),
    Api("render_json", render_json, ([],), {}, {"losses": "losses"}),
    Api("to_hf", to_hf, (TREE,), {}, {"tree": "tree"}),
    Api("to_hf_with_notes", to_hf_with_notes, (TREE,), {}, {"tree": "tree"}),
    Api("upgrade", upgrade, (TIKTOKEN,), {},
        {"txt_tree": "tree", "split_pattern": "str", "lowercase": "flag", "sentencepiece_model": "str",
         "sentencepiece_normalization": "str", "strict": "flag"}),
    Api("upgrade(bert)", upgrade, (BERT,), {}, {"lowercase": "flag"}),
    Api("fix", fix.fix, (TREE,), {}, {"tree": "tree", "against": "opt_path", "texts": "opt_strs"}),
    Api("goldens", goldens.goldens, (FOLDER,), {},
        {"path": "path", "texts": "opt_strs", "conversations": "goldens_conversations", "strftime_now": "strftime"}),
    Api("jsonl", goldens.jsonl, ([],), {}, {"lines": "lines"}),
    Api("chat_template_for_mnn", mnn_chat.chat_template_for_mnn, (TEMPLATE, None), {},
        {"template": "str", "bos_token": "opt_str", "eos_token": "opt_str"}),
    Api("with_chat_template_for_mnn", mnn_chat.with_chat_template_for_mnn, (TREE,), {}, {"tree": "mtok"}),
    # the helpers the converters' modules export
    Api("byte_level_spelling", UPGRADE.byte_level_spelling, (b"ab",), {}, {"token": "bytes"}),
    Api("tiktoken_merges", UPGRADE.tiktoken_merges, ([b"a", b"b", b"ab"],), {}, {"tokens": "bytes_list", "skip": "ints"}),
    Api("sentencepiece_merges", UPGRADE.sentencepiece_merges,
        ([("a", 0.0, 1), ("b", 0.0, 1), ("ab", 0.0, 1)], {"a": 0, "b": 1, "ab": 2}, [2]), {},
        {"pieces": "pieces", "vocab": "vocab", "mergeable": "ints"}),
    Api("normalization_table", unicode_tables.normalization_table, ("NFC",), {}, {"form": "str"}),
    Api("identify_table", unicode_tables.identify_table, ([],), {}, {"table": "table"}),
    Api("closest_form", unicode_tables.closest_form, ([],), {}, {"table": "table"}),
    Api("losses_to_plain", loss.losses_to_plain, ([],), {}, {"losses": "losses"}),
    Api("chat_template_of", goldens.chat_template_of, (FOLDER,), {}, {"folder": "path"}),
    Api("reference_for_folder", goldens.reference_for_folder, (FOLDER,), {}, {"path": "path"}),
    Api("random_texts", reference.random_texts, (["x"],), {"n": 3},
        {"added_contents": "strs", "n": "count", "seed": "count"}),
    Api("probe_texts", reference.probe_texts, (["x"],), {},
        {"added_contents": "strs", "extra": "opt_strs", "limit": "count"}),
    Api("read_texts", reference.read_texts, (ROOT / "README.md",), {}, {"path": "path"}),
    Api("HFReference", reference.HFReference, (INPUTS.tokenizer_json,), {},
        {"tokenizer_json": "json_object", "fallback_tree": "opt_mtok"}),
    Api("FileReference", reference.FileReference, (TREE,), {}, {"tree": "mtok"}),
    Api("mnn_losses", report.mnn_losses, (TREE, reference.FileReference(TREE), ["x"]), {},
        {"tree": "mtok", "ref": "reference", "texts": "strs"}),
    Api("retarget_conversion", retarget.retarget_conversion, (INPUTS, TREE, [], None), {},
        {"inputs": "inputs", "tree": "mtok", "losses": "losses", "template": "template_items", "texts": "opt_strs"}),
    # mtokspec.chat
    Api("render_chat_template", render.render_chat_template, (TEMPLATE, MESSAGES), {},
        {"template": "str", "messages": "messages", "tools": "opt_dicts", "documents": "opt_dicts",
         "continue_final_message": "flag", **_CHAT}),
    Api("render_file_template", render.render_file_template, (TREE, MESSAGES), {},
        {"file": "file", "messages": "messages", "template": "opt_str", "tools": "opt_dicts", **_CHAT}),
    Api("render_mnn", mnn.render_mnn, (TEMPLATE, MESSAGES), {},
        {"template": "str", "messages": "messages", "context": "opt_mapping", **_CHAT}),
    Api("render_file_mnn", mnn.render_file_mnn, (TREE, MESSAGES), {},
        {"file": "file", "messages": "messages", "template": "opt_str", "context": "opt_mapping", "tools": "any",
         **_CHAT}),
    Api("engine_messages", mnn.engine_messages, (MESSAGES,), {}, {"messages": "messages"}),
    Api("lint_chat_template", lint.lint_chat_template, (TEMPLATE,), {},
        {"template": "str", "path": "str", "bos_token": "opt_str"}),
    Api("rewrite_for_mnn", rewrite.rewrite_for_mnn, (TEMPLATE,), {},
        {"template": "str", "bos_token": "opt_str", "eos_token": "opt_str", "conversations": "conversations",
         "strftime_now": "strftime"}),
    Api("compare_chat", compare.compare_chat, (TEMPLATE, [("c", MESSAGES, None)]), {},
        {"template": "str", "conversations": "triples", "bos_token": "opt_str", "eos_token": "opt_str",
         "add_generation_prompt": "flag", "strftime_now": "strftime"}),
    Api("MnnTemplate", mnn.MnnTemplate, (TEMPLATE,), {}, {"source": "source", "eos_token": "opt_str", "bos_token": "opt_str"}),
    *(Api(name, fn, (TEMPLATE, MESSAGES, True, None, None, None), {},
          {"template": "str", "messages": "messages", "add_generation_prompt": "flag", "bos_token": "opt_str",
           "eos_token": "opt_str", "strftime_now": "strftime"})
      for name, fn in (("transformers_prompt", rewrite.transformers_prompt), ("mnn_prompt", rewrite.mnn_prompt))),
    Api("matches", rewrite.matches, ("a", "a"), {}, {"hf": "str", "mnn": "str"}),
    Api("format_comparison", compare.format_comparison, (COMPARISON,), {}, {"c": "comparison", "width": "opt_int"}),
    *(Api(f"Tokenizer.apply_chat_template[{s}]", _apply(s), (MESSAGES,), {},
          {"messages": "messages", "template": "opt_str", **_CHAT}) for s in ("hf", "mnn")),
    Api("Tokenizer.apply_chat_template[hf]:tools", _apply("hf"), (MESSAGES,), {}, {"tools": "opt_dicts"}),
    # MNN takes tools (and any variable) as its jinja.context: any JSON value is data there
    Api("Tokenizer.apply_chat_template[mnn]:tools", _apply("mnn"), (MESSAGES,), {}, {"tools": "any"}),
]


def _cases(table: dict[str, list[Any]]) -> list:
    return [pytest.param(api, param, value, id=f"{api.name}-{param}-{i}")
            for api in APIS for param, kind in api.params.items() for i, value in enumerate(table[kind])]


def test_every_api_works_as_given():
    """The sweep's base calls give results: a refusal below is the value's doing."""
    for api in APIS:
        api.fn(*api.args, **api.kwargs)


@pytest.mark.parametrize(("api", "param", "value"), _cases(WRONG))
def test_a_wrong_type_is_an_argument_type_error_naming_the_parameter(api, param, value):
    with pytest.raises(ArgumentTypeError) as caught:
        api.call(param, value)
    assert str(caught.value).startswith(f"{param}: "), caught.value
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, mtokspec.Error)


def _within_contract(call: Callable[[], Any], param: str | None = None) -> Any:
    """A result, or an ``mtokspec.Error``; an ``ArgumentTypeError`` only naming ``param``."""
    try:
        return call()
    except ArgumentTypeError as e:
        assert param is not None and str(e).startswith(f"{param}: "), f"a right-typed value refused as a type: {e}"
        return e
    except mtokspec.Error as e:
        return e
    except Exception as e:  # noqa: BLE001 - the leak the contract forbids
        pytest.fail(f"leaked {type(e).__name__}: {e}")


@pytest.mark.parametrize(("api", "param", "value"), _cases(EDGE))
def test_an_edge_value_is_a_result_or_a_refusal(api, param, value):
    # a flag takes any value as its truth; any other parameter of the right type is data
    _within_contract(lambda: api.call(param, value), None)


def test_a_missing_file_is_file_not_found(tmp_path):
    absent = tmp_path / "absent"
    for call in (from_hf, from_hf_tree, load_hf, goldens.goldens, goldens.reference_for_folder, reference.read_texts,
                 lambda p: fix.fix(TREE, against=p)):
        with pytest.raises(FileNotFoundError):
            call(absent)
    with pytest.raises(mtokspec.Error):  # a folder without a tokenizer.json is a refusal
        from_hf(tmp_path)


# --- chat messages and the final message continued

@pytest.mark.parametrize("semantics", ["hf", "mnn"])
@pytest.mark.parametrize("messages", [
    [], [{"role": "user", "content": "Hi"}], [{"role": "assistant"}], [{"role": "assistant", "content": None}],
    [{"role": "assistant", "content": 7}], [{"role": "assistant", "content": []}],
    [{"role": "assistant", "content": [7, None, {"type": "text", "text": 7}]}],
    [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}], [{"content": "no role"}]])
def test_continue_final_message_of_any_conversation(semantics, messages):
    out = _within_contract(lambda: TOKENIZERS[semantics].apply_chat_template(
        messages, continue_final_message=True, template=TEMPLATE))
    if semantics == "hf" and not [m for m in messages if isinstance(m.get("content"), (str, list))]:
        assert isinstance(out, mtokspec.ChatTemplateError), out  # nothing to continue


def test_a_message_that_is_not_a_dict_is_refused_alike_in_both_semantics():
    for messages in (["x"], [MESSAGES[0], None], "x", None, {"role": "user"}):
        seen = set()
        for semantics in ("hf", "mnn"):
            with pytest.raises(ArgumentTypeError, match="^messages: ") as caught:
                TOKENIZERS[semantics].apply_chat_template(messages)
            seen.add(str(caught.value))
        assert len(seen) == 1, seen


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)
_message = st.dictionaries(st.sampled_from(["role", "content", "name", "tool_calls", "x"]), _json, max_size=4) | _json


@settings(max_examples=150, deadline=None)
@given(messages=st.lists(_message, max_size=4) | _json, continue_final=st.booleans(),
       template=st.sampled_from([TEMPLATE, "{{ messages[0]['content'] ~ messages|length }}",
                                 "{% for m in messages %}{{ m.role }}{{ m.content|tojson }}{% endfor %}",
                                 "{{ messages[-1].content[0].text }}"]))
def test_generated_messages_end_within_the_contract_in_both_semantics(messages, continue_final, template):
    kinds = []
    for semantics in ("hf", "mnn"):
        extra = {"continue_final_message": True} if continue_final and semantics == "hf" else {}
        out = _within_contract(lambda: TOKENIZERS[semantics].apply_chat_template(messages, template=template, **extra),
                               "messages")
        kinds.append(isinstance(out, ArgumentTypeError))
    assert kinds[0] == kinds[1], (messages, kinds)  # a wrong shape is refused alike


def test_load_conversations_refuses_data_as_an_error():
    for data in (None, 1.5, "x", [1], {"a": "not messages"}, {"messages": MESSAGES, "add_generation_prompt": "x"}):
        with pytest.raises(mtokspec.ConversationsError):
            compare.load_conversations(data)
    assert compare.load_conversations(json.loads(json.dumps(MESSAGES))) == [("conversation", MESSAGES, None)]


def test_the_readme_names_the_converters_and_renderers():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### The error contract"):]
    section = section[:section.index("\n## ")]
    assert "mtokspec.convert" in section and "mtokspec.chat" in section


def test_dir_lists_the_public_names():
    """``dir(mtokspec)`` shows the API a user may call (the lazy names too), not the typing names the
    package imports to work."""
    names = [n for n in dir(mtokspec) if not n.startswith("_")]
    assert set(names) == set(mtokspec.__all__)
    assert all(hasattr(mtokspec, n) for n in names)

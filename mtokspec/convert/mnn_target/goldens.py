"""``goldens``: MNN's device-test file (``test_cases.jsonl``) with Hugging Face's answers.

MNN's ``transformers/llm/engine/test/test_tokenizer.cpp`` reads, per model folder, a
``tokenizer.mtok`` and a ``test_cases.jsonl`` of one JSON object a line:

- ``{"type": "basic", "input", "ids_raw", "ids_full", "decoded_full"}``: passes when MNN's
  ``encode(input)`` equals ``ids_raw`` or ``ids_full`` and ``decode(ids_raw)`` equals
  ``decoded_full`` (an extra leading space allowed);
- ``{"type": "chat", "name", "messages", "add_generation_prompt", "formatted_text"}``: passes when
  MNN's ``apply_chat_template`` gives ``formatted_text`` (its ``Today Date: `` line set aside).

The answers are HF's (:class:`~.reference.HFReference`: ``ids_raw`` / ``ids_full`` = ``encode``
without / with special tokens, ``decoded_full`` = ``decode(ids_raw)`` with special tokens kept);
chat texts are the folder's chat template rendered as transformers renders it
(:func:`mtokspec.chat_template.render_chat_template`).  Texts: :data:`~.reference.BASE_TEXTS`,
every special token spelled out in context, then the caller's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from mtokspec.convert.loss import ConversionError
from mtokspec.parallel import ordered_map

__all__ = ["CONVERSATIONS", "goldens", "jsonl", "chat_template_of", "reference_for_folder"]

CONVERSATIONS: tuple[dict, ...] = (
    {"name": "single_user", "messages": [{"role": "user", "content": "Hello!"}], "add_generation_prompt": True},
    {"name": "system_user", "messages": [{"role": "system", "content": "You are a helpful assistant."},
                                         {"role": "user", "content": "What is 2+2?"}],
     "add_generation_prompt": True},
    {"name": "multi_turn", "messages": [{"role": "user", "content": "Hi"},
                                        {"role": "assistant", "content": "Hello! How can I help?"},
                                        {"role": "user", "content": "Tell me a joke about café ☕ and 中文."}],
     "add_generation_prompt": True},
    {"name": "multi_turn_closed", "messages": [{"role": "user", "content": "Hi"},
                                               {"role": "assistant", "content": "Hello! How can I help?"}],
     "add_generation_prompt": False},
)
"""The built-in conversations (each rendered with the folder's chat template)."""


def _token_text(v) -> str | None:
    if isinstance(v, dict):
        v = v.get("content")
    return v if isinstance(v, str) else None


def chat_template_of(folder: Path) -> tuple[str | None, str | None, str | None]:
    """``(template, bos_token, eos_token)`` of a model folder (``tokenizer_config.json``'s
    ``chat_template`` -- the ``default`` one of a list -- or ``chat_template.jinja``)."""
    from mtokspec.args import path

    folder = Path(path("folder", folder))
    tc: dict = {}
    p = folder / "tokenizer_config.json"
    if p.is_file():
        try:
            tc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConversionError(f"{p}: cannot read: {e}") from e
        if not isinstance(tc, dict):
            tc = {}
    tpl = tc.get("chat_template")
    if isinstance(tpl, list):
        named = {d.get("name"): d.get("template") for d in tpl if isinstance(d, dict)}
        tpl = named.get("default") or next((v for v in named.values() if isinstance(v, str)), None)
    if not isinstance(tpl, str) and (folder / "chat_template.jinja").is_file():
        tpl = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    return (tpl if isinstance(tpl, str) and tpl else None, _token_text(tc.get("bos_token")),
            _token_text(tc.get("eos_token")))


def reference_for_folder(path: str | os.PathLike, reference: str = "hf"):
    """HF's answers for a model folder (or its ``tokenizer.json``): :class:`~.reference.HFReference`
    (``reference="mtokspec"``: mtokspec's HF semantics of the folder's plain ``.mtok`` (the exporter's
    tree, not the ``--target mnn`` one, which is shaped for MNN's runtime), said so in its ``source``,
    and refused with :class:`ConversionError` where that tree cannot hold HF's answers: a stage the
    format loses or approximates, a decoder or post-processor it replaces; so such goldens never
    pass a device case HF's would fail)."""
    from mtokspec.convert.hf import export
    from mtokspec.convert.inputs import load_hf
    from mtokspec.convert.mnn_target.reference import HFReference, check_reference

    inputs = load_hf(path)  # (checks the path)
    check_reference(reference)
    fallback = None
    if reference == "mtokspec":
        tree, losses = export(inputs)  # the exporter's tree: HF's pipeline as far as the format holds it
        lost = [loss for loss in losses
                if loss.may_change_tokenization or loss.path.startswith(("decoder", "post_processor"))]
        if lost:
            raise ConversionError(
                "reference 'mtokspec': mtokspec's HF semantics cannot stand in for HF tokenizers on this folder, "
                "the .mtok it runs on loses " + "; ".join(f"{x.path} ({x.what})" for x in lost[:3])
                + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
                + ": install HF tokenizers (pip install 'mtokspec[hf]') and use the default reference 'hf'", lost)
        fallback = tree
    return HFReference(inputs.tokenizer_json, fallback, reference)


class _BasicCase:
    """The ``basic`` line of one text (a picklable callable: the reference reaches each worker once)."""

    def __init__(self, ref):
        self.ref = ref

    def __call__(self, text: str) -> dict:
        raw = self.ref.encode(text, False)
        return {"type": "basic", "input": text, "ids_raw": raw, "ids_full": self.ref.encode(text, True),
                "decoded_full": self.ref.decode(raw)}


def goldens(path: str | os.PathLike, texts: list[str] | None = None, conversations: list[dict] | None = None,
            *, strftime_now: str | None = None, jobs: int = 1, reference: str = "hf",
            progress: Callable[[int, int], None] | None = None) -> tuple[list[dict], list[str]]:
    """``(lines, notes)``: the test cases for a model folder, and what could not be made (a
    conversation the template refuses).  The first line is ``{"type": "meta", "reference", ...}``:
    what gave the answers (``reference``: see :func:`reference_for_folder`).  ``jobs`` processes
    share the texts (the lines are the same for any ``jobs``); ``progress(done, total)`` as they
    finish."""
    from mtokspec.chat.render import render_chat_template
    from mtokspec.convert.inputs import load_hf
    from mtokspec.convert.mnn_target.reference import BASE_TEXTS
    from mtokspec.errors import ArgumentTypeError, Error
    from mtokspec.args import items, path as path_arg

    path_arg("path", path)
    for i, text in enumerate(items("texts", texts, str, "strs", optional=True) or ()):
        if not _utf8(text):
            raise ConversionError(f"texts[{i}]: a lone surrogate: not text a test case can hold (UTF-8)")
    for i, conv in enumerate(items("conversations", conversations, dict, "dicts", optional=True) or ()):
        if not isinstance(conv.get("messages"), list):
            raise ArgumentTypeError(f"conversations: item {i} has no 'messages' list")
    if strftime_now is not None and not isinstance(strftime_now, (str, datetime)):
        raise ArgumentTypeError(f"strftime_now: expected an ISO-8601 string or None, got {type(strftime_now).__name__}")
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    ref = reference_for_folder(path, reference)
    tj = load_hf(path).tokenizer_json
    specials = [a["content"] for a in tj.get("added_tokens") or []
                if isinstance(a, dict) and a.get("special") and isinstance(a.get("content"), str)][:32]
    all_texts = list(BASE_TEXTS) + [x for c in specials for x in (c, f"Hi {c} there")] + list(texts or [])
    lines = [{"type": "meta", "made_by": "mtokspec goldens", "reference": ref.source}]
    lines += ordered_map(_BasicCase(ref), list(dict.fromkeys(all_texts)), jobs=jobs, progress=progress)
    notes: list[str] = []
    template, bos, eos = chat_template_of(folder)
    convs = list(CONVERSATIONS) if conversations is None else conversations
    if template is None:
        if convs and conversations is not None:
            notes.append("the folder has no chat template: no chat cases")
        return lines, notes
    for k, conv in enumerate(convs):
        name = str(conv.get("name") or f"conversation_{k}")
        gen = bool(conv.get("add_generation_prompt", True))
        try:
            text = render_chat_template(template, conv["messages"], add_generation_prompt=gen, bos_token=bos,
                                        eos_token=eos, strftime_now=strftime_now)
        except Error as e:
            notes.append(f"chat case {name!r}: the template refuses it ({e})")
            continue
        lines.append({"type": "chat", "name": name, "messages": conv["messages"], "add_generation_prompt": gen,
                      "formatted_text": text})
    return lines, notes


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def jsonl(lines: list[dict]) -> str:
    """The cases as ``test_cases.jsonl`` text: one JSON object a line (text as UTF-8; JSON escapes
    keep U+2028 and U+0085 inside their line, lines end at ``\n`` only)."""
    from mtokspec.args import items

    items("lines", lines, dict, "dicts")
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)

"""Edits of a parsed file that keep it what MNN can load: what ``mtokspec set`` applies.

Each function returns a new tree and leaves its input unchanged.  Tokens are named by id or by
text and must exist; a token added to a ``.mtok`` goes into the model's vocabulary at its sorted
place (MNN binary-searches it), with the next free id, and into the added tokens.  Every refusal is
an :class:`EditError`.

    tree = edit_roles(tree, [RoleEdit("stop", "+", "<|im_end|>")])
    tree, new_id = add_token(tree, "<tool>", special=True)
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mtokspec.errors import EditError
from mtokspec.format import tree as t
from mtokspec.format.token_names import ids_of_text, tokens_by_id

__all__ = ["EditError", "RoleEdit", "parse_role_edit", "resolve", "edit_roles", "add_token", "in_vocabulary",
           "set_text", "set_flag", "template_from_config", "TEXT_FIELDS"]

#: the optional text sections ``set_text`` writes, with the trailing sections before each (in file order)
TEXT_FIELDS = ("chat_template", "eos_token", "bos_token")
_TAILS = ("chat_template", "eos_token", "flags", "bos_token")
_EMPTY = {"chat_template": "", "eos_token": "", "flags": 0, "bos_token": ""}
#: the most digits a token id has (ids are below 2**32)
_ID_DIGITS = len(str(2**32))


@dataclass(frozen=True)
class RoleEdit:
    """Add (``+``) or remove (``-``) a token, by id (an int) or by text, in a header role."""

    role: str
    op: str
    token: int | str


def parse_role_edit(role: str, spec: str) -> RoleEdit:
    """``+X`` adds X, ``-X`` removes it, a bare ``X`` adds it; X is an id (decimal) or a token's
    text (``text:X`` for text that looks like an id or starts with + or -)."""
    if role not in t.HEADER_ROLES:
        raise EditError(f"unknown header role {role!r}; one of {', '.join(t.HEADER_ROLES)}")
    op, body = ("+", spec[1:]) if spec[:1] == "+" else ("-", spec[1:]) if spec[:1] == "-" else ("+", spec)
    if body.startswith("text:"):
        return RoleEdit(role, op, body[5:])
    if body.isdigit() and body.isascii():
        if len(body.lstrip("0")) > _ID_DIGITS:  # past every id (and past what int() reads)
            raise EditError(f"--{role} {spec[:24]}{'...' if len(spec) > 24 else ''}: an id of {len(body)} "
                            f"digits is past every token id (ids have at most {_ID_DIGITS}); text:X names a token "
                            "by its text")
        return RoleEdit(role, op, int(body))
    if not body:
        raise EditError(f"--{role} {spec!r}: no id or token text")
    return RoleEdit(role, op, body)


def resolve(tree: t.TokenizerFile, token: int | str) -> int:
    """The id of a token named by id (it must be one of the file's) or by its exact text."""
    if isinstance(token, int):
        if token not in tokens_by_id(tree):
            raise EditError(f"id {token} is not a token of this file")
        return token
    ids = ids_of_text(tree, token)
    if not ids:
        raise EditError(f"no token is {token!r} (add it with --add-token, or give an id)")
    return ids[0]


def edit_roles(tree: t.TokenizerFile, edits: Iterable[RoleEdit]) -> t.TokenizerFile:
    """The tree with each header role edited in turn; adding an id a role holds changes nothing,
    removing one it does not hold is refused.  The other roles are never touched (a header left
    without ids drops its trailing space, which needs one)."""
    lists: dict[str, Any] = {role: list(getattr(tree.header, role)) for role in t.HEADER_ROLES}
    for e in edits:
        i = resolve(tree, e.token)
        ids = lists[e.role]
        if e.op == "+":
            if i not in ids:
                ids.append(i)
        elif i in ids:
            lists[e.role] = [x for x in ids if x != i]
        else:
            raise EditError(f"{e.role} does not hold id {i} ({e.token!r}): nothing to remove")
    # line 3 can end with a space only after an id (the format holds no empty line 3 with one)
    trailing = tree.header.trailing_space and any(lists.values())
    return replace(tree, header=replace(tree.header, **lists, trailing_space=trailing))


def _is_byte_level(tree: t.MtokFile) -> bool:
    def has(node: Any, cls: type) -> bool:
        if isinstance(node, cls):
            return True
        return any(has(child, cls) for child in getattr(node, "pretokenizers", getattr(node, "decoders", [])))

    return (has(tree.pre_tokenizer, t.ByteLevelPreTokenizer) or has(tree.decoder, t.ByteLevelDecoder)
            or (isinstance(tree.model, t.BPEModel) and tree.model.byte_level))


def add_token(tree: t.TokenizerFile, text: str, *, special: bool = False) -> tuple[t.MtokFile, int]:
    """The tree with ``text`` as an added token (``special``: also a header special id), and its id.

    A text the vocabulary already holds keeps its id.  Otherwise it gets a row in the vocabulary at
    its sorted place (in the byte-level spelling for a byte-level model; score 0 for Unigram) with
    the lowest id below the new vocabulary size that no token (nor header role) holds (MNN's loader stores row ``i``
    at ``id_to_token[id]`` of a table of that size: usually the old size).  When added tokens
    already hold every such id (whisper, phi-3: added tokens past the vocabulary), it becomes one
    of them, an added token only, with the next id after all: MNN encodes it to that id and, as
    for the others, decodes it by the vocabulary alone (``mnn-unk-decode``; see
    :func:`in_vocabulary`).  A text that is already an added token is refused.
    """
    if not isinstance(tree, t.MtokFile):
        raise EditError("adding tokens needs a .mtok file (upgrade the tokenizer.txt first: mtokspec upgrade)")
    if not text:
        raise EditError("an added token needs some text")
    if any(a.content == text for a in tree.added_tokens):
        raise EditError(f"{text!r} is already an added token")
    raw = text.encode("utf-8", "surrogatepass")
    if _is_byte_level(tree):
        from mtokspec.format.byte_level import BYTE_TO_CHAR

        raw = "".join(BYTE_TO_CHAR[b] for b in raw).encode("utf-8")
    model: Any = tree.model
    vocab: list[Any] = list(model.vocab)
    keys = [row[0] for row in vocab]
    at = bisect.bisect_left(keys, raw)
    if at < len(keys) and keys[at] == raw:
        new_id = vocab[at][1]
    else:
        taken = ({row[1] for row in vocab} | {a.id for a in tree.added_tokens}
                 | {i for role in t.HEADER_ROLES for i in getattr(tree.header, role)})
        new_id = next((i for i in range(len(vocab) + 1) if i not in taken), -1)
        if new_id >= 0:
            row = (raw, new_id, 0.0) if isinstance(model, t.UnigramModel) else (raw, new_id)
            vocab.insert(at, row)
            model = replace(model, vocab=vocab)
        else:  # no id inside the vocabulary is free: an added token past it, as the file's others
            new_id = 1 + max(taken)
    added = [*tree.added_tokens, t.AddedToken(id=new_id, special=special, content=text)]
    out = replace(tree, model=model, added_tokens=added)
    if special and new_id not in out.header.special:
        out = replace(out, header=replace(out.header, special=[*out.header.special, new_id]))
    return out, new_id


def in_vocabulary(tree: t.MtokFile, token_id: int) -> bool:
    """Whether ``token_id`` has a row in the model's vocabulary (MNN decodes only those)."""
    return any(row[1] == token_id for row in tree.model.vocab)


def _with_tails(tree: t.MtokFile, name: str) -> dict[str, Any]:
    """The absent trailing sections before ``name``, filled with their empty value (the format
    cannot hold a section without the ones before it)."""
    before = _TAILS[:_TAILS.index(name)]
    return {f: _EMPTY[f] for f in before if getattr(tree, f) is None}


def set_text(tree: t.TokenizerFile, name: str, value: str, *, must_be_token: bool = False) -> t.MtokFile:
    """The tree with the text section ``name`` (``chat_template``, ``eos_token``, ``bos_token``)
    set to ``value``; ``must_be_token``: refuse a non-empty value that is not a token's text."""
    if not isinstance(tree, t.MtokFile):
        raise EditError(f"{name} is a .mtok section; a legacy tokenizer.txt has none (mtokspec upgrade first)")
    if name not in TEXT_FIELDS:
        raise EditError(f"unknown text section {name!r}")
    if must_be_token and value and not ids_of_text(tree, value):
        raise EditError(f"{name} {value!r} is not a token of this file (add it with --add-token)")
    fields: dict[str, Any] = {**_with_tails(tree, name), name: value}
    return replace(tree, **fields)


def set_flag(tree: t.TokenizerFile, flag: str, on: bool) -> t.MtokFile:
    """The tree with one named bit of ``flags`` set or cleared."""
    if not isinstance(tree, t.MtokFile):
        raise EditError("flags are a .mtok section; a legacy tokenizer.txt has none")
    try:
        bit = t.MtokFlags[flag]
    except KeyError:
        raise EditError(f"unknown flag {flag!r}; known: {', '.join(f.name or '' for f in t.MtokFlags)}") from None
    flags = tree.flags or 0
    flags = flags | bit if on else flags & ~bit
    return replace(tree, **_with_tails(tree, "flags"), flags=int(flags))


def template_from_config(path: str | Path) -> str:
    """The chat template of a ``tokenizer_config.json`` (of a list of named templates, ``default``)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise EditError(f"{path}: cannot read: {e}") from None
    value = doc.get("chat_template") if isinstance(doc, dict) else None
    if isinstance(value, list):
        named = {d.get("name"): d.get("template") for d in value if isinstance(d, dict)}
        value = named.get("default")
        if not isinstance(value, str):
            raise EditError(f"{path}: chat_template is a list without a 'default' template")
    if not isinstance(value, str):
        raise EditError(f"{path}: no chat_template text in it")
    return value

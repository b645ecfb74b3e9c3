"""The bytes ``--target mnn`` chooses: for each lever of the format, the value for which MNN's C++
runtime gives the answer HF ``tokenizers`` gives on the folder's ``tokenizer.json``.

Each function takes the exporter's tree (what ``from_hf`` builds) and the folder's parsed
``tokenizer.json``, and returns the tree with one lever set; :func:`retarget` applies them all.

- post-processor: HF's single-sequence template (``TemplateProcessing``, ``RobertaProcessing``,
  ``BertProcessing``, ``ByteLevel``, ``Sequence``) as a program, never in a layout MNN misreads
  (a program of one sequence op and three ids has exactly ``count x 4`` bytes after its count: an
  op inserting id ``0xFFFFFFFF``, which MNN skips as negative, is added); the prefix ids are empty,
  since MNN applies the program after them (BOS twice otherwise);
- header special ids: only added tokens MNN's first-match split finds where HF's added-token
  matching finds them (content equal to the id's decoded text, no lstrip/rstrip: MNN's split
  strips nothing), longest text first, so the first match at a position is the longest; the others
  are still found, with their stripping, by MNN's added-token split;
- pre-tokenizers the exporter drops or approximates, as exact Splits MNN's regex engine runs:
  ``Whitespace`` (:data:`~mtokspec.convert.from_hf.WHITESPACE_SPLIT`), ``Digits`` without
  individual digits (``\\p{N}+`` isolated), ``Punctuation`` (isolated);
- decoder: no decoder (HF joins the tokens with spaces) as a WordPiece decoder whose prefix no
  token starts with; the clean-up flag as HF ``tokenizers`` decodes (it never applies
  ``clean_up_tokenization_spaces``), set only where a WordPiece decoder with ``cleanup`` needs
  MNN's clean-up to join what HF's joins.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mtokspec import tree as t

NOOP_ID = 0xFFFFFFFF
"""A program op inserting this id inserts nothing on MNN (read as -1, skipped as negative)."""

DIGITS_SPLIT = r"\p{N}+"
"""HF ``Digits(individual_digits=false)``: runs of numeric characters split off (isolated)."""

PUNCTUATION_SPLIT = r"[\p{P}$+<=>^`|~]"
"""HF ``Punctuation``: each punctuation character (Unicode P* or ASCII punctuation) on its own."""

_SEQ_A = "A"


def program_bytes(ops: list[t.PostOp]) -> int:
    """The size of a program's ops in bytes (what MNN compares with ``count x 4``)."""
    return sum(1 if isinstance(op, t.SequenceOp) else 5 for op in ops)


def misread_by_mnn(ops: list[t.PostOp]) -> bool:
    """Whether MNN's loader reads this program as the older ids-only layout."""
    return bool(ops) and program_bytes(ops) == 4 * len(ops)


def program(template: list) -> list[t.PostOp]:
    """HF's template (ids and ``"A"``) as ops MNN reads as written."""
    if template == [_SEQ_A]:
        return []
    ops: list[t.PostOp] = [t.SequenceOp() if x == _SEQ_A else t.SpecialTokenOp(int(x)) for x in template]
    if misread_by_mnn(ops):
        ops.append(t.SpecialTokenOp(NOOP_ID))
    return ops


def with_program(tree: t.MtokFile, template: list | None) -> t.MtokFile:
    """The post-processor and prefix lever (``template`` None: HF's is not modelled, keep the tree's)."""
    if template is None:
        return tree
    h = tree.header
    ids = h.ids
    special = ids[:h.special_count]
    stop = ids[h.special_count:h.special_count + h.stop_count]
    return replace(tree, header=t.make_header(special, stop, []),
                   post_processor=t.PostProcessorProgram(program(template)))


def with_specials(tree: t.MtokFile, tj: dict) -> t.MtokFile:
    """The header's special list in the order and extent for which MNN's split matches HF's."""
    from mtokspec.runtime.mnn import MnnTokenizer, UndefinedInMnn

    h = tree.header
    ids = h.ids
    special = list(dict.fromkeys(ids[:h.special_count]))
    stop = ids[h.special_count:h.special_count + h.stop_count]
    prefix = ids[h.special_count + h.stop_count:]
    by_id: dict[int, dict] = {}
    for a in tj.get("added_tokens") or []:
        if isinstance(a, dict) and isinstance(a.get("id"), int):
            by_id.setdefault(a["id"], a)
    try:
        mnn = MnnTokenizer.from_tree(tree)
    except UndefinedInMnn:
        return tree
    keep: list[tuple[int, int]] = []
    for k, i in enumerate(special):
        a = by_id.get(i)
        if a is None or a.get("lstrip") or a.get("rstrip") or not a.get("content"):
            continue
        try:
            text = mnn._decode_one(i)
        except (UndefinedInMnn, IndexError, KeyError):
            continue
        if text != a["content"].encode("utf-8", "surrogatepass"):
            continue
        keep.append((k, i))
    contents = {i: len(by_id[i]["content"].encode("utf-8", "surrogatepass")) for _, i in keep}
    keep.sort(key=lambda ki: (-contents[ki[1]], ki[0]))
    return replace(tree, header=t.make_header([i for _, i in keep], stop, prefix))


def _split_for(pt: Any) -> t.PreTokenizer | None:
    """An exact Split for a HF pre-tokenizer the exporter drops or approximates, else None."""
    from mtokspec.convert.from_hf import WHITESPACE_SPLIT

    if not isinstance(pt, dict):
        return None
    kind = pt.get("type")
    if kind == "Whitespace":
        return replace(WHITESPACE_SPLIT)
    if kind == "Digits" and not pt.get("individual_digits", False):
        return t.SplitPreTokenizer(DIGITS_SPLIT, False, int(t.SplitBehavior.Isolated))
    if kind == "Punctuation" and pt.get("behavior", "Isolated") == "Isolated":
        return t.SplitPreTokenizer(PUNCTUATION_SPLIT, False, int(t.SplitBehavior.Isolated))
    return None


def pre_tokenizer(node: t.PreTokenizer, pt: Any) -> t.PreTokenizer:
    """``node`` (the exporter's) with every replaceable HF pre-tokenizer of ``pt`` replaced."""
    exact = _split_for(pt)
    if exact is not None:
        return exact
    if isinstance(node, t.SequencePreTokenizer) and isinstance(pt, dict) and pt.get("type") == "Sequence":
        children = pt.get("pretokenizers") or []
        if len(children) == len(node.pretokenizers):
            return t.SequencePreTokenizer([pre_tokenizer(n, c) for n, c in zip(node.pretokenizers, children)])
    return node


def _unused_prefix(tree: t.MtokFile) -> str:
    """A WordPiece prefix no vocabulary token starts with (so every token after the first gets a
    space, as HF's join without a decoder)."""
    vocab = tree.model.vocab
    for cand in ("##", "\x01", "\x01\x02", "\x01\x02\x03"):
        b = cand.encode()
        if not any(row[0].startswith(b) for row in vocab):
            return cand
    raise AssertionError("no unused WordPiece prefix")  # pragma: no cover - 3 control bytes in every token


def decoder(tree: t.MtokFile, tj: dict) -> t.MtokFile:
    """The decoder chain and clean-up flag HF ``tokenizers``' ``decode`` needs."""
    dec = tj.get("decoder")
    flags = (tree.flags or 0) & ~t.MtokFlags.clean_up_tokenization_spaces
    node = tree.decoder
    if dec is None:
        node = t.WordPieceDecoder(_unused_prefix(tree), False)
    elif isinstance(dec, dict) and dec.get("type") == "WordPiece" and dec.get("cleanup", True):
        flags |= t.MtokFlags.clean_up_tokenization_spaces
    return replace(tree, decoder=node, flags=int(flags) if tree.flags is not None else None)


def retarget(tree: t.MtokFile, tj: dict, template: list | None) -> t.MtokFile:
    """The exporter's tree with every lever set for MNN's runtime."""
    tree = replace(tree, pre_tokenizer=pre_tokenizer(tree.pre_tokenizer, tj.get("pre_tokenizer")))
    tree = decoder(tree, tj)
    tree = with_program(tree, template)
    return with_specials(tree, tj)

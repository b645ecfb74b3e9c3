"""One-line descriptions of tree nodes and the section table that ``mtokspec inspect`` prints."""

from __future__ import annotations

from typing import Any

from mtokspec.format import tree as t
from mtokspec._generated import codec as _codec


def _yn(flag: bool) -> str:
    return "yes" if flag else "no"


def _short(text: str, limit: int = 24) -> str:
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 4] + "...'"


def describe(node: Any) -> str:
    """A one-line, human description of any normalizer, pre-tokenizer, model, decoder or program."""
    if isinstance(node, t.SequenceNormalizer):
        return "Sequence[" + ", ".join(describe(n) for n in node.normalizers) + "]"
    if isinstance(node, t.SequencePreTokenizer):
        return "Sequence[" + ", ".join(describe(n) for n in node.pretokenizers) + "]"
    if isinstance(node, t.SequenceDecoder):
        return "Sequence[" + ", ".join(describe(n) for n in node.decoders) + "]"
    if isinstance(node, t.TableNormalizer):
        return f"Table({len(node.table):,} code points)"
    if isinstance(node, (t.BertNormalizer, t.BertNFDNormalizer)):
        opts = [n for n in ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase") if getattr(node, n)]
        nfd = getattr(node, "nfd_table", None)
        table = f", NFD table {len(nfd):,}" if nfd else ""
        return f"Bert({', '.join(opts) or 'no options'}{table})"
    if isinstance(node, t.PrependNormalizer):
        return f"Prepend({_short(node.prepend)})"
    if isinstance(node, (t.ReplaceNormalizer, t.ReplaceDecoder)):
        return f"Replace({_short(node.pattern)} -> {_short(node.content)})"
    if isinstance(node, t.StripNormalizer):
        return f"Strip(left={_yn(node.strip_left)}, right={_yn(node.strip_right)})"
    if isinstance(node, t.ByteLevelPreTokenizer):
        return f"ByteLevel(regex={_yn(node.use_regex)})"
    if isinstance(node, t.DigitsPreTokenizer):
        return f"Digits(individual={_yn(node.individual_digits)})"
    if isinstance(node, (t.MetaspacePreTokenizer, t.MetaspaceDecoder)):
        return f"Metaspace({_short(node.replacement)}, prefix_space={_yn(node.add_prefix_space)})"
    if isinstance(node, t.SplitPreTokenizer):
        try:
            behavior = t.SplitBehavior(node.behavior).name
        except ValueError:
            behavior = f"?{node.behavior}"
        return f"Split({_short(node.pattern, 40)}, {behavior}{', inverted' if node.invert else ''})"
    if isinstance(node, t.BPEModel):
        return (f"BPE: {len(node.vocab):,} tokens, {len(node.merges):,} merges, "
                f"byte_fallback {_yn(node.byte_fallback)}, byte_level {_yn(node.byte_level)}")
    if isinstance(node, t.WordPieceModel):
        return (f"WordPiece: {len(node.vocab):,} tokens, unk {node.unk_token!r}, prefix "
                f"{node.continuing_subword_prefix!r}, max {node.max_input_chars_per_word} chars/word")
    if isinstance(node, t.UnigramModel):
        return f"Unigram: {len(node.vocab):,} pieces, unk_id {node.unk_id}, byte_fallback {_yn(node.byte_fallback)}"
    if isinstance(node, t.WordPieceDecoder):
        return f"WordPiece({node.prefix!r}, cleanup={_yn(node.cleanup)})"
    if isinstance(node, t.StripDecoder):
        return f"Strip({node.content!r}, start={node.start}, stop={node.stop})"
    if isinstance(node, t.PostProcessorProgram):
        ops = ["A" if isinstance(op, t.SequenceOp) else str(op.token_id) for op in node.ops]
        return "program [" + " ".join(ops) + "]" if ops else "empty program"
    if isinstance(node, t.LegacyPostProcessor):
        return "legacy program [A " + " ".join(map(str, node.ids)) + "]"
    if isinstance(node, (t.NoNormalizer, t.NoPreTokenizer)):
        return "none"
    name = type(node).__name__
    for suffix in ("Normalizer", "PreTokenizer", "Decoder"):
        if name.endswith(suffix) and name != suffix:
            return name[: -len(suffix)] or name
    return name


def _text_summary(value: str | None) -> str:
    if value is None:
        return "absent"
    if value == "":
        return "present, empty"
    return _short(value, 60)


FORMAT_NAMES = {
    t.MtokFile: ".mtok (MNN PIPELINE tokenizer, type 4)",
    t.SentencePieceTxtFile: "tokenizer.txt type 0 (SENTENCEPIECE)",
    t.TiktokenTxtFile: "tokenizer.txt type 1 (TIKTOKEN)",
    t.BertTxtFile: "tokenizer.txt type 2 (BERT)",
    t.HuggingFaceTxtFile: "tokenizer.txt type 3 (HUGGINGFACE)",
}


def _header_summary(h: t.Header) -> str:
    return (", ".join(f"{role} {len(getattr(h, role))}" for role in t.HEADER_ROLES)
            + (" (ids end with a space)" if h.trailing_space else ""))


def labelled_roles(tree: t.TokenizerFile) -> dict[str, list[tuple[int, str | None]]]:
    """The header's ids by role, each with its token text (None: the file has no such id)."""
    from mtokspec.format.token_names import labelled

    h = tree.header
    ids = [i for role in t.HEADER_ROLES for i in getattr(h, role)]
    names = dict(labelled(tree, ids))
    return {role: [(i, names[i]) for i in getattr(h, role)] for role in t.HEADER_ROLES}


def format_ids(pairs: list[tuple[int, str | None]], limit: int | None = None) -> str:
    """``id 'token'`` pairs on one line (``limit``: at most that many, then how many more)."""
    shown = pairs if limit is None else pairs[:limit]
    text = ", ".join(f"{i} {'(not a token)' if s is None else repr(s)}" for i, s in shown)
    return text + (f", ... {len(pairs) - len(shown)} more" if len(shown) < len(pairs) else "")


def inspect_rows(tree: t.TokenizerFile) -> list[tuple[str, int | None, str]]:
    """(section, size in bytes or None when absent, description) for every top-level section."""
    sizes = getattr(_codec, f"section_sizes_{type(tree).__name__}")(tree)
    if not isinstance(tree, t.MtokFile):
        detail = {"header": _header_summary(tree.header)}
        if isinstance(tree, t.SentencePieceTxtFile):
            kinds: dict[int, int] = {}
            for _, _, kind in tree.pieces:
                kinds[kind] = kinds.get(kind, 0) + 1
            detail["pieces"] = f"{len(tree.pieces):,} pieces; by type " + ", ".join(
                f"{k}: {v:,}" for k, v in sorted(kinds.items()))
        else:
            detail["tokens"] = f"{len(tree.tokens):,} tokens"
        if isinstance(tree, t.HuggingFaceTxtFile):
            detail["merges"] = f"{len(tree.merges):,} lines"
            detail["final_newline"] = "yes" if tree.final_newline else "no (the last merge line has no newline)"
        return [(name, size, detail.get(name, "the counts of the lines below")) for name, size in sizes]
    h = tree.header
    detail = {
        "header": _header_summary(h),
        "normalizer": describe(tree.normalizer),
        "pre_tokenizer": describe(tree.pre_tokenizer),
        "model": describe(tree.model),
        "decoder": describe(tree.decoder),
        "added_tokens": f"{len(tree.added_tokens):,} tokens, {sum(a.special for a in tree.added_tokens):,} special",
        "chat_template": (_text_summary(tree.chat_template) if not tree.chat_template
                          else f"{len(tree.chat_template):,} characters"),
        "eos_token": _text_summary(tree.eos_token),
        "flags": "absent" if tree.flags is None else
                 f"{tree.flags:#04x} (clean_up_tokenization_spaces {_yn(bool(tree.flags & t.MtokFlags.clean_up_tokenization_spaces))})",
        "bos_token": _text_summary(tree.bos_token),
        "post_processor": "absent" if tree.post_processor is None else describe(tree.post_processor),
        "extension": "absent" if tree.extension is None else
                     "format next: " + (", ".join(map(repr, tree.extension.fields)) or "no fields"),
    }
    return [(name, size, detail[name]) for name, size in sizes]

"""Decoders: how ``--target mnn`` carries each HF decoder on the released format."""

from __future__ import annotations

from typing import Any

from mtokspec.convert.mnn_target.variants.row import Context, Variant, Verdict as V
from mtokspec.convert.mnn_target.variants.regex_literals import literal
from mtokspec.format import tree as t

__all__ = ["ROWS"]


def _regex(node: Any) -> str | None:
    p = node.get("pattern")
    return p.get("Regex") if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None


def _lower_replace(node: Any, old: Any, _ctx: Context) -> t.Decoder | None:
    regex = _regex(node)
    if regex is None or not isinstance(old, t.ReplaceDecoder):
        return None
    text = literal(regex)
    return t.ReplaceDecoder(text, old.content) if text else None


def _metaspace_prefix(node: Any) -> bool:
    """Whether HF's Metaspace decoder drops the first token's leading space (prepend_scheme, else
    the older add_prefix_space)."""
    scheme = node.get("prepend_scheme")
    return scheme != "never" if isinstance(scheme, str) else bool(node.get("add_prefix_space", True))


def _lower_metaspace(node: Any, old: Any, _ctx: Context) -> t.Decoder | None:
    if not isinstance(old, t.MetaspaceDecoder):
        return None
    return t.MetaspaceDecoder(old.replacement, _metaspace_prefix(node))


def _lower_bpe_decoder(node: Any, _old: Any, _ctx: Context) -> t.Decoder | None:
    """HF's BPEDecoder: each token's ``suffix`` a space, the last token's nothing (joined first:
    HF's Strip works on every token, MNN's on the last)."""
    suffix = node.get("suffix", "</w>")
    if not isinstance(suffix, str) or not suffix:
        return None
    return t.SequenceDecoder([t.ReplaceDecoder(suffix, " "), t.FuseDecoder(), t.StripDecoder(" ", 0, 1)])


ROWS: tuple[Variant, ...] = (
    Variant("decoder", "ByteLevel", "", V.EXACT, "ByteLevel",
            example={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}),
    Variant("decoder", "ByteFallback", "", V.EXACT, "ByteFallback", model="bpe-fallback",
            example={"type": "ByteFallback"}),
    Variant("decoder", "Fuse", "", V.EXACT, "Fuse", example={"type": "Fuse"}),
    Variant("decoder", "Strip", "", V.APPROXIMATED, "Strip", "mnn-decoder-chain",
            why="MNN's Strip takes its content once, from the first token's start and the last token's end (HF: "
                "up to start and stop times, from every token; the same after a Fuse); the one-id print runs none",
            example={"type": "Strip", "content": " ", "start": 1, "stop": 0}),
    Variant("decoder", "Replace", "pattern=String or a literal Regex", V.EXACT, "Replace (literal)", tag="literal",
            applies=lambda n: _regex(n) is None or literal(_regex(n) or "") is not None, lower=_lower_replace,
            example={"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}),
    Variant("decoder", "Replace", "pattern=Regex, any other", V.IMPOSSIBLE,
            "left out (MNN's decode never returns from the empty pattern the exporter writes)",
            "format:decoder.Replace[Regex]", tag="Regex", why="MNN's Replace decoder is literal",
            applies=lambda n: _regex(n) is not None and literal(_regex(n) or "") is None,
            example={"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}),
    Variant("decoder", "Metaspace", "prepend_scheme=never", V.APPROXIMATED,
            "Metaspace without the prefix (the exporter reads add_prefix_space only: on)", "mnn-decoder-chain",
            tag="never", model="unigram", applies=lambda n: not _metaspace_prefix(n), lower=_lower_metaspace,
            why="decode is HF's; the engine's one-id print (its stream) turns only U+2581 into a space (another "
                "replacement prints as it is)",
            example={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": True}),
    Variant("decoder", "Metaspace", "prepend_scheme=always/first", V.APPROXIMATED, "Metaspace",
            "mnn-decoder-chain", model="unigram", applies=_metaspace_prefix, lower=_lower_metaspace,
            why="decode is HF's; the engine's one-id print (its stream) cannot know a token is the first: it "
                "prints its space (MNN's own test passes one extra leading space), and it turns only U+2581 into a "
                "space",
            example={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}),
    Variant("decoder", "WordPiece", "", V.APPROXIMATED,
            "WordPiece; with cleanup, the tokens the clean-up joins to the one before "
            "(. , ? ! and tokens starting so) spelled as continuations too (a second row of their text looks them "
            "up), the prefix renamed U+007F: MNN prints them without a space, token by token as in decode. "
            "After a pre-tokenizer that leaves punctuation inside words (Whitespace, ...), a joined token with "
            "no ##x has a row of [UNK]'s id first (MNN's continuation look-up passes over it, as HF finds "
            "nothing; prefix @U+007F, below [UNK]), and each continuation keeps its ##x row for words that "
            "start with ##",
            "mnn-wordpiece-cleanup", model="wordpiece",
            why="MNN's decode removes the space before . ? ! , with cleanup off too, and the prefix of a first "
                "token (HF keeps '##'; mtokspec's HF semantics of the file keeps U+007F); text without the new "
                "prefix at the start of a word; a joined token with no ##x stays spaced where the unknown "
                "token sorts first (<unk>)",
            example={"type": "WordPiece", "prefix": "##", "cleanup": True}),
    Variant("decoder", "BPEDecoder", "", V.APPROXIMATED,
            "Sequence[Replace(suffix, ' '), Fuse, Strip(' ', stop=1)]: the suffix a space, the last one removed",
            "mnn-stream-decode", lower=_lower_bpe_decoder,
            why="MNN's one-id print (its stream) runs no decoder: it prints the suffix; and a last token without "
                "the suffix that ends with a space loses it",
            example={"type": "BPEDecoder", "suffix": "</w>"}),
    Variant("decoder", "CTC", "", V.IMPOSSIBLE, "ByteLevel (the exporter's fallback)", "format:decoder.CTC",
            why="no decoder of the format removes repeated tokens", example={"type": "CTC", "pad_token": "<pad>",
                                                                            "word_delimiter_token": "|",
                                                                            "cleanup": True}),
    Variant("decoder", "Sequence", "", V.EXACT, "Sequence of the children's rows",
            example={"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"},
                                                       "content": " "}, {"type": "Fuse"}]}),
    Variant("decoder", "(none)", "", V.APPROXIMATED,
            "a WordPiece decoder whose prefix no token starts with (HF joins the tokens with spaces)",
            "mnn-wordpiece-cleanup", applies=lambda n: False,
            why="only MNN's WordPiece decoder puts a space between tokens, and MNN's decode then always removes the "
                "one before . ? ! , (another decoder would need a mark in every token's text, which the model's "
                "look-ups of merged or matched text cannot carry); the one-id print spaces the first token too"),
)

"""Around the model: the header's prefix ids, the post-processor program, the special-token split
and added tokens."""

from __future__ import annotations

from collections.abc import Iterator

from mtokspec.errors import UndefinedInMnn
from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK
from mtokspec.format import tree as t
from mtokspec.format.validate import ERROR, INFO, WARNING
from mtokspec.runtime.mnn._text import utf8
from mtokspec.runtime.mnn.tokenizer import post_program_ops, written_ops


def _misread(tree) -> bool:
    pp = getattr(tree, "post_processor", None)
    return isinstance(pp, t.PostProcessorProgram) and bool(pp.ops) and post_program_ops(pp) != written_ops(pp)


def _inserted(tree) -> list[int]:
    return [op for op in post_program_ops(getattr(tree, "post_processor", None)) if op is not None]


def _bos_twice_applies(tree) -> bool:
    return isinstance(tree, t.MtokFile) and bool(t.header_roles(tree.header).prefix) and bool(_inserted(tree))


def _no_sequence(tree) -> bool:
    """A post-processor program (as written) with ops but no sequence op: HF's encode keeps no text."""
    pp = getattr(tree, "post_processor", None)
    return isinstance(pp, t.PostProcessorProgram) and bool(pp.ops) and None not in written_ops(pp)


def _predict_no_sequence(ctx: LintContext) -> Iterator[Prediction]:
    if isinstance(ctx.tree, t.MtokFile) and _no_sequence(ctx.tree):
        yield (WARNING, "post_processor",
               "this program has no sequence op: HF's encode drops the text (only the program's ids with "
               "special tokens, nothing without them), while MNN's encode(text, false) skips the program "
               "and keeps the text's ids")


def _predict_misread(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if isinstance(tree, t.MtokFile) and _misread(tree):
        pp = tree.post_processor
        ops, written = post_program_ops(pp), written_ops(pp)
        yield (ERROR, "post_processor",
               f"MNN reads this program as sequence A then the ids {[i for i in ops if i is not None]} "
               f"(its bytes after the count number count x 4); every encode(text) gets them instead of "
               f"{['A' if op is None else op for op in written]}")


def _predict_bos_twice(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if not isinstance(tree, t.MtokFile):
        if tree.header.prefix:
            yield (INFO, "header.prefix",
                   "legacy files have no post-processor: MNN's encode(text) adds only the prefix ids")
        return
    prefix, inserted = t.header_roles(tree.header).prefix, _inserted(tree)
    if prefix and inserted:
        twice = sorted(set(prefix) & set(inserted))
        yield (ERROR, "header.prefix",
               f"MNN puts the prefix ids {prefix} first and then applies the post-processor program, "
               f"which inserts {inserted}" + (f": id(s) {twice} appear twice" if twice else "")
               + " in every encode(text) (HF applies one of them)")


def _predict_special_split(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if not isinstance(tree, t.MtokFile) or ctx.mnn is None:
        return
    try:
        specials = ctx.mnn._specials()
    except UndefinedInMnn:
        return
    contents = {utf8(a.content) for a in tree.added_tokens}
    odd = [(s, i) for s, i in specials if s not in contents]
    if odd:
        shown = ", ".join(f"{i}: {s.decode('utf-8', 'replace')!r}" for s, i in odd[:5])
        yield (WARNING, "header.special",
               f"MNN cuts the text at the per-id decoded text of every special id before tokenizing; "
               f"{len(odd)} of them are not an added token's content ({shown}{', ...' if len(odd) > 5 else ''}): "
               "text containing them is split where HF does not split it")


def _predict_added_strip(ctx: LintContext) -> Iterator[Prediction]:
    tree = ctx.tree
    if not isinstance(tree, t.MtokFile) or ctx.mnn is None:
        return
    stripped = [k for k, a in enumerate(tree.added_tokens) if a.lstrip or a.rstrip]
    if stripped:
        yield (WARNING, f"added_tokens[{stripped[0]}]",
               f"{len(stripped)} added token(s) strip white space beside them; MNN strips ASCII white space only "
               "(HF also U+00A0, U+3000, U+0085, ...)")


BOS_TWICE = Rule(
    "mnn-bos-twice", "post-processor",
    "encode() puts the header's prefix ids first and then applies the post-processor program to "
    "the whole list, so a file with both gets BOS twice (HF: once)",
    'prefix [1], program [1, A], "Hi" = [22557]: HF [1, 22557], MNN [1, 1, 22557]', f"{TOK}:225",
    stage="post-processor", applies=_bos_twice_applies, predict=_predict_bos_twice)
POST_MISREAD = Rule(
    "mnn-post-misread", "post-processor",
    "a program whose bytes after the count number exactly count x 4 is read as the older "
    "ids-only layout: sequence A, then the op bytes as u32 ids",
    "whisper's [50258, 50363, A, 50257]: HF adds those ids, MNN appends 3 garbage ids and drops the "
    "prefix", f"{TOK}:2498",
    stage="post-processor", applies=_misread, predict=_predict_misread)
POST_NO_SEQUENCE = Rule(
    "mnn-post-no-sequence", "post-processor",
    "a program without a sequence op: HF's encode keeps no text even without special tokens "
    "(encode(text, add_special_tokens=False) is []), MNN's encode(text, false) skips the program "
    "and keeps the ids (with the program both give its ids alone)",
    'program [3], "aab" = [1, 2]: HF encode(add_special_tokens=False) [], MNN encode(text, false) [1, 2]',
    f"{TOK}:225", stage="post-processor", applies=_no_sequence, predict=_predict_no_sequence)
SPECIAL_SPLIT = Rule(
    "mnn-special-split", "added tokens",
    "before the pipeline, the text is cut at every header special id's per-id decoded text "
    "(tried at each byte in header order, the first match wins), even where HF's added-token "
    "rules would not match it",
    'a special id whose token is "<s>" splits "a<s>b" although HF has no added token "<s>"',
    f"{TOK}:225", predict=_predict_special_split)
ADDED_STRIP_ASCII = Rule(
    "mnn-added-strip-ascii", "added tokens",
    "lstrip/rstrip of an added token eat ASCII white space only, and added tokens match "
    "earliest then longest",
    'rstrip token "<m>" on "<m>\\u3000x": HF eats U+3000, MNN keeps it', f"{TOK}:1989",
    predict=_predict_added_strip)

RULES: tuple[Rule, ...] = (BOS_TWICE, POST_MISREAD, POST_NO_SEQUENCE, SPECIAL_SPLIT, ADDED_STRIP_ASCII)

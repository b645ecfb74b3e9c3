"""Pre-tokenizers: Digits, Metaspace, the split patterns of MNN's regex engine, BertPreTokenizer."""

from __future__ import annotations

import re
from collections.abc import Iterator

from mtokspec.divergences.rule import LintContext, Prediction, Rule
from mtokspec.divergences.rules import TOK, UNI
from mtokspec.format import tree as t
from mtokspec.format.growth import nested_quantifier
from mtokspec.format.validate import ERROR, INFO, WARNING
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn.regex_compile import dropped_alternatives
from mtokspec.runtime.shared.text import QUANTIFIER


def _nodes(tree) -> list[tuple[object, str]]:
    return list(t.walk_stage(tree.pre_tokenizer, "pre_tokenizer")) if isinstance(tree, t.MtokFile) else []


def _splits(node: object) -> bool:
    """A pre-tokenizer that cuts the text into several splits (a Metaspace after it sees each)."""
    return isinstance(node, (t.DigitsPreTokenizer, t.SplitPreTokenizer, t.BertPreTokenizer)) or (
        isinstance(node, t.ByteLevelPreTokenizer) and node.use_regex)


def _has(cond):
    return lambda tree: any(cond(node) for node, _ in _nodes(tree))


def _predict_digits(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree):
        if isinstance(node, t.DigitsPreTokenizer):
            if not node.individual_digits:
                yield (WARNING, path,
                       "Digits(individual_digits=false) does not split on MNN: digit runs stay joined to "
                       "the letters beside them (HF splits them off)")
            else:
                yield INFO, path, "MNN isolates ASCII digits only (HF: every numeric character)"


def _prepending_metaspaces(tree) -> Iterator[tuple[object, str]]:
    """Metaspaces with ``add_prefix_space`` after a pre-tokenizer that splits (each split prepended)."""
    splitting_before = False
    for node, path in _nodes(tree):
        if isinstance(node, t.MetaspacePreTokenizer) and node.add_prefix_space and splitting_before:
            yield node, path
        splitting_before = splitting_before or _splits(node)


def _predict_metaspace(ctx: LintContext) -> Iterator[Prediction]:
    for _, path in _prepending_metaspaces(ctx.tree):
        yield (INFO, path,
               "MNN prepends the replacement to every split that does not start with a space; HF "
               "does so only with prepend_scheme 'always' (the file does not record the scheme)")


def _joining_tokens(tree, replacement: str) -> list[str]:
    """Tokens of the model holding ``replacement`` after their first character (they can join words
    when nothing cuts the text before each replacement)."""
    rep = replacement.encode("utf-8", "surrogatepass")
    if not rep:
        return []
    vocab = getattr(tree.model, "vocab", None) or []
    return [row[0].decode("utf-8", "replace") for row in vocab if rep in row[0][1:]]


def _cut_after(tree, node) -> bool:
    """Whether a Split after this Metaspace cuts before each replacement (``R[^R]*``, Isolated: the
    form ``--target mnn`` writes HF's ``split=true`` in)."""
    seen = False
    rep = node.replacement
    for n, _ in _nodes(tree):
        if n is node:
            seen = True
        elif seen and isinstance(n, t.SplitPreTokenizer) and n.behavior == t.SplitBehavior.Isolated \
                and not n.invert and len(rep) == 1 and n.pattern in (f"{rep}[^{rep}]*", f"\\{rep}[^\\{rep}]*"):
            return True
    return False


def _uncut_metaspaces(tree) -> list[tuple[object, str]]:
    return [(n, p) for n, p in _nodes(tree) if isinstance(n, t.MetaspacePreTokenizer) and not _cut_after(tree, n)]


def _predict_metaspace_no_split(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _uncut_metaspaces(ctx.tree):
        joining = _joining_tokens(ctx.tree, node.replacement)
        if joining:
            yield (WARNING, path,
                   f"MNN's Metaspace does not cut the text before each {node.replacement!r} (HF's does): the model "
                   f"sees whole runs of words, and {len(joining)} token(s) such as {joining[0]!r} can join words "
                   "there that HF keeps apart")
        else:
            yield (INFO, path,
                   f"MNN's Metaspace does not cut the text before each {node.replacement!r} (HF's does); no token "
                   "of the model spans a cut, so the ids agree")


def _escape_end(p: str, i: int) -> int | None:
    """The end of the escape at ``p[i]`` when ``std::wregex`` reads it as one code point
    (punctuation, ``\\xHH``, ``\\t \\n \\r \\f \\v``), else None (a class such as ``\\s``)."""
    e = p[i + 1:i + 2]
    if e and not e.isalnum() or e and e in "tnrfv":
        return i + 2
    if e == "x" and len(p) >= i + 4 and all(c in "0123456789abcdefABCDEF" for c in p[i + 2:i + 4]):
        return i + 4
    return None


def _class_end(p: str, i: int) -> int | None:
    """The end of the bracket class at ``p[i]`` when it holds only code points and ranges of them."""
    i += 2 if p[i + 1:i + 2] == "^" else 1
    start = i
    while i < len(p) and p[i] != "]":
        if p[i] == "[":
            return None  # a POSIX class or a collating element
        j = _escape_end(p, i) if p[i] == "\\" else i + 1
        if j is None:
            return None
        i = j
    return None if i >= len(p) or i == start else i + 1


def literal_classes(pattern: str) -> bool:
    """Whether a pattern is the part of ECMAScript that ``std::wregex`` runs as mtokspec's emulation
    does, on code points: literal characters and escapes of one (:func:`_escape_end`), bracket
    classes of them with ranges (negated too; without ``regex::collate``, as MNN builds it, a
    range is compared by code point), groups (``(?:`` too), alternation, greedy and lazy
    quantifiers, and ``^``/``$`` at the ends of a top-level alternative.  No C-locale class
    (``\\s``, ``\\w``, ``\\d``, ``.``), look-around or back-reference is involved."""
    i, n, depth, atom, start = 0, len(pattern), 0, False, True
    while i < n:
        c = pattern[i]
        if c == "^" and start:
            i, start = i + 1, False
            continue
        start = False
        if c == "$" and not depth and pattern[i + 1:i + 2] in ("", "|"):
            i, atom = i + 1, False
            continue
        if c in "?*+{":
            m = QUANTIFIER.match(pattern, i)
            if m is None or not atom:
                return False
            i, atom = m.end(), False
            continue
        if c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                return False
            i, depth, atom = i + (3 if pattern.startswith("(?:", i) else 1), depth + 1, False
            continue
        if c in ")|":
            if c == ")" and not depth:
                return False
            depth -= c == ")"
            i, atom, start = i + 1, c == ")", c == "|" and not depth
            continue
        if c in ".^$}]":
            return False
        j = _escape_end(pattern, i) if c == "\\" else _class_end(pattern, i) if c == "[" else i + 1
        if j is None:
            return False
        i, atom = j, True
    return not depth


def _predict_regex(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree):
        if isinstance(node, t.ByteLevelPreTokenizer) and node.use_regex:
            yield (WARNING, path,
                   "MNN runs the GPT-2 pattern on text folded to classes: U+0085, U+2028 and U+2029 are no "
                   "white space there (HF: \\s), and U+0001-U+0007 read as the class stand-ins, so text "
                   "around them splits differently")
            continue
        if not isinstance(node, t.SplitPreTokenizer):
            continue
        pattern = node.pattern
        p = pattern.encode("utf-8", "surrogatepass")
        if R.uses_wregex(p):
            if literal_classes(pattern):
                continue  # literal characters and classes of them: std::wregex is exact on these
            yield (WARNING, f"{path}.pattern",
                   "this pattern holds non-ASCII characters and no \\p{..}: MNN runs it with C++ std::wregex "
                   "(ECMAScript, C-locale classes), not a Unicode regex engine (mtokspec approximates it)")
            continue
        if not p.isascii() or re.search(rb"\\[pPwW]", p):
            yield (WARNING, f"{path}.pattern",
                   "MNN runs this pattern on text folded to one byte per character class: U+0001-U+0007 in the "
                   "text read as the stand-ins of a letter, a digit, a space... (\"a\\x01b\" is one word there)")
        if dropped_alternatives(p):
            yield (ERROR, f"{path}.pattern",
                   "MNN's regex engine drops the alternatives of this pattern that use \\b, \\B, \\A, \\Z, "
                   "back-references, look-ahead (?=, look-behind or named groups (all of them: it uses GPT-2's "
                   "pattern instead)")
        if not p.isascii():
            yield (WARNING, f"{path}.pattern",
                   "a non-ASCII character in this pattern stands for its whole class on MNN (a letter for "
                   "every non-ASCII letter)")
        if any(q in pattern for q in ("*?", "+?", "??", "}?")):
            yield WARNING, f"{path}.pattern", "MNN matches lazy quantifiers greedily"


def _predict_bert(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree):
        if isinstance(node, t.BertPreTokenizer):
            yield INFO, path, "MNN splits on ASCII white space and Zs only (HF also U+0085, U+2028, U+2029)"


DIGITS_NO_SPLIT = Rule(
    "mnn-digits-no-split", "pre-tokenizer.Digits",
    "Digits(individual_digits=false) does not split at all (HF splits digit runs off); with "
    "individual digits only ASCII 0-9 count as digits",
    'Digits(false) on "ab12": HF ["ab", "12"], MNN ["ab12"]', f"{TOK}:1396",
    stage="pre-tokenizer", applies=_has(lambda n: isinstance(n, t.DigitsPreTokenizer)), predict=_predict_digits)
METASPACE_EVERY_SPLIT = Rule(
    "mnn-metaspace-every-split", "pre-tokenizer.Metaspace",
    "Metaspace prepends the replacement to every split that does not start with a space (HF: "
    "only the first, with prepend_scheme first)",
    'Split then Metaspace on "a-b": HF ["▁a", "-", "b"], MNN ["▁a", "▁-", "▁b"]', f"{TOK}:1424",
    stage="pre-tokenizer", applies=lambda tree: any(_prepending_metaspaces(tree)), predict=_predict_metaspace)
METASPACE_NO_SPLIT = Rule(
    "mnn-metaspace-no-split", "pre-tokenizer.Metaspace",
    "Metaspace replaces spaces but never cuts the text before each replacement (HF: split=true, a "
    "split per word), so the model sees a run of words at once and a token holding the replacement "
    "inside it joins words",
    'Metaspace, BPE with "▁a▁b", on "a b": HF ["▁a", "▁b"] (ids [3, 4]), MNN ["▁a▁b"] ([5])',
    f"{TOK}:1429", stage="pre-tokenizer", applies=lambda tree: bool(_uncut_metaspaces(tree)),
    predict=_predict_metaspace_no_split)


def _prefixing(tree) -> list[tuple[object, str]]:
    return [(n, p) for n, p in _nodes(tree) if isinstance(n, t.MetaspacePreTokenizer) and n.add_prefix_space]


def _predict_metaspace_prefix(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _prefixing(ctx.tree):
        yield (INFO, path,
               f"a split that starts with {node.replacement!r} itself gets another one on MNN (it looks for a "
               f"space before replacing; HF for {node.replacement!r} after)")


METASPACE_PREFIX_REPLACEMENT = Rule(
    "mnn-metaspace-prefix", "pre-tokenizer.Metaspace",
    "Metaspace prepends the replacement to a split that does not start with a space, before replacing "
    "spaces: a split that starts with the replacement character itself gets a second one (HF checks "
    "for the replacement, after replacing)",
    'Metaspace on "▁a": HF ["▁a"], MNN ["▁▁a"]', f"{TOK}:1424", stage="pre-tokenizer",
    applies=lambda tree: bool(_prefixing(tree)), predict=_predict_metaspace_prefix,
    case=lambda tree, text: any(n.replacement.encode("utf-8", "surrogatepass") in text for n, _ in _prefixing(tree)))
REGEX_ENGINE = Rule(
    "mnn-regex-engine", "pre-tokenizer.Split/ByteLevel",
    "split patterns run on text folded to one byte per character class: a non-ASCII literal "
    "stands for its whole class, \\p{..} reads only the property's first letter, groups do "
    "not backtrack, lazy is greedy, alternatives with \\b, look-ahead (?=, look-behind or "
    "back-references are dropped; a pattern with non-ASCII and no \\p{ goes to std::wregex",
    'Split "[é\\p{N}]" isolated on "aüb": HF no match, MNN ["a", "ü", "b"] (é stands for any non-ASCII letter)',
    f"{UNI}:77", stage="pre-tokenizer",
    applies=_has(lambda n: (isinstance(n, t.SplitPreTokenizer) and not (
        R.uses_wregex(n.pattern.encode("utf-8", "surrogatepass")) and literal_classes(n.pattern)))
        or (isinstance(n, t.ByteLevelPreTokenizer) and n.use_regex)),
    predict=_predict_regex)
BERT_PRETOKENIZER = Rule(
    "mnn-bert-pretokenizer", "pre-tokenizer.Bert",
    "BertPreTokenizer uses Unicode 15.0 categories and ASCII/Zs white space (HF: its own "
    "Unicode version and White_Space)",
    'on "a\\u2028b": HF ["a", "b"], MNN ["a\\u2028b"]', f"{TOK}:1468",
    stage="pre-tokenizer", applies=_has(lambda n: isinstance(n, t.BertPreTokenizer)), predict=_predict_bert)

def _predict_backtracking(ctx: LintContext) -> Iterator[Prediction]:
    for node, path in _nodes(ctx.tree):
        if not isinstance(node, t.SplitPreTokenizer):
            continue
        refusal = R.mnn_refusal(node.pattern.encode("utf-8", "surrogatepass"))
        if refusal is not None:
            yield ERROR, f"{path}.pattern", refusal.split(": ", 1)[-1]
        elif nested_quantifier(node.pattern):
            yield (WARNING, f"{path}.pattern",
                   "this pattern repeats a group that holds a quantifier or an alternation: MNN's backtracking "
                   "regex engines can take hours on a text that almost matches")


REGEX_BACKTRACKING = Rule(
    "mnn-regex-backtracking", "pre-tokenizer.Split",
    "MNN's own regex engine and std::wregex backtrack without bound: a pattern repeating a group "
    "that holds a quantifier or an alternation ((a+)+, (a|aa)*) can take hours on a short text that "
    "almost matches, and std::wregex recurses once per character a match attempt consumes (a "
    "match past about 26,000 characters overflows an 8 MiB stack); mtokspec refuses both within a "
    "second or two of work (UndefinedInMnn)",
    'Split("(a+)+é"), 31 characters: MNN never returns', f"{UNI}:511", predict=_predict_backtracking)

RULES: tuple[Rule, ...] = (DIGITS_NO_SPLIT, METASPACE_EVERY_SPLIT, METASPACE_NO_SPLIT, METASPACE_PREFIX_REPLACEMENT,
                           REGEX_ENGINE, BERT_PRETOKENIZER, REGEX_BACKTRACKING)

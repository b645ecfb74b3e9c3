"""Pre-tokenizers: how ``--target mnn`` carries each HF pre-tokenizer on the released format.

MNN's Split knows the behaviours Isolated, Removed and MergedWithPrevious; a pattern with a
``\\p{..}`` runs on MNN's own engine (text folded to one byte per character class), one with other
non-ASCII characters on ``std::wregex`` (exact on literal characters).  The other behaviours of a
single character class (or a run of one, inverted or not) are written as Isolated patterns
(:func:`class_split`).
"""

from __future__ import annotations

from typing import Any

from mtokspec.convert.mnn_target.variants.row import Context, Variant, Verdict as V
from mtokspec.convert.mnn_target.variants.regex_literals import (ClassPattern, class_alternatives, class_pattern, escape,
                                                                  literal, spell_letter_cases, wregex_pattern,
                                                                  wregex_ranges)
from mtokspec.format import tree as t
from mtokspec.runtime.hf.normalizers import WHITESPACE_STR
from mtokspec.runtime.mnn.unicode import holds_stand_ins

__all__ = ["ROWS", "PUNCTUATION_CLASS", "DIGITS_SPLIT", "WHITE_SPACE_CLASS", "unicode_scripts_splits"]

PUNCTUATION_CLASS = r"[\p{P}$+<=>^`|~]"
"""HF ``Punctuation``'s characters: Unicode P* and ASCII punctuation (MNN's \\p{P} misses $+<=>^`|~)."""
PUNCTUATION_NOT = r"[^\p{P}$+<=>^`|~]"
DIGITS_SPLIT = r"\p{N}+"
"""HF ``Digits(individual_digits=false)``: runs of numeric characters split off (isolated)."""
WHITE_SPACE_CLASS = "[" + "".join("\\" + c if c in "\\]^-" else c for c in WHITESPACE_STR) + "]"
"""Unicode White_Space as literal characters (a pattern ``std::wregex`` runs: exact on every one)."""

TRAILING_WHITE_SPACE = WHITE_SPACE_CLASS + "+$"
"""White space at the end of a text (``std::wregex``: ``$`` is the end of the input)."""
LEADING_WHITE_SPACE = "^" + WHITE_SPACE_CLASS + "+"
"""White space at the start of a text."""

_ISOLATED, _REMOVED, _MERGED_PREVIOUS = (int(t.SplitBehavior.Isolated), int(t.SplitBehavior.Removed),
                                         int(t.SplitBehavior.MergedWithPrevious))
_NATIVE = {"Isolated": _ISOLATED, "Removed": _REMOVED, "MergedWithPrevious": _MERGED_PREVIOUS}
_BEHAVIORS = {"isolated": "Isolated", "removed": "Removed", "merged_with_previous": "MergedWithPrevious",
              "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}


def behavior_of(node: Any) -> str:
    """A node's split behaviour, as ``tokenizer.json`` spells it (``Isolated`` by default)."""
    b = node.get("behavior", "Isolated")
    return _BEHAVIORS.get(b, b) if isinstance(b, str) else ""


def class_split(cls: str, negated: str, behavior: str, invert: bool = False,
                run: bool = False) -> t.SplitPreTokenizer:
    """A Split of one character class ``cls`` (``run``: of ``cls+``; ``negated``: its complement
    ``N``) with any HF behaviour and ``invert``, as MNN's Split runs it.  HF cuts the text into
    matches and gaps (never two gaps in a row; two matches in a row only for a single class):

    - Isolated ignores the flags; Removed as is; Contiguous joins neighbours of one flag: ``C+``;
    - MergedWithNext joins a match to the piece after it when that is no match: ``C[^C]*`` / ``C+N*``;
      inverted the gaps (runs of ``N``) are the matches: ``N+C*`` (run) / ``N+C?|C`` (single);
    - MergedWithPrevious joins a match to the piece before it when that is no match; MNN's also
      joins a match to a match, the same where matches are never neighbours (a run, or inverted),
      else written ``N+C?|C``."""
    pattern = cls + "+" if run else cls
    if behavior == "Isolated":
        return t.SplitPreTokenizer(pattern, False, _ISOLATED)
    if behavior == "Contiguous":
        return t.SplitPreTokenizer(cls + "+", False, _ISOLATED)
    if behavior == "MergedWithNext":
        if not invert:
            return t.SplitPreTokenizer(pattern + negated + "*", False, _ISOLATED)
        return t.SplitPreTokenizer(negated + "+" + cls + ("*" if run else "?|" + cls), False, _ISOLATED)
    if behavior == "MergedWithPrevious" and not (run or invert):
        return t.SplitPreTokenizer(negated + "+" + cls + "?|" + cls, False, _ISOLATED)
    return t.SplitPreTokenizer(pattern, invert, _NATIVE.get(behavior, _REMOVED))


def mnn_class(cp: ClassPattern) -> tuple[str, str] | None:
    """A class pattern's class and complement spelled so MNN's engine reads them exactly (None:
    it cannot): with properties on MNN's own engine (ASCII literals only, none of its fold
    markers U+0001..U+0007), else literal characters (``std::wregex`` when any is not ASCII)."""
    if "\0" in cp.chars or (cp.properties and not cp.chars.isascii()):
        return None
    if (cp.properties or cp.chars.isascii()) and any(c < "\x08" for c in cp.chars):
        return None
    return _class_and_complement(cp, cp.chars)


def _class_and_complement(cp: ClassPattern, chars: str, head: str = "") -> tuple[str, str]:
    """``cp`` spelled as a bracket class and its complement: ``head`` (an escape such as ``\\s``),
    its properties, then ``chars`` escaped; the class is the complement when ``cp`` is negated."""
    body = head + "".join("\\p{" + p + "}" for p in cp.properties) + "".join(
        "\\" + c if c in "\\]^-" else c for c in chars)
    pos, neg = "[" + body + "]", "[^" + body + "]"
    return (neg, pos) if cp.negated else (pos, neg)


def on_wregex(cp: ClassPattern) -> bool:
    """Whether MNN runs a class pattern's Split on ``std::wregex`` (literal non-ASCII characters)."""
    return not cp.properties and not cp.chars.isascii()


def _lower_punctuation(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    return class_split(PUNCTUATION_CLASS, PUNCTUATION_NOT, behavior_of(node))


def _lower_whitespace(_node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer:
    from mtokspec.convert.inputs import WHITESPACE_SPLIT

    return t.SplitPreTokenizer(WHITESPACE_SPLIT.pattern, WHITESPACE_SPLIT.invert, WHITESPACE_SPLIT.behavior)


def _lower_whitespace_split(_node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer:
    return t.SplitPreTokenizer(WHITE_SPACE_CLASS + "+", False, _REMOVED)


_COMMON_SCRIPTS = ("Latin", "Common", "Han", "Cyrillic", "Inherited", "Arabic", "Devanagari", "Hangul", "Greek",
                   "Bengali", "Hebrew", "Thai", "Tamil", "Telugu", "Gujarati", "Kannada", "Malayalam", "Gurmukhi",
                   "Oriya", "Sinhala", "Myanmar", "Khmer", "Lao", "Georgian", "Armenian", "Ethiopic", "Tibetan",
                   "Mongolian", "Thaana", "Syriac", "Bopomofo", "Yi", "Javanese", "Sundanese", "Tifinagh")
"""Scripts tried first, in turn (the alternatives are apart: the order only saves MNN's search time)."""


def unicode_scripts_splits() -> tuple[str, str]:
    r"""HF's ``UnicodeScripts`` as two patterns for MNN's Split, written out for ``std::wregex`` (HF's
    table: :func:`~mtokspec.runtime.hf.scripts.script_ranges`).  HF starts a piece at each character whose script is not the
    last one's and joins the characters of no script (Any: the space, what its table does not list)
    to the piece before; those before the first piece it drops.  The first pattern (``^[A]+``,
    Removed) drops them; the second, per script ``S`` ``[S][S ]*`` (inverted, MergedWithPrevious),
    makes the pieces, the characters between them joined to the one before."""
    from mtokspec.runtime.hf.scripts import ANY, script_ranges

    table = script_ranges()
    names = sorted((n for n in table if n != ANY),
                   key=lambda n: (_COMMON_SCRIPTS.index(n) if n in _COMMON_SCRIPTS else len(_COMMON_SCRIPTS), n))
    first = "^" + wregex_ranges(table.get(ANY, ())) + "+"
    runs = [f"{wregex_ranges(table[n])}{wregex_ranges(sorted([*table[n], (0x20, 0x20)]))}*" for n in names]
    return first, _alternation(runs, len(_COMMON_SCRIPTS))


def _alternation(alternatives: list[str], chained: int) -> str:
    """``a|b|...`` nested so that libstdc++'s search reaches each alternative in few steps: it
    compiles ``a|b|c`` into a chain it walks from the end (the first alternative ``n`` states deep),
    so the first ``chained`` as ``a|(?:b|(?:...))`` (the k-th k states deep), the rest halved."""
    if len(alternatives) == 1:
        return alternatives[0]
    if chained > 0:
        return f"{alternatives[0]}|(?:{_alternation(alternatives[1:], chained - 1)})"
    half = len(alternatives) // 2
    return f"(?:{_alternation(alternatives[:half], 0)})|(?:{_alternation(alternatives[half:], 0)})"


def _past_unicode_scripts(text: str) -> bool:
    """Whether a character HF's script table does not list (not the space) follows a listed one."""
    from mtokspec.runtime.hf.scripts import ANY, script_ranges

    ranges = script_ranges().get(ANY, ())
    seen = False
    for c in text:
        unlisted = any(a <= ord(c) <= b for a, b in ranges)
        if unlisted and seen and c != " ":
            return True
        seen = seen or not unlisted
    return False


def _lower_unicode_scripts(_node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer:
    first, pieces = unicode_scripts_splits()
    return t.SequencePreTokenizer([t.SplitPreTokenizer(first, False, _REMOVED),
                                   t.SplitPreTokenizer(pieces, True, _MERGED_PREVIOUS)])


def _lower_digits(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer:
    if node.get("individual_digits", False):
        return t.SplitPreTokenizer(r"\p{N}", False, _ISOLATED)
    return t.SplitPreTokenizer(DIGITS_SPLIT, False, _ISOLATED)


def _lower_byte_level(node: Any, old: Any, _ctx: Context) -> t.PreTokenizer | None:
    if not isinstance(old, t.ByteLevelPreTokenizer):
        return None
    if node.get("add_prefix_space", False):
        # MNN's Metaspace gives every split that does not start with a space one: HF's prefix space
        return t.SequencePreTokenizer([t.MetaspacePreTokenizer(" ", True), old])
    return None


def _char_delimiter(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    d = node.get("delimiter")
    return t.SplitPreTokenizer(escape(d), False, _REMOVED) if isinstance(d, str) and len(d) == 1 else None


def _split_literal(node: Any) -> str | None:
    """The text a Split's pattern matches when it is literal (a String, or a literal Regex)."""
    p = node.get("pattern")
    if isinstance(p, dict) and isinstance(p.get("String"), str):
        return p["String"] or None
    if isinstance(p, dict) and isinstance(p.get("Regex"), str):
        return literal(p["Regex"])
    return None


def _lower_split_literal(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    text = _split_literal(node)
    if text is None:
        return None
    invert = bool(node.get("invert", False))
    if len(text) == 1:
        return class_split(escape(text), "[^" + ("\\" + text if text in "\\]^-" else text) + "]",
                           behavior_of(node), invert)
    if behavior_of(node) in _NATIVE:
        return t.SplitPreTokenizer(escape(text), invert, _NATIVE[behavior_of(node)])
    return None


def _literal_split_ok(node: Any) -> bool:
    text = _split_literal(node)
    if text is None:
        return False
    return behavior_of(node) in _NATIVE or len(text) == 1


def _split_class(node: Any) -> ClassPattern | None:
    """The class pattern a Split's Regex is, when MNN's engine can read it exactly."""
    p = node.get("pattern")
    cp = class_pattern(p["Regex"]) if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None
    return cp if cp is not None and mnn_class(cp) is not None else None


def _lower_split_class(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    cp = _split_class(node)
    spelled = mnn_class(cp) if cp is not None else None
    if cp is None or spelled is None:
        return None
    return class_split(*spelled, behavior_of(node), bool(node.get("invert", False)), cp.run)


def class_union(cps: list[ClassPattern]) -> ClassPattern | None:
    """One class (a run) holding every character of ``cps`` (None: none this module spells): the
    literal characters and properties joined; with one negated class ``[^X]``, ``[^X']`` where
    ``X'`` is ``X`` less the others' characters (None when a literal of the others lies inside a
    property ``X'`` keeps)."""
    import unicodedata

    neg, pos = [c for c in cps if c.negated], [c for c in cps if not c.negated]
    chars = "".join(dict.fromkeys("".join(c.chars for c in pos)))
    props = "".join(dict.fromkeys("".join(c.properties for c in pos)))
    if not neg:
        return ClassPattern(chars, props, False, True)
    if len(neg) > 1:
        return None
    x = neg[0]
    kept_props = "".join(p for p in x.properties if p not in props)
    if any(unicodedata.category(c)[0] in kept_props for c in chars):
        return None
    kept = "".join(c for c in x.chars if c not in chars and unicodedata.category(c)[0] not in props)
    return ClassPattern(kept, kept_props, True, True) if kept or kept_props else None


def _split_union(node: Any) -> ClassPattern | None:
    """The union of a Contiguous Split's alternatives of classes, when MNN's engine reads it exactly."""
    p = node.get("pattern")
    alts = class_alternatives(p["Regex"]) if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None
    union = class_union(alts) if alts and behavior_of(node) == "Contiguous" else None
    return union if union is not None and mnn_class(union) is not None else None


def _lower_split_union(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    union = _split_union(node)
    spelled = mnn_class(union) if union is not None else None
    return None if spelled is None else t.SplitPreTokenizer(spelled[0] + "+", False, _ISOLATED)


WHITE_SPACE_PAST = "\x85\u2028\u2029"
"""The White_Space characters MNN's own engine does not read as ``\\s`` (it folds them to other classes)."""


def own_engine_class(cp: ClassPattern) -> tuple[str, str] | None:
    """A class and its complement for MNN's own engine, the White_Space characters (all or none
    of them) spelled ``\\s``: exact but on :data:`WHITE_SPACE_PAST` and the stand-ins; None for
    other non-ASCII characters, which that engine reads as their whole class."""
    chars = cp.chars
    spaces = "\\s" if set(WHITESPACE_STR) <= set(chars) else ""
    if spaces:
        chars = "".join(c for c in chars if c not in WHITESPACE_STR)
    if not chars.isascii() or any(c < "\x08" for c in chars) or not (spaces or cp.properties or chars):
        return None
    return _class_and_complement(cp, chars, spaces)


def _merged_alternation(node: Any) -> t.SplitPreTokenizer | None:
    """A MergedWithNext or MergedWithPrevious Split of an alternation of classes (or runs of them)
    as an Isolated one: HF cuts the text into matches and gaps (runs of what no alternative
    matches, N); a gap joins the match after it (``N*A1|N*A2|...|N+``: MergedWithNext inverted,
    MergedWithPrevious not) or the match before it (``A1N*|...|N+``: the other two)."""
    p = node.get("pattern")
    alts = class_alternatives(p["Regex"]) if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None
    behavior, invert = behavior_of(node), bool(node.get("invert", False))
    if not alts or len(alts) < 2 or behavior not in ("MergedWithNext", "MergedWithPrevious"):
        return None
    union = class_union(alts)
    gap = own_engine_class(union) if union is not None else None
    spelled = [own_engine_class(a) for a in alts]
    if gap is None or any(a is None for a in spelled):
        return None
    n = gap[1]
    parts = [a[0] + ("+" if cp.run else "") for a, cp in zip(spelled, alts) if a is not None]
    gap_first = (behavior == "MergedWithNext") == invert
    body = "|".join(n + "*" + a if gap_first else a + n + "*" for a in parts)
    return t.SplitPreTokenizer(body + "|" + n + "+", False, _ISOLATED)


def _past_own_engine(text: str) -> bool:
    return holds_stand_ins(text) or any(c in text for c in WHITE_SPACE_PAST)


def _union_on(engine_wregex: bool) -> Any:
    def applies(node: Any) -> bool:
        union = _split_union(node)
        return union is not None and on_wregex(union) == engine_wregex
    return applies


def _class_on(engine_wregex: bool) -> Any:
    def applies(node: Any) -> bool:
        cp = _split_class(node)
        return cp is not None and on_wregex(cp) == engine_wregex
    return applies


def _split_wregex(node: Any) -> str | None:
    """An Isolated (or not inverted Removed) Split's Regex spelled for ``std::wregex``, when it
    has no property and :func:`wregex_pattern` can spell it."""
    p = node.get("pattern")
    behavior = behavior_of(node)
    if not (behavior == "Isolated" or behavior == "Removed" and not node.get("invert", False)):
        return None
    return wregex_pattern(p["Regex"]) if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None


def _lower_split_wregex(node: Any, _old: Any, _ctx: Context) -> t.PreTokenizer | None:
    spelled = _split_wregex(node)
    return None if spelled is None else t.SplitPreTokenizer(spelled, False, _NATIVE[behavior_of(node)])


def _lower_split_regex(node: Any, old: Any, _ctx: Context) -> t.PreTokenizer | None:
    p = node.get("pattern")
    spelled = spell_letter_cases(p["Regex"]) if isinstance(p, dict) and isinstance(p.get("Regex"), str) else None
    if spelled is None or not isinstance(old, t.SplitPreTokenizer):
        return None
    return t.SplitPreTokenizer(spelled, old.invert, old.behavior)


def _metaspace_split(rep: str) -> t.SplitPreTokenizer:
    """HF Metaspace's ``split``: the text cut before each replacement (MergedWithNext), as an
    Isolated Split ``R[^R]*`` of the literal replacement (``std::wregex``: exact)."""
    r = escape(rep)
    return t.SplitPreTokenizer(r + "[^" + r + "]*", False, _ISOLATED)


def _lower_metaspace(node: Any, old: Any, _ctx: Context) -> t.PreTokenizer | None:
    if not isinstance(old, t.MetaspacePreTokenizer):
        return None
    rep = node.get("replacement", "\u2581")
    if not isinstance(rep, str) or len(rep) != 1:
        return None
    scheme = node.get("prepend_scheme")
    if scheme is None:
        scheme = "always" if node.get("add_prefix_space", True) else "never"
    meta = t.MetaspacePreTokenizer(rep, scheme != "never")
    if node.get("split", True):
        return t.SequencePreTokenizer([meta, _metaspace_split(rep)])
    return meta


def _metaspace_scheme(node: Any) -> str:
    scheme = node.get("prepend_scheme")
    return scheme if isinstance(scheme, str) else ("always" if node.get("add_prefix_space", True) else "never")


_PUNCT = "Split of " + PUNCTUATION_CLASS
_STAND_INS = dict(rule="mnn-regex-engine", past_bound=holds_stand_ins,
                  bound="text without the controls U+0001-U+0007, which MNN's engine reads as the stand-ins "
                        "of the classes it folds text to")
"""Rows on MNN's own regex engine: exact but for the controls it takes for class stand-ins."""

ROWS: tuple[Variant, ...] = (
    Variant("pre_tokenizer", "ByteLevel", "use_regex=false", V.EXACT,
            "ByteLevel; add_prefix_space=true as Sequence[Metaspace(' ', prefix on), ByteLevel] (MNN's Metaspace "
            "spaces every split not starting with one)", tag="use_regex=false",
            applies=lambda n: not n.get("use_regex", True), lower=_lower_byte_level,
            example={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}),
    Variant("pre_tokenizer", "ByteLevel", "use_regex=true", V.APPROXIMATED,
            "ByteLevel with GPT-2's pattern; add_prefix_space as above", "mnn-regex-engine", tag="use_regex=true",
            why="MNN runs GPT-2's pattern on folded text: U+0085, U+2028, U+2029 are no white space there",
            applies=lambda n: bool(n.get("use_regex", True)), lower=_lower_byte_level,
            example={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    Variant("pre_tokenizer", "Whitespace", "", V.APPROXIMATED,
            "Split of \\w+|[^\\w\\s]+ spelled for MNN's folded classes", "mnn-regex-engine",
            why="MNN cannot see No, So with Other_Alphabetic, non-ASCII Pc, ZWJ/ZWNJ, U+0085/2028/2029",
            lower=_lower_whitespace, example={"type": "Whitespace"}),
    Variant("pre_tokenizer", "WhitespaceSplit", "", V.BOUNDED,
            "Split (Removed) of a class of the White_Space characters written out (std::wregex)",
            "mnn-regex-backtracking", bound="white-space runs of up to 26,000 characters (std::wregex's stack)",
            lower=_lower_whitespace_split, example={"type": "WhitespaceSplit"}),
    *(Variant("pre_tokenizer", "Punctuation", f"behavior={b}", V.BOUNDED,
              _PUNCT + {"Isolated": " (Isolated)", "Removed": " (Removed)",
                        "MergedWithPrevious": " (MergedWithPrevious)",
                        "MergedWithNext": "[^...]* (Isolated)", "Contiguous": "+ (Isolated)"}[b],
              applies=(lambda b: lambda n: behavior_of(n) == b)(b), lower=_lower_punctuation, **_STAND_INS,
              example={"type": "Punctuation", "behavior": b})
      for b in ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")),
    Variant("pre_tokenizer", "Digits", "individual_digits=false", V.BOUNDED, "Split of \\p{N}+ (Isolated)",
            **_STAND_INS, applies=lambda n: not n.get("individual_digits", False), lower=_lower_digits,
            example={"type": "Digits", "individual_digits": False}),
    Variant("pre_tokenizer", "Digits", "individual_digits=true", V.BOUNDED, "Split of \\p{N} (Isolated)",
            **_STAND_INS, applies=lambda n: bool(n.get("individual_digits", False)), lower=_lower_digits,
            example={"type": "Digits", "individual_digits": True}),
    Variant("pre_tokenizer", "Metaspace", "prepend_scheme=always", V.APPROXIMATED,
            "Metaspace; split=true adds an Isolated Split R[^R]* of the replacement (std::wregex)",
            "mnn-metaspace-prefix", tag="always",
            why="a split starting with the replacement itself gets a second one; split=true: words of up to "
                "26,000 characters (std::wregex's stack)",
            applies=lambda n: _metaspace_scheme(n) == "always", lower=_lower_metaspace, model="bpe-fallback",
            example={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}),
    Variant("pre_tokenizer", "Metaspace", "prepend_scheme=never", V.BOUNDED,
            "Metaspace without the prefix; split=true adds an Isolated Split R[^R]* of the replacement (std::wregex)",
            "mnn-regex-backtracking", tag="never", bound="words of up to 26,000 characters (std::wregex's stack) "
                                                         "with split=true",
            applies=lambda n: _metaspace_scheme(n) == "never", lower=_lower_metaspace, model="bpe-fallback",
            example={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": True}),
    Variant("pre_tokenizer", "Metaspace", "prepend_scheme=first", V.APPROXIMATED,
            "Metaspace with the prefix on; split=true as above", "mnn-metaspace-every-split", tag="first", lossy=True,
            why="MNN prefixes every split (after an added token too); HF only the first",
            applies=lambda n: _metaspace_scheme(n) == "first", lower=_lower_metaspace, model="bpe-fallback",
            example={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}),
    Variant("pre_tokenizer", "CharDelimiterSplit", "", V.EXACT, "Split (Removed) of the escaped delimiter",
            lower=_char_delimiter, example={"type": "CharDelimiterSplit", "delimiter": "-"}),
    Variant("pre_tokenizer", "Split", "a literal pattern", V.EXACT,
            "Split of the escaped text (a one-character pattern: any behaviour and invert, as a class)",
            tag="literal",
            applies=_literal_split_ok, lower=_lower_split_literal,
            example={"type": "Split", "pattern": {"String": "."}, "behavior": "MergedWithNext", "invert": False}),
    Variant("pre_tokenizer", "Split", "one character class or a run of one (\\p{L}, \\p{M}, \\p{N}, \\p{P}, "
            "\\p{S} and ASCII characters)", V.BOUNDED,
            "Split of the class (MNN's own engine); MergedWithNext C[^C]* / C+N*, Contiguous C+, inverted "
            "MergedWithNext N+C* / N+C?|C, MergedWithPrevious of a single class N+C?|C (all Isolated)",
            tag="class", applies=_class_on(False), lower=_lower_split_class, **_STAND_INS,
            example={"type": "Split", "pattern": {"Regex": "[\\p{L}\\p{N}]+"}, "behavior": "MergedWithNext",
                     "invert": True}),
    Variant("pre_tokenizer", "Split", "one character class or a run of one of literal characters, some not ASCII "
            "(\\s: the White_Space characters)", V.BOUNDED,
            "as the row above, the class written out (std::wregex)", "mnn-regex-backtracking", tag="class-wregex",
            bound="matches of up to 26,000 characters (std::wregex's stack)", applies=_class_on(True),
            lower=_lower_split_class,
            example={"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Contiguous", "invert": False}),
    Variant("pre_tokenizer", "Split", "Contiguous, an alternation of character classes or runs of them (as above)",
            V.BOUNDED, "Isolated Split of U+, U the union of the classes (MNN's own engine): every character of U is "
                     "matched, so HF's Contiguous (inverted or not) keeps the runs of U and the gaps",
            tag="classes-contiguous", applies=_union_on(False), lower=_lower_split_union, **_STAND_INS,
            example={"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}+"}, "behavior": "Contiguous",
                     "invert": True}),
    Variant("pre_tokenizer", "Split", "Contiguous, an alternation of character classes or runs of them, the union "
            "written out", V.BOUNDED, "as the row above, U written out (std::wregex)", "mnn-regex-backtracking",
            tag="classes-contiguous-wregex", bound="matches of up to 26,000 characters (std::wregex's stack)",
            applies=_union_on(True), lower=_lower_split_union,
            example={"type": "Split", "pattern": {"Regex": "[\\p{L}\\p{N}]+|[^\\s\\p{L}\\p{N}]+"},
                     "behavior": "Contiguous", "invert": True}),
    Variant("pre_tokenizer", "Split", "MergedWithNext/MergedWithPrevious, an alternation of character classes or "
            "runs of them (\\p{L}, \\p{M}, \\p{N}, \\p{P}, \\p{S}, \\s and ASCII characters)", V.BOUNDED,
            "Isolated Split N*A1|N*A2|...|N+ (a gap joined to the match after it) or A1N*|...|N+ (to the one "
            "before it), N the characters no alternative matches (MNN's own engine)", "mnn-regex-engine",
            tag="classes-merged", past_bound=_past_own_engine,
            bound="text without U+0085, U+2028, U+2029 (no white space on MNN's own engine) or the controls "
                  "U+0001-U+0007 (its class stand-ins)",
            applies=lambda n: _merged_alternation(n) is not None, lower=lambda n, _o, _c: _merged_alternation(n),
            example={"type": "Split", "pattern": {"Regex": "[\\p{L}\\p{N}]+|[^\\s\\p{L}\\p{N}]+"},
                     "behavior": "MergedWithNext", "invert": True}),
    Variant("pre_tokenizer", "Split", "a regular expression without \\p{..}, anchors or look-around, with a character "
            "past ASCII or \\s (Isolated, or Removed not inverted)", V.BOUNDED,
            "Split of the pattern spelled for std::wregex: classes and \\s as their characters (nested sets "
            "joined), . as [^\\n], groups non-capturing", "mnn-regex-backtracking", tag="regex-wregex",
            bound="matches of up to 26,000 characters (std::wregex's stack)",
            applies=lambda n: _split_wregex(n) is not None, lower=_lower_split_wregex,
            example={"type": "Split", "pattern": {"Regex": " ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+"},
                     "behavior": "Isolated", "invert": False}),
    Variant("pre_tokenizer", "Split", "a regular expression, Isolated/Removed/MergedWithPrevious", V.APPROXIMATED,
            "Split of the pattern; \\p{Lu}, \\p{Ll}, \\p{Lt}, \\p{Lm}, \\p{Lo} spelled as their ASCII letters and "
            "a letter past ASCII (MNN's engine reads them as \\p{L})", "mnn-regex-engine", tag="regex",
            why="MNN's own engine folds text to character classes, every letter past ASCII to one (std::wregex "
                "for patterns without \\p)",
            applies=lambda n: behavior_of(n) in _NATIVE, lower=_lower_split_regex,
            example={"type": "Split", "pattern": {"Regex": "'s|'t|\\p{L}+|\\p{N}"}, "behavior": "Isolated",
                     "invert": False}),
    Variant("pre_tokenizer", "Split", "a regular expression, MergedWithNext/Contiguous", V.IMPOSSIBLE,
            "Split of the pattern, Removed", "format:pre_tokenizer.Split[behavior]", tag="behavior",
            why="MNN's Split has no MergedWithNext or Contiguous, and a general pattern has no Isolated form "
                "without look-ahead", applies=lambda n: behavior_of(n) not in _NATIVE,
            example={"type": "Split", "pattern": {"Regex": "'s|\\p{L}+"}, "behavior": "Contiguous",
                     "invert": False}),
    Variant("pre_tokenizer", "BertPreTokenizer", "", V.APPROXIMATED, "BertPreTokenizer", "mnn-bert-pretokenizer",
            why="MNN splits on ASCII white space and Zs only (HF also on U+0085, U+2028, U+2029, which a "
                "BertNormalizer before it removes or spaces), and isolates the punctuation of Unicode 15.0 (HF's "
                "table is older: some 110 characters, U+061D, U+2E43-U+2E4F, ...)",
            model="wordpiece", example={"type": "BertPreTokenizer"}),
    Variant("pre_tokenizer", "UnicodeScripts", "", V.BOUNDED,
            "Split (Removed) of ^[A]+, then Split (inverted, MergedWithPrevious) of [S][S ]* "
            "for each script S of HF's table (measured on HF), A its characters of no script, written out "
            "(std::wregex)", "format:pre_tokenizer.UnicodeScripts",
            bound="text without characters HF's table does not list (assigned after its Unicode version, private "
                  "use) after the first character of a piece (HF joins them and what follows of the same script "
                  "into one piece, MNN cuts after them); pieces of up to 26,000 characters (std::wregex's stack)",
            past_bound=_past_unicode_scripts, lower=_lower_unicode_scripts, example={"type": "UnicodeScripts"}),
    Variant("pre_tokenizer", "Sequence", "", V.EXACT, "Sequence of the children's rows",
            example={"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                           {"type": "Digits", "individual_digits": True}]}),
)

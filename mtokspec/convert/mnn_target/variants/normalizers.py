"""Normalizers: how ``--target mnn`` carries each HF normalizer on the released format."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from mtokspec.convert.mnn_target.variants.row import Context, Variant, Verdict as V
from mtokspec.convert.mnn_target.variants.regex_literals import char_run, literal, run_replaces
from mtokspec.format import tree as t

__all__ = ["ROWS", "NMT_REMOVED", "NMT_TO_SPACE"]

NMT_REMOVED = (*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F)
"""HF ``Nmt``: the code points it deletes."""
NMT_TO_SPACE = (0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD)
"""HF ``Nmt``: the code points it turns into a space."""


def _pattern(node: Any) -> tuple[str, str]:
    p = node.get("pattern")
    if isinstance(p, dict):
        if isinstance(p.get("String"), str):
            return "String", p["String"]
        if isinstance(p.get("Regex"), str):
            return "Regex", p["Regex"]
    return "", ""


def _regex_kind(node: Any) -> str:
    kind, pat = _pattern(node)
    if kind != "Regex":
        return kind
    if literal(pat) is not None:
        return "literal"
    run = char_run(pat)
    if run is not None and run_replaces(run, str(node.get("content", ""))) is not None:
        return "run"
    return "other"


def _replaces(steps: list[tuple[str, str]]) -> t.Normalizer:
    nodes: list[t.Normalizer] = [t.ReplaceNormalizer(a, b) for a, b in steps]
    return nodes[0] if len(nodes) == 1 else t.SequenceNormalizer(nodes)


def _lower_regex_literal(node: Any, _old: Any, _ctx: Context) -> t.Normalizer:
    return t.ReplaceNormalizer(literal(_pattern(node)[1]) or "", str(node.get("content", "")))


def _metaspace_replacement(ctx: Context | None) -> str | None:
    """The replacement of the Metaspace that first sees the normalized text: the first
    pre-tokenizer, or the one after a first WhitespaceSplit when it prepends always and splits
    (then a space and the replacement cut the same words).  None: there is none."""
    if ctx is None:
        return None
    pre = ctx.tokenizer_json.get("pre_tokenizer")
    chain = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    chain = [n for n in chain or [] if isinstance(n, dict)]
    first = chain[0] if chain else None
    if first is not None and first.get("type") == "WhitespaceSplit" and len(chain) > 1:
        first = chain[1]
        scheme = first.get("prepend_scheme", "always" if first.get("add_prefix_space", True) else "never")
        if first.get("type") != "Metaspace" or scheme != "always" or not first.get("split", True):
            return None
    if first is not None and first.get("type") == "Metaspace":
        rep = first.get("replacement", "\u2581")
        return rep if isinstance(rep, str) else None
    return None


def _last_normalizer(node: Any, ctx: Context | None) -> bool:
    if ctx is None:
        return False
    norm = ctx.tokenizer_json.get("normalizer")
    while isinstance(norm, dict) and norm.get("type") == "Sequence" and norm.get("normalizers"):
        norm = norm["normalizers"][-1]
    return norm is node


def _lower_regex_run(node: Any, _old: Any, ctx: Context) -> t.Normalizer | None:
    """The chain of literal Replaces; a run of spaces replaced by a first Metaspace's replacement,
    as the last normalizer, is collapsed to one space instead: the Metaspace makes it the same
    replacement, and MNN's Metaspace, which looks for a leading space before replacing, then
    does not prefix a text that starts with the run a second time."""
    run = char_run(_pattern(node)[1])
    content = str(node.get("content", ""))
    if run is not None and content and content == _metaspace_replacement(ctx) and set(run.chars) == {" "} \
            and _last_normalizer(node, ctx):
        content = " "
    steps = run_replaces(run, content) if run else None
    return _replaces(steps) if steps else None


def _lower_nmt(_node: Any, _old: Any, _ctx: Context) -> t.Normalizer:
    return _replaces([(chr(c), "") for c in NMT_REMOVED] + [(chr(c), " ") for c in NMT_TO_SPACE])


PLACEHOLDER_BASE = 0x10FF00
"""The first private-use code point :func:`protected_table` uses as a stand-in (plane 16)."""


def protected_table(table: list[tuple[int, bytes]]) -> t.Normalizer:
    """A table normalizer that keeps what HF's normalizer does with the controls and format
    characters MNN's table normalizer turns into a space whatever the table says: before the table,
    a literal Replace turns each such character into a private-use stand-in (from
    :data:`PLACEHOLDER_BASE`), which the table maps to HF's normal form of the character (MNN does
    not look at a table's output again).  Characters HF's table makes a space stay as they are,
    with a row of their space (which MNN never reads, and the file's own HF reading does)."""
    from mtokspec.runtime.mnn._text import TO_SPACE as _TO_SPACE

    mapped = dict(table)
    replaces: list[t.Normalizer] = []
    extra: list[tuple[int, bytes]] = []
    for cp in sorted(_TO_SPACE):
        target = mapped.get(cp, chr(cp).encode("utf-8"))
        if target == b" ":
            extra.append((cp, target))  # a space on both sides
            continue
        stand_in = PLACEHOLDER_BASE + len(replaces)
        replaces.append(t.ReplaceNormalizer(chr(cp), chr(stand_in)))
        extra.append((stand_in, target))
    rows = sorted([(cp, b) for cp, b in table if cp not in _TO_SPACE] + extra)
    return t.SequenceNormalizer([*replaces, t.TableNormalizer(rows)]) if replaces else t.TableNormalizer(rows)


@lru_cache(maxsize=1)
def canonical_pairs() -> tuple[tuple[str, str], ...]:
    """``(base + mark, composed)`` for every canonical composition of two code points (Hangul
    aside), the pairs whose base is itself composed after the pairs that compose that base."""
    import unicodedata

    out: list[tuple[int, str, str]] = []
    for cp in range(0x110000):
        c = chr(cp)
        d = unicodedata.decomposition(c)
        if not d or d.startswith("<") or 0xAC00 <= cp <= 0xD7A3:
            continue
        parts = [chr(int(x, 16)) for x in d.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", "".join(parts)) == c:
            depth = len(unicodedata.normalize("NFD", parts[0]))
            out.append((depth, "".join(parts), c))
    return tuple((pair, c) for _, pair, c in sorted(out))


def composed(table: list[tuple[int, bytes]], form_of) -> list[t.Normalizer]:
    """Literal Replaces, before a table, of each base + mark that ``form_of`` (the HF form of a
    string, None: not one of its keys) composes to one character that the table leaves as it is:
    what a per-code-point table cannot do (exact for a base followed by one mark, or by several in
    canonical order)."""
    mapped = dict(table)
    out: list[t.Normalizer] = []
    for pair, c in canonical_pairs():
        got = form_of(pair)
        if got is not None and len(got) == 1 and ord(got) not in mapped and got != pair:
            out.append(t.ReplaceNormalizer(pair, got))
    return out


def _with_compositions(replaces: list[t.Normalizer], node: t.Normalizer) -> t.Normalizer:
    if not replaces:
        return node
    kids = node.normalizers if isinstance(node, t.SequenceNormalizer) else [node]
    return t.SequenceNormalizer([*replaces, *kids])


def _lower_precompiled(node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    from mtokspec.runtime.hf.precompiled import charsmap_from_json

    if not isinstance(old, t.TableNormalizer):
        return None
    cm = charsmap_from_json(node)
    if cm is None:
        return None
    table = cm.per_code_point()
    mapped = dict(table)
    crlf = cm.transform("\r\n")
    # CR LF is one grapheme, which HF replaces whole by its first key's replacement: a literal
    # Replace first (when the table leaves what it writes)
    first = [t.ReplaceNormalizer("\r\n", crlf)] if crlf is not None and not any(ord(c) in mapped for c in crlf) \
        else []
    return _with_compositions(first + composed(table, cm.transform), protected_table(table))


PRIVATE_USE_BMP = range(0xE000, 0xF900)
"""The Basic Multilingual Plane's private-use characters (Co): a table of 6,400 rows (planes 15
and 16 hold 131,068 more, left as they are)."""


def _in(ranges: tuple[tuple[int, int], ...], cp: int) -> bool:
    return any(a <= cp <= b for a, b in ranges)


@lru_cache(maxsize=1)
def _clean_replaces() -> tuple[t.ReplaceNormalizer, ...]:
    """Literal Replaces before MNN's clean-up that complete it to HF's ``clean_text`` (measured on
    HF): a character HF deletes that MNN keeps (format characters) is deleted, one HF turns into a
    space that MNN keeps (U+2028, U+2029) becomes a space; private use aside (a table after)."""
    from mtokspec.runtime.hf import _normalizer_data as hf
    from mtokspec.runtime.mnn.unicode import code_points_of

    # what MNN's clean-up deletes, and private use (Co: a table after)
    left = {0, 0xFFFD, *code_points_of("Cc"), *code_points_of("Co")}
    mnn_spaced = {9, 10, 13, *code_points_of("Zs")}
    deleted = [cp for a, b in hf.CLEAN_DELETED for cp in range(a, b + 1) if cp not in left]
    spaced = [cp for a, b in hf.CLEAN_SPACED for cp in range(a, b + 1) if cp not in mnn_spaced]
    return (*(t.ReplaceNormalizer(chr(cp), "") for cp in deleted),
            *(t.ReplaceNormalizer(chr(cp), " ") for cp in spaced))


def _table_spaced() -> tuple[int, ...]:
    """The characters MNN's table normalizer turns into a space before its look-up that HF's
    clean-up keeps (measured on HF: unassigned there, as U+2065): they cross the table as the
    plane-16 private-use characters from :data:`TABLE_SPACED_STAND_IN` on (characters no
    vocabulary holds either)."""
    from mtokspec.runtime.hf import _normalizer_data as hf
    from mtokspec.runtime.mnn._text import TO_SPACE

    return tuple(cp for cp in sorted(TO_SPACE) if not _in(hf.CLEAN_DELETED, cp) and not _in(hf.CLEAN_SPACED, cp))


TABLE_SPACED_STAND_IN = 0x10FFF0
"""The first plane-16 private-use character standing in for :func:`_table_spaced`'s characters."""


@lru_cache(maxsize=1)
def hf_lowercase_replaces() -> tuple[t.ReplaceNormalizer, ...]:
    """Literal Replaces, each of a character to HF's lower case of it, for the characters MNN's
    one-to-one lower-casing (of an older Unicode) leaves other than HF (U+0130 to ``i`` U+0307, the
    capital letters of Unicode 16): before MNN's lower-casing, which keeps what they give."""
    from mtokspec.runtime.hf.normalizers import lower_table
    from mtokspec.runtime.mnn.unicode import to_lower

    return tuple(t.ReplaceNormalizer(chr(cp), low) for cp, low in sorted(lower_table().items())
                 if low != chr(to_lower(cp)) and all(to_lower(ord(c)) == ord(c) for c in low))


def _lower_lowercase(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    """HF's Lowercase: the exporter's lower-casing BertNormalizer after :func:`hf_lowercase_replaces`."""
    if not isinstance(old, t.BertNormalizer) or not old.lowercase:
        return None
    return t.SequenceNormalizer([*hf_lowercase_replaces(), old])


STRIP_STAND_IN = 0x10F000
"""The first plane-16 private-use character standing in, across MNN's accent stripping, for a mark
it would drop and HF keeps (:func:`_stripping`; up to :data:`PLACEHOLDER_BASE`)."""

_STAND_IN_BOUND = "text without the plane-16 private-use characters U+10F000-U+10FFFF (the tables' stand-ins)"


def _past_stand_ins(text: str) -> bool:
    return any(STRIP_STAND_IN <= ord(c) for c in text)


_CJK_EXT_E_SPACED = (0x2B820, 0x2B91F)
"""Code points MNN's Chinese-character spacing covers and HF's does not (the every-code-point test
of ``tests/convert/test_hf_normalizer_tables.py`` finds them)."""


def _past_bert_bound(text: str) -> bool:
    """Past the BertNormalizer row's bound: private use past the BMP (the stand-ins among it), the
    Chinese characters only MNN spaces."""
    lo, hi = _CJK_EXT_E_SPACED
    return any(0xF0000 <= ord(c) or lo <= ord(c) <= hi for c in text)


def _stripping(hf: dict[int, str]) -> tuple[tuple[tuple[int, bytes], ...], dict[str, str]]:
    """``(nfd_table, stand-ins)`` for MNN's accent stripping (type 7: each character's table entry,
    then every mark, Mn, Mc or Me of Unicode 15, dropped) to give ``hf``, HF's result for each code
    point it changes: each such character's entry is HF's result, in which a mark MNN would drop is a
    private-use stand-in (from :data:`STRIP_STAND_IN`: ``{mark: stand-in}``, for a table after)."""
    from mtokspec.runtime.mnn.unicode import code_points_of

    marks = frozenset(code_points_of("M"))
    # a mark MNN drops and HF keeps: an entry of itself, stood in for
    results = {**hf, **{cp: chr(cp) for cp in sorted(marks - hf.keys())}}
    stand_in: dict[str, str] = {}

    def spelled(text: str) -> bytes:
        out = []
        for c in text:
            if ord(c) in marks:
                c = stand_in.setdefault(c, chr(STRIP_STAND_IN + len(stand_in)))
            out.append(c)
        return "".join(out).encode("utf-8")

    table = tuple(sorted((cp, spelled(r)) for cp, r in results.items()))
    assert STRIP_STAND_IN + len(stand_in) <= PLACEHOLDER_BASE, "the stand-ins run into protected_table's"
    return table, stand_in


def _back(stand_in: dict[str, str]) -> list[tuple[int, bytes]]:
    return [(ord(s), m.encode("utf-8")) for m, s in stand_in.items()]


@lru_cache(maxsize=1)
def _strip_accents() -> tuple[tuple[tuple[int, bytes], ...], tuple[tuple[int, bytes], ...]]:
    """``(nfd_table, back)`` for BertNormalizer's ``strip_accents`` (HF: NFD, then its nonspacing
    marks dropped; measured on HF) on MNN's (:func:`_stripping`); ``back``, rows of a table after,
    maps each stand-in to its mark, and each character MNN's Chinese-character spacing passes by
    unstripped (the CJK compatibility ideographs) to HF's result."""
    from mtokspec.runtime.hf.normalizers import strip_accents_table
    from mtokspec.runtime.mnn._text import CHINESE

    hf = strip_accents_table()
    table, stand_in = _stripping(hf)
    chinese = [(cp, r.encode("utf-8")) for cp, r in sorted(hf.items()) if any(a <= cp <= b for a, b in CHINESE)]
    return table, tuple(sorted(_back(stand_in) + chinese))


@lru_cache(maxsize=1)
def _strip_marks() -> tuple[tuple[tuple[int, bytes], ...], tuple[tuple[int, bytes], ...]]:
    """``(nfd_table, back)`` for HF's StripAccents (its combining marks dropped, nothing decomposed;
    measured on HF) on MNN's accent stripping (:func:`_stripping`)."""
    from mtokspec.runtime.hf import _normalizer_data as hf

    table, stand_in = _stripping({cp: "" for a, b in hf.MARKS_DELETED for cp in range(a, b + 1)})
    return table, tuple(sorted(_back(stand_in)))


def _lower_strip_accents(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    """HF's StripAccents: the exporter's type 7 with :func:`_strip_marks`'s table, then a protected
    table of its stand-ins."""
    if not isinstance(old, t.BertNFDNormalizer) or not old.strip_accents or old.clean_text or old.lowercase:
        return None
    table, back = _strip_marks()
    node = replace(old, nfd_table=list(table))
    return t.SequenceNormalizer([node, protected_table(list(back))]) if back else node


def _lower_bert(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
    """HF's BertNormalizer on MNN's (types 5 and 7), each flag completed to HF's as measured on HF:
    ``lowercase``: :func:`hf_lowercase_replaces` first; ``clean_text``: :func:`_clean_replaces`
    before it, and a table after it (MNN's clean-up has left it no control to space) that deletes
    the private-use characters of the Basic Multilingual Plane, with the ones it would space that
    HF keeps (:func:`_table_spaced`) carried across it; ``strip_accents``: the NFD table of
    :func:`_strip_accents`, its ``back`` rows in the table after (with a table of its own, protected,
    without ``clean_text``)."""
    if not isinstance(old, (t.BertNormalizer, t.BertNFDNormalizer)):
        return None
    before: list[t.Normalizer] = list(hf_lowercase_replaces()) if old.lowercase else []
    after_rows: list[tuple[int, bytes]] = []
    node = old
    if isinstance(old, t.BertNFDNormalizer) and old.strip_accents:
        nfd_table, back = _strip_accents()
        node = replace(old, nfd_table=list(nfd_table))
        after_rows += back
    if not old.clean_text:
        if not before and not after_rows:
            return None
        return t.SequenceNormalizer([*before, node, *([protected_table(after_rows)] if after_rows else [])])
    before += _clean_replaces()
    spaced = _table_spaced()
    there = [t.ReplaceNormalizer(chr(cp), chr(TABLE_SPACED_STAND_IN + k)) for k, cp in enumerate(spaced)]
    home = [t.ReplaceNormalizer(chr(TABLE_SPACED_STAND_IN + k), chr(cp)) for k, cp in enumerate(spaced)]
    table = t.TableNormalizer(sorted([(cp, b"") for cp in PRIVATE_USE_BMP] + after_rows))
    return t.SequenceNormalizer([*before, node, *there, table, *home])


def _lower_table(kind: str):
    def lower(_node: Any, old: Any, _ctx: Context) -> t.Normalizer | None:
        from mtokspec.convert import unicode_tables

        import unicodedata

        if not isinstance(old, (t.TableNormalizer, t.NoNormalizer)):
            return None
        table = unicode_tables.normalization_table(kind)
        node = protected_table(table)
        if kind in ("NFC", "NFKC"):
            node = _with_compositions(composed(table, lambda s: unicodedata.normalize(kind, s)), node)
        return node
    return lower


_TABLE = ("a table of each code point's normal form, the controls MNN's table spaces passed through private-use "
          "stand-ins (U+10FF00-10FF58); NFC/NFKC: literal Replaces of the 941 canonical base + mark pairs first")
_TABLE_RULE = "mnn-table-normalizer"
_DECOMPOSED_WHY = ("MNN's table maps one code point at a time: HF's canonical reordering of combining marks is lost "
                   "(q U+0307 U+0323 stays so; HF: U+0323 first)")
_COMPOSED_WHY = (_DECOMPOSED_WHY + ", and so are compositions of a base with two or more marks and of Hangul jamo "
                 "(U+1100 U+1161 stays so; HF: U+AC00)")

ROWS: tuple[Variant, ...] = (
    Variant("normalizer", "NFC", "", V.APPROXIMATED, _TABLE + " (NFC)", _TABLE_RULE, lossy=True, why=_COMPOSED_WHY,
            example={"type": "NFC"}, lower=_lower_table("NFC")),
    Variant("normalizer", "NFD", "", V.APPROXIMATED, _TABLE + " (NFD)", _TABLE_RULE, lossy=True, why=_DECOMPOSED_WHY,
            example={"type": "NFD"}, lower=_lower_table("NFD")),
    Variant("normalizer", "NFKC", "", V.APPROXIMATED, _TABLE + " (NFKC)", _TABLE_RULE, lossy=True, why=_COMPOSED_WHY,
            example={"type": "NFKC"}, lower=_lower_table("NFKC")),
    Variant("normalizer", "NFKD", "", V.APPROXIMATED, _TABLE + " (NFKD)", _TABLE_RULE, lossy=True, why=_DECOMPOSED_WHY,
            example={"type": "NFKD"}, lower=_lower_table("NFKD")),
    Variant("normalizer", "Precompiled", "", V.APPROXIMATED,
            "the character map per code point, the controls MNN's table spaces through stand-ins, and literal "
            "Replaces of the base + mark pairs the map composes and of CR LF (one grapheme, replaced whole)",
            _TABLE_RULE, lossy=True, why="other keys of more than one character (and its grapheme-wise matching) "
                                          "are lost",
            example=None, lower=_lower_precompiled),
    Variant("normalizer", "Nmt", "", V.EXACT, "literal Replaces: the deleted controls, then the spaced characters",
            example={"type": "Nmt"}, lower=_lower_nmt),
    Variant("normalizer", "Lowercase", "", V.EXACT,
            "BertNormalizer with lowercase only, after literal Replaces of the characters MNN's one-to-one "
            "lower-casing leaves otherwise (U+0130 to i U+0307, Unicode 16's capitals; HF's lower case "
            "measured on HF)", example={"type": "Lowercase"}, lower=_lower_lowercase),
    Variant("normalizer", "Strip", "strip_left only", V.APPROXIMATED,
            "Strip (type 8); when only tables and Replaces that keep the white space at the ends follow it, a first pre-tokenizer Split "
            "(Removed) of ^[White_Space]+ (std::wregex) strips instead", "mnn-strip-normalizer",
            tag="left", lossy=True, also_in=("pre_tokenizer",), why="MNN strips ASCII white space and Zs only; moved to the pre-tokenizer: a "
            "character a later table maps to white space at an end",
            applies=lambda n: not n.get("strip_right", True),
            example={"type": "Strip", "strip_left": True, "strip_right": False}),
    Variant("normalizer", "Strip", "strip_right", V.APPROXIMATED,
            "Strip (type 8); when only tables and Replaces that keep the white space at the ends follow it, a first pre-tokenizer Split "
            "(Removed) of [White_Space]+$ (and ^[White_Space]+) (std::wregex) strips instead", "mnn-strip-normalizer",
            tag="right", lossy=True, also_in=("pre_tokenizer",), why="MNN's strip_right strips nothing (its loop reads past the end of the text); left: "
                             "ASCII white space and Zs only",
            applies=lambda n: bool(n.get("strip_right", True)),
            example={"type": "Strip", "strip_left": True, "strip_right": True}),
    Variant("normalizer", "StripAccents", "", V.BOUNDED,
            "mark stripping (type 7) whose table deletes HF's combining marks (measured on HF) and keeps every "
            "other character as it is, a mark HF keeps as a plane-16 private-use stand-in that a table after "
            "maps back (the file's own HF reading decomposes first)", "mnn-bert-normalizer", lossy=True,
            bound=_STAND_IN_BOUND, past_bound=_past_stand_ins, lower=_lower_strip_accents,
            example={"type": "StripAccents"}),
    Variant("normalizer", "Replace", "pattern=String", V.EXACT, "Replace (literal)", tag="String",
            applies=lambda n: _regex_kind(n) == "String",
            example={"type": "Replace", "pattern": {"String": "``"}, "content": '"'}),
    Variant("normalizer", "Replace", "pattern=Regex, a literal", V.EXACT, "Replace of the unescaped text", tag="Regex-literal",
            applies=lambda n: _regex_kind(n) == "literal", lower=_lower_regex_literal,
            example={"type": "Replace", "pattern": {"Regex": "\\.\\.\\."}, "content": "…"}),
    Variant("normalizer", "Replace", "pattern=Regex, X+ or s{2,} (a run of one character set)", V.BOUNDED,
            "literal Replaces: each character of the set to one of them, 20 passes of 'ss' -> 's', then the content "
            "(a run of spaces to a first Metaspace's replacement, last: to one space, which the Metaspace replaces)",
            bound="runs of up to 1,048,576 characters", tag="Regex-run", applies=lambda n: _regex_kind(n) == "run",
            lower=_lower_regex_run, example={"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}),
    Variant("normalizer", "Replace", "pattern=Regex, any other", V.IMPOSSIBLE, "nothing (the exporter's empty pattern)",
            "format:normalizer.Replace[Regex]", tag="Regex",
            why="MNN's Replace is literal and no chain of literals matches a general regular expression "
                "(format-next: a regex Replace)", applies=lambda n: _regex_kind(n) in ("other", ""),
            example={"type": "Replace", "pattern": {"Regex": "(\\d)\\d"}, "content": "#"}),
    Variant("normalizer", "Prepend", "", V.EXACT, "Prepend", example={"type": "Prepend", "prepend": "\u2581"}),
    Variant("normalizer", "BertNormalizer", "", V.BOUNDED,
            "BertNormalizer (types 5/7), each flag completed to HF's as measured on HF: lowercase, the Lowercase "
            "row's Replaces first; clean_text, literal Replaces before it (the format characters HF deletes, "
            "U+2028/9 spaced) and a table after it (the BMP's private use deleted); strip_accents, an NFD table "
            "of HF's result per character, the marks HF keeps as stand-ins the table after maps back",
            "mnn-bert-normalizer", model="wordpiece", lower=_lower_bert, past_bound=_past_bert_bound,
            bound="text without private use past the BMP (clean_text: HF deletes its 131,068 characters), "
                  "U+2B820-U+2B91F (handle_chinese_chars: MNN spaces them, HF not), two combining marks of a "
                  "non-zero class that HF keeps out of canonical order (strip_accents), and " + _STAND_IN_BOUND[5:],
            example={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                     "strip_accents": None, "lowercase": True}),
    Variant("normalizer", "ByteLevel", "", V.IMPOSSIBLE, "nothing", "format:normalizer.ByteLevel",
            why="a table normalizer spaces control characters whatever it maps them to, so no table spells "
                "every byte", example={"type": "ByteLevel"}),
    Variant("normalizer", "Sequence", "", V.EXACT, "Sequence of the children's rows (each decided on its own)",
            example={"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"String": "a"},
                                                           "content": "b"}, {"type": "Prepend", "prepend": "x"}]}),
)

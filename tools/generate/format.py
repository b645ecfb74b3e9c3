"""``generated/FORMAT.md``: one table per section and variant."""

from __future__ import annotations

import inspect

from spec import _dsl as dsl

from .spec_walk import BANNER, Model, fields_of, scalar


def ref_lines(refs: tuple[str, ...]) -> list[str]:
    """Source links, as Kaitai's doc-ref: "Source: [tokenizer.cpp L86-L95](...)"."""
    if not refs:
        return []
    links = [f"[{url.rsplit('/', 1)[1].replace('#', ' ')}]({url})" for url in refs]
    return ["", "Source: " + ", ".join(links) + "."]


def type_text(sub, m: Model) -> str:
    sub = dsl.resolve(sub)
    s = scalar(sub)
    if isinstance(sub, dsl.Enum):
        return f"{s[1]} {'bits' if sub.flags else 'value'}: {sub.enum_name}"
    if s:
        return s[1]
    if isinstance(sub, dsl.FlagAdapter):
        return "u8 (0 or 1)"
    if isinstance(sub, dsl.Count):
        return f"{type_text(sub.subcon, m)} = len({sub.target})"
    if isinstance(sub, dsl.LenPrefixed):
        p = scalar(sub.prefix)[1]
        return f"[{p} len][len bytes" + (", UTF-8]" if sub.text else "]")
    if isinstance(sub, dsl.List):
        cnt = f"`{sub.count}`" if isinstance(sub.count, str) else f"[{type_text(sub.count, m)} count]"
        return f"{cnt} × {type_text(sub.element, m)}"
    if isinstance(sub, dsl.Row):
        return "(" + ", ".join(f"{f.name}: {type_text(f.sub, m)}" for f in fields_of(sub)) + ")"
    if isinstance(sub, dsl.Record):
        return f"[{sub.record_name}](#{sub.record_name.lower()})"
    if isinstance(sub, dsl.Union):
        return f"[{sub.union_name}](#{sub.union_name.lower()})"
    if isinstance(sub, dsl.HeaderLines):
        return "[Header](#header)"
    if isinstance(sub, dsl.PostProcessorLayouts):
        return "[PostProcessor](#postprocessor)"
    if isinstance(sub, dsl.Tail):
        return f"optional: {type_text(sub.subcon, m)}"
    if isinstance(sub, dsl.When):
        return f"if `{sub.flag_field}`: {type_text(sub.subcon, m)}"
    if isinstance(sub, dsl.End):
        return "end of data"
    if isinstance(sub, dsl.CountLine):
        return "text line: " + " ".join(f"`{name}`" for name, _ in sub.pairs) + " (decimal) `\\n`"
    if isinstance(sub, dsl.LineTable):
        cols = " ".join(f"`{col.name}`:{col.kind}" for col in sub.columns)
        return f"`{sub.count}` lines: {cols} `\\n`"
    if isinstance(sub, dsl.FinalNewline):
        return "(no bytes)"
    raise TypeError(sub)


def emit_format(m: Model, mtok_root: str, txt_roots: list[str], notes: str, txt_notes: str,
                ksy_limits: tuple[str, ...]) -> str:
    L = ["<!-- " + BANNER.strip("# \n") + " -->", "", "# The `.mtok` format", "",
         "All integers are little-endian. `str` = `[u16 len][len bytes]`. Tree class names are the "
         "section names below (`mtokspec.tree`).", ""]
    L.append(notes.strip())
    L.append("")
    # a union's table comes first, then its variants
    ordered = []
    for name in [mtok_root] + [n for n in m.order if n != mtok_root and n not in txt_roots]:
        if name in m.records and m.records[name].union:
            continue
        ordered.append(name)
        if name in m.unions:
            ordered += [r for _, r in m.unions[name].cases]
    for name in ordered:
        format_section(L, m, name)
    L += ["# The Kaitai Struct description", "",
          "[`mtok.ksy`](mtok.ksy) describes the same layout for [Kaitai Struct](https://kaitai.io) "
          "(generated from `spec/` with this file; the tree's class names become snake-case types, "
          "`BPEModel` → `bpe_model`, and each union is a `tag` enum plus a `variant`). "
          "`kaitai-struct-compiler` 0.11 compiles it without warnings to Python, JavaScript, C++ and Java, "
          "and its parsers read every corpus file as `mtokspec.parse` does (`tests/test_ksy.py`). "
          "The layout at a glance: [mtok.svg](mtok.svg) (the compiler's graphviz output).", "",
          "What `mtokspec.parse` checks and the `.ksy` does not:", ""]
    L += [f"- {limit}" for limit in ksy_limits]
    L += ["", "The legacy `tokenizer.txt` types have no `.ksy`. Kaitai has no base64 decoding, so the "
          "tokens of types 0-2 could only be described as base64 text, one line each: a reader would "
          "still decode every token itself. Type 3 (raw lines, the last newline optional) could be "
          "described and is not yet.", ""]
    L += ["# The legacy `tokenizer.txt` formats (types 0-3)", "", txt_notes.strip(), ""]
    for name in txt_roots:
        format_section(L, m, name)
    return "\n".join(L) + "\n"


def format_section(L: list[str], m: Model, name: str) -> None:
    if name in m.unions:
        u = m.unions[name]
        L += [f"## {name}", "", u.doc, *ref_lines(u.ref), ""]
        if u.custom is not None:
            L += [inspect.cleandoc(u.custom.__doc__).replace("``", "`"), "",
                  "| layout | tree class |", "|---|---|",
                  f"| current | [{u.custom.current.record_name}](#{u.custom.current.record_name.lower()}) |",
                  f"| legacy | [{u.custom.legacy.record_name}](#{u.custom.legacy.record_name.lower()}) |", ""]
            return
        L += [f"Tag: `{type_text(u.node.tag, m)}`. Nesting limit: {u.max_depth}.", "",
              "| tag | variant |", "|---|---|"]
        L += [f"| {t} | [{r}](#{r.lower()}) |" for t, r in u.cases]
        L.append("")
        return
    info = m.records[name]
    title = f"## {name}"
    if info.union:
        t = info.tag
        title += f" ({info.union}" + (f" tag {t})" if t is not None and t >= 0 else ")")
    L += [title, "", info.doc, *ref_lines(info.ref), ""]
    if info.custom is not None:
        h = info.custom
        L += [inspect.cleandoc(h.__doc__).split("\n\n", 1)[1].replace("``", "`"), "",
              "| line | content | tree fields |", "|---|---|---|",
              f"| 1 | `{h.magic} <type>\\n`: 4 for `.mtok`, 0-3 for `tokenizer.txt` | (magic and file type) |",
              "| 2 | `special stop prefix\\n`, decimal | special_count, stop_count, prefix_count |",
              "| 3 | ids, decimal, space-separated, `\\n` | ids, trailing_space |", ""]
        return
    if not info.fields:
        L += ["No fields.", ""]
        return
    L += ["| field | type | meaning |", "|---|---|---|"]
    for f in info.fields:
        L.append(f"| {f.name or '—'} | {type_text(f.sub, m)} | {f.doc} |")
    L.append("")
    for f in info.fields:
        enum = dsl.resolve(f.sub)
        enum = enum.subcon if isinstance(enum, dsl.Tail) else enum
        if isinstance(enum, dsl.Enum):
            L += [f"`{f.name}` ({enum.enum_name}, `mtokspec.tree.{enum.enum_name}`):", "",
                  f"| {'bit value' if enum.flags else 'value'} | name | meaning |", "|---|---|---|"]
            L += [f"| {value} | {vname} | {vdoc} |" for value, (vname, vdoc) in enum.values.items()]
            L.append("")


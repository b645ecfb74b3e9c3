"""``generated/FORMAT.md``: one table per section and variant."""

from __future__ import annotations

import inspect
from pathlib import Path

import jinja2

from spec import _dsl as dsl

from .spec_walk import BANNER, Model, fields_of, kind_of, scalar


def ref_links(refs: tuple[str, ...]) -> list[tuple[str, str]]:
    """Source links as (label, url), like Kaitai's doc-ref: ("tokenizer.cpp L86-L95", url)."""
    return [(url.rsplit("/", 1)[1].replace("#", " "), url) for url in refs]


def type_text(sub, m: Model) -> str:
    """How FORMAT.md writes a block's type."""
    sub = dsl.resolve(sub)
    return TYPE_TEXTS[kind_of(sub)](sub, m)


def _list_text(sub, m: Model) -> str:
    count = f"`{sub.count}`" if isinstance(sub.count, str) else f"[{type_text(sub.count, m)} count]"
    return f"{count} × {type_text(sub.element, m)}"


def _link(name: str) -> str:
    return f"[{name}](#{name.lower()})"


# block kind -> its type in FORMAT.md's tables
TYPE_TEXTS = {
    "scalar": lambda sub, m: scalar(sub)[1],
    "enum": lambda sub, m: f"{scalar(sub)[1]} {'bits' if sub.flags else 'value'}: {sub.enum_name}",
    "flag": lambda sub, m: "u8 (0 or 1)",
    "count": lambda sub, m: f"{type_text(sub.subcon, m)} = len({sub.target})",
    "lenprefixed": lambda sub, m: f"[{scalar(sub.prefix)[1]} len][len bytes" + (", UTF-8]" if sub.text else "]"),
    "list": _list_text,
    "row": lambda sub, m: "(" + ", ".join(f"{f.name}: {type_text(f.sub, m)}" for f in fields_of(sub)) + ")",
    "record": lambda sub, m: _link(sub.record_name),
    "union": lambda sub, m: _link(sub.union_name),
    "header": lambda sub, m: _link("Header"),
    "postprocessor": lambda sub, m: _link("PostProcessor"),
    "tail": lambda sub, m: f"optional: {type_text(sub.subcon, m)}",
    "when": lambda sub, m: f"if `{sub.flag_field}`: {type_text(sub.subcon, m)}",
    "end": lambda sub, m: "end of data",
    "countline": lambda sub, m: "text line: " + " ".join(f"`{name}`" for name, _ in sub.pairs) + " (decimal) `\\n`",
    "linetable": lambda sub, m: (f"`{sub.count}` lines: " + " ".join(f"`{col.name}`:{col.kind}" for col in sub.columns)
                                 + " `\\n`"),
    "finalnewline": lambda sub, m: "(no bytes)",
}


def union_section(m: Model, u) -> dict:
    section = {"title": u.name, "doc": u.doc, "refs": ref_links(u.ref)}
    if u.custom is not None:
        return {**section, "kind": "layouts", "text": inspect.cleandoc(u.custom.__doc__).replace("``", "`"),
                "layouts": [("current", u.custom.current.record_name), ("legacy", u.custom.legacy.record_name)]}
    return {**section, "kind": "union", "tag": type_text(u.node.tag, m), "max_depth": u.max_depth, "cases": u.cases}


def record_section(m: Model, info) -> dict:
    title = info.name
    if info.union:
        title += f" ({info.union}" + (f" tag {info.tag})" if info.tag is not None and info.tag >= 0 else ")")
    section = {"title": title, "doc": info.doc, "refs": ref_links(info.ref)}
    if info.custom is not None:
        h = info.custom
        return {**section, "kind": "header", "magic": h.magic, "roles": [name for name, _ in h.ROLES],
                "text": inspect.cleandoc(h.__doc__).split("\n\n", 1)[1].replace("``", "`")}
    enums = []
    for f in info.fields:
        inner = dsl.resolve(f.sub)
        inner = dsl.resolve(inner.subcon) if kind_of(inner) == "tail" else inner
        if kind_of(inner) == "enum":
            enums.append((f.name, inner))
    return {**section, "kind": "record", "enums": enums,
            "fields": [(f.name or "—", type_text(f.sub, m), f.doc) for f in info.fields]}


def section(m: Model, name: str) -> dict:
    return union_section(m, m.unions[name]) if name in m.unions else record_section(m, m.records[name])


TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False,
    undefined=jinja2.StrictUndefined,
)


def emit_format(m: Model, mtok_root: str, txt_roots: list[str], notes: str, txt_notes: str,
                ksy_limits: tuple[str, ...]) -> str:
    # a union's table comes first, then its variants
    ordered = []
    for name in [mtok_root] + [n for n in m.order if n != mtok_root and n not in txt_roots]:
        if name in m.records and m.records[name].union:
            continue
        ordered.append(name)
        if name in m.unions:
            ordered += [r for _, r in m.unions[name].cases]
    return TEMPLATES.get_template("FORMAT.md.j2").render(
        banner=BANNER.strip("# \n"), notes=notes.strip(), txt_notes=txt_notes.strip(), ksy_limits=ksy_limits,
        mtok_sections=[section(m, n) for n in ordered], txt_sections=[section(m, n) for n in txt_roots],
    )

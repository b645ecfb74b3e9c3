"""``generated/tree.py``: one dataclass per record, a type alias per union, the schema tables."""

from __future__ import annotations

from .spec_walk import BANNER, Model, annotation, default, field_desc, tree_fields


def emit_enums(m: Model) -> list[str]:
    """One ``IntEnum`` (``IntFlag`` for bit flags) per enum block; the tree holds the ints."""
    L = []
    for name, enum in m.enums.items():
        base = "IntFlag" if enum.flags else "IntEnum"
        L += ["", f"class {name}({base}):", f'    """Named values of a scalar field ({"bits" if enum.flags else "values"} as spec/ declares them)."""', ""]
        L += [f"    {vname} = {value}  # {vdoc}" for value, (vname, vdoc) in enum.values.items()]
        L.append("")
    return L


def emit_magic_lines(m: Model) -> list[str]:
    """Line 1 of each whole-file format -> its root class (every root starts with its header lines)."""
    L = ["", "# line 1 of a file -> its root class", "ROOTS_BY_MAGIC_LINE = {"]
    for name in m.order:
        info = m.records.get(name)
        first = info.fields[0].sub if info is not None and info.fields else None
        if first is not None and getattr(first, "kind", None) == "header":
            L.append(f"    {first.magic_line!r}: {name},")
    L += ["}", "", "# each root -> the type number its line 1 gives ('430 <type>')",
          "ROOT_TYPES = {cls: int(line.split()[1]) for line, cls in ROOTS_BY_MAGIC_LINE.items()}", ""]
    return L


def emit_commit(mnn_commit: str) -> list[str]:
    """The MNN commit the spec reads the layout from (``spec/mtok.py``), for the runtime that models it."""
    return ["", "# the MNN source spec/ reads the layout from (spec/mtok.py); the mnn semantics models the same",
            f"MNN_COMMIT = {mnn_commit!r}", ""]


def emit_tree(m: Model, mnn_commit: str) -> str:
    L = [BANNER, '"""Tree classes of the MNN tokenizer formats: one dataclass per record and variant."""', "",
         "from __future__ import annotations", "", "from dataclasses import dataclass, field",
         *(["from enum import IntEnum, IntFlag"] if m.enums else []), "", *emit_enums(m)]
    for name in m.order:
        if name in m.records:
            info = m.records[name]
            L += ["", "@dataclass(slots=True)", f"class {name}:"]
            doc = (info.doc or name).replace("\\", "\\\\")
            fl = tree_fields(info)
            if fl:
                L.append(f'    """{doc}')
                L.append("")
                for f in fl:
                    L.append(f"    ``{f.name}``: " + f.doc.replace("\\", "\\\\"))
                L.append('    """')
            else:
                L.append(f'    """{doc}"""')
            L.append("")
            for f in fl:
                d = field_desc(info, f)
                L.append(f"    {f.name}: {annotation(d)} = {default(d, m)}")
            if not fl:
                L.append("    pass")
            L.append("")
        else:
            u = m.unions[name]
            L += ["", f"{name} = " + " | ".join(r for _, r in u.cases), f'"""{u.doc}"""', ""]
    # schema: what the plain-data conversion and the strategies walk
    L += ["", "# class name -> ((field, descriptor), ...)", "SCHEMA = {"]
    for name in m.order:
        if name in m.records:
            info = m.records[name]
            items = ", ".join(f"({f.name!r}, {field_desc(info, f)!r})" for f in tree_fields(info))
            L.append(f"    {name!r}: ({items}{',' if len(tree_fields(info)) == 1 else ''}),")
    L.append("}")
    L += ["", "# union name -> variant class names, in tag order", "UNIONS = {"]
    for name in m.order:
        if name in m.unions:
            L.append(f"    {name!r}: ({', '.join(repr(r) for _, r in m.unions[name].cases)},),")
    L.append("}")
    L += ["", "# variant class name -> (union name, tag); the post-processor layouts have no tag", "VARIANTS = {"]
    for name in m.order:
        if name in m.unions:
            for t, r in m.unions[name].cases:
                L.append(f"    {r!r}: ({name!r}, {t if t >= 0 else None}),")
    L.append("}")
    L += ["", "CLASSES = {", *[f"    {n!r}: {n}," for n in m.order if n in m.records], "}", ""]
    L += ["", "ENUMS = {", *[f"    {n!r}: {n}," for n in m.enums], "}", ""]
    L += emit_magic_lines(m)
    L += emit_commit(mnn_commit)
    return "\n".join(L)


"""``generated/mtok.ksy`` and ``generated/tokenizer_txt.ksy``: Kaitai Struct descriptions of the
``.mtok`` layout and of the legacy types, from the same spec walk.

Kaitai names follow the tree: a record ``BPEModel`` is the type ``bpe_model``, its fields keep their
names, a union ``Normalizer`` is the type ``normalizer`` whose ``variant`` is switched on ``tag``.
What Kaitai cannot say (the nesting limit, canonical decimals, UTF-8 validity in every target
language, base64) is listed in ``KSY_LIMITS``, which FORMAT.md prints.
"""

from __future__ import annotations

import yaml

from spec import _dsl as dsl

from .spec_walk import BANNER, Model, RecordInfo, fields_of, kind_of, min_size, scalar, snake

KSC_SCALARS = {"B": "u1", "H": "u2", "I": "u4", "d": "f8"}
LEN_PREFIXED_NAMES = {(False, "H"): "bytes16", (True, "H"): "text16", (True, "I"): "text32"}

#: What ``mtokspec.parse`` checks that the .ksy does not (FORMAT.md prints this list).
KSY_LIMITS = (
    "**Nesting depth.** Sequence variants may nest at most 32 deep; Kaitai recurses without a limit "
    "(a hostile file can exhaust the stack of a generated parser).",
    "**Canonical decimals.** Decimal text (the header, the legacy count lines and integer columns) "
    "is read with Kaitai's `to_i`: leading zeros, a sign on a count, `-0` or an empty number are not "
    "refused (the JavaScript runtime's `parseInt` even accepts trailing garbage).",
    "**UTF-8.** Text fields are declared UTF-8; whether invalid bytes fail depends on the target "
    "language (Python raises, JavaScript's `TextDecoder` substitutes U+FFFD).",
    "**Header ids** are a list of `decimal` objects (read `.value`), not integers: Kaitai cannot map "
    "a list.",
    "**Post-processor layout.** The choice is expressed (a walk over the ops decides), but a "
    "`LegacyPostProcessor` that would read back as a program is only refused on build, which Kaitai "
    "does not do.",
    "**Base64** (legacy types 0-2): `tokenizer_txt.ksy` gives those columns as their base64 text; "
    "decoding them, and refusing text that is not canonical padded base64, is left to the reader.",
    "**Type 3's last merge line** may lack its newline, so it is read with `eos-error: false`: a file "
    "cut right after a newline while merge lines are still due reads as an empty last line "
    "(mtokspec: truncated).",
    "**Header counts** against line 3: mtokspec refuses a line 2 that does not count line 3's ids "
    "(the tree holds the role lists); the .ksy reads both lines as they are.",
    "**Semantics** (`mtokspec.validate`): sorted vocabularies, ids in range and the rest of the "
    "findings are not layout and are not in the .ksy.",
)


class KsyEmitter:
    """Collects the Kaitai ``types`` and ``enums`` that one root needs, on first use."""

    def __init__(self, m: Model, one_header: bool = True):
        self.m = m
        self.types: dict[str, dict] = {}
        self.enums: dict[str, dict] = {}
        self.after_program: list = []  # the fields after the post-processor program (read inside it)
        self.one_header = one_header  # else each file type has its own header type (its magic line)
        self.instances: dict[str, dict] = {}  # instances the fields of the record being defined ask for

    # -- seq attributes of a record's fields -------------------------------------------------

    def seq(self, fields, shared_count: str | None = None) -> list[dict]:
        out: list[dict] = []
        fields = list(fields)
        carried: set[str] = set()
        for k, f in enumerate(fields):
            if f.name in carried:
                continue
            sub = dsl.resolve(f.sub)
            if kind_of(sub) == "tail" and kind_of(dsl.resolve(sub.subcon)) == "postprocessor":
                # the program's layout looks at every byte left, so its type reads the rest of the
                # file; the sections after it are read inside it and shown here as instances
                self.after_program = [g for g in fields[k + 1:] if kind_of(g.sub) != "end"]
                carried = {g.name for g in self.after_program}
                for g in self.after_program:
                    self.instances[g.name] = {"value": f"{f.name}.{g.name}", "doc": g.doc}
            out += SEQ_EMITTERS.get(kind_of(f.sub), KsyEmitter.one_attr)(self, f.name, sub, f.doc, shared_count)
        return out

    def one_attr(self, name, sub, doc, shared_count=None) -> list[dict]:
        return [attr(name, self.ref(sub), doc)]

    def list_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        element = self.ref(sub.element)
        if isinstance(sub.count, str):  # a Count field read earlier, emitted as num_<this list>
            return [attr(name, {**element, "repeat": "expr", "repeat-expr": f"num_{name}"}, doc)]
        if shared_count is not None:  # the post-processor layouts share one count, read before them
            return [attr(name, {**element, "repeat": "expr", "repeat-expr": shared_count}, doc)]
        count = f"num_{name}"
        return [attr(count, self.ref(sub.count), f"number of {name}"),
                attr(name, {**element, "repeat": "expr", "repeat-expr": count}, doc)]

    def count_line_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        """One decimal per line table, separated by spaces: ``num_<table>`` as Kaitai's style has it."""
        self.types["decimal"] = DECIMAL
        last = len(sub.pairs) - 1
        return [attr(f"num_{target}", {"type": "decimal", "terminator": 10 if i == last else 32},
                     f"number of {target} (decimal text)") for i, (_, target) in enumerate(sub.pairs)]

    def line_table_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        """``count`` lines; a table whose last line may lack its newline reads that line apart."""
        line = self.line_ref(sub.columns)
        count = f"num_{name}.value"
        if not sub.final_newline:
            return [attr(name, {**line, "terminator": 10, "repeat": "expr", "repeat-expr": count}, doc)]
        return [attr(name, {**line, "terminator": 10, "repeat": "expr", "repeat-expr": f"{count} > 0 ? {count} - 1 : 0"},
                     doc + " (all but the last line)"),
                attr(f"{name}_last_line", {**line, "terminator": 10, "eos-error": False, "if": f"{count} > 0"},
                     f"the last line of {name}, its newline optional")]

    def line_ref(self, columns) -> dict:
        if len(columns) == 1:
            return LINE_COLUMNS[columns[0].kind](self)
        name = "_".join(col.name for col in columns) + "_line"
        if name not in self.types:
            last = len(columns) - 1
            self.types[name] = {
                "doc": "one line without its newline: " + ", ".join(col.name for col in columns) + ", separated by a space",
                "seq": [attr(col.name, {**LINE_COLUMNS[col.kind](self), **({"terminator": 32} if i < last else {"size-eos": True})},
                             col.doc) for i, col in enumerate(columns)],
            }
        return {"type": name}

    def final_newline_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        # no bytes: whether the file's last byte is the newline (the line tables above end the file)
        self.instances["last_byte"] = {"pos": "_io.size - 1", "type": "u1"}
        self.instances[name] = {"value": "last_byte == 10", "doc": doc}
        return []

    def end_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        return [attr("trailing_bytes", {"size-eos": True, "valid": {"expr": "_.length == 0"}},
                     "nothing may follow the last section")]

    # -- the type of one value -------------------------------------------------------------

    def ref(self, sub) -> dict:
        sub = dsl.resolve(sub)
        return TYPE_REFS[kind_of(sub)](self, sub)

    def scalar_ref(self, sub) -> dict:
        return {"type": KSC_SCALARS[scalar(sub)[0]]}

    def enum_ref(self, sub) -> dict:
        name = snake(sub.enum_name)
        self.enums[name] = {value: {"id": snake(vname), "doc": vdoc} for value, (vname, vdoc) in sub.values.items()}
        if sub.flags:  # a Kaitai enum names whole values; the bits are listed in it for the reader
            return {**self.scalar_ref(sub), "doc-ref": f"enum {name} (bit values)"}
        return {**self.scalar_ref(sub), "enum": name}

    def flag_ref(self, sub) -> dict:
        return {"type": "u1", "valid": {"max": 1}}

    def count_attrs(self, name, sub, doc, shared_count=None) -> list[dict]:
        # Kaitai's style: a count used only as a repeat count is num_<list>; the tree has no such field
        return [attr(f"num_{sub.target}", self.ref(sub.subcon), doc)]

    def len_prefixed_ref(self, sub) -> dict:
        prefix = scalar(sub.prefix)[0]
        name = LEN_PREFIXED_NAMES[(sub.text, prefix)]
        if name not in self.types:
            value = {"type": "str", "encoding": "UTF-8"} if sub.text else {}
            self.types[name] = {
                "doc": f"[{scalar(sub.prefix)[1]} len][len bytes" + (", UTF-8]" if sub.text else "]"),
                "seq": [attr("len_value", {"type": KSC_SCALARS[prefix]}, "length in bytes"),
                        attr("value", {**value, "size": "len_value"}, "the text" if sub.text else "the bytes")],
            }
        return {"type": name}

    def record_ref(self, sub) -> dict:
        name = snake(sub.record_name)
        if name not in self.types:
            self.define_record(self.m.records[sub.record_name])
        return {"type": name}

    def define_record(self, info: RecordInfo, shared_count: str | None = None) -> None:
        name = snake(info.name)
        self.types[name] = {"doc": info.doc, **doc_ref(info.ref)}  # first, so a recursive reference finds it
        outer, self.instances = self.instances, {}
        seq = self.seq(info.fields, shared_count)
        if seq:
            self.types[name]["seq"] = seq
        if self.instances:
            self.types[name]["instances"] = self.instances
        self.instances = outer

    def row_ref(self, sub) -> dict:
        fields = fields_of(sub)
        name = "_".join(f.name for f in fields) + "_row"
        if name not in self.types:
            self.types[name] = {"doc": "one table row: " + ", ".join(f.name for f in fields)}
            self.types[name]["seq"] = self.seq(fields)
        return {"type": name}

    def union_ref(self, sub) -> dict:
        name = snake(sub.union_name)
        if name in self.types:
            return {"type": name}
        enum = f"{name}_type"
        self.types[name] = {"doc": sub.union_doc}
        self.enums[enum] = {t: {"id": snake(r.record_name), "doc": r.record_doc} for t, r in sub.cases.items()}
        cases = {}
        for t, rec in sub.cases.items():
            cases[f"{enum}::{snake(rec.record_name)}"] = self.record_ref(rec)["type"]
        doc = sub.union_doc
        if any(kind_of(f.sub) == "list" and dsl.resolve(f.sub.element) is sub
               for rec in sub.cases.values() for f in fields_of(rec)):
            doc += f" mtokspec refuses nesting deeper than {sub.max_depth}; this description does not."
        self.types[name] = {"doc": doc, **doc_ref(sub.ref), "seq": [
            attr("tag", {**self.ref(sub.tag), "enum": enum, "valid": {"in-enum": True}}, "selects the variant"),
            attr("variant", {"type": {"switch-on": "tag", "cases": cases}}, "the variant's fields"),
        ]}
        return {"type": name}

    def header_ref(self, sub) -> dict:
        name = "header" if self.one_header else f"header_type{sub.file_type}"
        if name in self.types:
            return {"type": name}
        self.types["decimal"] = DECIMAL
        count_docs = {**dict(dsl.HeaderLines.COUNTS), "ids": dsl.HeaderLines.IDS_DOC,
                      **{n: doc for n, _, doc in dsl.HeaderLines.FIELDS}}
        counts = [n for n, _ in dsl.HeaderLines.COUNTS]
        self.types["header_counts"] = {
            "doc": "line 2 without its newline: three decimal counts separated by one space",
            "seq": [attr(n, {"type": "decimal", **({"terminator": 32} if i < len(counts) - 1 else {"size-eos": True})},
                         count_docs[n]) for i, n in enumerate(counts)],
        }
        self.types["header_ids"] = {
            "doc": "line 3 without its newline: decimal ids, each followed or separated by one space",
            "seq": [attr("ids", {"type": "decimal", "terminator": 32, "eos-error": False, "repeat": "eos"},
                         count_docs["ids"])],
            "instances": {
                "last_byte": {"pos": "_io.size - 1", "type": "u1", "if": "_io.size > 0"},
                "trailing_space": {"value": "_io.size > 0 and last_byte == 32", "doc": count_docs["trailing_space"]},
            },
        }
        self.types[name] = {
            "doc": dsl.HeaderLines.__doc__.split("\n\n")[0].strip(),
            **doc_ref(sub.ref),
            "seq": [
                attr("magic", {"contents": [sub.magic_line[:-1].decode("ascii"), 10]},
                     f"line 1: magic {sub.magic} and file type {sub.file_type}"),
                attr("counts", {"type": "header_counts", "terminator": 10}, "line 2"),
                attr("id_line", {"type": "header_ids", "terminator": 10}, "line 3"),
            ],
            "instances": {
                **{n: {"value": f"counts.{n}.value", "doc": count_docs[n]} for n in counts},
                "ids": {"value": "id_line.ids", "doc": count_docs["ids"]},
                "trailing_space": {"value": "id_line.trailing_space", "doc": count_docs["trailing_space"]},
            },
        }
        return {"type": name}

    def post_processor_ref(self, sub) -> dict:
        """The layout choice of ``PostProcessorLayouts`` looks at every byte left, so the type reads
        the rest of the file as its own stream; a walk over the ops says whether they fit exactly."""
        name = "post_processor"
        if name in self.types:
            return {"type": name, "size-eos": True}
        count_size = min_size(sub.count, self.m)
        ops = sub.op_union
        operand_sizes = {t: sum(min_size(f.sub, self.m) for f in fields_of(rec)) for t, rec in ops.cases.items()}
        for rec in ops.cases.values():  # the walk skips operands by size: fixed-size scalars only
            assert all(kind_of(f.sub) == "scalar" for f in fields_of(rec)), rec.record_name
        size_expr = "0"
        for t, size in reversed(operand_sizes.items()):
            size_expr = f"tag == {t} ? {size} : ({size_expr})"
        known = " or ".join(f"tag == {t}" for t in operand_sizes)
        self.types["post_op_step"] = {
            "doc": "one op read leniently: never fails, says whether it is a well-formed op",
            "seq": [attr("tag", self.ref(ops.tag), "the op tag"),
                    attr("operand", {"size": "_io.size - _io.pos >= operand_size ? operand_size : 0"},
                         "the op's fields, skipped")],
            "instances": {"operand_size": {"value": size_expr},
                          "well_formed": {"value": f"({known}) and operand.length == operand_size"}},
        }
        self.types["post_op_walk"] = {
            "doc": "the bytes after the count walked as ops until one is malformed or the bytes end",
            "seq": [attr("steps", {"type": "post_op_step", "repeat": "until",
                                   "repeat-until": "not _.well_formed or _io.eof"}, "the ops walked")],
            "instances": {"fits": {"value": "steps.last.well_formed and steps.size == _parent.count",
                                   "doc": "the bytes are exactly `count` well-formed ops"}},
        }
        self.ref(ops)
        ids_fit = f"count > 0 and _io.size - {count_size} == 4 * count"
        self.define_record(self.m.records[sub.legacy.record_name], shared_count="_parent.count")
        self.define_record(self.m.records[sub.current.record_name], shared_count="_parent.count")
        self.types[name] = {
            "doc": " ".join(dsl.PostProcessorLayouts.__doc__.split()).replace("``", "`"),
            "seq": [
                attr("count", self.ref(sub.count), "number of ids (legacy) or ops (current)"),
                attr("layout", {"type": {"switch-on": "is_legacy", "cases": {
                    "true": snake(sub.legacy.record_name), "false": snake(sub.current.record_name)}}},
                     "the layout the bytes hold"),
                *self.seq(self.after_program),  # the sections after the program
                *self.end_attrs("", None, ""),  # its stream is the rest of the file: it checks the end
            ],
            "instances": {
                "is_legacy": {"value": f"{ids_fit} and not ops_probe.fits",
                              "doc": "legacy when the rest is count u32 ids and not count well-formed ops"},
                "ops_probe": {"pos": count_size, "size-eos": True, "type": "post_op_walk", "if": ids_fit},
            },
        }
        return {"type": name, "size-eos": True}


def conditional(condition: str):
    """The attributes of the block inside, each read only when ``condition`` holds."""
    def emit(self: KsyEmitter, name, sub, doc, shared_count=None) -> list[dict]:
        inner = dsl.resolve(sub.subcon)
        attrs = SEQ_EMITTERS.get(kind_of(inner), KsyEmitter.one_attr)(self, name, inner, doc, shared_count)
        return [{**a, "if": condition.format(flag=getattr(sub, "flag_field", ""))} for a in attrs]
    return emit


DECIMAL = {
    "doc": "a decimal integer in ASCII text (its canonical form is not checked here)",
    "seq": [{"id": "text", "type": "str", "size-eos": True, "encoding": "ASCII", "doc": "the digits"}],
    "instances": {"value": {"value": "text.to_i", "doc": "the number"}},
}


def _decimal_column(e: KsyEmitter) -> dict:
    e.types["decimal"] = DECIMAL
    return {"type": "decimal"}


# a text-line column kind (spec/_dsl.py LineColumn) -> how Kaitai reads it
LINE_COLUMNS = {
    "base64": lambda e: {"type": "str", "encoding": "ASCII"},  # Kaitai cannot decode base64: the text
    "word": lambda e: {"type": "str", "encoding": "UTF-8"},
    "int": _decimal_column,
    "raw": lambda e: {},
}


def doc_ref(refs: tuple[str, ...]) -> dict:
    return {"doc-ref": list(refs)} if refs else {}


def attr(name: str, spec: dict, doc: str) -> dict:
    out = {"id": name, **spec}
    if doc:
        out["doc"] = doc
    return out


SEQ_EMITTERS = {
    "list": KsyEmitter.list_attrs,
    "tail": conditional("not _io.eof"),
    "when": conditional("{flag} != 0"),
    "end": KsyEmitter.end_attrs,
    "count": KsyEmitter.count_attrs,
    "countline": KsyEmitter.count_line_attrs,
    "linetable": KsyEmitter.line_table_attrs,
    "finalnewline": KsyEmitter.final_newline_attrs,
}

TYPE_REFS = {
    "scalar": KsyEmitter.scalar_ref,
    "flag": KsyEmitter.flag_ref,
    "enum": KsyEmitter.enum_ref,
    "lenprefixed": KsyEmitter.len_prefixed_ref,
    "record": KsyEmitter.record_ref,
    "row": KsyEmitter.row_ref,
    "union": KsyEmitter.union_ref,
    "header": KsyEmitter.header_ref,
    "postprocessor": KsyEmitter.post_processor_ref,
}


def emit_ksy(m: Model, root: str, meta: dict) -> str:
    e = KsyEmitter(m)
    info = m.records[root]
    seq = e.seq(info.fields)
    ksy = {"meta": {"id": snake(root), **meta, "endian": "le"}, "doc": info.doc, **doc_ref(info.ref), "seq": seq,
           **({"instances": e.instances} if e.instances else {}), "types": e.types, "enums": e.enums}
    body = yaml.safe_dump(ksy, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
    return BANNER + body


def emit_txt_ksy(m: Model, roots: list[str], meta: dict, doc: str) -> str:
    """One description for the four legacy types: line 1 says which, each type is its tree class."""
    e = KsyEmitter(m, one_header=False)
    cases = {}
    for root in roots:
        info = m.records[root]
        e.define_record(info)
        header = dsl.resolve(info.fields[0].sub)
        cases[ord(str(header.file_type))] = snake(root)
    ksy = {"meta": {"id": "tokenizer_txt_file", **meta}, "doc": doc,
           "seq": [attr("file", {"type": {"switch-on": "file_type", "cases": cases}},
                        "the file, read as the type line 1 names")],
           "instances": {"file_type": {"pos": 4, "type": "u1", "valid": {"min": min(cases), "max": max(cases)},
                                       "doc": "the type digit of line 1 (\"430 <type>\")"}},
           "types": e.types}
    if e.enums:
        ksy["enums"] = e.enums
    body = yaml.safe_dump(ksy, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
    return BANNER + body

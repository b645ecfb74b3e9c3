"""The codec emitter's build side: the code that appends each block's bytes (records, unions,
lists, text lines), dispatched by block kind through ``WRITERS``."""

from __future__ import annotations

import struct

from spec import _dsl as dsl

from .spec_walk import FieldInfo, RecordInfo, UnionInfo, fields_of, kind_of, scalar
from .codec_emitter import EmitterBase


class Builder(EmitterBase):
    """Writes the ``_build_*`` functions."""

    def write_fixed_group(self, ind, group, exprs, pathexprs):
        fmt = "<" + "".join(self.fixed(s)[0] for s in group)
        for s, e, pe in zip(group, exprs, pathexprs):
            if self.fixed(s)[1]:
                self.w(ind, f"if {e} is not True and {e} is not False and {e} not in (0, 1):")
                self.w(ind + 1, f'bad_value({pe}, "flag must be a bool", {e})')
        self.w(ind, "try:")
        self.w(ind + 1, f"out.append({self.st(fmt)}.pack({', '.join(exprs)}))")
        self.w(ind, "except (struct.error, TypeError) as e:")
        self.w(ind + 1, f"bad_value({pathexprs[0]}, str(e), ({', '.join(exprs)},))")

    def write_fields(self, ind, items, obj, union_name):
        """items: [(FieldInfo, value_expr, path_expr)]."""
        i = 0
        while i < len(items):
            f, e, pe = items[i]
            if self.fixed(f.sub):
                j = i
                while j < len(items) and self.fixed(items[j][0].sub):
                    j += 1
                grp = items[i:j]
                self.write_fixed_group(ind, [g[0].sub for g in grp], [g[1] for g in grp], [g[2] for g in grp])
                i = j
                continue
            self.write_one(ind, f.sub, e, pe, obj, union_name)
            i += 1

    def write_lenprefixed(self, ind, sub, e, pe):
        pfmt = scalar(sub.prefix)[0]
        limit = (1 << (8 * struct.calcsize("<" + pfmt))) - 1
        v = self.var("s", e)
        if sub.text:
            self.w(ind, f"if {e}.__class__ is not str:")
            self.w(ind + 1, f'bad_value({pe}, "expected str", {e})')
            self.w(ind, "try:")
            self.w(ind + 1, f"{v} = {e}.encode()")
            self.w(ind, "except UnicodeEncodeError:")
            self.w(ind + 1, f'bad_value({pe}, "text is not encodable as UTF-8", {e})')
        else:
            self.w(ind, f"{v} = {e}")
            self.w(ind, f"if {v}.__class__ is not bytes:")
            self.w(ind + 1, "if not isinstance({0}, (bytes, bytearray, memoryview)):".format(v))
            self.w(ind + 2, f'bad_value({pe}, "expected bytes", {v})')
            self.w(ind + 1, f"{v} = bytes({v})")
        self.w(ind, f"if len({v}) > {limit}:")
        self.w(ind + 1, f'bad_value({pe}, "longer than {limit} bytes", len({v}))')
        self.w(ind, f"out.append({self.st('<' + pfmt)}.pack(len({v})))")
        self.w(ind, f"out.append({v})")

    def write_one(self, ind, sub, e, pe, obj, union_name):
        sub = dsl.resolve(sub)
        writer = WRITERS.get(kind_of(sub))
        if writer is None:
            raise TypeError(f"cannot emit a writer for {sub!r}")
        writer(self, ind, sub, e, pe, obj, union_name)

    # the writers of WRITERS: each writes the code that appends the bytes of one block (value ``e``)
    def write_record(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"_build_{sub.record_name}({e}, out, {pe})")

    def write_header(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"build_header_lines({e}, out, {pe}, {sub.magic_line!r}, _DECIMAL_BOUND)")

    def write_union(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"_build_{sub.union_name}({e}, out, {pe})")

    def write_post_processor(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"_build_PostProcessor({e}, out, {pe})")

    def write_tail(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"if {e} is None:")
        self.w(ind + 1, "absent = True")
        self.w(ind, "else:")
        self.w(ind + 1, "if absent:")
        self.w(ind + 2, f'bad_value({pe}, "a trailing section cannot follow an absent one", {e})')
        self.write_fields(ind + 1, [(FieldInfo("", sub.subcon, ""), e, pe)], obj, union_name)

    def write_when(self, ind, sub, e, pe, obj, union_name):
        flag = f"{obj}.{sub.flag_field}"
        self.w(ind, f"if bool({flag}) != ({e} is not None):")
        self.w(ind + 1, f'bad_value({pe}, "present exactly when {sub.flag_field} is set", {e})')
        self.w(ind, f"if {e} is not None:")
        self.write_fields(ind + 1, [(FieldInfo("", sub.subcon, ""), e, pe)], obj, union_name)

    def write_count_line(self, ind, sub, e, pe, obj, union_name):
        counts = ", ".join(f"len({obj}.{target})" for _, target in sub.pairs)
        fmt = " ".join(["%d"] * len(sub.pairs))
        self.w(ind, f'out.append(b"{fmt}\\n" % ({counts},))')

    def write_line_table_field(self, ind, sub, e, pe, obj, union_name):
        self.write_line_table(ind, sub, e, pe, obj)

    def write_final_newline(self, ind, sub, e, pe, obj, union_name):
        self.w(ind, f"if {e}.__class__ is not bool:")
        self.w(ind + 1, f'bad_value({pe}, "expected a bool", {e})')

    def write_end(self, ind, sub, e, pe, obj, union_name):
        pass  # the end of the data writes nothing

    def write_line_table(self, ind, sub, e, pe, obj):
        lv, lines, i, row = self.var("lst"), self.var("lines"), self.var("i"), self.var("row")
        self.w(ind, f"{lv} = {e}")
        self.w(ind, f"if not isinstance({lv}, (list, tuple, Table)):")
        self.w(ind + 1, f'bad_value({pe}, "expected a list", {lv})')
        self.w(ind, f"{lines} = []")
        epe = f'{pe} + "[%d]" % {i}'
        self.w(ind, f"for {i}, {row} in enumerate({lv}):")
        cols = sub.columns

        def bound(col):  # an int column is written within the grammar's digits
            return ", _DECIMAL_BOUND" if col.kind == "int" else ""

        if len(cols) == 1:
            self.w(ind + 1, f"{lines}.append(line_column({row}, {cols[0].kind!r}, {epe}{bound(cols[0])}))")
        else:
            self.w(ind + 1, f"if not isinstance({row}, (tuple, list)) or len({row}) != {len(cols)}:")
            self.w(ind + 2, f'bad_value({epe}, "expected a row of {len(cols)} values", {row})')
            vals = [f"line_column({row}[{k}], {col.kind!r}, {epe} + '.{col.name}'{bound(col)})"
                    for k, col in enumerate(cols)]
            self.w(ind + 1, f'{lines}.append(b" ".join(({", ".join(vals)},)))')
        end_nl = f"{obj}.{sub.final_newline}" if sub.final_newline else "True"
        if sub.final_newline:
            self.w(ind, f"if not {end_nl} and not ({lines} and {lines}[-1]):")
            self.w(ind + 1, f'bad_value({pe}, "{sub.final_newline} false needs a last line that is not empty", {lv})')
        self.w(ind, f"if {lines}:")
        self.w(ind + 1, f'out.append(b"\\n".join({lines}) + (b"\\n" if {end_nl} else b""))')

    def write_list(self, ind, sub, e, pe, obj, union_name):
        lv = self.var("lst", e)
        self.w(ind, f"{lv} = {e}")
        self.w(ind, f"if not isinstance({lv}, (list, tuple, Table)):")
        self.w(ind + 1, f'bad_value({pe}, "expected a list", {lv})')
        if not isinstance(sub.count, str):
            self.write_fixed_group(ind, [sub.count], [f"len({lv})"], [pe])
        el = dsl.resolve(sub.element)
        idx = self.var("i", e)
        epe = f'{pe} + "[%d]" % {idx}'
        if isinstance(el, dsl.Row) and self.lazy_row(el):
            raw = self.var("raw", e)
            self.w(ind, f"{raw} = {lv}.raw_bytes() if {lv}.__class__ is Table else None")
            self.w(ind, f"if {raw} is not None:")
            self.w(ind + 1, f"out.append({raw})")
            self.w(ind, "else:")
            ind += 1
        if isinstance(el, dsl.Row):
            cols = fields_of(el)
            if all(self.fixed(f.sub) and not self.fixed(f.sub)[1] for f in cols):
                fmt = "".join(self.fixed(f.sub)[0] for f in cols)
                if len(set(fmt)) == 1:
                    fmt_expr = f'"<%d{fmt[0]}" % ({len(fmt)} * len({lv}))'
                else:
                    fmt_expr = f'"<" + "{fmt}" * len({lv})'
                self.w(ind, "try:")
                self.w(ind + 1, f"out.append(struct.pack({fmt_expr}, *_chain.from_iterable({lv})))")
                self.w(ind, "except (struct.error, TypeError):")
                self.w(ind + 1, f"bad_rows({lv}, {len(cols)}, {self.st('<' + fmt)}, {pe})")
                return
            cv = [self.var("c") for _ in cols]
            row = self.var("row")
            self.w(ind, f"for {idx}, {row} in enumerate({lv}):")
            self.w(ind + 1, "try:")
            self.w(ind + 2, f"{', '.join(cv)}, = {row}")
            self.w(ind + 1, "except (TypeError, ValueError):")
            self.w(ind + 2, f'bad_value({epe}, "expected a row of {len(cols)} values", {row})')
            self.write_fields(ind + 1, [(f, v, f'{epe} + ".{f.name}"') for f, v in zip(cols, cv)], obj, union_name)
            return
        if self.fixed(el):
            fmt = self.fixed(el)[0]
            self.w(ind, "try:")
            self.w(ind + 1, f'out.append(struct.pack("<%d{fmt}" % len({lv}), *{lv}))')
            self.w(ind, "except (struct.error, TypeError) as e:")
            self.w(ind + 1, f"bad_value({pe}, str(e), {lv})")
            return
        item = self.var("it")
        self.w(ind, f"for {idx}, {item} in enumerate({lv}):")
        self.write_one(ind + 1, el, item, epe, obj, union_name)

    def build_record(self, info: RecordInfo):
        if info.custom is not None:
            return
        name = info.name
        self.w(0, f"def _build_{name}(obj, out, path):")
        self.w(1, f"if obj.__class__ is not {name}:")
        self.w(2, f'bad_value(path, "expected {name}", obj)')
        if any(isinstance(f.sub, dsl.Tail) for f in info.fields):
            self.w(1, "absent = False")
        items = []
        for f in info.fields:
            if not f.name:
                continue
            e = f"len(obj.{f.sub.target})" if isinstance(f.sub, dsl.Count) else f"obj.{f.name}"
            items.append((f, e, f'path + ".{f.name}"'))
        self.write_fields(1, items, "obj", info.union)
        self.w(0, "")
        self.w(0, "")

    def build_union(self, u: UnionInfo):
        if u.custom is not None:
            self.build_postprocessor(u)
            return
        self.w(0, f"def _build_{u.name}(obj, out, path):")
        self.w(1, f"entry = _{u.name.upper()}_BUILDERS.get(obj.__class__)")
        self.w(1, "if entry is None:")
        self.w(2, f'bad_value(path, "expected a {u.name} variant", obj)')
        self.w(1, f"out.append({self.st('<' + u.tag_fmt)}.pack(entry[0]))")
        self.w(1, "entry[1](obj, out, path)")
        self.w(0, "")
        self.w(0, "")

    def build_postprocessor(self, u: UnionInfo):
        pp = u.custom
        cur, leg = pp.current.record_name, pp.legacy.record_name
        self.w(0, "def _build_PostProcessor(obj, out, path):")
        self.w(1, f"if obj.__class__ is {leg}:")
        self.w(2, "raw = []")
        self.w(2, f"_build_{leg}(obj, raw, path)")
        self.w(2, 'raw = b"".join(raw)')
        self.w(2, "if not obj.ids or ops_fit(raw, 2, len(raw), len(obj.ids)):")
        self.w(3, 'bad_value(path, "these ids would read back as the current layout; write a '
                  f'{cur}", obj.ids)')
        self.w(2, "out.append(raw)")
        self.w(1, f"elif obj.__class__ is {cur}:")
        self.w(2, f"_build_{cur}(obj, out, path)")
        self.w(1, "else:")
        self.w(2, 'bad_value(path, "expected a post-processor layout", obj)')
        self.w(0, "")
        self.w(0, "")


# block kind -> the Builder method that writes its writer (fixed-size scalars and flags are
# written in groups by write_fields before these are consulted)
WRITERS = {
    "lenprefixed": lambda e, ind, sub, v, pe, *ctx: e.write_lenprefixed(ind, sub, v, pe),
    "record": Builder.write_record,
    "header": Builder.write_header,
    "union": Builder.write_union,
    "postprocessor": Builder.write_post_processor,
    "tail": Builder.write_tail,
    "when": Builder.write_when,
    "list": Builder.write_list,
    "countline": Builder.write_count_line,
    "linetable": Builder.write_line_table_field,
    "finalnewline": Builder.write_final_newline,
    "end": Builder.write_end,
}

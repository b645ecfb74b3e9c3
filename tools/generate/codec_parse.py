"""The codec emitter's parse side: the code that reads each block (records, unions, lists,
text lines) into the tree, dispatched by block kind through ``READERS``."""

from __future__ import annotations

import struct

from spec import _dsl as dsl

from .spec_walk import RecordInfo, UnionInfo, fields_of, kind_of, min_size, scalar, tree_fields
from .codec_rows import RowReader


class Parser(RowReader):
    """Writes the ``_parse_*`` functions."""

    def fixed(self, sub):
        """(struct char, is_flag) for a fixed-size scalar block, else None."""
        sub = dsl.resolve(sub)
        if isinstance(sub, dsl.Count):
            sub = sub.subcon
        s = scalar(sub)
        if s:
            return s[0], False
        if isinstance(sub, dsl.FlagAdapter):
            return "B", True
        return None

    def read_fixed_group(self, ind, group, names, pathexprs):
        """One bounds check and one unpack for consecutive fixed-size fields."""
        fmt = "<" + "".join(self.fixed(s)[0] for s in group)
        size = struct.calcsize(fmt)
        self.w(ind, f"if p + {size} > end:")
        self.w(ind + 1, f"truncated(p, {size}, end, {pathexprs[0]})")
        if len(group) == 1 and fmt == "<B":
            self.w(ind, f"{names[0]} = b[p]")
        else:
            self.w(ind, f"{', '.join(names)}{',' if len(names) == 1 else ''} = {self.st(fmt)}.unpack_from(b, p)")
        for s, n, pe in zip(group, names, pathexprs):
            if self.fixed(s)[1]:
                self.w(ind, f"if {n} > 1:")
                self.w(ind + 1, f'invalid(p, {pe}, "flag must be 0 or 1, got %d" % {n})')
                self.w(ind, f"{n} = {n} == 1")
        # offsets inside the group for precise error offsets are not needed: p marks the group
        self.w(ind, f"p += {size}")

    def read_lenprefixed(self, ind, sub, target, pe, tail=()):
        """A length-prefixed string, and optionally the fixed-size fields that follow it."""
        pfmt = scalar(sub.prefix)[0]
        psize = struct.calcsize("<" + pfmt)
        n = self.var("n", target)
        q = self.var("q", target)
        self.w(ind, f"if p + {psize} > end:")
        self.w(ind + 1, f"truncated(p, {psize}, end, {pe})")
        if pfmt == "H":
            self.w(ind, f"{n} = b[p] | (b[p + 1] << 8)")
        else:
            self.w(ind, f"{n}, = {self.st('<' + pfmt)}.unpack_from(b, p)")
        tfmt = "<" + "".join(self.fixed(t[0])[0] for t in tail)
        tsize = struct.calcsize(tfmt) if tail else 0
        self.w(ind, f"{q} = p + {psize} + {n}")
        self.w(ind, f"if {q} + {tsize} > end:")
        self.w(ind + 1, f"truncated(p + {psize}, {n} + {tsize}, end, {pe})")
        self.w(ind, f"{target} = b[p + {psize}:{q}]")
        if sub.text:
            self.w(ind, "try:")
            self.w(ind + 1, f"{target} = {target}.decode()")
            self.w(ind, "except UnicodeDecodeError as e:")
            self.w(ind + 1, f'invalid(p + {psize} + e.start, {pe}, "invalid UTF-8")')
        if tail:
            names = [t[1] for t in tail]
            self.w(ind, f"{', '.join(names)}, = {self.st(tfmt)}.unpack_from(b, {q})")
            for t in tail:
                if self.fixed(t[0])[1]:
                    self.w(ind, f"if {t[1]} > 1:")
                    self.w(ind + 1, f'invalid({q}, {t[2]}, "flag must be 0 or 1, got %d" % {t[1]})')
                    self.w(ind, f"{t[1]} = {t[1]} == 1")
        self.w(ind, f"p = {q} + {tsize}")

    def read_fields(self, ind, items, ctx_names, depth_expr, union_name):
        """items: [(sub, target_var, path_expr)].  Emits reads in order, grouping fixed fields."""
        i = 0
        while i < len(items):
            sub, target, pe = items[i]
            if self.fixed(sub):
                j = i
                while j < len(items) and self.fixed(items[j][0]):
                    j += 1
                grp = items[i:j]
                self.read_fixed_group(ind, [g[0] for g in grp], [g[1] for g in grp], [g[2] for g in grp])
                i = j
                continue
            j = i + 1
            while j < len(items) and self.fixed(items[j][0]):
                j += 1
            if isinstance(dsl.resolve(sub), dsl.LenPrefixed) and j > i + 1:
                # A string and the fixed fields after it (vocab rows): two bounds checks per row.
                self.read_lenprefixed(ind, dsl.resolve(sub), target, pe, tail=items[i + 1:j])
                i = j
                continue
            self.read_one(ind, sub, target, pe, ctx_names, depth_expr, union_name)
            i += 1

    def read_one(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        sub = dsl.resolve(sub)
        reader = READERS.get(kind_of(sub))
        if reader is None:
            raise TypeError(f"cannot emit a reader for {sub!r}")
        reader(self, ind, sub, target, pe, ctx_names, depth_expr, union_name)

    # the readers of READERS: each writes the code that reads one block into ``target``
    def read_record(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, f"{target}, p = _parse_{sub.record_name}(b, p, end, {pe}, 1)")

    def read_header(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, f"{target}, p = parse_header_lines(b, p, end, {pe}, {sub.magic_line!r}, _COUNTS, _IDS)")

    def read_union(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        d = f"{depth_expr} + 1" if sub.union_name == union_name else "1"
        self.w(ind, f"{target}, p = _parse_{sub.union_name}(b, p, end, {pe}, {d})")

    def read_post_processor(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, f"{target}, p = _parse_PostProcessor(b, p, end, {pe}, 1)")

    def read_tail(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, "if p == end:")
        self.w(ind + 1, f"{target} = None")
        self.w(ind, "else:")
        self.read_fields(ind + 1, [(sub.subcon, target, pe)], ctx_names, depth_expr, union_name)

    def read_when(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, f"if {ctx_names[sub.flag_field]}:")
        self.read_fields(ind + 1, [(sub.subcon, target, pe)], ctx_names, depth_expr, union_name)
        self.w(ind, "else:")
        self.w(ind + 1, f"{target} = None")

    def read_count_line(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        q = self.var("q")
        self.w(ind, f"{q} = line_end(b, p, end, {pe})")
        names = [ctx_names[name] for name, _ in sub.pairs]
        self.w(ind, f"{', '.join(names)}, = parse_count_line(b, p, {q}, {len(names)}, {pe}, _COUNT)")
        self.w(ind, f"p = {q}")

    def read_final_newline(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, f"{target} = final_newline")

    def read_end(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        self.w(ind, "if p != end:")
        self.w(ind + 1, f'invalid(p, {pe}, "%d trailing bytes after the last section" % (end - p))')

    def read_list(self, ind, sub, target, pe, ctx_names, depth_expr, union_name):
        n = self.var("n", target)
        if isinstance(sub.count, str):
            self.w(ind, f"{n} = {ctx_names[sub.count]}")
        else:
            self.read_fixed_group(ind, [sub.count], [n], [pe])
        el = dsl.resolve(sub.element)
        ms = max(min_size(el, self.m), 1)
        bulk = self.fixed(el) or (isinstance(el, dsl.Row) and all(self.fixed(f.sub) for f in fields_of(el)))
        if bulk or not isinstance(el, dsl.Row):
            # Refuse impossible counts before slicing or allocating.  Rows of variable size are
            # appended one by one, each bounds-checked, so their errors can name the row instead.
            self.w(ind, f"if {n} * {ms} > end - p:")
            self.w(ind + 1, f'invalid(p, {pe}, "count %d needs at least %d bytes, %d left" % ({n}, {n} * {ms}, end - p))')
        idx = self.var("i", target)
        epe = f'{pe} + "[%d]" % {idx}'
        if isinstance(el, dsl.Row):
            cols = fields_of(el)
            if self.lazy_row(el):
                # Check the bounds of every row now; decode the rows the first time they are used
                # (tables of one u16-length string: the fast check decodes them, the Table keeps them).
                start = self.var("start", target)
                self.w(ind, f"{start} = p")
                dec = self.row_decoder(el)
                if dec in self.stepcols:
                    ind = self.fast_path(ind, f"_stepcols{dec}(b, p, end, {n})", lambda got: [
                        f"p += {got}[1]",
                        f"{target} = Table.lazy(b[{start}:p], {n}, _decode_rows{dec}, _columns{dec}, "
                        f"{len(cols)}, None, {got}[0], packed={got}[2])"])
                lens = self.walk_rows(ind, cols, n, idx, epe)
                # fixed-size rows describe themselves (Table.fixed_rows): a consumer may read the
                # encoding as is, e.g. the compiled BPE core the merges
                fixed = ("<" + "".join(self.fixed(f.sub)[0] for f in cols)) if all(self.fixed(f.sub) for f in cols) else None
                self.w(ind, f"{target} = Table.lazy(b[{start}:p], {n}, _decode_rows{dec}, _columns{dec}, {len(cols)}"
                            + (f", {lens}" if lens else "") + (f", row_format={fixed!r})" if fixed else ")"))
                return
            cv = [self.var("c") for _ in cols]
            self.w(ind, f"{target} = []")
            ap = self.var("ap", target)
            self.w(ind, f"{ap} = {target}.append")
            self.w(ind, f"for {idx} in range({n}):")
            self.read_fields(ind + 1, [(f.sub, v, f'{epe} + ".{f.name}"') for f, v in zip(cols, cv)],
                             ctx_names, depth_expr, union_name)
            self.w(ind + 1, f"{ap}(({', '.join(cv)},))")
            return
        if self.fixed(el):
            fmt = "<" + self.fixed(el)[0]
            size = struct.calcsize(fmt)
            self.w(ind, f"{target} = [x for (x,) in {self.st(fmt)}.iter_unpack(b[p:p + {n} * {size}])]")
            self.w(ind, f"p += {n} * {size}")
            return
        bulk_fn = self.bulk_records(el) if isinstance(el, dsl.Record) else None
        if bulk_fn:
            # All rows at once; when any row is wrong the row-by-row parse below says where.
            ind = self.fast_path(ind, f"{bulk_fn}(b, p, end, {n})", lambda got: [f"{target}, p = {got}"])
        self.w(ind, f"{target} = [None] * {n}")
        self.w(ind, f"for {idx} in range({n}):")
        self.read_one(ind + 1, el, f"{target}[{idx}]", epe, ctx_names, depth_expr, union_name)

    def parse_record(self, info: RecordInfo):
        name = info.name
        if info.custom is not None:
            return
        self.w(0, f"def _parse_{name}(b, p, end, path, depth):")
        ctx = {}
        items = []
        for f in info.fields:
            v = f"v_{f.name}" if f.name else self.var("x")
            if f.name:
                ctx[f.name] = v
            if isinstance(f.sub, dsl.CountLine):
                ctx.update({name: f"v_{name}" for name, _ in f.sub.pairs})
            items.append((f.sub, v, f'path + ".{f.name}"' if f.name else "path"))
        self.read_fields(1, items, ctx, "depth", info.union)
        args = ", ".join(f"{f.name}=v_{f.name}" for f in tree_fields(info))
        self.w(1, f"return {name}({args}), p")
        self.w(0, "")
        self.w(0, "")

    def parse_union(self, u: UnionInfo):
        if u.custom is not None:
            self.parse_postprocessor(u)
            return
        self.w(0, f"def _parse_{u.name}(b, p, end, path, depth):")
        self.w(1, f"if depth > {u.max_depth}:")
        self.w(2, f'invalid(p, path, "{u.name} nested deeper than {u.max_depth}")')
        size = struct.calcsize("<" + u.tag_fmt)
        self.w(1, f"if p + {size} > end:")
        self.w(2, f"truncated(p, {size}, end, path)")
        if u.tag_fmt == "B":
            self.w(1, "tag = b[p]")
        else:
            self.w(1, f"tag, = {self.st('<' + u.tag_fmt)}.unpack_from(b, p)")
        self.w(1, f"fn = _{u.name.upper()}_PARSERS.get(tag)")
        self.w(1, "if fn is None:")
        self.w(2, f'invalid(p, path, "unknown {u.name} tag %d" % tag)')
        self.w(1, f"return fn(b, p + {size}, end, path, depth)")
        self.w(0, "")
        self.w(0, "")

    def parse_postprocessor(self, u: UnionInfo):
        pp = u.custom
        cur, leg, op = pp.current.record_name, pp.legacy.record_name, pp.op_union.union_name
        self.w(0, "def ops_fit(b: bytes, p: int, end: int, n: int) -> bool:")
        self.w(1, '"""Do the bytes from p to end hold exactly n well-formed ops?"""')
        self.w(1, "try:")
        self.w(2, "for _ in range(n):")
        self.w(3, f'_, p = _parse_{op}(b, p, end, "", 1)')
        self.w(1, "except MtokFormatError:")
        self.w(2, "return False")
        self.w(1, "return p == end")
        self.w(0, "")
        self.w(0, "")
        self.w(0, "def _parse_PostProcessor(b, p, end, path, depth):")
        self.read_fixed_group(1, [pp.count], ["n"], ["path"])
        self.w(1, "if n > 0 and end - p == 4 * n and not ops_fit(b, p, end, n):")
        self.w(2, f"ids = [x for (x,) in {self.st('<I')}.iter_unpack(b[p:end])]")
        self.w(2, f"return {leg}(ids=ids), end")
        self.w(1, "if n > end - p:")
        self.w(2, 'invalid(p, path, "count %d needs at least %d bytes, %d left" % (n, n, end - p))')
        self.w(1, "ops = [None] * n")
        self.w(1, "for i in range(n):")
        self.w(2, f'ops[i], p = _parse_{op}(b, p, end, path + ".ops[%d]" % i, 1)')
        self.w(1, f"return {cur}(ops=ops), p")
        self.w(0, "")
        self.w(0, "")


# block kind -> the Parser method that writes its reader (fixed-size scalars and flags
# are read and written in groups by read_fields before these are consulted)
READERS = {
    "lenprefixed": lambda e, ind, sub, target, pe, *ctx: e.read_lenprefixed(ind, sub, target, pe),
    "record": Parser.read_record,
    "header": Parser.read_header,
    "union": Parser.read_union,
    "postprocessor": Parser.read_post_processor,
    "tail": Parser.read_tail,
    "when": Parser.read_when,
    "list": Parser.read_list,
    "countline": Parser.read_count_line,
    "linetable": lambda e, ind, sub, target, pe, ctx_names, *rest: e.read_line_table(ind, sub, target, pe, ctx_names),
    "finalnewline": Parser.read_final_newline,
    "end": Parser.read_end,
}

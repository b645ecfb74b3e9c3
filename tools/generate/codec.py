"""``generated/codec.py``: plain ``struct``/slice parse and build code, bounds-checked."""

from __future__ import annotations

import re
import struct

from spec import _dsl as dsl

from .spec_walk import (
    BANNER,
    FieldInfo,
    Model,
    RecordInfo,
    UnionInfo,
    fields_of,
    kind_of,
    min_size,
    scalar,
    tree_fields,
)


class Emitter:
    def __init__(self, m: Model):
        self.m = m
        self.lines: list[str] = []
        self.structs: dict[str, str] = {}  # format -> variable name
        self.tmp = 0
        self.used: set[str] = set()  # the field-named locals of the function being written
        self.decoders: dict[tuple, str] = {}  # row layout -> decoder function name
        self.decoder_lines: list[str] = []
        self.bulk_done: set[str] = set()  # bulk record readers already emitted
        self.spells: dict[tuple[str, str], str] = {}  # row layout -> its module-level format list
        self.step_sizes: set[int] = set()  # row sizes whose walk8 translation table is emitted
        self.stepcols: set[str] = set()  # row decoders with a _stepcols function (walk and decode at once)

    def st(self, fmt: str) -> str:
        """The module-level struct of a format, named by the format (``"<IBB"`` -> ``_S_IBB``)."""
        if fmt not in self.structs:
            self.structs[fmt] = self.unique("_S_" + re.sub(r"[^0-9A-Za-z]", "", fmt), self.structs.values())
        return self.structs[fmt]

    @staticmethod
    def unique(name: str, taken) -> str:
        """``name``, or with a number when another thing has it: names stay put when the spec grows."""
        taken = set(taken)
        k = 2
        found = name
        while found in taken:
            found, k = f"{name}_{k}", k + 1
        return found

    def var(self, base="t", of: str | None = None) -> str:
        """A local of the function being written: named after the field it serves (``n_vocab``,
        ``of`` a target like ``v_vocab`` or ``obj.vocab``) when that name is free in the function,
        else numbered within the function, so that a new variant leaves other functions as they were."""
        field = of[2:] if of and of.startswith("v_") else of[4:] if of and of.startswith("obj.") else None
        if field and field.isidentifier() and f"{base}_{field}" not in self.used:
            self.used.add(f"{base}_{field}")
            return f"{base}_{field}"
        self.tmp += 1
        return f"{base}{self.tmp}"  # no underscore: never one of the names above

    def w(self, indent: int, line: str):
        if indent == 0 and line.startswith("def "):
            self.tmp, self.used = 0, set()
        self.lines.append("    " * indent + line)

    # ---- parse ----------------------------------------------------------------------------
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

    def fast_path(self, ind, call, on_hit) -> int:
        """``got = call``; when it is not None the lines ``on_hit(got)`` run, else what the caller
        writes next at the returned indent (the checked path)."""
        got = self.var("got")
        self.w(ind, f"{got} = {call}")
        self.w(ind, f"if {got} is not None:")
        for line in on_hit(got):
            self.w(ind + 1, line)
        self.w(ind, "else:")
        return ind + 1

    def bulk_records(self, rec) -> str | None:
        """For records of fixed scalars and one u16-length string: a module-level function that
        reads n of them in one walk and one unpack, checks flags and UTF-8 per column, and returns
        ``(records, p)``, or None when anything is off.  Returns its name (None: not such a record)."""
        info = self.m.records[rec.record_name]
        fields = list(info.fields)
        if not fields or any(not f.name for f in fields):
            return None
        strings = [k for k, f in enumerate(fields) if not self.fixed(f.sub)]
        if len(strings) != 1:
            return None
        sub = dsl.resolve(fields[strings[0]].sub)
        if not isinstance(sub, dsl.LenPrefixed) or scalar(sub.prefix)[0] != "H":
            return None
        if [f.name for f in tree_fields(info)] != [f.name for f in fields]:
            return None
        name = f"_bulk_{info.name}"
        if name in self.bulk_done:
            return name
        self.bulk_done.add(name)
        k = strings[0]
        pre = "".join(self.fixed(f.sub)[0] for f in fields[:k])
        post = "".join(self.fixed(f.sub)[0] for f in fields[k + 1:])
        saved, saved_tmp, saved_used, self.lines = self.lines, self.tmp, self.used, []
        self.w(0, f"def {name}(b, p, end, n):")
        self.w(1, f'"""n {info.name} records at p, read together; None when any check fails."""')
        self.step_unpack(1, pre, post, "n")
        cols = []
        for j, f in enumerate(fields):
            col = f"c{j}"
            self.w(1, f"{col} = vals[{j}]")
            if j == k:
                if sub.text:
                    self.w(1, "try:")
                    self.w(2, f"{col} = list(map(bytes.decode, {col}))")
                    self.w(1, "except UnicodeDecodeError:")
                    self.w(2, "return None")
            elif self.fixed(f.sub)[1]:
                self.w(1, f"if {col} and max({col}) > 1:")
                self.w(2, "return None")
                self.w(1, f"{col} = list(map((1).__eq__, {col}))")
            cols.append(col)
        self.w(1, f"return list(map({info.name}, {', '.join(cols)})), p + r")
        self.w(0, "")
        self.w(0, "")
        self.decoder_lines += self.lines
        self.lines, self.tmp, self.used = saved, saved_tmp, saved_used
        return name

    _LINE_KINDS = {"base64": "b", "int": "i", "word": "w"}  # line_table's kinds; others are raw ("r")

    def read_line_table(self, ind, sub, target, pe, ctx_names):
        n, i, q, line = self.var("n"), self.var("i"), self.var("q"), self.var("line")
        self.w(ind, f"{n} = {ctx_names[sub.count]}")
        # With the compiled module, line_table reads the n lines and their values at once; on any
        # doubt (None) the loop below reads them one by one and says what is wrong.
        kinds = "".join(self._LINE_KINDS.get(col.kind, "r") for col in sub.columns)
        got = self.var("got")
        self.w(ind, "nat = native()")
        self.w(ind, f'{got} = None if nat is None else nat.line_table(b, p, end, {n}, "{kinds}", {bool(sub.final_newline)})')
        self.w(ind, f"if {got} is not None:")
        if len(sub.columns) == 1:
            self.w(ind + 1, f"{target} = {got}[0][0]")
        else:
            self.w(ind + 1, f"{target} = nat.rows({got}[0])")
        self.w(ind + 1, f"p = {got}[1]")
        if sub.final_newline:
            self.w(ind + 1, f"final_newline = {got}[2] == 1")
        self.w(ind, "else:")
        ind += 1
        self.w(ind, f"{target} = []")
        ap = self.var("ap")
        self.w(ind, f"{ap} = {target}.append")
        if sub.final_newline:
            self.w(ind, "final_newline = True")
        epe = f'{pe} + "[%d]" % {i}'
        self.w(ind, f"for {i} in range({n}):")
        self.w(ind + 1, f'{q} = b.find(b"\\n", p, end)')
        self.w(ind + 1, f"if {q} < 0:")
        if sub.final_newline:
            self.w(ind + 2, f"if {i} == {n} - 1 and p < end:")
            self.w(ind + 3, f"{q} = end")
            self.w(ind + 3, "final_newline = False")
            self.w(ind + 2, "else:")
            self.w(ind + 3, f"truncated(p, 1, end, {epe})")
        else:
            self.w(ind + 2, f"truncated(p, 1, end, {epe})")
        self.w(ind + 1, f"{line} = b[p:{q}]")
        cols = sub.columns
        if len(cols) == 1:
            self.w(ind + 1, f"{ap}({self.line_value(cols[0], line, 'p', epe)})")
        else:
            parts = self.var("parts")
            self.w(ind + 1, f'{parts} = {line}.split(b" ")')
            self.w(ind + 1, f"if len({parts}) != {len(cols)}:")
            self.w(ind + 2, f'invalid(p, {epe}, "expected {len(cols)} space-separated values")')
            vals = [self.line_value(col, f"{parts}[{k}]", "p", f'{epe} + ".{col.name}"') for k, col in enumerate(cols)]
            self.w(ind + 1, f"{ap}(({', '.join(vals)},))")
        self.w(ind + 1, f"p = {q} + 1")
        if sub.final_newline:
            self.w(ind, "p = min(p, end)")

    @staticmethod
    def line_value(col, expr, offset, pe) -> str:
        if col.kind == "base64":
            return f"decode_base64({expr}, {offset}, {pe})"
        if col.kind == "int":
            return f"decode_decimal({expr}, {offset}, {pe}, _DECIMAL)"
        if col.kind == "word":
            return f"decode_word({expr}, {offset}, {pe})"
        return expr

    def lazy_row(self, row) -> bool:
        """Rows that need no check beyond their bounds (no flags, no text) are decoded lazily."""
        for f in fields_of(row):
            fx = self.fixed(f.sub)
            if fx and fx[1]:
                return False
            sub = dsl.resolve(f.sub)
            if not fx and not (isinstance(sub, dsl.LenPrefixed) and not sub.text):
                return False
        return True

    def length_walk(self, ind, n, before, after, lens, on_fail):
        """Walk n rows of [before bytes][u16 length][string][after bytes] from p (``walk16``),
        recording each string's length in ``lens``; ``r`` ends as the rows' total size.  When a row
        runs off the data the ``on_fail`` lines run: they leave a ``(lens, r)`` pair in ``w`` or
        leave the function (the caller checks that p + r is within end)."""
        self.w(ind, f"w = walk16(b, p, end, {n}, {before}, {before + 2 + after})")
        self.w(ind, "if w is None:")
        for line in on_fail:
            self.w(ind + 1, line)
        self.w(ind, f"{lens}, r = w")

    def row_format(self, pre, post, sizes) -> str:
        """The expression of the struct format (``row_format``) of rows [pre][u16 length][string]
        [post] whose sizes are in ``sizes``: a row's values are ``pre``'s, the length, the string,
        ``post``'s.  Declares the module-level tables it uses (once per row layout)."""
        before, after = struct.calcsize("<" + pre), struct.calcsize("<" + post)
        size = before + 2 + after
        if size > 64:
            raise ValueError(f"rows with {size} fixed bytes are too wide for walk8")
        key = (pre, post)
        table = self.spells.get(key)
        if table is None:
            table = self.spells[key] = self.unique(f"_SPELL_{pre}H{post}", self.spells.values())
            if size not in self.step_sizes:
                self.step_sizes.add(size)
                self.decoder_lines += [f"# length byte -> size of a row whose fixed part is {size} bytes (0: walk8 reads the row exactly)",
                                       f"_STEP{size} = bytes(m + {size} if 0 < m < {256 - size} else 0 for m in range(256))",
                                       "# row size -> the tens and the units digit of its string length (\"!\" when not below 100)",
                                       f'_TENS{size} = bytes(48 + (s - {size}) // 10 if {size} <= s < {size + 100} else 33 for s in range(256))',
                                       f'_UNITS{size} = bytes(48 + (s - {size}) % 10 if {size} <= s < {size + 100} else 33 for s in range(256))', "", ""]
            # "!" is no format code: a size below the fixed part (never made by the walks) fails the unpack
            self.decoder_lines += [f"# struct formats of [{pre}][u16 length][string][{post}] rows by row size (never changed: thread-safe)",
                                   f'{table} = ["!"] * {size} + ["{pre}H%ds{post}" % m for m in range({256 - size})]', "", ""]
        return (f'row_format({sizes}, b"{pre}H00s{post}", {len(pre) + 1}, {size}, _TENS{size}, _UNITS{size}, {table})')

    @staticmethod
    def row_values(pre, post) -> tuple[int, int]:
        """(the length's index among a row's values, the number of values of a row)."""
        hcol = len(struct.unpack("<" + pre, bytes(struct.calcsize("<" + pre))))
        return hcol, hcol + 2 + len(struct.unpack("<" + post, bytes(struct.calcsize("<" + post))))

    def step_unpack(self, ind, pre, post, n, packed=None):
        """In a function: ``vals`` = the columns of a table [pre][u16 length][string][post] of n
        rows at p (``pre`` values, the strings, ``post`` values; not the lengths), and ``r`` = the
        rows' size; ``return None`` when the fast walk cannot take the table (a row runs off
        ``b[:end]``, a high length byte it cannot see is set, too many rows it must read exactly):
        the caller then takes the exact walk, which says what is wrong.  With the compiled module
        (``mtokspec/speedups.py``) its ``string_table`` walks the rows and cuts the strings out
        instead.  Returns the number of columns.

        ``packed``: the name of the table's ``_packedcols`` function; then the compiled walk is
        ``string_index`` (no object per row) and the function returns ``(None, r, (index, fixed,
        packedcols))`` for the ``Table`` to decode when first asked (``vals, r, None`` otherwise)."""
        before, after = struct.calcsize("<" + pre), struct.calcsize("<" + post)
        size = before + 2 + after
        fmt = self.row_format(pre, post, "sizes")
        hcol, width = self.row_values(pre, post)
        npost = width - hcol - 2
        self.w(ind, "nat = native()")
        self.w(ind, "if nat is not None:")
        codes = pre + post
        assert len(codes) == hcol + npost, "a fixed field of a string table is one struct code"
        widths = tuple(struct.calcsize("<" + c) for c in codes)
        if packed is not None:
            self.w(ind + 1, f"got = nat.string_index(b, p, end, {n}, {before}, {after}, {widths!r})")
            self.w(ind + 1, "if got is None:")
            self.w(ind + 2, "return None")
            self.w(ind + 1, "index, fixed, r = got")
            self.w(ind + 1, f"return None, r, (index, fixed, {packed})")
            self.w(ind, "else:")
            return self.step_pure(ind + 1, pre, post, n, fmt, hcol, width, size, before)
        self.w(ind + 1, f"got = nat.string_table(b, p, end, {n}, {before}, {after}, {widths!r})")
        self.w(ind + 1, "if got is None:")
        self.w(ind + 2, "return None")
        self.w(ind + 1, "strs, fixed, r = got")
        # the fixed fields come column by column: one unpack of n values each
        cols, off = [], 0
        for c, wd in zip(codes, widths):
            cols.append(f'struct.unpack_from("<%d{c}" % {n}, fixed, {off} * {n})' if off else
                        f'struct.unpack_from("<%d{c}" % {n}, fixed)')
            off += wd
        cols.insert(hcol, "strs")
        self.w(ind + 1, "vals = (" + "".join(f"{c}, " for c in cols) + ")")
        self.w(ind, "else:")
        return self.step_pure(ind + 1, pre, post, n, fmt, hcol, width, size, before)

    def packed_columns(self, name, pre, post):
        """``_packedcols{name}(raw, index, fixed, n, typed=False)``: the columns of a table that
        ``string_index`` walked (``index``: each string's offset in raw and length; ``fixed``: the
        fixed fields column by column).  ``typed=True``: the fixed fields as typed sequences
        (``typed_column``) and None for the strings: for a compiled consumer, no object per row."""
        codes = pre + post
        hcol, _ = self.row_values(pre, post)
        self.w(0, f"def _packedcols{name}(raw, index, fixed, n, typed=False):")
        typed, cols, off = [], [], 0
        for c in codes:
            typed.append(f'typed_column(fixed, n, {off}, "{c}")')
            cols.append(f'struct.unpack_from("<%d{c}" % n, fixed, {off} * n)' if off else
                        f'struct.unpack_from("<%d{c}" % n, fixed)')
            off += struct.calcsize("<" + c)
        typed.insert(hcol, "None")
        self.w(1, "if typed:")
        self.w(2, "return (" + "".join(f"{c}, " for c in typed) + ")")
        self.w(1, "nat = native()")
        self.w(1, "if nat is None:  # (the compiled module was turned off since the parse)")
        self.w(2, f"return _columns{name}(raw, n)")
        cols.insert(hcol, "nat.strings_at(raw, index)")
        self.w(1, "return (" + "".join(f"{c}, " for c in cols) + ")")
        self.w(0, "")
        self.w(0, "")

    def step_pure(self, ind, pre, post, n, fmt, hcol, width, size, before):
        """step_unpack's walk without the compiled module (``vals`` and ``r``)."""
        self.w(ind, f"w = walk8(b, p, end, {n}, {before}, {size}, _STEP{size})")
        self.w(ind, "if w is None:")
        self.w(ind + 1, "return None")
        self.w(ind, "sizes, r, long = w")
        self.w(ind, "if p + r > end:")
        self.w(ind + 1, "return None")
        self.w(ind, "try:")
        # a Struct of its own: struct.unpack would hash the long format and keep it in its cache
        self.w(ind + 1, f"rows = struct.Struct({fmt})")
        self.w(ind + 1, "if rows.size != r:  # (cannot happen: the format is the walk's rows)")
        self.w(ind + 2, "return None")
        self.w(ind + 1, "flat = rows.unpack_from(b, p)")
        self.w(ind + 1, f"lengths = flat[{hcol}::{width}]")
        self.w(ind + 1, "if long:  # read exactly: their lengths are right whatever they are")
        self.w(ind + 2, "lengths = list(lengths)")
        self.w(ind + 2, "for j in long:")
        self.w(ind + 3, "lengths[j] = 0")
        self.w(ind + 1, "bytes(lengths)  # ValueError when another length is 256 or more: the walk misread it")
        self.w(ind, "except (struct.error, ValueError):")
        self.w(ind + 1, "return None")
        self.w(ind, "vals = (" + "".join(f"flat[{j + (j >= hcol)}::{width}], " for j in range(width - 1)) + ")")
        return width - 1

    def walk_rows(self, ind, cols, n, idx, epe):
        """Bounds-check n rows, advancing p past them, without decoding anything.  Returns the name
        of the variable holding every row's string length when the walk recorded them, else None."""
        if all(self.fixed(f.sub) for f in cols):
            size = struct.calcsize("<" + "".join(self.fixed(f.sub)[0] for f in cols))
            self.w(ind, f"p += {n} * {size}  # the count was checked against the bytes left")
            return None
        strings = [k for k, f in enumerate(cols) if not self.fixed(f.sub)]
        lens = None
        if len(strings) == 1 and scalar(dsl.resolve(cols[strings[0]].sub).prefix)[0] == "H":
            # Fast path: no per-row checks.  A length that runs past the end makes the next index
            # fail or leaves p past the end; then the checked walk below finds the row and says why.
            # The lengths are kept for the decoders (unrolled, the walk costs the same with them).
            k = strings[0]
            before = sum(struct.calcsize("<" + self.fixed(f.sub)[0]) for f in cols[:k])
            after = sum(struct.calcsize("<" + self.fixed(f.sub)[0]) for f in cols[k + 1:])
            start, lens = self.var("p"), self.var("lens")
            self.w(ind, f"{start} = p")
            self.length_walk(ind, n, before, after, lens, ["w = None, end + 1 - p"])
            self.w(ind, "p += r")
            self.w(ind, "if p > end:")
            self.w(ind + 1, f"p = {start}")
            ind += 1
        self.w(ind, f"for {idx} in range({n}):")
        pending = []  # fixed columns not yet checked: checked together before the next string
        for k, f in enumerate(cols):
            fx = self.fixed(f.sub)
            if fx:
                pending.append(f)
            if pending and (not fx or k == len(cols) - 1):
                size = sum(struct.calcsize("<" + self.fixed(g.sub)[0]) for g in pending)
                self.w(ind + 1, f"if p + {size} > end:")
                self.w(ind + 2, f'truncated(p, {size}, end, {epe} + ".{pending[0].name}")')
                self.w(ind + 1, f"p += {size}")
                pending = []
            if fx:
                continue
            pfmt = scalar(dsl.resolve(f.sub).prefix)[0]
            psize = struct.calcsize("<" + pfmt)
            fpe = f'{epe} + ".{f.name}"'
            self.w(ind + 1, f"if p + {psize} > end:")
            self.w(ind + 2, f"truncated(p, {psize}, end, {fpe})")
            ln = "(b[p] | (b[p + 1] << 8))" if pfmt == "H" else f"{self.st('<' + pfmt)}.unpack_from(b, p)[0]"
            self.w(ind + 1, f"q = p + {psize} + {ln}")
            self.w(ind + 1, "if q > end:")
            self.w(ind + 2, f"truncated(p + {psize}, q - p - {psize}, end, {fpe})")
            self.w(ind + 1, "p = q")
        if lens:
            # unreachable when the fast walk failed (the checked walk raises), kept for safety
            self.w(ind, f"{lens} = None")
        return lens

    def row_decoder(self, row) -> str:
        """Module-level functions for a lazily kept table: ``_columnsN(raw, n, lens)`` gives one
        sequence per column, ``_decode_rowsN(raw, n, lens)`` the list of row tuples (``lens``: the
        rows' string lengths if the parse recorded them, else None).  Returns the pair's suffix."""
        cols = fields_of(row)
        key = tuple((f.name, self.fixed(f.sub) or ("str", scalar(dsl.resolve(f.sub).prefix)[0])) for f in cols)
        if key in self.decoders:
            return self.decoders[key]
        k = len(cols)
        name = self.unique("_" + "_".join(f.name for f in cols), self.decoders.values())
        self.decoders[key] = name
        saved, saved_tmp, saved_used, self.lines = self.lines, self.tmp, self.used, []
        strings = [i for i, f in enumerate(cols) if not self.fixed(f.sub)]
        fast = all(self.fixed(f.sub) for f in cols) or (
            len(strings) == 1 and scalar(dsl.resolve(cols[strings[0]].sub).prefix)[0] == "H")
        if fast:
            # The bytes were bounds-checked when the file was parsed.  One struct format for the whole
            # table ("2x5sI2x3sI..."), one unpack, columns sliced out at C speed: no per-row objects.
            packable = not strings and k >= 2 and all(self.fixed(f.sub)[0] == "I" for f in cols[:2])
            self.w(0, f"def _columns{name}(b, n, lens=None, pack=False):")
            if packable:
                # the first two u32 columns read as one u64: first | second << 32 (little-endian)
                rest = "".join(self.fixed(f.sub)[0] for f in cols[2:])
                self.w(1, "if pack:")
                if set(rest) <= {"I"}:
                    # On a little-endian machine, memoryview casts read the u64 and u32 columns
                    # at C speed without compiling a format of n codes.  A row is 4*k bytes; the
                    # u64 of a row on an 8-byte boundary comes from the view at offset 0, else
                    # from the view at offset 4.
                    self.w(2, 'if LITTLE and n:')
                    self.w(3, "mv = memoryview(b)")
                    if k % 2 == 0:
                        self.w(3, f"keys = mv.cast('Q')[0::{k // 2}].tolist()")
                    else:
                        self.w(3, "keys = [0] * n")
                        self.w(3, f"keys[0::2] = mv[:len(b) // 8 * 8].cast('Q')[0::{k}].tolist()")
                        self.w(3, f"keys[1::2] = mv[4:4 + (len(b) - 4) // 8 * 8].cast('Q')[{(k - 1) // 2}::{k}].tolist()")
                    if k > 2:
                        self.w(3, "words = mv.cast('I')")
                    self.w(3, "return (keys, " + "".join(f"words[{j}::{k}].tolist(), " for j in range(2, k)) + ")")
                self.w(2, f'flat = struct.unpack("<" + "Q{rest}" * n, b)')
                self.w(2, "return " + ("(flat,)" if k == 2 else "(" + ", ".join(f"flat[{j}::{k - 1}]" for j in range(k - 1)) + ",)"))
            else:
                self.w(1, "if pack:")
                self.w(2, 'raise ValueError("pack=True needs two leading u32 columns")')
            if not strings:
                fmt = "".join(self.fixed(f.sub)[0] for f in cols)
                if len(set(fmt)) == 1:
                    self.w(1, f'flat = struct.unpack("<%d{fmt[0]}" % (n * {k}), b)')
                else:
                    self.w(1, f'flat = struct.unpack("<" + "{fmt}" * n, b)')
                self.w(1, "return " + ("(flat,)" if k == 1 else "(" + ", ".join(f"flat[{j}::{k}]" for j in range(k)) + ",)"))
            else:
                i = strings[0]
                pre = "".join(self.fixed(f.sub)[0] for f in cols[:i])
                post = "".join(self.fixed(f.sub)[0] for f in cols[i + 1:])
                a, z = struct.calcsize("<" + pre), struct.calcsize("<" + post)
                self.w(1, "if lens is None:  # the parse did not record them: the same walk again")
                self.w(2, "p, end = 0, len(b)")
                self.length_walk(2, "n", a, z, "lens", ['raise ValueError("a table row runs past the table\'s bytes")'])
                fmt = self.row_format(pre, post, f"list(map(({a + 2 + z}).__add__, lens))")
                self.w(1, f"flat = struct.Struct({fmt}).unpack(b)")
                _, width = self.row_values(pre, post)
                self.w(1, "return (" + "".join(f"flat[{j + (j >= i)}::{width}], " for j in range(k)) + ")")
            self.w(0, "")
            self.w(0, "")
            if strings:
                # The parse's fast path: walk and decode at once (the unpack checks the lengths).
                self.packed_columns(name, pre, post)
                self.w(0, f"def _stepcols{name}(b, p, end, n):")
                self.w(1, '"""``(columns, size, packed)`` of the n rows at p, or None: the exact walk must take them.')
                self.w(0, "")
                self.w(1, "With the compiled module the columns are None and ``packed`` is ``(index, fixed,")
                self.w(1, '_packedcols)`` (Table.lazy decodes them when first asked); else ``packed`` is None."""')
                self.step_unpack(1, pre, post, "n", f"_packedcols{name}")
                self.w(1, "return vals, r, None")
                self.w(0, "")
                self.w(0, "")
                self.stepcols.add(name)
            self.w(0, f"def _decode_rows{name}(b, n, lens=None):")
            self.w(1, f"return list(zip(*_columns{name}(b, n, lens)))")
        else:
            self.w(0, f"def _decode_rows{name}(b, n, lens=None):")
            self.w(1, 'p, end, path = 0, len(b), "<table>"')
            cv = [self.var("c") for _ in cols]
            self.w(1, "rows = []")
            self.w(1, "ap = rows.append")
            self.w(1, "for i in range(n):")
            self.read_fields(2, [(f.sub, v, "path") for f, v in zip(cols, cv)], {}, "1", None)
            self.w(2, f"ap(({', '.join(cv)},))")
            self.w(1, "return rows")
            self.w(0, "")
            self.w(0, "")
            self.w(0, f"def _columns{name}(b, n, lens=None, pack=False):")
            self.w(1, "if pack:")
            self.w(2, 'raise ValueError("pack=True needs two leading u32 columns")')
            self.w(1, f"rows = _decode_rows{name}(b, n)")
            self.w(1, f"return tuple(zip(*rows)) if rows else {tuple([()] * k)!r}")
        self.w(0, "")
        self.w(0, "")
        self.decoder_lines += self.lines
        self.lines, self.tmp, self.used = saved, saved_tmp, saved_used
        return name

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

    # ---- build ----------------------------------------------------------------------------
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


# block kind -> the Emitter method that writes its reader / writer (fixed-size scalars and flags
# are read and written in groups by read_fields / write_fields before these are consulted)
READERS = {
    "lenprefixed": lambda e, ind, sub, target, pe, *ctx: e.read_lenprefixed(ind, sub, target, pe),
    "record": Emitter.read_record,
    "header": Emitter.read_header,
    "union": Emitter.read_union,
    "postprocessor": Emitter.read_post_processor,
    "tail": Emitter.read_tail,
    "when": Emitter.read_when,
    "list": Emitter.read_list,
    "countline": Emitter.read_count_line,
    "linetable": lambda e, ind, sub, target, pe, ctx_names, *rest: e.read_line_table(ind, sub, target, pe, ctx_names),
    "finalnewline": Emitter.read_final_newline,
    "end": Emitter.read_end,
}
WRITERS = {
    "lenprefixed": lambda e, ind, sub, v, pe, *ctx: e.write_lenprefixed(ind, sub, v, pe),
    "record": Emitter.write_record,
    "header": Emitter.write_header,
    "union": Emitter.write_union,
    "postprocessor": Emitter.write_post_processor,
    "tail": Emitter.write_tail,
    "when": Emitter.write_when,
    "list": Emitter.write_list,
    "countline": Emitter.write_count_line,
    "linetable": Emitter.write_line_table_field,
    "finalnewline": Emitter.write_final_newline,
    "end": Emitter.write_end,
}


CODEC_PRELUDE = '''\
"""Fast parse and build of the MNN tokenizer formats, emitted from the declarations in spec/.

Every read is bounds-checked before it happens; counts are checked against the bytes left before
any list is allocated; tables of fixed-size rows are decoded in one call.  The helpers are in
mtokspec/format/codec_support.py.
"""

from __future__ import annotations

import re
import struct
from itertools import chain as _chain

from mtokspec.format.codec_support import (
    bad_rows,
    bad_value,
    build_header_lines,
    decode_base64,
    decode_decimal,
    decode_word,
    invalid,
    line_column,
    line_end,
    LITTLE,
    native,
    parse_count_line,
    parse_header_lines,
    row_format,
    truncated,
    typed_column,
    walk16,
    walk8,
)
from mtokspec.errors import MtokFormatError
from mtokspec.format.table import Table

from .tree import *  # noqa: F403
'''


ROOT_API = '''

def parse_{root}(data) -> {root}:
    """Parse a whole file; raises MtokFormatError (with byte offset and field path) on any defect."""
    b = bytes(data)
    obj, _ = _parse_{root}(b, 0, len(b), "", 1)
    return obj


def build_{root}(tree: {root}) -> bytes:
    """Build a whole file; raises MtokFormatError naming the field that cannot be written."""
    out: list[bytes] = []
    _build_{root}(tree, out, "")
    return b"".join(out)
'''


NODE_API = '''

def build_node(obj) -> bytes:
    """The bytes one record of the tree (a stage, an op, a whole file) takes inside a file, as
    ``build`` writes them; raises MtokFormatError naming the field that cannot be written."""
    fn = _NODE_BUILDERS.get(obj.__class__)
    if fn is None:
        bad_value("", "expected a record of the tree", obj)
    out: list[bytes] = []
    fn(obj, out, "")
    return b"".join(out)
'''


def emit_section_sizes(e: Emitter, root: RecordInfo) -> None:
    e.w(0, f"def section_sizes_{root.name}(obj):")
    e.w(1, '"""(section name, bytes it takes or None when absent) for each top-level section."""')
    e.w(1, "sizes = []")
    e.w(1, "absent = False")
    e.w(1, 'path = ""')
    for f in root.fields:
        if not f.name:
            continue
        e.w(1, "out: list[bytes] = []")
        e.write_fields(1, [(f, f"obj.{f.name}", f'"{f.name}"')], "obj", None)
        if isinstance(f.sub, (dsl.CountLine, dsl.FinalNewline)):
            e.w(1, f"sizes.append(({f.name!r}, sum(map(len, out))))")
        else:
            e.w(1, f"sizes.append(({f.name!r}, None if obj.{f.name} is None else sum(map(len, out))))")
    e.w(1, "return sizes")
    e.w(0, "")
    e.w(0, "")


def emit_codec(m: Model, roots: list[str]) -> str:
    e = Emitter(m)
    for name in m.order:
        if name in m.records:
            e.parse_record(m.records[name])
            e.build_record(m.records[name])
        else:
            e.parse_union(m.unions[name])
            e.build_union(m.unions[name])
    for root_name in roots:
        emit_section_sizes(e, m.records[root_name])
    tables = []
    for name in m.order:
        u = m.unions.get(name)
        if u is None or u.custom is not None:
            continue
        tables.append(f"_{name.upper()}_PARSERS = {{")
        tables += [f"    {t}: _parse_{r}," for t, r in u.cases]
        tables.append("}")
        tables.append(f"_{name.upper()}_BUILDERS = {{")
        tables += [f"    {r}: ({t}, _build_{r})," for t, r in u.cases]
        tables.append("}")
    structs = [f"{v} = struct.Struct({fmt!r})" for fmt, v in e.structs.items()]
    structs += ["", "# the text grammar, from spec/_dsl.py",
                f"_COUNTS = re.compile({dsl.COUNTS_LINE!r})", f"_IDS = re.compile({dsl.IDS_LINE!r})",
                f"_DECIMAL = re.compile({dsl.INT!r})", f"_COUNT = re.compile({dsl.COUNT!r})",
                f"_DECIMAL_BOUND = {10 ** dsl.DIGITS}  # {dsl.DIGITS} digits: what a decimal can write"]
    api = "".join(ROOT_API.format(root=r) for r in roots)
    tables.append("_NODE_BUILDERS = {")
    emitted = "\n".join(e.lines)
    tables += [f"    {name}: _build_{name}," for name in m.order
               if name in m.records and f"def _build_{name}(" in emitted]
    tables.append("}")
    api += NODE_API
    return BANNER + CODEC_PRELUDE + "\n".join(structs) + "\n\n\n" + "\n".join(e.decoder_lines + e.lines) + "\n" + "\n".join(tables) + "\n" + api


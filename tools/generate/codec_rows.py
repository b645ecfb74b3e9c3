"""The codec emitter's readers of tables of rows: the bulk and fast paths, line tables, row
layouts (formats, packed columns, steps) and the row decoders."""

from __future__ import annotations

import struct

from spec import _dsl as dsl

from .spec_walk import fields_of, scalar, tree_fields
from .codec_emitter import EmitterBase


class RowReader(EmitterBase):
    """Reads tables of rows (see the module doc)."""

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

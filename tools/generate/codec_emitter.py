"""The codec emitter's state and the helpers its readers and writers share: module-level structs,
locals named after their fields, and the lines written so far."""

from __future__ import annotations

import re

from .spec_walk import Model


class EmitterBase:
    """The state one emitted codec is written with."""

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

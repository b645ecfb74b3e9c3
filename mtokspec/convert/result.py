"""What a conversion gives: the tree and what it could not keep."""

from __future__ import annotations

from dataclasses import dataclass, field

from mtokspec.convert.loss import Loss
from mtokspec.format import tree as t


@dataclass
class ConversionResult:
    """``tree``: the ``.mtok`` tree; ``losses``: what it could not keep; ``unicode_version``: the
    Unicode version of the embedded tables.  A ``--target mnn`` conversion (and ``fix``) also has
    ``agreement`` (per output of MNN's runtime: ``(probes where MNN differs from the reference,
    probes)``) and ``reference`` (what gave the reference answers, with its version)."""

    tree: t.MtokFile
    losses: list[Loss]
    unicode_version: str
    agreement: dict[str, tuple[int, int]] = field(default_factory=dict)
    reference: str | None = None
    differing_probes: int = 0
    """Probe texts on which at least one output differs."""

    @property
    def differs(self) -> bool:
        """Whether MNN differs from the reference on any probe (``--target mnn`` and ``fix``)."""
        return any(bad for bad, _ in self.agreement.values())

    def verdict(self) -> str:
        """The report's first line: MNN's difference from the reference, per output (``""``
        without ``agreement``)."""
        if not self.agreement:
            return ""
        probes = max(n for _, n in self.agreement.values())
        parts = ", ".join(f"{o} {_pct(bad, n)}" for o, (bad, n) in self.agreement.items())
        ref = self.reference or "the reference"
        if not self.differs:
            return f"MNN gives {ref}'s answer on all {probes:,} probes (every output)"
        return (f"MNN differs from {ref} on {_pct(self.differing_probes, probes)} of probes "
                f"({self.differing_probes:,} of {probes:,}): {parts}")


def _pct(bad: float, n: float) -> str:
    if not n or not bad:
        return "0%"
    p = 100 * bad / n
    return f"{p:.0f}%" if p >= 1 else f"{p:.1f}%" if p >= 0.1 else "<0.1%"

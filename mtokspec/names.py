"""The names a caller chooses among, declared once for the library and the command line (this
module imports nothing of the package, so the CLI's start-up reads them cheaply):

- :data:`SEMANTICS`: how a tokenizer runs (``Tokenizer.from_file(..., semantics=)``, ``--runtime``);
- :data:`TARGETS`: what ``convert.from_hf`` writes (``target=``, ``convert --target``);
- :data:`REFERENCES`: what answers for HF when ``--target mnn`` checks its bytes (``reference=``).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["Semantics", "Current", "MnnRelease", "SEMANTICS", "CURRENT", "DEVICES", "EXTENDED", "MNN_VERSIONS",
           "TARGETS", "REFERENCES"]

Current = Literal["hf", "mnn", "mnn-next"]
"""``hf``: Hugging Face ``tokenizers``' answers; ``mnn``: MNN's C++ runtime's, exactly (at
``format.tree.MNN_COMMIT``); ``mnn-next``: MNN with the format-next patch (``patches/mnn/``), which
reads the ``extension`` section."""

MnnRelease = Literal["mnn@3.5.0", "mnn@3.6.0", "mnn@3.6.1"]
"""``mnn@VERSION``: as that released MNN version runs a file, for each release that reads ``.mtok``
and differs from ``mnn`` (its switches: ``runtime.mnn.versions``; ``docs/design/mnn-versions.md``)."""

Semantics = Literal[Current, MnnRelease]
"""Every semantics: the current ones, then the released MNN versions."""

SEMANTICS: tuple[Semantics, ...] = get_args(Semantics)

CURRENT: tuple[Current, ...] = get_args(Current)
"""The semantics of today's runtimes (what ``fingerprint`` hashes; no release)."""

MNN_VERSIONS: tuple[str, ...] = tuple(name.removeprefix("mnn@") for name in get_args(MnnRelease))
"""The released MNN versions named by :data:`MnnRelease` (``"3.6.1"``)."""

DEVICES: tuple[Semantics, ...] = SEMANTICS[1:]
"""The devices: each is a ``convert --target``, a ``lint --target`` and a ``--runtime``."""

EXTENDED: Semantics = "mnn-next"
"""The device that reads format next's ``extension`` section."""

TARGETS = {
    "exporter": "MNN's exporter's bytes, byte for byte",
    "mnn": "the bytes for which MNN's C++ runtime gives Hugging Face's answers wherever the format allows "
           "(program layout, prefix and special ids, exact pre-tokenizers, decoder, clean-up flag); the report "
           "then lists, per divergence rule, what MNN still does differently, with a minimal example, and the "
           "exit status says whether anything does",
    "mnn-next": "the mnn file plus format next's extension, which released MNN ignores and MNN with patches/mnn/ "
                "reads (the report is the patched runtime's)",
    **{f"mnn@{version}": f"the mnn file made for MNN {version}: what that release reads otherwise than mnn "
                         f"is changed, what it cannot run is left out and reported, and the report is that "
                         f"release's" for version in MNN_VERSIONS},
}
"""The targets of ``from_hf``, with what each writes."""

REFERENCES = ("hf", "mtokspec")
"""What answers for HF: ``hf`` (HF ``tokenizers``, the default) or ``mtokspec`` (its own HF
semantics of the written tree: an approximation of HF, named so in every output)."""

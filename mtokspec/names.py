"""The names a caller chooses among, declared once for the library and the command line (this
module imports nothing of the package, so the CLI's start-up reads them cheaply):

- :data:`SEMANTICS`: how a tokenizer runs (``Tokenizer.from_file(..., semantics=)``, ``--runtime``);
- :data:`TARGETS`: what ``convert.from_hf`` writes (``target=``, ``convert --target``);
- :data:`REFERENCES`: what answers for HF when ``--target mnn`` checks its bytes (``reference=``).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["Semantics", "SEMANTICS", "DEVICES", "EXTENDED", "TARGETS", "REFERENCES"]

Semantics = Literal["hf", "mnn", "mnn-next"]
"""``hf``: Hugging Face ``tokenizers``' answers; ``mnn``: MNN's C++ runtime's, exactly; ``mnn-next``:
MNN with the format-next patch (``patches/mnn/``), which reads the ``extension`` section."""

SEMANTICS: tuple[Semantics, ...] = get_args(Semantics)

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
}
"""The targets of ``from_hf``, with what each writes."""

REFERENCES = ("hf", "mtokspec")
"""What answers for HF: ``hf`` (HF ``tokenizers``, the default) or ``mtokspec`` (its own HF
semantics of the written tree: an approximation of HF, named so in every output)."""

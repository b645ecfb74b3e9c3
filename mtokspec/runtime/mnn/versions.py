"""MNN's released versions that read ``.mtok`` (:data:`mtokspec.names.MNN_VERSIONS`), as the few
switches in which they differ from the ``mnn`` semantics (MNN at ``format.tree.MNN_COMMIT``).

``semantics="mnn@3.6.1"`` runs a file as MNN 3.6.1 does: the ``mnn`` semantics with that version's
:class:`MnnVersion`.  A version is named only where it differs from HEAD in what a file does
(the list of differences, and how each version is checked against a binary built from its tag:
``docs/design/mnn-versions.md``).  Releases before 3.5.0 do not read ``.mtok`` at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtokspec.format.tree import MNN_COMMIT
from mtokspec.names import MNN_VERSIONS

__all__ = ["MnnVersion", "HEAD", "VERSIONS", "version_of"]


@dataclass(frozen=True)
class MnnVersion:
    """What one MNN version does differently from HEAD with a tokenizer file."""

    name: str
    commit: str
    #: reads the post-processor program at the end of a ``.mtok`` (75e53afe5); before, the section
    #: is ignored and ``encode(text)`` is the prefix ids and the pieces only
    post_processor: bool = True
    #: knows normalizer type 8, Strip (cdeb5b07f); before, the loader returns a null normalizer
    #: without reading its two bytes and reads the rest of the file out of place
    strip_normalizer: bool = True
    #: skips a null child of a sequence normalizer or pre-tokenizer (cdeb5b07f); before, the
    #: sequence calls it: a null-pointer call at the stage's first use
    skips_null_children: bool = True
    #: chat template filters this version's Jinja engine lacks (an unknown filter passes its input
    #: through); HEAD's ``join`` came with 75e53afe5
    missing_filters: frozenset[str] = frozenset()

    @property
    def semantics(self) -> str:
        return "mnn" if self is HEAD else f"mnn@{self.name}"

    def describe(self) -> str:
        """What this version does otherwise than HEAD, in a few words ('' for HEAD)."""
        return "; ".join(text for differs, text in (
            (not self.post_processor, "no post-processor program"),
            (not self.strip_normalizer, "no Strip normalizer"),
            (not self.skips_null_children, "a null sequence child is called"),
            (bool(self.missing_filters), f"no {', '.join(sorted(self.missing_filters))} filter")) if differs)


HEAD = MnnVersion("HEAD", MNN_COMMIT)

_JOIN = frozenset({"join"})

#: each released version's tag commit and switches (3.6.0 and 3.6.1 have the same tokenizer and
#: Jinja sources; so do 3.5.0 and 3.6.x apart from cdeb5b07f)
_RELEASES: dict[str, MnnVersion] = {version.name: version for version in (
    MnnVersion("3.5.0", "c35f14f3ab5cb65094863b9a0e888370b027a670", post_processor=False,
               strip_normalizer=False, skips_null_children=False, missing_filters=_JOIN),
    MnnVersion("3.6.0", "cc20f672af9e177e2fa338c332dc097de2fc9264", post_processor=False, missing_filters=_JOIN),
    MnnVersion("3.6.1", "d407447ed56c4121a11ccbd266dc184ca1ead0c2", post_processor=False, missing_filters=_JOIN),
)}

#: the released versions of :data:`mtokspec.names.MNN_VERSIONS`, by tag, in its order
VERSIONS: dict[str, MnnVersion] = {name: _RELEASES[name] for name in MNN_VERSIONS}

_BY_SEMANTICS = {v.semantics: v for v in (HEAD, *VERSIONS.values())}


def version_of(semantics: str) -> MnnVersion | None:
    """The version a semantics name runs (``"mnn"``: :data:`HEAD`, ``"mnn@3.6.1"``: that release),
    or None for a name of no MNN version (``hf``, ``mnn-next``)."""
    return _BY_SEMANTICS.get(semantics)

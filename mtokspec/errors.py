"""The exception types of mtokspec: every refusal is an :class:`Error`.

``MtokFormatError`` (parse/build), ``mtokspec.runtime.TokenizerError``,
``mtokspec.convert.ConversionError``, ``mtokspec.chat_template.ChatTemplateError`` and
:class:`PathRefused` derive from :class:`Error`, so one ``except mtokspec.Error`` catches "mtokspec refused this input".
"""

from __future__ import annotations


class Error(Exception):
    """The base of every exception mtokspec raises on purpose: the input was refused."""


class MtokFormatError(Error, ValueError):
    """A file that cannot be read, or a tree that cannot be written.

    ``offset`` is the byte offset where reading failed (``None`` when building); ``path`` names the
    field, e.g. ``model.vocab[1234].token``.
    """

    def __init__(self, message: str, offset: int | None = None, path: str = "<root>"):
        self.message = message
        self.offset = offset
        self.path = path
        where = f"at byte {offset}, " if offset is not None else ""
        super().__init__(f"{where}{path}: {message}")

    def __reduce__(self):
        return (type(self), (self.message, self.offset, self.path))


class PathRefused(Error, OSError):
    """A file mtokspec will not read or write: an input over the size limit
    (``mtokspec._io.max_input``), an output path that is not a regular file, the input given as
    the output without ``--force``, a file whose owner cannot be kept.  Also an ``OSError``, so code
    that handles unreadable files handles these."""

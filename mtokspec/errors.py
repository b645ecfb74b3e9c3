"""The exception types of mtokspec: every refusal is an :class:`Error`.

One ``except mtokspec.Error`` catches "mtokspec refused this input": :class:`MtokFormatError`
(parse/build), :class:`TokenizerError` (a tree the runtime cannot run), :class:`UndefinedInMnn`,
:class:`ChatTemplateError`, :class:`ConversationsError`, :class:`EditError`, :class:`CasesError`,
:class:`ArgumentTypeError` and :class:`ArgumentValueError` (a public function's argument),
``mtokspec.convert.ConversionError`` (which carries its losses) and :class:`PathRefused` (a file the
CLI will not read or write).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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

    def __reduce__(self) -> tuple[type[MtokFormatError], tuple[str, int | None, str]]:
        return (type(self), (self.message, self.offset, self.path))


class TokenizerError(Error, ValueError):
    """A tree the runtime cannot run (bad pattern, pattern timeout, missing unk token, ...)."""


class ArgumentTypeError(Error, TypeError):
    """A public function or method given a value of the wrong Python type: a ``TypeError`` whose
    message names the parameter, and an :class:`Error` like every refusal of mtokspec."""


class ArgumentValueError(Error, ValueError):
    """A public function or method given a value of the right type that it does not take (an
    option out of its range: ``max_expansion=0``, ``ordered_map(jobs=0)``): a ``ValueError`` whose
    message starts with the parameter's name, and an :class:`Error` like every refusal."""


class UndefinedInMnn(TokenizerError):
    """MNN's C++ code would read or write out of bounds, never return, or throw on this file or
    input: there is no result to reproduce.  The message says where."""


class EditError(Error, ValueError):
    """An edit (``mtokspec set``, :mod:`mtokspec.format.edit`) that cannot be applied: an unknown
    token, a section the file's format lacks, a malformed value."""


class CasesError(Error, ValueError):
    """A cases file (``--text``) that is neither a JSON list of strings, JSON Lines of strings nor
    UTF-8 text."""


class ChatTemplateError(Error):
    """A chat template could not be rendered.

    Raised for template syntax errors, ``raise_exception(...)`` calls made by the template (the
    message is kept verbatim), sandbox violations, exceeded limits (output size, value size, time,
    recursion) and any other error raised while rendering (message prefixed with the original
    exception type; the original exception is chained as ``__cause__``).
    """


class ConversationsError(Error, ValueError):
    """A conversations document (``mtokspec.chat.compare.load_conversations``, ``--chat``) that holds
    no conversations: not a list of messages, a list of conversations nor an object of named ones."""


class PathRefused(Error, OSError):
    """A file mtokspec will not read or write: an input over the size limit
    (``mtokspec.reading.max_input``), an output path that is not a regular file, the input given as
    the output without ``--force``, a file whose owner cannot be kept.  Also an ``OSError``, so code
    that handles unreadable files handles these."""


@contextmanager
def hf_failure(what: str, error: type[Error] = TokenizerError) -> Iterator[None]:
    """Run HF ``tokenizers`` code (the reference): its own exceptions and its Rust panics (pyo3's
    ``PanicException`` is a ``BaseException``: Oniguruma's "retry-limit-in-match over" on a
    hostile pattern) become ``error``, naming ``what`` and HF's message."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit, GeneratorExit, Error):
        raise
    except BaseException as e:  # noqa: BLE001 - any failure of HF's code is the reference failing
        first = str(e).splitlines()[0][:200] if str(e) else ""
        raise error(f"{what}: HF tokenizers failed ({type(e).__name__}: {first})") from None

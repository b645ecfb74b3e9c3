"""File helpers shared by the commands: bounded reads (:mod:`mtokspec.reading`), safe atomic writes,
standard streams.

Writing (:func:`atomic_write`) replaces only regular files,
follows a symlink to the file it names, keeps the replaced file's mode and owner, refuses the
command's own input unless forced, and leaves either the old file or the whole new one.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable

from mtokspec.errors import PathRefused
from mtokspec.reading import max_input, read_file, read_input, read_tokenizer_file  # noqa: F401  # the commands' reads

TMP_SUFFIX = ".mtokspec-tmp"
#: the ``--force`` option of every command that writes ``-o``
FORCE_HELP = "replace the output even when it is an input (the same file, by os.path.samefile)"


def _remove_stale_temporaries(folder: str, name: str) -> None:
    """Remove ``.NAME.PID.*`` temporaries of this writer whose process is gone (a crash or a kill
    inside the write window); those of running processes are left alone."""
    prefix = f".{name}."
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(TMP_SUFFIX)):
            continue
        pid_text = entry[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or len(pid_text) > 10:
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            try:
                os.unlink(os.path.join(folder, entry))
            except OSError:
                pass
        except OSError:  # PermissionError: someone else's live process
            pass


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_output(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (), force: bool = False) -> str:
    """The file ``path`` names (a symlink followed to its target), after refusing with
    :class:`PathRefused` an existing path that is not a regular file, or one of ``inputs`` (the same
    file, by ``os.path.samefile``) unless ``force``."""
    try:
        st = os.stat(path)  # what the kernel opens (a /proc/self/fd link included)
    except FileNotFoundError:
        return os.path.realpath(path)
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(f"the output is {_kind(st.st_mode)}; only a regular file is replaced "
                          "('-' writes to standard output)")
    target = os.path.realpath(path)
    try:
        named = os.stat(target)
    except OSError:
        named = None
    if named is None or (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino):
        raise PathRefused("the output is a link this process cannot follow to a file name; not replaced")
    if not force:
        for src in inputs:
            if src == "-":
                continue
            try:
                same = os.path.samefile(src, target)
            except OSError:
                continue
            if same:
                raise PathRefused(f"the output is the input {os.fspath(src)}; --force replaces it")
    return target


def atomic_write(path: str | os.PathLike, data: bytes | str, inputs: Iterable[str | os.PathLike] = (),
                 force: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    The path is checked by :func:`check_output` (a symlink's target is what is replaced; devices,
    FIFOs, sockets, folders and the ``inputs`` are refused).  Readers see the old file or the whole
    new one; the new file has the old one's mode and owner (or the mode ``open()`` would give); the
    folder is synced after the rename.  A failure leaves neither a partial file nor the temporary
    behind, and a temporary that a killed writer left is removed by the next write to the path.
    """
    target = check_output(path, inputs, force)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder, name = os.path.split(target)
    folder = folder or "."
    _remove_stale_temporaries(folder, name)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=TMP_SUFFIX, dir=folder)
    try:
        try:
            old = os.stat(target)
        except FileNotFoundError:
            old = None
        if old is None:
            # mkstemp makes the file private (0600); give it the mode a plain open() would have
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        else:
            if (old.st_uid, old.st_gid) != (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except PermissionError:
                    raise PathRefused(f"the output is owned by {old.st_uid}:{old.st_gid}, which a new file of "
                                      "this user cannot keep; not replaced") from None
            os.fchmod(fd, old.st_mode & 0o7777)  # after fchown, which may clear set-id bits
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:  # some file systems cannot sync a folder; the rename stands
        pass
    finally:
        os.close(dfd)


def write_output(path: str, data: bytes | str, inputs: Iterable[str | os.PathLike] = (), force: bool = False) -> None:
    """``-``: ``data`` to standard output (text as UTF-8 bytes); else :func:`atomic_write`."""
    if path == "-":
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        write_stdout_bytes(data)
    else:
        atomic_write(path, data, inputs, force)


def write_stdout_bytes(data: bytes) -> None:
    """``data`` to standard output as they are (after any text written before)."""
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a text-only stdout (a test's StringIO): the bytes surrogate-escaped
        sys.stdout.write(data.decode("utf-8", "surrogateescape"))
    else:
        binary.write(data)
        binary.flush()


SURROGATES = "mtokspec-surrogates"


def _surrogate_bytes(err: UnicodeError) -> tuple[bytes, int]:
    """The encode error handler of the CLI's streams: a surrogate that stands for a byte (a
    ``surrogateescape`` decode, U+DC80..U+DCFF) becomes that byte, any other surrogate its
    ``surrogatepass`` bytes; another character the stream's encoding lacks stays an error."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = bytearray()
    for ch in err.object[err.start:err.end]:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:
            out.append(cp - 0xDC00)
        elif 0xD800 <= cp <= 0xDFFF:
            out += ch.encode("utf-8", "surrogatepass")
        else:
            raise err
    return bytes(out), err.end


codecs.register_error(SURROGATES, _surrogate_bytes)


class ClosedStream:
    """Stands for a standard stream the process was started without (``>&-``): using it raises
    ``OSError(EBADF)``, which the CLI reports in one line; flushing it does nothing."""

    def __init__(self, name: str):
        self.name = name

    def _closed(self, *args, **kwargs):
        raise OSError(errno.EBADF, f"{self.name} is closed")

    write = read = readline = _closed

    @property
    def buffer(self):
        self._closed()

    def flush(self) -> None:
        pass


class _Discard:
    def write(self, s) -> int:
        return len(s)

    def flush(self) -> None:
        pass


def configure_streams() -> None:
    """The CLI's standard streams: text read from stdin keeps undecodable bytes as surrogates
    (``surrogateescape``); text written to stdout writes them back as those bytes
    (:data:`SURROGATES`); a closed stdout or stdin raises OSError on use, a closed stderr discards."""
    if sys.stdin is None:
        sys.stdin = ClosedStream("standard input")
    elif hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="surrogateescape")
    if sys.stdout is None:
        sys.stdout = ClosedStream("standard output")
    elif hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors=SURROGATES)
    if sys.stderr is None:
        sys.stderr = _Discard()  # stderr keeps its own handler (backslashreplace), which never fails


def silence_stdout() -> None:
    """After writing to stdout failed: what is still buffered for it goes to the null device (it
    would fail again at exit) and later writes raise, like a closed stream's."""
    out = sys.stdout
    if out is not None and out is sys.__stdout__:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, out.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError):
            pass
    sys.stdout = ClosedStream("standard output")


OUT_OF_MEMORY = "out of memory (MTOKSPEC_MAX_INPUT sets a lower input limit)"
"""What the CLI says for a ``MemoryError``, whichever command caught it."""


def one_line(err: object) -> str:
    """An error's message on one line (YAML and template errors span several), for stderr; never
    empty (a ``MemoryError``: :data:`OUT_OF_MEMORY`; another error without a message: its type)."""
    if isinstance(err, MemoryError):
        return OUT_OF_MEMORY
    return " ".join(str(err).split()) or type(err).__name__

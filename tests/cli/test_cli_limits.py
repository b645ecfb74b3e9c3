"""What the commands do at the edges (issue 26): writes that never destroy what is at the output
path, bounded input, and standard streams that fail in one line."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from mtokspec.cli import _io
from mtokspec.cli import main
from mtokspec.errors import PathRefused
from tests._support.bounded_run import run_bounded
from tests._support import ROOT

EXAMPLE = ROOT / "examples" / "tiny.mtok"
PATHS = ["compiled", "pure"]


@pytest.fixture
def folder(tmp_path):
    """A work folder inside tmp_path, and a check that nothing beside it (in tmp_path) changed."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside\n")
    before = sorted(os.listdir(tmp_path))
    yield work
    assert sorted(os.listdir(tmp_path)) == before
    assert outside.read_bytes() == b"outside\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def dump_to(out, *extra) -> int:
    return main(["dump", str(EXAMPLE), "-o", str(out), *extra])


def test_a_symlink_is_followed_and_its_target_replaced(folder):
    target = folder / "target.yaml"
    target.write_text("old\n")
    link = folder / "link.yaml"
    link.symlink_to("target.yaml")
    assert dump_to(link) == 0
    assert link.is_symlink() and os.readlink(link) == "target.yaml"
    assert target.read_text().startswith("format: mtok")
    dangling = folder / "dangling.yaml"
    dangling.symlink_to("made.yaml")
    assert dump_to(dangling) == 0
    assert dangling.is_symlink() and (folder / "made.yaml").read_text().startswith("format: mtok")


def test_a_fifo_a_folder_and_a_device_node_are_refused(folder, capsys):
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    sub = folder / "sub"
    sub.mkdir()
    assert dump_to(fifo) == 2 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert "is a FIFO" in capsys.readouterr().err
    assert dump_to(sub) == 2 and sub.is_dir() and not os.listdir(sub)
    assert "is a directory" in capsys.readouterr().err
    assert sorted(os.listdir(folder)) == ["fifo", "sub"]  # no temporary left


def test_a_device_node_copy_is_refused(folder, capsys):
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    null = folder / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null's node
    assert dump_to(null) == 2
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert "is a character device" in capsys.readouterr().err
    assert os.listdir(folder) == ["null"]


def test_the_input_itself_needs_force(folder, capsys):
    src = folder / "tree.yaml"
    assert dump_to(src) == 0
    data = src.read_bytes()
    hard = folder / "hard.yaml"
    os.link(src, hard)
    link = folder / "link.yaml"
    link.symlink_to("tree.yaml")
    for out in (src, hard, link):
        assert main(["build", str(src), "-o", str(out)]) == 2
        assert "is the input" in capsys.readouterr().err
        assert src.read_bytes() == data
    # --force: the hard link's name gets the new file; the input's name keeps the old one
    assert main(["build", str(src), "-o", str(hard), "--force"]) == 0
    assert hard.read_bytes() == EXAMPLE.read_bytes() and src.read_bytes() == data
    assert main(["build", str(src), "-o", str(src), "--force"]) == 0
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_export_hf_and_upgrade_refuse_their_input(folder, capsys):
    mtok = folder / "t.mtok"
    mtok.write_bytes(EXAMPLE.read_bytes())
    assert main(["export-hf", str(mtok), "-o", str(mtok)]) == 2
    assert main(["upgrade", str(mtok), "-o", str(mtok)]) == 2
    assert mtok.read_bytes() == EXAMPLE.read_bytes()
    assert capsys.readouterr().err.count("is the input") == 1  # upgrade refuses a .mtok first


def test_convert_refuses_a_file_of_its_folder(folder, capsys):
    src = ROOT / "examples" / "tiny-bpe"
    if not (src / "tokenizer.json").is_file():
        pytest.skip("examples/tiny-bpe has no tokenizer.json")
    model = folder / "model"
    model.mkdir()
    (model / "tokenizer.json").write_bytes((src / "tokenizer.json").read_bytes())
    assert main(["convert", str(model), "-o", str(model / "tokenizer.json")]) == 2
    assert "is the input" in capsys.readouterr().err
    assert (model / "tokenizer.json").read_bytes() == (src / "tokenizer.json").read_bytes()
    assert main(["convert", str(model), "-o", str(model / "out.mtok")]) == 0


def test_mode_and_owner_of_a_replaced_file_are_kept(folder):
    out = folder / "out.yaml"
    out.write_text("old\n")
    os.chmod(out, 0o640)
    owner = (4321, 4321) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(out, *owner)
    assert dump_to(out) == 0
    st = os.stat(out)
    assert stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == owner


def test_the_folder_is_synced_after_the_rename(folder, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    _io.atomic_write(folder / "x", b"data")
    assert synced == [False, True]


def test_a_temporary_left_by_a_killed_writer_is_removed(folder):
    gone = 2 ** 22 + 12345  # above any pid_max: no such process
    stale = folder / f".x.{gone}.abcd{_io.TMP_SUFFIX}"
    live = folder / f".x.{os.getpid()}.abcd{_io.TMP_SUFFIX}"
    other = folder / f".y.{gone}.abcd{_io.TMP_SUFFIX}"
    for p in (stale, live, other):
        p.write_bytes(b"half")
    _io.atomic_write(folder / "x", b"data")
    assert sorted(os.listdir(folder)) == sorted(["x", live.name, other.name])


def test_a_killed_writer_leaves_its_temporary_named_for_removal(folder):
    """kill -9 inside the write window: the old file stays whole, the temporary is named with the
    dead writer's pid, and the next write removes it."""
    out = folder / "x"
    out.write_bytes(b"old")
    code = ("import os, sys; from mtokspec.cli import _io\n"
            "real = os.replace\n"
            "def replace(a, b): os.kill(os.getpid(), 9)\n"
            "os.replace = replace\n"
            f"_io.atomic_write({str(out)!r}, b'new' * 1000)\n")
    result = run_bounded(["-c", code], label="kill -9 in the write window")
    assert result.returncode == -9
    assert out.read_bytes() == b"old"
    left = [n for n in os.listdir(folder) if n != "x"]
    assert len(left) == 1 and left[0].endswith(_io.TMP_SUFFIX)
    _io.atomic_write(out, b"new")
    assert os.listdir(folder) == ["x"] and out.read_bytes() == b"new"


def test_library_refusals_are_errors_and_os_errors(folder):
    with pytest.raises(PathRefused) as err:
        _io.atomic_write(folder, b"x")
    assert isinstance(err.value, OSError)


# --- input size --------------------------------------------------------------------------------

@pytest.mark.parametrize("pure", [False, True], ids=PATHS)
def test_input_stops_at_the_limit(pure):
    env = {"MTOKSPEC_MAX_INPUT": str(1 << 20)}
    for argv, stdin in ((["-m", "mtokspec", "inspect", "/dev/zero"], None),
                        (["-m", "mtokspec", "inspect", "-"], b"\0" * (3 << 20)),
                        (["-m", "mtokspec", "validate", str(EXAMPLE)], None)):
        result = run_bounded(argv, pure=pure, stdin=stdin, env=env if argv[-1] != str(EXAMPLE) else
                             {"MTOKSPEC_MAX_INPUT": "100"}, label=f"{' '.join(argv[2:])} over the input limit")
        assert result.returncode == 2, result.err
        assert "input limit" in result.err and "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1


def test_the_default_input_limit_is_2_gib(monkeypatch):
    monkeypatch.delenv("MTOKSPEC_MAX_INPUT", raising=False)
    assert _io.max_input() == 2 << 30
    monkeypatch.setenv("MTOKSPEC_MAX_INPUT", "lots")
    with pytest.raises(PathRefused):
        _io.max_input()


# --- standard streams --------------------------------------------------------------------------

def _cli(*args, **kw):
    return run_bounded(["-m", "mtokspec", *args], **kw)


@pytest.mark.parametrize("pure", [False, True], ids=PATHS)
def test_chat_writes_lone_surrogates_as_their_bytes(tmp_path, pure):
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "a\\ud800b\\udcffc"}]')
    result = _cli("chat", str(EXAMPLE), "--messages", str(messages), pure=pure,
                  env={"PYTHONIOENCODING": "utf-8:strict"}, label="chat, a lone surrogate")
    assert result.returncode in (0, 1), result.err
    assert "Traceback" not in result.err
    if result.returncode == 0:
        assert b"a\xed\xa0\x80b\xffc" in result.stdout


@pytest.mark.parametrize("pure", [False, True], ids=PATHS)
def test_encode_reads_stdin_bytes_that_are_not_utf8(pure):
    result = _cli("encode", str(EXAMPLE), "-", stdin=b"ab\xff\xfe", pure=pure,
                  env={"PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}, label="encode -, not UTF-8")
    assert result.returncode == 0, result.err
    assert result.stdout.split() and all(x.isdigit() for x in result.stdout.split())


def test_a_closed_or_full_stdout_is_one_line_exit_2():
    code = ("import os, sys; os.close(1); sys.stdout = None\n"  # as a process started with >&-
            "from mtokspec.cli import main; sys.exit(main(['dump', %r]))" % str(EXAMPLE))
    for argv, label in ((["-c", code], "dump, stdout closed"),):
        result = run_bounded(argv, label=label)
        assert result.returncode == 2
        assert result.err.strip().splitlines() == ["mtokspec dump: [Errno 9] standard output is closed"]
    with open("/dev/full", "wb") as full:
        import subprocess

        proc = subprocess.run([sys.executable, "-m", "mtokspec", "dump", str(EXAMPLE)], stdout=full,
                              stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().splitlines() == ["mtokspec dump: [Errno 28] No space left on device"]


def test_indent_is_bounded(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["export-hf", str(EXAMPLE), "-o", str(tmp_path / "x.json"), "--indent", "1000000000"])
    assert exit_.value.code == 2 and "0 to 16" in capsys.readouterr().err
    assert main(["export-hf", str(EXAMPLE), "-o", str(tmp_path / "x.json"), "--indent", "2"]) == 0
    assert os.listdir(tmp_path) == ["x.json"]


def test_dump_to_stdout_with_dash(capsys):
    assert main(["dump", str(EXAMPLE), "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("format: mtok")


def test_an_input_the_machine_cannot_hold_is_one_line(tmp_path):
    """/dev/zero within the default 2 GiB input limit, under a 512 MB address space: out of
    memory, reported in one line."""
    result = run_bounded(["-m", "mtokspec", "inspect", "/dev/zero"], memory=512 << 20,
                         env={"MTOKSPEC_MAX_INPUT": ""}, label="inspect /dev/zero, 2 GiB limit, 512 MB memory")
    assert result.returncode == 2
    assert result.err.strip().splitlines() == ["mtokspec inspect: out of memory (MTOKSPEC_MAX_INPUT sets a lower "
                                               "input limit)"]

"""Paths syslogrx writes are never followed through a symbolic link: the
disk buffer's DIR (opened O_DIRECTORY | O_NOFOLLOW, its files with openat),
--summary and --output file: (O_NOFOLLOW, at start and at each SIGHUP's
reopen). Nor are they a FIFO (which would hang the open), a device or
another user's file: refused at start, and again at the open (O_NONBLOCK,
then fstat) when planted while syslogrx runs, left untouched. fs.protected_symlinks is left as the machine has it: these links
are root's, in root's folders, where that sysctl does not apply anyway."""
import os
import signal
import socket
import stat

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import read_json, run_cmd, wait_until
from support.rx_watch import Receiver
from support.defaults import NOBODY

REFUSED = "it is a symbolic link: refused (syslogrx never follows one)"
NOT_REGULAR = "not a regular file (a FIFO, socket or device): refused, left untouched"
NOT_OWNED = "owned by another user: refused, left untouched"


def rx_argv(*args):
    return [binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}", "--duration", "1",
            *args]


def test_disk_buffer_dir_that_is_a_symlink_is_refused(tmp_path):
    """A root-owned 0755 folder passes the owner and mode checks: reached
    through a link, nothing may be created in it."""
    target = tmp_path / "target"
    target.mkdir()
    os.chmod(target, 0o755)
    assert os.stat(target).st_uid == 0 == os.geteuid()
    link = tmp_path / "buf"
    link.symlink_to(target)
    r = run_cmd(rx_argv("--output", "tcp:127.0.0.1:9", "--disk-buffer", str(link),
                        "--disk-buffer-mode", "reliable"))
    assert r.returncode == 2, r.stderr
    assert f"--disk-buffer {link}: {REFUSED}" in r.stderr, r.stderr
    assert os.listdir(target) == []


def test_summary_that_is_a_symlink_is_refused(tmp_path):
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    link = tmp_path / "summary.json"
    link.symlink_to(target)
    r = run_cmd(rx_argv("--output", "null", "--summary", str(link)))
    assert r.returncode == 2, r.stderr
    assert f"--summary {link}: {REFUSED}" in r.stderr, r.stderr
    assert target.read_bytes() == b"keep me"


def test_output_file_that_is_a_symlink_is_refused(tmp_path):
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    link = tmp_path / "out.log"
    link.symlink_to(target)
    r = run_cmd(rx_argv("--output", f"file:{link}"))
    assert r.returncode == 2, r.stderr
    assert f"--output file:{link}: {REFUSED}" in r.stderr, r.stderr
    assert target.read_bytes() == b"keep me"


def test_summary_is_created_0600(tmp_path):
    path = tmp_path / "summary.json"
    os.umask(old := os.umask(0o022))
    r = run_cmd(rx_argv("--output", "null", "--summary", str(path)))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.mark.parametrize("plant", ["link", "fifo"])
def test_sighup_reopen_refuses_a_link_or_fifo_and_keeps_writing(tmp_path, syslogrx, plant):
    """logrotate moves the file away; a link planted in its place at the
    SIGHUP is refused, the target untouched, lines still go to the old one.
    A FIFO there neither blocks the reopen nor gets a byte."""
    out, moved = tmp_path / "out.log", tmp_path / "out.log.1"
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    port = free_udp_port()
    rx = syslogrx("--output", f"file:{out}", "--format", "raw", port=port, sequences=False)

    def send(line):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(line, ("127.0.0.1", port))

    send(b"<13>first")
    wait_until(lambda: out.exists() and out.read_bytes().count(b"\n") == 1, "first line")
    os.rename(out, moved)
    if plant == "link":
        out.symlink_to(target)
    else:
        os.mkfifo(out)
    rx.p.send_signal(signal.SIGHUP)
    # The refusal is the SIGHUP handled: a stop sent before that ends the
    # run without a reopen (seen on a loaded host).
    rx.wait_line("reopen failed")
    send(b"<13>second")
    wait_until(lambda: moved.read_bytes().count(b"\n") == 2 or target.read_bytes() != b"keep me",
               "second line in the old file")
    rc, _, err = rx.stop()
    assert rc == 0, err
    said = REFUSED if plant == "link" else NOT_REGULAR
    assert f"syslogrx: file:{out}: reopen failed: {said} (still writing to the old " \
        "one)\n" in err, err
    assert target.read_bytes() == b"keep me"
    assert moved.read_bytes() == b"<13>first\n<13>second\n"


def test_summary_link_planted_while_running_is_refused_at_exit(tmp_path, syslogrx):
    """The start's check passed (nothing there yet); a link planted before
    the summary is written is refused when it is opened."""
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    rx = syslogrx("--output", "null", port=free_udp_port(), sequences=False)
    os.symlink(target, rx.summary_path)
    rx.p.send_signal(signal.SIGTERM)
    _, err = rx.p.communicate(timeout=30)
    err = err.decode()
    assert rx.p.returncode != 0
    assert f"--summary {rx.summary_path}: {REFUSED}" in err, err
    assert target.read_bytes() == b"keep me"


def writes_to(kind, path):
    """The flags that make syslogrx write path, and how its errors name it."""
    if kind == "summary":
        return ["--output", "null", "--summary", str(path)], f"--summary {path}"
    return ["--output", f"file:{path}"], f"--output file:{path}"


@pytest.mark.parametrize("kind", ["summary", "output"])
def test_a_fifo_or_another_users_file_is_refused_at_start(tmp_path, kind):
    fifo, theirs = tmp_path / "fifo", tmp_path / "theirs"
    os.mkfifo(fifo)
    theirs.write_bytes(b"theirs\n")
    os.chmod(theirs, 0o666)           # anyone may write it: root could, before
    os.chown(theirs, NOBODY, NOBODY)
    for path, said in ((fifo, NOT_REGULAR), (theirs, NOT_OWNED)):
        args, named = writes_to(kind, path)
        r = run_cmd(rx_argv(*args), timeout=30)
        assert r.returncode == 2, r.stderr
        assert f"{named}: {said}" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert theirs.read_bytes() == b"theirs\n"


@pytest.mark.parametrize("reader", [False, True], ids=["fifo", "fifo-read"])
def test_summary_fifo_planted_while_running_is_refused_at_exit(tmp_path, syslogrx, reader):
    """The open never blocks (nobody reads the FIFO) and nothing is written
    into it (someone does)."""
    rx = syslogrx("--output", "null", port=free_udp_port(), sequences=False)
    os.mkfifo(rx.summary_path)
    fd = os.open(rx.summary_path, os.O_RDONLY | os.O_NONBLOCK) if reader else None
    try:
        rx.p.send_signal(signal.SIGTERM)
        _, err = rx.p.communicate(timeout=30)
        err = err.decode()
        assert rx.p.returncode != 0
        assert f"--summary {rx.summary_path}: {NOT_REGULAR}" in err, err
        if fd is not None:
            try:
                assert os.read(fd, 100) == b""
            except BlockingIOError:
                pass      # nothing written
    finally:
        if fd is not None:
            os.close(fd)


def test_summary_of_another_user_planted_while_running_is_refused_at_exit(tmp_path, syslogrx):
    rx = syslogrx("--output", "null", port=free_udp_port(), sequences=False)
    with open(rx.summary_path, "wb") as f:
        f.write(b"theirs\n")
    os.chmod(rx.summary_path, 0o666)
    os.chown(rx.summary_path, NOBODY, NOBODY)
    rx.p.send_signal(signal.SIGTERM)
    _, err = rx.p.communicate(timeout=30)
    err = err.decode()
    assert rx.p.returncode != 0
    assert f"--summary {rx.summary_path}: {NOT_OWNED}" in err, err
    with open(rx.summary_path, "rb") as f:
        assert f.read() == b"theirs\n"


def test_output_file_is_created_0640(tmp_path):
    path = tmp_path / "out.log"
    os.umask(old := os.umask(0o022))
    r = run_cmd(rx_argv("--output", f"file:{path}"))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


@pytest.mark.parametrize("plant", [None, "link"])
def test_supervisor_summary_is_0600_and_never_through_a_link(tmp_path, plant):
    """security.md: "The summary (`--summary PATH`, and the supervisor's
    `PATH.supervisor`) is created 0600", and PATH.supervisor is opened
    O_NOFOLLOW like the summary: a link planted there before the start is
    refused with the reason when the supervisor writes, its target
    untouched. The same page: the supervisor "never parses or writes a
    message": while its child writes, it holds no descriptor of the
    output file."""
    sup_path = tmp_path / "summary.json.supervisor"
    target = tmp_path / "precious"
    if plant:
        target.write_bytes(b"keep me")
        sup_path.symlink_to(target)
    os.umask(old := os.umask(0o022))
    rx = Receiver(tmp_path, f"127.0.0.1:{free_udp_port()}", "--supervise")
    child = rx.child()
    wait_until(lambda: rx.out.exists(), "the child's output file")
    def holds_output(pid):
        return any(os.path.realpath(f"/proc/{pid}/fd/{fd}") == str(rx.out)
                   for fd in os.listdir(f"/proc/{pid}/fd"))
    assert holds_output(child)
    assert not holds_output(rx.p.pid)
    rc, err, _ = rx.stop()
    assert rc == 0, err
    if plant:
        assert f"--summary {sup_path}: {REFUSED}" in err, err
        assert target.read_bytes() == b"keep me"
        assert os.path.islink(sup_path)
    else:
        assert stat.S_IMODE(os.stat(sup_path).st_mode) == 0o600
        assert read_json(sup_path)["children"][0]["pid"] == child

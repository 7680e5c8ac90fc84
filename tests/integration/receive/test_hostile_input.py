"""Input from anyone: datagrams with forged sequence markers (sysloggen's and
loggen's, random flow numbers, huge sequence numbers, absurd end markers)
cost no memory past the documented bound and move no loss figure, with
sequence accounting off (the default: nothing is read) and on (--sequences:
bounded, the forged jumps not believed). The books close to the message;
the test waits on the kernel queue (/proc/net/udp), never on time. Control
bytes reach a file escaped. A disk buffer DIR with a planted link, shared
write, or a forged record is refused or costs exactly that record."""
import os
import random
import socket
import threading
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import udp_rows
from support.procs import run_cmd
from support.diskbuf_files import segment_header, v1_record
from support.defaults import NOBODY

COUNT = 100_000
CHUNK = 2_000           # < the rcvbuf in datagrams: a chunk never overflows it
FLOWS_MAX = 1024        # --sequence-flows' default
WINDOW_BYTES = 1 << 20  # --window-bytes given below
JUMP = 1 << 20          # --sequence-jump's default


def rss_kib(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key} for {pid}")


def forged(i, rng):
    """The i-th hostile datagram and its kind: 'new' (a new flow at seq 0,
    believed), else 'implausible' (a number past the jump bound)."""
    flow = rng.randrange(1 << 32)
    huge = rng.randrange(JUMP, 1 << 64)
    kind = i % 5
    if kind == 0:   # a fresh flow number each time, seq 0: a believable start
        return "new", f"<13>Nov 22 03:22:47 h evil[1]: seq@32473 run=evil flow={i} seq=0 x"
    if kind == 1:   # the datagram: a new flow at seq=16777215
        return "implausible", f"<13>Nov 22 03:22:47 h evil[1]: seq@32473 run=evil flow={flow} seq=16777215 x"
    if kind == 2:   # RFC 5424 structured data, and a jump in a flow kind 0 opened
        return "implausible", (f'<13>1 2026-11-23T21:00:00Z h evil 1 - [seq@32473 run="evil" '
                               f'flow="{i - 2}" seq="{huge}"] x')
    if kind == 3:   # end markers: a huge count, or more copies than any sender sends
        copies = rng.choice([3, 1 << 40])
        return "implausible", (f"<13>Nov 22 03:22:47 h evil[1]: seq@32473 run=evil flow={flow} "
                               f"end={huge} copies={copies} x")
    return "implausible", f"<13>loggen seq: {huge}, thread: {flow}, runid: 1700000000, x"


def queue_empty(port):
    return all(int(r[4].split(":")[1], 16) == 0 for r in udp_rows(port))


def send_hostile(port, pid):
    """Sends COUNT datagrams in chunks, each after the kernel queue emptied.
    Returns {kind: count} and the most RSS seen after a chunk (VmHWM would
    count the start's own peak, loading BPF)."""
    rng = random.Random(19)
    kinds = {"new": 0, "implausible": 0}
    most = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for start in range(0, COUNT, CHUNK):
            for i in range(start, min(COUNT, start + CHUNK)):
                kind, text = forged(i, rng)
                kinds[kind] += 1
                s.sendto(text.encode(), ("127.0.0.1", port))
            deadline = time.monotonic() + 30
            while not queue_empty(port):
                assert time.monotonic() < deadline, "the receiver stopped reading"
                time.sleep(0.005)
            most = max(most, rss_kib(pid))
    return kinds, most


def run(syslogrx, sequences):
    port = free_udp_port()
    rx = syslogrx("--sockets", "1", "--threads", "1", "--rcvbuf", "8M",
                  "--window-bytes", str(WINDOW_BYTES), port=port, sequences=sequences)
    before = rss_kib(rx.p.pid)
    kinds, peak = send_hostile(port, rx.p.pid)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    t = s["totals"]
    assert kinds["new"] + kinds["implausible"] == COUNT
    # the books: every datagram received and written, none dropped
    assert t["received"] == t["written"] == COUNT
    assert t["kernel_drops"]["total"] == 0
    assert t["discarded"] == 0 and t["abandoned"] == 0
    print(f"rss at ready {before} KiB, most after a chunk {peak} KiB")
    return s, kinds, (peak - before) * 1024


def test_forged_markers_with_sequences_off_cost_nothing(syslogrx):
    s, _, grew = run(syslogrx, sequences=False)
    # nothing read, nothing kept: the loss section says so and nothing else
    assert s["loss"] == {"sequences": False}
    # the receiver's own bound: the window (docs/security.md)
    assert grew <= window_bound(), grew


def test_forged_markers_with_sequences_on_are_bounded(syslogrx):
    s, kinds, grew = run(syslogrx, sequences=True)
    loss = s["loss"]
    assert loss["sequences"] is True
    assert loss["flows"] == FLOWS_MAX == loss["flows_max"]
    # kind 0: one message per fresh flow; the first FLOWS_MAX are tracked
    assert loss["received"] == FLOWS_MAX
    assert loss["untracked"] == kinds["new"] - FLOWS_MAX
    assert loss["sequenced"] == kinds["new"]
    assert loss["implausible"] == kinds["implausible"]
    # every loss figure at 0
    assert loss["missing"] == 0
    assert loss["end_markers"] == 0 and loss["end_markers_lost"] == 0
    assert loss["duplicates"] == 0 and loss["reordered"] == 0
    assert loss["flows_closed"] == 0 and loss["sent"] is None
    # the window's bound plus seqtrack's for FLOWS_MAX flows whose numbers
    # stay below 4096: a 512-byte bitmap and at most 280 bytes each
    assert grew <= window_bound() + FLOWS_MAX * (512 + 280), grew


def window_bound(threads=1, batch=64):
    """The documented bound (docs/security.md, src/rx/path/window.h) for this
    test's flags: the window's batches, window_bytes + (2 threads + 1) batches
    at their largest, plus each worker's receive slots (batch x 64 KiB)."""
    batch_max = 256 + batch * (64 + 2 * 65536)   # header, records, data
    return WINDOW_BYTES + (2 * threads + 1) * batch_max + threads * batch * 65536


@pytest.mark.parametrize("flags,want", [
    ((), b"<13>1 - h a - - - #033]0;owned#007#033[2J#011tab#177\n"),
    (("--no-escape-control",), b"<13>1 - h a - - - \x1b]0;owned\x07\x1b[2J\ttab\x7f\n"),
])
def test_control_bytes_escaped_unless_byte_exact(syslogrx, tmp_path, flags, want):
    """A terminal escape sequence a sender writes reaches the file as rsyslog
    writes it (#033), or as received with --no-escape-control."""
    port = free_udp_port()
    out = tmp_path / "out.log"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--output", f"file:{out}", *flags,
                  port=port, sequences=False)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"<13>1 - h a - - - \x1b]0;owned\x07\x1b[2J\ttab\x7f", ("127.0.0.1", port))
    rc, _, err = rx.stop()   # SIGTERM drains the socket and the window first
    assert rc == 0, err
    assert rx.summary["totals"]["written"] == 1
    assert rx.summary["config"]["escape_control"] is (not flags)
    assert out.read_bytes() == want


# ---- a disk buffer directory is not trusted as it is --------------------------

class LineServer:
    """A TCP destination that keeps every line it is sent."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.data = b""
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with c:
                while chunk := c.recv(65536):
                    self.data += chunk

    def close(self):
        """After the sender is gone: reads to its EOF, then stops."""
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.t.join(timeout=30)


def test_planted_cursor_link_is_refused_not_followed(tmp_path):
    d = tmp_path / "buf"
    d.mkdir(mode=0o700)
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    (d / "cursor").symlink_to(target)
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--output", "tcp:127.0.0.1:9", "--disk-buffer", str(d), "--duration", "1"])
    assert r.returncode != 0
    assert "cursor is a symbolic link: refused" in r.stderr, r.stderr
    assert target.read_bytes() == b"keep me"


def test_shared_disk_buffer_dir_is_refused(tmp_path):
    d = tmp_path / "buf"
    d.mkdir()
    os.chmod(d, 0o777)
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--output", "tcp:127.0.0.1:9", "--disk-buffer", str(d), "--duration", "1"])
    assert r.returncode != 0
    assert "writable by group or others (mode 0777): refused" in r.stderr, r.stderr


def test_disk_buffer_dir_of_another_user_is_refused(tmp_path):
    """security.md: an existing DIR "owned by another user ... is refused at
    start" (mode 0700: no group or world write to refuse it for): exit 2,
    the DIR named, nothing created in it. Two checks refuse it: the paths
    check before the start (the user syslogrx runs as, here root without
    its capabilities, cannot write there), and the owner check when DIR is
    opened (reached only when the first passes: the uid of the paths check
    is the uid that opens DIR). Without the paths check the open fails
    later, after the output has started: exit 1, not the refusal's 2."""
    d = tmp_path / "buf"
    d.mkdir(mode=0o700)
    os.chown(d, NOBODY, NOBODY)
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--output", "tcp:127.0.0.1:9", "--disk-buffer", str(d), "--duration", "1"])
    assert r.returncode == 2, r.stderr
    assert f"--disk-buffer {d}: Permission denied (syslogrx writes it as uid 0 without " \
        "capabilities; checked before starting)" in r.stderr \
        or f"--disk-buffer {d}: owned by uid {NOBODY}, not uid 0 that syslogrx runs as: " \
        "refused" in r.stderr, r.stderr
    assert os.listdir(d) == []


def test_forged_segment_costs_exactly_its_record(syslogrx, tmp_path):
    """A segment left in DIR: a good record, one whose stored source address
    is 200 bytes long (copied into a 28-byte field if believed), a good one.
    The two good ones are delivered first thing; the forged one is counted."""
    d = tmp_path / "buf"
    d.mkdir(mode=0o700)
    seg = segment_header(1)
    seg += v1_record(1, [b"<13>good one"])
    seg += v1_record(2, [b"<13>forged", b"<13>forged too"], src_len=200)
    seg += v1_record(3, [b"<13>good two"])
    (d / "0000000000000001.seg").write_bytes(seg)
    server = LineServer()
    try:
        rx = syslogrx("--output", f"tcp:127.0.0.1:{server.port}", "--disk-buffer", str(d),
                      "--sockets", "1", "--threads", "1", port=free_udp_port(), sequences=False)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        server.close()
    db = rx.summary["disk_buffer"]
    assert db["recovered"] == 2 and db["replayed"] == 2
    assert db["corrupt"] == 1
    assert db["msgs"] == 0
    # octet-counted frames (RFC 6587), the good ones only, in order
    assert server.data == b"12 <13>good one12 <13>good two"

"""syslogrx under a sysloggen load, watched line by line on stderr: for the
tests of live resize and upgrade in place (issue 13), where the receiver
changes (its sockets, or its very process) while the load runs."""
import json
import socket
import os
import re
import signal
import subprocess
import threading
import time

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_queues_empty
from support.procs import read_json, stop_timeout, wait_until

RATE = 50_000
SEQ = re.compile(rb"seq@32473 run=\S+ flow=(\d+) seq=(\d+)")


def listen_for(family):
    """ADDR:PORT on loopback, a free port, for AF_INET or AF_INET6."""
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    port = free_udp_port(family)
    return f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"


def config_text(settings):
    """`name = value` lines; a flag (e.g. shrink-naive) is True or False."""
    return "".join(f"{k} = {'yes' if v else 'no'}\n" if isinstance(v, bool) else f"{k} = {v}\n"
                   for k, v in settings.items())


class Receiver:
    """syslogrx with its stderr read line by line (to wait for each resize).
    settings go to its --config file (sockets, threads: what SIGHUP re-reads;
    given on the command line they would pin them); args to its command line.
    Ended on every path by conftest's reaper (reap_what_the_test_left): it,
    its upgrade successors and supervised children stay in pytest's tree.
    sequences=False: without --sequences (what cannot go beside it)."""

    def __init__(self, tmp_path, listen, *args, settings=None, exe=None, prefix=(), env=None,
                 pass_fds=(), sequences=True):
        self.tmp_path = tmp_path
        self.cf = tmp_path / "syslogrx.conf"
        self.settings = dict(settings or {})
        self.cf.write_text(config_text(self.settings))
        self.out = tmp_path / "out.log"
        self.summary_path = tmp_path / "summary.json"
        self.lines = []
        self.cond = threading.Condition()
        self.p = subprocess.Popen(
            list(prefix) + [exe or binary("syslogrx"), "--listen", listen, "--config", str(self.cf),
             "--output", f"file:{self.out}", "--summary", str(self.summary_path)]
            + (["--sequences"] if sequences else []) + list(args) + stop_timeout(args),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=pass_fds,
            env=dict(os.environ, **(env or {})))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.wait_line("ready on", 0)
        self.pid = self.p.pid          # the process receiving now
        self.olds = []                 # the ones that handed over

    def _read(self):
        for raw in self.p.stderr:
            with self.cond:
                self.lines.append(raw.decode(errors="replace"))
                self.cond.notify_all()

    def count(self, what):
        with self.cond:
            return sum(what in l for l in self.lines)

    def wait_line(self, what, seen, timeout=30):
        deadline = time.monotonic() + timeout
        with self.cond:
            while sum(what in l for l in self.lines) <= seen:
                left = deadline - time.monotonic()
                pid = getattr(self, "pid", self.p.pid)
                assert left > 0 and alive(pid), "".join(self.lines)
                self.cond.wait(min(left, 0.2))

    def resize(self, sockets, threads, **more):
        """Rewrites the config file with these sockets and threads (and more
        settings: shrink_naive=True) over the rest, then SIGHUP; waits for
        the resize and checks that it succeeded."""
        seen = self.count("resized to")
        failed = self.count("resize failed")
        self.settings.update({"sockets": sockets, "threads": threads})
        lines = dict(self.settings, **{k.replace("_", "-"): v for k, v in more.items()})
        self.cf.write_text(config_text(lines))
        os.kill(self.pid, signal.SIGHUP)
        self.wait_line("resized", seen + failed)
        assert self.count("resize failed") == failed, "".join(self.lines)

    def upgrade(self):
        """kill -USR2: returns the new pid, or None if the upgrade failed."""
        took, failed = self.count("took over"), self.count("upgrade failed")
        os.kill(self.pid, signal.SIGUSR2)
        deadline = time.monotonic() + 30
        with self.cond:
            while self.count_locked("took over") == took and \
                    self.count_locked("upgrade failed") == failed:
                assert time.monotonic() < deadline, "".join(self.lines)
                self.cond.wait(0.5)
            if self.count_locked("upgrade failed") > failed:
                return None
            line = [l for l in self.lines if "took over" in l][-1]
        new = int(re.search(r"pid (\d+) took over", line).group(1))
        self.olds.append(self.pid)
        self.pid = new
        return new

    def child(self):
        """Supervised: the pid of the receiving child now."""
        self.wait_line("started receiver pid", 0)
        with self.cond:
            started = [l for l in self.lines if "started receiver pid" in l]
        return int(started[-1].rsplit(" ", 1)[1])

    def kill_child(self):
        """Supervised: kill -9 the receiving child; returns the pid that
        replaced it (waits for the supervisor to say so)."""
        with self.cond:
            started = [l for l in self.lines if "started receiver pid" in l]
        victim = int(started[-1].rsplit(" ", 1)[1])
        os.kill(victim, signal.SIGKILL)
        self.wait_line(f"replaced pid {victim} by", 0)
        self.wait_line("started receiver pid", len(started) - 1)
        line = [l for l in self.lines if f"replaced pid {victim} by" in l][-1]
        return int(re.search(r"by pid (\d+)", line).group(1))

    def count_locked(self, what):
        return sum(what in l for l in self.lines)

    def stop(self):
        """SIGTERM to the receiving process; (its exit code if it is our child
        else 0, stderr, its summary). Every old one must be gone too."""
        os.kill(self.pid, signal.SIGTERM)
        if self.pid == self.p.pid:
            rc = self.p.wait(timeout=60)
        else:
            rc = 0
            self.p.wait(timeout=60)          # the first one, long handed over
            wait_gone(self.pid, 60)
        self.reader.join(timeout=30)
        assert not self.reader.is_alive(), "a process still holds syslogrx's stderr"
        err = "".join(self.lines)
        for pid in self.olds + [self.pid]:
            assert f"pid {pid} done after the hand-over" in err or pid == self.pid, err
        return rc, err, read_json(self.summary_path)

    def old_summaries(self):
        return [read_json(f"{self.summary_path}.{pid}") for pid in self.olds]


def alive(pid):
    """Running: not gone, and not a zombie nobody reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid, timeout):
    """A process that is not our child has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} did not exit within {timeout}s")


def start_load(target, rate=RATE):
    """sysloggen at rate for at most 120 s; stopped by the test with SIGINT.
    No end markers: these tests account by sequence numbers, sent vs received
    (test_end_markers.py tests the markers)."""
    return subprocess.Popen([binary("sysloggen"), "--target", target, "--rate", str(rate),
                             "--duration", "120", "--sources", "4", "--size", "200", "--json",
                             "--end-markers", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop_load(gen):
    gen.send_signal(signal.SIGINT)
    out, err = gen.communicate(timeout=30)
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["type"] == "summary", err
    return summary


def output_size(rx):
    try:
        return os.path.getsize(rx.out)
    except FileNotFoundError:
        return 0


def under_load(rx, listen, actions, rate=RATE):
    """Runs actions() while sysloggen sends to listen, then stops the load and
    the receiver (exit 0). Returns (sysloggen's summary, stderr, final summary)."""
    gen = start_load(listen, rate)
    try:
        # The load reaches the output before the actions and again after them.
        wait_until(lambda: output_size(rx) > 0, "the load in the output file")
        actions()
        after = output_size(rx)
        wait_until(lambda: output_size(rx) > after, "the load in the output after the actions")
    finally:
        sent = stop_load(gen)
    # Every datagram sent is read from the queues before SIGTERM.
    wait_queues_empty(int(listen.rsplit(":", 1)[1]), rx.pid)
    rc, err, final = rx.stop()
    assert rc == 0, err
    return sent, err, final


def seqs_in_output(path):
    """Sequence numbers per flow found in the output file."""
    flows = {}
    with open(path, "rb") as f:
        for line in f:
            m = SEQ.search(line)
            assert m, line
            flows.setdefault(int(m.group(1)), set()).add(int(m.group(2)))
    return flows



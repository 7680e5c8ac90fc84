# SPDX-License-Identifier: MIT
"""Processes a test starts: run to completion (run_cmd, sysloggen), started and
stopped (Proc, Syslogrx), and waiting on an event (wait_until)."""
import fcntl
import json
import os
import re
import subprocess
import threading
import time

from support.paths import BUILD, ROOT, binary


def userns_refused():
    """Why this host refuses an unprivileged user namespace, or None. Inside
    a chroot (a CI service's root, fresh-machine's) the kernel refuses
    unshare(CLONE_NEWUSER) with EPERM, for us and for what we start, a
    container's systemd included (PrivateUsers=yes). Probed, not guessed."""
    r = subprocess.run(["unshare", "--user", "--map-root-user", "true"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode == 0:
        return None
    return ("this host refuses a user namespace (inside a chroot the kernel does: "
            f"EPERM): {r.stderr.strip()}")


# syslogrx's line prefix outside the journal: UTC time to the millisecond and
# the level word (src/common/log.c).
LOG_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warning|info|debug) ",
                       re.M)


def log_text(text):
    """syslogrx's stderr without each line's time and level: the messages, as
    tests compare them byte for byte ("syslogrx: ready on ...")."""
    return LOG_STAMP.sub("", text)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def signal_and_reap(proc, sig, timeout):
    """Sends sig to a running Popen and waits for it; past timeout, SIGKILL.
    For the fake servers (broker, collector): their stop must never hang a test."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Proc:
    """A process started by a test and always reaped by it."""

    def __init__(self, argv, **kw):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)

    def stop(self, sig=15, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            raise AssertionError(f"{self.argv[0]} did not stop within {timeout}s: {err.decode()}")
        return self.p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def stop_timeout(args):
    """A long --stop-timeout unless args give one: a test's books close on a
    stop (an upgrade's old process too) that delivers everything, which a
    loaded host must not cut at the default 20 s."""
    return [] if "--stop-timeout" in map(str, args) else ["--stop-timeout", "300"]


class Syslogrx(Proc):
    """syslogrx started by a test: waits for its "ready" line; stop() returns
    (exit code, stdout, stderr) and the parsed summary."""

    def __init__(self, tmp_path, *args, port=None, listen=None, summary=True, netns=None,
                 prefix=(), sequences=True, ready_timeout=None):
        # summary: True (summary.json), a file name in tmp_path, or none
        name = summary if isinstance(summary, str) else "summary.json"
        self.summary_path = str(tmp_path / name) if summary else None
        argv = [binary("syslogrx")]
        if listen:
            argv += ["--listen", listen]
        elif port:
            argv += ["--listen", f"127.0.0.1:{port}"]
        if self.summary_path:
            argv += ["--summary", self.summary_path]
        argv += [str(a) for a in args]
        # syslogrx writes to stdout by default (a newcomer sees the messages);
        # these tests count from the summary and never read stdout before exit,
        # so a test that names no output gets the null one it measures with.
        if not any(str(a) in ("--output", "-o") or str(a).startswith("--output=") for a in args):
            argv += ["--output", "null"]
        # The tests close their books with sysloggen's sequence markers, lab-only
        # accounting syslogrx does only when asked; sequences=False for a
        # receiver as it runs by default (the hostile-input tests).
        if sequences:
            argv += ["--sequences"]
        # A test closes its books on a stop that delivers everything: a
        # loaded host must not cut it at the default --stop-timeout (20 s,
        # for systemd's TimeoutStopSec). The stop's own tests give theirs.
        argv += stop_timeout(args)
        # prefix: what runs it (setpriv, nice, chrt); netns: in that namespace
        argv = list(prefix) + argv
        if netns:
            argv = ["ip", "netns", "exec", netns] + argv
        super().__init__(argv)
        # Pre-flight warnings may come first; the ready line ends start-up
        # (EOF: it exited). What came before is kept for stop()'s stderr.
        # ready_timeout: killed past it (a start that hangs fails the test).
        self.early_err = ""
        late = threading.Timer(ready_timeout, self.p.kill) if ready_timeout else None
        if late:
            late.start()
        while True:
            self.ready_line = self.p.stderr.readline().decode()
            if not self.ready_line or "ready on" in self.ready_line:
                break
            self.early_err += self.ready_line
        if late:
            late.cancel()
        if "ready on" not in self.ready_line:
            rc, out, err = self.stop()
            raise AssertionError(f"syslogrx did not start (exit {rc}): {self.early_err}{err}")

    def wait_line(self, text, timeout=30):
        """Reads stderr up to the line holding text (returned; what was read
        is kept for stop()'s stderr): an event the test waits for, such as
        a SIGHUP handled. Past timeout the process is killed, its stderr
        ends and the wait fails."""
        timer = threading.Timer(timeout, self.p.kill)
        timer.start()
        try:
            while True:
                line = self.p.stderr.readline().decode(errors="replace")
                self.early_err += line
                assert line, f"no {text!r} within {timeout} s, or it exited: {self.early_err}"
                if text in line:
                    return line
        finally:
            timer.cancel()

    def stop(self, sig=15, timeout=30):
        rc, out, err = super().stop(sig, timeout)
        err = self.early_err + err
        self.summary = read_json(self.summary_path) if self.summary_path and os.path.exists(self.summary_path) else None
        return rc, out, err


def start_rx(tmp_path, procs, name, port, *args, **kw):
    """A Syslogrx (the flags: args, kw) in a folder of its own, tmp_path/NAME,
    for its summary: a test that starts several keeps each one's apart.
    Stopped at teardown: procs is the fixture's list."""
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    p = Syslogrx(d, *args, port=port, **kw)
    procs.append(p)
    return p


def run_cmd(argv, timeout=30, **kw):
    """Run to completion; returns CompletedProcess with text output."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def sysloggen(port, *args, host="127.0.0.1", timeout=120):
    """Runs build/sysloggen to completion against host:port; returns its JSON
    summary (the last line of --json output)."""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    r = run_cmd([binary("sysloggen"), "--target", target, "--json"] + [str(a) for a in args],
                timeout=timeout)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    assert lines, r.stderr
    return lines[-1]


def lab_setup(script, *args, timeout):
    """Runs lab/SCRIPT ARGS (a set-up that fetches or builds what the tests
    need into build/, quick when it is there) and returns the last line it
    prints. One at a time: tests running in parallel (pytest -n) that need
    the same set-up wait for the first to finish it instead of filling the
    same folder at once (a lock on the script itself)."""
    path = os.path.join(ROOT, "lab", script)
    with open(path) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = run_cmd([path, *args], timeout=timeout)
    assert r.returncode == 0, f"lab/{script} failed: {r.stdout[-3000:]}{r.stderr[-3000:]}"
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""


def promtool():
    """build/prometheus/usr/bin/promtool: Debian's prometheus package unpacked
    by lab/promtool-setup.sh (never installed or run as a service)."""
    path = os.path.join(BUILD, "prometheus", "usr", "bin", "promtool")
    if not os.access(path, os.X_OK):
        lab_setup("promtool-setup.sh", os.path.join(BUILD, "prometheus"), timeout=300)
    return path


def wait_until(cond, what, timeout=30, every=0.01):
    """Polls cond() every `every` seconds until it returns something true
    (returned); fails naming what after timeout seconds. For events: a
    file's state, a counter (a cond that starts a process polls less often)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s"
        time.sleep(every)


def start_until(procs, until, *args):
    """syslogrx with args, stopped at teardown; returns (Proc, its stderr
    lines up to the first that matches the regex `until`)."""
    p = Proc([binary("syslogrx")] + [str(a) for a in args])
    procs.append(p)
    lines = []
    while True:
        line = p.p.stderr.readline().decode()
        assert line, f"syslogrx exited before {until!r}: {''.join(lines)}"
        lines.append(line)
        if re.search(until, line):
            return p, lines

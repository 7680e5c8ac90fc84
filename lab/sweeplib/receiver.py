# SPDX-License-Identifier: MIT
"""What every receiver a cell runs has in common (peers.py's, fluentbit.py's,
bench's drain): the process, started fresh and stopped by pid, its UDP
sockets' inodes and queues, its CPU and peak memory from /proc."""
import os
import signal
import subprocess
import time

from support.procnet import INODE, rx_queue, udp_rows


class ReceiverError(Exception):
    pass


def niceness(spec):
    """A preexec_fn raising the process's priority by spec["nice"] (e.g. -10),
    or None: the replica's emulated workers lose less to other load."""
    n = spec.get("nice")
    return (lambda: os.nice(n)) if n else None


def udp_inodes(port):
    """Inodes of the sockets bound to a local UDP port (both families)."""
    return [int(f[INODE]) for f in udp_rows(port)]


def udp_queued(port):
    """Bytes waiting in the port's socket queues (rx_queue), summed."""
    return sum(rx_queue(f) for f in udp_rows(port))


def proc_cpu_split(pid):
    """(utime, stime) of pid, all threads, in clock ticks; None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]), int(fields[12])


def proc_cpu_ticks(pid):
    """utime + stime of pid (all threads), in clock ticks; None if gone."""
    split = proc_cpu_split(pid)
    return None if split is None else sum(split)


def proc_hwm_kb(pid):
    """VmHWM (peak RSS) of pid in kB; None if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Receiver:
    """A receiver process: start(), wait_ready(), pid, stop()."""

    name = "?"

    def __init__(self, spec, port, workdir):
        self.spec = spec
        self.port = port
        self.workdir = workdir
        self.output = os.path.join(workdir, "out.log")
        self.stderr_path = os.path.join(workdir, f"{self.name}.stderr")
        self.p = None

    @property
    def pid(self):
        return self.p.pid

    def argv(self):
        raise NotImplementedError

    def env(self):
        return None

    def start(self):
        self.prepare()
        self._err = open(self.stderr_path, "wb")
        self.p = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL, stderr=self._err,
                                  env=self.env(), start_new_session=True,
                                  preexec_fn=niceness(self.spec))

    def prepare(self):
        pass

    def progress(self):
        """A figure that grows while the receiver still hands messages on (the
        output file's size): settle() waits for it to stop."""
        return os.path.getsize(self.output) if os.path.exists(self.output) else 0

    def accepted(self):
        """Messages handed on, for a receiver that writes no output file
        (None: count the output file's lines instead)."""
        return None

    def stderr_text(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_ready(self, timeout=15.0):
        """Until all its sockets are bound (or it has said it is ready)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise ReceiverError(f"{self.name} exited with {self.p.returncode} before it was "
                                    f"ready: {self.stderr_text().strip()[-500:]}")
            if self.ready():
                return
            time.sleep(0.02)
        raise ReceiverError(f"{self.name} was not ready within {timeout:.0f}s: "
                            f"{self.stderr_text().strip()[-500:]}")

    def ready(self):
        return len(udp_inodes(self.port)) >= self.spec["sockets"]

    def stop(self, timeout=30.0):
        if self.p is None:
            return None
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise ReceiverError(f"{self.name} did not stop within {timeout:.0f}s of SIGTERM")
        finally:
            self._err.close()
        return self.p.returncode

    def kill(self):
        if self.p is not None and self.p.poll() is None:
            self.p.kill()
            self.p.wait()

# SPDX-License-Identifier: MIT
"""A Debian root booted with systemd as PID 1 under systemd-nspawn, for the
package's install test: read-only beneath a tmpfs (--volatile=overlay), so
what a test installs is gone when the container stops and the root is
reused as it was; its own network namespace (--private-network: a loopback
alone), which goes with it. Commands run in it through nsenter (its mount,
pid and network namespaces and its root), as root."""
import os
import signal
import subprocess

from support.procs import run_cmd, wait_until

BOOT_TIMEOUT = 60


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


class BootedRoot:
    """systemd-nspawn -b of root; binds: {host dir: container dir}, read-only.
    BPF needs CAP_BPF and CAP_PERFMON in the container's bounding set and the
    bpf syscall in nspawn's filter (the units give them to their user)."""

    def __init__(self, root, name, log_path, binds=None):
        self.init = None
        self.log = open(log_path, "w+b")
        argv = ["systemd-nspawn", "-D", str(root), "--volatile=overlay", "-b",
                "--register=no", "--keep-unit", "-M", name, "--quiet", "--private-network",
                "--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN", "--system-call-filter=bpf"]
        argv += [f"--bind-ro={host}:{inside}" for host, inside in (binds or {}).items()]
        # basic.target: journald and little else; the test starts what it needs.
        argv += ["--", "systemd.firstboot=off", "systemd.unit=basic.target"]
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                  stderr=subprocess.STDOUT, start_new_session=True)

    def boot(self):
        """Waits for the container's systemd to answer systemctl."""
        self.init = wait_until(self._find_init, "systemd as the container's PID 1",
                               timeout=BOOT_TIMEOUT)
        wait_until(lambda: self.run("systemctl", "show", "-p", "Version", "--value",
                                    check=False).stdout.strip(),
                   "the container's systemd answering", timeout=BOOT_TIMEOUT)
        return self

    def _find_init(self):
        assert self.p.poll() is None, f"systemd-nspawn exited: {self.output()}"
        # nspawn's child, or (in other versions) its grandchild.
        for c in children(self.p.pid):
            for pid in [c] + children(c):
                if comm(pid) == "systemd":
                    return pid
        return None

    def run(self, *argv, check=True, timeout=60, namespaces=("-m", "-p", "-r", "-w")):
        """argv in the container. -r -w: its root and cwd, not its mount
        namespace's (nspawn chroot()s into the tree; when nspawn itself runs
        in a chroot, setns() alone would land in the host's "/")."""
        r = run_cmd(["nsenter", "-t", str(self.init), *namespaces, "--"] + list(argv),
                    timeout=timeout)
        if check:
            assert r.returncode == 0, f"{' '.join(argv)}: {r.stdout}{r.stderr}"
        return r

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def stop(self):
        """SIGTERM: nspawn asks the container's systemd to halt; SIGKILL to
        nspawn's group if it does not within 30 s."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(timeout=10)
        self.log.close()

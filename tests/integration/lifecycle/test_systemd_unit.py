"""The systemd unit, for real: this machine's own OS booted in a container
(systemd-nspawn --volatile=yes: a tmpfs root over the host's /usr, read-only),
syslogrx installed into a DESTDIR bind-mounted at /usr/local, then systemctl
start, a message, reload (the output file reopened), restart, stop.

The container shares the host's network namespace: the test sends from here to
the port the service bound there, and reads the service's files through
nsenter. BPF needs CAP_BPF and CAP_PERFMON in the container's bounding set and
the bpf syscall in nspawn's filter; the unit itself gives them to a dynamic
user as ambient capabilities, and syslogrx drops them once started."""
import json
import os
import signal
import socket
import subprocess
import time
import uuid

import pytest

from support import procs
from support.paths import binary, ROOT
from support.procnet import udp_rows, wait_for_udp_port
from support.procs import run_cmd, userns_refused
from support.reaper import descendants
from support.fds import fd_identity
from support.nspawn import children, comm
from support.ports import free_tcp_port, free_udp_port

# Serial: each test boots this machine's own OS in systemd-nspawn (a whole
# systemd, 30 s to boot on a loaded host) on the host's network namespace.
pytestmark = pytest.mark.serial

BOOT_TIMEOUT = 30
UNIT_DIR = "usr/local/lib/systemd/system"


class Container:
    def __init__(self, dest, name):
        self.name = name
        self.log = open(dest.parent / "nspawn.log", "w+b")
        self.p = subprocess.Popen(
            ["systemd-nspawn", "-D", "/", "--volatile=yes", "-b", "--register=no",
             "--keep-unit", "-M", name, "--quiet",
             f"--bind-ro={dest}/usr/local:/usr/local",
             f"--bind-ro={dest}/etc/syslogrx:/etc/syslogrx",
             "--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN",
             "--system-call-filter=bpf",
             # basic.target: journald and little else; the test starts the unit itself.
             # The host's network namespace is shared: nothing that configures it runs.
             "--", "systemd.firstboot=off", "systemd.unit=basic.target",
             "systemd.mask=systemd-networkd.service", "systemd.mask=systemd-resolved.service",
             "systemd.mask=systemd-timesyncd.service"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.init = None

    def boot(self):
        self.init = self._find_init()
        self.wait_for_manager()

    def _find_init(self):
        """The container's pid 1 (systemd), a grandchild of systemd-nspawn."""
        deadline = time.monotonic() + BOOT_TIMEOUT
        while time.monotonic() < deadline:
            assert self.p.poll() is None, f"systemd-nspawn exited: {self.output()}"
            # Its child, or (in other versions) its grandchild.
            for c in children(self.p.pid):
                for pid in [c] + children(c):
                    if comm(pid) == "systemd":
                        return pid
            time.sleep(0.05)
        raise AssertionError(f"no systemd in the container after {BOOT_TIMEOUT}s: {self.output()}")

    def start_unit(self, port):
        """Boots, starts syslogrx.service, waits for its sockets on port."""
        self.boot()
        r = self.run("systemctl", "start", "syslogrx", check=False)
        assert r.returncode == 0, f"systemctl start: {r.stdout}{r.stderr}\n{self.journal()}"
        wait_for_udp_port(port, count=4)

    def journal(self):
        return self.run("journalctl", "-u", "syslogrx", "-o", "cat", "--no-pager",
                        check=False).stdout

    def read_log(self, name="messages.log"):
        r = self.run("cat", f"/var/log/syslogrx/{name}", check=False)
        return r.stdout if r.returncode == 0 else ""

    def host_pid(self, name):
        """The pid, as this (the host's) namespace sees it, of the one process
        called name in the container."""
        def one():
            pids = [p for p, row in descendants(self.init).items()
                    if row[3] == name and row[2] != "Z"]
            return pids[0] if len(pids) == 1 else None
        return wait_until(one, f"one {name} in the container")

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def run(self, *argv, check=True, timeout=30):
        # -r -w: the container's root and cwd, not its mount namespace's.
        # nspawn moves the container's tree over "/" and chroot()s into it;
        # when nspawn itself runs in a chroot (a CI root, a fresh-machine
        # root), the namespace's root stays the host's "/", where setns()
        # alone would land us: systemctl then finds no /run/systemd/system
        # and says "System has not been booted with systemd as init system".
        r = run_cmd(["nsenter", "-t", str(self.init), "-m", "-p", "-r", "-w", "--"] + list(argv),
                    timeout=timeout)
        if check:
            assert r.returncode == 0, f"{' '.join(argv)}: {r.stdout}{r.stderr}"
        return r

    def wait_for_manager(self):
        deadline = time.monotonic() + BOOT_TIMEOUT
        while time.monotonic() < deadline:
            r = self.run("systemctl", "show", "-p", "Version", "--value", check=False)
            if r.returncode == 0 and r.stdout.strip():
                return
            time.sleep(0.1)
        raise AssertionError(f"systemd in the container did not answer: {self.output()}")

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)  # nspawn asks the container's systemd to halt
            try:
                self.p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(timeout=10)
        self.log.close()


def wait_until(pred, what, timeout=10.0):
    """support's wait_until, every 50 ms: most conditions here run a command
    in the container."""
    return procs.wait_until(pred, what, timeout, every=0.05)


def send(port, msg):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(msg, ("127.0.0.1", port))


def install(tmp_path, **overrides):
    """make install into a DESTDIR, with a config for a free loopback port
    (overrides: more config settings, `_` for `-`)."""
    dest = tmp_path / "root"
    r = run_cmd(["make", "-C", ROOT, "install", f"DESTDIR={dest}"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    port = free_udp_port()
    settings = {
        "listen": f"127.0.0.1:{port}",
        "sockets": "4",
        "balance": "random",
        "output": "file:/var/log/syslogrx/messages.log",
        "summary": "/var/log/syslogrx/summary.json",
    }
    settings.update({k.replace("_", "-"): v for k, v in overrides.items()})
    (dest / "etc/syslogrx/syslogrx.conf").write_text(
        "".join(f"{k} = {v}\n" for k, v in settings.items()))
    if "--config" not in run_cmd([binary("syslogrx"), "--help"]).stdout:
        # This syslogrx predates --config (issue 12's config file): the same
        # settings as flags, in a drop-in. With --config, the unit runs as installed.
        d = dest / UNIT_DIR / "syslogrx.service.d"
        d.mkdir()
        flags = " ".join(f"--{k} {v}" for k, v in settings.items())
        (d / "flags.conf").write_text(
            f"[Service]\nExecStart=\nExecStart=/usr/local/bin/syslogrx {flags}\n")
    return dest, port


def reload_reopens(c, port):
    """logrotate's move, then systemctl reload: a new output file, where the
    next message goes (and not to the moved one)."""
    c.run("mv", "/var/log/syslogrx/messages.log", "/var/log/syslogrx/messages.log.1")
    c.run("systemctl", "reload", "syslogrx")
    wait_until(lambda: c.run("test", "-e", "/var/log/syslogrx/messages.log",
                             check=False).returncode == 0, "a new output file after reload")
    send(port, b"<13>srx12c after reload")
    wait_until(lambda: "after reload" in c.read_log(), "the message in the reopened file")
    assert "after reload" not in c.read_log("messages.log.1")


@pytest.fixture
def installed(tmp_path):
    return install(tmp_path)


def test_unit_start_send_reload_restart_stop(installed):
    dest, port = installed
    c = Container(dest, f"srx12c-{uuid.uuid4().hex[:8]}")
    log = c.read_log
    try:
        c.start_unit(port)

        def ready_lines():
            return [l for l in c.journal().splitlines() if "ready on" in l]

        assert wait_until(ready_lines, "ready line")[0] == (
            f"syslogrx: ready on 127.0.0.1:{port}, writing raw lines to "
            "file:/var/log/syslogrx/messages.log")

        # Not root, and nothing left once started, in every thread.
        pid = c.run("systemctl", "show", "-p", "MainPID", "--value", "syslogrx").stdout.strip()
        st = c.run("sh", "-c", f"cat /proc/{pid}/task/*/status").stdout
        uids = {l.split()[1] for l in st.splitlines() if l.startswith("Uid:")}
        assert uids and "0" not in uids, st
        for field in ("CapEff", "CapPrm", "CapAmb"):
            vals = {l.split()[1] for l in st.splitlines() if l.startswith(field + ":")}
            assert vals == {"0000000000000000"}, (field, vals)

        send(port, b"<13>srx12c hello")
        wait_until(lambda: "<13>srx12c hello\n" in log(), "the message in the output file")

        # reload = SIGHUP: the output file is reopened (logrotate's move, then reload).
        reload_reopens(c, port)
        assert c.run("systemctl", "show", "-p", "MainPID", "--value",
                     "syslogrx").stdout.strip() == pid

        # restart through the fd store: the same sockets (inodes), never
        # closed, and the same BPF maps and tracer links (kernel ids), never
        # detached: what the new process holds is what the old one held.
        before = udp_inodes(port)
        assert len(before) == 4, before
        held = fd_identity(c.host_pid("syslogrx"))
        assert len(held[0]) >= 4 and held[1] and len(held[2]) == 3, held
        c.run("systemctl", "restart", "syslogrx")
        wait_until(lambda: len(ready_lines()) == 2, "a second ready line after restart")
        send(port, b"<13>srx12c after restart")
        wait_until(lambda: "after restart" in log(), "the message after restart")
        journal = c.journal()
        assert "(fd store)" in journal, journal
        assert udp_inodes(port) == before
        restarted = fd_identity(c.host_pid("syslogrx"))
        assert restarted[1] == held[1], ("BPF maps", held[1], restarted[1])
        assert restarted[2] == held[2], ("tracer links", held[2], restarted[2])
        assert restarted[0] >= {f"socket:[{i}]" for i in before}


        c.run("systemctl", "stop", "syslogrx")
        assert c.run("systemctl", "is-active", "syslogrx", check=False).stdout.strip() == \
            "inactive", c.run("journalctl", "-u", "syslogrx", "--no-pager", check=False).stdout
        assert c.run("systemctl", "show", "-p", "Result", "--value",
                     "syslogrx").stdout.strip() == "success"
        # The stop wrote the summary: the instance after the restart got one message.
        s = read_json_from(c, "/var/log/syslogrx/summary.json")
        assert s["totals"]["received"] == 1 and s["totals"]["written"] == 1, s["totals"]
        assert s["totals"]["kernel_drops"]["total"] == 0
        journal = c.journal()
        assert "Operation not permitted" not in journal, journal
    finally:
        c.stop()


def test_unit_upgrade_tells_systemd_the_new_mainpid(installed):
    """docs/operating.md: kill -USR2 under the unit. The new process is the
    service manager's child (clone(CLONE_PARENT)), the old one says MAINPID=
    and exits only once systemd has handled it (BARRIER=1). systemd follows:
    MainPID is the new process, which holds the same BPF maps and tracer
    links and receives; a reload (SIGHUP to the new MainPID) reopens its
    output; a stop ends with Result=success and the summary written.
    With a forked new process systemd 252 called it "not our child" (alien)
    and, at stop, sent SIGKILL right after SIGTERM without waiting for it
    (unit_kill_context does not wait for an alien main process)."""
    dest, port = installed
    c = Container(dest, f"srx12u-{uuid.uuid4().hex[:8]}")
    log = c.read_log

    def show(prop):
        return c.run("systemctl", "show", "-p", prop, "--value", "syslogrx").stdout.strip()

    try:
        c.start_unit(port)

        def took_over():
            return [l for l in c.journal().splitlines() if "took over" in l]

        def done():
            return [l for l in c.journal().splitlines() if "done after the hand-over" in l]
        wait_until(lambda: "ready on" in c.journal(), "ready line")
        held = fd_identity(c.host_pid("syslogrx"))
        pid = show("MainPID")
        c.run("kill", "-USR2", pid)
        line = wait_until(took_over, "the upgrade's 'took over' line")[0]
        assert "(upgrade)" in line, line
        new = line.split("pid ", 1)[1].split()[0]
        assert new != pid, line
        # The old process is gone (its last line is written after its
        # summary), and systemd did not take that for the service's end.
        assert f"pid {pid} done" in wait_until(done, "the old process's last line")[0]
        wait_until(lambda: c.run("test", "-d", f"/proc/{pid}", check=False).returncode,
                   "the old process reaped")
        assert show("MainPID") == new
        assert show("ActiveState") == "active" and show("SubState") == "running"
        # The new process is the manager's child (clone(CLONE_PARENT)), so
        # systemd does not call it "alien" and waits for it at stop.
        st = c.run("cat", f"/proc/{new}/status").stdout
        assert [l.split()[1] for l in st.splitlines() if l.startswith("PPid:")] == ["1"], st
        journal = c.run("journalctl", "-u", "syslogrx", "--no-pager").stdout
        assert "not our child" not in journal, journal
        upgraded = fd_identity(c.host_pid("syslogrx"))
        assert upgraded[1:] == held[1:], "the upgrade kept the maps and links"
        send(port, b"<13>srx12c after upgrade")
        wait_until(lambda: "after upgrade" in log(), "the message after the upgrade")

        # reload = SIGHUP to the new MainPID: the new process reopens the file.
        reload_reopens(c, port)
        assert show("MainPID") == new

        c.run("systemctl", "stop", "syslogrx")
        journal = c.run("journalctl", "-u", "syslogrx", "--no-pager", check=False).stdout
        assert show("ActiveState") == "inactive", journal
        assert show("Result") == "success", journal
        assert "SIGKILL" not in journal, journal
        # The new process's summary: the two messages it received after the upgrade.
        s = read_json_from(c, "/var/log/syslogrx/summary.json")
        assert s["totals"]["received"] == 2 and s["totals"]["written"] == 2, s["totals"]
        assert s["totals"]["kernel_drops"]["total"] == 0
        # The old process's own summary, beside it (it received nothing).
        old = read_json_from(c, f"/var/log/syslogrx/summary.json.{pid}")
        assert old["totals"]["received"] == 0, old["totals"]
    finally:
        c.stop()


def udp_inodes(port):
    """Inodes of the UDP sockets bound to port (the container shares our netns)."""
    return {int(f[9]) for f in udp_rows(port)}


def read_json_from(c, path):
    return json.loads(c.run("cat", path).stdout)


def test_unprivileged_unit_spreads_with_no_capability(installed):
    """syslogrx-unprivileged.service: a dynamic user in a user namespace of its
    own, an empty bounding set, no bpf() in its filter; it still spreads one
    flow over its 4 sockets (classic BPF) and counts drops (SO_MEMINFO)."""
    if userns_refused():  # PrivateUsers=yes: systemd gives the service one
        pytest.skip(userns_refused())
    dest, port = installed
    unit = "syslogrx-unprivileged"
    c = Container(dest, f"srx22-{uuid.uuid4().hex[:8]}")
    try:
        c.boot()
        c.run("systemctl", "start", unit)
        wait_for_udp_port(port, count=4)

        def ready_lines():
            r = c.run("journalctl", "-u", unit, "-o", "cat", "--no-pager", check=False)
            return [l for l in r.stdout.splitlines() if "ready on" in l]

        ready = wait_until(ready_lines, "ready line")[0]
        assert "random spread by classic BPF (no CAP_BPF" in ready, ready
        assert "drops from SO_MEMINFO" in ready, ready
        pid = c.run("systemctl", "show", "-p", "MainPID", "--value", unit).stdout.strip()
        st = c.run("sh", "-c", f"cat /proc/{pid}/task/*/status").stdout
        for field in ("CapEff", "CapPrm", "CapAmb", "CapBnd"):
            vals = {l.split()[1] for l in st.splitlines() if l.startswith(field + ":")}
            assert vals == {"0000000000000000"}, (field, vals)
        # A user namespace of its own, not the container's manager's.
        own = c.run("readlink", f"/proc/{pid}/ns/user").stdout
        assert own.startswith("user:[") and own != c.run("readlink", "/proc/1/ns/user").stdout

        sent = 4000
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(sent):
                s.sendto(b"<13>srx22 %d" % i, ("127.0.0.1", port))
        c.run("systemctl", "stop", unit)
        assert c.run("systemctl", "show", "-p", "Result", "--value",
                     unit).stdout.strip() == "success"
        s = read_json_from(c, "/var/log/syslogrx/summary.json")
        t = s["totals"]
        assert s["balancer"]["runs"] == "classic BPF"
        assert t["kernel_drops"]["reasons"] == "unavailable without CAP_BPF and CAP_PERFMON"
        assert t["received"] + t["kernel_drops"]["total"] + t["abandoned"] == sent, t
        # 4000 datagrams at random over 4: each socket's share is
        # binomial(4000, 1/4), mean 1000, sd 27; 500 is 18 sd away.
        for x in s["sockets"]:
            assert x["received"] + x["kernel_drops"]["total"] > 500, s["sockets"]
    finally:
        c.stop()


def test_unit_holds_a_disk_buffer(tmp_path):
    """The shipped unit with a disk buffer in its StateDirectory and a TCP
    output: the buffer's DIR is the service user's, 0700, under
    /var/lib/private (DynamicUser), every message arrives, MemoryMax is set."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        tport = lst.getsockname()[1]
        dest, port = install(tmp_path, output=f"tcp:127.0.0.1:{tport}",
                             disk_buffer="/var/lib/syslogrx/buffer",
                             disk_buffer_mode="reliable")
        c = Container(dest, f"srx19u-{uuid.uuid4().hex[:8]}")
        try:
            c.boot()
            c.run("systemctl", "start", "syslogrx")
            wait_for_udp_port(port, count=4)
            lst.settimeout(30)
            try:
                conn, _ = lst.accept()
            except socket.timeout:
                pytest.fail("no TCP connection from the unit in 30 s:\n" + c.run(
                    "journalctl", "-u", "syslogrx", "-o", "cat", "--no-pager",
                    check=False).stdout)
            n = 200
            for i in range(n):
                send(port, b"<13>srx19u m%d" % i)
            got, lines = b"", []
            conn.settimeout(30)
            while len(lines) < n:       # RFC 6587 octet counting: "LEN MSG"
                while b" " in got:
                    size, rest = got.split(b" ", 1)
                    if len(rest) < int(size):
                        break
                    lines.append(rest[:int(size)].decode())
                    got = rest[int(size):]
                if len(lines) >= n:
                    break
                try:
                    chunk = conn.recv(65536)
                except socket.timeout:
                    chunk = b""
                assert chunk, (lines[-3:], c.run("journalctl", "-u", "syslogrx", "-o", "cat",
                                                 "--no-pager", check=False).stdout)
                got += chunk
            assert sorted(lines) == sorted(f"<13>srx19u m{i}" for i in range(n))
            pid = c.run("systemctl", "show", "-p", "MainPID", "--value", "syslogrx").stdout.strip()
            uid = c.run("stat", "-c", "%u", f"/proc/{pid}").stdout.strip()
            st = c.run("stat", "-c", "%u %a %F", "/var/lib/private/syslogrx/buffer").stdout.split()
            assert st[0] == uid and st[1] == "700" and st[2] == "directory", (st, uid)
            mem = c.run("systemctl", "show", "-p", "MemoryMax", "--value", "syslogrx").stdout
            assert int(mem.strip()) == 256 << 20, mem
            c.run("systemctl", "stop", "syslogrx")
            assert c.run("systemctl", "show", "-p", "Result", "--value",
                         "syslogrx").stdout.strip() == "success"
            conn.close()
        finally:
            c.stop()


def test_logrotate_renames_and_the_unit_reopens(installed):
    """The shipped logrotate file, run by logrotate in the container against
    the running unit: messages.log is renamed, the postrotate's `systemctl
    kill --signal=HUP` makes syslogrx open a new one. Every line is in exactly
    one file: those written before the rotation in messages.log.1, those sent
    after it in messages.log, none lost, none twice, the same process."""
    dest, port = installed
    c = Container(dest, f"srxlr-{uuid.uuid4().hex[:8]}")
    try:
        c.start_unit(port)
        pid = c.run("systemctl", "show", "-p", "MainPID", "--value", "syslogrx").stdout.strip()
        n = 100
        for i in range(n):
            send(port, b"<13>srxlr before %d" % i)
        wait_until(lambda: c.read_log().count("srxlr before") == n, "the lines before", 30)

        # The installed file, as logrotate.d holds it: root's, 0644.
        conf = (dest / "etc/logrotate.d/syslogrx").read_text()
        c.run("sh", "-c", 'umask 022 && printf "%s" "$1" > /run/syslogrx.logrotate', "sh", conf)
        r = c.run("logrotate", "-v", "-f", "-s", "/run/logrotate.state", "/run/syslogrx.logrotate")
        assert "error" not in (r.stdout + r.stderr).lower(), r.stdout + r.stderr
        # logrotate returns after the postrotate's kill: the file comes back
        # once syslogrx has handled the SIGHUP.
        wait_until(lambda: c.run("test", "-e", "/var/log/syslogrx/messages.log",
                                 check=False).returncode == 0, "a new messages.log", 30)
        for i in range(n):
            send(port, b"<13>srxlr after %d" % i)
        wait_until(lambda: c.read_log().count("srxlr after") == n, "the lines after", 30)

        # Sorted: balance = random spreads the lines over 4 sockets (no --ordered).
        assert sorted(c.read_log("messages.log.1").splitlines()) == \
            sorted(f"<13>srxlr before {i}" for i in range(n))
        assert sorted(c.read_log().splitlines()) == sorted(f"<13>srxlr after {i}" for i in range(n))
        assert c.run("systemctl", "show", "-p", "MainPID", "--value",
                     "syslogrx").stdout.strip() == pid
        c.run("systemctl", "stop", "syslogrx")
        s = read_json_from(c, "/var/log/syslogrx/summary.json")
        assert s["totals"]["received"] == 2 * n and s["totals"]["written"] == 2 * n, s["totals"]
    finally:
        c.stop()


def test_unit_stop_during_an_outage_ends_before_timeout_stop_sec(tmp_path):
    """The shipped unit, its TCP destination down, no disk buffer: systemctl
    stop gives up after --stop-timeout's default and ends before the unit's
    TimeoutStopSec (no SIGKILL: Result=success); the journal names what was
    given up and the summary counts it, the books closed exactly."""
    dest, port = install(tmp_path, output=f"tcp:127.0.0.1:{free_tcp_port()}")
    unit = (dest / UNIT_DIR / "syslogrx.service").read_text()
    timeout_stop = int(unit.split("TimeoutStopSec=")[1].split()[0])
    c = Container(dest, f"srx40s-{uuid.uuid4().hex[:8]}")
    try:
        c.start_unit(port)
        n = 2000
        for i in range(n):
            send(port, b"<13>srx40s m%d" % i)
        t0 = time.monotonic()
        c.run("systemctl", "stop", "syslogrx", timeout=timeout_stop + 30)
        took = time.monotonic() - t0
        assert took < timeout_stop, f"systemctl stop took {took:.1f}s"
        print(f"systemctl stop during the outage: {took:.1f}s")
        assert c.run("systemctl", "show", "-p", "Result", "--value",
                     "syslogrx").stdout.strip() == "success", c.journal()
        t = read_json_from(c, "/var/log/syslogrx/summary.json")["totals"]
        assert n == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], t
        assert t["received"] == t["written"] + t["discarded"] + t["given_up"], t
        assert t["given_up"] > 0 and t["written"] == 0, t
        assert f"stop: gave up {t['given_up']} received message(s) not written" in c.journal()
    finally:
        c.stop()

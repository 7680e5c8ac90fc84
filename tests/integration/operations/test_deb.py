# SPDX-License-Identifier: MIT
"""The Debian package (make deb), as an operator gets it: `apt install` of
the .deb in a fresh Debian 12 root (lab/deb-root.sh: debootstrap's minbase
and systemd, the package's dependencies in its apt cache, no network),
booted with systemd as PID 1 under systemd-nspawn. The install starts the
unit with the shipped config as the package's system user; a datagram sent
to the shipped port lands byte for byte in the shipped output file; `apt
purge` leaves no unit, no process, no file of the package and nothing the
user owns, and keeps the user (as Debian keeps system users)."""
import glob
import os
import socket
import uuid

import pytest

from support.nspawn import BootedRoot
from support.paths import ROOT
from support.procs import run_cmd, wait_until
from support.reaper import descendants

# Serial: a whole systemd boots (tens of seconds on a loaded host) and apt
# installs a dozen packages in it.
pytestmark = pytest.mark.serial

# What the shipped dist/syslogrx.conf says.
PORT = 5514
OUTPUT = "/var/log/syslogrx/messages.log"
# Where the package and the service keep things: none may outlive a purge.
STATE = ["/etc/syslogrx", "/var/log/syslogrx", "/var/log/private/syslogrx",
         "/var/lib/syslogrx", "/var/lib/private/syslogrx",
         "/etc/systemd/system/multi-user.target.wants/syslogrx.service"]
DEB_MOUNT = "/srv/syslogrx-deb"
SHIPPED = ["/usr/bin/" + p for p in ("syslogrx", "udpdrops", "udpbalance")] + \
    [f"/usr/share/man/man8/{p}.8.gz" for p in ("syslogrx", "udpdrops", "udpbalance")] + \
    ["/lib/systemd/system/syslogrx.service", "/lib/systemd/system/syslogrx-unprivileged.service",
     "/usr/lib/sysusers.d/syslogrx.conf", "/etc/logrotate.d/syslogrx",
     "/usr/share/doc/syslogrx/copyright"]


@pytest.fixture(scope="module")
def deb_root():
    """make deb-root: the package (make deb) and the root, both as up to date
    as the tree; (root, the .deb's name)."""
    r = run_cmd(["make", "-C", ROOT, "deb-root"], timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    arch = run_cmd(["dpkg", "--print-architecture"]).stdout.strip()
    debs = glob.glob(os.path.join(ROOT, "build", "deb", f"syslogrx_*_{arch}.deb"))
    assert len(debs) == 1, debs
    return os.path.join(ROOT, "build", "deb-root"), os.path.basename(debs[0])


def named_syslogrx(c):
    """Every path in the container's tree with syslogrx in its name (the
    package's bind mount apart)."""
    r = c.run("find", "/", "-xdev", "-path", DEB_MOUNT, "-prune", "-o",
              "-name", "*syslogrx*", "-print", check=False)
    return sorted(r.stdout.split())


def send_inside(c, payload):
    """One datagram to 127.0.0.1:PORT from inside the container's network
    namespace (its loopback: nothing reaches the host's)."""
    code = ("import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); "
            f"s.sendto(bytes.fromhex(sys.argv[1]),('127.0.0.1',{PORT}))")
    r = run_cmd(["nsenter", "-t", str(c.init), "-n", "--", "/usr/bin/python3", "-c", code,
                 payload.hex()])
    assert r.returncode == 0, r.stderr


def test_apt_install_start_receive_purge(deb_root, tmp_path):
    root, deb = deb_root
    c = BootedRoot(root, f"srxdeb-{uuid.uuid4().hex[:8]}", tmp_path / "nspawn.log",
                   binds={os.path.dirname(os.path.join(ROOT, "build", "deb", deb)): DEB_MOUNT})
    try:
        c.boot()
        assert named_syslogrx(c) == []
        # apt, with what is in the root's cache alone (the container has no
        # network): a dependency the package does not declare is not there.
        r = c.run("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y",
                  f"{DEB_MOUNT}/{deb}", check=False, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr

        # The postinst enabled and started it (Type=notify: started = ready).
        def show(prop):
            return c.run("systemctl", "show", "-p", prop, "--value", "syslogrx").stdout.strip()
        journal = c.run("journalctl", "-u", "syslogrx", "-o", "cat", "--no-pager").stdout
        assert show("ActiveState") == "active", journal
        assert show("UnitFileState") == "enabled"
        assert c.run("test", "-e", "/etc/syslogrx/syslogrx.conf", check=False).returncode == 0
        conffiles = c.run("dpkg-query", "-W", "-f", "${Conffiles}", "syslogrx").stdout
        assert "/etc/syslogrx/syslogrx.conf" in conffiles, conffiles

        # As the package's system user (DynamicUser= takes the static one).
        pw = c.run("getent", "passwd", "syslogrx").stdout.split(":")
        assert pw[6].strip() in ("/usr/sbin/nologin", "/sbin/nologin"), pw
        assert int(pw[2]) < 1000, pw
        status = c.run("cat", f"/proc/{show('MainPID')}/status").stdout
        uids = [l.split()[1:] for l in status.splitlines() if l.startswith("Uid:")]
        assert uids == [[pw[2]] * 4], (uids, pw)

        payload = f"<13>Nov 28 06:00:00 debhost srxdeb[7]: from the package {uuid.uuid4().hex}"
        send_inside(c, payload.encode())
        wait_until(lambda: c.run("cat", OUTPUT, check=False).stdout, "the output file", timeout=20)
        assert c.run("cat", OUTPUT).stdout == payload + "\n"

        # What the package installed: the programs, their man pages, the units.
        files = [f for f in c.run("dpkg-query", "-L", "syslogrx").stdout.split()
                 if c.run("test", "-d", f, check=False).returncode == 1]
        assert set(SHIPPED) <= set(files), sorted(set(SHIPPED) - set(files))

        c.run("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "purge", "-y", "syslogrx",
              timeout=120)
        left = [f for f in files if c.run("test", "-e", f, check=False).returncode == 0]
        assert left == [], left
        assert c.run("dpkg-query", "-W", "-f", "${db:Status-Status}", "syslogrx",
                     check=False).stdout in ("", "not-installed")
        assert show("LoadState") == "not-found"
        running = [row for row in descendants(c.init).values() if row[3] == "syslogrx"]
        assert running == [], running
        for path in STATE:
            assert c.run("test", "-e", path, check=False).returncode == 1, path
        assert named_syslogrx(c) == []
        owned = c.run("find", "/", "-xdev", "-uid", pw[2], "-print").stdout
        assert owned == "", owned
        # Kept: Debian leaves a system user in place at purge.
        assert c.run("getent", "passwd", "syslogrx", check=False).returncode == 0
    finally:
        c.stop()

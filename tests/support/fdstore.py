# SPDX-License-Identifier: MIT
"""A stand-in for systemd's file descriptor store (FileDescriptorStoreMax=):
it takes what syslogrx sends with sd_notify (FDSTORE=1, FDNAME=, SCM_RIGHTS
to $NOTIFY_SOCKET) and starts the next process with it (LISTEN_FDS,
LISTEN_FDNAMES, LISTEN_PID)."""
import os
import socket
import sys


STORE_BASE = 200        # where the stand-in keeps the fds before passing them


class FdStore:
    """What systemd does with FileDescriptorStoreMax=: keep what the service
    sends, by name (a second fd under a stored name replaces nothing)."""

    def __init__(self, tmp_path):
        self.path = str(tmp_path / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.fds, self.ready = {}, 0

    def collect(self, timeout=30, until_ready=True):
        """Takes messages until READY=1 (or, until_ready=False, until none
        comes within the timeout)."""
        self.sock.settimeout(timeout)
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 4)
            except socket.timeout:
                if until_ready:
                    raise
                return
            fields = dict(l.split("=", 1) for l in msg.decode().splitlines() if "=" in l)
            if fields.get("FDSTORE") == "1":
                name = fields["FDNAME"]
                for fd in fds:
                    if name in self.fds:
                        os.close(fd)
                    else:
                        self.fds[name] = fd
            elif fields.get("FDSTOREREMOVE") == "1":
                os.close(self.fds.pop(fields["FDNAME"]))
            if fields.get("READY") == "1":
                self.ready += 1
                return

    def restart_argv(self):
        """A wrapper that puts the stored fds at 3.. and sets LISTEN_PID to
        the pid syslogrx will have (its own, kept by exec). Shells do not do:
        dash takes no fd above 9, bash closes those above 9 at exec."""
        names = sorted(self.fds)
        for i, name in enumerate(names):
            os.dup2(self.fds[name], STORE_BASE + i)
        self.passed = [STORE_BASE + i for i in range(len(names))]
        script = ("import os, sys\n"
                  f"for i in range({len(names)}):\n"
                  f"    os.dup2({STORE_BASE} + i, 3 + i)\n"
                  f"    os.close({STORE_BASE} + i)\n"
                  "os.environ['LISTEN_PID'] = str(os.getpid())\n"
                  "os.execv(sys.argv[1], sys.argv[1:])\n")
        env = {"LISTEN_FDS": str(len(names)), "LISTEN_FDNAMES": ":".join(names),
               "NOTIFY_SOCKET": self.path}
        return [sys.executable, "-c", script], env, tuple(STORE_BASE + i for i in range(len(names)))

    def close(self):
        # The copies made for the restart too: held by pytest they would keep
        # the tracer's links attached after the test (the session check).
        for fd in list(self.fds.values()) + getattr(self, "passed", []):
            os.close(fd)
        self.sock.close()

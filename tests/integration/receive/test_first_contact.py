"""What a newcomer meets first: the build without clang, `syslogrx --sockets 1`,
and a message sent to a syslogrx started with no flags appearing on its stdout."""
import os
import signal
import socket
import subprocess
import sys

from support.paths import binary, ROOT
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import log_text, Proc, read_json, run_cmd
from support.reaper import netns_name


def test_make_without_clang_says_make_deps():
    r = run_cmd(["make", "-C", ROOT, "CLANG=srx12c-no-such-clang"], timeout=60)
    assert r.returncode != 0
    assert "srx12c-no-such-clang is not installed: run `make deps`" in r.stderr, r.stderr
    assert "No such file or directory" not in r.stderr + r.stdout


def path_without_clang(tmp_path):
    """A PATH holding every program of this one but clang: what a fresh
    machine has before `make deps`."""
    farm = tmp_path / "bin"
    farm.mkdir()
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name.startswith("clang") or (farm / name).exists():
                continue
            target = os.path.join(d, name)
            if os.path.isfile(target) and os.access(target, os.X_OK):
                (farm / name).symlink_to(target)
    return str(farm)


def test_run_and_test_reach_deps_without_clang(tmp_path):
    """`make run` and `make test` install clang through `deps`, so the
    parse-time check must not stop them first; a bare `make` still stops."""
    env = dict(os.environ, PATH=path_without_clang(tmp_path))
    assert run_cmd(["sh", "-c", "command -v clang"], env=env).returncode != 0
    for goal in ("run", "test"):
        # The dry run prints deps' recipe (what installs clang), then its
        # sub-make for the build stops where the real one would find clang.
        r = run_cmd(["make", "-n", "-C", ROOT, goal], env=env, timeout=60)
        assert "dpkg-query" in r.stdout and "apt-get install" in r.stdout, r.stdout + r.stderr
        assert r.stdout.index("apt-get install") < r.stdout.index("make all"), r.stdout
        assert "[Makefile:" in r.stderr and f": {goal}] Error" in r.stderr, r.stderr
    r = run_cmd(["make", "-n", "-C", ROOT], env=env, timeout=60)
    assert r.returncode != 0 and "clang is not installed: run `make deps`" in r.stderr, r.stderr


def test_one_socket_alone_works(tmp_path):
    port = free_udp_port()
    summary = tmp_path / "s.json"
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "1",
                 "--duration", "0.3", "--summary", str(summary)], timeout=20)
    assert r.returncode == 0, r.stderr
    c = read_json(summary)["config"]
    assert c["sockets"] == 1 and c["threads"] == 1, c


def test_threads_given_are_not_lowered():
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--sockets", "1", "--threads", "2", "--duration", "0.3"], timeout=20)
    assert r.returncode == 2
    assert "--threads 2 is more than --sockets 1" in r.stderr


def test_default_output_shows_the_message_and_says_so(procs):
    """No --output: the message is on stdout, and the first line said it would be."""
    port = free_udp_port()
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{port}"])
    procs.append(rx)
    ready = log_text(rx.p.stderr.readline().decode())
    assert ready == f"syslogrx: ready on 127.0.0.1:{port}, writing raw lines to stdout\n"
    wait_for_udp_port(port, count=4)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in (b"<13>Nov 23 01:00:00 host app: hello", b"<14>second"):
            s.sendto(m, ("127.0.0.1", port))
    rc, out, err = rx.stop(signal.SIGINT)
    assert rc == 0, err
    assert sorted(out.splitlines()) == ["<13>Nov 23 01:00:00 host app: hello", "<14>second"]


def test_no_flag_listens_on_127_0_0_1_5514(procs):
    """No flag at all: 127.0.0.1:5514, raw lines on stdout. In a network
    namespace of its own, where 5514 is surely free and the message comes
    from inside it."""
    ns = netns_name("default-listen")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        rx = Proc(["ip", "netns", "exec", ns, binary("syslogrx")])
        procs.append(rx)
        ready = log_text(rx.p.stderr.readline().decode())
        assert ready == "syslogrx: ready on 127.0.0.1:5514, writing raw lines to stdout\n"
        subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                        "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                        ".sendto(b'<13>default', ('127.0.0.1', 5514))"], check=True, timeout=30)
        line = rx.p.stdout.readline().decode()
        rc, out, err = rx.stop(signal.SIGINT)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert rc == 0, err
    assert line + out == "<13>default\n"


def test_null_output_says_it_discards():
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--output", "null",
                 "--duration", "0.3"], timeout=20)
    assert r.returncode == 0, r.stderr
    assert log_text(r.stderr).splitlines()[0] == (f"syslogrx: ready on 127.0.0.1:{port}, "
                                        "discarding messages (--output null)")

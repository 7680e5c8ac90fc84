"""The container image (dist/Containerfile) run with podman: with every
capability dropped, as its non-root user, on the host network, one flow is
spread over 4 sockets and every drop is counted; with CAP_BPF and
CAP_PERFMON (and dist/seccomp-ebpf.json) the eBPF balancer and the tracer
run; `podman stop` drains; a restart loses only what arrived while no
socket was bound, and that is counted too (the kernel's NoPorts). SC4S's
env_file names the listeners (the image's own address only where nothing
does), and the quadlet's container forwards to a syslog-ng standing in for
SC4S.

The image is built once per session by `make image` from build/'s binaries
(IMAGE_BINARIES=tree: no compiler in the build), on lab/container-base.sh's
base, and once more by the test that checks it leaves no <none> image;
podman uses the project's lab/containers.conf. Every container a test starts is removed on
every path (podman rm -f in the `containers` fixture): they are conmon's
children, not pytest's, and conftest's reaper cannot see them.

The spread checks cannot flake: classic BPF draws a fresh random number per
datagram, so what one socket is offered out of 60000 is binomial(60000, 1/4):
the 10 % tolerance (1500) is 14 standard deviations (sqrt(15000 * 3/4) = 106)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

from support import quadlet
from support.paths import binary, ROOT
from support.ports import free_tcp_port, free_udp_port
from support.procnet import udp_rows
from support.procs import read_json, wait_until
from support.reaper import new_netns
from support.syslog_ng import SyslogNgServer

# podman's storage and image store are the machine's (a second build or
# `podman rm` beside this one races it), and the image is built once per
# session: the podman tests run in one process, one at a time (conftest).
pytestmark = pytest.mark.podman

CONF = os.path.join(ROOT, "lab", "containers.conf")
ENV = dict(os.environ, CONTAINERS_CONF=CONF)
# The session's own tag: another checkout's tests on this machine build theirs.
TAG = f"localhost/syslogrx:test-{os.getpid()}"
UID = 10514                      # the image's user (dist/Containerfile)
VOL = "/var/lib/syslogrx/summary"
SECCOMP = os.path.join(ROOT, "dist", "seccomp-ebpf.json")
QUADLET = os.path.join(ROOT, "dist", "syslogrx.container")
CONTAINER_CONF = os.path.join(ROOT, "dist", "syslogrx-container.conf")
EBPF_CAPS = "CAP_BPF,CAP_PERFMON"
CAP_PERFMON, CAP_BPF = 38, 39   # linux/capability.h
REASONS = "unavailable without CAP_BPF and CAP_PERFMON"


def podman(*args, timeout=120, check=True):
    r = subprocess.run(["podman", *args], capture_output=True, text=True, env=ENV,
                       timeout=timeout)
    assert r.returncode == 0 or not check, f"podman {' '.join(args)}: {r.stderr}"
    return r


def in_chroot():
    """A chroot (fresh-machine's, a CI service's) whose / is not init's."""
    try:
        return os.stat("/") != os.stat("/proc/1/root/")
    except PermissionError:
        return False


# The untagged images podman had before the session's first `make image`.
UNTAGGED_BEFORE = set()


def make_image():
    """`make image` as an operator runs it, from build/'s binaries."""
    r = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "image", f"IMAGE={TAG}",
                        "IMAGE_BINARIES=tree"], capture_output=True, text=True, env=ENV,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr


def image_id(name):
    return podman("image", "inspect", "-f", "{{.Id}}", name).stdout.strip()


def untagged_images():
    return set(podman("images", "-q", "--no-trunc", "--filter", "dangling=true").stdout.split())


@pytest.fixture(scope="session")
def image(pytestconfig):
    """TAG from build/ by `make image`, its size printed; removed at the end."""
    if shutil.which("podman") is None:
        pytest.fail("podman is not installed: run `make deps`")
    for name in ("syslogrx", "sysloggen", "udpdrops", "udpbalance"):
        binary(name)   # built, or a clear failure
    r = subprocess.run([os.path.join(ROOT, "lab", "container-base.sh"),
                        "docker.io/library/debian:bookworm", "localhost/syslogrx-base:bookworm"],
                       capture_output=True, text=True, env=ENV, timeout=900)
    if r.returncode != 0 and in_chroot():
        pytest.skip(f"podman cannot make a base image inside this chroot: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    base = r.stdout.strip()
    if in_chroot():
        probe = podman("run", "--rm", "--network=host", base, "true", check=False)
        if probe.returncode != 0:
            pytest.skip(f"podman cannot run a container inside this chroot: {probe.stderr.strip()}")
    t0 = time.monotonic()
    UNTAGGED_BEFORE.update(untagged_images())
    make_image()
    size = podman("image", "ls", "--format", "{{.Size}}", TAG).stdout.strip()
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n  IMAGE    {TAG} ({base}): {size}, built in {time.monotonic() - t0:.1f} s")
    yield TAG
    podman("rmi", TAG, check=False)


@pytest.fixture
def containers():
    """Names of the containers a test starts: removed on every path."""
    names = []
    yield names
    for n in names:
        podman("rm", "-f", "-t", "0", n, check=False)
    left = [n for n in names if podman("container", "exists", n, check=False).returncode == 0]
    assert not left, f"containers left behind: {left}"


@pytest.fixture
def vol(tmp_path):
    """A host folder the image's user writes into, mounted at VOL."""
    d = tmp_path / "vol"
    d.mkdir()
    os.chown(d, UID, UID)
    return d


def run(containers, image, vol, *args, net="host", caps=(), opts=()):
    """The image, detached, every capability dropped but caps, the volume
    mounted, syslogrx's flags args; waits for its ready line."""
    name = f"srx-test-{uuid.uuid4().hex[:12]}"
    containers.append(name)
    argv = ["run", "-d", "--name", name, f"--network={net}", "--cap-drop=all",
            "-v", f"{vol}:{VOL}"]
    if caps:
        argv.append(f"--cap-add={caps}")
    podman(*argv, *opts, image, *args)
    wait_ready(name, 1)
    return name


def wait_ready(name, times):
    """Until the container's log has `times` ready lines (a restart adds one)."""
    def ready():
        r = podman("logs", name, check=False)
        log = r.stdout + r.stderr
        if podman("inspect", "-f", "{{.State.Running}}", name).stdout.strip() != "true":
            raise AssertionError(f"{name} exited:\n{log}")
        return log.count("ready on") >= times and log
    return wait_until(ready, f"{name}'s ready line", timeout=60)


def stop(name):
    """podman stop (SIGTERM, the drain); its exit code and log."""
    podman("stop", "-t", "60", name, timeout=90)
    code = int(podman("inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip())
    r = podman("logs", name)
    return code, r.stdout + r.stderr


def one_flow(port, count, host="127.0.0.1"):
    """sysloggen from the host, one source, as fast as it goes; its JSON."""
    r = subprocess.run([binary("sysloggen"), "--target", f"{host}:{port}", "--rate", "0",
                        "--count", str(count), "--size", "200", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def container_pid(name):
    return int(podman("inspect", "-f", "{{.State.Pid}}", name).stdout.strip())


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)


def within_tenth(counts, total, n):
    return all(abs(c - total / n) <= 0.1 * total / n for c in counts)


# Slow workers (2 x 50 us a message) and asked-for small buffers: one flow
# sent as fast as it goes overruns them, so the kernel drops and the drop
# counts are put to the test, not zeros.
LOAD = ["--sockets", "4", "--threads", "2", "--cost-ns", "50000", "--rcvbuf", "212992",
        "--output", "null", "--sequences", "--summary", f"{VOL}/s.json"]


def load_and_stop(name, port, vol):
    """60000 datagrams of one flow, the kernel's drop counts per socket
    inode once they are sent, then podman stop; (sysloggen's JSON, the
    counts, the summary from the volume)."""
    gen = one_flow(port, 60000)
    procnet = {int(f[9]): int(f[12]) for f in udp_rows(port)}
    assert len(procnet) == 4, procnet
    code, log = stop(name)
    assert code == 0, log
    return gen, procnet, read_json(vol / "s.json")


def check_books(s, gen, procnet):
    t = s["totals"]
    assert t["kernel_drops"]["total"] > 0, t
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], (gen, t)
    assert s["loss"]["gaps_equal_kernel_drops"] is True, s["loss"]
    offered = []
    for x in s["sockets"]:
        # The summary's count per socket is the kernel's own in /proc/net/udp.
        assert x["kernel_drops"]["total"] == procnet[x["inode"]], (x, procnet)
        offered.append(x["received"] + x["abandoned"] + x["kernel_drops"]["total"])
    assert sum(offered) == gen["datagrams"]
    assert within_tenth(offered, gen["datagrams"], 4), offered


def test_make_image_leaves_no_untagged_image(image):
    """`make image`, then again: neither its build stage nor the image the
    tag named before is left behind as a <none> image, and no cache of the
    stages is kept (the second build is a new image, not the first one
    found in a cache)."""
    old = image_id(image)
    make_image()
    assert image_id(image) != old, "the second build came from a cache"
    assert podman("image", "exists", old, check=False).returncode == 1, "the old image is kept"
    left = untagged_images() - UNTAGGED_BEFORE
    assert not left, podman("images", "--filter", "dangling=true").stdout


def test_no_capability_non_root_spreads_one_flow(image, containers, vol):
    port = free_udp_port()
    name = run(containers, image, vol, "--listen", f"127.0.0.1:{port}", *LOAD)
    log = wait_ready(name, 1)
    assert "random spread by classic BPF (no CAP_BPF" in log, log
    assert "drops from SO_MEMINFO" in log, log
    # The process itself: the image's user, no capability in any set.
    st = status(container_pid(name))
    assert st["Uid"].split()[:2] == [str(UID), str(UID)], st["Uid"]
    for s in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(st[s], 16) == 0, (s, st[s])
    gen, procnet, s = load_and_stop(name, port, vol)
    assert s["balancer"]["runs"] == "classic BPF", s["balancer"]
    assert s["totals"]["kernel_drops"]["reasons"] == REASONS
    assert s["totals"]["kernel_drops_source"] == "SO_MEMINFO"
    check_books(s, gen, procnet)


def test_ebpf_capabilities_run_the_balancer_and_the_tracer(image, containers, vol):
    port = free_udp_port()
    name = run(containers, image, vol, "--listen", f"127.0.0.1:{port}", *LOAD,
               caps=EBPF_CAPS, opts=["--security-opt", f"seccomp={SECCOMP}"])
    log = wait_ready(name, 1)
    assert "classic BPF" not in log and "SO_MEMINFO" not in log, log
    # The image's user, given exactly the two capabilities (its bounding
    # set; syslogrx gives up its effective ones once the programs are in).
    st = status(container_pid(name))
    assert st["Uid"].split()[:2] == [str(UID), str(UID)], st["Uid"]
    assert int(st["CapBnd"], 16) == (1 << CAP_BPF) | (1 << CAP_PERFMON), st["CapBnd"]
    gen, procnet, s = load_and_stop(name, port, vol)
    assert s["balancer"]["runs"] == "eBPF", s["balancer"]
    t = s["totals"]
    # The tracer counted them, by reason (every drop here is a full buffer),
    # and its count per socket is SO_MEMINFO's (and /proc's, check_books).
    n = t["kernel_drops"]["total"]
    assert t["kernel_drops"] == {"total": n, "SOCKET_RCVBUFF": n}, t
    assert t["kernel_drops_match_so_meminfo"] is True, t
    for x in s["sockets"]:
        assert x["steered"] is not None, x
    check_books(s, gen, procnet)


@pytest.mark.parametrize("caps,seccomp,says", [
    ("CAP_BPF,CAP_PERFMON", False, "random spread by classic BPF (no CAP_BPF"),
    ("CAP_BPF", True, "loading BPF needs CAP_BPF and CAP_PERFMON"),
    ("CAP_PERFMON", True, "random spread by classic BPF (no CAP_BPF"),
], ids=["stock-seccomp", "no-perfmon", "no-bpf"])
def test_less_than_both_capabilities_and_the_profile_is_not_ebpf(image, containers, vol, caps,
                                                                 seccomp, says):
    """What the eBPF path needs, measured: each of the three taken away
    leaves the tracer (or the balancer and the tracer) out, said at start.
    Without the profile, podman's stock seccomp answers bpf() with EPERM."""
    opts = ["--security-opt", f"seccomp={SECCOMP}"] if seccomp else []
    name = run(containers, image, vol, "--listen", f"127.0.0.1:{free_udp_port()}",
               "--output", "null", caps=caps, opts=opts)
    log = wait_ready(name, 1)
    assert says in log, log


def test_podman_stop_drains_every_received_message_into_the_output(image, containers, vol):
    """The output is capped (--output-rate 4000/s): 8000 messages take at
    least 2 s to write, far longer than they take to arrive, so SIGTERM
    finds most of them received and not yet written; the drain writes them
    all before the summary."""
    port = free_udp_port()
    name = run(containers, image, vol, "--listen", f"127.0.0.1:{port}", "--sockets", "4",
               "--output-rate", "4000", "--output", f"file:{VOL}/out.log",
               "--summary", f"{VOL}/s.json")
    gen = one_flow(port, 8000)
    code, log = stop(name)
    assert code == 0, log
    s = read_json(vol / "s.json")
    t = s["totals"]
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], t
    lines = (vol / "out.log").read_bytes().splitlines()
    assert len(lines) == t["received"] == t["written"], (len(lines), t)
    # Each line once: the sequence numbers sysloggen stamped, none twice.
    seqs = [m.group(1) for m in (re.search(rb"seq=(\d+)", l) for l in lines) if m]
    assert len(seqs) == len(set(seqs)), "a message written twice"


SENDER = r"""
import signal, socket, sys, time
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # unconnected: no ECONNREFUSED
port, rate, most = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t0, n = time.monotonic(), 0
while not stop and n < most:
    s.sendto(b"<13>restart seq=%d" % n, ("127.0.0.1", port))
    n += 1
    if n % 500 == 0:
        print(n, flush=True)
        late = t0 + n / rate - time.monotonic()
        if late > 0:
            time.sleep(late)
print("total", n, flush=True)
"""


def no_ports(ns):
    """Udp NoPorts in the namespace: datagrams for a port no socket had."""
    r = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                       capture_output=True, text=True, timeout=30, check=True)
    rows = [l.split() for l in r.stdout.splitlines() if l.startswith("Udp:")]
    return int(rows[1][rows[0].index("NoPorts")])


def test_restart_loses_only_what_no_socket_was_bound_for(image, containers, vol, netns):
    """A network namespace of the test's own, so that its NoPorts counts
    this sender's datagrams and nobody else's; the container joins it."""
    port = 5514
    name = run(containers, image, vol, "--listen", f"127.0.0.1:{port}", "--sockets", "4",
               "--output", f"file:{VOL}/out.log", "--summary", f"{VOL}/s.json",
               net=f"ns:/run/netns/{netns}")
    before = no_ports(netns)
    sender = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, "-c", SENDER,
                               str(port), "20000", "2000000"],
                              stdout=subprocess.PIPE, text=True)
    sent = [0]
    progress = threading.Condition()

    def follow():
        for line in sender.stdout:
            with progress:
                sent[0] = int(line.split()[-1])
                progress.notify_all()
    reader = threading.Thread(target=follow, daemon=True)
    reader.start()

    def until_sent(more):
        goal = sent[0] + more
        with progress:
            assert progress.wait_for(lambda: sent[0] >= goal or sender.poll() is not None, 60)
        assert sent[0] >= goal, "the sender stopped early"
    try:
        until_sent(5000)
        code, log = stop(name)
        assert code == 0, log
        first = read_json(vol / "s.json")
        os.rename(vol / "s.json", vol / "s1.json")
        until_sent(2000)          # all of these find no socket
        podman("start", name)
        wait_ready(name, 2)
        until_sent(5000)
    finally:
        sender.send_signal(signal.SIGTERM)
        sender.wait(timeout=30)
        reader.join(timeout=30)
    total = sent[0]
    lost = no_ports(netns) - before
    # The datagrams in flight when the sender stopped have been read: the
    # queues are empty before the second stop.
    wait_until(lambda: all(int(f[4].split(":")[1], 16) == 0
                           for f in udp_rows(port, pid=container_pid(name))),
               "the queues empty")
    code, log = stop(name)
    assert code == 0, log
    second = read_json(vol / "s.json")
    t1, t2 = first["totals"], second["totals"]
    assert lost >= 2000, lost
    assert total == (t1["received"] + t1["kernel_drops"]["total"] + t1["abandoned"]
                     + t2["received"] + t2["kernel_drops"]["total"] + t2["abandoned"]
                     + lost), (total, lost, t1, t2)
    # Every received message is in the output once; the missing ones are
    # exactly the counted ones.
    seqs = [int(m.group(1)) for m in re.finditer(rb"restart seq=(\d+)",
                                                 (vol / "out.log").read_bytes())]
    assert len(seqs) == len(set(seqs)) == t1["received"] + t2["received"]
    assert total - len(seqs) == (lost + t1["kernel_drops"]["total"] + t2["kernel_drops"]["total"]
                                 + t1["abandoned"] + t2["abandoned"])


def test_sc4s_env_file_through_podman_env_file(image, containers, vol, tmp_path):
    """SC4S's env_file as SC4S's own unit hands it over (podman --env-file):
    the entrypoint gives its UDP settings to syslogrx's --env-file, which
    maps them (the port to 0.0.0.0:PORT, the sockets) and lists the others
    as ignored. With a read-only root, as the DaemonSet runs it: the file
    goes to /tmp (podman's tmpfs there)."""
    port = free_udp_port()
    env_file = tmp_path / "env_file"
    env_file.write_text(f"SC4S_LISTEN_DEFAULT_UDP_PORT={port}\n"
                        "SC4S_SOURCE_LISTEN_UDP_SOCKETS=3\n"
                        "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://splunk.example:8088\n")
    name = run(containers, image, vol, "--output", "null", "--summary", f"{VOL}/s.json",
               opts=["--env-file", str(env_file), "--read-only"])
    log = wait_ready(name, 1)
    assert f"ready on 0.0.0.0:{port}" in log, log
    assert "SC4S_SOURCE_LISTEN_UDP_SOCKETS=3 -> --sockets 3" in log, log
    assert len(list(udp_rows(port))) == 3
    code, log = stop(name)
    assert code == 0, log
    ef = read_json(vol / "s.json")["config"]["env_file"]
    # The receive buffer the file leaves unset is SC4S's default (no line).
    assert {(m["name"], m["flag"], m["line"] is None) for m in ef["mapped"]} == {
        ("SC4S_LISTEN_DEFAULT_UDP_PORT", "--listen", False),
        ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "--sockets", False),
        ("SC4S_SOURCE_UDP_SO_RCVBUFF", "--rcvbuf", True)}
    assert ef["ignored"] == ["SC4S_DEST_SPLUNK_HEC_DEFAULT_URL"], ef


def test_syslogrx_variables_and_the_default_address(image, containers, vol, netns):
    """SYSLOGRX_NAME=VALUE is the setting `name = value` (a --config file the
    entrypoint writes; the command line still wins). With no address named
    anywhere, the image listens on 0.0.0.0:5514 (in the test's own network
    namespace: the host's 5514 may be anybody's)."""
    port = free_udp_port()
    name = run(containers, image, vol, "--output", "null", "--threads", "1",
               opts=["-e", f"SYSLOGRX_LISTEN=127.0.0.1:{port}", "-e", "SYSLOGRX_SOCKETS=2",
                     "-e", "SYSLOGRX_THREADS=2"])
    log = wait_ready(name, 1)
    assert f"ready on 127.0.0.1:{port}" in log, log
    assert len(list(udp_rows(port))) == 2
    # SYSLOGRX_THREADS=2 is under the command line's --threads 1.
    pid = container_pid(name)
    workers = [t for t in os.listdir(f"/proc/{pid}/task")
               if open(f"/proc/{pid}/task/{t}/comm").read().startswith("worker")]
    assert len(workers) == 1, workers
    code, log = stop(name)
    assert code == 0, log

    name = run(containers, image, vol, "--output", "null", net=f"ns:/run/netns/{netns}")
    log = wait_ready(name, 1)
    assert "ready on 0.0.0.0:5514" in log, log
    assert len(list(udp_rows(5514, pid=container_pid(name)))) == 4


@pytest.mark.parametrize("how", ["mounted", "podman-env-file"])
def test_an_env_file_with_a_vendor_port_keeps_sc4s_default_listener(image, containers, vol,
                                                                    tmp_path, netns, how):
    """An env_file that names only the ASA's port: SC4S listens there and on
    its DEFAULT port, 514, and so does the container; the image's own
    0.0.0.0:5514 is for a container nothing names a listener for. Mounted
    and named with --env-file (the quadlet's way), the mapping lines cite the
    operator's file and line. In the test's network namespace: 514 and 5516
    are fixed ports."""
    env_file = tmp_path / "env_file"
    env_file.write_text("# the ASA only\nSC4S_LISTEN_CISCO_ASA_UDP_PORT=5516\n")
    if how == "mounted":
        args, opts = ["--env-file", "/opt/sc4s/env_file"], ["-v", f"{env_file}:/opt/sc4s/env_file:ro"]
    else:
        args, opts = [], ["--env-file", str(env_file)]
    name = run(containers, image, vol, *args, "--output", "null", net=f"ns:/run/netns/{netns}",
               caps="CAP_NET_BIND_SERVICE", opts=opts)
    log = wait_ready(name, 1)
    assert "ready on default=0.0.0.0:514, cisco_asa=0.0.0.0:5516," in log, log
    pid = container_pid(name)
    assert len(list(udp_rows(514, pid=pid))) == len(list(udp_rows(5516, pid=pid))) == 4
    assert not list(udp_rows(5514, pid=pid))
    assert "overridden" not in log, log
    if how == "mounted":
        assert ("--env-file /opt/sc4s/env_file:2: SC4S_LISTEN_CISCO_ASA_UDP_PORT=5516 -> "
                "--listen cisco_asa=0.0.0.0:5516\n") in log, log


def test_quadlet_reads_the_env_file_and_the_config_and_forwards_to_sc4s(image, containers, vol,
                                                                        tmp_path):
    """dist/syslogrx.container run as its generator makes it (podman 4.3 has
    none), its host files the test's: SC4S's env_file names the listener (a
    free port), dist/syslogrx-container.conf the output, SC4S's 601 moved to
    a free port where a syslog-ng stands in for SC4S (no-parse: $MSG is the
    bytes as they came). Every datagram arrives there byte for byte, once."""
    uport, tport = free_udp_port(), free_tcp_port()
    env_file = tmp_path / "env_file"
    env_file.write_text(f"# SC4S\nSC4S_LISTEN_DEFAULT_UDP_PORT={uport}\n")
    with open(CONTAINER_CONF) as f:
        shipped = f.read()
    assert "\noutput = tcp:127.0.0.1:601\n" in shipped, shipped
    conf = tmp_path / "syslogrx.conf"
    conf.write_text(shipped.replace("tcp:127.0.0.1:601", f"tcp:127.0.0.1:{tport}"))
    buffer = tmp_path / "buffer"
    buffer.mkdir()
    os.chown(buffer, UID, UID)
    name = f"srx-test-{uuid.uuid4().hex[:12]}"
    containers.append(name)
    opts, named, args = quadlet.podman_run_args(QUADLET, name, {
        "/opt/sc4s/env_file": str(env_file),
        "/etc/syslogrx/syslogrx-container.conf": str(conf),
        "/var/lib/syslogrx/buffer": str(buffer), VOL: str(vol)})
    assert named.startswith("localhost/syslogrx:"), named
    sng = SyslogNgServer(str(tmp_path / "sng"), tport, 'transport("tcp") flags(no-parse)',
                         "${MSG}\\n").start()
    try:
        podman("run", "-d", *opts, image, *args)
        log = wait_ready(name, 1)
        assert (f"--env-file /opt/sc4s/env_file:2: SC4S_LISTEN_DEFAULT_UDP_PORT={uport} -> "
                f"--listen 0.0.0.0:{uport}\n") in log, log
        sent = [b"<134>%%ASA-6-302013: Built outbound TCP connection quadlet=%d" % i
                for i in range(3)]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for m in sent:
                s.sendto(m, ("127.0.0.1", uport))
        got = sng.wait_lines(3)
        code, log = stop(name)
        assert code == 0, log
    finally:
        sng.stop()
    assert sorted(got) == sorted(sent), got
    t = read_json(vol / "summary.json")["totals"]
    assert t["received"] == t["written"] == 3, t

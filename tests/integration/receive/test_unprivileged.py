"""No privilege at all (issue 22): --balance random spreads one flow with a
classic BPF program (SO_ATTACH_REUSEPORT_CBPF), drops per socket come from
SO_MEMINFO, the books close, a live resize keeps the program's N and the
group's join order in step, and udpbalance gives an existing receiver the
same spread from a process of its own uid.

Two ways to have nothing: uid 65534 with an empty bounding set (setpriv), and
root of an unprivileged user namespace with its own network namespace
(unshare as uid 65534), where capabilities exist but count for nothing
outside it: loading eBPF needs CAP_BPF in the initial namespace.

Why the spread checks cannot flake: classic BPF draws a fresh random number
per datagram (SKF_AD_RANDOM, get_random_u32), so what one socket is offered
(received + dropped) out of D datagrams is binomial(D, 1/N): mean D/N,
standard deviation below sqrt(D/N). The 10 % tolerance, 0.1 * D/N, is thus
more than 0.1 * sqrt(D/N) standard deviations: every check here has
D/N >= 5000, so more than 7 (10 to 12 for most): a miss once in 10^11 runs
or fewer, per socket."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from support.load import send_udp
from support.paths import binary, ROOT
from support.ports import free_udp_port
from support.procnet import udp_rows, wait_for_udp_port
from support.procs import Proc, read_json, run_cmd, sysloggen, userns_refused
from support.defaults import NOBODY
from support.rx_watch import Receiver, seqs_in_output, start_load, stop_load
from support.prom import scrape

NOTHING = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
           "--inh-caps=-all", "--bounding-set=-all"]
# Root of a user namespace of its own, loopback up, nothing outside.
USERNS = NOTHING + ["unshare", "--user", "--map-root-user", "--net",
                    "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
REASONS = "unavailable without CAP_BPF and CAP_PERFMON"


@pytest.fixture
def receivers():
    """Receivers (rx_watch) a test started: ended on every path, the process
    receiving now and any it handed over from included."""
    started = []
    yield started
    for rx in started:
        for pid in [rx.pid] + rx.olds:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        rx.p.wait(timeout=30)


def within_tenth(counts, total, n):
    """Each of counts within 10 % of total / n."""
    return all(abs(c - total / n) <= 0.1 * total / n for c in counts)


def start_one_flow_receiver(where, port, d, *flags):
    """4 sockets, 2 slow workers (0.5 ms a message of wall-clock time: at
    most 4,000/s together, however idle the host): one flow of 60,000 sent as
    fast as the sender can is past them unless it manages under ~4,000/s, and
    the kernel drops. The buffer is asked
    for (212,992 bytes) rather than taken from net.core.rmem_default, which
    a host tuned as SC4S says sets to 512 MB: nothing would drop there."""
    rx = Proc((NOTHING if where == "setpriv" else USERNS) + [
        binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "4",
        "--threads", "2", "--cost-ns", "500000", "--output", "null", "--rcvbuf", "212992",
        "--summary", str(d / "s.json"), "--sequences"] + list(flags))
    ready = rx.p.stderr.readline().decode()
    assert "ready on" in ready, ready + rx.stop()[2]
    return rx, ready


def send_one_flow(rx, where, port, count):
    """sysloggen, one source, in the receiver's network namespace; its JSON."""
    argv = [binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--rate", "0",
            "--count", str(count), "--size", "200", "--json"]
    if where == "userns":
        argv = ["nsenter", "-t", str(rx.p.pid), "-n"] + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("where", ["setpriv", "userns"])
def test_one_flow_spreads_and_every_drop_is_counted(where, nobody_dir, procs):
    if where == "userns" and userns_refused():
        pytest.skip(userns_refused())
    port = free_udp_port()
    rx, ready = start_one_flow_receiver(where, port, nobody_dir)
    procs.append(rx)
    assert "random spread by classic BPF (no CAP_BPF" in ready, ready
    assert "drops from SO_MEMINFO" in ready, ready
    gen = send_one_flow(rx, where, port, 60000)
    # The load is over: no drop can happen any more; the kernel's own table.
    procnet = {int(f[9]): int(f[12]) for f in udp_rows(port, pid=rx.p.pid)}
    assert len(procnet) == 4, procnet
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = read_json(nobody_dir / "s.json")
    assert s["balance"] == "random"
    assert s["balancer"]["runs"] == "classic BPF" and "no CAP_BPF" in s["balancer"]["why"]
    t = s["totals"]
    drops = t["kernel_drops"]["total"]
    assert t["kernel_drops"]["reasons"] == REASONS and t["kernel_drops_source"] == "SO_MEMINFO"
    # 60000 datagrams against at most 4,000/s of workers (--cost-ns waits on
    # the wall clock, so a loaded host does not make them faster) and
    # 4 default buffers of a few hundred datagrams each: the kernel drops.
    assert drops > 0, t
    # The books close, to the message (the end markers are datagrams too).
    assert gen["datagrams"] == t["received"] + drops + t["abandoned"], (gen, t)
    assert s["loss"]["gaps_equal_kernel_drops"] is True, s["loss"]
    # The advice works from what it has (drops without reasons): ~850k/s
    # offered against at most 4,000/s of workers is an overload, and it says so.
    assert any(a.get("flag") == "--threads" for a in s["advice"] or []), s["advice"]
    offered = []
    for x in s["sockets"]:
        assert x["state"] == "live" and x["steered"] is None
        # Exact per socket: the summary's count is the kernel's, in /proc too.
        assert x["kernel_drops"]["total"] == x["so_meminfo_drops"] == procnet[x["inode"]], \
            (x, procnet)
        offered.append(x["received"] + x["abandoned"] + x["kernel_drops"]["total"])
    assert sum(offered) == gen["datagrams"]
    assert within_tenth(offered, gen["datagrams"], 4), offered


@pytest.mark.parametrize("where", ["setpriv", "userns"])
def test_one_flow_with_the_kernel_hash_stays_on_one_socket(where, nobody_dir, procs):
    if where == "userns" and userns_refused():
        pytest.skip(userns_refused())
    port = free_udp_port()
    rx, ready = start_one_flow_receiver(where, port, nobody_dir, "--balance", "hash")
    procs.append(rx)
    assert "classic BPF" not in ready
    gen = send_one_flow(rx, where, port, 60000)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = read_json(nobody_dir / "s.json")
    assert s["balancer"]["runs"] == "kernel hash"
    t = s["totals"]
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"]
    offered = sorted(x["received"] + x["kernel_drops"]["total"] for x in s["sockets"])
    assert offered == [0, 0, 0, gen["datagrams"]], offered


# ---- live resize ----------------------------------------------------------

def scrape_received(port):
    """{socket index: received + SO_MEMINFO drops} from /metrics."""
    text = scrape(port)
    got = {}
    for m in re.finditer(r'^syslogrx_socket_(received|so_meminfo_drops)_total\{socket="(\d+)"\} (\d+)$',
                         text, re.M):
        got[int(m.group(2))] = got.get(int(m.group(2)), 0) + int(m.group(3))
    return got


def phase(mport, live, at_least=30000, timeout=60):
    """The datagrams each socket took while the group stood still at the
    live sockets (their indices): waits on the counters, not the clock."""
    before = scrape_received(mport)
    deadline = time.monotonic() + timeout
    while True:
        now = scrape_received(mport)
        delta = {i: now[i] - before.get(i, 0) for i in now}
        total = sum(delta.values())
        if total >= at_least:
            break
        assert time.monotonic() < deadline, delta
        time.sleep(0.1)
    assert {i for i, v in delta.items() if v} == set(live), (live, delta)
    assert within_tenth([delta[i] for i in live], total, len(live)), (live, delta)


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"], ids=["address", "wildcard"])
def test_resize_2_6_3_8_under_load_follows_the_join_order(host, nobody_dir, receivers):
    """Without CAP_BPF a resize attaches a new program: for the smaller N
    before a shrink, for the larger N once a grow's sockets are read. Index k
    is the k-th socket in the group's join order: from 2 sockets (no
    --max-sockets: no pool), 2 -> 6 binds 2..5, which join at the end; 6 -> 3
    makes 3, 4, 5 spares (bound, read, past the program's N: never picked);
    3 -> 8 takes them back and binds 6 and 7. The books close to the message."""
    port = free_udp_port()
    mport = free_udp_port(socket.AF_INET)
    listen = f"{host}:{port}"
    rx = Receiver(nobody_dir, listen, "--metrics", f"127.0.0.1:{mport}",
                  settings={"sockets": 2, "threads": 2}, prefix=NOTHING)
    receivers.append(rx)
    gen = start_load(f"127.0.0.1:{port}", rate=40000)
    try:
        assert rx.count("random spread by classic BPF") == 1
        phase(mport, [0, 1])
        rx.resize(6, 2)
        phase(mport, [0, 1, 2, 3, 4, 5])
        rx.resize(3, 2)
        phase(mport, [0, 1, 2])
        rx.resize(8, 2)
        phase(mport, list(range(8)), at_least=40000)
    finally:
        sent = stop_load(gen)
    time.sleep(0.5)     # the last datagrams reach the queues before SIGTERM
    rc, err, s = rx.stop()
    assert rc == 0, err
    t = s["totals"]
    drops = t["kernel_drops"]["total"]
    # Nothing lost uncounted: every datagram was read or counted by the
    # kernel of the socket it was queued on.
    assert sent["sent"] == t["received"] + drops + t["abandoned"], (sent["sent"], t)
    # Every message missing from the output is a counted drop. (The
    # receiver's own loss.missing sees gaps only: with no end marker, a drop
    # after a flow's last datagram read is not one.)
    seen = seqs_in_output(rx.out)
    assert all(seen.get(f["flow"], set()) <= set(range(f["sent"])) for f in sent["flows"])
    assert sum(f["sent"] - len(seen.get(f["flow"], ())) for f in sent["flows"]) == \
        drops + t["abandoned"]
    assert s["loss"]["missing"] <= drops
    assert [x["state"] for x in s["sockets"]] == ["live"] * 8


def test_naive_shrink_moves_the_last_socket_into_the_hole(nobody_dir, receivers):
    """--shrink-naive closes the retiring sockets: each one leaves the group
    and the kernel moves the group's last socket into its index
    (reuseport_detach_sock). Pool of 8 (0..7), 6 live: 6 -> 3 closes 3, 4, 5:
    7 takes index 3, 6 takes index 4, 5 was last: the order is 0 1 2 7 6.
    So 3 -> 4 must select socket 7 (not 6, the lowest spare), 4 -> 5 then 6.
    No load runs across the naive close (it frees what is queued, which
    without the tracer nothing counts); each phase is its own load."""
    port = free_udp_port()
    mport = free_udp_port(socket.AF_INET)
    listen = f"127.0.0.1:{port}"
    rx = Receiver(nobody_dir, listen, "--max-sockets", "8", "--metrics", f"127.0.0.1:{mport}",
                  settings={"sockets": 6, "threads": 2}, prefix=NOTHING)
    receivers.append(rx)

    def loaded(live):
        gen = start_load(listen, rate=40000)
        try:
            phase(mport, live, at_least=30000 if len(live) <= 6 else 40000)
        finally:
            stop_load(gen)
        time.sleep(0.5)     # read before the next step

    loaded([0, 1, 2, 3, 4, 5])
    rx.resize(3, 2, shrink_naive=True)
    rx.resize(4, 2, shrink_naive=False)
    loaded([0, 1, 2, 7])
    rx.resize(5, 2)
    loaded([0, 1, 2, 7, 6])
    rc, err, s = rx.stop()
    assert rc == 0, err
    states = {x["index"]: x["state"] for x in s["sockets"]}
    assert states == {0: "live", 1: "live", 2: "live", 3: "closed", 4: "closed",
                      5: "closed", 6: "live", 7: "live"}, states


def test_upgrade_hands_the_classic_program_over(nobody_dir, receivers):
    """kill -USR2 without privilege: the sockets go over in join order, the
    new process attaches the same program, nothing is lost uncounted."""
    port = free_udp_port()
    listen = f"127.0.0.1:{port}"
    rx = Receiver(nobody_dir, listen, "--max-sockets", "6",
                  settings={"sockets": 4, "threads": 2}, prefix=NOTHING)
    receivers.append(rx)
    gen = start_load(listen, rate=20000)
    try:
        rx.resize(2, 2)
        assert rx.upgrade() is not None, "".join(rx.lines)
        rx.resize(5, 2)
    finally:
        sent = stop_load(gen)
    time.sleep(0.5)
    rc, err, s = rx.stop()
    assert rc == 0, err
    olds = rx.old_summaries()
    received = s["totals"]["received"] + sum(o["totals"]["received"] for o in olds)
    # Drops are the kernel's per socket count, which the new process reads
    # whole for the sockets it took over (the old one's closed ones: its own).
    closed_old = sum(x["kernel_drops"]["total"] for o in olds for x in o["sockets"]
                     if x["state"] == "closed")
    drops = s["totals"]["kernel_drops"]["total"] + closed_old
    assert sent["sent"] == received + drops, (sent["sent"], received, drops)
    assert s["balancer"]["runs"] == "classic BPF"
    assert [x["state"] for x in s["sockets"]].count("live") == 5


# ---- udpbalance on Debian's syslog-ng ---------------------------------------

def syslog_ng_as_nobody(d, port):
    """SC4S's UDP layout (lab/sweeplib/peers.py): 4 network() sources with
    so-reuseport(1) on one port, into one file; run as uid 65534, no caps."""
    sys.path.insert(0, os.path.join(ROOT, "lab"))
    from sweeplib.peers import SYSLOG_NG, syslog_ng_config
    conf = d / "syslog-ng.conf"
    conf.write_text(syslog_ng_config({"sockets": 4, "rcvbuf": 0, "window": 0}, port,
                                     str(d / "out.log"), str(d / "internal.log")))
    p = Proc(NOTHING + [SYSLOG_NG, "-F", "--no-caps", "-f", str(conf), "-R", str(d / "persist"),
                        "-p", str(d / "pid"), "-c", str(d / "ctl")])
    wait_for_udp_port(port, count=4)
    return p


def queues(port):
    """{inode: (bytes queued, drops)} of the sockets on port."""
    return {int(f[9]): (int(f[4].split(":")[1], 16), int(f[12])) for f in udp_rows(port)}


def lines_written(path, want, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        n = sum(1 for _ in open(path, "rb")) if path.exists() else 0
        if n >= want or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def offered_while_stopped(sng, port, out, count, written):
    """Sends one flow of count datagrams while syslog-ng is stopped, so that
    each socket's queue keeps what it was given: per socket, the datagrams
    queued (bytes / the truesize of one, all alike) plus the kernel's drops.
    The truesize is exact: the bytes of all queues over the lines syslog-ng
    writes once it runs again. Returns ({inode: datagrams offered}, lines in
    the output now)."""
    os.kill(sng.p.pid, signal.SIGSTOP)
    try:
        before = queues(port)
        assert all(q == 0 for q, _ in before.values()), before
        send_udp("127.0.0.1", port, count, size=200)
        after = queues(port)
    finally:
        os.kill(sng.p.pid, signal.SIGCONT)
    drops = {i: after[i][1] - before[i][1] for i in after}
    queued = count - sum(drops.values())
    assert lines_written(out, written + queued) == written + queued
    truesize, rest = divmod(sum(q for q, _ in after.values()), queued)
    assert rest == 0 and truesize > 200, (after, queued)
    return {i: after[i][0] // truesize + drops[i] for i in after}, written + queued


def test_udpbalance_without_capabilities_spreads_syslog_ng(nobody_dir, procs):
    """Debian's syslog-ng, 4 sockets, as uid 65534: the kernel's hash puts
    one flow on one socket; udpbalance, as the same uid with no capability,
    joins the group, attaches classic BPF and leaves; the same flow then
    spreads over the 4 sockets, each within 10 % of a quarter, with nothing
    lost uncounted (every datagram queued or counted as a drop)."""
    port = free_udp_port()
    out = nobody_dir / "out.log"
    sng = syslog_ng_as_nobody(nobody_dir, port)
    procs.append(sng)

    hashed, written = offered_while_stopped(sng, port, out, 2000, 0)
    assert sorted(hashed.values()) == [0, 0, 0, 2000], hashed

    r = run_cmd(NOTHING + [binary("udpbalance"), "--pid", str(sng.p.pid), "--port", str(port),
                           "--policy", "random", "--json"], timeout=30)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["runs"] == "classic BPF" and "no CAP_BPF" in rep["why"] and rep["sockets"] == 4
    # udpbalance is gone; its socket too; the program stays with the group.
    assert len(queues(port)) == 4
    # What reached udpbalance's own socket before the program ran was sent
    # by nobody here (the load starts after): exactly nothing.
    assert rep["joining_socket_received"] == 0 and rep["joining_socket_drops"] == 0

    spread, _ = offered_while_stopped(sng, port, out, 40000, written)
    assert sum(spread.values()) == 40000
    assert within_tenth(list(spread.values()), 40000, 4), spread


def test_supervised_without_privilege_spreads(nobody_dir, procs):
    """--supervise as uid 65534: the supervisor binds and attaches, the child
    takes the sockets in join order with no maps and attaches the same
    program; one flow spreads over the 4 sockets, every datagram counted."""
    port = free_udp_port()
    rx = Proc(NOTHING + [binary("syslogrx"), "--supervise", "--listen", f"127.0.0.1:{port}",
                         "--sockets", "4", "--threads", "2", "--output", "null",
                         "--summary", str(nobody_dir / "s.json")])
    procs.append(rx)
    while True:     # the child's ready line follows the supervisor's
        line = rx.p.stderr.readline().decode()
        assert line, rx.stop()[2]
        if "ready on" in line:
            break
    assert "random spread by classic BPF (handed over" in line, line
    gen = sysloggen(port, "--count", 40000, "--rate", 40000)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = read_json(nobody_dir / "s.json")
    t = s["totals"]
    assert s["balancer"]["runs"] == "classic BPF"
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], t
    offered = [x["received"] + x["kernel_drops"]["total"] for x in s["sockets"]]
    assert within_tenth(offered, gen["datagrams"], 4), offered


def test_udpbalance_of_another_uid_is_refused_with_the_reason(nobody_dir, procs):
    """A reuseport group takes sockets of its own uid only, and /proc/PID/fd
    of another uid's process cannot be read without CAP_SYS_PTRACE: classic
    BPF for a root receiver, asked as uid 65534, says so and changes nothing."""
    port = free_udp_port()
    rx = Proc([sys.executable, "-c", (
        "import socket, time\n"
        "ss = []\n"
        "for _ in range(4):\n"
        "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
        f"    s.bind(('127.0.0.1', {port})); ss.append(s)\n"
        "time.sleep(60)\n")])
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    r = run_cmd(NOTHING + [binary("udpbalance"), "--pid", str(rx.p.pid), "--port", str(port),
                           "--cbpf"], timeout=30)
    assert r.returncode == 1, r.stderr
    assert f"cannot read /proc/{rx.p.pid}/fd" in r.stderr and "receiver's uid" in r.stderr
    assert len(list(udp_rows(port))) == 4       # nothing joined
    r = run_cmd(NOTHING + [binary("udpbalance"), "--pid", str(rx.p.pid), "--port", str(port),
                           "--policy", "roundrobin"], timeout=30)
    assert r.returncode == 1 and "--policy roundrobin needs eBPF: CAP_BPF" in r.stderr, r.stderr

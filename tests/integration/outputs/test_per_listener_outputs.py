"""An output per listener (--output LISTENER=SPEC, docs/outputs.md "An output
per listener"): three listeners, two named tcp outputs and the unnamed one
for the third. One named output's server stops reading for 5 s under the
load: every message reaches its own listener's destination and no other,
every sequence number arrives (or is counted a kernel drop of its
listener), the other outputs keep receiving while it is stopped, and the
books close per output in the summary and the metrics rows labelled
output="LISTENER" or "default". What cannot go beside it is refused at
start, naming the reason."""
import time

import pytest

from support.flows import FLOWS, SDATA, by_flow, start_gen
from support.ports import free_tcp_port, free_udp_port
from support.load import send_udp
from support.paths import binary
from support.procs import Syslogrx, run_cmd, wait_until
from support.rx_watch import Receiver
from support.prom import parse, scrape, series, value
from support.tcp_sinks import FrameSink

SECONDS = 15
RATES = {"a": 2000, "b": 1500, "c": 1000}  # per listener: unlike books
PAUSE_S = 5               # how long the stopped server takes nothing
STALL_S = 2               # --stall-timeout: the stopped output reconnects
OUTPUT_OF = {"a": "a", "b": "b", "c": "default"}  # listener -> output
WINDOW = 3000             # a share of 1000 messages per output


def runs_in(sink):
    """The run ids (one per listener's load) a server received."""
    return {SDATA.search(m).group(1).decode() for m in sink.msgs}


def start(tmp_path, ports, sinks, *extra):
    return Syslogrx(tmp_path, *[a for n, p in ports.items()
                                for a in ("--listen", f"{n}=127.0.0.1:{p}")],
                    "--output", f"a=tcp:127.0.0.1:{sinks['a'].port}",
                    "--output", f"b=tcp:127.0.0.1:{sinks['b'].port}",
                    "--output", f"tcp:127.0.0.1:{sinks['default'].port}",
                    "--format", "rfc5424", "--stall-timeout", str(STALL_S),
                    "--window", str(WINDOW), "--rcvbuf", "16M", *extra, sequences=False,
                    ready_timeout=30)


def test_one_output_stops_the_others_go_on_and_the_books_close_per_output(tmp_path, procs):
    # a's server stops reading after 2000 frames (what its first connection
    # holds unread is sent again on the next, as for one output); a small
    # receive buffer: its output is held up soon after.
    sinks = {"a": FrameSink(stall_after=2000, rcvbuf=1 << 16), "b": FrameSink(),
             "default": FrameSink()}
    ports = {n: free_udp_port() for n in OUTPUT_OF}
    mport = free_tcp_port()
    try:
        rx = start(tmp_path, ports, sinks, "--metrics", str(mport))
        procs.append(rx)
        rx.wait_line(f"listener a's messages go to tcp:127.0.0.1:{sinks['a'].port}")
        gens = {n: start_gen(p, n, rate=RATES[n], seconds=SECONDS) for n, p in ports.items()}
        assert sinks["a"].stalled.wait(30), "the load never reached a's server"
        stopped = time.monotonic()
        # While a's destination takes nothing the others keep receiving.
        at = {n: len(sinks[n].msgs) for n in ("b", "default")}
        wait_until(lambda: all(len(sinks[n].msgs) >= at[n] + 2000 for n in at),
                   "b and default receiving while a's server is stopped")
        # a's share of the window fills (its output is held up); the
        # others go on beside it
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_window_messages") >=
                   WINDOW // 3, "a's share of the window full")
        at = {n: len(sinks[n].msgs) for n in ("b", "default")}
        assert all(g.poll() is None for g in gens.values()), "the load ended before the stall"
        wait_until(lambda: all(len(sinks[n].msgs) >= at[n] + 1000 for n in at),
                   "b and default receiving while a's share is full")
        # a is shown stalled, on its own row; the others are not.
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_output_stalled",
                                 output="a") == 1, "syslogrx_output_stalled{output=\"a\"} 1")
        m = parse(scrape(mport))
        assert value(m, "syslogrx_output_stalled", output="b") == 0
        assert value(m, "syslogrx_output_stalled", output="default") == 0
        assert set(series(m, "syslogrx_output_written_total")) == \
            {(("output", "a"),), (("output", "b"),), (("output", "default"),)}
        # the fault's length, not a synchronisation; resumed before the
        # new connection could stall too (--stall-timeout)
        wait_until(lambda: time.monotonic() >= stopped + PAUSE_S, "the pause", timeout=60)
        sinks["a"].resume()
        for g in gens.values():
            assert g.wait(timeout=60) == 0
        # The stop reads the queues and delivers all the outputs hold.
        rc, _, err = rx.stop()
    finally:
        for p in procs:
            if p.p.poll() is None:
                p.p.kill()
                p.p.wait()
        for s in sinks.values():
            s.close()
    assert rc == 0, err
    s = rx.summary
    lis = {l["name"]: l for l in s["listeners"]}
    sent = {n: r * SECONDS for n, r in RATES.items()}
    for n, o in OUTPUT_OF.items():
        # Nothing reached the wrong destination.
        assert runs_in(sinks[o]) == {n}, (o, runs_in(sinks[o]))
        # Every sequence number arrived, or is counted lost in the kernel.
        flows = by_flow(sinks[o].msgs, n)
        assert set(flows) <= set(range(FLOWS))
        missing = sum(len(set(range(sent[n] // FLOWS)) - set(flows.get(f, ())))
                      for f in range(FLOWS))
        assert missing == lis[n]["kernel_drops"] + lis[n]["abandoned"], (n, missing, lis[n])
    rows = {o["output"]: o for o in s["outputs"]}
    assert set(rows) == {"a", "b", "default"}
    for n, o in OUTPUT_OF.items():
        # the listener's books: sent = received + the kernel's drops
        assert lis[n]["received"] + lis[n]["kernel_drops"] + lis[n]["abandoned"] == sent[n]
        # the output's: what its listener received, written (or counted)
        r = rows[o]
        assert r["received"] == lis[n]["received"], (o, r)
        assert r["received"] == r["written"] + r["discarded"] + r["given_up"] + r["saved"], r
        assert r["up"] is True
    assert rows["a"]["resent"] > 0, rows["a"]       # the stopped connection's, sent again
    assert rows["b"]["resent"] == rows["default"]["resent"] == 0
    t = s["totals"]
    assert t["written"] == sum(r["written"] for r in rows.values())
    assert t["received"] == sum(r["received"] for r in rows.values())


def lines_of(path):
    try:
        return path.read_bytes().splitlines()
    except FileNotFoundError:
        return []


def send_bursts(ports, sent, files, tag, n=200):
    """n messages to each listener, counted in sent; waits until each
    listener's file holds all it was sent."""
    for name, port in ports.items():
        send_udp("127.0.0.1", port, n, payload=f"<13>{name} {tag}".encode())
        sent[name] += n
    wait_until(lambda: all(len(lines_of(files[k])) == sent[k] for k in files),
               f"the {tag} burst in each listener's file")


def test_beside_user_resize_and_upgrade(nobody_dir):
    """Two listeners, a's named file output and the unnamed one for b: run
    as --user nobody, through a SIGHUP resize (2 to 4 sockets) and a kill
    -USR2 upgrade, every burst lands whole in its listener's file and no
    other."""
    ports = {n: free_udp_port() for n in ("a", "b")}
    a_out = nobody_dir / "a.log"
    rx = Receiver(nobody_dir, f"a=127.0.0.1:{ports['a']}", "--listen",
                  f"b=127.0.0.1:{ports['b']}", "--output", f"a=file:{a_out}", "--user",
                  "nobody", "--max-sockets", "4", settings={"sockets": 2, "threads": 1},
                  sequences=False)
    sent = {"a": 0, "b": 0}

    def burst(tag):
        send_bursts(ports, sent, {"a": a_out, "b": rx.out}, tag)

    burst("start")
    rx.resize(4, 2)
    burst("resized")
    assert rx.upgrade(), "".join(rx.lines)
    burst("upgraded")
    rc, err, final = rx.stop()
    assert rc == 0, err
    assert {l.split()[0] for l in lines_of(a_out)} == {b"<13>a"}
    assert {l.split()[0] for l in lines_of(rx.out)} == {b"<13>b"}
    rows = {o["output"]: o for o in final["outputs"]}
    assert rows["a"]["written"] == rows["a"]["received"] > 0
    assert rows["default"]["written"] == rows["default"]["received"] > 0


def test_supervised_child_killed(tmp_path):
    """The same two outputs under --supervise, through a kill -9 of the
    child: each file holds only its own listener's messages, every burst."""
    ports = {n: free_udp_port() for n in ("a", "b")}
    a_out = tmp_path / "a.log"
    rx = Receiver(tmp_path, f"a=127.0.0.1:{ports['a']}", "--listen", f"b=127.0.0.1:{ports['b']}",
                  "--output", f"a=file:{a_out}", "--supervise", sequences=False)
    sent = {"a": 0, "b": 0}

    def burst(tag):
        send_bursts(ports, sent, {"a": a_out, "b": rx.out}, tag)

    rx.child()
    burst("first")
    rx.kill_child()
    burst("after-kill")
    rc, err, _ = rx.stop()
    assert rc == 0, err
    assert {l.split()[0] for l in lines_of(a_out)} == {b"<13>a"}
    assert {l.split()[0] for l in lines_of(rx.out)} == {b"<13>b"}


REFUSED = {
    "unknown listener": (["--output", "x=null", "--output", "null"],
                         "--output x=null: no listener is named x"),
    "two for one listener": (["--output", "a=null", "--output", "a=stdout", "--output", "null"],
                             "listener a has an output already"),
    "a listener left without": (["--output", "a=null"],
                                "listener(s) b have no output: add an --output without"),
    "kafka named": (["--output", "a=kafka:127.0.0.1:9092/t", "--output", "null"],
                    "a kafka output cannot be one of several yet"),
    "disk buffer": (["--output", "a=tcp:127.0.0.1:9", "--output", "tcp:127.0.0.1:9",
                     "--disk-buffer", "/nonexistent"],
                    "--disk-buffer cannot be used together yet"),
    "ordered": (["--output", "a=null", "--output", "null", "--ordered"],
                "--ordered cannot be used together"),
    "sequences": (["--output", "a=null", "--output", "null", "--sequences"],
                  "--sequences cannot be used together yet"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_at_start_naming_why(case):
    args, why = REFUSED[case]
    r = run_cmd([binary("syslogrx"), "--listen", f"a=127.0.0.1:{free_udp_port()}", "--listen",
                 f"b=127.0.0.1:{free_udp_port()}", *args])
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert why in r.stderr, r.stderr


def test_the_config_file_takes_one_output_line_each(tmp_path):
    """`output` lines in the config file, one each; --check-config prints
    them back the same way."""
    cf = tmp_path / "rx.conf"
    cf.write_text(f"listen = a=127.0.0.1:{free_udp_port()}\n"
                  f"listen = b=127.0.0.1:{free_udp_port()}\n"
                  "output = a=file:/tmp/a.log\noutput = tcp:127.0.0.1:601\n")
    r = run_cmd([binary("syslogrx"), "--config", str(cf), "--check-config"])
    assert r.returncode == 0, r.stderr
    assert "output = tcp:127.0.0.1:601\noutput = a=file:/tmp/a.log\n" in r.stdout, r.stdout


def test_a_named_file_the_user_cannot_write_is_refused_at_start(tmp_path):
    """--user checks each named output's file as that user before binding
    (pytest's tmp_path is root's alone)."""
    path = tmp_path / "a.log"
    r = run_cmd([binary("syslogrx"), "--listen", f"a=127.0.0.1:{free_udp_port()}",
                 "--listen", f"b=127.0.0.1:{free_udp_port()}", "--output", f"a=file:{path}",
                 "--output", "null", "--user", "nobody"])
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"--output a=file:{path}: Permission denied (syslogrx writes it as nobody" \
        in r.stderr, r.stderr
    assert not path.exists()


def test_env_file_vendor_ports_each_to_its_output(tmp_path):
    """SC4S's env_file names the listeners after the vendors: a vendor's
    messages go to its own output, the default port's to the unnamed one;
    a vendor the env_file has not is refused at start, named."""
    ports = {"default": free_udp_port(), "cisco_asa": free_udp_port()}
    env = tmp_path / "env_file"
    env.write_text(f"SC4S_LISTEN_DEFAULT_UDP_PORT={ports['default']}\n"
                   f"SC4S_LISTEN_CISCO_ASA_UDP_PORT={ports['cisco_asa']}\n")
    asa, rest = tmp_path / "asa.log", tmp_path / "rest.log"
    r = run_cmd([binary("syslogrx"), "--env-file", str(env), "--output", "cisco=null",
                 "--output", "null"])
    assert r.returncode == 2 and "--output cisco=null: no listener is named cisco" in r.stderr, \
        r.stderr
    rx = Syslogrx(tmp_path, "--env-file", str(env), "--output", f"cisco_asa=file:{asa}",
                  "--output", f"file:{rest}", sequences=False)
    try:
        sent = {"cisco_asa": 0, "default": 0}
        send_bursts(ports, sent, {"cisco_asa": asa, "default": rest}, "env")
    finally:
        rc, _, err = rx.stop()
    assert rc == 0, err
    assert {l.split()[0] for l in lines_of(asa)} == {b"<13>cisco_asa"}
    assert {l.split()[0] for l in lines_of(rest)} == {b"<13>default"}


def test_check_config_reads_each_named_destination():
    r = run_cmd([binary("syslogrx"), "--listen", f"a=127.0.0.1:{free_udp_port()}",
                 "--output", "a=tcp:foo:bar", "--output", "null", "--check-config"])
    assert r.returncode == 1, r.stderr
    assert "--output tcp:foo:bar: expected HOST:PORT with a numeric address" in r.stderr
    assert "--check-config: 1 problem(s)" in r.stderr


def test_a_stop_gives_up_on_one_output_and_counts_it_there(tmp_path):
    """a's destination never answers: at the stop (--stop-timeout 1) what a
    holds is given up and counted on a's row; b's output wrote everything."""
    ports = {n: free_udp_port() for n in ("a", "b")}
    mport = free_tcp_port()
    b_out = tmp_path / "b.log"
    rx = Syslogrx(tmp_path, "--listen", f"a=127.0.0.1:{ports['a']}", "--listen",
                  f"b=127.0.0.1:{ports['b']}", "--output", f"a=tcp:127.0.0.1:{free_tcp_port()}",
                  "--output", f"file:{b_out}", "--metrics", str(mport), "--stop-timeout", "1",
                  sequences=False)
    try:
        sent = {"a": 0, "b": 0}
        send_bursts({"b": ports["b"]}, sent, {"b": b_out}, "b")
        send_udp("127.0.0.1", ports["a"], 500, payload=b"<13>a held")
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_output_received_total",
                                 output="a") == 500, "a's 500 received")
        m = parse(scrape(mport))
        assert value(m, "syslogrx_output_up", output="a") == 0
        assert not series(m, "syslogrx_output_up", output="default")  # a file: no row
    finally:
        rc, _, err = rx.stop()
    assert rc == 0, err
    assert "stop: output a gave up 500 received message(s) not written" in err, err
    rows = {o["output"]: o for o in rx.summary["outputs"]}
    assert (rows["a"]["received"], rows["a"]["written"], rows["a"]["given_up"]) == (500, 0, 500)
    assert (rows["default"]["written"], rows["default"]["given_up"]) == (200, 0)
    assert rows["a"]["up"] is False and rows["default"]["up"] is None
    assert rx.summary["output_up"] is False
    assert rx.summary["totals"]["given_up"] == 500


def test_each_output_frames_as_its_own_kind(tmp_path):
    """A tcp output beside a file output: a's messages arrive as RFC 6587
    frames, b's as lines, each framed by its own output's kind."""
    ports = {n: free_udp_port() for n in ("a", "b")}
    sink, b_out = FrameSink(), tmp_path / "b.log"
    try:
        rx = Syslogrx(tmp_path, "--listen", f"a=127.0.0.1:{ports['a']}", "--listen",
                      f"b=127.0.0.1:{ports['b']}", "--output", f"a=tcp:127.0.0.1:{sink.port}",
                      "--output", f"file:{b_out}", sequences=False)
        for name, port in ports.items():
            send_udp("127.0.0.1", port, 300, payload=f"<13>{name} framed".encode())
        wait_until(lambda: len(sink.msgs) == 300 and len(lines_of(b_out)) == 300,
                   "300 frames and 300 lines")
        rc, _, err = rx.stop()
    finally:
        sink.close()
    assert rc == 0, err
    assert set(sink.msgs) == {b"<13>a framed"}
    assert set(lines_of(b_out)) == {b"<13>b framed"}


def test_every_listener_named_leaves_the_unnamed_output_null():
    r = run_cmd([binary("syslogrx"), "--listen", f"a=127.0.0.1:{free_udp_port()}",
                 "--output", "a=file:/tmp/a.log", "--check-config"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("output = null\noutput = a=file:/tmp/a.log\n") or \
        "\noutput = null\noutput = a=file:/tmp/a.log\n" in r.stdout, r.stdout

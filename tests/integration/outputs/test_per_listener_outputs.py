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

from support.flows import FLOWS, SDATA, by_flow, start_gen
from support.ports import free_tcp_port, free_udp_port
from support.procs import Syslogrx, wait_until
from support.prom import parse, scrape, series, value
from support.tcp_sinks import FrameSink

SECONDS = 15
RATES = {"a": 2000, "b": 1500, "c": 1000}  # per listener: unlike books
PAUSE_S = 5               # how long the stopped server takes nothing
STALL_S = 1               # --stall-timeout: the stopped output reconnects
OUTPUT_OF = {"a": "a", "b": "b", "c": "default"}  # listener -> output


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
                    "--window", "100000", "--rcvbuf", "16M", *extra, sequences=False,
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
        # a is shown stalled, on its own row; the others are not.
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_output_stalled",
                                 output="a") == 1, "syslogrx_output_stalled{output=\"a\"} 1")
        m = parse(scrape(mport))
        assert value(m, "syslogrx_output_stalled", output="b") == 0
        assert value(m, "syslogrx_output_stalled", output="default") == 0
        assert set(series(m, "syslogrx_output_written_total")) == \
            {(("output", "a"),), (("output", "b"),), (("output", "default"),)}
        at = {n: len(sinks[n].msgs) for n in ("b", "default")}
        assert all(g.poll() is None for g in gens.values()), "the load ended before the stall"
        wait_until(lambda: all(len(sinks[n].msgs) > at[n] for n in at),
                   "b and default receiving while a is stalled")
        # the fault's length, not a synchronisation
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

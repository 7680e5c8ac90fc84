# SPDX-License-Identifier: MIT
"""A receiver's capacity without the sender's cap: hold the receiver
(SIGSTOP: its sockets still queue), let the sender fill the queues, release
it (SIGCONT) and time until the port's queues are empty. What drained is
what was queued: sent minus the kernel's drops on the port (/proc/net/udp),
so the rate is exact whatever the receiver; the clock runs from SIGCONT to
the first poll that sees every queue empty (1 ms polls).

Works for any receiver with a pid (syslogrx, drainrx, syslog-ng): nothing of
the receiver is read but the kernel's own per-socket counters."""
import os
import signal
import time

from support.procnet import DROPS, rx_queue, udp_rows


def udp_port_stats(port):
    """(bytes queued, drops) over the sockets bound to port, both families."""
    rows = list(udp_rows(port))
    return sum(rx_queue(f) for f in rows), sum(int(f[DROPS]) for f in rows)


class DrainError(Exception):
    pass


def hold_and_drain(pid, port, send, timeout=60.0):
    """send() -> messages it sent (while pid is stopped). Returns a dict:
    sent, dropped (by the kernel while held), queued_bytes, drained (messages),
    seconds (SIGCONT to empty) and rate (drained / seconds)."""
    _, drops0 = udp_port_stats(port)
    os.kill(pid, signal.SIGSTOP)
    try:
        sent = send()
        queued, drops1 = udp_port_stats(port)
        t0 = time.monotonic()
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = t0 + timeout
    while True:
        q, _ = udp_port_stats(port)
        t1 = time.monotonic()
        if q == 0:
            break
        if t1 > deadline:
            raise DrainError(f"the queues of port {port} still hold {q} bytes after {timeout:g}s")
        time.sleep(0.001)
    drained = sent - (drops1 - drops0)
    secs = t1 - t0
    if drained <= 0 or secs <= 0:
        raise DrainError(f"nothing drained (sent {sent}, dropped {drops1 - drops0})")
    return {"sent": sent, "dropped": drops1 - drops0, "queued_bytes": queued,
            "drained": drained, "seconds": round(secs, 4), "rate": round(drained / secs, 1)}

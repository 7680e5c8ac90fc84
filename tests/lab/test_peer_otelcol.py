"""The OpenTelemetry Collector as a peer of lab/sweep and make bench
(lab/sweeplib/peers.py): the configuration it is given, how its count of
accepted records is read, and where it stands in the sweep's grid. Pure
Python, no processes: the collector itself runs in the sweep and the bench."""
import os
import sys

import yaml

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab")
sys.path.insert(0, LAB)
from sweeplib import peers  # noqa: E402
from support import lab_script  # noqa: E402


def test_config_is_the_syslog_receiver_on_the_cell_port_into_nop():
    conf = yaml.safe_load(peers.otelcol_config({"protocol": "rfc3164"}, 51514, 58888))
    assert conf["receivers"] == {"syslog": {"udp": {"listen_address": "127.0.0.1:51514"},
                                            "protocol": "rfc3164"}}
    assert conf["exporters"] == {"nop": None}
    assert conf["service"]["pipelines"] == {"logs": {"receivers": ["syslog"],
                                                      "exporters": ["nop"]}}
    prom = conf["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]["prometheus"]
    assert prom == {"host": "127.0.0.1", "port": 58888}


def test_accepted_records_are_read_from_its_own_telemetry():
    text = (b"# HELP otelcol_receiver_accepted_log_records Number of log records ...\n"
            b"# TYPE otelcol_receiver_accepted_log_records counter\n"
            b'otelcol_receiver_accepted_log_records{receiver="syslog",transport=""} 74923\n'
            b'otelcol_receiver_refused_log_records{receiver="syslog",transport=""} 7\n')
    assert peers.otelcol_accepted(text) == 74923
    # newer collectors name counters with _total
    assert peers.otelcol_accepted(
        b'otelcol_receiver_accepted_log_records_total{receiver="syslog"} 1.2e+06\n') == 1_200_000
    # before the first record the series is absent: not zero, unknown
    assert peers.otelcol_accepted(b"# TYPE x counter\nx 1\n") is None


def test_sc4s_grid_has_one_collector_row():
    sweep = lab_script.load("sweep")
    a = sweep.parse_args(["--preset", "sc4s", "--out", "/nonexistent"])
    rows = [r for r in sweep.build_grid(a) if r["receiver"] == "otelcol"]
    assert len(rows) == 1, [r["row"] for r in rows]
    assert (rows[0]["sockets"], rows[0]["threads"]) == (1, 1)
    assert rows[0]["row"] == "OpenTelemetry Collector syslog receiver (UDP) 1 socket / 1 thread"

"""The operator's alerting rules (dist/syslogrx-alerts.yml): promtool checks
them, its unit tests (tests/promtool/alerts_test.yml) pass, and every metric
they use is one syslogrx can emit (src/rx/report/metrics.c), so a renamed
metric cannot leave an alert that never fires."""
import glob
import os
import re

from support.paths import ROOT
from support.procs import promtool, run_cmd

RULES = os.path.join(ROOT, "dist", "syslogrx-alerts.yml")
TESTS = os.path.join(ROOT, "tests", "promtool", "alerts_test.yml")
METRICS_C = os.path.join(ROOT, "src", "rx", "report", "metrics.c")
# Each output writes its own rows (syslogrx_kafka_*, syslogrx_otlp_*).
OUTPUT_STATS_C = sorted(glob.glob(os.path.join(ROOT, "src", "rx", "sink", "*_stats.c")))


def test_promtool_check_rules():
    r = run_cmd([promtool(), "check", "rules", RULES], timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 17 rules found" in r.stdout, r.stdout


def test_promtool_test_rules():
    r = run_cmd([promtool(), "test", "rules", TESTS], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout and "FAILED" not in r.stdout, r.stdout


def rule_exprs():
    """Each rule's expr:, a one-liner or a block (its lines indented deeper)."""
    exprs, cur, indent = [], None, 0
    for line in open(RULES):
        depth = len(line) - len(line.lstrip())
        if cur is not None and line.strip() and depth > indent:
            cur.append(line.strip())
            continue
        if cur is not None:
            exprs.append(" ".join(cur))
            cur = None
        m = re.match(r"^(\s*)expr: ?(.*)$", line)
        if m:
            indent, cur = len(m.group(1)), [m.group(2).strip(" |")]
    if cur is not None:
        exprs.append(" ".join(cur))
    return exprs


def test_rules_use_only_metrics_syslogrx_emits():
    emitted = set()
    for path in [METRICS_C] + OUTPUT_STATS_C:
        emitted |= set(re.findall(r'"(syslogrx_[a-z_]+)"', open(path).read()))
    exprs = rule_exprs()
    used = set(re.findall(r"\bsyslogrx_[a-z_]+", "\n".join(exprs)))
    assert len(exprs) == 17 and len(used) == 19, (exprs, used)
    assert not used - emitted, f"alerts on metrics syslogrx does not emit: {sorted(used - emitted)}"


def test_every_alert_is_unit_tested():
    alerts = set(re.findall(r"^\s*- alert: (\w+)$", open(RULES).read(), re.M))
    tested = set(re.findall(r"^\s*alertname: (\w+)$", open(TESTS).read(), re.M))
    assert len(alerts) == 17
    assert alerts == tested, f"not tested: {sorted(alerts - tested)}"


def test_rule_tests_feed_series_as_metrics_produces_them():
    """Every input series of the rule tests is absent before its instance
    starts (`_`), or is a restart (the old process's samples, `stale`, the
    new one's): a test that starts a counter with a value from time 0 sees
    increase() work where a real scrape would not."""
    series = re.findall(r"^\s*- series: '([^']+)'\n\s*values: '([^']+)'$", open(TESTS).read(),
                        re.M)
    assert len(series) >= 30, series
    unrealistic = [(s, v) for s, v in series if not v.startswith("_") and "stale" not in v]
    assert not unrealistic, unrealistic

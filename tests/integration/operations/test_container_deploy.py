"""The deployment files for the image: the Kubernetes DaemonSet validated
against Kubernetes' own schema (kubernetes-validate, from PyPI into build/
by the Makefile), then read for what this one must say; the podman quadlet
read as quadlet reads it, and run through podman's generator where the host
has one (podman 4.4 or later; Debian 12's 4.3 has none)."""
import os
import re
import shlex
import subprocess
import sys

import pytest

from support import quadlet
from support.paths import binary, ROOT

VALIDATOR = os.path.join(ROOT, "build", "kubernetes-validate")
DAEMONSET = os.path.join(ROOT, "dist", "kubernetes", "daemonset.yaml")
QUADLET = os.path.join(ROOT, "dist", "syslogrx.container")
CONTAINER_CONF = os.path.join(ROOT, "dist", "syslogrx-container.conf")
GENERATOR = "/usr/lib/systemd/system-generators/podman-system-generator"


def version():
    out = subprocess.run([binary("syslogrx"), "--version"], capture_output=True, text=True,
                         timeout=30).stdout
    return out.split()[-1]


@pytest.fixture(scope="module")
def yaml():
    assert os.path.isdir(VALIDATOR), f"{VALIDATOR} is missing: run `make integration`"
    sys.path.insert(0, VALIDATOR)
    try:
        import yaml as y
    finally:
        sys.path.remove(VALIDATOR)
    return y


def test_daemonset_passes_the_kubernetes_schema_strictly():
    r = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict", DAEMONSET],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=VALIDATOR))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "passed for resource daemonset/syslogrx" in r.stdout, r.stdout


def test_daemonset_host_network_no_privilege_probes_on_the_metrics_port(yaml):
    with open(DAEMONSET) as f:
        ds = yaml.safe_load(f)
    assert ds["kind"] == "DaemonSet" and ds["apiVersion"] == "apps/v1"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostNetwork"] is True
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == 10514
    (rx,) = spec["containers"]
    assert rx["image"] == f"localhost/syslogrx:{version()}"
    sc = rx["securityContext"]
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}, sc["capabilities"]
    for init in spec.get("initContainers", []):
        isc = init["securityContext"]
        assert isc["privileged"] is False and isc["capabilities"]["drop"] == ["ALL"]
        assert isc["capabilities"]["add"] == ["CHOWN"], isc
    # The probes ask the metrics port, the one --metrics serves on.
    args = rx["args"]
    metrics_port = int(args[args.index("--metrics") + 1].rsplit(":", 1)[1])
    ports = {p["name"]: p for p in rx["ports"]}
    assert ports["metrics"]["containerPort"] == metrics_port
    assert ports["syslog"]["protocol"] == "UDP"
    assert ports["syslog"]["containerPort"] == int(args[args.index("--listen") + 1].rsplit(":", 1)[1])
    assert rx["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert rx["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    # syslogrx takes the arguments (its own parser, not ours).
    r = subprocess.run([binary("syslogrx"), *args, "--help"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


# The [Container] keys of podman's quadlet (pkg/systemd/quadlet/quadlet.go,
# supportedKeys of the Container group) that podman 4.4 to 4.6 already had.
QUADLET_44_KEYS = {
    "AddCapability", "AddDevice", "Annotation", "AutoUpdate", "ContainerName",
    "DropCapability", "Environment", "EnvironmentFile", "EnvironmentHost", "Exec",
    "ExposeHostPort", "Group", "HealthCmd", "HealthInterval", "HealthOnFailure",
    "HealthRetries", "HealthStartPeriod", "HealthStartupCmd", "HealthStartupInterval",
    "HealthStartupRetries", "HealthStartupSuccess", "HealthStartupTimeout", "HealthTimeout",
    "HostName", "IP", "IP6", "Image", "Label", "LogDriver", "Mount", "Network",
    "NoNewPrivileges", "Notify", "PodmanArgs", "PublishPort", "ReadOnly", "RemapGid",
    "RemapUid", "RemapUidSize", "RemapUsers", "Rootfs", "RunInit", "SeccompProfile",
    "SecurityLabelDisable", "SecurityLabelFileType", "SecurityLabelLevel",
    "SecurityLabelType", "Secret", "Tmpfs", "Timezone", "User", "UserNS", "VolatileTmp",
    "Volume", "WorkingDir",
}


def test_quadlet_runs_the_image_with_no_privilege_but_port_514():
    sections = {s for s, _, _ in quadlet.entries(QUADLET)}
    assert sections == {"Unit", "Container", "Service", "Install"}
    c = quadlet.container_keys(QUADLET)
    for k in c:
        assert k in QUADLET_44_KEYS, f"{k}: not a quadlet [Container] key"
    assert c["Image"] == [f"localhost/syslogrx:{version()}"]
    assert c["Network"] == ["host"]
    assert c["DropCapability"] == ["all"]
    # SC4S's default UDP port is 514, below 1024: that capability alone.
    assert c["AddCapability"] == ["CAP_NET_BIND_SERVICE"] and "PodmanArgs" not in c
    assert c["NoNewPrivileges"] == ["true"]
    # SC4S's env_file and the config file, mounted read-only and named by
    # Exec's flags: syslogrx reads them itself (and names their lines).
    assert "/opt/sc4s/env_file:/opt/sc4s/env_file:ro" in c["Volume"]
    assert "/etc/syslogrx/syslogrx-container.conf:/etc/syslogrx/syslogrx.conf:ro" in c["Volume"]
    exec_args = shlex.split(c["Exec"][0])
    assert exec_args == ["--env-file", "/opt/sc4s/env_file",
                         "--config", "/etc/syslogrx/syslogrx.conf"], exec_args
    # syslogrx takes the Exec line's arguments, and the config file names an output.
    r = subprocess.run([binary("syslogrx"), *exec_args, "--help"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    with open(CONTAINER_CONF) as f:
        assert re.search(r"^output = tcp:", f.read(), re.M)


@pytest.mark.skipif(not os.access(GENERATOR, os.X_OK),
                    reason="no quadlet generator here (podman 4.3 has none: Debian 12)")
def test_quadlet_generator_makes_the_podman_run(tmp_path):
    r = subprocess.run([GENERATOR, "--dryrun"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, QUADLET_UNIT_DIRS=os.path.dirname(QUADLET)))
    assert r.returncode == 0, r.stderr
    run = next(l for l in r.stdout.splitlines() if l.startswith("ExecStart=") and " run " in l)
    for flag in ("--network host", "--cap-drop all", "-v /opt/sc4s/env_file:/opt/sc4s/env_file:ro",
                 f"localhost/syslogrx:{version()}"):
        assert flag in run, run

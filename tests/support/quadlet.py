# SPDX-License-Identifier: MIT
"""A podman quadlet (.container) read as quadlet reads it, and turned into
the `podman run` arguments its generator makes for the keys the project's
quadlet uses: a host whose podman has no generator (podman 4.3, Debian 12)
runs the same container."""
import re
import shlex


def entries(path):
    """[(section, key, value)] as systemd's parser reads a unit: comments
    (# ;) skipped, keys repeatable."""
    section, out = None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            m = re.fullmatch(r"\[(\w+)\]", line)
            if m:
                section = m.group(1)
                continue
            key, sep, value = line.partition("=")
            assert sep and section, f"not a unit line: {line!r}"
            out.append((section, key.strip(), value.strip()))
    return out


def container_keys(path):
    """{key: [values]} of the [Container] section."""
    c = {}
    for section, key, value in entries(path):
        if section == "Container":
            c.setdefault(key, []).append(value)
    return c


def podman_run_args(path, name, host_paths=None):
    """(options, image, arguments) of the `podman run` the quadlet makes
    (pkg/systemd/quadlet/quadlet.go's mapping), named `name`; host_paths
    maps a Volume='s host side to another (a test's own files)."""
    host_paths = host_paths or {}
    c = container_keys(path)
    known = {"Image", "ContainerName", "Network", "DropCapability", "AddCapability",
             "NoNewPrivileges", "Volume", "Exec", "SeccompProfile", "EnvironmentFile"}
    assert set(c) <= known, f"keys this reading does not map: {set(c) - known}"
    opts = ["--name", name]
    for v in c.get("Network", []):
        opts.append(f"--network={v}")
    for v in c.get("DropCapability", []):
        opts.append(f"--cap-drop={v.lower()}")
    caps = [cap.lower() for v in c.get("AddCapability", []) for cap in v.split()]
    if caps:
        opts.append("--cap-add=" + ",".join(caps))
    if c.get("NoNewPrivileges") == ["true"]:
        opts.append("--security-opt=no-new-privileges")
    for v in c.get("SeccompProfile", []):
        opts.append(f"--security-opt=seccomp={v}")
    for v in c.get("EnvironmentFile", []):
        opts.append(f"--env-file={v}")
    for v in c.get("Volume", []):
        host, sep, rest = v.partition(":")
        opts += ["-v", f"{host_paths.get(host, host)}{sep}{rest}"]
    (image,) = c["Image"]
    args = shlex.split(c["Exec"][0]) if "Exec" in c else []
    return opts, image, args

#!/usr/bin/env python3
"""Writes dist/seccomp-ebpf.json: containers-common's default seccomp profile
(/usr/share/containers/seccomp.json, what podman applies) with bpf() allowed
to a container that has CAP_BPF and perf_event_open() to one that has
CAP_PERFMON. The stock profile allows both only with CAP_SYS_ADMIN, so
--cap-add CAP_BPF alone still gets EPERM from seccomp, before the kernel
ever checks the capability. Every other rule is the stock one.
    lab/seccomp-ebpf.py [STOCK] > dist/seccomp-ebpf.json"""
import json
import sys

GRANTS = {"bpf": "CAP_BPF", "perf_event_open": "CAP_PERFMON"}

stock = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
with open(stock) as f:
    profile = json.load(f)

rules = []
for rule in profile["syscalls"]:
    names = [n for n in rule["names"] if n not in GRANTS]
    if names:
        rules.append(dict(rule, names=names))
for name, cap in GRANTS.items():
    # Allowed with CAP_SYS_ADMIN (as before) or with the narrow capability;
    # EPERM otherwise (excludes: the rule is left out if either is held).
    rules.append({"names": [name], "action": "SCMP_ACT_ALLOW",
                  "includes": {"caps": ["CAP_SYS_ADMIN"]}, "excludes": {}})
    rules.append({"names": [name], "action": "SCMP_ACT_ALLOW",
                  "includes": {"caps": [cap]}, "excludes": {"caps": ["CAP_SYS_ADMIN"]}})
    rules.append({"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                  "includes": {}, "excludes": {"caps": ["CAP_SYS_ADMIN", cap]}})
profile["syscalls"] = rules
json.dump(profile, sys.stdout, indent=1)
sys.stdout.write("\n")

"""The balancer policies have one table (include/bpf/balancer.h's
BALANCE_POLICIES, docs/design.md "Adding a balancer policy"): syslogrx's
--balance, udpbalance's --policy, their help and their errors read it
through src/net/balancer.c. A policy's name spelled as a C string anywhere
else, or a list of policies written out in a message, is a second table
the next policy would have to find and edit."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TABLE = os.path.join("include", "bpf", "balancer.h")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def policy_names():
    with open(os.path.join(ROOT, TABLE)) as f:
        return re.findall(r'\bP\(\s*[A-Z]+\s*,\s*\d+\s*,\s*"([a-z]+)"', f.read())


def c_strings(*tops):
    """(file:line, text) of every C string literal outside comments."""
    for top in tops:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                full = os.path.join(dirpath, n)
                rel = os.path.relpath(full, ROOT)
                with open(full, errors="replace") as f:
                    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                                  f.read(), flags=re.S)
                for i, line in enumerate(text.splitlines(), 1):
                    line = re.sub(r"//.*", "", line)
                    for s in STRING.findall(line):
                        yield f"{rel}:{i}", s


def test_the_table_names_the_policies():
    assert policy_names() == ["random", "roundrobin", "leastloaded", "hash"]


# Files that name one particular policy as a value, and why: none of them
# would change for a new policy.
NAMES_ONE = {
    "src/rx/settings/advice.c": "the advice names the policy it suggests (random)",
    "src/rx/settings/env_file.c": "SC4S's eBPF setting maps to random, its absence to hash",
    "tools/udpbalance.c": "--cbpf runs random, and its JSON says so",
}


def test_no_policy_name_is_spelled_outside_the_table():
    names = set(policy_names())
    found = [f"{where}: \"{s}\"" for where, s in c_strings("src", "tools", "bpf", "include")
             if s in names and where.split(":")[0] not in NAMES_ONE
             and where.split(":")[0] != TABLE]
    assert not found, "a policy's name outside its table:\n" + "\n".join(found)


def test_no_message_lists_the_policies_by_hand():
    names = "|".join(policy_names())
    listing = re.compile(rf"\b({names})\b\s*(,|\||or|and)\s*\b({names})\b")
    found = [f"{where}: \"{s}\"" for where, s in c_strings("src", "tools")
             if listing.search(s)]
    assert not found, "policies listed by hand (balance_policy_list builds it):\n" + \
        "\n".join(found)

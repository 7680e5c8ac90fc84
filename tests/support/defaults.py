# SPDX-License-Identifier: MIT
"""syslogrx's defaults that tests compute their bounds with."""

BATCH = 64              # syslogrx's default --batch: read before its cost is spent
NOBODY = 65534          # the unprivileged uid tests run syslogrx as (--user, setpriv)

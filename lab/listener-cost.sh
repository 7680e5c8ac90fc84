#!/bin/bash
# SPDX-License-Identifier: MIT
# What a listener costs: syslogrx with N listeners on 127.0.0.1 (ports
# 16001..16000+N, 4 sockets each, 2 threads, --output null), measured once it
# is ready and idle for a second: RSS, threads, sockets, and the BPF maps,
# programs and links it holds with their map memory (fdinfo's memlock).
# Usage: lab/listener-cost.sh N   (from the top of the tree, after make)
set -eu
n=${1:?usage: lab/listener-cost.sh N}
args=()
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for i in $(seq 1 "$n"); do args+=(--listen "l$i=127.0.0.1:$((16000 + i))"); done
t0=$(date +%s.%N)
build/syslogrx "${args[@]}" --output null 2>"$err" &
pid=$!
until grep -q "ready on" "$err"; do
	kill -0 "$pid" 2>/dev/null || { cat "$err"; exit 1; }
	sleep 0.05
done
t1=$(date +%s.%N)
sleep 1
rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
thr=$(awk '/Threads/{print $2}' "/proc/$pid/status")
fds=$(ls -l "/proc/$pid/fd")
memlock=$(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '/^memlock:/{s += $2} END {print s + 0}')
awk -v n="$n" -v t0="$t0" -v t1="$t1" -v rss="$rss" -v thr="$thr" -v ml="$memlock" \
    -v maps="$(grep -c 'bpf-map' <<<"$fds" || true)" -v progs="$(grep -c 'bpf-prog' <<<"$fds" || true)" \
    -v links="$(grep -c 'bpf_link\|bpf-link' <<<"$fds" || true)" -v socks="$(grep -c 'socket:' <<<"$fds" || true)" \
    'BEGIN { printf "listeners=%d start_s=%.2f rss_kib=%d threads=%d sockets=%d bpf_maps=%d bpf_progs=%d bpf_links=%d bpf_memlock_kib=%d\n", n, t1 - t0, rss, thr, socks, maps, progs, links, ml / 1024 }'
kill "$pid"
wait "$pid" || true

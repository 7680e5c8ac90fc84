#!/usr/bin/env bash
# The main job of `make run`: syslogrx on a local port, a short paced load
# from sysloggen (one flow, like the SC4S table), the summary, and the same
# load against the kernel's hash for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PORT:-5514}
RATE=${RATE:-50000}
SECS=${SECS:-3}
OUT=$(mktemp -d /tmp/syslogrx-demo.XXXXXX)
trap 'kill $RX 2>/dev/null || true; wait 2>/dev/null || true' EXIT

run_one() {
	local balance=$1
	build/syslogrx --listen 127.0.0.1:$PORT --sockets 8 --threads 2 --balance "$balance" \
		--rcvbuf 212992 --cost-ns 20000 --output file:"$OUT/$balance.log" \
		--summary "$OUT/$balance.json" --sequences 2> "$OUT/$balance.err" &
	RX=$!
	# wait for "ready"
	for _ in $(seq 100); do grep -q "ready on" "$OUT/$balance.err" && break; sleep 0.05; done
	build/sysloggen --target 127.0.0.1:$PORT --rate "$RATE" --duration "$SECS" --size 200 \
		--sources 1 --json > "$OUT/$balance.gen" 2> "$OUT/$balance.gen.err"
	sleep 0.3
	kill -TERM $RX
	wait $RX
	"${PYTHON:-/usr/bin/python3}" - "$OUT/$balance.json" "$balance" "$OUT/$balance.gen" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["totals"]
gen = json.loads(open(sys.argv[3]).read().splitlines()[-1])
sent = gen["datagrams"]  # the sender's own count: its messages and its flows' end markers
print(f"\n== --balance {sys.argv[2]}: 8 sockets, 2 threads, 20 us of work per message, "
      f"default rcvbuf, one flow")
print(f"{'socket':>6} {'cookie':>12} {'received':>9} {'steered':>8} {'drops':>7} {'queue hwm':>10}")
for x in s["sockets"]:
    st = "-" if x["steered"] is None else x["steered"]
    print(f"{x['index']:>6} {x['cookie']:>12} {x['received']:>9} {st:>8} "
          f"{x['kernel_drops']['total']:>7} {x['queue_hwm_bytes']:>10}")
print(f"sent {sent}, received {t['received']}, kernel drops {t['kernel_drops']['total']} "
      f"({100.0 * t['kernel_drops']['total'] / max(sent, 1):.1f}%), written {t['written']}, "
      f"drops match SO_MEMINFO: {t['kernel_drops_match_so_meminfo']}")
loss = s["loss"]
print(f"sequence: sent {loss['sent']}, received {loss['received']}, missing {loss['missing']}, "
      f"end markers lost {loss['end_markers_lost']}, equal to the kernel drops: "
      f"{loss['gaps_equal_kernel_drops']}")
books = t["received"] + t["kernel_drops"]["total"] + t["abandoned"]
print(f"books: sent {sent} = received + kernel drops + abandoned = {books}: "
      f"{'closed' if books == sent else 'NOT CLOSED'}")
PY
}

echo "syslogrx demo: $RATE msgs/s for ${SECS}s to 127.0.0.1:$PORT (outputs in $OUT)"
run_one hash
run_one random
echo
echo "Full summaries: $OUT/hash.json $OUT/random.json"

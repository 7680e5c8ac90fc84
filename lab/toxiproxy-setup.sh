#!/bin/sh
# SPDX-License-Identifier: MIT
#
# toxiproxy-setup.sh: build Shopify's Toxiproxy server (the TCP proxy that
# injects faults: latency, bandwidth, timeouts, resets) for the fault tests
# (tests/support/toxiproxy.py, lab/chaos.py), with `go install` of its pinned
# module from the Go module proxy, into DEST (default build/toxiproxy):
#
#   build/toxiproxy/toxiproxy-server -host 127.0.0.1 -port PORT
#
# Go: Toxiproxy needs go >= 1.23; the one found or fetched as
# lab/go-toolchain.sh says (Debian 12's golang 1.19 included). The module
# and build caches keep their defaults: a second build comes from them.
#
# USAGE: lab/toxiproxy-setup.sh [DEST]
#        GO=/path/to/go lab/toxiproxy-setup.sh     (that go, same rules)
# Idempotent: a DEST whose server runs and was built by this script as it
# is now is left as it is. Prints the server's path last.
set -eu

TOXIPROXY_VERSION=v2.12.0
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/lab/go-toolchain.sh"
DEST=${1:-$root/build/toxiproxy}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
bin=$DEST/toxiproxy-server
stamp=$DEST/.complete

want=$( (cat "$0" "$root/lab/go-toolchain.sh") | sha256sum | cut -d' ' -f1)
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
	"$bin" -version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi

log() { echo "toxiproxy-setup: $*" >&2; }

pick_go

# cmd/server's binary is named "server": installed into a folder of its own,
# then renamed.
GOBIN=$DEST/tools "$GO" install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" >&2
cp "$DEST/tools/server" "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" -version >/dev/null 2>&1 || { log "$bin does not run"; exit 1; }
echo "$want" > "$stamp"
echo "$bin"

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# otelcol-setup.sh: build a real OpenTelemetry Collector for the OTLP tests
# with the collector's own builder (go.opentelemetry.io/collector/cmd/builder,
# pinned) from the Go module proxy, into DEST (default build/otelcol):
#
#   build/otelcol/otelcol-syslogrx --config collector.yaml
#
# Components: otlpreceiver, batchprocessor, debugexporter, otlphttpexporter
# (lab/otelcol/builder-config.yaml). GOPATH and GOCACHE keep their defaults,
# so a second build (CI's next run) comes from the module and build caches.
#
# Go: the builder and the collector need go >= 1.26, found or fetched as
# lab/go-toolchain.sh says (Debian 12's golang 1.19 included).
#
# USAGE: lab/otelcol-setup.sh [DEST]
#        GO=/path/to/go lab/otelcol-setup.sh     (that go, same rules)
# Idempotent: a DEST whose collector runs and was built from the same
# builder config is left as it is. Prints the collector's path last.
set -eu

BUILDER_VERSION=v0.165.0
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/lab/go-toolchain.sh"
conf=${OTELCOL_CONF:-$root/lab/otelcol/builder-config.yaml}
DEST=${1:-$root/build/otelcol}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
bin=$DEST/otelcol-syslogrx
stamp=$DEST/.complete

want=$( (cat "$conf" "$0" "$root/lab/go-toolchain.sh") | sha256sum | cut -d' ' -f1)
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
	"$bin" components >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi

log() { echo "otelcol-setup: $*" >&2; }

pick_go

# The builder itself, installed into DEST (not GOPATH/bin).
work=$DEST/work
mkdir -p "$work"
GOBIN=$DEST/tools "$GO" install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" >&2
sed "s|OUTPUT_PATH|$work/src|" "$conf" > "$work/builder-config.yaml"
# The builder runs the go it is told (PATH first): the same one, same toolchain.
PATH=$(dirname "$GO"):$PATH "$DEST/tools/builder" --config "$work/builder-config.yaml" >&2
cp "$work/src/otelcol-syslogrx" "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" components >/dev/null 2>&1 || { log "$bin does not run"; exit 1; }
echo "$want" > "$stamp"
echo "$bin"

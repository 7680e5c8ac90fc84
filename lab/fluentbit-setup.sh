#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fluentbit-setup.sh: build a minimal Fluent Bit (in_syslog, out_null,
# out_file; nothing else) from a source tree the operator provides, for the
# bench's and the sweep's Fluent Bit rows. No Debian or PyPI package carries
# Fluent Bit; docs/lab.md says where to get the tree and which release
# (v5.1.1 is the one measured). The bench runs
#
#   build/fluentbit/fluent-bit -c CONF
#
# Build deps: Debian's cmake, flex, bison and libsqlite3-dev (not in the
# Makefile's DEB_PKGS: only this script needs them, and only when an
# operator runs it), the C/C++ compiler and libssl-dev (in DEB_PKGS).
#
# What v5.1.1 needs to build here (docs/lab.md says the same):
#   FLB_USE_SIMDUTF=No  the bundled simdutf 5.5 does not compile with GCC 12
#                       ("inlining failed ... _mm256_cmpeq_epi8: target
#                       specific option mismatch"); only UTF-16 needs it
#   FLB_HTTP_SERVER on  with it off, src/unicode does not compile: the
#                       generated mk_core_info.h is on the include path only
#                       through the HTTP server's CMake (the peer uses the
#                       server anyway, for its counts)
#   FLB_TLS, FLB_AWS on with TLS off the AWS credentials code does not
#                       compile (it uses the TLS fields unguarded); with AWS
#                       off flb_http_client.c does not (struct
#                       flb_upstream_node reaches it only through the AWS
#                       headers)
#   FLB_RECORD_ACCESSOR the binary and flb_mp.c call it whatever the option
#   on (flex, bison)    says: with it off, the link fails
#   FLB_SQLDB on,       with it off src/flb_blob_db.c does not compile (its
#   Debian's sqlite     no-database stubs miss their header); Debian's
#                       libsqlite3 instead of the bundled amalgamation, which
#                       a tree exported from a partial clone may lack
#
# USAGE: lab/fluentbit-setup.sh SRC [DEST]      (default DEST: build/fluentbit)
# Idempotent: a DEST whose fluent-bit was built from the same SRC version and
# this script, and runs, is left as it is. Prints the binary's path last.
set -eu

[ $# -ge 1 ] || { echo "usage: lab/fluentbit-setup.sh SRC [DEST]" >&2; exit 2; }
SRC=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
DEST=${2:-$root/build/fluentbit}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
bin=$DEST/fluent-bit
stamp=$DEST/.complete
log() { echo "fluentbit-setup: $*" >&2; }

for tool in cmake flex bison; do
	command -v $tool >/dev/null || { log "$tool is missing: apt-get install $tool"; exit 1; }
done
pkg-config --exists sqlite3 ||
	{ log "sqlite3's headers are missing: apt-get install libsqlite3-dev"; exit 1; }
[ -f "$SRC/CMakeLists.txt" ] && [ -d "$SRC/plugins/in_syslog" ] ||
	{ log "$SRC is not a Fluent Bit source tree (no plugins/in_syslog)"; exit 2; }
want=$( (grep -E '^set\(FLB_VERSION_(MAJOR|MINOR|PATCH)' "$SRC/CMakeLists.txt"; cat "$0") |
	sha256sum | cut -d' ' -f1)
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
	"$bin" --version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi

# FLB_MINIMAL turns every plugin off; the three named are turned back on.
# Everything the bench does not use is off, so the build takes minutes.
work=$DEST/work
mkdir -p "$work"
cmake -S "$SRC" -B "$work" -DCMAKE_BUILD_TYPE=Release \
	-DFLB_MINIMAL=On -DFLB_IN_SYSLOG=On -DFLB_OUT_NULL=On -DFLB_OUT_FILE=On \
	-DFLB_USE_SIMDUTF=No -DFLB_SQLDB=On -DFLB_PREFER_SYSTEM_LIB_SQLITE=On -DFLB_RECORD_ACCESSOR=On -DFLB_STREAM_PROCESSOR=Off \
	-DFLB_AWS=On -DFLB_LUAJIT=Off -DFLB_WASM=Off -DFLB_KAFKA=Off -DFLB_ZIG=Off -DFLB_TLS=On \
	-DFLB_HTTP_SERVER=On -DFLB_EXAMPLES=Off -DFLB_SHARED_LIB=Off -DFLB_PROFILES=Off \
	-DFLB_CHUNK_TRACE=Off -DFLB_CONFIG_YAML=Off -DFLB_AVRO_ENCODER=Off \
	-DFLB_TESTS_RUNTIME=Off -DFLB_TESTS_INTERNAL=Off >&2
cmake --build "$work" -j "$(nproc)" --target fluent-bit-bin >&2
cp "$work/bin/fluent-bit" "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" --version >/dev/null 2>&1 || { log "$bin does not run"; exit 1; }
echo "$want" > "$stamp"
echo "$bin"

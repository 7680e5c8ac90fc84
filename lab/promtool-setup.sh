#!/bin/sh
# SPDX-License-Identifier: MIT
#
# promtool-setup.sh: fetch Debian's prometheus package and unpack it under
# build/prometheus WITHOUT installing it (installing would start a
# Prometheus server as a service). The tests only need its promtool:
#
#   build/prometheus/usr/bin/promtool check metrics < scraped.txt
#
# USAGE: lab/promtool-setup.sh [DEST]        (default: build/prometheus)
# Idempotent: a DEST whose promtool already runs is left as it is (the
# download happens once per build/ directory).
set -eu

DEST=${1:-build/prometheus}
mkdir -p "$DEST/debs"
DEST=$(cd "$DEST" && pwd)
PROMTOOL=$DEST/usr/bin/promtool

if [ -x "$PROMTOOL" ] && "$PROMTOOL" --version >/dev/null 2>&1; then
	echo "promtool-setup: $PROMTOOL is ready"
	exit 0
fi

cd "$DEST/debs"
if ! ls prometheus_*.deb >/dev/null 2>&1; then
	# apt-get download needs the package lists; update only when it cannot find it.
	apt-get -o APT::Sandbox::User=root download prometheus >/dev/null 2>&1 || {
		apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
		apt-get -o APT::Sandbox::User=root download prometheus
	}
fi
# Only promtool is kept: the rest of the tree (etc/init.d, ...) has names the
# Makefile's dependency-file search would pick up.
rm -rf "$DEST/unpacked"
for deb in "$DEST"/debs/prometheus_*.deb; do
	dpkg -x "$deb" "$DEST/unpacked"
done
mkdir -p "$DEST/usr/bin"
mv "$DEST/unpacked/usr/bin/promtool" "$PROMTOOL"
rm -rf "$DEST/unpacked"
if ! "$PROMTOOL" --version >/dev/null 2>&1; then
	echo "promtool-setup: $PROMTOOL does not run" >&2
	exit 1
fi
echo "promtool-setup: $PROMTOOL is ready ($("$PROMTOOL" --version 2>&1 | head -1))"

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rsyslog-setup.sh: fetch Debian's rsyslog and unpack it under build/rsyslog
# WITHOUT installing it (rsyslog and syslog-ng-core conflict as packages, and
# syslog-ng-core stays installed). The sweep runs
#
#   LD_LIBRARY_PATH=build/rsyslog/usr/lib/x86_64-linux-gnu \
#   build/rsyslog/usr/sbin/rsyslogd -n -f CONF -M build/rsyslog/usr/lib/x86_64-linux-gnu/rsyslog -i PIDFILE
#
# Library dependencies are taken from ldd: every "not found" library of
# rsyslogd and of the module the sweep loads (imudp; omfile is built in) is
# mapped to the package Debian names after its soname (libestr.so.0 ->
# libestr0), downloaded with apt-get -o APT::Sandbox::User=root download and unpacked alongside.
#
# USAGE: lab/rsyslog-setup.sh [DEST]        (default: build/rsyslog)
# Idempotent: a DEST whose rsyslogd already runs is left as it is.
set -eu

DEST=${1:-build/rsyslog}
mkdir -p "$DEST/debs"
DEST=$(cd "$DEST" && pwd)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
LIBDIR=$DEST/usr/lib/$MULTIARCH
RSYSLOGD=$DEST/usr/sbin/rsyslogd
MODDIR=$LIBDIR/rsyslog

missing_libs() {
	LD_LIBRARY_PATH=$LIBDIR ldd "$RSYSLOGD" "$MODDIR/imudp.so" 2>/dev/null |
		awk '/not found/ { print $1 }' | sort -u
}

# libestr.so.0 -> libestr0, libfastjson.so.4 -> libfastjson4,
# liblognorm.so.5 -> liblognorm5: Debian's library package naming policy.
package_of() {
	echo "$1" | sed -e 's/\.so\./ /' -e 's/\.//g' | awk '{ n = $1; v = $2;
		if (n ~ /[0-9]$/) print n "-" v; else print n v }'
}

if [ -x "$RSYSLOGD" ] && [ -z "$(missing_libs)" ]; then
	echo "rsyslog-setup: $RSYSLOGD is ready"
	exit 0
fi

DEST_ABS=$DEST
cd "$DEST_ABS/debs"
if ! ls rsyslog_*.deb >/dev/null 2>&1; then
	# apt-get -o APT::Sandbox::User=root download needs the package lists; update only when it cannot find it.
	apt-get -o APT::Sandbox::User=root download rsyslog >/dev/null 2>&1 || {
		apt-get update -qq >/dev/null
		apt-get -o APT::Sandbox::User=root download rsyslog
	}
fi
cd "$DEST_ABS/.."
for deb in "$DEST_ABS"/debs/*.deb; do
	dpkg -x "$deb" "$DEST_ABS"
done

# Missing libraries: at most a few rounds (a library may need another).
for round in 1 2 3; do
	libs=$(missing_libs)
	[ -z "$libs" ] && break
	cd "$DEST_ABS/debs"
	for lib in $libs; do
		pkg=$(package_of "$lib")
		echo "rsyslog-setup: $lib is missing: downloading $pkg"
		apt-get -o APT::Sandbox::User=root download "$pkg"
	done
	for deb in "$DEST_ABS"/debs/*.deb; do
		dpkg -x "$deb" "$DEST_ABS"
	done
	cd "$DEST_ABS/.."
done

libs=$(missing_libs)
if [ -n "$libs" ]; then
	echo "rsyslog-setup: still missing after download: $libs" >&2
	exit 1
fi
if ! LD_LIBRARY_PATH=$LIBDIR "$RSYSLOGD" -v >/dev/null; then
	echo "rsyslog-setup: $RSYSLOGD does not run" >&2
	exit 1
fi
echo "rsyslog-setup: $RSYSLOGD is ready ($(LD_LIBRARY_PATH=$LIBDIR "$RSYSLOGD" -v | head -1))"

#!/bin/sh
# A fresh Debian 12 root for the package's install test (tests/integration/
# test_deb.py), kept under build/ and booted read-only beneath a tmpfs
# (systemd-nspawn --volatile=overlay), so every run starts from it unchanged:
#
#   lab/deb-root.sh ROOT DEB
#
# Made once: debootstrap --variant=minbase bookworm with systemd (to boot as
# PID 1) and the package lists (apt reads them to resolve DEB's Depends).
# Then, and whenever DEB changes, the packages DEB depends on are downloaded
# into ROOT's apt cache, not installed: the test's container has no network,
# and `apt install ./DEB` in it installs them from there, as it would on a
# new machine. Needs root (chroot).
set -eu
root=$1
deb=$2
mirror=${DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)}
mirror=${mirror:-http://deb.debian.org/debian}

if [ "$(id -u)" != 0 ]; then
	echo "deb-root: root is needed (debootstrap, chroot)" >&2
	exit 1
fi
if [ ! -f "$root/.base-ready" ]; then
	echo "deb-root: debootstrap --variant=minbase bookworm into $root (once)" >&2
	rm -rf "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase --include=systemd bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
		{ tail -20 "$root.log" >&2; exit 1; }
	rm -f "$root.log"
	# The host's sources (a mirror or snapshot it may be pinned to).
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
		rm -f "$root/etc/apt/sources.list"
	fi
	rm -f "$root"/var/cache/apt/archives/*.deb
	chroot "$root" apt-get update -qq >/dev/null
	# A root with no machine-id boots into first-boot mode; nspawn gives one.
	: >"$root/etc/machine-id"
	touch "$root/.base-ready"
fi
# DEB's dependencies, downloaded (apt-get clean first: only what it needs).
name=$(basename "$deb")
cp "$deb" "$root/tmp/$name"
trap 'rm -f "$root/tmp/$name"' EXIT
chroot "$root" apt-get clean
chroot "$root" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --download-only /tmp/$name" >/dev/null ||
	{ chroot "$root" apt-get update -qq >/dev/null &&
	  chroot "$root" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --download-only /tmp/$name" >/dev/null; }
rm -f "$root"/var/cache/apt/archives/"$name"

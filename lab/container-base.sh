#!/bin/sh
# The base image for dist/Containerfile on a machine that cannot pull one:
#   lab/container-base.sh IMAGE BASE
# prints the image to build FROM. IMAGE (e.g. docker.io/library/debian:bookworm)
# if podman has it or can pull it; otherwise BASE (e.g. localhost/syslogrx-base:bookworm),
# made once with `debootstrap --variant=minbase bookworm` and `podman import`,
# then reused from podman's storage.
set -eu
image=$1
base=$2

if podman image exists "$image" || podman pull -q "$image" >/dev/null 2>&1; then
	echo "$image"
	exit 0
fi
if podman image exists "$base"; then
	echo "$base"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "container-base: $image cannot be pulled, and debootstrap needs root to make $base" >&2
	exit 1
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/syslogrx-base.XXXXXX")
trap 'rm -rf "$root"' EXIT
echo "container-base: $image cannot be pulled: debootstrap --variant=minbase bookworm into $base" >&2
debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$root.log" 2>&1 ||
	{ tail -20 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
# What a bookworm image from the registry has and debootstrap leaves out.
cat >"$root/etc/apt/sources.list" <<SRC
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SRC
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | podman import -q - "$base" >/dev/null
echo "$base"

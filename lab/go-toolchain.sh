# SPDX-License-Identifier: MIT
#
# go-toolchain.sh: sourced (not run) by the scripts that build the lab's Go
# tools from the Go module proxy (otelcol-setup.sh, toxiproxy-setup.sh):
#
#   root=...; . "$root/lab/go-toolchain.sh"; pick_go
#
# pick_go sets GO to a go command that builds modules needing go >= 1.26
# (TOOLCHAIN below). A `go` that old or newer is used as it is; an older one
# (>= 1.21) fetches the pinned toolchain through the module proxy
# (GOTOOLCHAIN, exported). Without any go >= 1.21 (Debian 12 has golang
# 1.19), one is installed from Debian's packages (golang-1.2x-go, from
# bookworm-backports when that is configured); failing that, Debian's
# golang-1.19-go downloads the toolchain module from the proxy itself, into
# build/go-TOOLCHAIN. GO=/path/to/go in the environment: that go, same rules.
# GOPATH and GOCACHE keep their defaults, so a second build comes from the
# module and build caches. Logs on stderr with the caller's log().

TOOLCHAIN=go1.26.8

# go_minor GO: the minor version of that go command (19 for go1.19.8), 0 if it
# does not run. GOTOOLCHAIN=local: ask the binary itself, not what it would switch to.
go_minor() {
	v=$(GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null) || { echo 0; return; }
	v=${v#go1.}
	echo "${v%%[!0-9]*}"
}

# find_go: the newest go among PATH, /usr/local/go and Debian's /usr/lib/go-1.*.
find_go() {
	best= bestm=0
	for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go-1.*/bin/go; do
		[ -n "$g" ] && [ -x "$g" ] || continue
		m=$(go_minor "$g")
		if [ "$m" -gt "$bestm" ]; then best=$g bestm=$m; fi
	done
	echo "$best"
}

# apt_go: install the newest golang-1.2x-go Debian offers (backports included).
apt_go() {
	[ "$(id -u)" = 0 ] || { log "no go >= 1.21 and not root: install golang (>= 1.21) first"; return 1; }
	export DEBIAN_FRONTEND=noninteractive
	# Another apt (the machine's own, a package install) may hold the lock:
	# wait for it rather than fail.
	apt="apt-get -o DPkg::Lock::Timeout=600"
	$apt update -qq >&2 || true
	pkg= rel=
	for p in $(apt-cache pkgnames golang-1. 2>/dev/null | grep -E '^golang-1\.[0-9]+-go$' | sort -t. -k2 -n -r); do
		m=${p#golang-1.}
		m=${m%-go}
		[ "$m" -ge 21 ] || continue
		pkg=$p
		break
	done
	if [ -n "$pkg" ]; then
		if apt-cache policy "$pkg" | grep -q backports; then
			rel="-t $(. /etc/os-release && echo "$VERSION_CODENAME")-backports"
		fi
		log "installing $pkg from Debian"
		# shellcheck disable=SC2086
		$apt install -y -qq $rel "$pkg" >&2 && return 0
	fi
	log "no golang >= 1.21 in Debian's lists: golang-1.19-go fetches $TOOLCHAIN from the module proxy"
	$apt install -y -qq golang-1.19-go >&2
}

# toolchain_via_old_go GO: with a go < 1.21 (no GOTOOLCHAIN), download the
# toolchain as the Go module golang.org/toolchain and unpack it under build/.
toolchain_via_old_go() {
	arch=$("$1" env GOARCH)
	mod=golang.org/toolchain@v0.0.1-$TOOLCHAIN.linux-$arch
	tc=$root/build/go-$TOOLCHAIN
	if [ ! -x "$tc/bin/go" ]; then
		tmp=$(mktemp -d)
		(cd "$tmp" && "$1" mod init bootstrap >/dev/null 2>&1 &&
			GOFLAGS=-mod=mod "$1" mod download "$mod" >&2)
		dir=$("$1" env GOMODCACHE)/$mod
		[ -d "$dir" ] || { log "could not download $mod"; rm -rf "$tmp"; return 1; }
		rm -rf "$tc" && cp -r "$dir" "$tc" && chmod -R u+w "$tc"
		chmod +x "$tc"/bin/* "$tc"/pkg/tool/*/*
		rm -rf "$tmp"
	fi
	echo "$tc/bin/go"
}

# pick_go: GO (and GOTOOLCHAIN when needed) as the header says. One at a
# time (a lock on this file, fd 9): the collector's and Toxiproxy's set-ups
# may run at once (make test's background job, a test), and each may install
# golang with apt or unpack the toolchain into the same build/go-TOOLCHAIN.
pick_go() {
	exec 9<"$root/lab/go-toolchain.sh"
	flock 9
	pick_go_locked
	rc=$?
	exec 9<&-
	return $rc
}

pick_go_locked() {
	GO=${GO:-$(find_go)}
	minor=0
	[ -z "$GO" ] || minor=$(go_minor "$GO")
	if [ "$minor" -lt 19 ]; then
		apt_go
		GO=$(find_go)
		[ -n "$GO" ] || { log "no go command after installing golang"; return 1; }
		minor=$(go_minor "$GO")
	fi
	if [ "$minor" -lt 21 ]; then
		GO=$(toolchain_via_old_go "$GO")
	fi
	# Debian's and the upstream go.env say GOTOOLCHAIN=local: ask for the
	# pinned toolchain when this go is older than the modules need.
	if [ "$(go_minor "$GO")" -lt 26 ]; then
		export GOTOOLCHAIN=$TOOLCHAIN
	fi
	log "using $GO ($(GOTOOLCHAIN=${GOTOOLCHAIN:-local} "$GO" env GOVERSION))"
}

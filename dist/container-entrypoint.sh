#!/bin/sh
# The image's entrypoint: syslogrx, with what the container's environment
# says turned into its files. Arguments are syslogrx's own, unchanged.
#   SC4S_*      SC4S's env_file as podman/docker --env-file hands it over:
#               written to a file syslogrx reads with --env-file
#   SYSLOGRX_X  one setting each (SYSLOGRX_SOCKETS=8 is `sockets = 8`):
#               written to a file syslogrx reads with --config
# Precedence stays syslogrx's: env-file < config < command line.
# Where nothing names an address, the image listens on 0.0.0.0:5514
# (syslogrx's own default, 127.0.0.1, is unreachable from outside).
set -eu

given() { # given FLAG ARGS...: the command line has --FLAG or --FLAG=...
	f=$1
	shift
	for a in "$@"; do
		case $a in --"$f" | --"$f"=*) return 0 ;; esac
	done
	return 1
}
arg_of() { # arg_of FLAG ARGS...: the value of --FLAG V or --FLAG=V
	f=$1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--"$f"=*) echo "${1#--"$f"=}" && return 0 ;;
		--"$f") [ $# -ge 2 ] && echo "$2" && return 0 ;;
		esac
		shift
	done
	return 1
}

# names_listener ENV_FILE: syslogrx --env-file maps a listener from it, as
# SC4S listens: on its DEFAULT port (514 when unset) unless the file empties
# it, and on every other SC4S_LISTEN_<NAME>_UDP_PORT. An unreadable file is
# syslogrx's to refuse, with its name.
names_listener() {
	[ -r "$1" ] || return 0
	awk '
	{ sub(/(^|[ \t])#.*/, "") }
	/=/ {
		name = $0; sub(/=.*/, "", name); gsub(/^[ \t]+|[ \t]+$/, "", name)
		if (name !~ /^SC4S_LISTEN_.+_UDP_PORT$/) next
		value = $0; sub(/^[^=]*=/, "", value); gsub(/^[ \t]+|[ \t\r]+$/, "", value)
		gsub(/^["\047]|["\047]$/, "", value)
		if (name == "SC4S_LISTEN_DEFAULT_UDP_PORT") off = value == ""; else other = 1
	}
	END { exit !(other || !off) }' "$1"
}
# config_value KEY FILE: the value of `KEY = VALUE` in a config file, if any.
config_value() {
	sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p" "$2" 2>/dev/null | tail -n 1
}

dir=${TMPDIR:-/tmp}
pre=""
has_listen=no
given listen "$@" && has_listen=yes
for a in "$@"; do
	case $a in -l*) has_listen=yes ;; esac # -l ADDR, -lADDR
done
envf=$(arg_of env-file "$@") || envf=""

if env | grep -q '^SC4S_'; then
	if [ -n "$envf" ]; then
		echo "syslogrx-entrypoint: SC4S_* variables and --env-file both given: use one" >&2
		exit 2
	fi
	envf=$(mktemp "$dir/sc4s-variables.XXXXXX")
	env | grep '^SC4S_' >"$envf"
	pre="--env-file $envf"
fi

conf=$(arg_of config "$@") || conf=""
if env | grep -q '^SYSLOGRX_'; then
	if [ -n "$conf" ]; then
		echo "syslogrx-entrypoint: SYSLOGRX_* variables and --config both given: use one" >&2
		exit 2
	fi
	conf=$(mktemp "$dir/syslogrx-variables.XXXXXX")
	# SYSLOGRX_NO_TRACE= (empty) is the flag no-trace; VALUE keeps its case.
	env | sed -n 's/^SYSLOGRX_\([A-Z0-9_]*\)=\(.*\)$/\1 \2/p' | while read -r name value; do
		key=$(echo "$name" | tr 'A-Z_' 'a-z-')
		if [ -n "$value" ]; then echo "$key = $value"; else echo "$key"; fi
	done >"$conf"
	pre="$pre --config $conf"
fi
if [ -n "$conf" ]; then
	[ -n "$(config_value listen "$conf")" ] && has_listen=yes
	# The config's env-file, unless the command line names one.
	[ -n "$envf" ] || envf=$(config_value env-file "$conf")
fi
[ -n "$envf" ] && names_listener "$envf" && has_listen=yes

[ $has_listen = yes ] || pre="$pre --listen 0.0.0.0:5514"
# shellcheck disable=SC2086 # pre holds flags and generated paths without spaces
exec syslogrx $pre "$@"

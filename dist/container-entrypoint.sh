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

dir=${TMPDIR:-/tmp}
pre=""
has_listen=no
if given listen "$@" || given l "$@"; then
	has_listen=yes
fi
for a in "$@"; do
	case $a in -l*) has_listen=yes ;; esac
done

if env | grep -q '^SC4S_'; then
	if given env-file "$@"; then
		echo "syslogrx-entrypoint: SC4S_* variables and --env-file both given: use one" >&2
		exit 2
	fi
	envf=$(mktemp "$dir/sc4s-env.XXXXXX")
	env | grep '^SC4S_' >"$envf"
	grep -q '^SC4S_LISTEN_DEFAULT_UDP_PORT=' "$envf" && has_listen=yes
	pre="--env-file $envf"
elif f=$(arg_of env-file "$@"); then
	grep -Eq '^[[:space:]]*SC4S_LISTEN_DEFAULT_UDP_PORT[[:space:]]*=' "$f" 2>/dev/null && has_listen=yes
fi

if env | grep -q '^SYSLOGRX_'; then
	if given config "$@"; then
		echo "syslogrx-entrypoint: SYSLOGRX_* variables and --config both given: use one" >&2
		exit 2
	fi
	conf=$(mktemp "$dir/syslogrx-env.XXXXXX")
	# SYSLOGRX_NO_TRACE= (empty) is the flag no-trace; VALUE keeps its case.
	env | sed -n 's/^SYSLOGRX_\([A-Z0-9_]*\)=\(.*\)$/\1 \2/p' | while read -r name value; do
		key=$(echo "$name" | tr 'A-Z_' 'a-z-')
		if [ -n "$value" ]; then echo "$key = $value"; else echo "$key"; fi
	done >"$conf"
	grep -q '^listen = ' "$conf" && has_listen=yes
	pre="$pre --config $conf"
elif f=$(arg_of config "$@"); then
	grep -Eq '^[[:space:]]*listen[[:space:]]*=' "$f" 2>/dev/null && has_listen=yes
fi

[ $has_listen = yes ] || pre="$pre --listen 0.0.0.0:5514"
# shellcheck disable=SC2086 # pre holds flags and generated paths without spaces
exec syslogrx $pre "$@"

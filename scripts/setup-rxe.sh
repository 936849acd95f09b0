#!/usr/bin/env bash
# setup-rxe.sh: create a Soft-RoCE (rxe) or soft-iWARP (siw) RDMA device on a
# Linux netdev, so that RDMA programs can run without RDMA hardware.
#
#   setup-rxe.sh [--siw] [NETDEV]      create the device (idempotent), print its name
#   setup-rxe.sh [--siw] --del [NETDEV] remove it
#
# NETDEV defaults to the first non-loopback interface that is up. The device is
# named rxe0 (siw0 with --siw) unless one already exists on NETDEV.
# UDAPL_MODROOT, when set, is passed to modprobe -d (the VM loads modules from
# an unpacked kernel package that is not under /lib/modules).
set -euo pipefail

kind=rxe
del=0
netdev=""
for arg in "$@"; do
	case "$arg" in
	--siw) kind=siw ;;
	--del) del=1 ;;
	-h | --help)
		sed -n '2,11s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	-*)
		echo "setup-rxe.sh: unknown option $arg" >&2
		exit 2
		;;
	*) netdev=$arg ;;
	esac
done

die() {
	echo "setup-rxe.sh: $*" >&2
	exit 1
}

command -v rdma >/dev/null || die "the 'rdma' tool is missing: apt-get install iproute2"
[ "$(id -u)" = 0 ] || die "must run as root (loads kernel modules, adds RDMA links)"

module=rdma_rxe
[ "$kind" = siw ] && module=siw

load() {
	modprobe ${UDAPL_MODROOT:+-d "$UDAPL_MODROOT"} "$@"
}

if [ -z "$netdev" ]; then
	netdev=$(ip -o link show up | awk -F': ' '$2 != "lo" {sub(/@.*/, "", $2); print $2; exit}')
	[ -n "$netdev" ] || die "no network interface is up; name one: setup-rxe.sh NETDEV"
fi
ip link show "$netdev" >/dev/null 2>&1 || die "no such network interface: $netdev"

# existing prints the RDMA link already bound to $netdev by this kind, if any.
existing() {
	rdma link show 2>/dev/null | awk -v nd="$netdev" -v k="$kind" \
		'$0 ~ ("netdev " nd "( |$)") { split($2, a, "/"); if (index(a[1], k) == 1) { print a[1]; exit } }'
}

if [ "$del" = 1 ]; then
	dev=$(existing)
	if [ -n "$dev" ]; then
		rdma link delete "$dev"
		echo "removed $dev"
	fi
	exit 0
fi

if ! lsmod 2>/dev/null | grep -q "^$module "; then
	# crc32_generic is needed by rxe's ICRC; without it `rdma link add` fails with ENOENT.
	[ "$kind" = rxe ] && load -q crc32_generic 2>/dev/null || true
	load "$module" 2>/dev/null ||
		die "kernel $(uname -r) has no $module module (or modules cannot be loaded here); use scripts/vmtest.sh to run inside a VM that has it"
	load -q rdma_ucm 2>/dev/null || true
	load -q ib_uverbs 2>/dev/null || true
fi

dev=$(existing)
if [ -z "$dev" ]; then
	n=0
	while rdma link show "${kind}${n}/1" >/dev/null 2>&1; do n=$((n + 1)); done
	dev="${kind}${n}"
	rdma link add "$dev" type "$kind" netdev "$netdev" || die "rdma link add $dev on $netdev failed"
fi
echo "$dev"

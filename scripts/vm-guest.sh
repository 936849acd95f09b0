#!/bin/bash
# vm-guest.sh RUNDIR: runs in the test VM, chrooted into the host's root. It
# brings up the RDMA device (Soft-RoCE rxe0, or soft-iWARP siw0 when
# RUNDIR/rdma says siw), runs the command vmtest.sh wrote to RUNDIR/cmd with
# the host's environment, and leaves its exit status in RUNDIR/rc.
run=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
modroot=$(cat "$run/modroot")
kind=$(cat "$run/rdma" 2>/dev/null || echo rxe)
mp() { modprobe -d "$modroot" "$@"; }

fail() {
	echo "vm-guest: $*" >&2
	echo @@udapl-vm-begin@@
	echo "vm-guest: $*"
	echo 125 >"$run/rc"
	exit 125
}

dmesg -n 1 2>/dev/null
ip link set lo up
if [ -f "$run/net" ]; then
	# One of a pair of VMs (vmpair.sh): the device on the virtio NIC that joins
	# them, at the address in RUNDIR/net. netem is loaded for fault tests
	# (tc cannot load it: the modules are not under /lib/modules).
	mp virtio_net || fail "cannot load virtio_net"
	nd=""
	for _ in $(seq 50); do
		nd=$(ls /sys/class/net | grep -v '^lo$' | head -n1)
		[ -n "$nd" ] && break
		sleep 0.1
	done
	[ -n "$nd" ] || fail "no network interface appeared"
	ip addr add "$(cat "$run/net")" dev "$nd" && ip link set "$nd" up ||
		fail "cannot configure $nd"
	mp sch_netem || fail "cannot load sch_netem"
else
	nd=d0
	mp dummy numdummies=0 || fail "cannot load the dummy netdev module"
	ip link add d0 type dummy && ip addr add 192.0.2.1/24 dev d0 && ip link set d0 up ||
		fail "cannot create the dummy netdev d0"
fi
mp rdma_ucm && mp ib_uverbs || fail "cannot load rdma_ucm/ib_uverbs"
flag=()
[ "$kind" = siw ] && flag=(--siw)
dev=$(UDAPL_MODROOT=$modroot bash "$run/setup-rxe.sh" "${flag[@]}" "$nd") || fail "setup-rxe.sh failed"
[ "$dev" = "${kind}0" ] || fail "expected ${kind}0, got $dev"
# Wait until the port is ACTIVE (the netdev is up, so this is quick).
for _ in $(seq 50); do
	grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" || fail "$dev port 1 is not ACTIVE"
# Locked memory is limited by default; RDMA registrations need it.
ulimit -l unlimited
date +%s.%N >"$run/ready"

echo @@udapl-vm-begin@@
(
	set -a
	# shellcheck disable=SC1091
	. "$run/env"
	set +a
	# shellcheck disable=SC1091
	. "$run/cmd"
)
rc=$?
echo @@udapl-vm-end@@
echo $rc >"$run/rc"

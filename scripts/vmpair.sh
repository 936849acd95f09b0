#!/usr/bin/env bash
# vmpair.sh: run a command in two Soft-RoCE VMs joined by a link we can cut.
#
#   scripts/vmpair.sh CMD [ARGS...]
#
# VM A (192.0.2.1) and VM B (192.0.2.2) boot like the VM of scripts/vmtest.sh
# (same kernel, initramfs and host filesystem over 9p), but each has a virtio
# NIC, with rxe0 on it, instead of the dummy netdev. The NICs are joined by a
# qemu "dgram" netdev: UDP datagrams between two ports on 127.0.0.1. A dgram
# link has no connection, so either VM can die or freeze and the other sees
# only silence. (It drops some datagrams when the host is loaded: 0.5-1.5 %.)
#
# Both VMs run CMD in the current directory with the current environment and
#   UDAPL_PAIR_HOST  A or B
#   UDAPL_PAIR_SELF  this VM's address; UDAPL_PAIR_PEER the other's
#   UDAPL_PAIR_DIR   a directory in the shared /tmp through which the two
#                    sides and the host talk (files survive any link fault)
# The exit status is A's. When A's command ends the host creates
# $UDAPL_PAIR_DIR/stop, and powers B off if it is still running 15 s later.
#
# Host-side faults: a guest writes one line to $UDAPL_PAIR_DIR/host/NAME.req
# (write NAME.tmp, then rename it); the host carries it out and answers in
# NAME.done, "ok ..." or "error ...":
#   kill B            SIGKILL B's qemu: the host dies without a word
#   boot B            boot B again after a kill; answered when rxe0 is ready
#   link off|on       take B's NIC link down or up (qemu set_link)
#   stop B, cont B    freeze or resume B (qemu stop/cont)
#   link-blip MS      B's link down for MS milliseconds, then up again
#   freeze MS         B frozen for MS milliseconds, then resumed
#
# Environment: UDAPL_PAIR_MEM (MiB per VM, default 1024), UDAPL_PAIR_CPUS
# (default 1); UDAPL_VM_TIMEOUT, UDAPL_VM_VERBOSE and UDAPL_VM_TIMING as for
# vmtest.sh. B's output goes to a log that is printed (lines prefixed "B| ")
# when A's command fails or UDAPL_VM_VERBOSE=1.
#
# UDAPL_PAIR_PANIC_RETRY=1: when a guest kernel panics (Debian's 6.12 does now
# and then under rxe's requester: a double fault, nothing a user-space
# program can cause), the command runs once more in two fresh VMs. A's
# output is then held back until the attempt ends: a panicked attempt's is
# printed with every line prefixed "attempt 1| " (so go test reads no result
# from it), with the panic, and a line that says a second attempt follows.
# A second panic fails the run.
set -euo pipefail

mem=${UDAPL_PAIR_MEM:-1024}
cpus=${UDAPL_PAIR_CPUS:-1}
timeout_s=${UDAPL_VM_TIMEOUT:-2400}

die() {
	echo "vmpair.sh: $*" >&2
	exit 125
}

[ $# -gt 0 ] || die "usage: scripts/vmpair.sh CMD [ARGS...]"

# shellcheck source=vmlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vmlib.sh"
vm_prepare

start=$(date +%s.%N)

# boot NAME DIR boots VM NAME (A or B) with run directory DIR, in the
# background, and sets pid to its qemu's process id.
boot() {
	local name=$1 dir=$2 self peer lport rport mac
	if [ "$name" = A ]; then
		self=192.0.2.1 peer=192.0.2.2 lport=$port rport=$((port + 1)) mac=52:54:00:00:02:01
	else
		self=192.0.2.2 peer=192.0.2.1 lport=$((port + 1)) rport=$port mac=52:54:00:00:02:02
	fi
	(
		export UDAPL_PAIR_HOST=$name UDAPL_PAIR_SELF=$self UDAPL_PAIR_PEER=$peer UDAPL_PAIR_DIR=$ctl
		vm_rundir "$dir" "${cmd[@]}"
	)
	echo "$self/24" >"$dir/net"
	mkfifo "$dir/mon.in" "$dir/mon.out"
	local args
	mapfile -t args < <(vm_qemu_args "$dir" "$cpus" "$mem")
	# event_idx=off: with notification suppression on, A's NIC sometimes
	# stopped for good (73 buffers left in its TX ring, no interrupt either
	# way, every later test failing): 3 of 7 runs of TestHostFreezes and
	# TestLoss with a faster completion path; with it off, 0 of 4.
	qemu-system-x86_64 "${args[@]}" -monitor none \
		-chardev "pipe,id=mon,path=$dir/mon" -mon chardev=mon,mode=readline \
		-netdev "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,romfile=,event_idx=off" \
		</dev/null > >(if [ "$name" = A ] && [ -z "$a_out" ]; then vm_show; else vm_show >"$dir/out"; fi) 2>&1 &
	pid=$!
	# qemu holds the monitor's pipes open read-write; drain its answers.
	cat "$dir/mon.out" >"$dir/mon.log" &
}

# monitor DIR CMD sends one command to the qemu monitor of the VM in DIR.
monitor() {
	printf '%s\n' "$2" >"$1/mon.in"
}

# host_agent owns VM B: it boots it, carries out the guests' requests and
# powers B off once the stop file exists.
host_agent() {
	local n=1 bdir=$run/b.1 bpid req id reply verb arg t
	boot B "$bdir"
	bpid=$pid
	while [ ! -e "$ctl/stop" ]; do
		for req in "$ctl"/host/*.req; do
			[ -e "$req" ] || continue
			id=${req%.req}
			read -r verb arg <"$req" || true
			case "$verb $arg" in
			"kill B")
				kill -KILL "$bpid" 2>/dev/null || true
				wait "$bpid" 2>/dev/null || true
				reply="ok killed"
				;;
			"link off" | "link on")
				monitor "$bdir" "set_link n0 $arg"
				reply=ok
				;;
			"stop B" | "cont B")
				monitor "$bdir" "$verb"
				reply=ok
				;;
			"link-blip "* | "freeze "*)
				# An outage of exactly $arg ms, timed here rather than
				# across two requests.
				if [ "$verb" = freeze ]; then monitor "$bdir" stop; else monitor "$bdir" "set_link n0 off"; fi
				sleep "$((arg / 1000)).$(printf %03d $((arg % 1000)))"
				if [ "$verb" = freeze ]; then monitor "$bdir" cont; else monitor "$bdir" "set_link n0 on"; fi
				reply=ok
				;;
			"boot B") reply=boot ;;
			*) reply="error unknown request: $verb $arg" ;;
			esac
			if [ "$reply" = boot ]; then
				kill -KILL "$bpid" 2>/dev/null || true
				wait "$bpid" 2>/dev/null || true
				n=$((n + 1)) bdir=$run/b.$n
				boot B "$bdir"
				bpid=$pid
				for t in $(seq 1200); do
					[ -e "$bdir/ready" ] && break
					kill -0 "$bpid" 2>/dev/null || break
					sleep 0.1
				done
				if [ -e "$bdir/ready" ]; then reply="ok booted $n"; else reply="error B did not boot"; fi
			fi
			rm -f "$req"
			echo "$reply" >"$id.tmp"
			mv "$id.tmp" "$id.done"
		done
		sleep 0.05
	done
	for t in $(seq 150); do
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$bpid" 2>/dev/null || true
	wait "$bpid" 2>/dev/null || true
}

cmd=("$@")
runs=()
trap 'kill -KILL ${apid:-} ${agent:-} 2>/dev/null || true; rm -rf "${runs[@]}"' EXIT

# attempt runs the command once in two fresh VMs and sets rc to A's exit
# status (125: none reported) and status to A's qemu's. A's output goes to
# $run/a/out when a_out is set, else straight through.
attempt() {
	run=$(mktemp -d /tmp/udapl-vmpair.XXXXXX)
	runs+=("$run")
	ctl=$run/ctl
	mkdir -p "$ctl/host"
	# Two UDP ports on 127.0.0.1 for the link; A listens on port, B on port+1.
	port=$((20000 + RANDOM % 20000))
	host_agent &
	agent=$!
	boot A "$run/a"
	apid=$pid
	status=0
	( sleep "$timeout_s" && kill -KILL "$apid" ) >/dev/null 2>&1 </dev/null &
	local watchdog=$!
	wait "$apid" || status=$?
	pkill -P "$watchdog" 2>/dev/null || true
	kill "$watchdog" 2>/dev/null || true
	touch "$ctl/stop"
	wait "$agent" || true
	# Let A's output drain.
	sleep 0.2
	rc=125
	[ -f "$run/a/rc" ] && rc=$(cat "$run/a/rc")
	return 0
}

# panicked prints the first lines of a guest kernel panic in this attempt's
# consoles, and fails if there is none.
panicked() {
	local f
	for f in "$run"/a/out "$run"/b.*/out; do
		[ -s "$f" ] && grep -m1 -B2 -A12 -E 'Kernel panic|double fault' "$f" && return 0
	done
	return 1
}

a_out=
[ "${UDAPL_PAIR_PANIC_RETRY:-0}" = 1 ] && a_out=held
attempt
if [ -n "$a_out" ]; then
	if [ "$rc" != 0 ] && panicked >"$run/panic"; then
		sed "s/^/attempt 1| /" "$run/a/out"
		sed "s/^/attempt 1| panic| /" "$run/panic"
		echo "vmpair.sh: a guest kernel panicked in attempt 1 (exit status $rc); the command runs once more in two fresh VMs"
		a_out=
		attempt
	else
		cat "$run/a/out"
	fi
fi

if [ "$rc" != 0 ] || [ "${UDAPL_VM_VERBOSE:-0}" = 1 ]; then
	for f in "$run"/b.*/out; do
		[ -s "$f" ] && sed "s/^/B| /" "$f" >&2
	done
fi
if [ "${UDAPL_VM_TIMING:-0}" = 1 ]; then
	for f in "$run"/a/ready "$run"/b.1/ready; do
		[ -f "$f" ] && echo "vmpair.sh: $(basename "$(dirname "$f")") ready $(echo "$(cat "$f") - $start" | bc) s after start" >&2
	done
fi
[ -f "$run/a/rc" ] && exit "$rc"
[ "$status" = 137 ] && die "VM A did not finish within ${timeout_s}s"
die "VM A stopped without reporting the command's exit status (qemu status $status); rerun with UDAPL_VM_VERBOSE=1"

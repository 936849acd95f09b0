#!/usr/bin/env bash
# vmtest.sh: run a command inside a small Soft-RoCE VM and exit with its status.
#
#   scripts/vmtest.sh CMD [ARGS...]
#
# The VM is qemu (software emulation) booting Debian's kernel, which has
# rdma_rxe. The host's root is shared read-only over 9p and the host's /tmp
# read-write, so the repository, Go test binaries and tools work unchanged at
# the same paths. Inside, the dummy netdev d0 (192.0.2.1/24, a documentation
# range; the VM has no network card) carries the rxe device rxe0. CMD runs in
# the current directory with the current environment; its output is streamed.
#
# Everything it needs is installed on first use (root and apt-get required):
# qemu, busybox, kmod, cpio, iproute2, rdma-core tools, and the kernel package,
# which is unpacked with an initramfs under $UDAPL_VM_CACHE
# (default: ${XDG_CACHE_HOME:-~/.cache}/udapl-vm).
#
# Environment: UDAPL_RDMA=siw gives the guest the soft-iWARP device siw0
# instead of rxe0 (the tests' default device follows: internal/devtest),
# UDAPL_KERNEL=6.12 boots Debian's 6.12 for bookworm instead of its 6.1
# (see vmlib.sh; each is fetched once and cached apart),
# UDAPL_VM_MEM (MiB, default 3072), UDAPL_VM_CPUS (default 2;
# 1 with UDAPL_VM_ICOUNT=1), UDAPL_VM_ICOUNT=1 the deterministic mode (the
# guest's clock counts instructions; see vm_qemu_args in vmlib.sh),
# UDAPL_VM_TIMEOUT (seconds, default 2400), UDAPL_VM_VERBOSE=1 shows the
# kernel's console messages, UDAPL_VM_TIMING=1 prints the boot time,
# UDAPL_VM_PANIC_RETRY=1 runs the command once more in a fresh VM when the
# guest kernel crashed under it (an oops panics the guest: vmlib.sh), and
# holds each attempt's output until the attempt ends, so that only one
# attempt's output reaches go test; the crashed one's goes to stderr.
set -euo pipefail

mem=${UDAPL_VM_MEM:-3072}
icount=${UDAPL_VM_ICOUNT:-0}
cpus=${UDAPL_VM_CPUS:-$([ "$icount" = 1 ] && echo 1 || echo 2)}
timeout_s=${UDAPL_VM_TIMEOUT:-2400}

die() {
	echo "vmtest.sh: $*" >&2
	exit 125
}

[ $# -gt 0 ] || die "usage: scripts/vmtest.sh CMD [ARGS...]"

# shellcheck source=vmlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vmlib.sh"
vm_prepare

# The run directory lives in the host's /tmp, which the guest mounts read-write.
run=$(mktemp -d /tmp/udapl-vmrun.XXXXXX)
trap 'rm -rf "$run"' EXIT
vm_rundir "$run" "$@"
mapfile -t qemu_args < <(vm_qemu_args "$run" "$cpus" "$mem")

# console_tail shows the end of the VM's console, without terminal escapes.
console_tail() {
	tail -n 20 "$run/console" | sed 's/\r$//; s/\x1b\([[0-9;?]*[A-Za-z]\|c\)//g; s/^/  | /; $a\' >&2
}

# kernel_crash prints the first lines of a guest kernel panic in the
# console, and fails if there is none.
kernel_crash() {
	sed 's/\r$//' "$run/console" | grep -a -m1 -B2 -A16 -E 'Kernel panic|Oops:|double fault'
}
# hold: UDAPL_VM_PANIC_RETRY's attempt whose output waits in $run/shown.
hold=${UDAPL_VM_PANIC_RETRY:-0}
show() {
	if [ "$hold" = 1 ]; then vm_show >"$run/shown"; else vm_show; fi
}
# A VM that stops before the guest has its device up (no ready file, no
# exit status) never ran the command: it booted badly, which happens rarely
# under heavy host load. It is booted once more; its console is kept to say
# what happened. A guest kernel that crashed under the command
# (UDAPL_VM_PANIC_RETRY=1) is booted once more too, to run it again.
boots=1
while :; do
	start=$(date +%s.%N)
	status=0
	timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 "${qemu_args[@]}" \
		-nic none -monitor none </dev/null | tee "$run/console" | show || status=$?
	if [ "$hold" = 1 ]; then
		if [ ! -f "$run/rc" ] && [ -f "$run/ready" ] && kernel_crash >"$run/crash"; then
			sed 's/^/attempt 1| /' "$run/shown" >&2
			sed 's/^/attempt 1| crash| /' "$run/crash" >&2
			echo "vmtest.sh: the guest kernel crashed under the command (qemu status $status); it runs once more in a fresh VM" >&2
			hold=0
			rm -f "$run/ready"
			continue
		fi
		cat "$run/shown"
	fi
	[ -f "$run/rc" ] || [ -f "$run/ready" ] || [ "$status" = 124 ] || [ "$boots" = 2 ] && break
	echo "vmtest.sh: the VM stopped before the command started (qemu status $status); booting it again. Its console ended with:" >&2
	console_tail
	boots=2
done

if [ -f "$run/rc" ]; then
	# (The deterministic VM's clock counts instructions: no host time to compare.)
	if [ "${UDAPL_VM_TIMING:-0}" = 1 ] && [ "$icount" != 1 ] && [ -f "$run/ready" ]; then
		echo "vmtest.sh: ${rdma_kind}0 ready $(echo "$(cat "$run/ready") - $start" | bc) s after qemu started" >&2
	fi
	exit "$(cat "$run/rc")"
fi
[ "$status" = 124 ] && die "the VM did not finish within ${timeout_s}s"
echo "vmtest.sh: the VM's console ended with:" >&2
console_tail
die "the VM stopped without reporting the command's exit status (qemu status $status); rerun with UDAPL_VM_VERBOSE=1"

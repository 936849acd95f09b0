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
# Environment: UDAPL_VM_MEM (MiB, default 3072), UDAPL_VM_CPUS (default 2),
# UDAPL_VM_TIMEOUT (seconds, default 2400), UDAPL_VM_VERBOSE=1 shows the
# kernel's console messages, UDAPL_VM_TIMING=1 prints the boot time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${UDAPL_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/udapl-vm}
mem=${UDAPL_VM_MEM:-3072}
cpus=${UDAPL_VM_CPUS:-2}
timeout_s=${UDAPL_VM_TIMEOUT:-2400}

die() {
	echo "vmtest.sh: $*" >&2
	exit 125
}

[ $# -gt 0 ] || die "usage: scripts/vmtest.sh CMD [ARGS...]"

# ensure_packages installs the Debian packages whose commands are missing.
ensure_packages() {
	local need=() pair cmd pkg
	for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static depmod:kmod \
		cpio:cpio rdma:iproute2 ibv_devinfo:ibverbs-utils; do
		cmd=${pair%%:*} pkg=${pair#*:}
		command -v "$cmd" >/dev/null || need+=("$pkg")
	done
	# The provider library that drives rxe from user space.
	[ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
		compgen -G '/usr/lib/*/libibverbs/librxe-*.so' >/dev/null || need+=(ibverbs-providers)
	[ ${#need[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages ${need[*]}; run as root or: sudo apt-get install ${need[*]}"
	command -v apt-get >/dev/null || die "missing packages ${need[*]} and no apt-get to install them"
	echo "vmtest.sh: installing ${need[*]}" >&2
	apt-get update -qq >&2 || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		die "apt-get install ${need[*]} failed"
}

# ensure_kernel unpacks Debian's current amd64 kernel package under $cache/kernel.
ensure_kernel() {
	if compgen -G "$cache/kernel/boot/vmlinuz-*" >/dev/null; then
		kver=$(basename "$(ls "$cache"/kernel/boot/vmlinuz-* | head -n1)")
		kver=${kver#vmlinuz-}
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "the VM kernel is not cached yet; run once as root so apt-get can fetch it"
	local pkg tmp
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	if [ -z "$pkg" ]; then
		apt-get update -qq >&2 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	fi
	[ -n "$pkg" ] || die "cannot find Debian's linux-image-amd64 package (apt sources?)"
	echo "vmtest.sh: fetching kernel package $pkg" >&2
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download "$pkg" >&2 2>/dev/null) || die "apt-get download $pkg failed"
	mkdir -p "$cache"
	rm -rf "$cache/kernel.new"
	dpkg-deb -x "$tmp"/*.deb "$cache/kernel.new"
	rm -rf "$tmp"
	kver=$(basename "$(ls "$cache"/kernel.new/boot/vmlinuz-* | head -n1)")
	kver=${kver#vmlinuz-}
	# The package ships no modules.dep.
	depmod -b "$cache/kernel.new" "$kver"
	rm -rf "$cache/kernel" "$cache/initrd.img"
	mv "$cache/kernel.new" "$cache/kernel"
}

# ensure_initramfs builds a busybox initramfs holding the virtio and 9p modules
# needed to mount the host's filesystem; everything else loads from there.
ensure_initramfs() {
	local img=$cache/initrd.img
	[ -f "$img" ] && [ "$img" -nt "$here/vm-init.sh" ] && return 0
	local dir m
	dir=$(mktemp -d)
	mkdir -p "$dir"/{bin,dev,proc,sys,mnt/root,modules}
	cp "$(command -v busybox)" "$dir/bin/busybox"
	for m in sh mount umount insmod mkdir poweroff chroot cat echo sleep ls mknod; do
		ln -s busybox "$dir/bin/$m"
	done
	# Dependency order, as modprobe resolves it.
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe -d "$cache/kernel" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' | while read -r ko; do
		cp "$ko" "$dir/modules/"
		basename "$ko" >>"$dir/modules/order"
	done
	cp "$here/vm-init.sh" "$dir/init"
	chmod +x "$dir/init"
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.new"
	mv "$img.new" "$img"
	rm -rf "$dir"
}

ensure_packages
# Concurrent runs (go test -p N) must not unpack the kernel or build the
# initramfs at the same time.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
ensure_kernel
ensure_initramfs
flock -u 9
exec 9>&-

# The run directory lives in the host's /tmp, which the guest mounts read-write.
run=$(mktemp -d /tmp/udapl-vmrun.XXXXXX)
trap 'rm -rf "$run"' EXIT
{
	printf 'cd %q || exit 125\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$run/cmd"
export -p >"$run/env"
printf '%s\n' "$cache/kernel" >"$run/modroot"
cp "$here/vm-guest.sh" "$here/setup-rxe.sh" "$run/"

quiet="quiet loglevel=0"
[ "${UDAPL_VM_VERBOSE:-0}" = 1 ] && quiet=""

# show passes on only the command's output (between the guest's markers),
# unless UDAPL_VM_VERBOSE=1 asked for the firmware's and kernel's messages too.
show() {
	if [ "${UDAPL_VM_VERBOSE:-0}" = 1 ]; then
		cat
	else
		# sed -u, unlike mawk, neither reads nor writes in blocks.
		sed -un '/@@udapl-vm-begin@@$/,/^@@udapl-vm-end@@$/{/@@udapl-vm-\(begin\|end\)@@$/!p}'
	fi
}

start=$(date +%s.%N)
status=0
timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
	-kernel "$cache/kernel/boot/vmlinuz-$kver" -initrd "$cache/initrd.img" \
	-append "console=ttyS0 $quiet panic=-1 ${UDAPL_VM_APPEND:-} udapl.run=$run" \
	-nographic -no-reboot -nic none -monitor none -serial stdio \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path=/tmp,mount_tag=hosttmp,security_model=none,multidevs=remap \
	</dev/null | sed -u 's/\r$//' | show || status=$?

if [ -f "$run/rc" ]; then
	if [ "${UDAPL_VM_TIMING:-0}" = 1 ] && [ -f "$run/ready" ]; then
		echo "vmtest.sh: rxe0 ready $(echo "$(cat "$run/ready") - $start" | bc) s after qemu started" >&2
	fi
	exit "$(cat "$run/rc")"
fi
[ "$status" = 124 ] && die "the VM did not finish within ${timeout_s}s"
die "the VM stopped without reporting the command's exit status (qemu status $status); rerun with UDAPL_VM_VERBOSE=1"

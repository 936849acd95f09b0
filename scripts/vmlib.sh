# vmlib.sh: what scripts/vmtest.sh and scripts/vmpair.sh share: the packages,
# the cached Debian kernel and the initramfs of the Soft-RoCE test VM, the run
# directory a guest reads its command from, and qemu's common arguments.
# Source it; it expects `die` and sets kver.
#
# UDAPL_RDMA picks the guest's RDMA device: rxe (default, Soft-RoCE rxe0) or
# siw (soft-iWARP siw0; its module is built once by siw-module.sh, since
# Debian's kernel has none).
#
# UDAPL_KERNEL picks the guest's kernel series: 6.1 (default), Debian 12's
# own (linux-image-amd64), or another series Debian builds for bookworm, such
# as 6.12 (linux-image-6.12-amd64, in bookworm-security). Each is unpacked
# and cached apart, with its own initramfs (and siw.ko): the default in
# $cache/kernel and $cache/initrd.img, 6.12 in $cache/kernel-6.12 and
# $cache/initrd-6.12.img.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${UDAPL_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/udapl-vm}
rdma_kind=${UDAPL_RDMA:-rxe}
kernel_series=${UDAPL_KERNEL:-6.1}
if [ "$kernel_series" = 6.1 ]; then
	kdir=$cache/kernel initrd=$cache/initrd.img kmeta=linux-image-amd64
else
	kdir=$cache/kernel-$kernel_series initrd=$cache/initrd-$kernel_series.img
	kmeta=linux-image-$kernel_series-amd64
fi

# ensure_packages installs the Debian packages whose commands are missing.
ensure_packages() {
	local need=() pair cmd pkg
	for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static depmod:kmod \
		cpio:cpio rdma:iproute2 ibv_devinfo:ibverbs-utils xz:xz-utils; do
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

# ensure_kernel unpacks Debian's current amd64 kernel package of the series
# UDAPL_KERNEL asks for (the one its meta-package $kmeta depends on) in $kdir.
ensure_kernel() {
	if compgen -G "$kdir/boot/vmlinuz-*" >/dev/null; then
		kver=$(basename "$(ls "$kdir"/boot/vmlinuz-* | head -n1)")
		kver=${kver#vmlinuz-}
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "the VM kernel ($kernel_series) is not cached yet; run once as root so apt-get can fetch it"
	local pkg tmp
	pkg=$(apt-cache depends "$kmeta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	if [ -z "$pkg" ]; then
		apt-get update -qq >&2 || true
		pkg=$(apt-cache depends "$kmeta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	fi
	[ -n "$pkg" ] || die "cannot find Debian's $kmeta package (UDAPL_KERNEL=$kernel_series; apt sources? apt-cache search linux-image-$kernel_series)"
	echo "vmtest.sh: fetching kernel package $pkg" >&2
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download "$pkg" >&2 2>/dev/null) || die "apt-get download $pkg failed"
	mkdir -p "$cache"
	rm -rf "$kdir.new"
	dpkg-deb -x "$tmp"/*.deb "$kdir.new"
	rm -rf "$tmp"
	kver=$(basename "$(ls "$kdir".new/boot/vmlinuz-* | head -n1)")
	kver=${kver#vmlinuz-}
	# The package ships no modules.dep.
	depmod -b "$kdir.new" "$kver"
	rm -rf "$kdir" "$initrd"
	mv "$kdir.new" "$kdir"
}

# ensure_initramfs builds a busybox initramfs holding the virtio and 9p modules
# needed to mount the host's filesystem; everything else loads from there.
ensure_initramfs() {
	local img=$initrd
	[ -f "$img" ] && [ "$img" -nt "$here/vm-init.sh" ] && return 0
	local dir m
	dir=$(mktemp -d)
	mkdir -p "$dir"/{bin,dev,proc,sys,mnt/root,modules}
	cp "$(command -v busybox)" "$dir/bin/busybox"
	for m in sh mount umount insmod mkdir poweroff chroot cat echo sleep ls mknod ln; do
		ln -s busybox "$dir/bin/$m"
	done
	# Dependency order, as modprobe resolves it. (6.12's modules are
	# xz-compressed, which busybox's insmod may not read: unpacked here.)
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe -d "$kdir" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' | while read -r ko; do
		case "$ko" in
		*.ko.xz)
			xz -dc "$ko" >"$dir/modules/$(basename "$ko" .xz)"
			ko=${ko%.xz}
			;;
		*) cp "$ko" "$dir/modules/" ;;
		esac
		basename "$ko" >>"$dir/modules/order"
	done
	cp "$here/vm-init.sh" "$dir/init"
	chmod +x "$dir/init"
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.new"
	mv "$img.new" "$img"
	rm -rf "$dir"
}

# vm_prepare installs what the VM needs. Concurrent runs (go test -p N) must
# not unpack the kernel or build the initramfs at the same time.
vm_prepare() {
	case "$rdma_kind" in rxe | siw) ;; *) die "UDAPL_RDMA=$rdma_kind: rxe or siw" ;; esac
	[[ $kernel_series =~ ^[0-9]+\.[0-9]+$ ]] || die "UDAPL_KERNEL=$kernel_series: a kernel series, such as 6.1 or 6.12"
	ensure_packages
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9
	ensure_kernel
	# siw.ko goes into the module root the guest loads from (after a new
	# kernel is unpacked, it is built again).
	if [ "$rdma_kind" = siw ]; then
		"$here/siw-module.sh" "$kdir" "$kver" || die "cannot build siw.ko"
	fi
	ensure_initramfs
	flock -u 9
	exec 9>&-
}

# vm_rundir DIR CMD [ARGS...] writes what vm-guest.sh reads from DIR (in the
# host's /tmp, which the guest mounts read-write): the command, to run in the
# current directory with the current environment, the kind of RDMA device,
# and the guest's scripts.
vm_rundir() {
	local dir=$1
	shift
	mkdir -p "$dir"
	{
		printf 'cd %q || exit 125\n' "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$dir/cmd"
	export -p >"$dir/env"
	printf '%s\n' "$kdir" >"$dir/modroot"
	printf '%s\n' "$rdma_kind" >"$dir/rdma"
	cp "$here/vm-guest.sh" "$here/setup-rxe.sh" "$dir/"
}

# vm_qemu_args prints (one per line) the qemu arguments every test VM has:
# software emulation, the cached kernel and initramfs, the serial console on
# stdio, and the host's root (read-only) and /tmp (read-write) over 9p.
# $1 is the run directory, $2 the vCPUs, $3 the memory (MiB).
#
# UDAPL_VM_ICOUNT=1 makes the run deterministic: the guest's clock counts
# instructions (one instruction one nanosecond, -icount shift=0), never host
# time, so a rate measured in the guest is instructions per operation,
# immune to the host's load. It needs one vCPU: icount runs the vCPUs
# round-robin on one host thread, and with 2 the guest (Debian's 6.1) hangs
# bringing up the second CPU: sampled through qemu's monitor, CPU 1 spins in
# cpu_init (wait_for_master_cpu, waiting for the boot CPU's go-ahead) while
# CPU 0 keeps running the scheduler in do_boot_cpu's wait loop, with -cpu max
# or Haswell alike. Not fixed; the deterministic mode uses one vCPU.
# UDAPL_VM_CPU_MODEL overrides -cpu max.
#
# An oops panics the guest (oops=panic) and a panic ends the VM at once
# (panic=-1 with -no-reboot): a kernel that oopsed under a test (Debian's
# 6.12 in siw_destroy_listen, once) would otherwise leave the test's thread
# stuck and the VM running until its timeout.
vm_qemu_args() {
	local quiet="quiet loglevel=0" accel=tcg,thread=multi append=${UDAPL_VM_APPEND:-}
	[ "${UDAPL_VM_VERBOSE:-0}" = 1 ] && quiet=""
	if [ "${UDAPL_VM_ICOUNT:-0}" = 1 ]; then
		accel=tcg
		printf '%s\n' -icount shift=0,align=off,sleep=off
		# sleep=off: an idle guest's clock jumps to its next timer. Waiting
		# for the host (a 9p read of a binary) would jump it to whatever
		# timer is next, a `timeout 60` seconds away when the kernel stops
		# its tick while idle; nohz=off keeps a tick every 4 ms, which
		# bounds the jump.
		append="nohz=off $append"
	fi
	printf '%s\n' -accel "$accel" -cpu "${UDAPL_VM_CPU_MODEL:-max}" -smp "$2" -m "$3" \
		-kernel "$kdir/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "console=ttyS0 $quiet panic=-1 oops=panic $append udapl.run=$1" \
		-nographic -no-reboot -serial stdio \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path=/tmp,mount_tag=hosttmp,security_model=none,multidevs=remap
}

# vm_show passes on only the command's output (between the guest's markers),
# unless UDAPL_VM_VERBOSE=1 asked for the firmware's and kernel's messages too.
vm_show() {
	if [ "${UDAPL_VM_VERBOSE:-0}" = 1 ]; then
		sed -u 's/\r$//'
	else
		# sed -u, unlike mawk, neither reads nor writes in blocks.
		sed -un 's/\r$//; /@@udapl-vm-begin@@$/,/^@@udapl-vm-end@@$/{/@@udapl-vm-\(begin\|end\)@@$/!p}'
	fi
}

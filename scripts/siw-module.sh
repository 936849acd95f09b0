#!/usr/bin/env bash
# siw-module.sh: build the soft-iWARP module (siw.ko) for the test VM's kernel.
#
#   scripts/siw-module.sh MODROOT KVER
#
# Debian builds its kernels without CONFIG_RDMA_SIW, so there is no siw.ko.
# This builds it out of tree on this host from the same Debian upload's
# linux-source-6.1 (drivers/infiniband/sw/siw/), against that kernel's
# headers, linux-headers-KVER, -common and linux-kbuild-6.1, all downloaded
# and unpacked in a scratch directory (nothing is installed but the compiler).
# The same for 6.12 (UDAPL_KERNEL=6.12): linux-source-6.12, and its kbuild
# package is named after the ABI, linux-kbuild-6.12.N+deb12.
# The sources get the fixes in scripts/siw-*.patch first (each says what it
# fixes). The module is stripped of its debug info and installed as
# MODROOT/lib/modules/KVER/extra/siw.ko, then depmod -b MODROOT: once there,
# nothing is built again until the patches change (siw.ko.patches holds
# their checksum). The module is unsigned: loading it taints the kernel.
set -euo pipefail

die() {
	echo "siw-module.sh: $*" >&2
	exit 125
}

[ $# = 2 ] || die "usage: scripts/siw-module.sh MODROOT KVER"
modroot=$1 kver=$2
ko=$modroot/lib/modules/$kver/extra/siw.ko
shopt -s nullglob
patches=("$(dirname "${BASH_SOURCE[0]}")"/siw-*.patch)
sum=$(cat /dev/null "${patches[@]}" | sha256sum)
[ -f "$ko" ] && [ "$(cat "$ko.patches" 2>/dev/null)" = "$sum" ] && exit 0
[ -d "$modroot/lib/modules/$kver" ] || die "no modules for $kver under $modroot"
[ "$(id -u)" = 0 ] || die "siw.ko is not built yet; run once as root so apt-get can fetch the sources"

# The compiler the kernel was built with (its headers name gcc-12), make, and
# what unpacks and strips.
need=()
for pair in gcc-12:gcc-12 make:make xz:xz-utils strip:binutils patch:patch; do
	command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "siw-module.sh: installing ${need[*]}" >&2
	apt-get update -qq >&2 || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		die "apt-get install ${need[*]} failed"
fi

# The kernel's own Debian upload, as its version string says ("... Debian
# 6.1.192-2 (date)"): the headers and the source must be that one, not
# merely the newest linux-source-6.1.
ver=$(grep -a -o -m1 'Debian [0-9][^ ]*' "$modroot/boot/vmlinuz-$kver" | head -n1)
ver=${ver#Debian }
[ -n "$ver" ] || die "cannot read the Debian version of $modroot/boot/vmlinuz-$kver"
series=${ver%.*} abi=${kver%-*}
# in_archive PKG=VER: whether the archive has that upload (apt-cache show
# exits 0 for a version it does not know, printing nothing).
in_archive() { [ -n "$(apt-cache show "$1" 2>/dev/null)" ]; }
in_archive "linux-source-$series=$ver" || apt-get update -qq >&2 || true
kbuild=linux-kbuild-$series
in_archive "linux-kbuild-$abi=$ver" && kbuild=linux-kbuild-$abi
# linux-kbuild-6.1 has no ABI in its name, so the archive keeps only its
# newest upload: once the security archive has moved on to the next upload
# while linux-image-amd64 (signed, later) still names this kernel, this
# kernel's own kbuild is gone. It holds the build's host tools (fixdep,
# modpost), the same for every upload of the series: the newest serves.
kbver=$ver
if ! in_archive "$kbuild=$ver"; then
	kbver=$(apt-cache madison "$kbuild" | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep "^$series\." | sort -V | tail -n1 || true)
	[ -n "$kbver" ] || die "no $kbuild of the $series series in the archive"
	echo "siw-module.sh: $kbuild $ver is no longer in the archive; its newest upload, $kbver, builds the module" >&2
fi

tmp=$(mktemp -d "${modroot%/*}/siw-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "siw-module.sh: building siw.ko for $kver from Debian's $ver sources" >&2
# (apt-get download warns that it runs unsandboxed: shown only on failure.)
out=$(cd "$tmp" && apt-get download "linux-headers-$kver=$ver" "linux-headers-$abi-common=$ver" \
	"$kbuild=$kbver" "linux-source-$series=$ver" 2>&1) ||
	die "cannot download Debian's $ver kernel headers and sources (no longer in the archive? remove $modroot to fetch the current kernel): $out"
for deb in "$tmp"/linux-headers-*.deb "$tmp"/linux-kbuild-*.deb; do
	dpkg-deb -x "$deb" "$tmp/root"
done
# Only the siw directory of the source tarball.
dpkg-deb --fsys-tarfile "$tmp"/linux-source-*.deb | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
	tar -xJ -C "$tmp" --strip-components=1 --wildcards '*/drivers/infiniband/sw/siw/*'
for p in "${patches[@]}"; do
	patch -s -p1 -d "$tmp" <"$p" >&2 || die "$p does not apply to Debian's $ver sources"
done
# The headers' Makefile includes -common's by its absolute /usr/src path.
hdr=$tmp/root/usr/src/linux-headers-$kver
sed -i "s|^include /usr/src/|include $tmp/root/usr/src/|" "$hdr/Makefile"
# No BTF for the module: 6.12's modfinal runs pahole (package dwarves) for
# it, where 6.1's skipped it (the headers have no vmlinux to base it on).
make -s -C "$hdr" M="$tmp/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m CONFIG_DEBUG_INFO_BTF_MODULES= \
	-j"$(nproc)" modules >&2 ||
	die "building siw.ko failed"
mkdir -p "${ko%/*}"
strip --strip-debug -o "$ko.new" "$tmp/drivers/infiniband/sw/siw/siw.ko"
mv "$ko.new" "$ko"
echo "$sum" >"$ko.patches"
depmod -b "$modroot" "$kver"
echo "siw-module.sh: installed $ko" >&2

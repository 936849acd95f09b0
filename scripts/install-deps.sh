#!/usr/bin/env bash
# install-deps.sh: install the Debian packages udapl builds and tests with, if
# any is missing. Needs root and apt-get; says what to install otherwise.
set -euo pipefail

pkgs=(
	gcc pkg-config                               # cgo
	libibverbs-dev librdmacm-dev ibverbs-providers # rdma-core: headers, libraries, rxe provider
	ibverbs-utils rdmacm-utils perftest          # ibv_devinfo, rping, ib_*_bw/lat
	libdapl-dev dapl2-utils                      # the C reference: dat2 headers, libdat2, dapltest
	qemu-system-x86 busybox-static kmod cpio iproute2 bc # the Soft-RoCE VM
	valgrind                                     # make bench-instr (callgrind)
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	echo "install-deps.sh: missing packages: ${missing[*]}" >&2
	echo "install them with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "install-deps.sh: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

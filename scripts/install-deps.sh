#!/usr/bin/env bash
# install-deps.sh: install the Debian packages udapl builds and tests with, if
# any is missing (needs root and apt-get; says what to install otherwise), and
# the Go tools make vet runs, into bin/ (from the Go module proxy).
set -euo pipefail

# Pinned, so that a new release's checks fail no run by themselves; v0.8.2
# needs Go 1.26, as go.mod does.
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
bin=$(cd "$(dirname "$0")/.." && pwd)/bin
# staticcheck -version ends in "(0.8.2)".
if ! "$bin/staticcheck" -version 2>/dev/null | grep -qF "(${staticcheck##*@v})"; then
	echo "install-deps.sh: installing $staticcheck into bin/" >&2
	GOBIN=$bin go install "$staticcheck"
fi

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

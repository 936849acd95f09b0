#!/usr/bin/env bash
# bench.sh (make bench): udapl against perftest and the C uDAPL reference, in
# one run, and BENCHMARKS.md from the results.
#
# In ONE boot of the Soft-RoCE test VM (scripts/vmtest.sh), on rxe0:
#   - perftest: ib_write_bw, ib_read_bw, ib_send_bw at 64 B and 4 KiB,
#     ib_write_lat and ib_send_lat at 64 B (rdma_cm, -R);
#   - the C reference: dapltest -T P RW and RR at 64 B and 4 KiB through the
#     cma provider (a dat.conf entry on the VM's netdev);
#   - udattest -T P with the same parameters;
# alternating the tools' order, BENCH_REPS times (scripts/bench-vm.sh), then
# the Go data-path benchmarks of package udat (udat/bench_test.go). Results
# go to $BENCH_OUT (default /tmp/udapl-bench); after the VM exits this host
# writes BENCHMARKS.md: medians, the ratios udapl/perftest and udapl/C DAPL,
# and which targets are met.
#
# Every run of every tool, server and client, is bounded (BENCH_TIMEOUT
# seconds, then killed); a run that times out or fails is counted and shown
# as failed, and the bench goes on.
#
# Environment: BENCH_REPS (9), BENCH_N64 (20000), BENCH_N4K (10000),
# BENCH_NLAT (3000), BENCH_DEPTH (64), BENCH_TIMEOUT (60 s per run),
# BENCH_KILL_AFTER (10 s from SIGTERM to SIGKILL), BENCH_GOBENCH (1: run the
# Go benchmarks), BENCH_OUT, BENCH_MD (BENCHMARKS.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${BENCH_OUT:-/tmp/udapl-bench}
md=${BENCH_MD:-$root/BENCHMARKS.md}
export BENCH_REPS=${BENCH_REPS:-9} BENCH_N64=${BENCH_N64:-20000} BENCH_N4K=${BENCH_N4K:-10000}
export BENCH_NLAT=${BENCH_NLAT:-3000} BENCH_DEPTH=${BENCH_DEPTH:-64}
export BENCH_TIMEOUT=${BENCH_TIMEOUT:-60} BENCH_KILL_AFTER=${BENCH_KILL_AFTER:-10}
gobench=${BENCH_GOBENCH:-1}

case $out in /tmp/*) ;; *) echo "bench.sh: BENCH_OUT must be under /tmp (the VM writes there)" >&2; exit 2 ;; esac
rm -rf "$out"
mkdir -p "$out"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- cmd udat cverbs 2>/dev/null || commit="$commit (with uncommitted changes)"
echo "commit=$commit" >"$out/host.txt"
echo "bench.sh: building bin/udattest and the udat benchmark binary"
go build -o bin/ ./cmd/udattest
if [ "$gobench" = 1 ]; then
	go test -c -o "$out/udat.test" ./udat/
fi
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat dapltest; do
	command -v "$t" >/dev/null || {
		echo "bench.sh: $t is missing (scripts/install-deps.sh installs perftest and dapl2-utils)" >&2
		exit 1
	}
done

# The VM part: the comparison, then the Go benchmarks, in one boot.
cat >"$out/vm.sh" <<EOF
set -u
bash "$root/scripts/bench-vm.sh" "$out"
if [ -x "$out/udat.test" ]; then
	echo "bench: Go benchmarks of package udat"
	cd "$root/udat" && "$out/udat.test" -test.run '^\$' -test.bench . -test.benchtime 1000x 2>&1 | tee "$out/gobench.txt"
fi
EOF
echo "bench.sh: running in the Soft-RoCE VM (about 10 minutes; its output shows when it is done)"
start=$(date +%s)
scripts/vmtest.sh bash "$out/vm.sh"
echo "bench.sh: the VM ran $(($(date +%s) - start)) s"

scripts/bench-report.sh "$out" >"$md"
echo "bench.sh: wrote $md"
sed -n '/^## Results/,/^## /p' "$md" | sed '$d'
if [ -s "$out/failures.tsv" ]; then
	echo "bench.sh: $(wc -l <"$out/failures.tsv") runs failed; see \"Failed runs\" in $md and $out/failures.tsv"
fi

#!/usr/bin/env bash
# bench.sh (make bench): udapl against perftest and the C uDAPL reference, in
# one run, and BENCHMARKS.md from the results.
#
# In three boots of the test VM (scripts/vmtest.sh), two on Soft-RoCE rxe0:
#   - the deterministic VM (UDAPL_VM_ICOUNT=1: one vCPU whose clock counts
#     instructions, so a rate is instructions per operation and the host's
#     load does not show): the throughput rows, polling and blocking;
#   - the usual 2-vCPU VM: the latency rows (ping-pong needs two CPUs; on
#     one it measures the scheduler's tick);
# and one on soft-iWARP siw0 (UDAPL_RDMA=siw, as make test-siw):
#   - the deterministic VM again (mode siw): the throughput rows, polling
#     and blocking.
#     perftest connects through rdma_cm there (-R; iWARP has no other way),
#     and its server in the RDMA write and read rows runs at nice 19
#     (BENCH_PERFTEST_NICE), as the -R server busy-polls with nothing to do
#     and would take half the vCPU from its client (docs/performance.md,
#     "Soft-iWARP rows"). No connection rows and no Go benchmarks there;
# each row run by perftest (ib_*_bw, ib_*_lat), the C reference (dapltest -T
# P through the cma provider, a dat.conf entry on the VM's netdev) and
# udattest -T P with the same parameters, alternating the tools' order,
# BENCH_REPS times (scripts/bench-vm.sh); in both rxe boots the connection rows:
# dtestcm's RC connection setup (-c BENCH_NCONN -b 100), the C dtestcm of
# dapl2-utils and the Go port (bin/dtestcmgo) in the four combinations of
# server and client, with dat_evd_wait and polling, in the first
# BENCH_CONN_REPS repetitions; then in each rxe boot the Go data-path
# benchmarks of package udat (udat/bench_test.go). Results go to
# $BENCH_OUT/det, $BENCH_OUT/smp and $BENCH_OUT/siw (default
# /tmp/udapl-bench); after the VMs exit this host writes BENCHMARKS.md (go
# run ./internal/cmd/benchreport): medians, the ratios udapl/perftest and
# udapl/C DAPL (connections: each combination against C's own; the siw
# rows in a table of their own, each ratio within siw0), and which targets
# are met (rxe0's; the siw rows have none).
#
# Every run of every tool, server and client, is bounded (BENCH_TIMEOUT
# seconds, then killed); a run that times out or fails is counted and shown
# as failed, and the bench goes on.
#
# First, scripts/bench-instr.sh counts the user-space instructions per
# operation of every tool with callgrind (a VM boot of its own; BENCH_INSTR=0
# skips it) and writes them as the first section of BENCHMARKS.md, which the
# rest keeps when it rewrites the file.
#
# Environment: BENCH_REPS (9; the deterministic VM: BENCH_REPS_DET, 3; the
# siw VM: BENCH_REPS_SIW, as the deterministic VM), BENCH_N64 (20000), BENCH_N4K (10000),
# BENCH_NLAT (3000), BENCH_DEPTH (64), BENCH_TIMEOUT (60 s per run),
# BENCH_KILL_AFTER (10 s from SIGTERM to SIGKILL), BENCH_GOBENCH (1: run the
# Go benchmarks), BENCH_NCONN (1000), BENCH_CONN_REPS (3),
# BENCH_CONN_TIMEOUT (240 s per dtestcm client), BENCH_MODES (det smp siw:
# the boots to run), BENCH_ROWS_DET, BENCH_ROWS_SMP and BENCH_ROWS_SIW (their
# rows), BENCH_PERFTEST_NICE (19: perftest's write and read server in the
# siw VM), BENCH_OUT, BENCH_MD (BENCHMARKS.md). Only the siw rows, BENCHMARKS.md
# untouched:
#   BENCH_MODES=siw BENCH_INSTR=0 BENCH_GOBENCH=0 BENCH_OUT=/tmp/siw BENCH_MD=/tmp/siw.md scripts/bench.sh
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

if [ "${BENCH_INSTR:-1}" = 1 ]; then
	INSTR_MD=$md scripts/bench-instr.sh || echo "bench.sh: bench-instr.sh failed (exit status $?); the rates go on" >&2
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- cmd udat cverbs 2>/dev/null || commit="$commit (with uncommitted changes)"
echo "commit=$commit" >"$out/host.txt"
echo "bench.sh: building bin/udattest, bin/dtestcmgo and the udat benchmark binary"
go build -o bin/ ./cmd/udattest ./internal/cmd/dtestcmgo
if [ "$gobench" = 1 ]; then
	go test -c -o "$out/udat.test" ./udat/
fi
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat dapltest dtestcm; do
	command -v "$t" >/dev/null || {
		echo "bench.sh: $t is missing (scripts/install-deps.sh installs perftest and dapl2-utils)" >&2
		exit 1
	}
done

# The VM part: the comparison, then the Go benchmarks, in one boot per mode.
det_rows="write_bw_64 write_bw_4k read_bw_64 read_bw_4k send_bw_64 send_bw_4k write_bw_64_list16
write_bw_64_block write_bw_4k_block read_bw_64_block read_bw_4k_block conn_rc_wait conn_rc_poll
conn_ud_wait conn_ud_poll"
smp_rows="write_lat_64 send_lat_64 send_lat_4k_block write_rtt_4k_block conn_rc_wait conn_rc_poll
conn_ud_wait conn_ud_poll"
siw_rows="write_bw_64 write_bw_4k read_bw_64 read_bw_4k send_bw_64 send_bw_4k write_bw_64_list16
write_bw_64_block write_bw_4k_block read_bw_64_block read_bw_4k_block"
for mode in ${BENCH_MODES:-det smp siw}; do
	mkdir -p "$out/$mode"
	cat >"$out/$mode/vm.sh" <<EOF
set -u
bash "$root/scripts/bench-vm.sh" "$out/$mode"
# (Not on siw: the Go benchmarks measure the binding, in det and smp.)
if [ "$mode" != siw ] && [ -x "$out/udat.test" ]; then
	echo "bench: Go benchmarks of package udat"
	# Two Ps even on one vCPU, as udattest takes (cmd/udattest/procs.go).
	cd "$root/udat" && GOMAXPROCS=\$(( \$(nproc) < 2 ? 2 : \$(nproc) )) "$out/udat.test" -test.run '^\$' -test.bench . -test.benchtime 1000x 2>&1 | tee "$out/$mode/gobench.txt"
fi
EOF
	start=$(date +%s)
	if [ "$mode" = det ]; then
		echo "bench.sh: the throughput rows in the deterministic VM (one vCPU, -icount)"
		# Deterministic: repetitions agree within about 1 %, 3 are plenty.
		BENCH_REPS=${BENCH_REPS_DET:-3} BENCH_MODE=det BENCH_ROWS=${BENCH_ROWS_DET:-$det_rows} BENCH_PERFTEST_CM=0 UDAPL_VM_ICOUNT=1 \
			scripts/vmtest.sh bash "$out/$mode/vm.sh"
	elif [ "$mode" = siw ]; then
		echo "bench.sh: the throughput rows on soft-iWARP siw0 in the deterministic VM"
		# perftest connects through rdma_cm (-R) on iWARP: it has no other way.
		BENCH_REPS=${BENCH_REPS_SIW:-${BENCH_REPS_DET:-3}} BENCH_MODE=siw BENCH_ROWS=${BENCH_ROWS_SIW:-$siw_rows} \
			BENCH_DEV=siw0 BENCH_PERFTEST_CM=1 BENCH_PERFTEST_NICE=${BENCH_PERFTEST_NICE:-19} UDAPL_RDMA=siw UDAPL_VM_ICOUNT=1 \
			scripts/vmtest.sh bash "$out/$mode/vm.sh"
	else
		echo "bench.sh: the latency rows in the 2-vCPU VM"
		# The TSC as clock source, as on the machines users run: Linux finds
		# qemu's emulated TSC unstable (its watchdog runs late under
		# emulation) and falls back to the HPET, where every clock read is a
		# trapped device access (Go's time.Now 4.2 us there, 0.56 us with
		# the TSC). qemu derives every vCPU's TSC from one host clock.
		UDAPL_VM_APPEND="tsc=reliable clocksource=tsc ${UDAPL_VM_APPEND:-}" \
			BENCH_MODE=smp BENCH_ROWS=${BENCH_ROWS_SMP:-$smp_rows} UDAPL_VM_ICOUNT=0 \
			scripts/vmtest.sh bash "$out/$mode/vm.sh"
	fi
	echo "bench.sh: the $mode VM ran $(($(date +%s) - start)) s"
	# The host's load after the run: the 2-vCPU rows are not immune to it.
	echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/$mode/env.txt"
done

# internal/benchreport writes the whole file (into $out first, so that a
# failure leaves $md as it was); the instruction section is kept.
[ -f "$md" ] && cp "$md" "$out/BENCHMARKS.before.md"
go run ./internal/cmd/benchreport "$out" >"$out/BENCHMARKS.md"
cp "$out/BENCHMARKS.md" "$md"
[ -f "$out/BENCHMARKS.before.md" ] && go run ./internal/instrcount splice -md "$md" -from "$out/BENCHMARKS.before.md"
echo "bench.sh: wrote $md"
sed -n '/^## Results/,/^## /p' "$md" | sed '$d'
cat "$out"/*/failures.tsv >"$out/failures.tsv" 2>/dev/null
if [ -s "$out/failures.tsv" ]; then
	echo "bench.sh: $(wc -l <"$out/failures.tsv") runs failed; see \"Failed runs\" in $md and $out/*/failures.tsv"
fi

#!/usr/bin/env bash
# bench-instr.sh (make bench-instr; also the start of make bench): user-space
# instructions per operation, counted exactly, for udapl (udattest), the C
# uDAPL reference (dapltest -T P) and perftest, and where udapl's go.
#
# In one boot of the deterministic Soft-RoCE VM (UDAPL_VM_ICOUNT=1),
# scripts/bench-instr-vm.sh runs every measured process under valgrind's
# callgrind twice, with INSTR_N1 and INSTR_N2 operations; then, on this host,
# internal/instrcount takes (Ir(N2) - Ir(N1)) / (N2 - N1) per operation and
# writes its tables as the first section of BENCHMARKS.md (the rest of the
# file is left as it is). The profiles stay in INSTR_OUT.
#
# A partial run (INSTR_ROWS or INSTR_TOOLS set) prints its tables and leaves
# BENCHMARKS.md alone, unless INSTR_MD names a file. To count only udapl's
# 64 B RDMA write:
#
#   INSTR_ROWS=write_64 INSTR_TOOLS=udapl scripts/bench-instr.sh
#
# Environment: INSTR_OUT (/tmp/udapl-instr), INSTR_MD (BENCHMARKS.md),
# INSTR_N1 (2000), INSTR_N2 (20000), INSTR_REPS (1: each run once; 2 shows
# how well runs agree), INSTR_ROWS (write_64 read_64 send_64
# write_64_batch16 write_64_block), INSTR_TOOLS (udapl dapl perftest),
# INSTR_TIMEOUT (900 s per run), INSTR_REP_START (1; 2 with INSTR_REPS=1
# runs a second repetition in the same INSTR_OUT, with the same binary).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${INSTR_OUT:-/tmp/udapl-instr}
md=${INSTR_MD:-$root/BENCHMARKS.md}
case $out in /tmp/*) ;; *) echo "bench-instr.sh: INSTR_OUT must be under /tmp (the VM writes there)" >&2; exit 2 ;; esac
for t in valgrind dapltest ib_write_bw; do
	command -v "$t" >/dev/null || {
		echo "bench-instr.sh: $t is missing (scripts/install-deps.sh installs valgrind, perftest and dapl2-utils)" >&2
		exit 1
	}
done
# udattest is built into $out, where no other build replaces it during the
# run; INSTR_REP_START > 1 adds repetitions to the run in $out, with its
# binary.
if [ "${INSTR_REP_START:-1}" = 1 ] || [ ! -x "$out/udattest" ]; then
	rm -rf "$out"
	mkdir -p "$out"
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	# What was built: HEAD, and the files of the library and the tool that
	# differed from it (other work in progress in the same tree).
	dirty=$(git status --porcelain --untracked-files=all -- cmd/udattest udat cverbs 2>/dev/null | awk '{ print $NF }' |
		{ grep -v '_test\.go$' || true; } | tr '\n' ' ' | sed 's/ $//')
	[ -z "$dirty" ] || commit="$commit with uncommitted changes to $dirty"
	{
		echo "commit=$commit"
		echo "date=$(date -u +'%Y-%m-%d %H:%M UTC')"
	} >"$out/host.txt"
	echo "bench-instr.sh: building udattest"
	go build -o "$out/udattest" ./cmd/udattest
fi
go build -o "$out/instrcount" ./internal/instrcount
export INSTR_UDATTEST=$out/udattest

start=$(date +%s)
echo "bench-instr.sh: callgrind in the deterministic VM (profiles in $out)"
UDAPL_VM_ICOUNT=1 scripts/vmtest.sh bash "$root/scripts/bench-instr-vm.sh" "$out"
echo "host_seconds=$(($(date +%s) - start))" >>"$out/host.txt"
echo "bench-instr.sh: the VM ran $(($(date +%s) - start)) s"
if [ -s "$out/failures.tsv" ]; then
	echo "bench-instr.sh: failed runs (row tool side n rep why):" >&2
	cat "$out/failures.tsv" >&2
fi

if [ -z "${INSTR_ROWS:-}${INSTR_TOOLS:-}" ] || [ -n "${INSTR_MD:-}" ]; then
	"$out/instrcount" report -dir "$out" -md "$md"
	echo "bench-instr.sh: wrote the section \"Instructions per operation\" of $md"
	sed -n '/^## Instructions per operation/,/^### /p' "$md" | sed '$d'
else
	"$out/instrcount" report -dir "$out"
fi

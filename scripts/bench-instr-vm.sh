#!/usr/bin/env bash
# bench-instr-vm.sh OUTDIR: the part of scripts/bench-instr.sh that runs
# inside the Soft-RoCE VM: every measured process of every row under
# callgrind, once with INSTR_N1 operations and once with INSTR_N2, so that
# internal/instrcount can take (Ir(N2) - Ir(N1)) / (N2 - N1) per operation.
# Each run leaves its callgrind file(s) and its output in OUTDIR:
#
#   ROW.TOOL.SIDE.N.REP.out     (a Go program: ROW.TOOL.SIDE.N.REP.out-NN, one per thread)
#   ROW.TOOL.SIDE.N.REP.log
#
# SIDE is client, or server where the server is measured too (send/recv).
# What is measured of each tool (internal/instrcount takes it from there):
#   udapl    udattest, the whole process less the Go runtime's monitor
#            thread (runtime.sysmon, whose work grows with valgrind's
#            slowdown): --separate-threads=yes, one file per thread; with
#            -yield 0, since its yields every 2 ms come far more often
#            per operation under valgrind than at full speed
#   dapl     dapltest -T P through the cma provider (a dat.conf entry on the
#            device's netdev): its throughput loop, not its latency phase;
#            --dump-instr=yes, since the loop is inlined
#   perftest ib_*_bw, TCP handshake (no -R) and no peak search (-N): its
#            measurement loop function, not its clock calibration
# A failed run is recorded in OUTDIR/failures.tsv (row tool side n rep why)
# and the rest go on.
#
# Environment: INSTR_DEV (rxe0), INSTR_ADDR (192.0.2.1), INSTR_N1 (2000),
# INSTR_N2 (20000), INSTR_REPS (1), INSTR_REP_START (1: the first
# repetition's number, to add repetitions to a run), INSTR_UDATTEST (the
# binary, default bin/udattest), INSTR_DEPTH (64), INSTR_ROWS (all:
# write_64 read_64 send_64 write_64_batch16 write_64_block), INSTR_TOOLS
# (all: udapl dapl perftest), INSTR_TIMEOUT (900 s per run).
set -uo pipefail

out=${1:?usage: bench-instr-vm.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dev=${INSTR_DEV:-rxe0}
addr=${INSTR_ADDR:-192.0.2.1}
n1=${INSTR_N1:-2000}
n2=${INSTR_N2:-20000}
reps=${INSTR_REPS:-1}
rep_start=${INSTR_REP_START:-1}
depth=${INSTR_DEPTH:-64}
rows=${INSTR_ROWS:-write_64 read_64 send_64 write_64_batch16 write_64_block}
tools=${INSTR_TOOLS:-udapl dapl perftest}
run_timeout=${INSTR_TIMEOUT:-900}
udattest=${INSTR_UDATTEST:-$root/bin/udattest}
udport=7471
port=22000

mkdir -p "$out"
[ "$rep_start" = 1 ] && : >"$out/failures.tsv"

netdev=$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/ndevs/0 2>/dev/null || echo d0)
provider=ofa-v2-cma-roe-$netdev
echo "$provider u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$netdev 0\" \"\"" >"$out/dat.conf"
export DAT_OVERRIDE=$out/dat.conf

{
	echo "n1=$n1"
	echo "n2=$n2"
	echo "reps=$((rep_start + reps - 1))"
	echo "depth=$depth"
	echo "cpus=$(nproc)"
	echo "kernel=$(uname -r)"
	echo "device=$dev"
	echo "valgrind=$(valgrind --version)"
	echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
	echo "dapl=$(dpkg-query -W -f '${Version}' dapl2-utils 2>/dev/null)"
} >"$out/env.txt"

# callgrind NAME ARGS...: runs ARGS under callgrind, its profile in
# $out/NAME.out (a Go program: NAME.out-NN per thread) and its output in
# $out/NAME.log. --vgdb=no: the VM's /tmp is 9p, which holds no FIFOs.
# With -bg first it runs in the background and sets bg_pid (the pid of
# timeout, which passes a SIGTERM on).
callgrind() {
	local bg=0
	[ "$1" = -bg ] && { bg=1; shift; }
	local name=$1
	shift
	local extra=() env=()
	case $name in
	*.udapl.*)
		# No asynchronous preemption (its signals would land at different
		# places in every run) and a file per thread, so that the runtime's
		# monitor thread can be left out.
		extra=(--separate-threads=yes) env=(GODEBUG=asyncpreemptoff=1)
		;;
	*.dapl.*) extra=(--dump-instr=yes) ;;
	esac
	rm -f "$out/$name".out*
	local cmd=(env "${env[@]}" stdbuf -oL -eL timeout -k 10 "$run_timeout" valgrind --vgdb=no --tool=callgrind
		"${extra[@]}" --callgrind-out-file="$out/$name.out" "$@")
	if [ "$bg" = 1 ]; then
		"${cmd[@]}" >"$out/$name.log" 2>&1 &
		bg_pid=$!
	else
		"${cmd[@]}" >"$out/$name.log" 2>&1
	fi
}

# wait_for FILE PATTERN SECS
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

failed() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/failures.tsv"
	echo "bench-instr: $1 $2 $3 n=$4 rep $5 FAILED: $6" >&2
}

# The servers that are not measured serve every run.
ud_server= dapl_server= bg_pid=
start_servers() {
	case " $tools " in *" udapl "*)
		timeout -k 10 $((run_timeout * 40)) "$udattest" -s -D "$dev" -p "$udport" >"$out/udattest-server.log" 2>&1 &
		ud_server=$!
		wait_for "$out/udattest-server.log" listening 30 || echo "bench-instr: the udattest server did not start" >&2
		;;
	esac
	case " $tools " in *" dapl "*)
		timeout -k 10 $((run_timeout * 40)) dapltest -T S -D "$provider" >"$out/dapltest-server.log" 2>&1 &
		dapl_server=$!
		wait_for "$out/dapltest-server.log" "Service Point Ready" 30 || echo "bench-instr: the dapltest server did not start" >&2
		;;
	esac
}

# udapl ROW N REP ARGS...: udattest -T P against the running server.
udapl() {
	local row=$1 n=$2 rep=$3
	shift 3
	local name=$row.udapl.client.$n.$rep
	callgrind "$name" "$udattest" -D "$dev" -h "$addr" -p "$udport" -T P -progress off -size 64 -n "$n" -q "$depth" \
		-signal 1 -lat-n 0 -yield 0 "$@" || failed "$row" udapl client "$n" "$rep" "exit status $?"
}

# udapl_pair ROW N REP ARGS...: a udattest server of its own under
# callgrind (-sessions 1: it exits after this run), and the client.
udapl_pair() {
	local row=$1 n=$2 rep=$3
	shift 3
	local sname=$row.udapl.server.$n.$rep sp=$((udport + 1)) srv
	callgrind -bg "$sname" "$udattest" -s -D "$dev" -p "$sp" -sessions 1 -yield 0
	srv=$bg_pid
	wait_for "$out/$sname.log" listening 300 || echo "bench-instr: the measured udattest server did not start" >&2
	local name=$row.udapl.client.$n.$rep st
	callgrind "$name" "$udattest" -D "$dev" -h "$addr" -p "$sp" -T P -progress off -size 64 -n "$n" -q "$depth" \
		-signal 1 -lat-n 0 -yield 0 "$@"
	st=$?
	if [ "$st" != 0 ]; then
		failed "$row" udapl client "$n" "$rep" "exit status $st"
		kill "$srv" 2>/dev/null
	fi
	wait "$srv" || failed "$row" udapl server "$n" "$rep" "exit status $?"
}

# dapl ROW N REP MODE OP: dapltest -T P against the running server.
dapl() {
	local row=$1 n=$2 rep=$3 mode=$4 op=$5
	local name=$row.dapl.client.$n.$rep
	callgrind "$name" dapltest -T P -D "$provider" -s "$addr" -m "$mode" -i "$n" -p "$depth" "$op" 64 1 ||
		failed "$row" dapl client "$n" "$rep" "exit status $?"
}

# perftest ROW N REP MEASURE_SERVER TOOL ARGS...: a perftest server and its
# client; the server under callgrind too when MEASURE_SERVER is 1.
perftest() {
	local row=$1 n=$2 rep=$3 both=$4 tool=$5
	shift 5
	port=$((port + 1))
	local sname=$row.perftest.server.$n.$rep srv
	if [ "$both" = 1 ]; then
		callgrind -bg "$sname" "$tool" -d "$dev" -F -N -p "$port" -s 64 -n "$n" -t "$depth" -Q 1 "$@"
		srv=$bg_pid
		wait_for "$out/$sname.log" "Waiting for client" 300 || sleep 5
	else
		stdbuf -oL -eL timeout -k 10 "$run_timeout" "$tool" -d "$dev" -F -N -p "$port" -s 64 -n "$n" -t "$depth" -Q 1 "$@" \
			>"$out/$sname.log" 2>&1 &
		srv=$!
		wait_for "$out/$sname.log" "Waiting for client" 60 || echo "bench-instr: the perftest server did not start" >&2
	fi
	local name=$row.perftest.client.$n.$rep st
	callgrind "$name" "$tool" -d "$dev" -F -N -p "$port" -s 64 -n "$n" -t "$depth" -Q 1 "$@" "$addr"
	st=$?
	if [ "$st" != 0 ]; then
		failed "$row" perftest client "$n" "$rep" "exit status $st"
		kill "$srv" 2>/dev/null
	fi
	wait "$srv" || failed "$row" perftest server "$n" "$rep" "exit status $?"
}

run() {
	local row=$1 tool=$2 n=$3 rep=$4
	case $row.$tool in
	write_64.udapl) udapl "$row" "$n" "$rep" -o write -wait poll ;;
	write_64.dapl) dapl "$row" "$n" "$rep" p RW ;;
	write_64.perftest) perftest "$row" "$n" "$rep" 0 ib_write_bw ;;
	read_64.udapl) udapl "$row" "$n" "$rep" -o read -wait poll ;;
	read_64.dapl) dapl "$row" "$n" "$rep" p RR ;;
	read_64.perftest) perftest "$row" "$n" "$rep" 0 ib_read_bw ;;
	send_64.udapl) udapl_pair "$row" "$n" "$rep" -o send -wait poll ;;
	send_64.perftest) perftest "$row" "$n" "$rep" 1 ib_send_bw ;;
	write_64_batch16.udapl) udapl "$row" "$n" "$rep" -o write -wait poll -batch 16 ;;
	write_64_batch16.perftest) perftest "$row" "$n" "$rep" 0 ib_write_bw -l 16 ;;
	write_64_block.udapl) udapl "$row" "$n" "$rep" -o write -wait block ;;
	write_64_block.dapl) dapl "$row" "$n" "$rep" b RW ;;
	*) return 0 ;; # no such row for this tool
	esac
	echo "bench-instr: $row $tool n=$n rep $rep done, $(($(date +%s) - start)) s (VM clock) so far"
}

start=$(date +%s)
start_servers
for rep in $(seq "$rep_start" $((rep_start + reps - 1))); do
	for row in $rows; do
		for tool in $tools; do
			for n in "$n1" "$n2"; do
				run "$row" "$tool" "$n" "$rep"
			done
		done
	done
done
echo "seconds=$(($(date +%s) - start))" >>"$out/env.txt"

[ -n "$dapl_server" ] && {
	timeout 60 dapltest -T Q -D "$provider" -s "$addr" >/dev/null 2>&1
	kill "$dapl_server" 2>/dev/null
}
[ -n "$ud_server" ] && kill "$ud_server" 2>/dev/null
wait
exit 0

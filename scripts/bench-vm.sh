#!/usr/bin/env bash
# bench-vm.sh OUTDIR: the part of scripts/bench.sh that runs where the RDMA
# device is (inside the Soft-RoCE VM): perftest, the C reference (dapltest
# -T P through the cma provider) and udattest with the same parameters,
# alternating, BENCH_REPS times. Every run's output goes to OUTDIR/raw and
# one line per run to OUTDIR/runs.tsv:
#
#   row  tool  rep  raw/OUTPUT-FILE  status
#
# where status is "ok" or why the run failed. This script runs the tools; it
# reads no numbers: internal/benchreport (on the host) reads them from the
# outputs runs.tsv names (a perftest server's output is beside its
# client's, with .server added), and the active MTU from
# OUTDIR/ibv_devinfo.txt.
#
# Every run of every tool is bounded: a client gets BENCH_TIMEOUT seconds, a
# perftest server as long plus the time it waits for its client, then
# SIGTERM and, BENCH_KILL_AFTER seconds later, SIGKILL to the whole process
# group (timeout -k). A run counts as failed, and its numbers are not used,
# when the client or the server times out or exits with an error, when its
# server is still there after the client ended, or when its output lacks
# the tool's result marker (perftest's #bytes header, dapltest's raw: line,
# udattest's PASSED line, dtestcm's "Connection Test Complete." from both
# sides), or, as internal/benchreport finds, when the
# result it marks does not parse; a leftover server is killed and the bench
# goes on. Each run this script saw fail also gets a line in
# OUTDIR/failures.tsv, for people and bench.sh's count (the report reads
# runs.tsv, and adds to a udattest run's reason the error of its FAILED
# line):
#
#   row  tool  rep  reason  raw-output-file
#
# (perftest -R sometimes loses the race of its second connect, REJECTED,
# after which the client crashes and the server waits forever; such a run is
# tried once more, and the failed try stays in both files.) The server of
# the C reference, which serves all its runs, is restarted when it has died
# or a run against it failed. udattest's server runs only around each of
# its own runs: an idle Go process still wakes its threads now and then
# (the runtime's monitor, timers), and in the 2-vCPU VM each wake-up took a
# CPU from one of perftest's two pollers (597 preemptions in one 20,000
# message run).
#
# The connection rows (conn_rc_wait, conn_rc_poll) run dtestcm's RC
# protocol, as `dtestcm -c BENCH_NCONN -b BENCH_BURST`, in four
# combinations, each a "tool" of runs.tsv named SERVER-CLIENT: c-c (the C
# dtestcm of dapl2-utils on both sides), c-go (C server, Go client:
# internal/cmd/dtestcmgo, the Go port of internal/dtestport), go-c and
# go-go, in an order that rotates with the repetition; conn_rc_wait with
# -w (dat_evd_wait), conn_rc_poll without (polling). The client's output
# (its connections per second) is raw/ROW.TOOL.REP, the server's beside it
# with .server added. Each run gets a connection qualifier of its own (a
# port used within the last minute can meet its predecessors in
# TIME_WAIT); the TCP exchange is on dtestcm's fixed port 15828. A client
# gets BENCH_CONN_TIMEOUT seconds, its server twice as long and a minute
# (it starts first and ends last: the C server frees its EPs at 10 ms
# each). They run only in the first BENCH_CONN_REPS repetitions. A C
# program that printed its pass line and then died of SIGSEGV or SIGABRT
# counts as passed (OFA DAPL's cma provider crashes now and then closing
# its IA: docs/testbed.md), with a line on stderr. The UD rows
# (conn_ud_wait, conn_ud_poll) run dtestcm's UD mode (-u: address
# resolutions) the same way, go-go only: C's fails in dat_ep_create with
# every provider here, cma, scm and ucm (docs/performance.md).
#
# Environment: BENCH_DEV (rxe0), BENCH_ADDR (192.0.2.1), BENCH_REPS (9),
# BENCH_N64 (20000), BENCH_N4K (10000), BENCH_NLAT (3000), BENCH_NRTT (2000:
# iterations of the blocking round-trip rows), BENCH_DEPTH (64),
# BENCH_TIMEOUT (60 s per run), BENCH_KILL_AFTER (10 s), BENCH_ROWS (the rows
# to run, default all), BENCH_NCONN (1000), BENCH_BURST (100),
# BENCH_CONN_REPS (3), BENCH_CONN_TIMEOUT (240 s), BENCH_MODE (det or smp,
# recorded in env.txt),
# BENCH_PERFTEST_CM (1: perftest connects through rdma_cm, -R; 0: through its
# TCP handshake. With -R a perftest bandwidth server busy-polls the CQ of its
# rdma_cm key exchange for the whole run, which on one vCPU takes half the
# CPU from the client: the deterministic mode uses 0; iWARP has no other
# way than -R, so the siw VM uses 1), BENCH_PERFTEST_NICE (0: the niceness of
# perftest's server in the RDMA write and read rows; the siw VM sets 19, so
# that the server's poll does not take the one vCPU from the client: the
# passive side of an RDMA write or read is the kernel's, not the server's.
# Not in the send rows, whose server receives).
set -uo pipefail

out=${1:?usage: bench-vm.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dev=${BENCH_DEV:-rxe0}
addr=${BENCH_ADDR:-192.0.2.1}
reps=${BENCH_REPS:-9}
n64=${BENCH_N64:-20000}
n4k=${BENCH_N4K:-10000}
nlat=${BENCH_NLAT:-3000}
nrtt=${BENCH_NRTT:-2000}
mode=${BENCH_MODE:-smp}
cm=-R
[ "${BENCH_PERFTEST_CM:-1}" = 1 ] || cm=
pnice=${BENCH_PERFTEST_NICE:-0}
depth=${BENCH_DEPTH:-64}
run_timeout=${BENCH_TIMEOUT:-60}
kill_after=${BENCH_KILL_AFTER:-10}
udattest=$root/bin/udattest
dtestcmgo=$root/bin/dtestcmgo
nconn=${BENCH_NCONN:-1000}
burst=${BENCH_BURST:-100}
conn_reps=${BENCH_CONN_REPS:-3}
conn_timeout=${BENCH_CONN_TIMEOUT:-240}
# Below the ephemeral ports (ip_local_port_range, 32768-60999), which the
# clients' connections take in rdma_cm's port space: a C server's PSP on
# 48009 once met one still held (DAT_CONN_QUAL_IN_USE).
conn_port=25000
udport=47900
port=21000
# The servers that serve every run are bounded by the whole bench.
server_timeout=$((reps * 30 * (run_timeout + 2 * kill_after) + 600))

mkdir -p "$out/raw"
: >"$out/runs.tsv"
: >"$out/failures.tsv"

# The C reference reads its provider from a dat.conf: the cma provider on the
# netdev of the device.
netdev=$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/ndevs/0 2>/dev/null || echo d0)
provider=ofa-v2-cma-roe-$netdev
echo "$provider u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$netdev 0\" \"\"" >"$out/dat.conf"
export DAT_OVERRIDE=$out/dat.conf

{
	echo "mode=$mode"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
	echo "device=$dev"
	echo "netdev=$netdev"
	echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
	echo "dapl=$(dpkg-query -W -f '${Version}' dapl2-utils 2>/dev/null)"
	echo "reps=$reps n64=$n64 n4k=$n4k nlat=$nlat depth=$depth"
	echo "nrtt=$nrtt"
	echo "nconn=$nconn burst=$burst conn_reps=$conn_reps conn_timeout=$conn_timeout"
	echo "perftest_cm=${cm:-tcp}"
	echo "perftest_nice=$pnice"
	echo "timeout=$run_timeout kill_after=$kill_after"
} >"$out/env.txt"
ibv_devinfo -d "$dev" >"$out/ibv_devinfo.txt" 2>/dev/null

# ran ROW TOOL REP RAW STATUS: a run, in runs.tsv; RAW is the path of its
# output, STATUS ok or why it failed.
ran() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4#"$out"/}" "${5//$'\t'/ }" >>"$out/runs.tsv"; }

# failed ROW TOOL REP REASON RAW: a failed run, in both files.
failed() {
	ran "$1" "$2" "$3" "$5" "$4"
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\t'/ }" "$5" >>"$out/failures.tsv"
	echo "bench: $1 $2 repetition $3 FAILED: $4 (output: $5)" >&2
}

# bounded SECS CMD...: CMD for at most SECS seconds, then SIGTERM, then
# SIGKILL after $kill_after s. timeout makes itself the leader of a process
# group that holds CMD and its children; exit status 124 when it timed out.
# (Background jobs run timeout itself, not this function, so that $! is the
# pid of timeout and not of a subshell.)
bounded() {
	local secs=$1
	shift
	timeout -k "$kill_after" "$secs" "$@"
}

# stop PID: ends background job PID (timeout -k ... &): SIGTERM, which
# timeout passes on and follows with SIGKILL after $kill_after s, and SIGKILL
# to its whole process group if it is still there after that. Sets
# job_status to its exit status.
stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < (kill_after + 5) * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	job_status=$?
}

# finish PID SECS: waits up to SECS s for background job PID to exit, and
# stops it if it does not. Sets job_status, and job_left=1 when it had to be
# stopped.
finish() {
	local pid=$1 secs=$2 i
	job_left=0
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		job_left=1
		stop "$pid"
		return
	fi
	wait "$pid" 2>/dev/null
	job_status=$?
}

# why STATUS SECS: what an exit status of a run bounded by SECS means.
why() {
	case $1 in
	124) echo "timed out after $2 s" ;;
	137) echo "killed after $2 + $kill_after s (still there after SIGTERM)" ;;
	*) echo "exit status $1" ;;
	esac
}

# wait_for FILE PATTERN [SECS]: wait up to SECS (15) s for PATTERN to show
# in FILE.
wait_for() {
	local i
	for i in $(seq $((${3:-15} * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# perftest ROW REP TOOL ARGS...: one perftest run (server and client),
# tried twice if the first try fails.
perftest() {
	local row=$1 rep=$2 tool=$3
	shift 3
	local raw=$out/raw/$row.perftest.$rep try srv st reason nc=0
	case $tool in ib_write_bw | ib_read_bw) nc=$pnice ;; esac
	for try in 1 2; do
		port=$((port + 1))
		# The server waits for its client (up to 15 s), then runs as long.
		stdbuf -oL -eL timeout -k "$kill_after" $((run_timeout + 20)) nice -n "$nc" "$tool" $cm -d "$dev" -F -p "$port" "$@" >"$raw.server" 2>&1 &
		srv=$!
		wait_for "$raw.server" "Waiting for client" || sleep 1
		bounded "$run_timeout" "$tool" $cm -d "$dev" -F -p "$port" "$@" "$addr" >"$raw" 2>&1
		st=$?
		reason=
		if [ "$st" != 0 ]; then
			stop "$srv"
			reason="client: $(why "$st" "$run_timeout"); server stopped"
		else
			finish "$srv" 15
			if [ "$job_left" = 1 ]; then
				reason="server still running 15 s after the client ended: stopped"
			elif [ "$job_status" != 0 ]; then
				reason="server: $(why "$job_status" $((run_timeout + 20)))"
			elif ! grep -q '^ *#bytes' "$raw"; then
				reason="no result in the output"
			fi
		fi
		if [ -z "$reason" ]; then
			ran "$row" perftest "$rep" "$raw" ok
			break
		fi
		if [ "$try" = 1 ]; then
			mv "$raw" "$raw.try1"
			mv "$raw.server" "$raw.server.try1"
			failed "$row" perftest "$rep" "try 1: $reason; tried again" "$raw.try1"
		else
			failed "$row" perftest "$rep" "try 2: $reason" "$raw"
		fi
	done
}

# dapl ROW REP OP SIZE N [WAIT [DEPTH]]: one dapltest -T P run against the
# running server; WAIT p (polling, default) or b (blocking waits).
dapl() {
	local row=$1 rep=$2 op=$3 size=$4 n=$5 wait=${6:-p} qd=${7:-$depth}
	local raw=$out/raw/$row.dapl.$rep st
	kill -0 "$dapl_server" 2>/dev/null || {
		echo "bench: the dapltest server is gone; starting it again" >&2
		restart_dapl_server
	}
	bounded "$run_timeout" dapltest -T P -D "$provider" -s "$addr" -m "$wait" -i "$n" -p "$qd" "$op" "$size" 1 >"$raw" 2>&1
	st=$?
	# Its result is a line that starts with raw:.
	if [ "$st" != 0 ] || ! grep -q '^raw:' "$raw"; then
		if [ "$st" != 0 ]; then
			failed "$row" dapl "$rep" "client: $(why "$st" "$run_timeout"); server restarted" "$raw"
		else
			failed "$row" dapl "$rep" "no raw: result line; server restarted" "$raw"
		fi
		# The server may still hold the session of the failed run.
		restart_dapl_server
		return
	fi
	ran "$row" dapl "$rep" "$raw" ok
}

# ours ROW REP ARGS...: one udattest run against a server started for it.
ours() {
	local row=$1 rep=$2
	shift 2
	local raw=$out/raw/$row.udapl.$rep st
	start_ud_server
	bounded "$run_timeout" "$udattest" -D "$dev" -h "$addr" -p "$udport" -T P -progress off -json "$@" >"$raw" 2>&1
	st=$?
	stop "$ud_server"
	# Its result is a JSON line with "result":"PASSED" (internal/benchreport
	# adds the error of a FAILED line to the reason).
	if [ "$st" != 0 ] || ! grep -q '"result":"PASSED"' "$raw"; then
		failed "$row" udapl "$rep" "client: $(why "$st" "$run_timeout")" "$raw"
		return
	fi
	ran "$row" udapl "$rep" "$raw" ok
}

# cm_ok STATUS OUTPUT: whether a dtestcm run (C or Go) passed: it exited 0
# and printed the pass line; or it is the C program, printed the pass line
# and died of SIGSEGV or SIGABRT after it (128 + the signal, as timeout
# passes it on). Says so on stderr for the latter.
cm_pass="Connection Test Complete."
cm_ok() {
	grep -q "$cm_pass" "$2" 2>/dev/null || return 1
	case $1 in
	0) return 0 ;;
	139 | 134)
		echo "bench: $2: the C dtestcm crashed (exit status $1) after its pass line; counted as passed" >&2
		return 0
		;;
	esac
	return 1
}

# cm ROW REP TOOL WAIT: one dtestcm run, TOOL c-c, c-go, go-c or go-go
# (server-client), WAIT -w or "" (polling). The server starts first; the
# client connects once it listens.
cm() {
	local row=$1 rep=$2 tool=$3 wait=$4
	local raw=$out/raw/$row.$tool.$rep srv st reason=
	local -a common sargs cargs
	conn_port=$((conn_port + 1))
	common=(-p "$conn_port" -c "$nconn" -b "$burst" $wait)
	case $row in conn_ud_*) common+=(-u) ;; esac
	case $tool in
	c-*) sargs=(stdbuf -oL -eL dtestcm -s -P "$provider" "${common[@]}") ;;
	go-*) sargs=("$dtestcmgo" -s -D "$dev" "${common[@]}") ;;
	esac
	case $tool in
	*-c) cargs=(stdbuf -oL -eL dtestcm -h "$addr" -P "$provider" "${common[@]}") ;;
	*-go) cargs=("$dtestcmgo" -h "$addr" -D "$dev" "${common[@]}") ;;
	esac
	# The server: its start, the client's run and its end.
	local sbound=$((2 * conn_timeout + 60))
	timeout -k "$kill_after" "$sbound" "${sargs[@]}" >"$raw.server" 2>&1 &
	srv=$!
	# The C server creates its EPs first: 3 s for 1000 in the 2-vCPU VM.
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "server waiting for client\|dtestcmgo: listening" "$raw.server" 2>/dev/null && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "server waiting for client\|dtestcmgo: listening" "$raw.server" 2>/dev/null; then
		: >"$raw"
		if kill -0 "$srv" 2>/dev/null; then
			stop "$srv"
			reason="server: not listening after 60 s; stopped"
		else
			wait "$srv" 2>/dev/null
			reason="server: ended before it listened, exit status $?"
		fi
		failed "$row" "$tool" "$rep" "$reason" "$raw"
		return
	fi
	bounded "$conn_timeout" "${cargs[@]}" >"$raw" 2>&1
	st=$?
	if ! cm_ok "$st" "$raw"; then
		stop "$srv"
		reason="client: $(why "$st" "$conn_timeout"); server stopped"
		[ "$st" = 0 ] && reason="client: no pass line; server stopped"
	else
		finish "$srv" "$conn_timeout"
		if [ "$job_left" = 1 ]; then
			reason="server still running $conn_timeout s after the client ended: stopped"
		elif ! cm_ok "$job_status" "$raw.server"; then
			reason="server: $(why "$job_status" "$sbound")"
			[ "$job_status" = 0 ] && reason="server: no pass line"
		fi
	fi
	if [ -n "$reason" ]; then
		failed "$row" "$tool" "$rep" "$reason" "$raw"
		return
	fi
	ran "$row" "$tool" "$rep" "$raw" ok
}

# conn_row ROW REP: the four combinations of a connection row (a UD row:
# go-go), in an order that rotates with the repetition.
conn_row() {
	local row=$1 rep=$2 wait= i tools=(c-c c-go go-c go-go)
	[ "$rep" -le "$conn_reps" ] || return 0
	case $row in *_wait*) wait=-w ;; esac
	case $row in conn_ud_*) tools=(go-go) ;; esac
	for i in "${!tools[@]}"; do
		cm "$row" "$rep" "${tools[$(((i + rep - 1) % ${#tools[@]}))]}" "$wait"
	done
}

# One row of the table: the same operation, size, iterations, queue depth
# (perftest -t, dapltest -p, udattest -q), a completion for every operation
# (perftest -Q 1; dapltest always), busy polling (dapltest -m p).
run_row() {
	local row=$1 rep=$2 order=$3
	local size n
	case $row in
	conn_*)
		conn_row "$row" "$rep"
		return
		;;
	esac
	case $row in
	*_64 | *_64_*) size=64 n=$n64 ;;
	*_4k | *_4k_*) size=4096 n=$n4k ;;
	esac
	local t
	for t in $order; do
		case $row.$t in
		# Blocking waits (dapltest -m b, udattest -wait block), no perftest row.
		*_bw_*_block.perftest | *_rtt_*.perftest) ;;
		write_bw_*_block.dapl) dapl "$row" "$rep" RW "$size" "$n" b ;;
		read_bw_*_block.dapl) dapl "$row" "$rep" RR "$size" "$n" b ;;
		write_bw_*_block.udapl) ours "$row" "$rep" -o write -size "$size" -n "$n" -q "$depth" -signal 1 -wait block -lat-n 0 ;;
		read_bw_*_block.udapl) ours "$row" "$rep" -o read -size "$size" -n "$n" -q "$depth" -signal 1 -wait block -lat-n 0 ;;
		# One RDMA write at a time, waited for by blocking: its round trip.
		write_rtt_*_block.dapl) dapl "$row" "$rep" RW "$size" "$nrtt" b 1 ;;
		write_rtt_*_block.udapl) ours "$row" "$rep" -o write -size "$size" -n "$nrtt" -q 1 -signal 1 -wait block -lat-n 0 ;;
		# Ping-pong of sends, each side blocking for its receive (perftest -e:
		# completion events).
		send_lat_*_block.perftest) perftest "$row" "$rep" ib_send_lat -e -s "$size" -n "$nlat" ;;
		send_lat_*_block.udapl) ours "$row" "$rep" -o send -lat -size "$size" -n "$nlat" -wait block ;;
		send_lat_*_block.dapl) ;;
		write_bw_*_list16.perftest) perftest "$row" "$rep" ib_write_bw -s "$size" -n "$n" -t "$depth" -Q 1 -l 16 ;;
		write_bw_*_list16.udapl) ours "$row" "$rep" -o write -size "$size" -n "$n" -q "$depth" -signal 1 -batch 16 -wait poll -lat-n 0 ;;
		write_bw_*_list16.dapl) ;;
		write_bw_*.perftest) perftest "$row" "$rep" ib_write_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		read_bw_*.perftest) perftest "$row" "$rep" ib_read_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		send_bw_*.perftest) perftest "$row" "$rep" ib_send_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		write_lat_*.perftest) perftest "$row" "$rep" ib_write_lat -s "$size" -n "$nlat" ;;
		send_lat_*.perftest) perftest "$row" "$rep" ib_send_lat -s "$size" -n "$nlat" ;;
		write_bw_*.dapl) dapl "$row" "$rep" RW "$size" "$n" ;;
		read_bw_*.dapl) dapl "$row" "$rep" RR "$size" "$n" ;;
		write_bw_*.udapl) ours "$row" "$rep" -o write -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		read_bw_*.udapl) ours "$row" "$rep" -o read -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		send_bw_*.udapl) ours "$row" "$rep" -o send -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		write_lat_*.udapl) ours "$row" "$rep" -o write -lat -size "$size" -n "$nlat" -wait poll ;;
		*_lat_*.dapl) ;;
		send_lat_*.udapl) ours "$row" "$rep" -o send -lat -size "$size" -n "$nlat" -wait poll ;;
		esac
	done
}

# The C reference's server serves every run, udattest's one run; each start
# logs to a file of its own (raw/dapltest-server.N.log, ...).
dapl_server= dapl_starts=0 ud_server= ud_starts=0
start_dapl_server() {
	dapl_starts=$((dapl_starts + 1))
	local log=$out/raw/dapltest-server.$dapl_starts.log
	timeout -k "$kill_after" "$server_timeout" dapltest -T S -D "$provider" >"$log" 2>&1 &
	dapl_server=$!
	wait_for "$log" "Service Point Ready" || echo "bench: the dapltest server did not start" >&2
}
restart_dapl_server() {
	stop "$dapl_server"
	start_dapl_server
}
start_ud_server() {
	ud_starts=$((ud_starts + 1))
	local log=$out/raw/udattest-server.$ud_starts.log
	timeout -k "$kill_after" "$server_timeout" "$udattest" -s -D "$dev" -p "$udport" >"$log" 2>&1 &
	ud_server=$!
	wait_for "$log" "listening" || echo "bench: the udattest server did not start" >&2
}
start_dapl_server

rows=${BENCH_ROWS:-write_bw_64 write_bw_4k read_bw_64 read_bw_4k send_bw_64 send_bw_4k write_bw_64_list16
write_bw_64_block write_bw_4k_block read_bw_64_block read_bw_4k_block
write_lat_64 send_lat_64 send_lat_4k_block write_rtt_4k_block conn_rc_wait conn_rc_poll
conn_ud_wait conn_ud_poll}
orders=("perftest dapl udapl" "udapl perftest dapl" "dapl udapl perftest")
start=$(date +%s)
for rep in $(seq "$reps"); do
	order=${orders[$(((rep - 1) % 3))]}
	echo "bench: repetition $rep of $reps (order: $order), $(($(date +%s) - start)) s so far"
	for row in $rows; do
		run_row "$row" "$rep" "$order"
	done
done
echo "bench: done in $(($(date +%s) - start)) s"
echo "seconds=$(($(date +%s) - start))" >>"$out/env.txt"

echo "failed=$(wc -l <"$out/failures.tsv")" >>"$out/env.txt"
bounded 30 dapltest -T Q -D "$provider" -s "$addr" >/dev/null 2>&1
finish "$dapl_server" 10
exit 0

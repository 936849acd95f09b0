#!/usr/bin/env bash
# bench-vm.sh OUTDIR: the part of scripts/bench.sh that runs where the RDMA
# device is (inside the Soft-RoCE VM): perftest, the C reference (dapltest
# -T P through the cma provider) and udattest with the same parameters,
# alternating, BENCH_REPS times. Every run's output goes to OUTDIR/raw and
# one line per run to OUTDIR/results.tsv:
#
#   row  tool  rep  msg_rate(1/s)  bw(MB/s, 2^20 B)  p50(us)  p99(us)
#
# with "NA" where a tool does not report a value and "FAIL" when it failed.
# Environment: BENCH_DEV (rxe0), BENCH_ADDR (192.0.2.1), BENCH_REPS (9),
# BENCH_N64 (20000), BENCH_N4K (10000), BENCH_NLAT (3000), BENCH_DEPTH (64).
set -uo pipefail

out=${1:?usage: bench-vm.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dev=${BENCH_DEV:-rxe0}
addr=${BENCH_ADDR:-192.0.2.1}
reps=${BENCH_REPS:-9}
n64=${BENCH_N64:-20000}
n4k=${BENCH_N4K:-10000}
nlat=${BENCH_NLAT:-3000}
depth=${BENCH_DEPTH:-64}
udattest=$root/bin/udattest
udport=47900
port=21000

mkdir -p "$out/raw"
: >"$out/results.tsv"

# The C reference reads its provider from a dat.conf: the cma provider on the
# netdev of the device.
netdev=$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/ndevs/0 2>/dev/null || echo d0)
provider=ofa-v2-cma-roe-$netdev
echo "$provider u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$netdev 0\" \"\"" >"$out/dat.conf"
export DAT_OVERRIDE=$out/dat.conf

{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "device=$dev"
	echo "netdev=$netdev"
	echo "mtu=$(ibv_devinfo -d "$dev" 2>/dev/null | awk '/active_mtu/ {print $2; exit}')"
	echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
	echo "dapl=$(dpkg-query -W -f '${Version}' dapl2-utils 2>/dev/null)"
	echo "reps=$reps n64=$n64 n4k=$n4k nlat=$nlat depth=$depth"
} >"$out/env.txt"

# record ROW TOOL REP MSG BW P50 P99
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/results.tsv"; }

# wait_for FILE PATTERN: wait up to 15 s for PATTERN to show in FILE.
wait_for() {
	local i
	for i in $(seq 150); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# perftest ROW REP KIND TOOL ARGS...: one perftest run (server and client).
# KIND is bw or lat.
perftest() {
	local row=$1 rep=$2 kind=$3 tool=$4
	shift 4
	local raw=$out/raw/$row.perftest.$rep try
	for try in 1 2; do
		port=$((port + 1))
		stdbuf -oL -eL timeout 120 "$tool" -R -d "$dev" -F -p "$port" "$@" >"$raw.server" 2>&1 &
		local srv=$!
		wait_for "$raw.server" "Waiting for client" || sleep 1
		if timeout 120 "$tool" -R -d "$dev" -F -p "$port" "$@" "$addr" >"$raw" 2>&1; then
			wait "$srv"
			break
		fi
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		echo "bench: $tool $* failed (try $try)" >&2
	done
	# The numbers are on the line after the header that starts with #bytes.
	local line
	line=$(awk '/^ *#bytes/ { getline; print; exit }' "$raw")
	if [ -z "$line" ]; then
		record "$row" perftest "$rep" FAIL FAIL FAIL FAIL
		return
	fi
	if [ "$kind" = bw ]; then
		# #bytes #iterations BW-peak BW-average MsgRate[Mpps]
		awk -v r="$row" -v p="$rep" '{ printf "%s\tperftest\t%s\t%.2f\t%.3f\tNA\tNA\n", r, p, $5 * 1e6, $4 }' \
			<<<"$line" >>"$out/results.tsv"
	else
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
		awk -v r="$row" -v p="$rep" '{ printf "%s\tperftest\t%s\tNA\tNA\t%.2f\t%.2f\n", r, p, $5, $8 }' \
			<<<"$line" >>"$out/results.tsv"
	fi
}

# dapl ROW REP OP SIZE N: one dapltest -T P run against the running server.
dapl() {
	local row=$1 rep=$2 op=$3 size=$4 n=$5
	local raw=$out/raw/$row.dapl.$rep
	timeout 120 dapltest -T P -D "$provider" -s "$addr" -m p -i "$n" -p "$depth" "$op" "$size" 1 >"$raw" 2>&1
	# raw: OP, iterations, seg size, segs, pipeline, cpu, ops/sec, MB/sec, latency, post, reap
	local line
	line=$(grep '^raw:' "$raw" | tail -n1)
	if [ -z "$line" ]; then
		record "$row" dapl "$rep" FAIL FAIL FAIL FAIL
		return
	fi
	awk -F', *' -v r="$row" -v p="$rep" '{ printf "%s\tdapl\t%s\t%.2f\t%.3f\tNA\tNA\n", r, p, $7, $8 }' \
		<<<"${line#raw: }" >>"$out/results.tsv"
}

# ours ROW REP ARGS...: one udattest run against the running server.
ours() {
	local row=$1 rep=$2
	shift 2
	local raw=$out/raw/$row.udapl.$rep
	timeout 120 "$udattest" -D "$dev" -h "$addr" -p "$udport" -T P -progress off -json "$@" >"$raw" 2>&1
	local line
	line=$(grep '"result":"PASSED"' "$raw" | tail -n1)
	if [ -z "$line" ]; then
		record "$row" udapl "$rep" FAIL FAIL FAIL FAIL
		return
	fi
	local f v vals=()
	for f in msg_rate mb_per_s lat_p50_us lat_p99_us; do
		v=$(grep -o "\"$f\":[0-9.e+-]*" <<<"$line" | cut -d: -f2)
		vals+=("${v:-NA}")
	done
	if [[ " $* " == *" -lat "* ]]; then
		vals[0]=NA vals[1]=NA
	else
		vals[2]=NA vals[3]=NA
	fi
	record "$row" udapl "$rep" "${vals[@]}"
}

# One row of the table: the same operation, size, iterations, queue depth
# (perftest -t, dapltest -p, udattest -q), a completion for every operation
# (perftest -Q 1; dapltest always), busy polling (dapltest -m p).
run_row() {
	local row=$1 rep=$2 order=$3
	local size n
	case $row in
	*_64) size=64 n=$n64 ;;
	*_4k) size=4096 n=$n4k ;;
	*_64_list16) size=64 n=$n64 ;;
	esac
	local t
	for t in $order; do
		case $row.$t in
		write_bw_*_list16.perftest) perftest "$row" "$rep" bw ib_write_bw -s "$size" -n "$n" -t "$depth" -Q 1 -l 16 ;;
		write_bw_*_list16.udapl) ours "$row" "$rep" -o write -size "$size" -n "$n" -q "$depth" -signal 1 -batch 16 -wait poll -lat-n 0 ;;
		write_bw_*_list16.dapl) ;;
		write_bw_*.perftest) perftest "$row" "$rep" bw ib_write_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		read_bw_*.perftest) perftest "$row" "$rep" bw ib_read_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		send_bw_*.perftest) perftest "$row" "$rep" bw ib_send_bw -s "$size" -n "$n" -t "$depth" -Q 1 ;;
		write_lat_*.perftest) perftest "$row" "$rep" lat ib_write_lat -s "$size" -n "$nlat" ;;
		send_lat_*.perftest) perftest "$row" "$rep" lat ib_send_lat -s "$size" -n "$nlat" ;;
		write_bw_*.dapl) dapl "$row" "$rep" RW "$size" "$n" ;;
		read_bw_*.dapl) dapl "$row" "$rep" RR "$size" "$n" ;;
		write_bw_*.udapl) ours "$row" "$rep" -o write -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		read_bw_*.udapl) ours "$row" "$rep" -o read -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		send_bw_*.udapl) ours "$row" "$rep" -o send -size "$size" -n "$n" -q "$depth" -signal 1 -wait poll -lat-n 0 ;;
		write_lat_*.udapl) ours "$row" "$rep" -o write -lat -size "$size" -n "$nlat" -wait poll ;;
		send_lat_*.udapl) ours "$row" "$rep" -o send -lat -size "$size" -n "$nlat" -wait poll ;;
		esac
	done
}

# The servers of the C reference and of udattest run for the whole benchmark.
dapltest -T S -D "$provider" >"$out/raw/dapltest-server.log" 2>&1 &
dapl_server=$!
"$udattest" -s -D "$dev" -p "$udport" >"$out/raw/udattest-server.log" 2>&1 &
ud_server=$!
wait_for "$out/raw/dapltest-server.log" "Service Point Ready" || echo "bench: the dapltest server did not start" >&2
wait_for "$out/raw/udattest-server.log" "listening" || echo "bench: the udattest server did not start" >&2

rows="write_bw_64 write_bw_4k read_bw_64 read_bw_4k send_bw_64 send_bw_4k write_bw_64_list16 write_lat_64 send_lat_64"
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

dapltest -T Q -D "$provider" -s "$addr" >/dev/null 2>&1
kill "$ud_server" 2>/dev/null
wait "$dapl_server" "$ud_server" 2>/dev/null
exit 0

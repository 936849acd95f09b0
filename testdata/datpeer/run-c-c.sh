#!/usr/bin/env bash
# run-c-c.sh: datpeer (C) against datpeer (C), inside the Soft-RoCE VM:
#
#   scripts/vmtest.sh testdata/datpeer/run-c-c.sh
#
# Builds datpeer into a temporary directory under /tmp (writable in the VM;
# set DATPEER=path to use a binary built elsewhere), then runs, each with a
# fresh server: the full protocol (conn_qual 9000), the reject case
# (conn_qual 9001) and the protocol with the IB extensions phase (-x, 9002). Each server's output is printed after its client's.
# Exits 0 only if every server and client printed PASSED and exited 0.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
host=${DATPEER_HOST:-192.0.2.1}
export DAT_OVERRIDE=${DAT_OVERRIDE:-$here/dat.conf}
tmp=$(mktemp -d /tmp/datpeer.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

bin=${DATPEER:-}
if [ -z "$bin" ]; then
	bin=$tmp/datpeer
	cc -O2 -Wall -o "$bin" "$here/datpeer.c" -ldat2 || { echo "FAILED: build"; exit 1; }
fi

# wait_listening LOG PID: wait (30 s at most) until the server logged that its
# PSP exists, or died.
wait_listening() {
	local i
	for i in $(seq 300); do
		grep -q 'listening on conn_qual' "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# run_case NAME CONN_QUAL BOTH_ARGS [CLIENT ARGS...]: BOTH_ARGS ("" or -x)
# go to server and client.
run_case() {
	local name=$1 cq=$2 both=$3 log=$tmp/server-$1.log spid crc src
	shift 3
	echo "=== $name: server and client on $host conn_qual $cq"
	"$bin" -s -p "$cq" $both >"$log" 2>&1 &
	spid=$!
	if ! wait_listening "$log" "$spid"; then
		cat "$log"
		kill "$spid" 2>/dev/null
		echo "=== $name: FAILED: the server did not start listening"
		return 1
	fi
	"$bin" -c -h "$host" -p "$cq" $both "$@" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	cat "$log"
	if [ "$crc" = 0 ] && [ "$src" = 0 ]; then
		echo "=== $name: PASSED"
		return 0
	fi
	echo "=== $name: FAILED (client exit $crc, server exit $src)"
	return 1
}

status=0
run_case c-c 9000 "" || status=1
run_case c-c-reject 9001 "" -r || status=1
run_case c-c-ext 9002 -x || status=1
[ "$status" = 0 ] && echo "run-c-c: PASSED" || echo "run-c-c: FAILED"
exit "$status"

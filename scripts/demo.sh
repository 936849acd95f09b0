#!/usr/bin/env bash
# demo.sh: the first thing to run (make demo). Builds udattest and runs its
# server and client over an RDMA device: the quick end-to-end check, a short
# bandwidth and latency run and a transaction test, then a summary table.
#
# Where it runs: on this host if it has an RDMA device (UDAPL_DEVICE names
# it, else the first one), otherwise inside the Soft-RoCE test VM
# (scripts/vmtest.sh, device rxe0 on 192.0.2.1; siw0 with UDAPL_RDMA=siw).
# UDAPL_DEMO_VM=1 forces the VM. UDAPL_DEMO_PORT changes the port (default 47811).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# device_addr DEV prints the IPv4 address of the netdev behind RDMA device DEV.
device_addr() {
	local nd
	for nd in /sys/class/infiniband/"$1"/ports/1/gid_attrs/ndevs/*; do
		nd=$(cat "$nd" 2>/dev/null) || continue
		[ -n "$nd" ] || continue
		ip -4 -o addr show dev "$nd" 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }'
		return 0
	done
}

# field KEY reads one field of the JSON result lines on stdin (flat objects).
field() {
	awk -v k="\"$1\":" '{
		i = index($0, k); if (!i) { print "-"; next }
		v = substr($0, i + length(k)); sub(/[,}].*/, "", v); gsub(/"/, "", v); print v }'
}

# demo runs the server and the clients on device $1 at address $2.
demo() {
	local dev=$1 addr=$2 port=${UDAPL_DEMO_PORT:-47811}
	local tmp results serverlog
	tmp=$(mktemp -d /tmp/udattest-demo.XXXXXX)
	results=$tmp/results.jsonl serverlog=$tmp/server.log
	trap 'rm -rf "$tmp"' RETURN

	echo "== udapl demo: udattest over $dev ($addr), kernel $(uname -r) =="
	bin/udattest -s -D "$dev" -p "$port" -sessions 4 >"$serverlog" 2>&1 &
	local server=$!
	for _ in $(seq 100); do
		grep -q listening "$serverlog" && break
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q listening "$serverlog"; then
		cat "$serverlog" >&2
		kill "$server" 2>/dev/null || true
		return 1
	fi

	local status=0
	client() { # TITLE ARGS...: run one client; keep its JSON line
		local title=$1 out rc=0
		shift
		echo
		echo "-- $title: udattest $*"
		out=$(bin/udattest -D "$dev" -h "$addr" -p "$port" "$@" 2>&1) || rc=$?
		grep -v '^{' <<<"$out" || true
		grep '^{' <<<"$out" | tail -n1 | sed "s|^{|{\"title\":\"$title\",|" >>"$results" || true
		[ "$rc" = 0 ] || status=1
	}
	client "quick check"           -T Q
	client "RDMA write bandwidth"  -T P -o write -size 4k -n 20000 -q 64
	client "send/recv latency"     -T P -o send -lat -size 64 -n 5000
	client "transactions"          -T T -eps 4 -n 100
	wait "$server" || status=1
	if grep -q FAILED "$serverlog"; then
		echo
		echo "-- server log:"
		cat "$serverlog"
	fi

	echo
	echo "== summary (Soft-RoCE in an emulated VM is slow: compare ratios, not absolute numbers) =="
	printf '%-22s %-7s %6s %9s %12s %11s %9s %9s\n' test result size iters "msg rate/s" "MB/s" "p50 us" "p99 us"
	local line test
	while IFS= read -r line; do
		test=$(field test <<<"$line")
		if [ "$test" = quick ]; then
			printf '%-22s %-7s %6s %9s %12s %11s %9s %9s\n' \
				"$(field title <<<"$line")" "$(field result <<<"$line")" - - - - - -
			continue
		fi
		printf '%-22s %-7s %6s %9s %12s %11s %9s %9s\n' \
			"$(field title <<<"$line")" "$(field result <<<"$line")" "$(field size <<<"$line")" \
			"$(field iters <<<"$line")" "$(field msg_rate <<<"$line")" "$(field mb_per_s <<<"$line")" \
			"$(field lat_p50_us <<<"$line")" "$(field lat_p99_us <<<"$line")"
	done <"$results"
	echo
	if [ "$status" = 0 ]; then
		echo "demo PASSED: udattest --help (bin/udattest) shows what else it does."
	else
		echo "demo FAILED"
	fi
	return "$status"
}

if [ "${1:-}" = --run ]; then
	# Inside the VM (or on a host with a device): the demo itself.
	demo "$2" "$3"
	exit
fi

echo "demo.sh: building bin/udattest"
go build -o bin/ ./cmd/udattest

dev=${UDAPL_DEVICE:-}
if [ -z "$dev" ] && [ "${UDAPL_DEMO_VM:-0}" != 1 ]; then
	dev=$(ls /sys/class/infiniband 2>/dev/null | head -n1 || true)
fi
if [ -n "$dev" ] && [ "${UDAPL_DEMO_VM:-0}" != 1 ] && addr=$(device_addr "$dev") && [ -n "$addr" ]; then
	echo "demo.sh: RDMA device $dev found on this host; running here"
	exec "$0" --run "$dev" "$addr"
fi
dev=${UDAPL_RDMA:-rxe}0
echo "demo.sh: no RDMA device here; booting the test VM ($dev on 192.0.2.1)"
exec scripts/vmtest.sh "$0" --run "$dev" 192.0.2.1

#!/usr/bin/env bash
# cm-instr.sh: user-space instructions per connection of dtestcm's RC
# protocol (issue 24 §5), in one boot of the deterministic VM, with
# callgrind: each Go port (internal/cmd/dtestcmgo) as client against C's
# dtestcm server and as server against C's client, and C's dtestcm in
# both roles against itself; every measured process twice, with CM_N1 and
# CM_N2 connections, so that `instrcount pair` takes
# (Ir(N2) - Ir(N1)) / (N2 - N1) and start-up cancels out.
#
#   scripts/cm-instr.sh [LABEL=DTESTCMGO ...]
#
# Without arguments it measures this tree's port (built into CM_OUT as
# "go"); several LABEL=BINARY pairs put builds side by side (before/after)
# in the same boot. Results: CM_OUT/summary.txt, and per process
# CM_OUT/LABEL.ROLE.txt (instrcount pair: the split and the functions).
#
# Environment: CM_OUT (/tmp/cm-instr; under /tmp, which the VM writes),
# CM_N1 (100), CM_N2 (500), CM_WAIT (-w: dat_evd_wait; empty polls, whose
# count then depends on the scheduler), CM_C (1: measure C's dtestcm too),
# CM_TIMEOUT (1800 s per run).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "${1:-}" = --guest ]; then
	shift
	out=$1
	shift
	set +e
	netdev=$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0 2>/dev/null || echo d0)
	provider=ofa-v2-cma-roe-$netdev
	echo "$provider u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$netdev 0\" \"\"" >"$out/dat.conf"
	export DAT_OVERRIDE=$out/dat.conf
	port=25000
	wait=${CM_WAIT--w}
	tmo=${CM_TIMEOUT:-1800}
	# C's output line-buffered, as stdbuf -oL would (under valgrind stdbuf
	# itself would be measured).
	linebuf=(LD_PRELOAD=/usr/libexec/coreutils/libstdbuf.so _STDBUF_O=L _STDBUF_E=L)
	# vg NAME KIND CMD...: CMD under callgrind (KIND go: a file per thread,
	# no asynchronous preemption, as scripts/bench-instr-vm.sh runs Go).
	vg() {
		local name=$1 kind=$2
		shift 2
		local extra=() env=("${linebuf[@]}")
		[ "$kind" = go ] && extra=(--separate-threads=yes) env=(GODEBUG=asyncpreemptoff=1)
		env "${env[@]}" timeout -k 10 "$tmo" valgrind --vgdb=no --tool=callgrind "${extra[@]}" \
			--callgrind-out-file="$out/$name.out" "$@"
	}
	# pair NAME SERVER-CMD -- CLIENT-CMD: the server, then the client once
	# it listens; both logged to NAME.server.log and NAME.client.log.
	pair() {
		local name=$1 srv i
		shift
		local s=() c=()
		while [ "$1" != -- ]; do s+=("$1") && shift; done
		shift
		c=("$@")
		port=$((port + 1))
		"${s[@]}" -p "$port" >"$out/$name.server.log" 2>&1 &
		srv=$!
		for ((i = 0; i < 3000; i++)); do
			grep -q "server waiting for client\|dtestcmgo: listening" "$out/$name.server.log" && break
			kill -0 "$srv" 2>/dev/null || break
			sleep 0.1
		done
		"${c[@]}" -p "$port" >"$out/$name.client.log" 2>&1
		echo "$name: client exit status $?" >>"$out/status.txt"
		wait "$srv"
		# (C's server may crash after its pass line: bench-vm.sh's cm_ok.)
		echo "$name: server exit status $?" >>"$out/status.txt"
	}
	csrv=(dtestcm -s -P "$provider" $wait)
	ccli=(dtestcm -h 192.0.2.1 -P "$provider" $wait)
	for n in ${CM_N1:-100} ${CM_N2:-500}; do
		for lb in "$@"; do
			label=${lb%%=*} bin=${lb#*=}
			pair "$label.client.$n" env "${linebuf[@]}" "${csrv[@]}" -c "$n" -b 100 -- \
				vg "$label.client.$n" go "$bin" -h 192.0.2.1 -c "$n" -b 100 $wait
			pair "$label.server.$n" vg "$label.server.$n" go "$bin" -s -c "$n" -b 100 $wait -- \
				env "${linebuf[@]}" "${ccli[@]}" -c "$n" -b 100
		done
		if [ "${CM_C:-1}" = 1 ]; then
			pair "c.client.$n" env "${linebuf[@]}" "${csrv[@]}" -c "$n" -b 100 -- \
				vg "c.client.$n" c "${ccli[@]}" -c "$n" -b 100
			pair "c.server.$n" vg "c.server.$n" c "${csrv[@]}" -c "$n" -b 100 -- \
				env "${linebuf[@]}" "${ccli[@]}" -c "$n" -b 100
		fi
	done
	exit 0
fi

out=${CM_OUT:-/tmp/cm-instr}
case $out in /tmp/*) ;; *) echo "cm-instr.sh: CM_OUT must be under /tmp (the VM writes there)" >&2 && exit 2 ;; esac
n1=${CM_N1:-100} n2=${CM_N2:-500}
rm -rf "$out"
mkdir -p "$out"
builds=("$@")
if [ ${#builds[@]} = 0 ]; then
	(cd "$root" && go build -o "$out/dtestcmgo" ./internal/cmd/dtestcmgo)
	builds=("go=$out/dtestcmgo")
fi
UDAPL_VM_ICOUNT=1 "$root/scripts/vmtest.sh" bash "$root/scripts/cm-instr.sh" --guest "$out" "${builds[@]}"
labels=()
for lb in "${builds[@]}"; do labels+=("${lb%%=*}:udapl"); done
[ "${CM_C:-1}" = 1 ] && labels+=(c:c)
cd "$root"
go build -o "$out/instrcount" ./internal/instrcount
for lt in "${labels[@]}"; do
	for role in client server; do
		name=${lt%%:*}.$role
		"$out/instrcount" pair -tool "${lt#*:}" -top 60 "$n1" "$out/$name.$n1.out" "$n2" "$out/$name.$n2.out" >"$out/$name.txt" &&
			echo "$name: $(head -1 "$out/$name.txt")"
	done
done | tee "$out/summary.txt"
grep -v 'exit status 0$' "$out/status.txt" || true

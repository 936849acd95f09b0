#!/usr/bin/env bash
# pair-loss-perftest.sh: what packet loss costs perftest's plain RC QPs, for
# comparison with crosshost/TestLoss (which prints udat's rates):
#
#   scripts/vmpair.sh scripts/pair-loss-perftest.sh
#
# ib_write_bw from A to B, 4 KiB RDMA writes, 16 in flight, 3 s per run,
# ACK timeout 14 (udat's default; perftest's too), twice per setting of
# tc netem on A's link: none, loss 1 %, loss 10 %, delay 5 ms with loss 1 %.
# The handshake is perftest's own TCP one (no rdma_cm), which keeps the QPs'
# settings perftest's. Prints one line per run (perftest's MB = 2^20 bytes).
set -u
settings=("" "loss 1%" "loss 10%" "delay 5ms loss 1%")
reps=2
bw() { timeout 60 ib_write_bw -d rxe0 -F -s 4096 -t 16 -D 3 -u 14 -p "$@"; }
if [ "${UDAPL_PAIR_HOST:-}" = B ]; then
	for i in "${!settings[@]}"; do
		for rep in $(seq $reps); do
			bw $((19000 + i * 10 + rep)) >/dev/null 2>&1
		done
	done
	exit 0
fi
[ "${UDAPL_PAIR_HOST:-}" = A ] || { echo "pair-loss-perftest.sh: run it with scripts/vmpair.sh" >&2; exit 2; }
out=$(mktemp)
status=0
for i in "${!settings[@]}"; do
	set -- ${settings[$i]}
	for rep in $(seq $reps); do
		[ $# -gt 0 ] && tc qdisc add dev eth0 root netem "$@"
		ok=0
		for _ in $(seq 20); do # until B's server listens
			if bw $((19000 + i * 10 + rep)) "$UDAPL_PAIR_PEER" >"$out" 2>&1; then
				ok=1
				break
			fi
			sleep 0.5
		done
		[ $# -gt 0 ] && tc qdisc del dev eth0 root
		if [ $ok = 1 ]; then
			echo "perftest ${settings[$i]:-no loss}, run $rep: $(awk '$1 == 4096 {print $4 " MB/s"}' "$out")"
		else
			echo "perftest ${settings[$i]:-no loss}, run $rep: FAILED"
			cat "$out"
			status=1
		fi
	done
done
rm -f "$out"
exit $status

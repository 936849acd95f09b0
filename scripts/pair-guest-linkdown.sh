#!/usr/bin/env bash
# pair-guest-linkdown.sh: what a guest-side link bounce does to Soft-RoCE,
# shown with perftest alone (no udapl). Run it in the pair:
# scripts/vmpair.sh scripts/pair-guest-linkdown.sh
#
# While an RC connection (ib_send_bw -R) streams from A to B, A takes its
# own eth0 down for 3 s and up again. Then A connects to a server B started
# before the bounce, and B to a server A started before it. With Debian's
# 6.1 kernel B's connection times out (A's sometimes too) while TCP between
# the guests works: A's UDP layer takes the packets in, but its rxe drops
# each one in its header checks, after the GID and QP lookups (seen with
# ftrace: rxe_rcv, rdma_find_gid_by_port, rxe_pool_get_index, then
# nothing), so its rcvd_pkts counter stays put. Then A re-creates rxe0
# (rdma link delete/add) and serves again, and B's next connection works.
# (udapl's side of the fault: a stream on A fails its first DTO with
# DAT_DTO_ERR_LOCAL_EP 0.35-0.48 s after the link goes down, the rest flush,
# and DAT_CONNECTION_EVENT_BROKEN follows.)
set -u
dev=rxe0
out=/tmp/pair-guest-linkdown.B
if [ "$UDAPL_PAIR_HOST" = B ]; then
	timeout 60 ib_send_bw -d $dev -F -s 64 -n 50000000 -R -p 21000 >/dev/null 2>&1 &
	timeout 60 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21001 >/dev/null 2>&1 &
	sleep 20
	timeout 25 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21002 192.0.2.1 >/dev/null 2>&1
	echo "B: a new connection to A after the bounce: exit status $? (124: timed out)" >$out
	sleep 20
	timeout 25 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21003 192.0.2.1 >/dev/null 2>&1
	echo "B: a new connection to A after A re-created rxe0: exit status $? (124: timed out)" >>$out
	wait
	exit 0
fi
# received: rxe's count of packets it took in, and the UDP layer's.
received() {
	echo "rxe rcvd_pkts $(cat /sys/class/infiniband/$dev/ports/1/hw_counters/rcvd_pkts 2>/dev/null)," \
		"UDP InDatagrams $(awk '/^Udp: [0-9]/ {print $2}' /proc/net/snmp)"
}
timeout 60 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21002 >/dev/null 2>&1 &
sleep 3
timeout 12 ib_send_bw -d $dev -F -s 64 -n 50000000 -R -p 21000 192.0.2.2 >/dev/null 2>&1 &
sleep 2
echo "A: eth0 down for 3 s during the stream"
ip link set eth0 down
sleep 3
ip link set eth0 up
sleep 4
echo "A: before its new connection: $(received)"
timeout 25 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21001 192.0.2.2 >/dev/null 2>&1
echo "A: a new connection to B after the bounce: exit status $? (124: timed out)"
echo "A: after it: $(received)"
tcp=$( (exec 3<>/dev/tcp/192.0.2.2/9) 2>&1 | head -1 | sed 's/.*: //')
echo "A: TCP to B's closed port 9: ${tcp:-connected} (refused: the network works)"
rdma link delete $dev && rdma link add $dev type rxe netdev eth0
echo "A: rxe0 re-created: exit status $?"
timeout 60 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21003 >/dev/null 2>&1 &
sleep 62
cat $out 2>/dev/null

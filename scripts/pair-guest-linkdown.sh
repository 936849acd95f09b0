#!/usr/bin/env bash
# pair-guest-linkdown.sh: what a guest-side link bounce does to Soft-RoCE's
# connection manager, shown with perftest alone (no udapl). Run it in the
# pair: scripts/vmpair.sh scripts/pair-guest-linkdown.sh
#
# While an RC connection (ib_send_bw -R) streams from A to B, A takes its
# own eth0 down for 3 s and up again. Then A connects to a server B started
# before the bounce, and B to a server A started before it. With Debian's
# 6.1 kernel both new connections time out, while TCP between the guests
# works. (udapl's side of the fault: a stream on A fails its first DTO with
# DAT_DTO_ERR_LOCAL_EP 0.35-0.48 s after the link goes down, the rest flush,
# and DAT_CONNECTION_EVENT_BROKEN follows.)
set -u
dev=rxe0
if [ "$UDAPL_PAIR_HOST" = B ]; then
	timeout 60 ib_send_bw -d $dev -F -s 64 -n 50000000 -R -p 21000 >/dev/null 2>&1 &
	timeout 60 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21001 >/dev/null 2>&1 &
	sleep 20
	timeout 25 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21002 192.0.2.1 >/dev/null 2>&1
	echo "B: a new connection to A after the bounce: exit status $? (124: timed out)" >/tmp/pair-guest-linkdown.B
	wait
	exit 0
fi
timeout 60 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21002 >/dev/null 2>&1 &
sleep 3
timeout 12 ib_send_bw -d $dev -F -s 64 -n 50000000 -R -p 21000 192.0.2.2 >/dev/null 2>&1 &
sleep 2
echo "A: eth0 down for 3 s during the stream"
ip link set eth0 down
sleep 3
ip link set eth0 up
sleep 4
timeout 25 ib_send_bw -d $dev -F -s 64 -n 1000 -R -p 21001 192.0.2.2 >/dev/null 2>&1
echo "A: a new connection to B after the bounce: exit status $? (124: timed out)"
tcp=$( (exec 3<>/dev/tcp/192.0.2.2/9) 2>&1 | head -1 | sed 's/.*: //')
echo "A: TCP to B's closed port 9: ${tcp:-connected} (refused: the network works)"
sleep 30
cat /tmp/pair-guest-linkdown.B 2>/dev/null

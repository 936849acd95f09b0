package crosshost

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// A guest-side link fault: a host takes its own link down (ip link set
// eth0 down) and up again while it streams. Soft-RoCE sees it at once: a
// DTO on a port that is down fails locally, the rest are flushed and the
// connection breaks, however short the bounce. Debian's 6.1 kernel then
// drops every RoCE packet that reaches the bounced host until its rxe device
// is re-created (scripts/pair-guest-linkdown.sh), so the test reboots that
// host before it connects again. The bounce runs in B, whose kernel the
// test can replace; the stream goes from B to a sink here.

func init() { roles["bounce-source"] = bounceSource }

// bounceSource streams to a sink on the test's host and, a second in,
// takes this host's link down for Args.BounceMS, then up. Its first failed
// DTO must come within the EP's DeadPeerTimeout (plus detectSlack) of the
// link going down, then EventConnectionBroken; every DTO and receive it
// posted must complete.
func bounceSource(ctx context.Context, req request, ready func(), rl *roleLog) error {
	src, err := dialSource(ctx, req, ready)
	if err != nil {
		return err
	}
	defer src.close()
	defer func() {
		for k, v := range src.counts {
			rl.count(k, v)
		}
	}()
	bound := src.s.budget() + detectSlack
	bounce := time.Duration(req.Args.BounceMS) * time.Millisecond
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- src.run(context.Background(), stop, bound+10*time.Second) }()
	time.Sleep(time.Second)
	down := time.Now()
	linkErr := ipLink("down")
	time.Sleep(bounce)
	linkErr = cmp.Or(linkErr, ipLink("up"))
	// A stream that has not failed by now will not: it ends, and fails the role.
	time.AfterFunc(bound, func() { close(stop) })
	if err := cmp.Or(linkErr, <-done); err != nil {
		out, _ := exec.Command("sh", "-c", "rdma res show qp -dd; rdma link; cd /sys/class/infiniband/*/ports/1/hw_counters && grep . *").CombinedOutput()
		rl.logf("this host's rxe after the failure: %s", out)
		return err
	}
	if src.firstErr.IsZero() {
		return fmt.Errorf("no DTO failed after the link was down for %v", bounce)
	}
	detect := src.firstErr.Sub(down)
	rl.logf("first failed DTO %v %v after the link went down (bound %v); connection event %v %v after it",
		src.firstStatus, detect.Round(time.Millisecond), bound, src.connEvent, src.connEventAt.Sub(down).Round(time.Millisecond))
	if detect > bound {
		return fmt.Errorf("the first failed DTO came %v after the link went down, beyond %v", detect, bound)
	}
	if src.connEvent != udat.EventConnectionBroken {
		return fmt.Errorf("connection event %v, want %v", src.connEvent, udat.EventConnectionBroken)
	}
	if err := src.awaitEnd(context.Background(), 20*time.Second); err != nil {
		return err
	}
	if src.inflight != 0 || len(src.posted) != 0 {
		return fmt.Errorf("%d requests and %d receives never completed", src.inflight, len(src.posted))
	}
	return nil
}

// ipLink sets this host's eth0 up or down.
func ipLink(state string) error {
	if out, err := exec.Command("ip", "link", "set", "eth0", state).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set eth0 %s: %v: %s", state, err, out)
	}
	return nil
}

// TestGuestLinkBounce: B bounces its own link (3 s) while it RDMA-writes to
// a sink here; B's stream breaks cleanly and every DTO it posted completes
// once (the sink here, if it hears of the end, accounts for its own); after
// B is rebooted (see above) a new connection works.
//
// Now and then B's rxe fails nothing after the bounce: it resends once and
// leaves the stream's writes pending for good, its QP in RTS (4 of 9 runs
// before the progress watchdog). The watchdog (udat/watchdog.go) then ends
// the stream with DTOErrTransport, within the same bound.
func TestGuestLinkBounce(t *testing.T) {
	requirePair(t)
	s := stream{Kind: udat.DTORDMAWrite}
	port := nextPort()
	sink := startLocalRole(request{Role: "stream-sink", Port: port, Args: roleArgs{Stream: s}})
	t.Cleanup(sink.cancel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, sink.ready(ctx), "the sink here did not get ready")
	rebooted := false
	t.Cleanup(func() {
		if !rebooted {
			rebootPeer(t)
		}
	})
	src := startRole(t, request{Role: "bounce-source", Port: port, Args: roleArgs{Stream: s, BounceMS: 3000}})
	res := src.finish(t, 2*time.Minute)
	logCounts(t, "source (B)", res.Counts)
	requireAccounted(t, "source (B)", res.Counts, 0)
	// The sink here is the passive side: it learns of the end only if B's
	// disconnect request gets through, which B's rxe may not let happen
	// after the bounce (README). Then it is stopped.
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	_, err := sink.result(wctx)
	wcancel()
	if err == nil {
		sres := sink.finish(t, time.Second)
		logCounts(t, "sink (A)", sres.Counts)
		requireAccounted(t, "sink (A)", sres.Counts, 0)
	} else {
		t.Logf("the sink here heard nothing of the end in 20 s, as a passive side may not; stopping it")
		sink.cancel()
	}
	t.Run("a new connection after B's reboot", func(t *testing.T) {
		rebootPeer(t)
		rebooted = true
		src, sink := streamPair(t, s)
		require.NoError(t, src.runFor(t, time.Second, nil))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, src.finish(ctx))
		res := sink.finish(t, time.Minute)
		require.Equal(t, 1, res.Counts["write regions verified"])
	})
}

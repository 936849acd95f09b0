package crosshost

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// TestGracefulDisconnectUnreachablePeer (found by the soak, issue 27): a
// graceful disconnect while the peer cannot be reached. udat creates its
// QPs itself (ibv_create_qp), so rdma_disconnect does not move them to the
// error state as it does a QP made by rdma_create_qp (OFA DAPL's cma
// provider): the EP's receives stay posted, and nothing completes, until the
// connection manager gives up its disconnect request. This measures how
// long that takes; it runs only with UDAPL_GRACEFUL_REPRO=1 (it takes
// minutes, and what it should require is for the maintainers to decide).
func TestGracefulDisconnectUnreachablePeer(t *testing.T) {
	if os.Getenv("UDAPL_GRACEFUL_REPRO") == "" {
		t.Skip("a reproducer of a soak finding: UDAPL_GRACEFUL_REPRO=1")
	}
	requirePair(t)
	s := stream{Kind: udat.DTOSend}
	src, _ := streamPair(t, s)
	require.Len(t, src.posted, sourceRecvs)
	hostFault(t, "link off")
	t.Cleanup(func() { hostFault(t, "link on") })
	start := time.Now()
	require.NoError(t, src.ep.Disconnect(udat.CloseGracefulFlag))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var firstFlush, event time.Duration
	for len(src.posted) > 0 || event == 0 {
		if event == 0 {
			if ev, err := src.conn.Dequeue(); err == nil {
				event = time.Since(start)
				t.Logf("%v %v after the graceful disconnect", ev.Number, event.Round(time.Millisecond))
			}
		}
		wctx, wcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		ev, _, err := src.rcv.WaitContext(wctx, 1)
		wcancel()
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			continue
		}
		require.NoError(t, src.account(ev.DTO))
		if firstFlush == 0 {
			firstFlush = time.Since(start)
			t.Logf("first receive completed (%v) %v after the graceful disconnect", ev.DTO.Status, firstFlush.Round(time.Millisecond))
		}
	}
	if firstFlush == 0 {
		firstFlush = time.Since(start) // none completed
	}
	t.Logf("receives outstanding after %v: %d; connection event after %v", time.Since(start).Round(time.Millisecond), len(src.posted), event.Round(time.Millisecond))
	budget := src.s.attr(0).DeadPeerTimeout()
	assert.Less(t, firstFlush, budget+detectSlack, "the receives of a gracefully disconnected EP whose peer is gone complete within the retransmission budget")
}

package udat

// Lifecycle tests: "a failure loses nothing". Every DTO posted on an EP that
// is then disconnected, reset or freed completes exactly once, as flushed
// if it had not completed, and the EP's queues end idle.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireFlushed waits for one flushed DTO completion with cookie on e.
func requireFlushed(t testing.TB, e *EVD, ep *EP, cookie uint64, op DTOOp) {
	t.Helper()
	d := waitDTO(t, e)
	require.Equal(t, DTOErrFlushed, d.Status, "cookie %d", d.Cookie)
	require.Equal(t, cookie, d.Cookie)
	require.Equal(t, ep, d.EP)
	require.Equal(t, op, d.Op)
}

// A suppressed send that has not completed (the peer has no receive, so it
// waits in RNR retries) when its EP is freed or reset is flushed, and the
// flush is reported: DAT_COMPLETION_SUPPRESS_FLAG suppresses only a
// successful completion.
func TestSuppressedSendFlushedOnFreeAndReset(t *testing.T) {
	for _, how := range []string{"free", "reset"} {
		t.Run(how, func(t *testing.T) {
			p := newPair(t, pairOpts{clientAttr: &EPAttr{RequestCompletionFlags: CompletionUnsignalled}})
			c := p.client
			require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionSuppress))
			require.NoError(t, c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(0, 8)}, 2,
				p.server.lmr.RMRTriplet(0, 8), CompletionUnsignalled))
			time.Sleep(20 * time.Millisecond)
			_, err := c.req.Dequeue()
			requireType(t, err, QueueEmpty, "the send waits for a receive")
			switch how {
			case "free":
				require.NoError(t, c.ep.Free())
			case "reset":
				require.NoError(t, c.ep.Disconnect(CloseAbruptFlag))
				ev := waitEvent(t, c.conn)
				require.Equal(t, EventConnectionDisconnected, ev.Number)
				require.NoError(t, c.ep.Reset())
			}
			requireFlushed(t, c.req, c.ep, 1, DTOSend)
			requireFlushed(t, c.req, c.ep, 2, DTORDMAWrite)
			requireEmpty(t, c.req)
			if how == "reset" {
				_, recvIdle, reqIdle, err := c.ep.GetStatus()
				require.NoError(t, err)
				require.True(t, recvIdle)
				require.True(t, reqIdle)
			}
		})
	}
}

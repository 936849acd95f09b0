//go:build linux && cgo

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
			needRNR(t, p.ia)
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

// Freeing an EP whose EVD queue is full of undequeued events still collects
// the flushes of its outstanding DTOs, the suppressed ones included, at
// once: they are reported after the queued events, none lost.
func TestFreeWithFullEVD(t *testing.T) {
	const qlen = 4
	p := newPair(t, pairOpts{evdQLen: qlen})
	needRNR(t, p.ia)
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, qlen+1, 100)
	for i := 0; i < qlen; i++ {
		require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, uint64(i), CompletionDefault))
		require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
	}
	// qlen completions queued, one taken; the next send's completion fills
	// the queue again once Resize has polled it.
	_, nmore, err := c.req.Wait(waitUS, qlen)
	require.NoError(t, err)
	require.Equal(t, qlen-1, nmore)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, qlen, CompletionDefault))
	require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
	require.Eventually(t, func() bool {
		require.NoError(t, c.req.Resize(qlen))
		_, _, reqIdle, err := c.ep.GetStatus()
		require.NoError(t, err)
		return reqIdle
	}, 10*time.Second, 10*time.Millisecond)
	// The queue holds qlen events. Now the DTOs that will be flushed: a
	// receive, and a suppressed send the server has no receive for.
	require.NoError(t, c.ep.PostRecv([]LMRTriplet{c.lmr.Triplet(4096, 64)}, 200, CompletionDefault))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 201, CompletionSuppress))
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	require.NoError(t, c.ep.Free())
	require.Less(t, time.Since(start), 400*time.Millisecond, "Free does not wait for its deadline")
	for i := 0; i < qlen; i++ {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status, "queued event %d", i)
	}
	flushed := map[uint64]bool{}
	for i := 0; i < 2; i++ {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOErrFlushed, d.Status)
		flushed[d.Cookie] = true
	}
	require.Equal(t, map[uint64]bool{200: true, 201: true}, flushed)
	requireEmpty(t, c.req)
}

//go:build linux && cgo

package cverbs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A work request the provider queued is posted, whatever its doorbell
// said, and completes exactly once. A fenced RDMA read shows it on
// soft-iWARP: libsiw writes it into the send queue it shares with the
// kernel, then rings the doorbell (a write(2) to the kernel), which fails
// with EINVAL (siw_activate_tx_from_sq: "cannot fence read"), the WQE left
// at the head of the queue; libsiw returns write's -1 with no bad WR. The
// queue then stalls on that WQE until the QP's flush completes it. (Behind
// a read in flight it is worse: the kernel meets the fenced read while it
// processes the queue and drops the connection, siw_qp_sq_process.) On
// Soft-RoCE the fenced read simply completes.
func TestQueuedWorkRequestCompletesOnce(t *testing.T) {
	r := newRig(t)
	p := r.newCMPair(t, 7473, 7474)
	a, b := p.a, p.b
	fill(b.buf.b[:64], 7)
	n, err := a.qp.PostSend([]SendWR{
		{ID: 2, Op: OpRDMARead, Flags: SendSignaled | SendFence, SGL: []SGE{a.buf.sge(32, 32)}, RemoteAddr: b.buf.addr(32), RKey: b.buf.mr.RKey},
	})
	require.NoError(t, err, "a queued work request is posted")
	require.Equal(t, 1, n)
	var wcs []WC
	if r.iwarp {
		// Stalled until the flush: the move to ERR from RTS flushes the
		// send queue (siw_qp_nextstate_from_rts). A disconnect would not
		// yet: the QP goes to CLOSING, and its queue is flushed only
		// when the connection's end point is released.
		requireQuiet(t, a.scq, 100*time.Millisecond)
		require.NoError(t, a.qp.ToError())
		wcs, err = pollN(a.scq, 1, waitTimeout)
		require.NoError(t, err)
		require.Equal(t, WCWRFlushErr, wcs[0].Status)
	} else {
		wcs = mustPollOK(t, a.scq, 1, WCRDMARead)
		p.disconnect(t)
	}
	require.Equal(t, uint64(2), wcs[0].WRID)
	requireQuiet(t, a.scq, 100*time.Millisecond)
}

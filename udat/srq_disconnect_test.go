//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// An SRQ-attached EP that disconnects itself gets
// DAT_CONNECTION_EVENT_DISCONNECTED, also when the device raises
// IBV_EVENT_QP_LAST_WQE_REACHED as the disconnect flushes its QP (Soft-RoCE
// on Linux 6.12 does, 6.1 does not, so the event is handed in here right
// after dat_ep_disconnect). OFA DAPL maps that event to the async
// DAT_ASYNC_ERROR_EP_BROKEN only; the connection's end comes from the
// connection manager. Found by the dtestsrq port under 6.12: the Go client's
// own disconnect came back as DAT_CONNECTION_EVENT_BROKEN.
func TestSRQLastWQEDuringOwnDisconnect(t *testing.T) {
	ia, pz, srq := newSRQ(t, SRQAttr{MaxRecvDTOs: 4, MaxRecvIOV: 1})
	p := newPairIn(t, ia, pz, pairOpts{srq: srq})
	require.NoError(t, p.server.ep.Disconnect(CloseAbruptFlag))
	ia.handleAsync(cverbs.AsyncEvent{Type: cverbs.EventQPLastWQEReached, QPNum: p.server.ep.qpn})
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.server.conn).Number, "the SRQ EP's own disconnect")
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.client.conn).Number, "the peer")
	ev := waitEvent(t, ia.AsyncEVD())
	require.Equal(t, EventAsyncErrorEPBroken, ev.Number, "what OFA DAPL posts for LAST_WQE_REACHED, and dtestsrq waits for")
	require.Same(t, p.server.ep, ev.Async.Handle)
	requireEmpty(t, p.server.conn)
	requireEmpty(t, ia.AsyncEVD())
}

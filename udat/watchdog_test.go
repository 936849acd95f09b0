//go:build linux && cgo

package udat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// silencePeer moves the server's queue pair to the error state behind the
// library's back: Soft-RoCE then drops whatever the client sends, without
// a word. The server has nothing posted, so it reports nothing either.
func silencePeer(t *testing.T, p *pair) {
	t.Helper()
	require.NoError(t, p.server.ep.qp.ToError())
}

// A queue the device leaves stalled without an error ends through the
// watchdog: with retry count 7 Soft-RoCE resends to a silent peer for
// ever, so only the watchdog can end these writes. The oldest fails with
// DTOErrTransport, the others are flushed, the connection breaks, and not
// before the budget.
func TestWatchdogEndsStalledQueue(t *testing.T) {
	const budget = 300 * time.Millisecond
	p := newPair(t, pairOpts{clientAttr: &EPAttr{RetryCount: 7, StallTimeout: budget}})
	needIBRetransmit(t, p.client.ep)
	c, s := p.client, p.server
	silencePeer(t, p)
	start := time.Now()
	const n = 3
	for i := range n {
		require.NoError(t, c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(i*64, 64)}, uint64(i+1), s.lmr.RMRTriplet(i*64, 64), CompletionDefault))
	}
	for i := range n {
		d := waitDTO(t, c.req)
		require.Equal(t, uint64(i+1), d.Cookie)
		want := DTOErrFlushed
		if i == 0 {
			want = DTOErrTransport
			took := time.Since(start)
			t.Logf("the stalled write failed %v after it was posted (budget %v)", took, budget)
			require.GreaterOrEqual(t, took, budget, "not before the budget")
		}
		require.Equal(t, want, d.Status, "DTO %d", i+1)
	}
	ev := waitEvent(t, c.conn)
	require.Equal(t, EventConnectionBroken, ev.Number)
	require.Equal(t, EPStateDisconnected, c.ep.getState())
	requireEmpty(t, c.req)
}

// A send waits, rightly and for as long as it takes, for the peer to post
// a receive (RNR retry count 7): the watchdog leaves it alone. (With a
// retry count below 7 Soft-RoCE itself fails such a send after about
// DeadPeerTimeout: README.)
func TestWatchdogSparesSendWaitingForReceive(t *testing.T) {
	const budget = 200 * time.Millisecond
	p := newPair(t, pairOpts{clientAttr: &EPAttr{RetryCount: 7, StallTimeout: budget}})
	needRNR(t, p.ia)
	c, s := p.client, p.server
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 64)}, 1, CompletionDefault))
	time.Sleep(5 * budget)
	if c.ep.getState() != EPStateConnected {
		ev, err := c.req.Dequeue()
		t.Fatalf("the EP broke while the send waited for a receive: %v %+v %v", ev.Number, ev.DTO, err)
	}
	requireEmpty(t, c.req)
	postRecvs(t, s, 0, 64, 1, 10)
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
	requireEmpty(t, c.conn)
}

// The budget follows the retry count and ACK timeout the connection really
// uses: the passive side takes the active side's retry count, unless its own
// is lower, and a retry count of 7 (never give up) turns the watch off.
func TestWatchdogBudget(t *testing.T) {
	for _, c := range []struct {
		name           string
		client, server EPAttr
		wantC, wantS   time.Duration
	}{
		{"defaults", EPAttr{}, EPAttr{}, minStallTimeout, minStallTimeout},
		{"longer ACK timeout", EPAttr{ACKTimeout: 16}, EPAttr{},
			2 * 7 * ACKTimeoutDuration(16), minStallTimeout},
		// The passive side's own count bounds its budget: a peer's 7
		// does not turn its watch off.
		{"retry count 7 on the active side", EPAttr{RetryCount: 7}, EPAttr{RetryCount: 2}, 0, minStallTimeout},
		{"retry count 7 on both sides", EPAttr{RetryCount: 7}, EPAttr{RetryCount: 7}, 0, 0},
		{"retry count 7 on the passive side", EPAttr{RetryCount: 2}, EPAttr{RetryCount: 7},
			minStallTimeout, minStallTimeout},
		{"explicit", EPAttr{RetryCount: 7, StallTimeout: 5 * time.Second}, EPAttr{StallTimeout: -1},
			5 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPair(t, pairOpts{clientAttr: &c.client, serverAttr: &c.server})
			needIBRetransmit(t, p.client.ep)
			require.Equal(t, c.wantC, time.Duration(p.client.ep.watch.budget.Load()), "client")
			require.Equal(t, c.wantS, time.Duration(p.server.ep.watch.budget.Load()), "server")
			disconnectPair(t, p)
		})
	}
}

// A device without an ACK timeout (iWARP: TCP retransmits) has no limit
// of its own for the watchdog to follow: an EP there is watched only when
// its Consumer sets StallTimeout, for that long.
func TestWatchdogWithoutACKTimeout(t *testing.T) {
	p := newPair(t, pairOpts{clientAttr: &EPAttr{StallTimeout: 2 * time.Second}, serverAttr: &EPAttr{}})
	if p.ia.ibTransport() {
		t.Skipf("not applicable: %s has an ACK timeout (TestWatchdogBudget)", p.ia.dev)
	}
	require.Equal(t, 2*time.Second, time.Duration(p.client.ep.watch.budget.Load()), "client: StallTimeout")
	require.Zero(t, p.server.ep.watch.budget.Load(), "server: no StallTimeout, no watch")
	disconnectPair(t, p)
}

// A QP that enters the error state by itself (Linux 6.12's Soft-RoCE when
// its port goes down, an iWARP QP whose stream closed) flushes what is
// posted, and nothing else tells of it: the first flushed completion the
// library did not cause breaks the connection.
//
// On soft-iWARP a QP that enters the error state closes its stream
// (siw_qp_modify drops the connection), and the connection manager reports
// the end of the connection at once (siw_qp_cm_drop's IW_CM_EVENT_CLOSE,
// RDMA_CM_EVENT_DISCONNECTED, with no status that tells it from a
// peer's graceful disconnect): the EP is DISCONNECTED, as documented for
// a flush the connection manager follows within deviceFlushGrace.
func TestDeviceFlushBreaksConnection(t *testing.T) {
	p := newPair(t, pairOpts{})
	c := p.client
	ends := EventConnectionBroken
	if onSIW(p.ia) {
		ends = EventConnectionDisconnected
	}
	postRecvs(t, c, 0, 64, 2, 1)
	require.NoError(t, c.ep.qp.ToError(), "the device, not the library, flushes")
	for i := range 2 {
		d := waitDTO(t, c.req)
		require.Equal(t, uint64(i+1), d.Cookie)
		require.Equal(t, DTOErrFlushed, d.Status)
	}
	require.Equal(t, ends, waitEvent(t, c.conn).Number)
	require.Equal(t, EPStateDisconnected, c.ep.getState())
	requireEmpty(t, c.conn)

	// Reset and reconnect: the EP watches for such a flush again.
	require.NoError(t, c.ep.Reset())
	p.server = newSide(t, p.ia, p.pz, pairOpts{}, nil, nil)
	p.connect(t)
	postRecvs(t, c, 0, 64, 1, 3)
	require.NoError(t, c.ep.qp.ToError())
	require.Equal(t, DTOErrFlushed, waitDTO(t, c.req).Status)
	require.Equal(t, ends, waitEvent(t, c.conn).Number)
}

// When the connection manager reports the end of the connection soon
// after such a flush, as in an iWARP peer's graceful disconnect, the EP
// is DISCONNECTED, not broken.
func TestDeviceFlushInDisconnectIsNotBroken(t *testing.T) {
	p := newPair(t, pairOpts{})
	c := p.client
	postRecvs(t, c, 0, 64, 2, 1)
	require.NoError(t, p.server.ep.Disconnect(CloseGracefulFlag))
	require.NoError(t, c.ep.qp.ToError())
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, c.conn).Number)
	for range 2 {
		require.Equal(t, DTOErrFlushed, waitDTO(t, c.req).Status)
	}
	time.Sleep(deviceFlushGrace + 100*time.Millisecond)
	requireEmpty(t, c.conn)
}

// DTOs posted to a QP that has entered the error state by itself, before
// the library knows, may never be completed by the device (soft-iWARP
// completes none, Soft-RoCE no receive): when the EP's queues are flushed,
// each still completes exactly once, as flushed.
func TestFlushSettlesWhatTheDeviceNeverCompletes(t *testing.T) {
	p := newPair(t, pairOpts{})
	c := p.client
	require.NoError(t, c.ep.qp.ToError(), "the device, not the library, ends the QP")
	postRecvs(t, c, 0, 64, 2, 1)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(128, 64)}, 3, CompletionDefault))
	require.NoError(t, c.ep.Disconnect(CloseAbruptFlag))
	seen := map[uint64]bool{}
	for range 3 {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOErrFlushed, d.Status, "cookie %d", d.Cookie)
		require.False(t, seen[d.Cookie], "cookie %d completes once", d.Cookie)
		seen[d.Cookie] = true
	}
	time.Sleep(settleGrace)
	requireEmpty(t, c.req)
}

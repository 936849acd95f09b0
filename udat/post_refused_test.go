//go:build linux && cgo && udapl_fakedevice

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A usual DTO the provider refuses, on a fake device whose queues are
// smaller than the EP's: the post fails with the error postRequests gives
// a refused post, gives its slot back and is not posted again; the DTOs
// before it complete once each, and the EP posts again once the device has
// room.
func TestPostRefusedByProvider(t *testing.T) {
	for _, op := range []DTOOp{DTORDMAWrite, DTORDMARead, DTOReceive} {
		t.Run(op.String(), func(t *testing.T) {
			g := newFakeRig(t, 64, 4) // the device's queues: 8 slots, one kept free
			r, evd := g.ep.sq, g.evd
			if op == DTOReceive {
				r, evd = g.ep.rq, g.recv
			}
			post := func(cookie uint64) error {
				switch op {
				case DTORDMAWrite:
					return g.ep.PostRDMAWrite(g.iov, cookie, g.remote, CompletionDefault)
				case DTORDMARead:
					return g.ep.PostRDMARead(g.iov, cookie, g.remote, CompletionDefault)
				}
				return g.ep.PostRecv(g.iov, cookie, CompletionDefault)
			}
			// complete has the device complete n DTOs of op: a receive
			// takes a send of the EP's own, its completion not checked.
			complete := func(n int) {
				if op == DTOReceive {
					for range n {
						require.NoError(t, g.ep.PostSend(g.iov, 0, CompletionSuppress))
					}
				}
				g.complete(t, n)
			}
			const room = 7
			for c := range uint64(room) {
				require.NoError(t, post(c))
			}
			err := post(room)
			require.ErrorIs(t, err, ErrInsufficientResources)
			require.Equal(t, room, r.outstanding(), "the refused DTO's slot is given back")

			complete(room)
			for c := range uint64(room) {
				require.NoError(t, evd.DequeueInto(&g.ev))
				g.checkEvent(t, &g.ev, op, c)
			}
			require.ErrorIs(t, evd.DequeueInto(&g.ev), ErrQueueEmpty, "the refused DTO completes nothing")

			require.NoError(t, post(room+1))
			complete(1)
			require.NoError(t, evd.DequeueInto(&g.ev))
			g.checkEvent(t, &g.ev, op, room+1)
		})
	}
}

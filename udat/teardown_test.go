//go:build linux && cgo

package udat

// Device tests of tearing an EP down while DTOs it posted may still be
// unreported: every EP type, with and without completion suppression, in
// every teardown order. Nothing may crash, every call succeeds, and each
// cookie is reported at most once (exactly once when it asked for a
// completion), a suppressed DTO only if it did not succeed.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// teardown ends the life of an EP whose peer is other, in one order.
type teardown struct {
	name string
	run  func(t *testing.T, ep, other *EP, conn *EVD)
}

var teardowns = []teardown{
	{"free", func(t *testing.T, ep, _ *EP, _ *EVD) {
		require.NoError(t, ep.Free())
	}},
	{"disconnect-free", func(t *testing.T, ep, _ *EP, conn *EVD) {
		require.NoError(t, ep.Disconnect(CloseAbruptFlag))
		waitDisconnected(t, conn)
		require.NoError(t, ep.Free())
	}},
	{"disconnect-reset-free", func(t *testing.T, ep, _ *EP, conn *EVD) {
		require.NoError(t, ep.Disconnect(CloseAbruptFlag))
		waitDisconnected(t, conn)
		require.NoError(t, ep.Reset())
		require.NoError(t, ep.Free())
	}},
	{"peer-first", func(t *testing.T, ep, other *EP, _ *EVD) {
		require.NoError(t, other.Free())
		require.NoError(t, ep.Free())
	}},
}

// waitDisconnected waits for the connection event that ends a connection
// (DISCONNECTED, or BROKEN should the peer have gone first).
func waitDisconnected(t *testing.T, conn *EVD) {
	t.Helper()
	ev := waitEvent(t, conn)
	require.Contains(t, []EventNumber{EventConnectionDisconnected, EventConnectionBroken}, ev.Number)
}

func TestEPTeardownAfterUnreportedDTOs(t *testing.T) {
	const n = 3
	for _, ud := range []bool{false, true} {
		for _, flags := range []CompletionFlags{CompletionSuppress, CompletionDefault} {
			for _, td := range teardowns {
				name := fmt.Sprintf("ud=%v/flags=%v/%s", ud, flags, td.name)
				t.Run(name, func(t *testing.T) {
					ia := openIA(t)
					pz := mustPZ(t, ia)
					var client, server side
					var send func(i int) error
					if ud {
						r := newUDRigIn(t, ia, pz)
						var c udPeer
						client, c, _ = r.connect(t, nil, nil)
						server = r.server
						send = func(i int) error {
							return client.ep.PostSendUD([]LMRTriplet{client.lmr.Triplet(i*64, 8)}, &c.ah, uint64(i), flags)
						}
						postRecvs(t, server, 0, GRHSize+64, n, 100)
					} else {
						p := newPairIn(t, ia, pz, pairOpts{})
						client, server = p.client, p.server
						postRecvs(t, server, 0, 64, n, 100)
						send = func(i int) error {
							return client.ep.PostSend([]LMRTriplet{client.lmr.Triplet(i*64, 8)}, uint64(i), flags)
						}
					}
					for i := 0; i < n; i++ {
						require.NoError(t, send(i))
					}
					for i := 0; i < n; i++ { // the peer has every message
						ev := waitEvent(t, server.recv)
						require.Equal(t, DTOSuccess, ev.DTO.Status, "receive %d", i)
					}

					td.run(t, client.ep, server.ep, client.conn)

					seen := map[uint64]DTOStatus{}
					for _, ev := range drainEVD(client.req) {
						if ev.Number != EventDTOCompletion && ev.Number != EventIBDTO {
							continue
						}
						c := ev.DTO.Cookie
						_, dup := seen[c]
						require.False(t, dup, "cookie %d reported twice", c)
						seen[c] = ev.DTO.Status
						if flags == CompletionSuppress {
							require.NotEqual(t, DTOSuccess, ev.DTO.Status, "a suppressed DTO reported as succeeded")
						}
					}
					if flags == CompletionDefault {
						require.Len(t, seen, n, "each DTO that asked for a completion is reported: %v", seen)
					}
				})
			}
		}
	}
}

// drainEVD takes the events queued on e, waiting a little for late ones.
func drainEVD(e *EVD) []Event {
	var evs []Event
	deadline := time.Now().Add(quietDur)
	for time.Now().Before(deadline) {
		ev, err := e.Dequeue()
		if errors.Is(err, ErrQueueEmpty) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	return evs
}

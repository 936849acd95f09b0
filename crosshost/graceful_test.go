package crosshost

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// A disconnect while the peer cannot be reached (found by the soak, issue
// 27). The connection manager resends its disconnect request for about
// 70 s; the EP's receives must not wait for it, nor its DISCONNECTED event:
// both come within the EP's dead-peer time after a graceful disconnect, and
// within 250 ms after an abrupt one, as in C (EP.Disconnect).
func TestDisconnectUnreachablePeer(t *testing.T) {
	requirePair(t)
	for _, c := range []struct {
		name  string
		flags udat.CloseFlags
	}{{"graceful", udat.CloseGracefulFlag}, {"abrupt", udat.CloseAbruptFlag}} {
		t.Run(c.name, func(t *testing.T) {
			s := stream{Kind: udat.DTOSend}
			src, _ := streamPair(t, s)
			require.Len(t, src.posted, sourceRecvs)
			hostFault(t, "link off")
			t.Cleanup(func() { hostFault(t, "link on") })
			start := time.Now()
			require.NoError(t, src.ep.Disconnect(c.flags))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var lastFlush, event time.Duration
			for len(src.posted) > 0 || event == 0 {
				if event == 0 {
					if ev, err := src.conn.Dequeue(); err == nil {
						event = time.Since(start)
						require.Equal(t, udat.EventConnectionDisconnected, ev.Number)
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
				lastFlush = time.Since(start)
			}
			t.Logf("receives outstanding after %v: %d; the last completed after %v, DISCONNECTED after %v",
				time.Since(start).Round(time.Millisecond), len(src.posted), lastFlush.Round(time.Millisecond), event.Round(time.Millisecond))
			require.Empty(t, src.posted, "every receive completes")
			budget := src.s.attr(0).DeadPeerTimeout()
			if c.flags == udat.CloseAbruptFlag {
				budget = 250 * time.Millisecond
			}
			assert.Less(t, lastFlush, budget+detectSlack, "the receives complete within the bound")
			assert.NotZero(t, event, "DISCONNECTED arrives")
			assert.Less(t, event, budget+detectSlack, "DISCONNECTED arrives within the bound")
		})
	}
}

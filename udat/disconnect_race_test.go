//go:build linux && cgo

package udat

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/cverbs"
)

// A send posted after the peer ended the connection, while the EP has not
// yet taken the end in (its DISCONNECTED held back), is posted, and
// completes once, flushed, when the EP takes the end in. On soft-iWARP the
// QP has left RTS by then, and the device never completes a request posted
// to it: udat's flush must.
func TestSendPostedBeforeTheEndIsTakenInCompletesFlushed(t *testing.T) {
	var clientID atomic.Pointer[cverbs.CMID]
	arrived, release := make(chan struct{}), make(chan struct{})
	var arrivedOnce, releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	hold := func(ev cverbs.CMEvent) {
		if ev.Type == cverbs.CMEventDisconnected && ev.ID != nil && ev.ID == clientID.Load() {
			arrivedOnce.Do(func() { close(arrived) })
			<-release
		}
	}
	beforeCMEvent.Store(&hold)
	t.Cleanup(func() { beforeCMEvent.Store(nil) })
	p := newPair(t, pairOpts{})
	t.Cleanup(unblock) // before the IA closes
	c := p.client
	c.ep.mu.Lock()
	clientID.Store(c.ep.cmid)
	c.ep.mu.Unlock()

	require.NoError(t, p.server.ep.Disconnect(CloseGracefulFlag))
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("no DISCONNECTED for the client")
	}
	require.Equal(t, EPStateConnected, c.ep.getState(), "the end is held back")
	if !p.ia.completesLatePosts() {
		// soft-iWARP reports the end (its CLOSE upcall) before it moves
		// the QP out of RTS (siw_cm_work_handler, after the upcalls).
		// Linux 6.1's reports every QP state as RESET: no wait there.
		require.Eventually(t, func() bool {
			st, err := c.ep.qp.State()
			return err == nil && st != cverbs.QPRTS
		}, 5*time.Second, time.Millisecond, "the device ends the QP")
	}
	qpState, err := c.ep.qp.State()
	require.NoError(t, err)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 64)}, 7, CompletionDefault))
	t.Logf("posted with the QP in %v", qpState)
	unblock()

	require.Equal(t, EventConnectionDisconnected, waitEvent(t, c.conn).Number)
	dto := waitDTO(t, c.req)
	require.Equal(t, uint64(7), dto.Cookie)
	require.Equal(t, DTOErrFlushed, dto.Status)
	requireEmpty(t, c.req)
}

// Receives posted while the peer disconnects, in the middle of a stream of
// sends that consume them, each complete exactly once: a post either
// reaches the QP before it enters the error state, and is flushed by the
// device, or completes as flushed at post. (A receive that reached a
// Soft-RoCE QP already in the error state never completed.)
func TestRecvsPostedDuringDisconnectComplete(t *testing.T) {
	for round := range 5 {
		p := newPair(t, pairOpts{})
		c, s := p.client, p.server
		var posted atomic.Int64
		stop := make(chan struct{})
		stopped := func() bool {
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}
		var g errgroup.Group
		g.Go(func() error { // the server keeps its receive queue full
			for cookie := uint64(0); !stopped(); {
				err := s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(int(cookie%64)*64, 64)}, cookie, CompletionDefault)
				switch {
				case err == nil:
					cookie++
					posted.Store(int64(cookie))
				case errors.Is(err, ErrInsufficientResources):
					time.Sleep(50 * time.Microsecond)
				default:
					return err
				}
			}
			return nil
		})
		g.Go(func() error { // the client sends until the connection ends
			for !stopped() {
				err := c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 64)}, 1, CompletionDefault)
				switch {
				case err == nil, errors.Is(err, ErrInsufficientResources):
					for {
						if _, err := c.req.Dequeue(); err != nil {
							break
						}
					}
				case errors.Is(err, ErrInvalidState):
					time.Sleep(time.Millisecond)
				default:
					return err
				}
			}
			return nil
		})
		var done atomic.Int64
		var postersDone atomic.Bool // posted is final
		var taker errgroup.Group
		taker.Go(func() error { return takeEachOnce(s.recv, "receive", &posted, &done, &postersDone) })
		time.Sleep(time.Duration(5+round*7) * time.Millisecond)
		require.NoError(t, c.ep.Disconnect(CloseGracefulFlag))
		require.Equal(t, EventConnectionDisconnected, waitEvent(t, s.conn).Number)
		time.Sleep(20 * time.Millisecond) // posts go on after the event: flushed at once
		close(stop)
		require.NoError(t, g.Wait())
		postersDone.Store(true)
		require.NoError(t, taker.Wait(), "round %d: %d of %d receives completed", round, done.Load(), posted.Load())
		require.Equal(t, posted.Load(), done.Load())
		requireEmpty(t, s.recv)
		t.Logf("round %d: %d receives posted, each completed once", round, posted.Load())
	}
}

// RDMA writes and reads posted in a stream while the connection ends, by
// the EP's own disconnect, graceful or abrupt, or its peer's, each
// complete exactly once, and the end is DISCONNECTED at both sides: the
// DTOs posted before the end by then, flushed if the device had not done
// them, and those posted after it at once, flushed. While the EP is
// DISCONNECT_PENDING a post is refused with DAT_INVALID_STATE. (No sends:
// on iWARP a send that outruns the peer's receives breaks the
// connection.) On soft-iWARP the end interrupts a write or a read response
// in flight, which it reports with a fatal or request error of the QP:
// part of the end, not a failure of the connection.
func TestRequestsPostedDuringEndCompleteOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		peer  bool
		flags CloseFlags
	}{
		{"own graceful", false, CloseGracefulFlag},
		{"own abrupt", false, CloseAbruptFlag},
		{"peer graceful", true, CloseGracefulFlag},
	} {
		t.Run(c.name, func(t *testing.T) {
			for round := range 5 {
				p := newPairForTraffic(t, 64, 128)
				ender := p.client.ep
				if c.peer {
					ender = p.server.ep
				}
				posted, refused := streamUntilEnd(t, p, func() error { return ender.Disconnect(c.flags) },
					time.Duration(5+round*7)*time.Millisecond)
				t.Logf("round %d: %d DTOs posted, each completed once (%d refused while DISCONNECT_PENDING)", round, posted, refused)
			}
		})
	}
}

// streamUntilEnd has p's client post RDMA writes and reads, in turn
// (cookies 1, 2, ...), until 20 ms after its connection ends, end being
// called after delay, and checks that each completes once, with success
// or flushed, and that the end is DISCONNECTED at both sides. It returns
// how many DTOs were posted and how many posts were refused while
// DISCONNECT_PENDING.
func streamUntilEnd(t *testing.T, p *pair, end func() error, delay time.Duration) (posted, refused int64) {
	c := p.client
	remote := p.server.lmr.RMRTriplet(4096, 64)
	var last, nrefused, done atomic.Int64
	stop := make(chan struct{})
	var poster errgroup.Group
	poster.Go(func() error {
		write, read := []LMRTriplet{c.lmr.Triplet(0, 64)}, []LMRTriplet{c.lmr.Triplet(64, 64)}
		for cookie := uint64(1); ; {
			select {
			case <-stop:
				return nil
			default:
			}
			var err error
			if cookie%2 == 0 {
				err = c.ep.PostRDMARead(read, cookie, remote, CompletionDefault)
			} else {
				err = c.ep.PostRDMAWrite(write, cookie, remote, CompletionDefault)
			}
			switch {
			case err == nil:
				last.Store(int64(cookie))
				cookie++
			case errors.Is(err, ErrInsufficientResources):
				time.Sleep(50 * time.Microsecond)
			case CodeOf(err) == ClassError|InvalidState|InvalidStateEPDiscPending:
				nrefused.Add(1)
				time.Sleep(50 * time.Microsecond)
			default:
				return err
			}
		}
	})
	var posterDone atomic.Bool // last is final
	var taker errgroup.Group
	taker.Go(func() error { return takeEachOnce(c.req, "DTO", &last, &done, &posterDone) })
	time.Sleep(delay)
	require.NoError(t, end())
	ev := waitEvent(t, c.conn)
	time.Sleep(20 * time.Millisecond) // posts go on after the end: flushed at once
	close(stop)
	require.NoError(t, poster.Wait())
	posterDone.Store(true)
	require.NoError(t, taker.Wait(), "%d of %d DTOs completed", done.Load(), last.Load())
	require.Equal(t, last.Load(), done.Load())
	requireEmpty(t, c.req)
	require.Equal(t, EventConnectionDisconnected, ev.Number, "the end")
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.server.conn).Number, "the end at the peer, which served the reads")
	return last.Load(), nrefused.Load()
}

// takeEachOnce takes DTO completions from e until final is set and done
// has caught up with posted, for at most 20 s, counting them in done: each
// must be a success or a flush, and no cookie may come twice. what names
// the DTOs in its errors.
func takeEachOnce(e *EVD, what string, posted, done *atomic.Int64, final *atomic.Bool) error {
	seen := map[uint64]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !final.Load() || done.Load() < posted.Load() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%ss still outstanding after 20 s", what)
		}
		ev, _, err := e.Wait(100_000, 1) // 100 ms, then look at the counts again
		if errors.Is(err, ErrTimeoutExpired) {
			continue
		}
		if err != nil {
			return err
		}
		d := ev.DTO
		if d.Status != DTOSuccess && d.Status != DTOErrFlushed {
			return fmt.Errorf("%s %d: status %v", what, d.Cookie, d.Status)
		}
		if seen[d.Cookie] {
			return fmt.Errorf("%s %d completed twice", what, d.Cookie)
		}
		seen[d.Cookie] = true
		done.Add(1)
	}
	return nil
}

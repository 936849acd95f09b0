package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// -timeout bounds each wait, not a whole run. A one-sided run (RDMA write
// or read bandwidth, RDMA read latency) leaves the server nothing to wait
// for but the client's next control message, which would come only when the
// run is over: a run longer than the server's -timeout would fail. So while
// such a run goes on the client sends the server a msgProgress every quarter
// of the server's -timeout (its hello says what that is), and the server
// takes each as a sign of life. A client that stops, or a link that goes
// down, still leaves the server waiting no longer than its -timeout.

// heartbeat raises a flag every interval. A busy loop reads the flag, not
// the clock: in the test VM a clock read is a system call.
type heartbeat struct {
	due  atomic.Bool
	done chan struct{}
	wg   sync.WaitGroup
}

// startHeartbeat raises the flag every interval until stop.
func startHeartbeat(every time.Duration) *heartbeat {
	h := &heartbeat{done: make(chan struct{})}
	t := time.NewTicker(every)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer t.Stop()
		for {
			select {
			case <-t.C:
				h.due.Store(true)
			case <-h.done:
				return
			}
		}
	}()
	return h
}

// take reports whether the flag was up, and lowers it. A nil heartbeat is
// never due.
func (h *heartbeat) take() bool {
	return h != nil && h.due.Load() && h.due.CompareAndSwap(true, false)
}

// stop ends the heartbeat; it is safe on nil.
func (h *heartbeat) stop() {
	if h != nil {
		close(h.done)
		h.wg.Wait()
	}
}

// beatEvery is how often to send msgProgress to a peer whose -timeout is
// peer: four times per timeout, at most every millisecond. It is 0 (none)
// when the peer did not say (an older udattest, which takes no
// msgProgress).
func beatEvery(peer time.Duration) time.Duration {
	if peer <= 0 {
		return 0
	}
	return max(peer/4, time.Millisecond)
}

// peerIdle reports whether the server only waits for the end of the
// performance run cfg describes: the one-sided bandwidth tests and the RDMA
// read latency test. (It receives every message of a send test and
// answers every one of a ping-pong.)
func peerIdle(cfg *config) bool {
	return cfg.op != opSend && (!cfg.lat || cfg.op == opRead)
}

// startBeats starts the heartbeat toward the peer, if the peer takes
// msgProgress.
func (c *conn) startBeats() {
	if every := beatEvery(c.peerTimeout); every > 0 {
		c.hb = startHeartbeat(every)
	}
}

// stopBeats stops it; a msgProgress in flight is reaped by the next
// sendCtrl.
func (c *conn) stopBeats() {
	c.hb.stop()
	c.hb = nil
}

// beat posts a msgProgress saying done operations are complete, when one
// is due and none is in flight. Its completion is taken by reqDTO or
// reapBeat.
func (c *conn) beat(done int) error {
	if c.beatOut || !c.hb.take() {
		return nil
	}
	return c.sendBeat(done)
}

// beatDue reports whether beat would post a msgProgress now (and takes the
// beat): the check of beat, for a loop to make inline.
func (c *conn) beatDue() bool { return !c.beatOut && c.hb.take() }

// sendBeat posts a msgProgress saying done operations are complete.
func (c *conn) sendBeat(done int) error {
	c.seq++
	m := ctrl{typ: msgProgress, seq: c.seq, a: uint64(done)}
	m.marshal(c.buf[:ctrlSize])
	c.one[0] = c.lmr.Triplet(0, ctrlSize)
	if err := c.ep.PostSend(c.one[:], cookieCtrl, udat.CompletionDefault); err != nil {
		return fmt.Errorf("send a progress message: %w", err)
	}
	c.beatOut = true
	return nil
}

// reqDTO waits for the next completion on the request EVD that is not the
// one of a msgProgress.
func (c *conn) reqDTO(what string) (udat.DTOCompletionData, error) {
	for {
		d, err := c.nextDTO(c.reqEVD, what)
		if err != nil || !c.beatOut || d.Cookie != cookieCtrl {
			return d, err
		}
		c.beatOut = false
	}
}

// reqCookie is reqDTO for the throughput loop: the cookie of the next
// completion. A poll or wait that takes the usual event, a successful DTO
// that is not a msgProgress's, returns it on the spot; anything else goes
// the way of reqDTO.
func (c *conn) reqCookie(what string) (uint64, error) {
	ev := &c.ev
	var err error
	if c.block {
		err = c.wait(c.reqEVD, ev)
	} else {
		c.yield.poll()
		err = c.reqEVD.DequeueInto(ev)
	}
	if err == nil && ev.Number == udat.EventDTOCompletion && ev.DTO.Status == udat.DTOSuccess &&
		(ev.DTO.Cookie != cookieCtrl || !c.beatOut) {
		return ev.DTO.Cookie, nil
	}
	if err != udat.ErrQueueEmpty {
		d, err := c.checkDTO(ev, err, what)
		if err != nil || !c.beatOut || d.Cookie != cookieCtrl {
			return d.Cookie, err
		}
		c.beatOut = false
	}
	d, err := c.reqDTO(what)
	return d.Cookie, err
}

// reqCookies is reqCookie for the batch loop: it takes up to len(c.evs)
// completions with one poll (EVD.DequeueEvents) and returns the cookie of
// the last that is not a msgProgress's, or, when none is, waits for one as
// reqCookie does.
func (c *conn) reqCookies(what string) (uint64, error) {
	if c.block {
		return c.reqCookie(what)
	}
	c.yield.poll()
	n, err := c.reqEVD.DequeueEvents(c.evs)
	if err != nil && err != udat.ErrQueueEmpty {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	evs := c.evs[:n]
	if !c.beatOut {
		// No msgProgress in flight: every event is to be a successful DTO
		// of the run, and the last one's cookie is the answer. The loop
		// runs once per operation, so it checks only that.
		for i := range evs {
			if ev := &evs[i]; ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess {
				d, err := c.checkDTO(ev, nil, what)
				return d.Cookie, err
			}
		}
		if n > 0 {
			return evs[n-1].DTO.Cookie, nil
		}
		d, err := c.reqDTO(what)
		return d.Cookie, err
	}
	// Locals rather than c's fields: the loop runs once per operation.
	beatOut := c.beatOut
	var last uint64
	found := false
	for i := range evs {
		ev := &evs[i]
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess {
			c.beatOut = beatOut
			d, err := c.checkDTO(ev, nil, what)
			return d.Cookie, err
		}
		if beatOut && ev.DTO.Cookie == cookieCtrl {
			beatOut = false
			continue
		}
		last, found = ev.DTO.Cookie, true
	}
	c.beatOut = beatOut
	if found {
		return last, nil
	}
	d, err := c.reqDTO(what)
	return d.Cookie, err
}

// reapBeat waits for the completion of the msgProgress in flight, if there
// is one; no other request may be outstanding.
func (c *conn) reapBeat() error {
	if !c.beatOut {
		return nil
	}
	d, err := c.nextDTO(c.reqEVD, "send a progress message")
	if err != nil {
		return err
	}
	if d.Cookie != cookieCtrl {
		return fmt.Errorf("send a progress message: completion of cookie %#x instead", d.Cookie)
	}
	c.beatOut = false
	return nil
}

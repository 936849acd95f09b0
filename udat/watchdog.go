package udat

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The progress watchdog: a backstop for a device that stops working on a
// send queue without reporting an error. An RC queue pair that gets no
// acknowledgement resends and, after RetryCount resends in a row, fails
// its DTO with a transport error. Soft-RoCE on Linux 6.1 now and then stops
// after one resend instead (after a link outage, and for some fenced RDMA
// reads: README), and its DTOs would then never complete. So a goroutine of
// the IA looks at every connected EP's send queue each watchTick; when DTOs
// are outstanding and none has completed for longer than the EP's stall
// budget, it moves the EP to the error state as the device should have:
// the oldest DTO fails with DTOErrTransport, the rest are flushed, and
// EventConnectionBroken follows.
//
// The watchdog gives the device the first word: its budget is twice the
// time after which the device itself reports a dead peer. It does not watch
// what may legitimately wait for ever: an EP whose retry count is 7 (on
// Soft-RoCE: never give up) by its own EPAttr.RetryCount and by the
// connection's (on the passive side the peer's: a peer that asks for 7 does
// not switch the watch off, crosshost/TestHostileStopsAnswering), and a
// queue whose next completion waits on a send (or an RDMA write with
// immediate data), which the peer holds back, without limit, until it posts
// a receive (IB's RNR retry; on iWARP such a send breaks the connection
// instead, and is watched like any DTO). A long DTO takes long to
// complete, so each 4 KiB the next completion waits for adds one ACK
// timeout (on an emulated link at 10 % loss a 4 KiB write took about a
// third of that).
const (
	watchTick       = 100 * time.Millisecond
	minStallTimeout = time.Second // what a busy VM may delay a retransmit timer by
	stallChunk      = 4096        // bytes per ACK timeout added to the budget
)

// stallWatch is the watchdog's record of one EP's send queue.
type stallWatch struct {
	// Set when the EP connects, read by the watchdog: the budget (0: not
	// watched) and the EP's ACK timeout.
	budget, ackTimeout atomic.Int64
	// Used by the watchdog's goroutine only.
	busy    bool          // DTOs were outstanding at the last look
	at      ringMark      // where the queue was when the watch began
	stalled time.Duration // how long the head has not moved
	// slot is the EP's index in IA.watched plus one, 0 when it is not
	// there; under the IA's watchMu.
	slot int
}

// armWatch sets the EP's stall budget from its queue pair's retry count and
// ACK timeout (on the passive side, the count is the peer's), or turns the
// watch off: see watchdog.go. Called as the EP becomes connected, with
// ep.mu held.
func (ep *EP) armWatch() {
	w := &ep.watch
	w.budget.Store(0)
	ep.setWatched(false)
	if ep.isUD() || ep.attr.StallTimeout < 0 {
		return
	}
	// No ACK timeout: the device either never gives up (timeout 0) or
	// does not retransmit by IB's rules (iWARP: TCP does, and gives up
	// after minutes); the watch is then the Consumer's StallTimeout only.
	rts, err := ep.rts, error(nil)
	if !ep.rtsSet {
		rts, err = ep.qp.QueryRTS()
	}
	ep.rtsSet = false
	var ack time.Duration
	if err == nil && rts.Timeout != 0 {
		ack = ACKTimeoutDuration(rts.Timeout)
	}
	budget := ep.attr.StallTimeout
	if budget == 0 {
		if ack == 0 {
			return
		}
		// On the passive side the count is the peer's: a peer that asks
		// for 7 must not make our DTOs wait for ever unless our
		// Consumer asked for that too, so the lower count sets the budget.
		retry := min(rts.RetryCnt, ep.attr.RetryCount)
		if retry >= maxRetryCount {
			return
		}
		budget = max(2*time.Duration(retry+1)*ack, minStallTimeout)
	}
	w.ackTimeout.Store(int64(ack))
	w.budget.Store(int64(budget))
	ep.setWatched(true)
}

// setWatched adds the EP to the IA's watched EPs or takes it out, so
// that a tick of the watchdog costs what the EPs it watches cost, not
// what all the IA's do.
func (ep *EP) setWatched(on bool) {
	ia := ep.ia
	w := &ep.watch
	ia.watchMu.Lock()
	switch {
	case on && w.slot == 0:
		ia.watched = append(ia.watched, ep)
		w.slot = len(ia.watched)
	case !on && w.slot != 0:
		// The last EP takes its place.
		last := len(ia.watched) - 1
		moved := ia.watched[last]
		ia.watched[w.slot-1] = moved
		moved.watch.slot = w.slot
		ia.watched[last] = nil
		ia.watched = ia.watched[:last]
		w.slot = 0
	}
	ia.watchMu.Unlock()
}

// watchProgress runs the watchdog until ctx ends.
func (ia *IA) watchProgress(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	t := time.NewTicker(watchTick)
	defer t.Stop()
	last := time.Now()
	var eps []*EP
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			// A tick late by more than one period (the process or the
			// whole machine was stopped) counts as two: a queue the
			// device could not serve meanwhile is not stalled.
			dt := min(now.Sub(last), 2*watchTick)
			last = now
			eps = ia.watchedEPs(eps[:0])
			for i, ep := range eps {
				ep.checkProgress(dt)
				eps[i] = nil
			}
		}
	}
}

// watchedEPs appends the EPs with a stall budget to eps.
func (ia *IA) watchedEPs(eps []*EP) []*EP {
	ia.watchMu.Lock()
	defer ia.watchMu.Unlock()
	for _, ep := range ia.watched {
		if ep.watch.budget.Load() != 0 && !ep.freed.Load() {
			eps = append(eps, ep)
		}
	}
	return eps
}

// checkProgress looks at the EP's send queue dt after the last look, and
// breaks the connection when the queue has stalled for longer than its
// budget.
func (ep *EP) checkProgress(dt time.Duration) {
	w := &ep.watch
	r := ep.sq
	r.mu.Lock()
	idle := r.idle()
	r.mu.Unlock()
	// Completions the device holds are progress nobody has polled yet.
	// With the EVD's queue full they cannot be taken: no verdict.
	if idle || ep.dead() || ep.getState() != EPStateConnected || !ep.reqEVD.catchUp() {
		w.busy, w.stalled = false, 0
		return
	}
	r.mu.Lock()
	watch, bytes := r.awaited(ep.ia.hasRNRRetry())
	at := r.mark()
	r.mu.Unlock()
	if !watch || !w.busy || at != w.at {
		w.busy, w.at, w.stalled = watch, at, 0
		return
	}
	w.stalled += dt
	budget := time.Duration(w.budget.Load()) + time.Duration(bytes/stallChunk)*time.Duration(w.ackTimeout.Load())
	if w.stalled <= budget {
		return
	}
	w.busy, w.stalled = false, 0
	r.mu.Lock()
	still := r.mark() == at
	r.stalled = r.stalled || still
	r.mu.Unlock()
	if still {
		ep.markBroken()
	}
}

// usesPeerReceive reports whether a DTO of op consumes a receive at the
// peer, which holds it back until one is posted.
func (op DTOOp) usesPeerReceive() bool {
	return op == DTOSend || op == DTOIBRDMAWriteImmed
}

// catchUp moves the completions the device holds into the EVD's queue, as a
// wait would, and reports whether they all fit: false when the queue is
// full and the device may still hold some.
func (e *EVD) catchUp() bool {
	if e == nil {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead() {
		return false
	}
	before := e.qn
	e.pollLocked()
	if e.qn > before {
		e.wakeLocked()
	}
	return e.qn < len(e.q)
}

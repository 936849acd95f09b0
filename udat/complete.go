package udat

import "github.com/udapl-go/udapl/cverbs"

// deliver turns the work completions of a poll into the events they
// report and queues them: the completion of each DTO, and on a FIFO queue
// those of later DTOs flushed at post time that were waiting for it. Stale
// completions (of a queue reset or destroyed since) and those of
// unsignalled DTOs and flush markers report nothing. The usual completions
// (takeUsual) go straight into the queue's free slots, as many at a time as
// lie in a row; deliverOther takes the rest. Caller holds e.mu.
func (e *EVD) deliver(wcs []cverbs.WC) {
	for len(wcs) > 0 {
		if free := e.freeRunLocked(); len(free) > 0 {
			k := e.takeUsual(wcs, free)
			e.qn += k
			if wcs = wcs[k:]; k == len(free) {
				continue // the queue's next free slots, if any
			}
			if len(wcs) == 0 {
				return
			}
		}
		e.deliverOther(&wcs[0])
		wcs = wcs[1:]
	}
}

// takeUsual makes the events of the usual completions at the start of wcs
// in evs, as many as both hold, and frees their DTOs' slots: the successes
// of the oldest DTO of their queue (fifoRing.usualHead), sends, RDMA
// writes, RDMA reads and plain receives. It returns how many it took; the
// completion after them, if any, is not usual and is left as it is. A run
// of completions of one queue takes its ring's lock once. evs are the
// caller's or free slots of the EVD's queue: written the same way, which
// costs a slot nothing it would not pay later and keeps the loop's
// registers for the loop. Caller holds e.mu.
func (e *EVD) takeUsual(wcs []cverbs.WC, evs []Event) int {
	wcs = wcs[:min(len(wcs), len(evs))]
	evs = evs[:len(wcs)] // no bounds check in the loop
	k := 0
	for k < len(wcs) {
		// The queue of completion k, locked for the run of its usual
		// completions that follows.
		wc := &wcs[k]
		_, kind, _ := splitWRID(wc.WRID)
		if wc.Status != cverbs.WCSuccess || kind != wrKindSend && kind != wrKindRecv {
			break
		}
		ep := e.ia.hotEP(wc.QPNum) // inlined: no call on a hit
		if ep == nil {
			break
		}
		r := ep.sq
		if kind == wrKindRecv {
			r = ep.rq
		}
		r.mu.Lock()
		run := k
		// The run, with no lock taken in the loop. The usual completion is
		// of the oldest DTO of its queue, which names it whole: one
		// comparison for owner, kind and sequence (status and queue are
		// known for the first).
		for wc.WRID == r.wrid(r.head) {
			s := r.at(r.head)
			if !r.usualHead(s) || s.op == DTOReceive && (wc.Opcode == cverbs.WCRecvRDMAWithImm || wc.Flags&cverbs.WCFlagWithImm != 0) {
				break // not the usual completion, or an extended receive (ext_ib.go)
			}
			n := s.length // sent or written; read: all it asked for
			if s.op == DTOReceive {
				n = uint64(wc.ByteLen)
				r.received.add(DTOReceive, n)
			}
			ev := &evs[k]
			// Filled in field by field: the whole event as one composite
			// literal would be built aside and copied, at three times the
			// cost. The two pointers, stored one after the other, share
			// one write barrier check.
			ev.resetForDTO()
			ev.Number = EventDTOCompletion
			ev.EVD = e
			ev.DTO.EP = ep
			ev.DTO.Cookie, ev.DTO.Status, ev.DTO.TransferredLength = s.cookie, DTOSuccess, n
			ev.DTO.Op, ev.DTO.RMRContext = s.op, 0
			r.popUsual(s)
			if k++; k >= len(wcs) { // >=, not ==: wcs[k] below needs no bounds check
				break
			}
			if wc = &wcs[k]; wc.Status != cverbs.WCSuccess || wc.QPNum != ep.qpn {
				break
			}
		}
		r.mu.Unlock()
		if k == run {
			break // not usual: left for deliverOther
		}
	}
	return k
}

// deliverOther is deliver for any completion but the usual one.
func (e *EVD) deliverOther(wc *cverbs.WC) {
	ia := e.ia
	owner, kind, seq := splitWRID(wc.WRID)
	ep := ia.hotEP(wc.QPNum) // inlined: no call on a hit
	if ep == nil {
		ep = ia.lookupEPSlow(wc.QPNum)
	}
	status := dtoStatus(wc.Status)
	deviceFlush := false // flushed, though the library flushed nothing
	if ia.interruptedByQPError(wc.Status) {
		status = DTOErrFlushed
	} else if kind != wrKindSend && (wc.Status == cverbs.WCLocQPOpErr || wc.Status == cverbs.WCRemInvReqErr) {
		// dat_ep_post_recv: "If the size of an incoming message is larger
		// than the size of the local_iov, the reported status ... is
		// DAT_DTO_LENGTH_ERROR." Some devices (Soft-RoCE among them)
		// report that case as a local QP operation error rather than a
		// local length error. The post-time checks rule out the other
		// causes of such an error on a receive (bad segments), so it is
		// reported as the length error it is.
		status = DTOLengthError
	}
	switch kind {
	case wrKindSend, wrKindRecv:
		if ep == nil {
			return
		}
		r := ep.sq
		if kind == wrKindRecv {
			r = ep.rq
		}
		r.mu.Lock()
		if !r.complete(owner, seq, status, wc) {
			r.mu.Unlock()
			break
		}
		deviceFlush = status == DTOErrFlushed && !r.flushing
		for s := r.next(); s != nil; s = r.next() {
			ep.slotEventTo(e.pushSlotLocked(), s)
			r.pop()
		}
		r.mu.Unlock()
	case wrKindSRQ:
		q := ia.srqFor(ep, owner)
		if q == nil {
			return
		}
		s, ok := q.complete(owner, seq)
		if !ok {
			return
		}
		s.record(status, wc)
		if status == DTOSuccess && ep != nil {
			ep.rq.mu.Lock() // an SRQ's receives count on the EP that took them, as in C
			ep.rq.received.add(s.op, s.xfer)
			ep.rq.mu.Unlock()
		}
		ep.slotEventTo(e.pushSlotLocked(), &s)
	}
	switch {
	case status == DTOSuccess || ep == nil:
	case deviceFlush:
		ep.flushedByDevice()
	case status != DTOErrFlushed:
		ep.markBroken()
	}
}

// reportFlushed reports the DTOs of queue r that a DISCONNECTED EP
// completed as flushed when they were posted, on e, the queue's EVD. Only
// those whose older DTOs have all been reported go now; the others follow
// the completions they wait for (deliver). The EVD's lock is taken before
// the ring's, as when completions are polled.
func (ep *EP) reportFlushed(e *EVD, r *fifoRing) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead() {
		return
	}
	r.mu.Lock()
	for s := r.next(); s != nil; s = r.next() {
		ep.slotEventTo(e.pushSlotLocked(), s)
		r.pop()
	}
	r.mu.Unlock()
	e.wakeLocked()
}

// slotEventTo fills in ev, a zero event, where it lies, with the event that
// reports the completion of slot s: a DTO completion, or an RMR bind
// completion (whose RMR learns the outcome).
func (ep *EP) slotEventTo(ev *Event, s *dtoSlot) {
	if s.op == DTOBindMW {
		if s.rmr != nil {
			s.rmr.bindDone(s.status == DTOSuccess)
		}
		ev.Number = EventRMRBindCompletion
		ev.RMR = RMRBindCompletionData{RMR: s.rmr, Cookie: s.cookie, Status: s.status}
		return
	}
	var n uint64
	if s.status == DTOSuccess {
		n = s.length
		if s.isReceive() {
			n = s.xfer
		}
	}
	ev.Number = EventDTOCompletion
	ev.DTO = DTOCompletionData{EP: ep, Cookie: s.cookie, Status: s.status, TransferredLength: n, Op: s.op}
	if s.op >= DTOExtensionBase {
		ev.Number, ev.IB = EventIBDTO, ibExtension(s.op, s.status, s.immed)
		ev.IB.RemoteAH.QPN = s.srcQP
	}
}

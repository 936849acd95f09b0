package udat

import "github.com/udapl-go/udapl/cverbs"

// The usual DTO: one send, RDMA write or RDMA read of one segment, with a
// completion or suppressed, on a CONNECTED RC EP, that passes every check.
// PostSend, PostRDMAWrite and PostRDMARead post it here, straight into the
// QP's work request, without the batch pipeline of postRequests. Anything
// else, and any check that fails, goes to postOne, which makes the same
// checks in the man pages' order and returns the exact DAT error: the fast
// path decides only whether the DTO is usual, never what a check's error
// is. A usual DTO the provider refuses has passed them all: it gets the
// error postRequests gives a refused post (fifoRing.refused). The usual
// requests of a batch (batchUsual) and usual receives (recvUsual) skip the
// generic checks the same way, inside postRequests and postRecvs.

// noRemote is the remote buffer of a send: none.
var noRemote RMRTriplet

// postFast posts the usual DTO, or anything else through postSlow (a
// usual DTO the provider refuses: fifoRing.refused). The DAT calls call it
// last, so that they keep none of their arguments across it.
func (ep *EP) postFast(o *requestOp, iov []LMRTriplet, cookie uint64, remote *RMRTriplet, flags CompletionFlags) error {
	// !made: a zero EP, no handle. A freed one is caught under the ring's
	// lock, below.
	if ep == nil || !ep.made || len(iov) != 1 || !ep.usualFlagsArg(o.op, flags) {
		return ep.postSlow(o.op, iov, cookie, remote, flags)
	}
	t := &iov[0]
	// usualSegment's checks, here: as a call it cost spills around it.
	// freed is tested under the ring's lock, below.
	ia := ep.ia // once: read again, it is tested for nil again
	l := ia.lmrInSlot(t.LMRContext)
	if l == nil || l.lkey != t.LMRContext || l.pz != ep.pz || !usualFits(t, l, o, remote, ia.maxMessageSize()) {
		return ep.postSlow(o.op, iov, cookie, remote, flags)
	}
	n := t.SegmentLength
	r := ep.sq
	r.mu.Lock()
	// made is known for both: freed alone says whether Free came since.
	if ep.freed.Load() || l.freed.Load() || ep.state.Load() != uint32(EPStateConnected) || r.flushing || r.full() || ep.reqEVD == nil {
		r.mu.Unlock()
		return ep.postSlow(o.op, iov, cookie, remote, flags)
	}
	signaled := flags == CompletionDefault
	seq := r.reserve(cookie, uint64(n), o.op, signaled)
	if err := ep.qp.PostSendOne(r.wrid(seq), o.verb, ep.usualFlags(o, n, signaled),
		cverbs.SGE{Addr: t.VirtualAddress, Length: n, LKey: t.LMRContext}, remote.VirtualAddress, remote.RMRContext); err != nil {
		return r.refused(o.name, err)
	}
	r.mu.Unlock()
	return nil
}

// refused gives back the slot of a usual DTO the provider refused, unlocks
// the ring and returns the error of DAT call name, as postRequests and
// postRecvs report a refused post: the DTO passed every check, so taken
// through them again it would meet the same refusal (or, after a doorbell
// that failed, be posted twice). Caller holds r.mu and has reserved the
// slot.
func (r *fifoRing) refused(name string, err error) error {
	r.unreserve()
	r.mu.Unlock()
	return verbsErr(name, err, InsufficientResources)
}

// postSlow posts a send, RDMA write or RDMA read that postFast does not
// take, with every check (postOne).
func (ep *EP) postSlow(op DTOOp, iov []LMRTriplet, cookie uint64, remote *RMRTriplet, flags CompletionFlags) error {
	return ep.postOne(&Request{Op: op, LocalIOV: iov, Cookie: cookie, Remote: *remote, Flags: flags})
}

// usualFlagsArg reports whether flags make a usual DTO of op on this EP:
// CompletionDefault or CompletionSuppress (but not a quiet read,
// IA.completesInOrder), on an EP that is not UD.
func (ep *EP) usualFlagsArg(op DTOOp, flags CompletionFlags) bool {
	return flags&^CompletionSuppress == 0 && ep.ud == nil &&
		(flags == CompletionDefault || op != DTORDMARead || ep.ia.completesInOrder())
}

// usualSegment returns the LMR of t, the one segment of a usual DTO of
// kind o to remote, or nil if it makes no usual DTO: a live LMR of the
// EP's PZ that t fits (usualFits). The EP's state and queue are for the
// caller to check. postFast and recvFast make the same checks in place,
// without the call.
func (ep *EP) usualSegment(t *LMRTriplet, o *requestOp, remote *RMRTriplet) *LMR {
	l := ep.ia.hotLMR(t.LMRContext) // inlined: no call on a hit
	if l == nil || l.pz != ep.pz || !usualFits(t, l, o, remote, ep.ia.maxMessageSize()) {
		return nil
	}
	return l
}

// usualFits reports whether t, in l, makes the one segment of a usual DTO
// of kind o to remote: not empty, in bounds of l, which allows what o
// needs, at most maxMsg bytes, agreeing with remote as o's rule asks.
func usualFits(t *LMRTriplet, l *LMR, o *requestOp, remote *RMRTriplet, maxMsg uint64) bool {
	n := uint64(t.SegmentLength)
	switch o.remote {
	case remoteFilled:
		if n != uint64(remote.SegmentLength) { // trimmed or too short: postOne
			return false
		}
	case remoteCovers:
		if n > uint64(remote.SegmentLength) {
			return false
		}
	}
	// off wraps past l.length when t starts below l.va (an LMR never ends
	// past the top of the address space), and n-1 past it when n is 0.
	off := t.VirtualAddress - l.va
	return l.priv&o.need == o.need && n <= maxMsg && off < l.length && n-1 < l.length-off
}

// usualFlags are the work request flags of a usual DTO of n bytes (see
// sendFlags: no fence, not solicited).
func (ep *EP) usualFlags(o *requestOp, n uint32, signaled bool) cverbs.SendFlags {
	var wf cverbs.SendFlags
	if signaled {
		wf = cverbs.SendSignaled
	}
	if o.inline && uint64(n) <= ep.maxInline {
		wf |= cverbs.SendInline
	}
	return wf
}

// batchUsual is postFast for the requests of a batch from k on: while
// reqs[k] is a usual DTO (a send, RDMA write or RDMA read that postFast
// would take) it reserves its slot and makes it work request k of b. It
// returns the index of the first request it did not take (len(reqs): all),
// which postRequests takes through every check. Caller holds r.mu, has
// begun b and found the EP CONNECTED.
func (ep *EP) batchUsual(r *fifoRing, b cverbs.SendBatch, k int, reqs []Request) int {
	if ep.ud != nil || ep.reqEVD == nil {
		return k
	}
	// Read once: the compiler reads fields again after every store into
	// the work queue (completesInOrder is read only for the rare
	// suppressed read). A batch's requests mostly share an LMR, which is
	// looked up again only when the key changes.
	maxMsg := ep.ia.maxMessageSize()
	var l *LMR
	for end := min(len(reqs), k+r.limit-r.outstanding()); k < end; k++ {
		req := &reqs[k]
		op := req.Op // once: the checks below then know its range
		if op > DTORDMARead || req.WithImmed || len(req.LocalIOV) != 1 || req.Flags&^CompletionSuppress != 0 ||
			req.Flags != CompletionDefault && op == DTORDMARead && !ep.ia.completesInOrder() {
			return k // not usual: see usualFlagsArg
		}
		t := &req.LocalIOV[0]
		if l == nil || l.lkey != t.LMRContext {
			if l = ep.ia.hotLMR(t.LMRContext); l == nil || l.pz != ep.pz {
				return k
			}
		}
		o := &requestOps[op]
		if !usualFits(t, l, o, &req.Remote, maxMsg) {
			return k
		}
		n := t.SegmentLength
		signaled := req.Flags == CompletionDefault
		seq := r.reserve(req.Cookie, uint64(n), op, signaled)
		if b.SetSGE(k, r.wrid(seq), o.verb, ep.usualFlags(o, n, signaled),
			cverbs.SGE{Addr: t.VirtualAddress, Length: n, LKey: t.LMRContext}, req.Remote.VirtualAddress, req.Remote.RMRContext) != nil {
			r.unreserve()
			return k
		}
	}
	return k
}

// usualRecv is a receive as usualSegment checks it: its segment allows
// local writes; it has no remote buffer.
var usualRecv = requestOp{name: recvOp, need: MemPrivLocalWrite}

// usualRecvSegment returns the LMR of a usual receive into iov with
// flags: one segment that usualSegment takes, CompletionDefault, on an RC
// EP without SRQ that has a receive EVD; nil if it is not one.
func (ep *EP) usualRecvSegment(iov []LMRTriplet, flags CompletionFlags) *LMR {
	if !ep.usualRecvArgs(iov, flags) {
		return nil
	}
	return ep.usualSegment(&iov[0], &usualRecv, &noRemote)
}

// usualRecvArgs is usualRecvSegment but for the segment's own checks.
func (ep *EP) usualRecvArgs(iov []LMRTriplet, flags CompletionFlags) bool {
	return len(iov) == 1 && flags == CompletionDefault && ep.ud == nil && ep.srq == nil &&
		ep.attr.MaxRecvIOV >= 1 && ep.recvEVD != nil
}

// recvFast is postFast for PostRecv: it posts the usual receive
// (usualRecvSegment's) straight to the QP, or anything else through
// recvSlow.
func (ep *EP) recvFast(iov []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	if ep == nil || !ep.made || !ep.usualRecvArgs(iov, flags) {
		return ep.recvSlow(iov, cookie, flags)
	}
	t := &iov[0]
	// usualSegment's checks, here, as in postFast.
	ia := ep.ia
	l := ia.lmrInSlot(t.LMRContext)
	if l == nil || l.lkey != t.LMRContext || l.pz != ep.pz || !usualFits(t, l, &usualRecv, &noRemote, ia.maxMessageSize()) {
		return ep.recvSlow(iov, cookie, flags)
	}
	r := ep.rq
	r.mu.Lock()
	// Receives on a DISCONNECTED EP are flushed at post: postRecvs.
	if ep.freed.Load() || l.freed.Load() || r.flushing || r.full() || ep.getState() == EPStateDisconnected {
		r.mu.Unlock()
		return ep.recvSlow(iov, cookie, flags)
	}
	seq := r.reserve(cookie, uint64(t.SegmentLength), DTOReceive, true)
	if err := ep.qp.PostRecvOne(r.wrid(seq),
		cverbs.SGE{Addr: t.VirtualAddress, Length: t.SegmentLength, LKey: t.LMRContext}); err != nil {
		return r.refused(recvOp, err)
	}
	r.mu.Unlock()
	return nil
}

// recvUsual is batchUsual for receive k of a batch on the EP's own receive
// queue: when rv is a usual receive (usualRecvSegment's) it reserves its
// slot, makes it work request k and reports true; otherwise it changes
// nothing, and postRecvs checks rv the long way. Caller holds r.mu and has
// found that receives are not flushed at post.
func (ep *EP) recvUsual(r *fifoRing, k int, rv *Recv) bool {
	if r.full() || ep.usualRecvSegment(rv.LocalIOV, rv.Flags) == nil {
		return false
	}
	t := &rv.LocalIOV[0]
	seq := r.reserve(rv.Cookie, uint64(t.SegmentLength), DTOReceive, true)
	sge := r.sgeSlot(k)[:1]
	sge[0] = cverbs.SGE{Addr: t.VirtualAddress, Length: t.SegmentLength, LKey: t.LMRContext}
	r.rwr[k] = cverbs.RecvWR{ID: r.wrid(seq), SGL: sge}
	return true
}

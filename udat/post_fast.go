package udat

import "github.com/udapl-go/udapl/cverbs"

// The usual DTO: one send, RDMA write or RDMA read of one segment, with a
// completion or suppressed, on a CONNECTED RC EP, that passes every check.
// PostSend, PostRDMAWrite and PostRDMARead post it here, straight into the
// QP's work request, without the batch pipeline of postRequests. Anything
// else, and any check that fails, goes to postOne, which makes the same
// checks in the man pages' order and returns the exact DAT error: the fast
// path decides only whether the DTO is usual, never what an error is.

// noRemote is the remote buffer of a send: none.
var noRemote RMRTriplet

// postFast posts the usual DTO and reports true, or reports false having
// posted nothing.
func (ep *EP) postFast(op DTOOp, iov []LMRTriplet, cookie uint64, remote *RMRTriplet, flags CompletionFlags) bool {
	// !made: a zero EP, no handle. A freed one is caught under the ring's
	// lock, below.
	if ep == nil || !ep.made || len(iov) != 1 || flags&^CompletionSuppress != 0 || ep.ud != nil {
		return false
	}
	if flags != CompletionDefault && op == DTORDMARead && !ep.ia.completesInOrder() {
		return false // a quiet read (postRequests)
	}
	t := &iov[0]
	n := t.SegmentLength
	o := &requestOps[op]
	switch o.remote {
	case remoteFilled:
		if n != remote.SegmentLength { // trimmed or too short: postOne
			return false
		}
	case remoteCovers:
		if n > remote.SegmentLength {
			return false
		}
	}
	l := ep.ia.hotLMR(t.LMRContext) // inlined: no call on a hit
	if l == nil || l.pz != ep.pz || l.priv&o.need != o.need || n == 0 {
		return false
	}
	if off := t.VirtualAddress - l.va; t.VirtualAddress < l.va || off > l.length || uint64(n) > l.length-off ||
		uint64(n) > ep.ia.maxMessageSize() {
		return false
	}
	r := ep.sq
	r.mu.Lock()
	if ep.dead() || ep.getState() != EPStateConnected || r.flushing || r.full() || ep.reqEVD == nil {
		r.mu.Unlock()
		return false
	}
	signaled := flags == CompletionDefault
	seq := r.reserve(cookie, uint64(n), op, signaled)
	var wf cverbs.SendFlags
	if signaled {
		wf = cverbs.SendSignaled
	}
	if o.inline && uint64(n) <= ep.maxInline {
		wf |= cverbs.SendInline
	}
	if l.dead() || ep.qp.PostSendOne(makeWRID(r.owner, wrKindSend, seq), o.verb, wf,
		cverbs.SGE{Addr: t.VirtualAddress, Length: n, LKey: t.LMRContext}, remote.VirtualAddress, remote.RMRContext) != nil {
		r.unreserve()
		r.mu.Unlock()
		return false
	}
	r.mu.Unlock()
	return true
}

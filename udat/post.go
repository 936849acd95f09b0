package udat

import (
	"unsafe"

	"github.com/udapl-go/udapl/cverbs"
)

// Posting: the DAT calls that post DTOs (checked in post_check.go, their
// completions reported by complete.go), and the batch calls of udat.

// maxInline is the largest send or RDMA write posted inline (the C
// reference's default too).
const maxInline = 64

// PostSend sends the data of localIOV to the peer (dat_ep_post_send). The
// EP must be CONNECTED, or DISCONNECTED, in which case the send completes at
// once as flushed on the request EVD. cookie comes back in the completion
// event. flags combine CompletionSuppress, CompletionSolicitedWait,
// CompletionUnsignalled and CompletionBarrierFence. localIOV may be reused as
// soon as PostSend returns; the memory it names may not until the DTO
// completes. PostSend is safe for concurrent use.
func (ep *EP) PostSend(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	return ep.postFast(&requestOps[DTOSend], localIOV, cookie, &noRemote, flags)
}

// PostRDMAWrite writes the data of localIOV to remote, a buffer of the peer
// (dat_ep_post_rdma_write). The rules of PostSend apply; a remote buffer
// shorter than localIOV gives DAT_LENGTH_ERROR.
func (ep *EP) PostRDMAWrite(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	return ep.postFast(&requestOps[DTORDMAWrite], localIOV, cookie, &remote, flags)
}

// PostRDMARead reads remote, a buffer of the peer, into localIOV
// (dat_ep_post_rdma_read). The segments are filled in order: the front ones
// completely, at most one partly, the rest not at all. A local buffer shorter
// than remote gives DAT_LENGTH_ERROR; the local LMRs need the local write
// privilege. Otherwise the rules of PostSend apply.
func (ep *EP) PostRDMARead(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	return ep.postFast(&requestOps[DTORDMARead], localIOV, cookie, &remote, flags)
}

// PostRequests posts reqs in order, as PostSend, PostRDMAWrite and
// PostRDMARead would one at a time, with the same checks and errors, but
// with one call into the provider for up to 128 requests: one cgo crossing
// and, on Soft-RoCE, one system call. It returns how many were posted; when
// that is fewer than len(reqs), err tells why reqs[n] was not, and neither
// it nor any after it was posted. The posted ones complete as usual. It is an
// extension of DAT, which posts one DTO per call, and is safe for concurrent
// use.
func (ep *EP) PostRequests(reqs []Request) (int, error) {
	if err := ep.check("dat_ep_post_send"); err != nil {
		return 0, err
	}
	n := 0
	for n < len(reqs) {
		k, err := ep.postRequests(reqs[n:min(len(reqs), n+ep.sq.batch)])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// postOne posts a single request: the DAT calls. req stays where the
// caller made it (a Request is a hundred bytes).
func (ep *EP) postOne(req *Request) error {
	if ep == nil || ep.dead() {
		return badHandle(requestName(req.Op), HandleTypeEP) // the name only when needed
	}
	_, err := ep.postRequests(unsafe.Slice(req, 1))
	return err
}

// postRequests checks reqs (at most the ring's batch) in order and posts
// the ones before the first that fails its checks, with one provider call.
// The work requests are built in place, in the QP's C arrays (a
// cverbs.SendBatch): the checks write the segments straight there. It
// returns how many it posted: fewer, with no error, when a read that takes
// a fence write of its own (IA.fencesReads) has to start the next batch.
func (ep *EP) postRequests(reqs []Request) (int, error) {
	r := ep.sq
	r.mu.Lock()
	if ep.dead() {
		r.mu.Unlock()
		return 0, badHandle(requestName(reqs[0].Op), HandleTypeEP)
	}
	st := ep.getState()
	flushAtPost := st == EPStateDisconnected || r.flushing
	var b cverbs.SendBatch
	var berr error // the QP could not be posted to: reported once the checks pass
	if !flushAtPost {
		b, berr = ep.qp.BeginSend()
	}
	inPlace := !flushAtPost && berr == nil
	k := 0
	extra := 0 // 1: work request 0 is a read's fence write (IA.fencesReads)
	var err error
	for ; k < len(reqs); k++ {
		if inPlace && st == EPStateConnected {
			if k = ep.batchUsual(r, b, k, reqs); k == len(reqs) {
				break
			}
		}
		req := &reqs[k]
		var room []cverbs.SGE
		if inPlace {
			room = b.SGL(k)
		} else {
			room = r.sgeSlot(k)
		}
		var sge []cverbs.SGE
		var total uint64
		if sge, total, err = ep.checkRequest(r, req, room); err != nil {
			break
		}
		o := &requestOps[req.Op]
		if st != EPStateConnected && st != EPStateDisconnected {
			err = newError(o.name, InvalidState|stateSubtype(st))
			break
		}
		if r.full() {
			err = newError(o.name, InsufficientResources)
			break
		}
		if flushAtPost {
			// Nothing reaches the hardware: see reportFlushed.
			r.reserveFlushed(req.Cookie, total, req.Op)
			continue
		}
		signaled := req.Flags&(CompletionSuppress|CompletionUnsignalled) == 0
		// A read the device may complete after later requests is
		// signalled all the same, its success quiet (IA.completesInOrder).
		quiet := !signaled && req.Op == DTORDMARead && !ep.ia.completesInOrder()
		// A fenced read the device cannot fence (IA.fencesReads) goes
		// behind a fenced zero-length RDMA write, the two alone in their
		// batch: work requests 0 and 1.
		if req.Flags&CompletionBarrierFence != 0 && req.Op == DTORDMARead && berr == nil &&
			!ep.ia.fencesReads() && r.readsBefore(r.tail) {
			if k > 0 {
				break // the next batch
			}
			if r.outstanding()+2 > r.limit {
				err = newError(o.name, InsufficientResources)
				break
			}
			extra = 1
			r.reserve(0, 0, dtoMarker, false)
		}
		seq := r.reserve(req.Cookie, total, req.Op, signaled || quiet)
		r.at(seq).quiet = quiet
		if anyDead(r.lmrv) {
			for ; extra >= 0; extra-- {
				r.unreserve()
			}
			extra = 0
			err = newError(o.name, PrivilegesViolation)
			break
		}
		if berr != nil {
			continue // checked and reserved; unreserved below
		}
		fence := req.Flags&CompletionBarrierFence != 0 && extra == 0 && r.readsBefore(seq)
		if o.plain {
			// Sends, RDMA writes and reads: straight into the descriptor.
			if serr := b.SetOne(k+extra, r.wrid(seq), req.verb(o), ep.sendFlags(req, o, total, signaled || quiet, fence),
				sge, req.Remote.VirtualAddress, req.Remote.RMRContext, daplImmed(req.Immed)); serr != nil {
				for ; extra >= 0; extra-- {
					r.unreserve()
				}
				extra = 0
				err = verbsErr(o.name, serr, InsufficientResources)
				break
			}
			if extra > 0 {
				// The fence write: to the read's remote buffer (a peer
				// takes no data from it: siw_proc_write returns at once).
				b.SetOne(0, r.wrid(seq-1), cverbs.OpRDMAWrite, cverbs.SendFence,
					nil, req.Remote.VirtualAddress, req.Remote.RMRContext, 0)
				k++
				break
			}
			continue
		}
		wr := cverbs.SendWR{ID: r.wrid(seq), Op: req.verb(o), Flags: ep.sendFlags(req, o, total, signaled, fence),
			SGL: sge, RemoteAddr: req.Remote.VirtualAddress, RKey: req.Remote.RMRContext,
			Imm: daplImmed(req.Immed), CompareAdd: req.Add, Swap: req.Swap}
		if req.Op == DTOIBCmpSwap {
			wr.CompareAdd = req.Compare
		}
		if req.Op == DTOIBSendUD {
			a := req.AH.AH
			if !r.holdAH(seq, a) {
				r.unreserve()
				err = newError(o.name, InvalidHandle) // freed since checkUD
				break
			}
			wr.AH, wr.RemoteQPN, wr.RemoteQKey = a.vah, req.AH.QPN, a.qkey
		}
		if serr := b.Set(k, &wr); serr != nil {
			r.unreserve()
			err = verbsErr(o.name, serr, InsufficientResources)
			break
		}
	}
	if flushAtPost {
		r.mu.Unlock()
		ep.reportFlushed(ep.reqEVD, r)
		return k, err
	}
	if berr != nil {
		for range k {
			r.unreserve()
		}
		r.mu.Unlock()
		if k == 0 {
			return 0, err
		}
		return 0, verbsErr(requestName(reqs[0].Op), berr, InsufficientResources)
	}
	if k == 0 {
		b.Cancel()
		r.mu.Unlock()
		return 0, err
	}
	n, perr := b.Post(k + extra)
	if perr != nil || n != k+extra {
		for i := n; i < k+extra; i++ {
			r.unreserve()
		}
		r.mu.Unlock()
		n = max(n-extra, 0) // a fence write posted alone stays: a marker
		return n, verbsErr(requestName(reqs[n].Op), perr, InsufficientResources)
	}
	r.mu.Unlock()
	return k, err
}

// sendFlags are the work request flags of req, whose DTO moves total bytes.
// fence is CompletionBarrierFence where it has something to wait for (see
// fifoRing.readsBefore). A fenced DTO is never inline: its bytes would be
// copied now, before the reads it waits for have written them; the fence
// orders only when the device reads them.
func (ep *EP) sendFlags(req *Request, o *requestOp, total uint64, signaled, fence bool) cverbs.SendFlags {
	var wf cverbs.SendFlags
	if signaled {
		wf |= cverbs.SendSignaled
	}
	if fence {
		wf |= cverbs.SendFence
	} else if total > 0 && total <= ep.maxInline && o.inline {
		wf |= cverbs.SendInline
	}
	if req.Flags&CompletionSolicitedWait != 0 {
		wf |= cverbs.SendSolicited
	}
	return wf
}

// PostRecv posts localIOV to receive one incoming message
// (dat_ep_post_recv). It is valid in every EP state: receives posted before
// the connection is established wait for it; on a DISCONNECTED EP the
// receive completes at once as flushed on the receive EVD. The segments are
// filled in order. flags is CompletionDefault, or CompletionUnsignalled when
// the EP's RecvCompletionFlags allow it. An EP that uses an SRQ refuses
// PostRecv. PostRecv is safe for concurrent use.
func (ep *EP) PostRecv(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	return ep.recvFast(localIOV, cookie, flags)
}

// recvSlow posts a receive that recvFast does not take, with every check.
func (ep *EP) recvSlow(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	if err := ep.check(recvOp); err != nil {
		return err
	}
	recvs := [1]Recv{{LocalIOV: localIOV, Cookie: cookie, Flags: flags}}
	_, err := ep.postRecvs(recvs[:])
	return err
}

// PostRecvs posts recvs in order, as PostRecv would one at a time, with the
// same checks and errors, but with one call into the provider for up to 128
// receives. It returns how many were posted; when that is fewer than
// len(recvs), err tells why recvs[n] was not, and neither it nor any after it
// was posted. It is an extension of DAT and safe for concurrent use.
func (ep *EP) PostRecvs(recvs []Recv) (int, error) {
	if err := ep.check(recvOp); err != nil {
		return 0, err
	}
	n := 0
	for n < len(recvs) {
		k, err := ep.postRecvs(recvs[n:min(len(recvs), n+ep.rq.batch)])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// postRecvs is postRequests for receives.
func (ep *EP) postRecvs(recvs []Recv) (int, error) {
	r := ep.rq
	r.mu.Lock()
	if ep.dead() {
		r.mu.Unlock()
		return 0, badHandle(recvOp, HandleTypeEP)
	}
	flushAtPost := ep.getState() == EPStateDisconnected || r.flushing
	k := 0
	var err error
	for ; k < len(recvs); k++ {
		rv := &recvs[k]
		if !flushAtPost && ep.recvUsual(r, k, rv) {
			continue
		}
		if err = ep.checkRecv(rv); err != nil {
			break
		}
		var sge []cverbs.SGE
		var total uint64
		if sge, r.lmrv, total, err = checkIOV(recvOp, ep.ia, ep.pz, rv.LocalIOV, MemPrivLocalWrite, r.sgeSlot(k), r.lmrv); err != nil {
			break
		}
		if r.full() {
			err = newError(recvOp, InsufficientResources)
			break
		}
		if flushAtPost {
			r.reserveFlushed(rv.Cookie, total, ep.recvOp()) // see reportFlushed
			continue
		}
		seq := r.reserve(rv.Cookie, total, ep.recvOp(), true)
		if anyDead(r.lmrv) {
			r.unreserve()
			err = newError(recvOp, PrivilegesViolation)
			break
		}
		r.rwr[k] = cverbs.RecvWR{ID: r.wrid(seq), SGL: sge}
	}
	if flushAtPost {
		r.mu.Unlock()
		ep.reportFlushed(ep.recvEVD, r)
		return k, err
	}
	if k == 0 {
		r.mu.Unlock()
		return 0, err
	}
	n, perr := ep.qp.PostRecv(r.rwr[:k])
	if perr != nil || n != k {
		for i := n; i < k; i++ {
			r.unreserve()
		}
		r.mu.Unlock()
		return n, verbsErr(recvOp, perr, InsufficientResources)
	}
	r.mu.Unlock()
	return k, err
}

package udat

import (
	"github.com/udapl-go/udapl/cverbs"
)

// Posting. Every check the man pages ask for is made before anything is
// posted, under the queue's ring lock, without allocating:
//
//   - a segment outside its LMR: DAT_INVALID_PARAMETER;
//   - an LMR of another PZ than the EP or SRQ: DAT_PROTECTION_VIOLATION;
//   - an unknown or freed LMR, or one without the local read (sends, RDMA
//     writes) or local write (receives, RDMA reads) privilege:
//     DAT_PRIVILEGES_VIOLATION;
//   - more segments than the EP allows, unknown completion flags, or
//     CompletionUnsignalled on an EP not configured for it:
//     DAT_INVALID_PARAMETER;
//   - an RDMA read whose local buffer is shorter than the remote one, or an
//     RDMA write whose remote buffer is shorter than the local one:
//     DAT_LENGTH_ERROR;
//   - a full queue: DAT_INSUFFICIENT_RESOURCES.
//
// Segments of length zero are skipped (their other fields may be invalid);
// no segment at all is a zero-size message.

const validRequestFlags = CompletionSuppress | CompletionSolicitedWait | CompletionUnsignalled | CompletionBarrierFence

// checkIOV validates iov for a DTO of pz that needs privilege need, and fills
// sge and lmrv (scratch slices with room for len(iov) entries) with the
// segments to post and their LMRs. It returns the total length.
func checkIOV(op string, ia *IA, pz *PZ, iov []LMRTriplet, need MemPriv, sge []cverbs.SGE, lmrv []*LMR) ([]cverbs.SGE, []*LMR, uint64, error) {
	sge, lmrv = sge[:0], lmrv[:0]
	var total uint64
	for i := range iov {
		t := &iov[i]
		if t.SegmentLength == 0 {
			continue
		}
		l := ia.lookupLMR(t.LMRContext)
		if l == nil || l.dead() {
			return sge, lmrv, 0, newError(op, PrivilegesViolation)
		}
		if l.pz != pz {
			return sge, lmrv, 0, newError(op, ProtectionViolation)
		}
		off := t.VirtualAddress - l.va
		if t.VirtualAddress < l.va || off > l.length || uint64(t.SegmentLength) > l.length-off {
			return sge, lmrv, 0, newError(op, InvalidParameter|InvalidArg3)
		}
		if l.priv&need != need {
			return sge, lmrv, 0, newError(op, PrivilegesViolation)
		}
		sge = append(sge, cverbs.SGE{Addr: t.VirtualAddress, Length: t.SegmentLength, LKey: t.LMRContext})
		lmrv = append(lmrv, l)
		total += uint64(t.SegmentLength)
	}
	return sge, lmrv, total, nil
}

// trimSGE cuts the segments to n bytes in I/O vector order: the front
// segments whole, at most one partly, the rest not at all.
func trimSGE(sge []cverbs.SGE, lmrv []*LMR, n uint64) ([]cverbs.SGE, []*LMR) {
	for i := range sge {
		l := uint64(sge[i].Length)
		if n <= l {
			if n == 0 {
				return sge[:i], lmrv[:i]
			}
			sge[i].Length = uint32(n)
			return sge[:i+1], lmrv[:i+1]
		}
		n -= l
	}
	return sge, lmrv
}

// anyDead reports whether an LMR was freed while the DTO was being posted.
func anyDead(lmrv []*LMR) bool {
	for _, l := range lmrv {
		if l.dead() {
			return true
		}
	}
	return false
}

// PostSend sends the data of localIOV to the peer (dat_ep_post_send). The
// EP must be CONNECTED, or DISCONNECTED, in which case the send completes at
// once as flushed on the request EVD. cookie comes back in the completion
// event. flags combine CompletionSuppress, CompletionSolicitedWait,
// CompletionUnsignalled and CompletionBarrierFence. localIOV may be reused as
// soon as PostSend returns; the memory it names may not until the DTO
// completes. PostSend is safe for concurrent use.
func (ep *EP) PostSend(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	const op = "dat_ep_post_send"
	if err := ep.check(op); err != nil {
		return err
	}
	return ep.postRequest(op, cverbs.OpSend, DTOSend, localIOV, cookie, nil, flags, InvalidArg5, ep.attr.MaxRequestIOV)
}

// PostRDMAWrite writes the data of localIOV to remote, a buffer of the peer
// (dat_ep_post_rdma_write). The rules of PostSend apply; a remote buffer
// shorter than localIOV gives DAT_LENGTH_ERROR.
func (ep *EP) PostRDMAWrite(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	const op = "dat_ep_post_rdma_write"
	if err := ep.check(op); err != nil {
		return err
	}
	return ep.postRequest(op, cverbs.OpRDMAWrite, DTORDMAWrite, localIOV, cookie, &remote, flags, InvalidArg6, ep.attr.MaxRDMAWriteIOV)
}

// PostRDMARead reads remote, a buffer of the peer, into localIOV
// (dat_ep_post_rdma_read). The segments are filled in order: the front ones
// completely, at most one partly, the rest not at all. A local buffer shorter
// than remote gives DAT_LENGTH_ERROR; the local LMRs need the local write
// privilege. Otherwise the rules of PostSend apply.
func (ep *EP) PostRDMARead(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	const op = "dat_ep_post_rdma_read"
	if err := ep.check(op); err != nil {
		return err
	}
	return ep.postRequest(op, cverbs.OpRDMARead, DTORDMARead, localIOV, cookie, &remote, flags, InvalidArg6, ep.attr.MaxRDMAReadIOV)
}

func (ep *EP) postRequest(op string, sop cverbs.SendOp, dop DTOOp, iov []LMRTriplet, cookie uint64,
	remote *RMRTriplet, flags CompletionFlags, flagArg Return, maxIOV int) error {
	if flags&^validRequestFlags != 0 || (dop == DTORDMARead && flags&CompletionSolicitedWait != 0) {
		return newError(op, InvalidParameter|flagArg)
	}
	if flags&CompletionUnsignalled != 0 && ep.attr.RequestCompletionFlags&CompletionUnsignalled == 0 {
		return newError(op, InvalidParameter|flagArg)
	}
	if len(iov) > maxIOV {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if ep.reqEVD == nil {
		return newError(op, InvalidState|InvalidStateEPEVDRequest)
	}
	need := MemPrivLocalRead
	if dop == DTORDMARead {
		need = MemPrivLocalWrite
	}
	r := ep.sq
	r.mu.Lock()
	sge, lmrv, total, err := checkIOV(op, ep.ia, ep.pz, iov, need, r.sge, r.lmrv)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	switch dop {
	case DTORDMARead:
		if total < uint64(remote.SegmentLength) {
			r.mu.Unlock()
			return newError(op, LengthError)
		}
		total = uint64(remote.SegmentLength)
		sge, lmrv = trimSGE(sge, lmrv, total)
	case DTORDMAWrite:
		if total > uint64(remote.SegmentLength) {
			r.mu.Unlock()
			return newError(op, LengthError)
		}
	}
	limit := uint64(ep.attr.MaxMessageSize)
	if dop != DTOSend {
		limit = uint64(ep.attr.MaxRDMASize)
	}
	if total > limit {
		r.mu.Unlock()
		return newError(op, LengthError)
	}
	st := ep.getState()
	if st != EPStateConnected {
		r.mu.Unlock()
		if st == EPStateDisconnected {
			ep.reqEVD.pushInternal(Event{Number: EventDTOCompletion,
				DTO: DTOCompletionData{EP: ep, Cookie: cookie, Status: DTOErrFlushed, Op: dop}})
			return nil
		}
		return newError(op, InvalidState|stateSubtype(st))
	}
	if r.full() {
		r.mu.Unlock()
		return newError(op, InsufficientResources)
	}
	signaled := flags&(CompletionSuppress|CompletionUnsignalled) == 0
	seq := r.reserve(cookie, total, dop, signaled, lmrv)
	if anyDead(lmrv) {
		r.unreserve()
		r.mu.Unlock()
		return newError(op, PrivilegesViolation)
	}
	var wf cverbs.SendFlags
	if signaled {
		wf |= cverbs.SendSignaled
	}
	if flags&CompletionBarrierFence != 0 {
		wf |= cverbs.SendFence
	}
	if flags&CompletionSolicitedWait != 0 {
		wf |= cverbs.SendSolicited
	}
	wr := &r.swr[0]
	*wr = cverbs.SendWR{ID: makeWRID(r.owner, wrKindSend, seq), Op: sop, Flags: wf, SGL: sge}
	if remote != nil {
		wr.RemoteAddr, wr.RKey = remote.VirtualAddress, remote.RMRContext
	}
	n, err := ep.qp.PostSend(r.swr[:])
	*wr = cverbs.SendWR{}
	if err != nil || n != 1 {
		r.unreserve()
		r.mu.Unlock()
		return verbsErr(op, err, InsufficientResources)
	}
	r.mu.Unlock()
	return nil
}

// PostRecv posts localIOV to receive one incoming message
// (dat_ep_post_recv). It is valid in every EP state: receives posted before
// the connection is established wait for it; on a DISCONNECTED EP the
// receive completes at once as flushed on the receive EVD. The segments are
// filled in order. flags is CompletionDefault, or CompletionUnsignalled when
// the EP's RecvCompletionFlags allow it. An EP that uses an SRQ refuses
// PostRecv. PostRecv is safe for concurrent use.
func (ep *EP) PostRecv(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	const op = "dat_ep_post_recv"
	if err := ep.check(op); err != nil {
		return err
	}
	if flags&^CompletionUnsignalled != 0 ||
		(flags&CompletionUnsignalled != 0 && ep.attr.RecvCompletionFlags&CompletionUnsignalled == 0) {
		return newError(op, InvalidParameter|InvalidArg5)
	}
	if ep.srq != nil {
		return newError(op, InvalidState)
	}
	if len(localIOV) > ep.attr.MaxRecvIOV {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if ep.recvEVD == nil {
		return newError(op, InvalidState|InvalidStateEPEVDRecv)
	}
	r := ep.rq
	r.mu.Lock()
	sge, lmrv, total, err := checkIOV(op, ep.ia, ep.pz, localIOV, MemPrivLocalWrite, r.sge, r.lmrv)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	if ep.getState() == EPStateDisconnected {
		r.mu.Unlock()
		ep.recvEVD.pushInternal(Event{Number: EventDTOCompletion,
			DTO: DTOCompletionData{EP: ep, Cookie: cookie, Status: DTOErrFlushed, Op: DTOReceive}})
		return nil
	}
	if r.full() {
		r.mu.Unlock()
		return newError(op, InsufficientResources)
	}
	seq := r.reserve(cookie, total, DTOReceive, true, lmrv)
	if anyDead(lmrv) {
		r.unreserve()
		r.mu.Unlock()
		return newError(op, PrivilegesViolation)
	}
	r.rwr[0] = cverbs.RecvWR{ID: makeWRID(r.owner, wrKindRecv, seq), SGL: sge}
	n, err := ep.qp.PostRecv(r.rwr[:])
	r.rwr[0] = cverbs.RecvWR{}
	if err != nil || n != 1 {
		r.unreserve()
		r.mu.Unlock()
		return verbsErr(op, err, InsufficientResources)
	}
	r.mu.Unlock()
	return nil
}

// completion turns one work completion into the event it reports. It
// returns false for completions that report nothing: stale ones of a queue
// that was reset or destroyed.
func (ia *IA) completion(wc *cverbs.WC) (Event, bool) {
	owner, kind, seq := splitWRID(wc.WRID)
	ep := ia.lookupEP(wc.QPNum)
	var slot dtoSlot
	var ok bool
	switch kind {
	case wrKindSend, wrKindRecv:
		if ep == nil {
			return Event{}, false
		}
		r := ep.sq
		if kind == wrKindRecv {
			r = ep.rq
		}
		r.mu.Lock()
		slot, ok = r.complete(owner, seq)
		r.mu.Unlock()
	case wrKindSRQ:
		s := ia.srqFor(ep, owner)
		if s == nil {
			return Event{}, false
		}
		slot, ok = s.complete(owner, seq)
	}
	if !ok || slot.op == dtoMarker {
		return Event{}, false
	}
	status := dtoStatus(wc.Status)
	if slot.op == DTOReceive && (wc.Status == cverbs.WCLocQPOpErr || wc.Status == cverbs.WCRemInvReqErr) {
		// dat_ep_post_recv: "If the size of an incoming message is larger
		// than the size of the local_iov, the reported status ... is
		// DAT_DTO_LENGTH_ERROR." Some devices (Soft-RoCE among them)
		// report that case as a local QP operation error rather than a
		// local length error. The post-time checks rule out the other
		// causes of such an error on a receive (bad segments), so it is
		// reported as the length error it is.
		status = DTOLengthError
	}
	if status != DTOSuccess && status != DTOErrFlushed && ep != nil {
		ep.markBroken()
	}
	if slot.op == DTOBindMW {
		if slot.rmr != nil {
			slot.rmr.bindDone(status == DTOSuccess)
		}
		return Event{Number: EventRMRBindCompletion,
			RMR: RMRBindCompletionData{RMR: slot.rmr, Cookie: slot.cookie, Status: status}}, true
	}
	var n uint64
	if status == DTOSuccess {
		if slot.op == DTOReceive {
			n = uint64(wc.ByteLen)
		} else {
			n = slot.length
		}
	}
	return Event{Number: EventDTOCompletion,
		DTO: DTOCompletionData{EP: ep, Cookie: slot.cookie, Status: status, TransferredLength: n, Op: slot.op}}, true
}

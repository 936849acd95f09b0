package udat

import (
	"fmt"

	"github.com/udapl-go/udapl/cverbs"
)

// The checks of posting. Every check the man pages ask for is made before anything is
// posted, under the queue's ring lock, without allocating:
//
//   - a segment outside its LMR: DAT_INVALID_PARAMETER;
//   - an LMR of another PZ than the EP or SRQ: DAT_PROTECTION_VIOLATION;
//   - an unknown or freed LMR: DAT_PRIVILEGES_VIOLATION; one without the
//     local read privilege (sends, RDMA writes): DAT_PRIVILEGES_VIOLATION |
//     DAT_PRIVILEGES_READ; without local write (receives, RDMA reads):
//     DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_WRITE;
//   - more segments than the EP allows, unknown completion flags, or
//     CompletionUnsignalled on an EP not configured for it:
//     DAT_INVALID_PARAMETER;
//   - a DTO larger than the device carries (the port's max_msg_sz, which
//     EP.Query reports as MaxMessageSize and MaxRDMASize):
//     DAT_INVALID_PARAMETER, with the limit in the error text;
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
		l := ia.hotLMR(t.LMRContext) // inlined: no call on a hit
		if l == nil {
			l = ia.lookupLMRSlow(t.LMRContext)
		}
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
			return sge, lmrv, 0, newError(op, PrivilegesViolation|privSubtype(need))
		}
		sge = append(sge, cverbs.SGE{Addr: t.VirtualAddress, Length: t.SegmentLength, LKey: t.LMRContext})
		lmrv = append(lmrv, l)
		total += uint64(t.SegmentLength)
	}
	return sge, lmrv, total, nil
}

// privSubtype names the local privilege a DTO's segments lack:
// DAT_PRIVILEGES_READ for sends and RDMA writes, DAT_PRIVILEGES_WRITE for
// receives and RDMA reads.
func privSubtype(need MemPriv) Return {
	if need&MemPrivLocalWrite != 0 {
		return PrivilegesWrite
	}
	return PrivilegesRead
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

// maxIOV returns how many segments the EP allows a request of kind op.
func (ep *EP) maxIOV(op DTOOp) int {
	switch op {
	case DTORDMAWrite, DTOIBRDMAWriteImmed:
		return ep.attr.MaxRDMAWriteIOV
	case DTORDMARead:
		return ep.attr.MaxRDMAReadIOV
	}
	return ep.attr.MaxRequestIOV
}

// checkRequest makes the checks of the request's DAT call, in its order,
// and fills sge (room for the EP's most segments) with the segments to post
// and r.lmrv with their LMRs. It returns the bytes the DTO moves. Caller
// holds r.mu.
func (ep *EP) checkRequest(r *fifoRing, req *Request, sge []cverbs.SGE) ([]cverbs.SGE, uint64, error) {
	o := requestOpOf(req.Op)
	if o == nil || (req.WithImmed && req.Op != DTOSend) {
		return nil, 0, newError(requestName(req.Op), InvalidParameter|InvalidArg2)
	}
	flags := req.Flags
	if flags&^validRequestFlags != 0 || (!o.solicited && flags&CompletionSolicitedWait != 0) ||
		(flags&CompletionUnsignalled != 0 && ep.attr.RequestCompletionFlags&CompletionUnsignalled == 0) {
		return nil, 0, newError(o.name, InvalidParameter|o.flagArg)
	}
	if req.Op == DTOIBSendUD || ep.isUD() {
		if err := ep.checkUD(o, req); err != nil {
			return nil, 0, err
		}
	}
	if (req.Op == DTOIBRDMAWriteImmed || req.WithImmed) && !ep.ia.hasImmediate() {
		return nil, 0, newErrorDetail(o.name, ModelNotSupported, "the device carries no immediate data (DAT_IB_IMMED_DATA is FALSE)")
	}
	if len(req.LocalIOV) > ep.maxIOV(req.Op) {
		return nil, 0, newError(o.name, InvalidParameter|InvalidArg2)
	}
	if ep.reqEVD == nil {
		return nil, 0, newError(o.name, InvalidState|InvalidStateEPEVDRequest)
	}
	var total uint64
	var err error
	sge, r.lmrv, total, err = checkIOV(o.name, ep.ia, ep.pz, req.LocalIOV, o.need, sge, r.lmrv)
	if err != nil {
		return nil, 0, err
	}
	switch o.remote {
	case remoteFilled:
		if total < uint64(req.Remote.SegmentLength) {
			return nil, 0, newError(o.name, LengthError)
		}
		total = uint64(req.Remote.SegmentLength)
		sge, r.lmrv = trimSGE(sge, r.lmrv, total)
	case remoteCovers:
		if total > uint64(req.Remote.SegmentLength) {
			return nil, 0, newError(o.name, LengthError)
		}
	}
	switch req.Op {
	case DTOIBFetchAdd, DTOIBCmpSwap:
		if err := ep.checkAtomic(o, req, total); err != nil {
			return nil, 0, err
		}
	case DTOIBSendUD:
		if err := ep.checkUDSize(o, total); err != nil {
			return nil, 0, err
		}
	}
	if limit := ep.ia.maxMessageSize(); total > limit {
		return nil, 0, newErrorDetail(o.name, InvalidParameter|o.iovArg,
			fmt.Sprintf("%d bytes exceed the device's largest message, %d bytes (port max_msg_sz)", total, limit))
	}
	return sge, total, nil
}

// checkRecv makes the checks of dat_ep_post_recv that need no lock.
func (ep *EP) checkRecv(rv *Recv) error {
	if rv.Flags&^CompletionUnsignalled != 0 ||
		(rv.Flags&CompletionUnsignalled != 0 && ep.attr.RecvCompletionFlags&CompletionUnsignalled == 0) {
		return newError(recvOp, InvalidParameter|InvalidArg5)
	}
	if ep.srq != nil {
		return newError(recvOp, InvalidState)
	}
	if len(rv.LocalIOV) > ep.attr.MaxRecvIOV {
		return newError(recvOp, InvalidParameter|InvalidArg2)
	}
	if len(rv.LocalIOV) == 0 && !ep.ia.emptyRecvs() {
		return errNoEmptyRecv(recvOp)
	}
	if ep.recvEVD == nil {
		return newError(recvOp, InvalidState|InvalidStateEPEVDRecv)
	}
	return nil
}

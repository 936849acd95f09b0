package udat

import (
	"fmt"
	"unsafe"

	"github.com/udapl-go/udapl/cverbs"
)

// Posting. Every check the man pages ask for is made before anything is
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

// maxInline is the largest send or RDMA write posted inline (the C
// reference's default too).
const maxInline = 64

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

// Request is one send, RDMA write, RDMA read or IB extension DTO of a batch
// that EP.PostRequests posts. Its fields are the arguments of the call that
// posts it alone (dat_ep_post_send, dat_ep_post_rdma_write,
// dat_ep_post_rdma_read, and the extensions of ext_ib.go).
type Request struct {
	// Op is DTOSend, DTORDMAWrite, DTORDMARead, DTOIBRDMAWriteImmed,
	// DTOIBFetchAdd, DTOIBCmpSwap or, on a UD EP, DTOIBSendUD.
	Op       DTOOp
	LocalIOV []LMRTriplet
	Cookie   uint64
	Remote   RMRTriplet // RDMA and atomics
	Flags    CompletionFlags
	// Immed is the immediate data of DTOIBRDMAWriteImmed, and of a DTOSend
	// when WithImmed is set (PostSendImmed).
	Immed     uint32
	WithImmed bool
	AH        *IBAddrHandle // DTOIBSendUD: the peer (ud.go)
	Add       uint64        // DTOIBFetchAdd: the value added
	Compare   uint64        // DTOIBCmpSwap: the value compared
	Swap      uint64        // DTOIBCmpSwap: the value swapped in
}

// Recv is one receive of a batch that EP.PostRecvs posts: the arguments of
// dat_ep_post_recv.
type Recv struct {
	LocalIOV []LMRTriplet
	Cookie   uint64
	Flags    CompletionFlags
}

// PostSend sends the data of localIOV to the peer (dat_ep_post_send). The
// EP must be CONNECTED, or DISCONNECTED, in which case the send completes at
// once as flushed on the request EVD. cookie comes back in the completion
// event. flags combine CompletionSuppress, CompletionSolicitedWait,
// CompletionUnsignalled and CompletionBarrierFence. localIOV may be reused as
// soon as PostSend returns; the memory it names may not until the DTO
// completes. PostSend is safe for concurrent use.
func (ep *EP) PostSend(localIOV []LMRTriplet, cookie uint64, flags CompletionFlags) error {
	if ep.postFast(DTOSend, localIOV, cookie, &noRemote, flags) {
		return nil
	}
	return ep.postOne(&Request{Op: DTOSend, LocalIOV: localIOV, Cookie: cookie, Flags: flags})
}

// PostRDMAWrite writes the data of localIOV to remote, a buffer of the peer
// (dat_ep_post_rdma_write). The rules of PostSend apply; a remote buffer
// shorter than localIOV gives DAT_LENGTH_ERROR.
func (ep *EP) PostRDMAWrite(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	if ep.postFast(DTORDMAWrite, localIOV, cookie, &remote, flags) {
		return nil
	}
	return ep.postOne(&Request{Op: DTORDMAWrite, LocalIOV: localIOV, Cookie: cookie, Remote: remote, Flags: flags})
}

// PostRDMARead reads remote, a buffer of the peer, into localIOV
// (dat_ep_post_rdma_read). The segments are filled in order: the front ones
// completely, at most one partly, the rest not at all. A local buffer shorter
// than remote gives DAT_LENGTH_ERROR; the local LMRs need the local write
// privilege. Otherwise the rules of PostSend apply.
func (ep *EP) PostRDMARead(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	if ep.postFast(DTORDMARead, localIOV, cookie, &remote, flags) {
		return nil
	}
	return ep.postOne(&Request{Op: DTORDMARead, LocalIOV: localIOV, Cookie: cookie, Remote: remote, Flags: flags})
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

// requestOp describes one kind of request: the DAT call that posts it, its
// verb, the DAT_INVALID_ARG subtypes of its flags argument, of the argument
// that sets its size and of its remote buffer, and the local privilege its
// segments need.
type requestOp struct {
	name      string
	verb      cverbs.SendOp
	flagArg   Return
	iovArg    Return
	remoteArg Return
	need      MemPriv
}

var requestOps = [...]requestOp{
	DTOSend:             {"dat_ep_post_send", cverbs.OpSend, InvalidArg5, InvalidArg3, 0, MemPrivLocalRead},
	DTORDMAWrite:        {"dat_ep_post_rdma_write", cverbs.OpRDMAWrite, InvalidArg6, InvalidArg3, InvalidArg5, MemPrivLocalRead},
	DTORDMARead:         {"dat_ep_post_rdma_read", cverbs.OpRDMARead, InvalidArg6, InvalidArg5, InvalidArg5, MemPrivLocalWrite},
	DTOIBRDMAWriteImmed: {"dat_ib_post_rdma_write_immed", cverbs.OpRDMAWriteImm, InvalidArg7, InvalidArg3, InvalidArg5, MemPrivLocalRead},
	DTOIBFetchAdd:       {"dat_ib_post_fetch_and_add", cverbs.OpAtomicFetchAdd, InvalidArg6, InvalidArg3, InvalidArg5, MemPrivLocalWrite},
	DTOIBCmpSwap:        {"dat_ib_post_cmp_and_swap", cverbs.OpAtomicCmpSwap, InvalidArg7, InvalidArg4, InvalidArg6, MemPrivLocalWrite},
	DTOIBSendUD:         {"dat_ib_post_send_ud", cverbs.OpSend, InvalidArg6, InvalidArg3, InvalidArg4, MemPrivLocalRead},
}

// requestOpOf returns the description of requests of kind op, or nil if
// op is not one that PostRequests posts.
func requestOpOf(op DTOOp) *requestOp {
	if op < DTOOp(len(requestOps)) && requestOps[op].name != "" {
		return &requestOps[op]
	}
	return nil
}

// requestName is the DAT call that posts a request of kind op.
func requestName(op DTOOp) string {
	if o := requestOpOf(op); o != nil {
		return o.name
	}
	return "dat_ep_post_send"
}

// verb is the work request operation that carries req.
func (req *Request) verb(o *requestOp) cverbs.SendOp {
	if req.WithImmed && req.Op == DTOSend {
		return cverbs.OpSendImm
	}
	return o.verb
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
	// Only DTOs that reach the peer's receive queue can be solicited: not
	// RDMA reads or atomics, the requests that write local memory.
	if flags&^validRequestFlags != 0 || (o.need == MemPrivLocalWrite && flags&CompletionSolicitedWait != 0) ||
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
	switch req.Op {
	case DTORDMARead:
		if total < uint64(req.Remote.SegmentLength) {
			return nil, 0, newError(o.name, LengthError)
		}
		total = uint64(req.Remote.SegmentLength)
		sge, r.lmrv = trimSGE(sge, r.lmrv, total)
	case DTORDMAWrite, DTOIBRDMAWriteImmed:
		if total > uint64(req.Remote.SegmentLength) {
			return nil, 0, newError(o.name, LengthError)
		}
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

// postRequests checks reqs (at most the ring's batch) in order and posts
// the ones before the first that fails its checks, with one provider call.
// The work requests are built in place, in the QP's C arrays (a
// cverbs.SendBatch): the checks write the segments straight there. It
// returns how many it posted.
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
	var err error
	for ; k < len(reqs); k++ {
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
			r.reserveFlushed(req.Cookie, req.Op)
			continue
		}
		signaled := req.Flags&(CompletionSuppress|CompletionUnsignalled) == 0
		seq := r.reserve(req.Cookie, total, req.Op, signaled)
		if anyDead(r.lmrv) {
			r.unreserve()
			err = newError(o.name, PrivilegesViolation)
			break
		}
		if berr != nil {
			continue // checked and reserved; unreserved below
		}
		fence := req.Flags&CompletionBarrierFence != 0 && r.readsBefore(seq)
		if req.Op <= DTORDMARead || req.Op == DTOIBRDMAWriteImmed {
			// Sends, RDMA writes and reads: straight into the descriptor.
			if serr := b.SetOne(k, makeWRID(r.owner, wrKindSend, seq), req.verb(o), ep.sendFlags(req, o, total, signaled, fence),
				sge, req.Remote.VirtualAddress, req.Remote.RMRContext, daplImmed(req.Immed)); serr != nil {
				r.unreserve()
				err = verbsErr(o.name, serr, InsufficientResources)
				break
			}
			continue
		}
		wr := cverbs.SendWR{ID: makeWRID(r.owner, wrKindSend, seq), Op: req.verb(o), Flags: ep.sendFlags(req, o, total, signaled, fence),
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
	n, perr := b.Post(k)
	if perr != nil || n != k {
		for i := n; i < k; i++ {
			r.unreserve()
		}
		r.mu.Unlock()
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
	} else if total > 0 && total <= ep.maxInline && o.need == MemPrivLocalRead { // sends and RDMA writes
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

const recvOp = "dat_ep_post_recv"

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
			r.reserveFlushed(rv.Cookie, ep.recvOp()) // see reportFlushed
			continue
		}
		seq := r.reserve(rv.Cookie, total, ep.recvOp(), true)
		if anyDead(r.lmrv) {
			r.unreserve()
			err = newError(recvOp, PrivilegesViolation)
			break
		}
		r.rwr[k] = cverbs.RecvWR{ID: makeWRID(r.owner, wrKindRecv, seq), SGL: sge}
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

// deliver turns one work completion into the events it reports and queues
// them: the completion of its DTO, and on a FIFO queue those of later DTOs
// flushed at post time that were waiting for it. Stale completions (of a
// queue reset or destroyed since) and those of unsignalled DTOs and flush
// markers report nothing. The usual completion (fifoRing.usualHead) is
// queued here, as the DTO data of its event; deliverOther takes the rest.
// Caller holds e.mu.
func (e *EVD) deliver(wc *cverbs.WC) {
	owner, kind, seq := splitWRID(wc.WRID)
	ep := e.ia.hotEP(wc.QPNum) // inlined: no call on a hit
	if ep == nil || wc.Status != cverbs.WCSuccess || e.qn == len(e.q) || (kind != wrKindSend && kind != wrKindRecv) {
		e.deliverOther(wc)
		return
	}
	r := ep.sq
	if kind == wrKindRecv {
		r = ep.rq
	}
	r.mu.Lock()
	s := r.usualHead(owner, seq)
	if s == nil || s.op == DTOReceive && (wc.Opcode == cverbs.WCRecvRDMAWithImm || wc.Flags&cverbs.WCFlagWithImm != 0) {
		r.mu.Unlock() // not the usual completion, or an extended receive (ext_ib.go)
		e.deliverOther(wc)
		return
	}
	n := s.length // sent or written; read: all it asked for
	if s.op == DTOReceive {
		n = uint64(wc.ByteLen)
	}
	// popLocked makes the event from its number and DTO data alone.
	p := e.tailLocked()
	p.Number = EventDTOCompletion
	p.DTO = DTOCompletionData{EP: ep, Cookie: s.cookie, Status: DTOSuccess, TransferredLength: n, Op: s.op}
	e.qn++
	r.popUsual(s)
	r.mu.Unlock()
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
	if kind != wrKindSend && (wc.Status == cverbs.WCLocQPOpErr || wc.Status == cverbs.WCRemInvReqErr) {
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

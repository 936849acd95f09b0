package udat

import (
	"sync"
	"sync/atomic"

	"github.com/udapl-go/udapl/cverbs"
)

// SRQ is a Shared Receive Queue: receive buffers that any connected EP
// created with it (CreateEPWithSRQ) can consume. A receive completes on the
// receive EVD of the EP that consumed it, reported as that EP's DTO.
type SRQ struct {
	object
	ia     *IA
	pz     *PZ
	vsrq   *cverbs.SRQ
	ring   *poolRing
	maxIOV int

	// depth is the number of receives the SRQ can hold, which the CQs of
	// its EPs' receive EVDs make room for (see cqsize.go).
	depth atomic.Int32

	mu      sync.Mutex
	maxRecv int // max_recv_dtos
	hwRecv  int // what the verbs SRQ holds
	lw      int // low watermark, 0: none
	armed   bool
	refs    int // EPs using the SRQ
}

// SRQAttr holds the attributes of an SRQ (DAT_SRQ_ATTR).
type SRQAttr struct {
	MaxRecvDTOs  int
	MaxRecvIOV   int
	LowWatermark int // 0: no low watermark event
}

// EventSRQLowWatermark is the event number of the asynchronous event that
// reports an SRQ's low watermark: DAT 2.0 has no number of its own for it, so
// the library uses DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR with
// Async.Handle the *SRQ and Async.Reason SRQLowWatermarkEvent
// (DAT_SRQ_LOW_WATERMARK_EVENT).
const EventSRQLowWatermark = EventAsyncErrorProviderInternalError

// CreateSRQ creates a Shared Receive Queue in pz (dat_srq_create).
func (ia *IA) CreateSRQ(pz *PZ, attr SRQAttr) (*SRQ, error) {
	const op = "dat_srq_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := pz.check(op); err != nil {
		return nil, err
	}
	if pz.ia != ia {
		return nil, badHandle(op, HandleTypePZ)
	}
	d := ia.devAttr
	if d.MaxSRQ == 0 {
		return nil, newError(op, ModelNotSupported)
	}
	if attr.MaxRecvIOV == 0 {
		attr.MaxRecvIOV = 1
	}
	if attr.MaxRecvDTOs <= 0 || (d.MaxSRQWR > 0 && attr.MaxRecvDTOs > d.MaxSRQWR) ||
		attr.MaxRecvIOV < 0 || (d.MaxSRQSGE > 0 && attr.MaxRecvIOV > d.MaxSRQSGE) ||
		attr.LowWatermark < 0 || attr.LowWatermark > attr.MaxRecvDTOs {
		return nil, newError(op, InvalidParameter|InvalidArg3)
	}
	vs, err := pz.pd.NewSRQ(cverbs.SRQInitAttr{MaxWR: attr.MaxRecvDTOs, MaxSGE: attr.MaxRecvIOV})
	if err != nil {
		return nil, verbsErr(op, err, InsufficientResources|ResourceSRQ)
	}
	s := &SRQ{object: liveObject(), ia: ia, pz: pz, vsrq: vs, ring: newPoolRing(attr.MaxRecvDTOs, attr.MaxRecvIOV),
		maxIOV: attr.MaxRecvIOV, maxRecv: attr.MaxRecvDTOs, hwRecv: attr.MaxRecvDTOs}
	s.depth.Store(int32(attr.MaxRecvDTOs))
	if !addChild(ia, ia.srqs, s) {
		vs.Close()
		return nil, badHandle(op, HandleTypeIA)
	}
	ia.mu.Lock()
	ia.srqByVer[vs] = s
	ia.srqByOwn[s.ring.owner] = s
	ia.mu.Unlock()
	pz.ref(1)
	if attr.LowWatermark > 0 {
		s.SetLW(attr.LowWatermark)
	}
	return s, nil
}

func (s *SRQ) check(op string) error {
	if s == nil || s.dead() {
		return badHandle(op, HandleTypeSRQ)
	}
	return nil
}

func (s *SRQ) ref(d int) {
	s.mu.Lock()
	s.refs += d
	s.mu.Unlock()
}

// PostRecv adds a receive buffer to the SRQ (dat_srq_post_recv). Any
// connected EP that uses the SRQ may consume it; the completion is reported
// on that EP's receive EVD, with that EP, as if the receive had been posted to
// it without CompletionUnsignalled. The checks of EP.PostRecv apply, with the
// SRQ's PZ. PostRecv is valid in every SRQ state and safe for concurrent use.
func (s *SRQ) PostRecv(localIOV []LMRTriplet, cookie uint64) error {
	if err := s.check(srqRecvOp); err != nil {
		return err
	}
	recvs := [1]Recv{{LocalIOV: localIOV, Cookie: cookie}}
	_, err := s.postRecvs(recvs[:])
	return err
}

// PostRecvs adds receive buffers to the SRQ in order, as PostRecv would one
// at a time, with the same checks and errors, but with one call into the
// provider for up to 128 of them. Their Flags must be CompletionDefault
// (SRQ receives always complete signalled). It returns how many were
// posted; when that is fewer than len(recvs), err tells why recvs[n] was
// not, and neither it nor any after it was posted. It is an extension of
// DAT and safe for concurrent use.
func (s *SRQ) PostRecvs(recvs []Recv) (int, error) {
	if err := s.check(srqRecvOp); err != nil {
		return 0, err
	}
	n := 0
	for n < len(recvs) {
		k, err := s.postRecvs(recvs[n:min(len(recvs), n+s.ring.batch)])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

const srqRecvOp = "dat_srq_post_recv"

// postRecvs checks recvs (at most the ring's batch) in order and posts the
// ones before the first that fails its checks, with one provider call.
func (s *SRQ) postRecvs(recvs []Recv) (int, error) {
	r := s.ring
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.dead() {
		return 0, badHandle(srqRecvOp, HandleTypeSRQ)
	}
	k := 0
	var err error
	for ; k < len(recvs); k++ {
		rv := &recvs[k]
		if rv.Flags != CompletionDefault {
			err = newError(srqRecvOp, InvalidParameter)
			break
		}
		if len(rv.LocalIOV) > s.maxIOV {
			err = newError(srqRecvOp, InvalidParameter|InvalidArg2)
			break
		}
		if len(rv.LocalIOV) == 0 && !s.ia.emptyRecvs() {
			err = errNoEmptyRecv(srqRecvOp)
			break
		}
		var sge []cverbs.SGE
		var total uint64
		if sge, r.lmrv, total, err = checkIOV(srqRecvOp, s.ia, s.pz, rv.LocalIOV, MemPrivLocalWrite, r.sgeSlot(k), r.lmrv); err != nil {
			break
		}
		if r.full() {
			err = newError(srqRecvOp, InsufficientResources)
			break
		}
		idx := r.reserve(rv.Cookie, total)
		if anyDead(r.lmrv) {
			r.release(idx)
			err = newError(srqRecvOp, PrivilegesViolation)
			break
		}
		r.rwr[k] = cverbs.RecvWR{ID: makeWRID(r.owner, wrKindSRQ, idx), SGL: sge}
	}
	if k == 0 {
		return 0, err
	}
	n, perr := s.vsrq.PostRecv(r.rwr[:k])
	if perr != nil || n != k {
		for i := n; i < k; i++ {
			_, _, idx := splitWRID(r.rwr[i].ID)
			r.release(idx)
		}
		return n, verbsErr(srqRecvOp, perr, InsufficientResources)
	}
	return k, err
}

// complete reports the completion of slot idx.
func (s *SRQ) complete(owner, idx uint32) (dtoSlot, bool) {
	s.ring.mu.Lock()
	defer s.ring.mu.Unlock()
	return s.ring.complete(owner, idx)
}

// srqFor finds the SRQ a completion belongs to: the consuming EP's, or, for
// an EP already destroyed, the SRQ with that ring owner.
func (ia *IA) srqFor(ep *EP, owner uint32) *SRQ {
	if ep != nil && ep.srq != nil && ep.srq.ring.owner == owner {
		return ep.srq
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	return ia.srqByOwn[owner]
}

// SRQParam is what dat_srq_query returns.
type SRQParam struct {
	IA                  *IA
	State               SRQState
	PZ                  *PZ
	MaxRecvDTOs         int
	MaxRecvIOV          int
	LowWatermark        int
	AvailableDTOCount   int // receives posted and not completed
	OutstandingDTOCount int // same: verbs cannot tell consumed buffers apart
}

// Query returns the SRQ's parameters (dat_srq_query).
func (s *SRQ) Query() (SRQParam, error) {
	if err := s.check("dat_srq_query"); err != nil {
		return SRQParam{}, err
	}
	s.ring.mu.Lock()
	n := s.ring.outstanding()
	s.ring.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return SRQParam{IA: s.ia, State: SRQStateOperational, PZ: s.pz, MaxRecvDTOs: s.maxRecv,
		MaxRecvIOV: s.maxIOV, LowWatermark: s.lw, AvailableDTOCount: n, OutstandingDTOCount: n}, nil
}

// Resize changes the number of receives the SRQ holds (dat_srq_resize).
// Posted receives are kept; a size below their number gives
// DAT_INVALID_STATE.
func (s *SRQ) Resize(maxRecvDTOs int) error {
	const op = "dat_srq_resize"
	if err := s.check(op); err != nil {
		return err
	}
	d := s.ia.devAttr
	if maxRecvDTOs <= 0 || (d.MaxSRQWR > 0 && maxRecvDTOs > d.MaxSRQWR) {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead() {
		return badHandle(op, HandleTypeSRQ)
	}
	if maxRecvDTOs > s.hwRecv {
		// The receive EVDs of the SRQ's EPs make room first, so that every
		// receive the SRQ can hold completes into a CQ with room for it.
		s.depth.Store(int32(maxRecvDTOs))
		if err := s.ia.refit(s); err != nil {
			s.depth.Store(int32(s.hwRecv))
			return newErrorDetail(op, InsufficientResources|ResourceSRQ, err.Error())
		}
		if err := s.vsrq.Resize(maxRecvDTOs); err != nil {
			s.depth.Store(int32(s.hwRecv))
			return verbsErr(op, err, InsufficientResources|ResourceSRQ)
		}
		s.hwRecv = maxRecvDTOs
	}
	// The EVDs' locks come before the ring's: take it only now.
	s.ring.mu.Lock()
	defer s.ring.mu.Unlock()
	if maxRecvDTOs < s.ring.outstanding() {
		return newError(op, InvalidState)
	}
	s.ring.resize(maxRecvDTOs)
	s.maxRecv = maxRecvDTOs
	if s.lw > s.maxRecv {
		s.lw = s.maxRecv
	}
	return nil
}

// SetLW sets the low watermark (dat_srq_set_lw): when fewer receives than
// lowWatermark remain on the SRQ, one asynchronous event (EventSRQLowWatermark,
// reason SRQLowWatermarkEvent) goes to the IA's async EVD. If fewer remain
// already, the event is generated at once. Each call arms one event; 0
// disarms.
func (s *SRQ) SetLW(lowWatermark int) error {
	const op = "dat_srq_set_lw"
	if err := s.check(op); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead() {
		return badHandle(op, HandleTypeSRQ)
	}
	if lowWatermark < 0 || lowWatermark > s.maxRecv {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	s.lw = lowWatermark
	s.armed = false
	if lowWatermark == 0 {
		s.vsrq.SetLimit(0)
		return nil
	}
	s.ring.mu.Lock()
	n := s.ring.outstanding()
	s.ring.mu.Unlock()
	if n < lowWatermark {
		s.vsrq.SetLimit(0)
		s.ia.postAsync(Event{Number: EventSRQLowWatermark, Async: AsyncErrorData{Handle: s, Reason: SRQLowWatermarkEvent}})
		return nil
	}
	if err := s.vsrq.SetLimit(lowWatermark); err != nil {
		return verbsErr(op, err, ModelNotSupported)
	}
	s.armed = true
	return nil
}

// limitReached handles IBV_EVENT_SRQ_LIMIT_REACHED (the verbs SRQ disarms
// itself).
func (s *SRQ) limitReached() {
	s.mu.Lock()
	fire := s.armed && !s.dead()
	s.armed = false
	s.mu.Unlock()
	if fire {
		s.ia.postAsync(Event{Number: EventSRQLowWatermark, Async: AsyncErrorData{Handle: s, Reason: SRQLowWatermarkEvent}})
	}
}

// Free destroys the SRQ (dat_srq_free). It fails with DAT_INVALID_STATE
// while an EP uses it. Receives still posted are discarded.
func (s *SRQ) Free() error {
	const op = "dat_srq_free"
	if err := s.check(op); err != nil {
		return err
	}
	s.mu.Lock()
	if s.refs > 0 {
		s.mu.Unlock()
		return newError(op, InvalidState|InvalidStateSRQInUse)
	}
	if s.freed.Swap(true) {
		s.mu.Unlock()
		return badHandle(op, HandleTypeSRQ)
	}
	s.mu.Unlock()
	s.ia.mu.Lock()
	delete(s.ia.srqByVer, s.vsrq)
	delete(s.ia.srqByOwn, s.ring.owner)
	s.ia.mu.Unlock()
	// A post under way finishes first; later ones find the handle freed.
	s.ring.mu.Lock()
	err := s.vsrq.Close()
	s.ring.releaseAll()
	s.ring.mu.Unlock()
	delChild(s.ia, s.ia.srqs, s)
	s.pz.ref(-1)
	if err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

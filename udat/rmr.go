package udat

import (
	"errors"
	"sync"
	"syscall"

	"github.com/udapl-go/udapl/cverbs"
)

// RMR is a Remote Memory Region: a memory window that exposes part of an LMR
// to the peer of one EP, with its own rmr_context. RMRs need memory window
// support in the device.
type RMR struct {
	object
	ia *IA
	pz *PZ
	mw *cverbs.MW

	mu      sync.Mutex
	lmr     *LMR // bound LMR (nil: unbound)
	pending *LMR // LMR of a bind in progress
	triplet LMRTriplet
	priv    MemPriv
	context uint32
}

// CreateRMR creates an unbound RMR in pz (dat_rmr_create). A device
// without memory windows gives DAT_MODEL_NOT_SUPPORTED.
func (pz *PZ) CreateRMR() (*RMR, error) {
	const op = "dat_rmr_create"
	if err := pz.check(op); err != nil {
		return nil, err
	}
	if pz.ia.devAttr.MaxMW == 0 {
		return nil, newError(op, ModelNotSupported)
	}
	mw, err := pz.pd.AllocMW()
	if err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			return nil, newError(op, ModelNotSupported)
		}
		return nil, verbsErr(op, err, InsufficientResources|ResourceMemoryRegion)
	}
	r := &RMR{object: liveObject(), ia: pz.ia, pz: pz, mw: mw, context: mw.RKey}
	pz.mu.Lock()
	pz.rmrs[r] = struct{}{}
	pz.mu.Unlock()
	pz.ia.count(IACounterRMRCreate)
	return r, nil
}

func (r *RMR) check(op string) error {
	if r == nil || r.dead() {
		return badHandle(op, HandleTypeRMR)
	}
	return nil
}

// Bind binds the RMR to triplet, a part of lmr, with privileges priv
// (MemPrivRemoteRead, MemPrivRemoteWrite), through ep (dat_rmr_bind, DAT 2.0
// form with lmr and va_type). It returns the new rmr_context at once; the
// bind completes with an EventRMRBindCompletion carrying cookie on the EP's
// request EVD. A triplet of length zero unbinds. ep must be CONNECTED.
func (r *RMR) Bind(lmr *LMR, triplet LMRTriplet, priv MemPriv, vaType VAType, ep *EP, cookie uint64, flags CompletionFlags) (uint32, error) {
	const op = "dat_rmr_bind"
	if err := r.check(op); err != nil {
		return 0, err
	}
	if err := ep.check(op); err != nil {
		return 0, err
	}
	unbind := triplet.SegmentLength == 0
	if !unbind {
		if err := lmr.check(op); err != nil {
			return 0, err
		}
		if lmr.pz != r.pz || ep.pz != r.pz {
			return 0, newError(op, ProtectionViolation)
		}
		off := triplet.VirtualAddress - lmr.va
		if triplet.LMRContext != lmr.lkey || triplet.VirtualAddress < lmr.va || off > lmr.length ||
			uint64(triplet.SegmentLength) > lmr.length-off {
			return 0, newError(op, InvalidParameter|InvalidArg3)
		}
	}
	if priv&^(MemPrivRemoteRead|MemPrivRemoteWrite|MemPrivLocalRead|MemPrivLocalWrite|MemPrivIBRemoteAtomic) != 0 {
		return 0, newError(op, InvalidParameter|InvalidArg4)
	}
	if vaType != VATypeVA {
		return 0, newError(op, InvalidParameter|InvalidArg5)
	}
	if flags&^(CompletionSuppress|CompletionUnsignalled|CompletionBarrierFence) != 0 {
		return 0, newError(op, InvalidParameter|InvalidArg8)
	}
	if ep.reqEVD == nil {
		return 0, newError(op, InvalidState|InvalidStateEPEVDRequest)
	}
	if s := ep.getState(); s != EPStateConnected {
		return 0, newError(op, InvalidState|stateSubtype(s))
	}
	if !unbind && priv&(MemPrivRemoteWrite|MemPrivIBRemoteAtomic) != 0 && lmr.priv&MemPrivLocalWrite == 0 {
		return 0, newError(op, PrivilegesViolation)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead() {
		return 0, badHandle(op, HandleTypeRMR)
	}
	if r.pending != nil {
		return 0, newError(op, InvalidState)
	}
	var acc cverbs.Access
	if priv&MemPrivRemoteRead != 0 {
		acc |= cverbs.AccessRemoteRead
	}
	if priv&MemPrivRemoteWrite != 0 {
		acc |= cverbs.AccessRemoteWrite
	}
	if priv&MemPrivIBRemoteAtomic != 0 {
		acc |= cverbs.AccessRemoteAtomic
	}
	var mr *cverbs.MR
	if !unbind {
		mr = lmr.mr
	} else if r.lmr != nil {
		mr = r.lmr.mr
	}
	q := ep.sq
	q.mu.Lock()
	// Checked again under the queue's lock: an EP being freed or broken is
	// DISCONNECTED before its queue is drained, so no bind is left behind.
	if ep.dead() {
		q.mu.Unlock()
		return 0, badHandle(op, HandleTypeEP)
	}
	s := ep.getState()
	if q.flushing {
		s = EPStateDisconnected // its QP already left the connection
	}
	if s != EPStateConnected {
		q.mu.Unlock()
		return 0, newError(op, InvalidState|stateSubtype(s))
	}
	if q.full() {
		q.mu.Unlock()
		return 0, newError(op, InsufficientResources)
	}
	seq := q.reserve(cookie, 0, DTOBindMW, true)
	q.setRMR(seq, r)
	key, err := ep.qp.BindMW(r.mw, mr, triplet.VirtualAddress, uint64(triplet.SegmentLength), acc,
		q.wrid(seq))
	if err != nil {
		q.unreserve()
		q.mu.Unlock()
		return 0, verbsErr(op, err, InsufficientResources)
	}
	q.mu.Unlock()
	if r.lmr != nil {
		r.lmr.rmrs.Add(-1)
		r.lmr = nil
	}
	if !unbind {
		lmr.rmrs.Add(1)
		r.pending = lmr
	}
	r.triplet, r.priv, r.context = triplet, priv, key
	return key, nil
}

// bindDone records the completion of a bind.
func (r *RMR) bindDone(ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		return
	}
	if ok {
		r.lmr = r.pending
	} else {
		r.pending.rmrs.Add(-1)
		r.triplet = LMRTriplet{}
	}
	r.pending = nil
}

// RMRParam is what dat_rmr_query returns.
type RMRParam struct {
	IA         *IA
	PZ         *PZ
	LMRTriplet LMRTriplet
	MemPriv    MemPriv
	RMRContext uint32
	VAType     VAType
}

// Query returns the RMR's parameters (dat_rmr_query).
func (r *RMR) Query() (RMRParam, error) {
	if err := r.check("dat_rmr_query"); err != nil {
		return RMRParam{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return RMRParam{IA: r.ia, PZ: r.pz, LMRTriplet: r.triplet, MemPriv: r.priv, RMRContext: r.context}, nil
}

// Free destroys the RMR (dat_rmr_free), unbinding it.
func (r *RMR) Free() error {
	const op = "dat_rmr_free"
	if err := r.check(op); err != nil {
		return err
	}
	r.mu.Lock()
	if r.freed.Swap(true) {
		r.mu.Unlock()
		return badHandle(op, HandleTypeRMR)
	}
	for _, l := range []*LMR{r.lmr, r.pending} {
		if l != nil {
			l.rmrs.Add(-1)
		}
	}
	r.lmr, r.pending = nil, nil
	r.mu.Unlock()
	r.pz.mu.Lock()
	delete(r.pz.rmrs, r)
	r.pz.mu.Unlock()
	r.ia.count(IACounterRMRFree)
	if err := r.mw.Close(); err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

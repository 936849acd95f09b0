//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"sync"
	"syscall"
	"unsafe"
)

// cgoSRQ is the state of an SRQ in the cgo build.
type cgoSRQ struct {
	// Lock order: mu, then rq.mu. Posting takes only rq.mu.
	mu  sync.Mutex
	srq *C.struct_ibv_srq
	pd  *PD
	rq  recvQueue
}

// NewSRQ creates a shared receive queue.
func (pd *PD) NewSRQ(a SRQInitAttr) (*SRQ, error) {
	const op = "ibv_create_srq"
	if a.MaxWR <= 0 || a.MaxSGE < 0 || a.Limit < 0 || a.MaxWR > 1<<24 || a.MaxSGE > 1<<10 || a.Limit > a.MaxWR {
		return nil, opErr(op, int(syscall.EINVAL))
	}
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	var wr, sge C.uint32_t
	csrq, err := C.cverbs_create_srq(p, C.uint32_t(a.MaxWR), C.uint32_t(a.MaxSGE), C.uint32_t(a.Limit), &wr, &sge)
	if csrq == nil {
		return nil, errnoErr(op, err)
	}
	srq := &SRQ{cgoSRQ{srq: csrq, pd: pd}}
	// Size the arrays by what was asked or granted, whichever is larger.
	if !srq.rq.alloc(max(int(wr), a.MaxWR), max(int(sge), a.MaxSGE)) {
		C.ibv_destroy_srq(csrq)
		return nil, opErr(op, int(syscall.ENOMEM))
	}
	srq.rq.rxe = findRXESRQ(csrq)
	srqRegistry.add(unsafe.Pointer(csrq), srq)
	return srq, nil
}

// cptr returns the C SRQ, or nil if srq is nil or closed.
func (srq *SRQ) cptr() *C.struct_ibv_srq {
	if srq == nil {
		return nil
	}
	srq.mu.Lock()
	defer srq.mu.Unlock()
	return srq.srq
}

func (srq *SRQ) lock(op string) (*C.struct_ibv_srq, error) {
	if srq == nil {
		return nil, closedErr(op)
	}
	srq.mu.Lock()
	if srq.srq == nil {
		srq.mu.Unlock()
		return nil, closedErr(op)
	}
	return srq.srq, nil
}

// Resize changes the SRQ's maximum number of outstanding WRs
// (ibv_modify_srq with IBV_SRQ_MAX_WR). Not all devices support it.
func (srq *SRQ) Resize(maxWR int) error {
	const op = "ibv_modify_srq(MAX_WR)"
	if maxWR <= 0 || maxWR > 1<<24 {
		return opErr(op, int(syscall.EINVAL))
	}
	c, err := srq.lock(op)
	if err != nil {
		return err
	}
	defer srq.mu.Unlock()
	// Posts wait: librxe maps the resized queue anew.
	srq.rq.mu.Lock()
	defer srq.rq.mu.Unlock()
	defer func() { srq.rq.rxe = findRXESRQ(c) }()
	if rc := C.cverbs_modify_srq(c, C.uint32_t(maxWR), 0, C.IBV_SRQ_MAX_WR); rc != 0 {
		return opErr(op, int(rc))
	}
	// Grow the posting arrays so a full queue can still go in one post.
	var wr, sge, lim C.uint32_t
	if C.cverbs_query_srq(c, &wr, &sge, &lim) != 0 {
		wr = C.uint32_t(maxWR)
	}
	if n := max(int(wr), maxWR); n > srq.rq.depth {
		var nq recvQueue
		if nq.alloc(n, srq.rq.maxSGE) {
			srq.rq.free()
			srq.rq.wrs, srq.rq.sges, srq.rq.depth, srq.rq.maxSGE = nq.wrs, nq.sges, nq.depth, nq.maxSGE
		}
	}
	return nil
}

// SetLimit sets the SRQ limit (IBV_SRQ_LIMIT): when the number of posted
// receives drops below it, EventSRQLimitReached is reported once and the
// limit disarms. 0 disarms it.
func (srq *SRQ) SetLimit(limit int) error {
	const op = "ibv_modify_srq(LIMIT)"
	if limit < 0 || limit > 1<<24 {
		return opErr(op, int(syscall.EINVAL))
	}
	c, err := srq.lock(op)
	if err != nil {
		return err
	}
	defer srq.mu.Unlock()
	return opErr(op, int(C.cverbs_modify_srq(c, 0, C.uint32_t(limit), C.IBV_SRQ_LIMIT)))
}

// Query returns the SRQ's current attributes.
func (srq *SRQ) Query() (SRQAttr, error) {
	const op = "ibv_query_srq"
	c, err := srq.lock(op)
	if err != nil {
		return SRQAttr{}, err
	}
	defer srq.mu.Unlock()
	var wr, sge, lim C.uint32_t
	if rc := C.cverbs_query_srq(c, &wr, &sge, &lim); rc != 0 {
		return SRQAttr{}, opErr(op, int(rc))
	}
	return SRQAttr{MaxWR: int(wr), MaxSGE: int(sge), Limit: int(lim)}, nil
}

// Close destroys the SRQ. It fails with EBUSY while QPs still use it.
func (srq *SRQ) Close() error {
	if srq == nil {
		return nil
	}
	srq.mu.Lock()
	defer srq.mu.Unlock()
	srq.rq.mu.Lock()
	defer srq.rq.mu.Unlock()
	if srq.srq == nil {
		return nil
	}
	c := srq.srq
	if rc := C.ibv_destroy_srq(c); rc != 0 {
		return opErr("ibv_destroy_srq", int(rc))
	}
	srq.srq = nil
	srq.rq.free()
	srqRegistry.del(unsafe.Pointer(c), srq)
	return nil
}

//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"errors"
	"sync"
	"syscall"
	"unsafe"
)

// cgoPD is the state of a PD in the cgo build.
type cgoPD struct {
	mu  sync.RWMutex // shared by users of pd, exclusive in Close
	pd  *C.struct_ibv_pd
	ctx *Context
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	const op = "ibv_alloc_pd"
	ctx, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	p, err := C.ibv_alloc_pd(ctx)
	if p == nil {
		return nil, errnoErr(op, err)
	}
	return &PD{cgoPD{pd: p, ctx: c}}, nil
}

// Context returns the device context the PD belongs to.
func (pd *PD) Context() *Context {
	if pd == nil {
		return nil
	}
	return pd.ctx
}

// Close deallocates the PD. It fails with EBUSY while objects made from it
// still exist, and the PD stays usable then.
func (pd *PD) Close() error {
	if pd == nil {
		return nil
	}
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.pd == nil {
		return nil
	}
	if rc := C.ibv_dealloc_pd(pd.pd); rc != 0 {
		return opErr("ibv_dealloc_pd", int(rc))
	}
	pd.pd = nil
	return nil
}

func (pd *PD) lock(op string) (*C.struct_ibv_pd, error) {
	if pd == nil {
		return nil, closedErr(op)
	}
	pd.mu.RLock()
	if pd.pd == nil {
		pd.mu.RUnlock()
		return nil, closedErr(op)
	}
	return pd.pd, nil
}

// cgoMR is the state of an MR in the cgo build.
type cgoMR struct {
	mu sync.Mutex
	mr *C.struct_ibv_mr
	pd *PD
}

// RegMR registers length bytes at addr. The memory must stay allocated and
// must not move until the MR is closed: use C memory, mmap'ed memory or Go
// memory kept alive and not moved (the Go heap does not move objects, but
// the caller must keep a reference).
func (pd *PD) RegMR(addr unsafe.Pointer, length int, access Access) (*MR, error) {
	const op = "ibv_reg_mr"
	if length < 0 || (addr == nil && length > 0) {
		return nil, opErr(op, int(syscall.EINVAL))
	}
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	// The address goes to C as an integer: the region is the caller's
	// memory, not a Go object cgo should inspect.
	m, err := C.cverbs_reg_mr(p, C.uintptr_t(uintptr(addr)), C.size_t(length), C.int(access))
	if m == nil {
		return nil, errnoErr(op, err)
	}
	return &MR{
		LKey:  uint32(m.lkey),
		RKey:  uint32(m.rkey),
		Addr:  uintptr(addr),
		Len:   length,
		cgoMR: cgoMR{mr: m, pd: pd},
	}, nil
}

// Close deregisters the MR.
func (mr *MR) Close() error {
	if mr == nil {
		return nil
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.mr == nil {
		return nil
	}
	if rc := C.ibv_dereg_mr(mr.mr); rc != 0 {
		return opErr("ibv_dereg_mr", int(rc))
	}
	mr.mr = nil
	return nil
}

// cgoMW is the state of an MW in the cgo build.
type cgoMW struct {
	mu sync.Mutex
	mw *C.struct_ibv_mw
	pd *PD
}

// AllocMW allocates a type 1 memory window. The error wraps EOPNOTSUPP when
// the device has no memory windows.
func (pd *PD) AllocMW() (*MW, error) {
	const op = "ibv_alloc_mw"
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	m, err := C.cverbs_alloc_mw(p)
	if m == nil {
		if errors.Is(err, syscall.ENOSYS) {
			err = syscall.EOPNOTSUPP
		}
		return nil, errnoErr(op, err)
	}
	return &MW{RKey: uint32(m.rkey), cgoMW: cgoMW{mw: m, pd: pd}}, nil
}

// Close deallocates the MW.
func (mw *MW) Close() error {
	if mw == nil {
		return nil
	}
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.mw == nil {
		return nil
	}
	if rc := C.ibv_dealloc_mw(mw.mw); rc != 0 {
		return opErr("ibv_dealloc_mw", int(rc))
	}
	mw.mw = nil
	return nil
}

// BindMW binds mw to [addr, addr+length) of mr with the given remote access
// through the send queue of qp (ibv_bind_mw, always signalled; the completion
// has opcode WCBindMW and ID wrID). It returns the window's new rkey, which is
// valid once the bind completes.
func (qp *QP) BindMW(mw *MW, mr *MR, addr uint64, length uint64, access Access, wrID uint64) (rkey uint32, err error) {
	const op = "ibv_bind_mw"
	if qp == nil || mw == nil || mr == nil {
		return 0, closedErr(op)
	}
	mw.mu.Lock()
	defer mw.mu.Unlock()
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mw.mw == nil || mr.mr == nil {
		return 0, closedErr(op)
	}
	qp.sq.mu.Lock()
	defer qp.sq.mu.Unlock()
	if qp.qp == nil {
		return 0, closedErr(op)
	}
	var k C.uint32_t
	if rc := C.cverbs_bind_mw(qp.qp, mw.mw, mr.mr, C.uint64_t(addr), C.uint64_t(length),
		C.uint(access), C.uint64_t(wrID), &k); rc != 0 {
		return 0, opErr(op, int(rc))
	}
	mw.RKey = uint32(k)
	return mw.RKey, nil
}

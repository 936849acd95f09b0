package udat

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/udapl-go/udapl/cverbs"
)

// LMRTriplet names a piece of registered memory in an I/O vector: the DAT 2.0
// DAT_LMR_TRIPLET. Its layout is that of struct ibv_sge. A zero
// SegmentLength makes the other two fields irrelevant: the segment is skipped.
type LMRTriplet struct {
	VirtualAddress uint64
	SegmentLength  uint32
	LMRContext     uint32
}

// RMRTriplet names a remote buffer for RDMA (DAT_RMR_TRIPLET, DAT 2.0 layout).
type RMRTriplet struct {
	VirtualAddress uint64
	SegmentLength  uint32
	RMRContext     uint32
}

// The DAT 2.0 triplet and the verbs scatter/gather element are the same
// structure; the library relies on it when it converts I/O vectors.
var _ = [1]struct{}{}[unsafe.Sizeof(LMRTriplet{})-unsafe.Sizeof(cverbs.SGE{})]
var _ = [1]struct{}{}[unsafe.Offsetof(LMRTriplet{}.LMRContext)-unsafe.Offsetof(cverbs.SGE{}.LKey)]

// LMR is a Local Memory Region: memory registered with the device.
type LMR struct {
	object
	ia     *IA
	pz     *PZ
	mr     *cverbs.MR
	buf    []byte
	mapped bool // buf comes from mmap and is unmapped at free
	pin    runtime.Pinner
	priv   MemPriv
	va     uint64
	length uint64
	lkey   uint32
	rkey   uint32

	rmrs atomic.Int32 // RMRs bound to this LMR
}

// CreateLMR registers buf, memory owned by the caller, as an LMR in pz
// (dat_lmr_create with DAT_MEM_TYPE_VIRTUAL). buf is pinned, so that the Go
// garbage collector never moves it, until the LMR is freed; the caller must
// not let go of it before. vaType must be VATypeVA (zero-based addressing is
// not supported).
func (ia *IA) CreateLMR(pz *PZ, buf []byte, priv MemPriv, vaType VAType) (*LMR, error) {
	const op = "dat_lmr_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := pz.check(op); err != nil {
		return nil, err
	}
	if pz.ia != ia {
		return nil, newError(op, InvalidHandle|InvalidHandlePZ)
	}
	if len(buf) == 0 {
		return nil, newError(op, InvalidParameter|InvalidArg3)
	}
	if err := checkPriv(op, priv, vaType); err != nil {
		return nil, err
	}
	l := &LMR{object: liveObject(), ia: ia, pz: pz, buf: buf, priv: priv}
	l.pin.Pin(&buf[0])
	if err := l.register(op); err != nil {
		l.pin.Unpin()
		return nil, err
	}
	return l, nil
}

// AllocLMR allocates length bytes of page-aligned memory outside the Go heap
// and registers it as an LMR in pz. Bytes returns the memory; it is unmapped
// when the LMR is freed.
func (ia *IA) AllocLMR(pz *PZ, length int, priv MemPriv) (*LMR, error) {
	const op = "dat_lmr_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := pz.check(op); err != nil {
		return nil, err
	}
	if pz.ia != ia {
		return nil, newError(op, InvalidHandle|InvalidHandlePZ)
	}
	if length <= 0 {
		return nil, newError(op, InvalidParameter|InvalidArg4)
	}
	if err := checkPriv(op, priv, VATypeVA); err != nil {
		return nil, err
	}
	buf, err := mapPages(length)
	if err != nil {
		return nil, newError(op, InsufficientResources|ResourceMemory)
	}
	l := &LMR{object: liveObject(), ia: ia, pz: pz, buf: buf, mapped: true, priv: priv}
	if err := l.register(op); err != nil {
		unmapPages(buf)
		return nil, err
	}
	return l, nil
}

func checkPriv(op string, priv MemPriv, vaType VAType) error {
	if priv&^(MemPrivAll|MemPrivIBRemoteAtomic) != 0 {
		return newError(op, InvalidParameter|InvalidArg6)
	}
	if vaType != VATypeVA {
		return newError(op, InvalidParameter|InvalidArg7)
	}
	return nil
}

// access maps DAT privileges to verbs access flags. Remote write needs local
// write in verbs; local read is always allowed. MemPrivIBRemoteAtomic (the
// IB extension) is IBV_ACCESS_REMOTE_ATOMIC.
func (ia *IA) access(priv MemPriv) cverbs.Access {
	var a cverbs.Access
	if priv&MemPrivLocalWrite != 0 {
		a |= cverbs.AccessLocalWrite
	}
	if priv&MemPrivRemoteWrite != 0 {
		a |= cverbs.AccessRemoteWrite | cverbs.AccessLocalWrite
	}
	if priv&MemPrivRemoteRead != 0 {
		a |= cverbs.AccessRemoteRead
	}
	if priv&MemPrivIBRemoteAtomic != 0 {
		a |= cverbs.AccessRemoteAtomic
	}
	return a
}

func (l *LMR) register(op string) error {
	acc := l.ia.access(l.priv)
	var mr *cverbs.MR
	var err error
	if l.ia.devAttr.MaxMW > 0 {
		// Allow memory windows (RMRs) over every LMR when the device has them.
		mr, err = l.pz.pd.RegMR(unsafe.Pointer(&l.buf[0]), len(l.buf), acc|cverbs.AccessMWBind)
	}
	if mr == nil {
		mr, err = l.pz.pd.RegMR(unsafe.Pointer(&l.buf[0]), len(l.buf), acc)
	}
	if err != nil {
		return verbsErr(op, err, InsufficientResources|ResourceMemoryRegion)
	}
	l.mr = mr
	l.va = uint64(uintptr(unsafe.Pointer(&l.buf[0])))
	l.length = uint64(len(l.buf))
	l.lkey, l.rkey = mr.LKey, mr.RKey
	l.pz.mu.Lock()
	l.pz.lmrs[l] = struct{}{}
	l.pz.mu.Unlock()
	l.ia.lmrMu.Lock()
	l.ia.lmrByKey[l.lkey] = l
	l.ia.lmrMu.Unlock()
	l.ia.count(IACounterLMRCreate)
	return nil
}

func (l *LMR) check(op string) error {
	if l == nil || l.dead() {
		return badHandle(op, HandleTypeLMR)
	}
	return nil
}

// Bytes returns the registered memory. It is nil for a nil LMR.
func (l *LMR) Bytes() []byte {
	if l == nil {
		return nil
	}
	return l.buf
}

// Context returns the lmr_context (the memory region's local key).
func (l *LMR) Context() uint32 {
	if l == nil {
		return 0
	}
	return l.lkey
}

// RMRContext returns the rmr_context that lets a peer access the whole LMR
// with RDMA, when it was created with a remote privilege.
func (l *LMR) RMRContext() uint32 {
	if l == nil {
		return 0
	}
	return l.rkey
}

// Triplet returns the LMR triplet for length bytes at offset off in the LMR.
// It does not check the bounds: posting does.
func (l *LMR) Triplet(off, length int) LMRTriplet {
	if l == nil {
		return LMRTriplet{}
	}
	return LMRTriplet{VirtualAddress: l.va + uint64(off), SegmentLength: uint32(length), LMRContext: l.lkey}
}

// RMRTriplet returns the RMR triplet a peer uses to reach length bytes at
// offset off in the LMR.
func (l *LMR) RMRTriplet(off, length int) RMRTriplet {
	if l == nil {
		return RMRTriplet{}
	}
	return RMRTriplet{VirtualAddress: l.va + uint64(off), SegmentLength: uint32(length), RMRContext: l.rkey}
}

// LMRParam is what dat_lmr_query returns.
type LMRParam struct {
	IA                *IA
	MemType           MemType
	Length            uint64
	PZ                *PZ
	MemPriv           MemPriv
	VAType            VAType
	LMRContext        uint32
	RMRContext        uint32
	RegisteredSize    uint64
	RegisteredAddress uint64
}

// Query returns the LMR's parameters (dat_lmr_query).
func (l *LMR) Query() (LMRParam, error) {
	if err := l.check("dat_lmr_query"); err != nil {
		return LMRParam{}, err
	}
	return LMRParam{IA: l.ia, Length: l.length, PZ: l.pz, MemPriv: l.priv, VAType: VATypeVA,
		LMRContext: l.lkey, RMRContext: l.rkey, RegisteredSize: l.length, RegisteredAddress: l.va}, nil
}

// Free deregisters the LMR (dat_lmr_free). It fails with
// DAT_INVALID_STATE | DAT_INVALID_STATE_LMR_IN_USE while an RMR is bound
// to it; Free first takes in the completions waiting in the device, among
// them a flushed bind's, which releases its RMR. DTOs still posted with the
// LMR do not hold it, as in C, where dat_lmr_free is ibv_dereg_mr: once it
// returns the device can no longer touch the memory, and each such DTO
// still completes exactly once, with its cookie, flushed when its queue
// is, or in error (a protection error) if the device reaches it first.
func (l *LMR) Free() error {
	const op = "dat_lmr_free"
	if err := l.check(op); err != nil {
		return err
	}
	if l.rmrs.Load() != 0 {
		l.ia.reap()
	}
	if !l.freed.CompareAndSwap(false, true) {
		return badHandle(op, HandleTypeLMR)
	}
	if l.rmrs.Load() != 0 { // bound meanwhile
		l.freed.Store(false)
		return newError(op, InvalidState|InvalidStateLMRInUse)
	}
	return l.destroy(op)
}

// reap takes in the completions waiting in the device for every EVD.
func (ia *IA) reap() {
	for _, e := range children(ia, ia.evds) {
		e.reap()
	}
}

func (l *LMR) forceFree() {
	if l.freed.CompareAndSwap(false, true) {
		l.destroy("dat_lmr_free")
	}
}

func (l *LMR) destroy(op string) error {
	l.ia.lmrMu.Lock()
	if l.ia.lmrByKey[l.lkey] == l {
		delete(l.ia.lmrByKey, l.lkey)
	}
	l.ia.lmrMu.Unlock()
	l.ia.forgetLMR(l)
	l.pz.mu.Lock()
	delete(l.pz.lmrs, l)
	l.pz.mu.Unlock()
	l.ia.count(IACounterLMRFree)
	err := l.mr.Close()
	if l.mapped {
		unmapPages(l.buf)
	} else {
		l.pin.Unpin()
	}
	l.buf = nil
	if err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

// SyncRDMARead makes the memory of segments ready to be read by a peer's RDMA
// read (dat_lmr_sync_rdma_read). Memory is coherent on the supported
// platforms, so it only checks its arguments.
func (ia *IA) SyncRDMARead(segments []LMRTriplet) error {
	return ia.syncSegments("dat_lmr_sync_rdma_read", segments)
}

// SyncRDMAWrite makes data a peer wrote with RDMA into segments visible to
// the Consumer (dat_lmr_sync_rdma_write); see SyncRDMARead.
func (ia *IA) SyncRDMAWrite(segments []LMRTriplet) error {
	return ia.syncSegments("dat_lmr_sync_rdma_write", segments)
}

func (ia *IA) syncSegments(op string, segs []LMRTriplet) error {
	if err := ia.check(op); err != nil {
		return err
	}
	for _, s := range segs {
		if s.SegmentLength == 0 {
			continue
		}
		l := ia.lookupLMR(s.LMRContext)
		if l == nil || l.dead() {
			return newError(op, InvalidParameter|InvalidArg2)
		}
		if s.VirtualAddress < l.va || s.VirtualAddress-l.va+uint64(s.SegmentLength) > l.length {
			return newError(op, InvalidParameter|InvalidArg2)
		}
	}
	return nil
}

//go:build linux && cgo

package cverbs

/*
#define _GNU_SOURCE
#include "cverbs_rxe.h"
*/
import "C"

import (
	"math"
	"math/bits"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Soft-RoCE, posts and polls skip the cgo crossing and librxe: Go writes
// the work requests into the queues librxe shares with the kernel and reads
// the completions from them, in the kernel's layout, exactly as librxe does
// (include/cverbs_rxe.h says how the queues are found and checked). A
// 64-byte RDMA write then costs about a quarter fewer user-space instructions.
// Every other device, and any rxe queue that fails the checks, takes the
// verbs, as does an rdma-core release other than those of
// include/cverbs_rxe.h. UDAPL_RXE_DIRECT=0 in the environment turns the
// direct path off.
var rxeDirect = os.Getenv("UDAPL_RXE_DIRECT") != "0" && rxeRelease(rdmaCoreRelease)

// rdmaCoreRelease is the rdma-core release in use (0: not known).
var rdmaCoreRelease = int(C.cverbs_rdma_core_release())

// rxeRelease reports whether the direct path knows librxe's objects in
// rdma-core release r.
func rxeRelease(r int) bool { return r >= C.CVERBS_RXE_FIRST && r <= C.CVERBS_RXE_LAST }

// The SGE layout is struct rxe_sge's too: the direct path copies SGEs into
// work queue entries as they are.
var (
	_ [unsafe.Sizeof(SGE{}) - C.sizeof_struct_rxe_sge]struct{}
	_ [C.sizeof_struct_rxe_sge - unsafe.Sizeof(SGE{})]struct{}
	_ [unsafe.Offsetof(SGE{}.LKey) - unsafe.Offsetof(C.struct_rxe_sge{}.lkey)]struct{}
	_ [unsafe.Offsetof(C.struct_rxe_sge{}.lkey) - unsafe.Offsetof(SGE{}.LKey)]struct{}
	// wr.rdma and wr.atomic both start with the remote address (begin).
	_ [C.CVERBS_RXE_RDMA_ADDR - C.CVERBS_RXE_ATOMIC_ADDR]struct{}
	_ [C.CVERBS_RXE_ATOMIC_ADDR - C.CVERBS_RXE_RDMA_ADDR]struct{}
	// A CQ entry (struct ib_uverbs_wc) is copied into a WC as it is.
	_ [unsafe.Sizeof(WC{}) - C.sizeof_struct_ib_uverbs_wc]struct{}
	_ [C.sizeof_struct_ib_uverbs_wc - unsafe.Sizeof(WC{})]struct{}
)

// rxeQueue is a queue shared with the kernel's rxe driver: a struct
// rxe_queue_buf, whose header holds the slot count, the element size and
// the producer and consumer indexes. nil buf: the object takes the verbs.
type rxeQueue struct {
	buf  unsafe.Pointer
	mask uint32
	// size is the element size, a power of two: slot multiplies by it,
	// as a variable shift would tie up CX on amd64.
	size uint32
}

func newRXEQueue(q *C.struct_cverbs_rxe_queue) rxeQueue {
	h := (*C.struct_rxe_queue_buf)(q.buf)
	return rxeQueue{buf: q.buf, mask: uint32(h.index_mask), size: 1 << (h.log2_elem_size & 31)}
}

func (q *rxeQueue) producer() *uint32 { return (*uint32)(unsafe.Add(q.buf, C.CVERBS_RXE_PRODUCER)) }
func (q *rxeQueue) consumer() *uint32 { return (*uint32)(unsafe.Add(q.buf, C.CVERBS_RXE_CONSUMER)) }

// slot returns the element at index i.
func (q *rxeQueue) slot(i uint32) unsafe.Pointer {
	return unsafe.Add(q.buf, C.CVERBS_RXE_HEAD+uintptr(i)*uintptr(q.size))
}

// full reports whether the producer has no slot left (the index is ours,
// the consumer the kernel's).
func (q *rxeQueue) full(prod uint32) bool {
	return atomic.LoadUint32(q.consumer()) == (prod+1)&q.mask
}

// advance publishes the element at prod to the kernel.
func (q *rxeQueue) advance(prod uint32) {
	atomic.StoreUint32(q.producer(), (prod+1)&q.mask)
}

// at64 and at32 store a field of an element.
func at64(p unsafe.Pointer, off uintptr, v uint64) { *(*uint64)(unsafe.Add(p, off)) = v }
func at32(p unsafe.Pointer, off uintptr, v uint32) { *(*uint32)(unsafe.Add(p, off)) = v }

// startDMA sets a WQE's transfer state (struct rxe_dma_info) to its start:
// length bytes in segments segments, none moved yet.
func startDMA(p unsafe.Pointer, length, segments uint32) {
	dma := (*C.struct_rxe_dma_info)(p)
	dma.length, dma.resid, dma.cur_sge = C.__u32(length), C.__u32(length), 0
	dma.num_sge, dma.sge_offset = C.__u32(segments), 0
}

// cmem is the memory at a registered address, which the caller owns.
func cmem(addr uint64, n uint32) []byte {
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&addr)), n)
}

// copyInline copies the n bytes at addr into a WQE's inline area. From 16
// to 64 bytes (udat's inline sizes) it moves them as two overlapping runs
// of 8-byte words, which the compiler keeps in registers:
// runtime.memmove's dispatch by size cost more than the copy. putSGE makes
// the same copy in place.
func copyInline(dst unsafe.Pointer, addr uint64, n uint32) {
	src := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	switch {
	case n >= 32 && n <= 64:
		copy32(dst, src)
		copy32(unsafe.Add(dst, n-32), unsafe.Add(src, n-32))
	case n >= 16 && n < 32:
		copy16(dst, src)
		copy16(unsafe.Add(dst, n-16), unsafe.Add(src, n-16))
	default:
		copyWords(dst, src, n)
	}
}

// copyWords copies n bytes from src to dst a word at a time, then a byte
// at a time, without a call: copyInline's other sizes.
func copyWords(dst, src unsafe.Pointer, n uint32) {
	for ; n >= 8; n -= 8 {
		*(*uint64)(dst) = *(*uint64)(src)
		dst, src = unsafe.Add(dst, 8), unsafe.Add(src, 8)
	}
	for ; n > 0; n-- {
		*(*byte)(dst) = *(*byte)(src)
		dst, src = unsafe.Add(dst, 1), unsafe.Add(src, 1)
	}
}

func copy16(dst, src unsafe.Pointer) {
	a, b := *(*uint64)(src), *(*uint64)(unsafe.Add(src, 8))
	*(*uint64)(dst), *(*uint64)(unsafe.Add(dst, 8)) = a, b
}

func copy32(dst, src unsafe.Pointer) {
	copy16(dst, src)
	copy16(unsafe.Add(dst, 16), unsafe.Add(src, 16))
}

// rxeSend is an RC QP's send queue on rxe. A batch's work requests are
// written straight into their slots, after the producer index, as they are
// set; Post publishes them and rings the doorbell.
type rxeSend struct {
	rxeQueue
	ssn       *uint32        // librxe's send sequence counter (rdma-core 44); nil when its WQEs have none
	doorbell  unsafe.Pointer // struct cverbs_doorbell, in C memory
	fd        uintptr
	maxSGE    uint32
	maxInline uint32
	// room is how many slots after the producer index were free when last
	// looked at: the kernel only frees more.
	room uint32
	// failed is the first work request of the batch that librxe's
	// post_one_send refuses: Post stops there, and no request after it is
	// written, as none is in librxe.
	failed rxeFailure
}

// rxeFailure is a work request of a batch that librxe refuses.
type rxeFailure struct {
	at  int // its index; math.MaxInt: none
	err syscall.Errno
	// written: librxe wrote and numbered it before it found the queue
	// full.
	written bool
}

// findRXESend finds qp's send queue on rxe (the zero rxeSend when the QP
// takes the verbs).
func findRXESend(qp *C.struct_ibv_qp, c *QPCap) rxeSend {
	var q C.struct_cverbs_rxe_queue
	if !rxeDirect || c.MaxSendWR == 0 ||
		C.cverbs_rxe_send_queue(qp, C.uint32_t(c.MaxSendSGE), C.uint32_t(c.MaxInline), C.int(rdmaCoreRelease), &q) == 0 {
		return rxeSend{}
	}
	return rxeSend{rxeQueue: newRXEQueue(&q), ssn: (*uint32)(unsafe.Pointer(q.ssn)), doorbell: unsafe.Pointer(q.doorbell), fd: uintptr(q.fd),
		maxSGE: uint32(q.max_sge), maxInline: uint32(q.max_inline)}
}

func (s *rxeSend) free() {
	C.free(s.doorbell)
	*s = rxeSend{}
}

// wqe returns the slot of work request i of the batch, i slots after the
// producer index, and whether the queue is full there (librxe's
// queue_full: the slot can be written but not published). nil: the kernel
// still owns the slot.
func (s *rxeSend) wqe(i int) (unsafe.Pointer, bool) {
	prod := *s.producer() // only this side writes it, under the queue's lock
	if uint32(i) >= s.room {
		s.room = (atomic.LoadUint32(s.consumer()) - prod - 1) & s.mask
		if uint32(i) > s.room {
			return nil, true
		}
	}
	return s.slot((prod + uint32(i)) & s.mask), uint32(i) == s.room
}

// start begins a batch: no work request refused yet.
func (s *rxeSend) start() { s.failed = rxeFailure{at: math.MaxInt} }

// stopped reports whether work request i comes after one that failed: it
// is not written.
func (s *rxeSend) stopped(i int) bool { return i > s.failed.at }

// note records the outcome of writing work request i.
func (s *rxeSend) note(i int, rc syscall.Errno, written bool) {
	if rc != 0 {
		s.failed = rxeFailure{at: i, err: rc, written: written}
	}
}

// put writes descriptor d with segments sgl as work request i of the
// batch, as librxe's post_one_send does, with its checks and its errors.
// written: the slot was written (even if the queue turned out full).
func (s *rxeSend) put(i int, d *C.struct_cverbs_send_desc, sgl []SGE) (rc syscall.Errno, written bool) {
	if uint32(len(sgl)) > s.maxSGE {
		return syscall.EINVAL, false
	}
	var length uint32
	for j := range sgl {
		length += sgl[j].Length
	}
	opcode, flags, remoteAddr := uint32(d.opcode), uint32(d.send_flags), uint64(d.remote_addr)
	atomicOp := opcode == C.IBV_WR_ATOMIC_CMP_AND_SWP || opcode == C.IBV_WR_ATOMIC_FETCH_AND_ADD
	if atomicOp && (length < 8 || remoteAddr&7 != 0) {
		return syscall.EINVAL, false
	}
	inline := flags&C.IBV_SEND_INLINE != 0
	if inline && length > s.maxInline {
		return syscall.EINVAL, false
	}
	w, full := s.begin(i, uint64(d.wr_id), opcode, flags, uint32(d.imm), remoteAddr)
	if w == nil {
		return syscall.ENOMEM, false
	}
	switch opcode {
	case C.IBV_WR_RDMA_WRITE, C.IBV_WR_RDMA_WRITE_WITH_IMM, C.IBV_WR_RDMA_READ:
		at32(w, C.CVERBS_RXE_RDMA_RKEY, uint32(d.rkey))
	case C.IBV_WR_ATOMIC_CMP_AND_SWP, C.IBV_WR_ATOMIC_FETCH_AND_ADD:
		at64(w, C.CVERBS_RXE_ATOMIC_COMPARE, uint64(d.compare_add))
		at64(w, C.CVERBS_RXE_ATOMIC_SWAP, uint64(d.swap))
		at32(w, C.CVERBS_RXE_ATOMIC_RKEY, uint32(d.rkey))
	}
	payload := unsafe.Add(w, C.CVERBS_RXE_SEND_SGE)
	switch {
	case !inline:
		copySGL(unsafe.Slice((*SGE)(payload), len(sgl)), sgl)
	case len(sgl) == 1: // the usual inline request, in one move
		copyInline(payload, sgl[0].Addr, length)
	default:
		data := unsafe.Slice((*byte)(payload), length)
		for j := range sgl {
			data = data[copy(data, cmem(sgl[j].Addr, sgl[j].Length)):]
		}
	}
	return s.finish(w, i, full, length, len(sgl)), true
}

// putSGE is put for the usual work request, i of the batch: a send, RDMA
// write or RDMA read of one segment without immediate data (SetSGE,
// PostSendOne). i comes last, so that PostSendOne, whose arguments are the
// others in this order, passes them on in the registers they came in.
func (s *rxeSend) putSGE(id uint64, opcode, flags uint32, sge SGE, remoteAddr uint64, rkey uint32, i int) (rc syscall.Errno, written bool) {
	inline := flags&C.IBV_SEND_INLINE != 0
	if inline && sge.Length > s.maxInline {
		return syscall.EINVAL, false
	}
	w, full := s.wqe(i)
	if w == nil {
		return syscall.ENOMEM, false
	}
	// The payload first (it lies after the header), so that the segment's
	// registers are free for the rest; an inline one copied as copyInline
	// copies it, in place: with no call, putSGE keeps its values in
	// registers (23 instructions fewer per inline 64-byte write).
	payload := unsafe.Add(w, C.CVERBS_RXE_SEND_SGE)
	if !inline {
		*(*SGE)(payload) = sge
	} else if src, n := *(*unsafe.Pointer)(unsafe.Pointer(&sge.Addr)), sge.Length; n >= 32 && n <= 64 {
		copy32(payload, src)
		copy32(unsafe.Add(payload, n-32), unsafe.Add(src, n-32))
	} else if n >= 16 && n < 32 {
		copy16(payload, src)
		copy16(unsafe.Add(payload, n-16), unsafe.Add(src, n-16))
	} else {
		copyWords(payload, src, n)
	}
	fillHeader(w, id, opcode, flags, remoteAddr)
	if opcode != C.IBV_WR_SEND {
		at32(w, C.CVERBS_RXE_RDMA_RKEY, rkey)
	}
	return s.finish(w, i, full, sge.Length, 1), true
}

// begin starts work request i in its slot: fillHeader, then the immediate
// data. A nil slot: the kernel still owns it.
func (s *rxeSend) begin(i int, id uint64, opcode, flags, imm uint32, remoteAddr uint64) (unsafe.Pointer, bool) {
	w, full := s.wqe(i)
	if w == nil {
		return nil, true
	}
	fillHeader(w, id, opcode, flags, remoteAddr)
	at32(w, C.CVERBS_RXE_WR_IMM, bits.ReverseBytes32(imm))
	return w, full
}

// fillHeader writes the fields every work request has into its slot w, as
// librxe's convert_send_wr does: the request cleared, then its common
// fields. The remote address goes where RDMA operations and atomics both
// keep it (for a send, librxe copies it there too, into the WQE's iova).
func fillHeader(w unsafe.Pointer, id uint64, opcode, flags uint32, remoteAddr uint64) {
	*(*[C.CVERBS_RXE_SEND_WR_SIZE]byte)(w) = [C.CVERBS_RXE_SEND_WR_SIZE]byte{}
	at64(w, C.CVERBS_RXE_WR_ID, id)
	at32(w, C.CVERBS_RXE_WR_OPCODE, opcode)
	at32(w, C.CVERBS_RXE_WR_FLAGS, flags)
	if opcode != C.IBV_WR_SEND && opcode != C.IBV_WR_SEND_WITH_IMM {
		at64(w, C.CVERBS_RXE_RDMA_ADDR, remoteAddr)
	}
	at64(w, C.CVERBS_RXE_SEND_IOVA, remoteAddr)
}

// finish completes work request i, begun in slot w, with its transfer
// state and its number (*ssn counts the requests published: i more); in a
// full queue it stays unpublished (ENOMEM), as in librxe.
func (s *rxeSend) finish(w unsafe.Pointer, i int, full bool, length uint32, segments int) syscall.Errno {
	startDMA(unsafe.Add(w, C.CVERBS_RXE_SEND_DMA), length, uint32(segments))
	at32(w, C.CVERBS_RXE_SEND_STATE, 0)
	if s.ssn != nil {
		at32(w, C.CVERBS_RXE_SEND_SSN, *s.ssn+uint32(i))
	}
	if full {
		return syscall.ENOMEM
	}
	return 0
}

// publish hands the first n work requests of the batch to the kernel.
// librxe's count of numbered requests (rdma-core 44) takes them, and the
// next one too when librxe wrote it before it found the queue full
// (numberedNext).
func (s *rxeSend) publish(n int, numberedNext bool) {
	if s.ssn != nil {
		*s.ssn += uint32(n)
		if numberedNext {
			*s.ssn++
		}
	}
	if n > 0 {
		s.room -= uint32(n)
		atomic.StoreUint32(s.producer(), (*s.producer()+uint32(n))&s.mask)
	}
}

// ring tells the kernel that the send queue has new work: librxe's
// post_send_db, a POST_SEND command without work requests. The write does
// not block: rxe runs or schedules its requester and returns, so it goes
// without the scheduler's bookkeeping of a blocking system call, which
// would cost as much as the cgo crossing it replaces. It returns the
// write's result, doorbellRung or what doorbellErr turns into an errno:
// small enough to be inlined.
func (s *rxeSend) ring() uintptr {
	// RawSyscallNoError is the bare system call (syscall.RawSyscall wraps
	// it twice): the kernel's result is the count or -errno.
	n, _ := unix.RawSyscallNoError(unix.SYS_WRITE, s.fd, uintptr(s.doorbell), C.CVERBS_DOORBELL_LEN)
	return n
}

// doorbellRung is ring's result when the kernel took the doorbell.
const doorbellRung = C.CVERBS_DOORBELL_LEN

// doorbellErr is the error of a doorbell write that returned n: -errno, or
// a short count (EIO).
func doorbellErr(n uintptr) syscall.Errno {
	if int(n) < 0 {
		return syscall.Errno(-int(n))
	}
	return syscall.EIO
}

// post posts work requests 0 to n-1 of the batch, as Post does through the
// verbs: those before the first that failed, then the doorbell. It returns
// the index of the failed one (n if none) and the error, the doorbell's
// before a request's, as librxe does; when only the doorbell failed, the
// index is 0, as the verbs report it.
func (s *rxeSend) post(n int) (int, syscall.Errno) {
	bad, rc, written := n, syscall.Errno(0), false
	if f := s.failed; f.at < n {
		bad, rc, written = f.at, f.err, f.written
	}
	s.publish(bad, written)
	if db := s.ring(); db != doorbellRung {
		e := doorbellErr(db)
		if rc == 0 {
			bad = 0
		}
		return bad, e
	}
	return bad, rc
}

// rxeRecv is a QP's receive queue or an SRQ on rxe.
type rxeRecv struct {
	rxeQueue
	state  *C.enum_ibv_qp_state // a QP's; nil for an SRQ
	maxSGE uint32
}

// findRXERecv finds qp's own receive queue on rxe.
func findRXERecv(qp *C.struct_ibv_qp, c *QPCap) rxeRecv {
	var q C.struct_cverbs_rxe_queue
	if !rxeDirect || c.MaxRecvWR == 0 || C.cverbs_rxe_recv_queue(qp, C.uint32_t(c.MaxRecvSGE), &q) == 0 {
		return rxeRecv{}
	}
	return rxeRecv{rxeQueue: newRXEQueue(&q), state: q.state, maxSGE: uint32(q.max_sge)}
}

// findRXESRQ finds an SRQ's queue on rxe.
func findRXESRQ(srq *C.struct_ibv_srq) rxeRecv {
	var q C.struct_cverbs_rxe_queue
	if !rxeDirect || C.cverbs_rxe_srq_queue(srq, &q) == 0 {
		return rxeRecv{}
	}
	return rxeRecv{rxeQueue: newRXEQueue(&q), maxSGE: uint32(q.max_sge)}
}

// post posts receives 0 to n-1 of q as librxe's post_recv and post_srq_recv
// do, with their checks: it returns the index of the first that fails (n
// if none) and the error.
func (r *rxeRecv) post(q *recvQueue, n int) (int, syscall.Errno) {
	if r.reset() {
		return 0, syscall.EINVAL
	}
	for i := range q.wrs[:n] {
		// Set put at most q.maxSGE segments there.
		if rc := r.put(uint64(q.wrs[i].wr_id), q.sges[i*q.maxSGE:i*q.maxSGE+int(q.wrs[i].num_sge)]); rc != 0 {
			return i, rc
		}
	}
	return n, 0
}

// reset reports whether the queue is a QP's in the RESET state, which
// librxe's post_recv refuses.
func (r *rxeRecv) reset() bool { return r.state != nil && *r.state == C.IBV_QPS_RESET }

// put writes receive id of segments sgl after the producer index and
// publishes it, as librxe's post_one_recv does, with its checks.
func (r *rxeRecv) put(id uint64, sgl []SGE) syscall.Errno {
	prod := *r.producer()
	if r.full(prod) {
		return syscall.ENOMEM
	}
	if uint32(len(sgl)) > r.maxSGE {
		return syscall.EINVAL
	}
	w := r.slot(prod)
	at64(w, C.CVERBS_RXE_RECV_ID, id)
	var length uint32
	for j := range sgl {
		length += sgl[j].Length
	}
	copySGL(unsafe.Slice((*SGE)(unsafe.Add(w, C.CVERBS_RXE_RECV_SGE)), len(sgl)), sgl)
	startDMA(unsafe.Add(w, C.CVERBS_RXE_RECV_DMA), length, uint32(len(sgl)))
	r.advance(prod)
	return 0
}

// findRXECQ finds a CQ's queue on rxe.
func findRXECQ(cq *C.struct_ibv_cq) rxeQueue {
	var q C.struct_cverbs_rxe_queue
	if !rxeDirect || C.cverbs_rxe_cq_queue(cq, &q) == 0 {
		return rxeQueue{}
	}
	return newRXEQueue(&q)
}

// pollDirect moves up to len(wc) completions of the CQ's rxe queue into
// wc, as librxe's poll_cq does, with their immediate data in host byte
// order (immToHost); a CQ without one (or nil) it polls through the verbs
// (Poll). The caller keeps every other use of the CQ away (Poll and
// PollArm hold its lock; PollSerial's caller sees to it). PollSerial is
// inlined into its caller, which then calls the poll's loop itself.
func (cq *CQ) pollDirect(wc []WC) (int, error) {
	if cq == nil || cq.rxe.buf == nil {
		return cq.Poll(wc)
	}
	q := &cq.rxe
	prod := atomic.LoadUint32(q.producer())
	cons := *q.consumer() // only this side writes it, under the CQ's lock
	n := 0
	for n < len(wc) && cons != prod {
		w := &wc[n]
		*w = *(*WC)(q.slot(cons))
		if w.Flags&WCFlagWithImm != 0 {
			w.Imm = bits.ReverseBytes32(w.Imm)
		}
		cons = (cons + 1) & q.mask
		n++
	}
	if n > 0 {
		atomic.StoreUint32(q.consumer(), cons)
	}
	return n, nil
}

// Direct reports whether posts to the QP's send queue skip the verbs: the
// queue is Soft-RoCE's, written from Go.
func (qp *QP) Direct() bool {
	qp.sq.mu.Lock()
	defer qp.sq.mu.Unlock()
	return qp.sq.rxe.buf != nil
}

// Direct reports whether posts to the SRQ skip the verbs.
func (srq *SRQ) Direct() bool {
	srq.rq.mu.Lock()
	defer srq.rq.mu.Unlock()
	return srq.rq.rxe.buf != nil
}

// Direct reports whether polls of the CQ skip the verbs.
func (cq *CQ) Direct() bool {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.rxe.buf != nil
}

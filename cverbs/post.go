//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"math"
	"sync"
	"syscall"
	"unsafe"
)

// Compile-time checks that SGE and struct ibv_sge have the same layout: each
// array length goes negative (a compile error) if the two disagree.
var (
	_ [unsafe.Sizeof(SGE{}) - C.sizeof_struct_ibv_sge]struct{}
	_ [C.sizeof_struct_ibv_sge - unsafe.Sizeof(SGE{})]struct{}
	_ [unsafe.Offsetof(SGE{}.Length) - unsafe.Offsetof(C.struct_ibv_sge{}.length)]struct{}
	_ [unsafe.Offsetof(C.struct_ibv_sge{}.length) - unsafe.Offsetof(SGE{}.Length)]struct{}
	_ [unsafe.Offsetof(SGE{}.LKey) - unsafe.Offsetof(C.struct_ibv_sge{}.lkey)]struct{}
	_ [unsafe.Offsetof(C.struct_ibv_sge{}.lkey) - unsafe.Offsetof(SGE{}.LKey)]struct{}
)

// sgeLayout reports the C layout of struct ibv_sge (size and offsets of
// addr, length, lkey) so tests can compare it with SGE.
func sgeLayout() (size, addr, length, lkey uintptr) {
	var s C.struct_ibv_sge
	return unsafe.Sizeof(s), unsafe.Offsetof(s.addr), unsafe.Offsetof(s.length), unsafe.Offsetof(s.lkey)
}

// sendOpcodes maps SendOp to enum ibv_wr_opcode.
var sendOpcodes = [...]C.enum_ibv_wr_opcode{
	OpSend:           C.IBV_WR_SEND,
	OpSendImm:        C.IBV_WR_SEND_WITH_IMM,
	OpRDMAWrite:      C.IBV_WR_RDMA_WRITE,
	OpRDMAWriteImm:   C.IBV_WR_RDMA_WRITE_WITH_IMM,
	OpRDMARead:       C.IBV_WR_RDMA_READ,
	OpAtomicCmpSwap:  C.IBV_WR_ATOMIC_CMP_AND_SWP,
	OpAtomicFetchAdd: C.IBV_WR_ATOMIC_FETCH_AND_ADD,
}

// oneSegmentOps are the operations PostSendOne and SetSGE take.
var oneSegmentOps = [...]bool{OpSend: true, OpRDMAWrite: true, OpRDMARead: true}

// oneSegmentOp reports whether PostSendOne and SetSGE take op. Checked
// against the table's length, op then indexes sendOpcodes, which is
// longer, without a bounds check.
func (op SendOp) oneSegmentOp() bool {
	return int(op) < len(oneSegmentOps) && oneSegmentOps[op]
}

// sendQueue holds the C arrays a QP's send queue posts from. They are sized
// once (depth WRs, maxSGE SGEs per WR) and reused by every post: the provider
// copies WRs into its own queue inside ibv_post_send. Go writes descriptors
// and SGEs through slices over that C memory (SendBatch); the C side builds
// and links the WRs.
type sendQueue struct {
	mu     sync.Mutex
	mem    cArena // wrs, descs, sges and one
	wrs    *C.struct_ibv_send_wr
	descs  []C.struct_cverbs_send_desc
	sges   []SGE
	depth  int
	maxSGE int
	// ud: the QP is a UD QP, whose sends need an address handle and
	// whose only operations are sends: a send without one would have the
	// provider follow a null pointer.
	ud bool
	// one is PostSendOne's work request (depth > 0 and maxSGE > 0: the QP
	// can take it).
	one *C.struct_cverbs_one_wr
	// rxe is the queue itself on Soft-RoCE (rxe.go), posted to without
	// the verbs.
	rxe rxeSend
}

// cuptr passes a pointer to C memory as a uintptr_t: cgo checks pointer
// arguments for Go pointers on every call, which the data path can do
// without (see the note in cverbs.h).
func cuptr(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// cArena is one zeroed C allocation carved into a queue's arrays: a
// calloc and a free are each a cgo call, so a queue makes one of each, not
// one per array (connection setup creates and destroys a QP every time).
type cArena struct {
	size uint64 // not uintptr: a sum too large for C fails alloc, never wraps
	base unsafe.Pointer
}

// reserve makes room for n elements of size bytes, 16-byte aligned, and
// returns their offset. All reserves come before alloc.
func (a *cArena) reserve(n int, size uintptr) uintptr {
	off := (a.size + 15) &^ 15
	a.size = off + uint64(max(n, 0))*uint64(size)
	return uintptr(off)
}

// alloc allocates the room reserved, zeroed; false if C has no memory.
func (a *cArena) alloc() bool {
	if a.size > math.MaxInt/2 {
		return false
	}
	a.base = C.calloc(1, C.size_t(max(a.size, 1)))
	return a.base != nil
}

// free gives the memory back (nothing if alloc failed or never ran).
func (a *cArena) free() {
	C.free(a.base)
	*a = cArena{}
}

// arenaSlice is the n elements of type T at offset off of a's memory.
func arenaSlice[T any](a *cArena, off uintptr, n int) []T {
	return unsafe.Slice((*T)(unsafe.Add(a.base, off)), n)
}

// copySGL copies the segments src into dst, the usual one without
// runtime.memmove's call and dispatch by size, which cost more than
// copying 16 bytes.
func copySGL(dst, src []SGE) {
	if len(src) == 1 && len(dst) > 0 {
		dst[0] = src[0]
		return
	}
	copy(dst, src)
}

func (q *sendQueue) alloc(depth, maxSGE int) bool {
	var a cArena
	wrs := a.reserve(depth, C.sizeof_struct_ibv_send_wr)
	descs := a.reserve(depth, C.sizeof_struct_cverbs_send_desc)
	sges := a.reserve(depth*maxSGE, unsafe.Sizeof(SGE{}))
	one := depth > 0 && maxSGE > 0 // the QP can take PostSendOne's request
	oneOff := a.reserve(1, C.sizeof_struct_cverbs_one_wr)
	if !a.alloc() {
		return false
	}
	q.mem = a
	q.wrs = (*C.struct_ibv_send_wr)(unsafe.Add(a.base, wrs))
	q.descs = arenaSlice[C.struct_cverbs_send_desc](&a, descs, depth)
	q.sges = arenaSlice[SGE](&a, sges, depth*maxSGE)
	q.depth, q.maxSGE = depth, maxSGE
	if one {
		q.one = (*C.struct_cverbs_one_wr)(unsafe.Add(a.base, oneOff))
		q.one.wr.sg_list, q.one.wr.num_sge = &q.one.sge, 1
	}
	return true
}

func (q *sendQueue) free() {
	q.rxe.free()
	q.mem.free()
	q.wrs, q.one, q.descs, q.sges = nil, nil, nil, nil
	q.depth, q.maxSGE = 0, 0
}

// BeginSend takes the QP's send queue for a batch of at most Cap work
// requests.
func (qp *QP) BeginSend() (SendBatch, error) {
	const op = "ibv_post_send"
	if qp == nil {
		return SendBatch{}, closedErr(op)
	}
	qp.sq.mu.Lock()
	if qp.qp == nil {
		qp.sq.mu.Unlock()
		return SendBatch{}, closedErr(op)
	}
	qp.sq.rxe.start()
	return SendBatch{qp}, nil
}

// Cap returns how many work requests the batch holds: the send queue depth.
func (b SendBatch) Cap() int { return b.qp.sq.depth }

// SGL returns the room for the segments of work request i, MaxSendSGE long,
// in C memory: segments written there are posted without a copy.
func (b SendBatch) SGL(i int) []SGE {
	q := &b.qp.sq
	return q.sges[i*q.maxSGE : (i+1)*q.maxSGE]
}

// Set makes wr work request i of the batch. wr.SGL may lie in SGL(i);
// anywhere else it is copied there. An index beyond Cap, more segments
// than MaxSendSGE, an unknown operation, or one the QP's type does not
// take (on a UD QP, anything but a send with an address handle; on an RC
// QP, an address handle) gives EINVAL.
func (b SendBatch) Set(i int, wr *SendWR) error {
	const op = "ibv_post_send"
	q := &b.qp.sq
	if (wr.AH != nil) != q.ud || q.ud && wr.Op != OpSend && wr.Op != OpSendImm || !q.place(i, wr.Op, wr.SGL) {
		return opErr(op, int(syscall.EINVAL))
	}
	var ah C.uintptr_t
	if wr.AH != nil {
		if ah = C.uintptr_t(wr.AH.cptr()); ah == 0 {
			return closedErr(op) // a UD send to a destroyed AH
		}
	}
	q.descs[i] = C.struct_cverbs_send_desc{
		wr_id:       C.uint64_t(wr.ID),
		remote_addr: C.uint64_t(wr.RemoteAddr),
		compare_add: C.uint64_t(wr.CompareAdd),
		swap:        C.uint64_t(wr.Swap),
		ah:          ah,
		rkey:        C.uint32_t(wr.RKey),
		imm:         C.uint32_t(wr.Imm),
		remote_qpn:  C.uint32_t(wr.RemoteQPN),
		remote_qkey: C.uint32_t(wr.RemoteQKey),
		opcode:      C.uint32_t(sendOpcodes[wr.Op]),
		send_flags:  C.uint32_t(wr.Flags),
		num_sge:     C.int32_t(len(wr.SGL)),
	}
	q.putRXE(i, wr.SGL)
	return nil
}

// SetOne is Set for the usual work request, given field by field rather
// than as a SendWR: a send or RDMA write (with or without immediate data)
// or an RDMA read, with no address handle. Atomics take Set. The fields it
// leaves as they were (compare_add, swap, remote_qpn, remote_qkey) are read
// in C only for atomics and sends with an address handle. A UD QP's sends
// need one: SetOne on a UD QP gives EINVAL.
func (b SendBatch) SetOne(i int, id uint64, op SendOp, flags SendFlags, sgl []SGE, remoteAddr uint64, rkey, imm uint32) error {
	q := &b.qp.sq
	if q.ud || op == OpAtomicCmpSwap || op == OpAtomicFetchAdd || !q.place(i, op, sgl) {
		return opErr("ibv_post_send", int(syscall.EINVAL))
	}
	d := &q.descs[i]
	d.wr_id = C.uint64_t(id)
	d.remote_addr = C.uint64_t(remoteAddr)
	d.ah = 0
	d.rkey = C.uint32_t(rkey)
	d.imm = C.uint32_t(imm)
	d.opcode = C.uint32_t(sendOpcodes[op])
	d.send_flags = C.uint32_t(flags)
	d.num_sge = C.int32_t(len(sgl))
	q.putRXE(i, sgl)
	return nil
}

// putRXE writes descriptor i, with its segments sgl, into its slot on
// Soft-RoCE.
func (q *sendQueue) putRXE(i int, sgl []SGE) {
	if q.rxe.buf != nil && !q.rxe.stopped(i) {
		rc, written := q.rxe.put(i, &q.descs[i], sgl)
		q.rxe.note(i, rc, written)
	}
}

// SetSGE makes work request i of the batch a send, RDMA write or RDMA read
// of the one segment sge, without immediate data: the usual request, as
// PostSendOne posts it alone, written straight into the batch without a
// segment list to place. An index beyond Cap, a QP without send segments,
// any other operation or a UD QP gives EINVAL.
func (b SendBatch) SetSGE(i int, id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	q := &b.qp.sq
	if uint(i) >= uint(len(q.descs)) || q.maxSGE == 0 || q.ud || !op.oneSegmentOp() {
		return opErr("ibv_post_send", int(syscall.EINVAL))
	}
	if q.rxe.buf != nil {
		if !q.rxe.stopped(i) {
			rc, written := q.rxe.putSGE(id, uint32(sendOpcodes[op]), uint32(flags), sge, remoteAddr, rkey, i)
			q.rxe.note(i, rc, written)
		}
		return nil
	}
	q.sges[i*q.maxSGE] = sge
	d := &q.descs[i]
	d.wr_id, d.remote_addr, d.ah = C.uint64_t(id), C.uint64_t(remoteAddr), 0
	d.rkey, d.imm = C.uint32_t(rkey), 0
	d.opcode, d.send_flags, d.num_sge = C.uint32_t(sendOpcodes[op]), C.uint32_t(flags), 1
	return nil
}

// PostSendOne posts one send, RDMA write or RDMA read of one segment,
// signalled or not, with no immediate data and no address handle: the
// usual work request, written and posted with one ibv_post_send, without a
// batch. It takes no lock of its own: the caller serialises it with every
// other post to the send queue and with Close (udat's ring lock does), so
// that the usual post pays for one mutex, not two. Any other operation, a
// UD QP or a QP without a send queue gives EINVAL; a closed QP ErrClosed. A
// WR the provider queued although its doorbell failed is posted (see Post).
func (qp *QP) PostSendOne(id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	const name = "ibv_post_send"
	q := &qp.sq
	// An open RC QP's send queue on Soft-RoCE: Close clears buf, so the
	// closed QP is the case below.
	if q.rxe.buf != nil && op.oneSegmentOp() {
		rc, written := q.rxe.putSGE(id, uint32(sendOpcodes[op]), uint32(flags), sge, remoteAddr, rkey, 0)
		if rc != 0 {
			q.rxe.publish(0, written)
			if db := q.rxe.ring(); db != doorbellRung {
				rc = doorbellErr(db)
			}
			return opErr(name, int(rc))
		}
		// Posted: nothing of the refusal's case is kept across the doorbell.
		q.rxe.publish(1, false)
		if db := q.rxe.ring(); db != doorbellRung {
			return opErr(name, int(doorbellErr(db)))
		}
		return nil
	}
	if qp.qp == nil {
		return closedErr(name)
	}
	w := q.one
	if !op.oneSegmentOp() || q.ud || w == nil {
		return opErr(name, int(syscall.EINVAL))
	}
	w.wr.wr_id, w.wr.opcode, w.wr.send_flags = C.uint64_t(id), sendOpcodes[op], C.uint(flags)
	rdma := (*C.struct_cverbs_rdma)(unsafe.Pointer(&w.wr.wr))
	rdma.remote_addr, rdma.rkey = C.uint64_t(remoteAddr), C.uint32_t(rkey)
	w.sge.addr, w.sge.length, w.sge.lkey = C.uint64_t(sge.Addr), C.uint32_t(sge.Length), C.uint32_t(sge.LKey)
	if rc := C.cverbs_post_send_one(cuptr(unsafe.Pointer(qp.qp)), cuptr(unsafe.Pointer(w))); rc != 0 {
		return opErr(name, int(rc))
	}
	return nil
}

// place checks work request i's index, segment count and operation, and
// puts its segments in SGL(i) unless they lie there already.
func (q *sendQueue) place(i int, op SendOp, sgl []SGE) bool {
	n := len(sgl)
	if uint(i) >= uint(len(q.descs)) || n > q.maxSGE || uint(op) >= uint(len(sendOpcodes)) {
		return false
	}
	if n > 0 {
		if room := q.sges[i*q.maxSGE : i*q.maxSGE+n]; &room[0] != &sgl[0] {
			copySGL(room, sgl)
		}
	}
	return true
}

// Post posts work requests 0 to n-1 with one ibv_post_send and gives the
// send queue back. It returns how many were posted; when ibv_post_send
// fails, that is the index of the bad WR and err wraps the errno. WRs the
// provider queued although its doorbell failed (soft-iWARP:
// cverbs_queued_all in cverbs.h) are posted, and rung again until the
// kernel takes them or the QP leaves RTS: they complete.
func (b SendBatch) Post(n int) (int, error) {
	const op = "ibv_post_send"
	qp, q := b.qp, &b.qp.sq
	if n <= 0 || n > q.depth {
		q.mu.Unlock()
		if n > q.depth {
			return 0, opErr(op, int(syscall.ENOMEM))
		}
		return 0, nil
	}
	if q.rxe.buf != nil {
		bad, rc := q.rxe.post(n)
		q.mu.Unlock()
		if rc != 0 {
			return bad, opErr(op, int(rc))
		}
		return n, nil
	}
	res := C.cverbs_post_send(cuptr(unsafe.Pointer(qp.qp)), cuptr(unsafe.Pointer(q.wrs)),
		cuptr(unsafe.Pointer(unsafe.SliceData(q.descs))), cuptr(unsafe.Pointer(unsafe.SliceData(q.sges))), C.int(q.maxSGE), C.int(n))
	q.mu.Unlock()
	if res.rc != 0 {
		return int(res.bad), opErr(op, int(res.rc))
	}
	return n, nil
}

// Cancel gives the send queue back without posting.
func (b SendBatch) Cancel() { b.qp.sq.mu.Unlock() }

// recvQueue is the receive-side counterpart of sendQueue, used by QPs
// without an SRQ and by SRQs. Go writes each WR's wr_id and num_sge in
// place; the C side links the WRs and points them at their SGEs.
type recvQueue struct {
	mu     sync.Mutex
	mem    cArena // wrs and sges
	wrs    []C.struct_ibv_recv_wr
	sges   []SGE
	depth  int
	maxSGE int
	rxe    rxeRecv // the queue itself on Soft-RoCE (rxe.go)
}

func (q *recvQueue) alloc(depth, maxSGE int) bool {
	var a cArena
	wrs := a.reserve(depth, C.sizeof_struct_ibv_recv_wr)
	sges := a.reserve(depth*maxSGE, unsafe.Sizeof(SGE{}))
	if !a.alloc() {
		return false
	}
	q.mem = a
	q.wrs = arenaSlice[C.struct_ibv_recv_wr](&a, wrs, depth)
	q.sges = arenaSlice[SGE](&a, sges, depth*maxSGE)
	q.depth, q.maxSGE = depth, maxSGE
	return true
}

func (q *recvQueue) free() {
	q.rxe = rxeRecv{}
	q.mem.free()
	q.wrs, q.sges = nil, nil
	q.depth, q.maxSGE = 0, 0
}

// BeginRecv takes the QP's receive queue for a batch. A QP attached to an
// SRQ has no receive queue of its own: post to the SRQ instead (EINVAL).
func (qp *QP) BeginRecv() (RecvBatch, error) {
	const op = "ibv_post_recv"
	if qp == nil {
		return RecvBatch{}, closedErr(op)
	}
	qp.rq.mu.Lock()
	if qp.qp == nil {
		qp.rq.mu.Unlock()
		return RecvBatch{}, closedErr(op)
	}
	if qp.srq != nil {
		qp.rq.mu.Unlock()
		return RecvBatch{}, opErr(op, int(syscall.EINVAL))
	}
	return RecvBatch{qp: qp}, nil
}

// BeginRecv takes the SRQ's queue for a batch.
func (srq *SRQ) BeginRecv() (RecvBatch, error) {
	const op = "ibv_post_srq_recv"
	if srq == nil {
		return RecvBatch{}, closedErr(op)
	}
	srq.rq.mu.Lock()
	if srq.srq == nil {
		srq.rq.mu.Unlock()
		return RecvBatch{}, closedErr(op)
	}
	return RecvBatch{srq: srq}, nil
}

// queue is the C arrays the batch is built in.
func (b RecvBatch) queue() *recvQueue {
	if b.srq != nil {
		return &b.srq.rq
	}
	return &b.qp.rq
}

// Cap returns how many work requests the batch holds.
func (b RecvBatch) Cap() int { return b.queue().depth }

// SGL returns the room for the segments of work request i, in C memory.
func (b RecvBatch) SGL(i int) []SGE {
	q := b.queue()
	return q.sges[i*q.maxSGE : (i+1)*q.maxSGE]
}

// Set makes wr work request i of the batch, like SendBatch.Set.
func (b RecvBatch) Set(i int, wr *RecvWR) error {
	q := b.queue()
	n := len(wr.SGL)
	if uint(i) >= uint(len(q.wrs)) || n > q.maxSGE {
		return opErr(b.op(), int(syscall.EINVAL))
	}
	if n > 0 {
		if room := q.sges[i*q.maxSGE : i*q.maxSGE+n]; &room[0] != &wr.SGL[0] {
			copySGL(room, wr.SGL)
		}
	}
	w := &q.wrs[i]
	w.wr_id = C.uint64_t(wr.ID)
	w.num_sge = C.int(n)
	return nil
}

func (b RecvBatch) op() string {
	if b.srq != nil {
		return "ibv_post_srq_recv"
	}
	return "ibv_post_recv"
}

// Post posts work requests 0 to n-1 with one call and gives the queue back,
// like SendBatch.Post.
func (b RecvBatch) Post(n int) (int, error) {
	q := b.queue()
	if n <= 0 || n > q.depth {
		q.mu.Unlock()
		if n > q.depth {
			return 0, opErr(b.op(), int(syscall.ENOMEM))
		}
		return 0, nil
	}
	if q.rxe.buf != nil {
		bad, rc := q.rxe.post(q, n)
		q.mu.Unlock()
		if rc != 0 {
			return bad, opErr(b.op(), int(rc))
		}
		return n, nil
	}
	wrs, sges := cuptr(unsafe.Pointer(unsafe.SliceData(q.wrs))), cuptr(unsafe.Pointer(unsafe.SliceData(q.sges)))
	var res C.struct_cverbs_post_result
	if b.srq != nil {
		res = C.cverbs_post_srq_recv(cuptr(unsafe.Pointer(b.srq.srq)), wrs, sges, C.int(q.maxSGE), C.int(n))
	} else {
		res = C.cverbs_post_recv(cuptr(unsafe.Pointer(b.qp.qp)), wrs, sges, C.int(q.maxSGE), C.int(n))
	}
	q.mu.Unlock()
	if res.rc != 0 {
		return int(res.bad), opErr(b.op(), int(res.rc))
	}
	return n, nil
}

// Cancel gives the queue back without posting.
func (b RecvBatch) Cancel() { b.queue().mu.Unlock() }

// PostRecvOne posts one receive of the one segment sge to the QP's
// receive queue: the usual receive, written and posted with one
// ibv_post_recv, without a batch. Like PostSendOne it takes no lock: the
// caller serialises it with the queue's other posts and with Close. A QP
// attached to an SRQ or without a receive queue gives EINVAL; a closed QP
// ErrClosed.
func (qp *QP) PostRecvOne(id uint64, sge SGE) error {
	const name = "ibv_post_recv"
	q := &qp.rq
	if qp.qp == nil {
		return closedErr(name)
	}
	if qp.srq != nil || q.depth == 0 || q.maxSGE == 0 {
		return opErr(name, int(syscall.EINVAL))
	}
	var rc syscall.Errno
	if q.rxe.buf != nil {
		if rc = syscall.EINVAL; !q.rxe.reset() {
			rc = q.rxe.put(id, unsafe.Slice(&sge, 1))
		}
	} else {
		q.wrs[0].wr_id, q.wrs[0].num_sge = C.uint64_t(id), 1
		q.sges[0] = sge
		rc = syscall.Errno(C.cverbs_post_recv(cuptr(unsafe.Pointer(qp.qp)), cuptr(unsafe.Pointer(unsafe.SliceData(q.wrs))),
			cuptr(unsafe.Pointer(unsafe.SliceData(q.sges))), C.int(q.maxSGE), 1).rc)
	}
	return opErr(name, int(rc))
}

// PostSend posts wrs to the send queue and returns how many were posted:
// BeginSend, Set for each and Post. It does not allocate. More WRs than the
// send queue depth gives ENOMEM and more SGEs than MaxSendSGE gives EINVAL,
// both before anything is posted. When ibv_post_send fails, n is the index
// of the bad WR and err wraps the errno it returned. Safe for concurrent use.
func (qp *QP) PostSend(wrs []SendWR) (n int, err error) {
	b, err := qp.BeginSend()
	if err != nil {
		return 0, err
	}
	if len(wrs) > b.Cap() {
		b.Cancel()
		return 0, opErr("ibv_post_send", int(syscall.ENOMEM))
	}
	for i := range wrs {
		if err := b.Set(i, &wrs[i]); err != nil {
			b.Cancel()
			return 0, err
		}
	}
	return b.Post(len(wrs))
}

// PostRecv posts wrs to the QP's receive queue, like PostSend. A QP attached
// to an SRQ has no receive queue of its own: post to the SRQ instead.
func (qp *QP) PostRecv(wrs []RecvWR) (n int, err error) {
	b, err := qp.BeginRecv()
	if err != nil {
		return 0, err
	}
	return b.postAll(wrs)
}

// PostRecv posts wrs to the SRQ, like QP.PostSend.
func (srq *SRQ) PostRecv(wrs []RecvWR) (n int, err error) {
	b, err := srq.BeginRecv()
	if err != nil {
		return 0, err
	}
	return b.postAll(wrs)
}

// postAll sets wrs as the batch and posts them.
func (b RecvBatch) postAll(wrs []RecvWR) (int, error) {
	if len(wrs) > b.Cap() {
		b.Cancel()
		return 0, opErr(b.op(), int(syscall.ENOMEM))
	}
	for i := range wrs {
		if err := b.Set(i, &wrs[i]); err != nil {
			b.Cancel()
			return 0, err
		}
	}
	return b.Post(len(wrs))
}

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

// sendQueue holds the C arrays a QP's send queue posts from. They are sized
// once (depth WRs, maxSGE SGEs per WR) and reused by every post: the provider
// copies WRs into its own queue inside ibv_post_send.
type sendQueue struct {
	mu     sync.Mutex
	wrs    *C.struct_ibv_send_wr
	ext    *C.struct_cverbs_send_ext
	sges   *C.struct_ibv_sge
	depth  int
	maxSGE int
}

// cuptr passes a pointer to C memory as a uintptr_t: cgo checks pointer
// arguments for Go pointers on every call, which the data path can do
// without (see the note in cverbs.h).
func cuptr(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

func callocN(n int, size C.size_t) unsafe.Pointer {
	return C.calloc(C.size_t(max(n, 1)), size)
}

func (q *sendQueue) alloc(depth, maxSGE int) bool {
	q.wrs = (*C.struct_ibv_send_wr)(callocN(depth, C.sizeof_struct_ibv_send_wr))
	q.ext = (*C.struct_cverbs_send_ext)(callocN(depth, C.sizeof_struct_cverbs_send_ext))
	q.sges = (*C.struct_ibv_sge)(callocN(depth*maxSGE, C.sizeof_struct_ibv_sge))
	q.depth, q.maxSGE = depth, maxSGE
	if q.wrs == nil || q.ext == nil || q.sges == nil {
		q.free()
		return false
	}
	return true
}

func (q *sendQueue) free() {
	C.free(unsafe.Pointer(q.wrs))
	C.free(unsafe.Pointer(q.ext))
	C.free(unsafe.Pointer(q.sges))
	q.wrs, q.ext, q.sges = nil, nil, nil
	q.depth, q.maxSGE = 0, 0
}

// fill copies wrs into the C arrays and links them. It checks every WR
// before returning, so on error nothing has been posted.
func (q *sendQueue) fill(op string, wrs []SendWR) error {
	if len(wrs) > q.depth {
		return opErr(op, int(syscall.ENOMEM))
	}
	cw := unsafe.Slice(q.wrs, q.depth)
	ce := unsafe.Slice(q.ext, q.depth)
	cs := unsafe.Slice((*SGE)(unsafe.Pointer(q.sges)), q.depth*q.maxSGE)
	for i := range wrs {
		w := &wrs[i]
		if len(w.SGL) > q.maxSGE || int(w.Op) >= len(sendOpcodes) {
			return opErr(op, int(syscall.EINVAL))
		}
		c := &cw[i]
		c.wr_id = C.uint64_t(w.ID)
		c.next = nil
		c.sg_list = nil
		if n := len(w.SGL); n > 0 {
			base := i * q.maxSGE
			copy(cs[base:base+n], w.SGL)
			c.sg_list = (*C.struct_ibv_sge)(unsafe.Pointer(&cs[base]))
		}
		c.num_sge = C.int(len(w.SGL))
		c.opcode = sendOpcodes[w.Op]
		c.send_flags = C.uint(w.Flags)
		if i > 0 {
			cw[i-1].next = c
		}
		e := &ce[i]
		e.remote_addr = C.uint64_t(w.RemoteAddr)
		e.rkey = C.uint32_t(w.RKey)
		e.imm = C.uint32_t(w.Imm)
		e.compare_add = C.uint64_t(w.CompareAdd)
		e.swap = C.uint64_t(w.Swap)
		e.ah = C.uintptr_t(w.AH.cptr())
		e.remote_qpn = C.uint32_t(w.RemoteQPN)
		e.remote_qkey = C.uint32_t(w.RemoteQKey)
		if w.AH != nil && e.ah == 0 {
			return closedErr(op) // a UD send to a destroyed AH
		}
	}
	return nil
}

// recvQueue is the receive-side counterpart of sendQueue, used by QPs
// without an SRQ and by SRQs.
type recvQueue struct {
	mu     sync.Mutex
	wrs    *C.struct_ibv_recv_wr
	sges   *C.struct_ibv_sge
	depth  int
	maxSGE int
}

func (q *recvQueue) alloc(depth, maxSGE int) bool {
	q.wrs = (*C.struct_ibv_recv_wr)(callocN(depth, C.sizeof_struct_ibv_recv_wr))
	q.sges = (*C.struct_ibv_sge)(callocN(depth*maxSGE, C.sizeof_struct_ibv_sge))
	q.depth, q.maxSGE = depth, maxSGE
	if q.wrs == nil || q.sges == nil {
		q.free()
		return false
	}
	return true
}

func (q *recvQueue) free() {
	C.free(unsafe.Pointer(q.wrs))
	C.free(unsafe.Pointer(q.sges))
	q.wrs, q.sges = nil, nil
	q.depth, q.maxSGE = 0, 0
}

func (q *recvQueue) fill(op string, wrs []RecvWR) error {
	if len(wrs) > q.depth {
		return opErr(op, int(syscall.ENOMEM))
	}
	cw := unsafe.Slice(q.wrs, q.depth)
	cs := unsafe.Slice((*SGE)(unsafe.Pointer(q.sges)), q.depth*q.maxSGE)
	for i := range wrs {
		w := &wrs[i]
		if len(w.SGL) > q.maxSGE {
			return opErr(op, int(syscall.EINVAL))
		}
		c := &cw[i]
		c.wr_id = C.uint64_t(w.ID)
		c.next = nil
		c.sg_list = nil
		if n := len(w.SGL); n > 0 {
			base := i * q.maxSGE
			copy(cs[base:base+n], w.SGL)
			c.sg_list = (*C.struct_ibv_sge)(unsafe.Pointer(&cs[base]))
		}
		c.num_sge = C.int(len(w.SGL))
		if i > 0 {
			cw[i-1].next = c
		}
	}
	return nil
}

// PostSend posts wrs to the send queue and returns how many were posted.
// The WRs are copied into C arrays owned by the QP and posted with one cgo
// call; it does not allocate. More WRs than the send queue depth gives
// ENOMEM and more SGEs than MaxSendSGE gives EINVAL, both before anything is
// posted. When ibv_post_send fails, n is the index of the bad WR and err
// wraps the errno it returned. Safe for concurrent use.
func (qp *QP) PostSend(wrs []SendWR) (n int, err error) {
	const op = "ibv_post_send"
	if qp == nil {
		return 0, closedErr(op)
	}
	q := &qp.sq
	q.mu.Lock()
	if qp.qp == nil {
		q.mu.Unlock()
		return 0, closedErr(op)
	}
	if len(wrs) == 0 {
		q.mu.Unlock()
		return 0, nil
	}
	if err := q.fill(op, wrs); err != nil {
		q.mu.Unlock()
		return 0, err
	}
	res := C.cverbs_post_send(cuptr(unsafe.Pointer(qp.qp)), cuptr(unsafe.Pointer(q.wrs)), cuptr(unsafe.Pointer(q.ext)), C.int(len(wrs)))
	q.mu.Unlock()
	if res.rc != 0 {
		return int(res.bad), opErr(op, int(res.rc))
	}
	return len(wrs), nil
}

// PostRecv posts wrs to the QP's receive queue, like PostSend. A QP attached
// to an SRQ has no receive queue of its own: post to the SRQ instead.
func (qp *QP) PostRecv(wrs []RecvWR) (n int, err error) {
	const op = "ibv_post_recv"
	if qp == nil {
		return 0, closedErr(op)
	}
	q := &qp.rq
	q.mu.Lock()
	if qp.qp == nil {
		q.mu.Unlock()
		return 0, closedErr(op)
	}
	if qp.srq != nil {
		q.mu.Unlock()
		return 0, opErr(op, int(syscall.EINVAL))
	}
	if len(wrs) == 0 {
		q.mu.Unlock()
		return 0, nil
	}
	if err := q.fill(op, wrs); err != nil {
		q.mu.Unlock()
		return 0, err
	}
	res := C.cverbs_post_recv(cuptr(unsafe.Pointer(qp.qp)), cuptr(unsafe.Pointer(q.wrs)), C.int(len(wrs)))
	q.mu.Unlock()
	if res.rc != 0 {
		return int(res.bad), opErr(op, int(res.rc))
	}
	return len(wrs), nil
}

// PostRecv posts wrs to the SRQ, like QP.PostSend.
func (srq *SRQ) PostRecv(wrs []RecvWR) (n int, err error) {
	const op = "ibv_post_srq_recv"
	if srq == nil {
		return 0, closedErr(op)
	}
	q := &srq.rq
	q.mu.Lock()
	if srq.srq == nil {
		q.mu.Unlock()
		return 0, closedErr(op)
	}
	if len(wrs) == 0 {
		q.mu.Unlock()
		return 0, nil
	}
	if err := q.fill(op, wrs); err != nil {
		q.mu.Unlock()
		return 0, err
	}
	res := C.cverbs_post_srq_recv(cuptr(unsafe.Pointer(srq.srq)), cuptr(unsafe.Pointer(q.wrs)), C.int(len(wrs)))
	q.mu.Unlock()
	if res.rc != 0 {
		return int(res.bad), opErr(op, int(res.rc))
	}
	return len(wrs), nil
}

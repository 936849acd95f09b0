//go:build linux && cgo && udapl_fakedevice

package cverbs

/*
#define _GNU_SOURCE
#include <stdlib.h>
#include "cverbs_rxe.h"
*/
import "C"

import (
	"errors"
	"math/bits"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// FakeDevice is a connected RC QP and its CQs on a device made of memory,
// for the instruction guard of the data path (scripts/instr-guard.sh),
// which runs where there is no RDMA device. Its queues are Soft-RoCE's, in
// the kernel's layout: posts and polls take the direct path of rxe.go as
// they do on rxe0, and Complete does what the kernel's rxe would, without
// moving data. The QP is connected to itself: a send lands in its own
// receive queue. The doorbell is written to /dev/null. It exists only in
// builds with the udapl_fakedevice tag.
type FakeDevice struct {
	// QP takes sends, RDMA writes, RDMA reads and receives. Only Close
	// may close it.
	QP *QP
	// CQ takes the QP's send completions, RecvCQ its receive completions.
	CQ, RecvCQ *CQ

	sq, rq, cq, rcq rxeQueue
	null            *os.File
}

// fakeInline is the fake QP's largest inline request, Soft-RoCE's.
const fakeInline = 64

// NewFakeDevice makes a QP of QP number qpn whose send and receive queues
// each hold depth work requests of at most maxSGE segments, and its two
// CQs, of at least depth entries each.
func NewFakeDevice(depth, maxSGE int, qpn uint32) (*FakeDevice, error) {
	if depth < 1 || maxSGE < 1 {
		return nil, opErr("fake device", int(syscall.EINVAL))
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	// rxe rounds a queue up to a power of two slots, one of them kept
	// free, and each slot up to a power of two bytes.
	slots := 1 << bits.Len(uint(depth))
	sqe := C.sizeof_struct_rxe_send_wqe + max(maxSGE*C.sizeof_struct_rxe_sge, fakeInline)
	rqe := C.sizeof_struct_rxe_recv_wqe + maxSGE*C.sizeof_struct_rxe_sge
	cqe := uint32(bits.Len(uint(unsafe.Sizeof(WC{}) - 1)))
	d := &FakeDevice{
		sq:     newFakeQueue(slots, uint32(bits.Len(uint(sqe-1)))),
		rq:     newFakeQueue(slots, uint32(bits.Len(uint(rqe-1)))),
		cq:     newFakeQueue(slots, cqe),
		rcq:    newFakeQueue(slots, cqe),
		null:   null,
		QP:     &QP{},
		CQ:     &CQ{},
		RecvCQ: &CQ{},
	}
	qp := d.QP
	qp.qp = (*C.struct_ibv_qp)(C.calloc(1, C.sizeof_struct_ibv_qp)) // never given to the verbs
	qp.num = qpn
	qp.cap = QPCap{MaxSendWR: depth, MaxRecvWR: depth, MaxSendSGE: maxSGE, MaxRecvSGE: maxSGE, MaxInline: fakeInline}
	ok := qp.qp != nil && d.sq.buf != nil && d.rq.buf != nil && qp.sq.alloc(depth, maxSGE) && qp.rq.alloc(depth, maxSGE)
	for _, c := range []struct {
		cq *CQ
		q  rxeQueue
	}{{d.CQ, d.cq}, {d.RecvCQ, d.rcq}} {
		c.cq.cq = (*C.struct_ibv_cq)(C.calloc(1, C.sizeof_struct_ibv_cq))
		c.cq.cqe, c.cq.rxe = slots-1, c.q
		ok = ok && c.cq.cq != nil && c.q.buf != nil
	}
	if !ok {
		d.Close()
		return nil, opErr("fake device", int(syscall.ENOMEM))
	}
	qp.sq.rxe = rxeSend{rxeQueue: d.sq, ssn: new(uint32), doorbell: C.calloc(1, C.CVERBS_DOORBELL_LEN),
		fd: null.Fd(), maxSGE: uint32(maxSGE), maxInline: fakeInline}
	qp.rq.rxe = rxeRecv{rxeQueue: d.rq, maxSGE: uint32(maxSGE)}
	return d, nil
}

// newFakeQueue allocates an rxe queue of slots elements of 1<<shift bytes
// in C memory (nil buf: out of memory).
func newFakeQueue(slots int, shift uint32) rxeQueue {
	buf := C.calloc(1, C.size_t(C.CVERBS_RXE_HEAD+slots<<shift))
	h := (*C.struct_rxe_queue_buf)(buf)
	if buf != nil {
		h.log2_elem_size, h.index_mask = C.__u32(shift), C.__u32(slots-1)
	}
	return rxeQueue{buf: buf, mask: uint32(slots - 1), size: 1 << shift}
}

// wcOpcodes: the completion of each operation the fake QP takes.
var wcOpcodes = map[uint32]WCOpcode{
	C.IBV_WR_SEND:       WCSend,
	C.IBV_WR_RDMA_WRITE: WCRDMAWrite,
	C.IBV_WR_RDMA_READ:  WCRDMARead,
}

// Complete plays the kernel: it takes every send queue request posted
// since the last call, in order, and completes the signalled ones
// successfully on the CQ; a send also takes the oldest posted receive and
// completes it on RecvCQ. It returns how many send queue requests it took.
// A request the fake does not carry, a send without a receive posted or a
// full CQ is an error; the requests before it are taken.
func (d *FakeDevice) Complete() (int, error) {
	sq := &d.sq
	cons, prod := *sq.consumer(), atomic.LoadUint32(sq.producer())
	n := 0
	for ; cons != prod; cons = (cons + 1) & sq.mask {
		w := sq.slot(cons)
		op := *(*uint32)(unsafe.Add(w, C.CVERBS_RXE_WR_OPCODE))
		wcOp, ok := wcOpcodes[op]
		if !ok {
			return n, errors.New("fake device: an operation it does not carry")
		}
		length := uint32((*C.struct_rxe_dma_info)(unsafe.Add(w, C.CVERBS_RXE_SEND_DMA)).length)
		if op == C.IBV_WR_SEND {
			rq := &d.rq
			rc := *rq.consumer()
			if rc == atomic.LoadUint32(rq.producer()) {
				return n, errors.New("fake device: a send with no receive posted")
			}
			if err := d.completeOn(&d.rcq, *(*uint64)(unsafe.Add(rq.slot(rc), C.CVERBS_RXE_RECV_ID)), WCRecv, length); err != nil {
				return n, err
			}
			atomic.StoreUint32(rq.consumer(), (rc+1)&rq.mask)
		}
		if *(*uint32)(unsafe.Add(w, C.CVERBS_RXE_WR_FLAGS))&C.IBV_SEND_SIGNALED != 0 {
			if err := d.completeOn(&d.cq, *(*uint64)(unsafe.Add(w, C.CVERBS_RXE_WR_ID)), wcOp, length); err != nil {
				return n, err
			}
		}
		atomic.StoreUint32(sq.consumer(), (cons+1)&sq.mask)
		n++
	}
	return n, nil
}

// completeOn writes a successful completion of work request id to cq.
func (d *FakeDevice) completeOn(cq *rxeQueue, id uint64, op WCOpcode, length uint32) error {
	cp := *cq.producer()
	if cq.full(cp) {
		return errors.New("fake device: CQ overrun")
	}
	*(*WC)(cq.slot(cp)) = WC{WRID: id, Status: WCSuccess, Opcode: op, ByteLen: length, QPNum: d.QP.num}
	cq.advance(cp)
	return nil
}

// Close frees the fake device's memory.
func (d *FakeDevice) Close() {
	qp := d.QP
	qp.sq.free() // the doorbell too
	qp.rq.free()
	C.free(unsafe.Pointer(qp.qp))
	qp.qp = nil
	for _, cq := range []*CQ{d.CQ, d.RecvCQ} {
		C.free(unsafe.Pointer(cq.cq))
		cq.cq, cq.rxe = nil, rxeQueue{}
	}
	for _, q := range []rxeQueue{d.sq, d.rq, d.cq, d.rcq} {
		C.free(q.buf)
	}
	d.null.Close()
}

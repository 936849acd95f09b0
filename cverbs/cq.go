package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// CompChannel is a completion event channel: CQs created with it report
// completion events that Wait returns.
type CompChannel struct {
	mu     sync.RWMutex // shared by Wait and NewCQ, exclusive in Close
	ch     *C.struct_ibv_comp_channel
	ctx    *Context
	w      *fdWaiter
	closed atomic.Bool
}

// NewCompChannel creates a completion channel. Its file descriptor is made
// non-blocking so Wait can use the netpoller.
func (c *Context) NewCompChannel() (*CompChannel, error) {
	const op = "ibv_create_comp_channel"
	ctx, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	ch, err := C.ibv_create_comp_channel(ctx)
	if ch == nil {
		return nil, errnoErr(op, err)
	}
	w, err := newFDWaiter(op, ch.fd, c.name+"-comp")
	if err != nil {
		C.ibv_destroy_comp_channel(ch)
		return nil, err
	}
	return &CompChannel{ch: ch, ctx: c, w: w}, nil
}

// Close destroys the channel, waking any Wait with ErrClosed. It fails with
// EBUSY while CQs still use the channel.
func (ch *CompChannel) Close() error {
	if ch == nil {
		return nil
	}
	// Refuse while CQs use the channel, before anything is torn down, so a
	// failed Close leaves the channel working.
	ch.mu.RLock()
	busy := ch.ch != nil && ch.ch.refcnt != 0
	ch.mu.RUnlock()
	if busy {
		return opErr("ibv_destroy_comp_channel", int(syscall.EBUSY))
	}
	if !ch.closed.Swap(true) {
		// Close the dup first: it wakes waiters, which release ch.mu, and
		// must not outlive the channel's own descriptor.
		ch.w.close()
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.ch == nil {
		return nil
	}
	if rc := C.ibv_destroy_comp_channel(ch.ch); rc != 0 {
		return opErr("ibv_destroy_comp_channel", int(rc))
	}
	ch.ch = nil
	return nil
}

// Wait waits through the netpoller for a completion event, acknowledges it
// and returns its CQ. Call CQ.ReqNotify again to get the next event. It
// returns ctx.Err() when ctx ends first.
func (ch *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	const op = "ibv_get_cq_event"
	if ch == nil {
		return nil, closedErr(op)
	}
	ch.mu.RLock()
	defer ch.mu.RUnlock()
	if ch.ch == nil || ch.closed.Load() {
		return nil, closedErr(op)
	}
	var cq *CQ
	var evErr error
	err := ch.w.wait(ctx, op, func() bool {
		var ccq *C.struct_ibv_cq
		rc := C.cverbs_get_cq_event(ch.ch, &ccq)
		if rc == C.EAGAIN {
			return false
		}
		if rc != 0 {
			evErr = opErr(op, int(rc))
			return true
		}
		// Look up before the ack: ibv_destroy_cq waits for it.
		cq = cqRegistry.get(unsafe.Pointer(ccq))
		C.cverbs_ack_cq_event(ccq)
		if cq == nil {
			evErr = opErr(op, int(syscall.ENOENT))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return cq, evErr
}

// maxPollBatch bounds the C array of ibv_wc a CQ keeps for Poll.
const maxPollBatch = 128

// CQ is a completion queue.
type CQ struct {
	mu  sync.Mutex // serialises Poll (the ibv_wc array), Resize and Close
	cq  *C.struct_ibv_cq
	ctx *Context
	ch  *CompChannel
	wc  *C.struct_ibv_wc // nwc entries, reused by every Poll
	nwc int
	cqe int
}

// NewCQ creates a completion queue of at least cqe entries. ch may be nil
// when completion events are not needed.
func (c *Context) NewCQ(cqe int, ch *CompChannel) (*CQ, error) {
	const op = "ibv_create_cq"
	if cqe <= 0 || cqe > 1<<30 {
		return nil, opErr(op, int(syscall.EINVAL))
	}
	ctx, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		ch.mu.RLock()
		defer ch.mu.RUnlock()
		if ch.ch == nil {
			return nil, closedErr(op)
		}
		cch = ch.ch
	}
	ccq, err := C.cverbs_create_cq(ctx, C.int(cqe), cch)
	if ccq == nil {
		return nil, errnoErr(op, err)
	}
	n := min(int(ccq.cqe), maxPollBatch)
	n = max(n, 1)
	wc := (*C.struct_ibv_wc)(C.calloc(C.size_t(n), C.sizeof_struct_ibv_wc))
	if wc == nil {
		C.ibv_destroy_cq(ccq)
		return nil, opErr(op, int(syscall.ENOMEM))
	}
	cq := &CQ{cq: ccq, ctx: c, ch: ch, wc: wc, nwc: n, cqe: int(ccq.cqe)}
	cqRegistry.add(unsafe.Pointer(ccq), cq)
	return cq, nil
}

// CQE returns the number of entries the CQ actually has.
func (cq *CQ) CQE() int {
	if cq == nil {
		return 0
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.cqe
}

// Close destroys the CQ. It fails with EBUSY while QPs still use it.
func (cq *CQ) Close() error {
	if cq == nil {
		return nil
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.cq == nil {
		return nil
	}
	ccq := cq.cq
	if rc := C.ibv_destroy_cq(ccq); rc != 0 {
		return opErr("ibv_destroy_cq", int(rc))
	}
	cq.cq = nil
	C.free(unsafe.Pointer(cq.wc))
	cq.wc = nil
	cqRegistry.del(unsafe.Pointer(ccq), cq)
	return nil
}

// Resize changes the number of CQ entries (ibv_resize_cq).
func (cq *CQ) Resize(cqe int) error {
	const op = "ibv_resize_cq"
	if cqe <= 0 || cqe > 1<<30 {
		return opErr(op, int(syscall.EINVAL))
	}
	if cq == nil {
		return closedErr(op)
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.cq == nil {
		return closedErr(op)
	}
	if rc := C.ibv_resize_cq(cq.cq, C.int(cqe)); rc != 0 {
		return opErr(op, int(rc))
	}
	cq.cqe = int(cq.cq.cqe)
	if n := min(cq.cqe, maxPollBatch); n > cq.nwc {
		if wc := (*C.struct_ibv_wc)(C.calloc(C.size_t(n), C.sizeof_struct_ibv_wc)); wc != nil {
			C.free(unsafe.Pointer(cq.wc))
			cq.wc, cq.nwc = wc, n
		}
	}
	return nil
}

// ReqNotify arms the CQ to report a completion event to its channel on the
// next completion (or next solicited completion).
func (cq *CQ) ReqNotify(solicitedOnly bool) error {
	const op = "ibv_req_notify_cq"
	if cq == nil {
		return closedErr(op)
	}
	so := C.int(0)
	if solicitedOnly {
		so = 1
	}
	cq.mu.Lock()
	if cq.cq == nil {
		cq.mu.Unlock()
		return closedErr(op)
	}
	rc := C.cverbs_req_notify_cq(C.uintptr_t(uintptr(unsafe.Pointer(cq.cq))), so)
	cq.mu.Unlock()
	return opErr(op, int(rc))
}

// Poll fetches up to len(wc) completions into wc and returns how many it got.
// It polls into the CQ's own C array with one cgo call per batch of up to 128
// entries and copies the entries in Go, so it does not allocate.
func (cq *CQ) Poll(wc []WC) (int, error) {
	if cq == nil {
		return 0, closedErr("ibv_poll_cq")
	}
	// No defer: this is the hot path of every completion and empty poll.
	cq.mu.Lock()
	if cq.cq == nil {
		cq.mu.Unlock()
		return 0, closedErr("ibv_poll_cq")
	}
	ccq := C.uintptr_t(uintptr(unsafe.Pointer(cq.cq)))
	cwp := C.uintptr_t(uintptr(unsafe.Pointer(cq.wc)))
	cw := unsafe.Slice(cq.wc, cq.nwc)
	total := 0
	for total < len(wc) {
		want := min(len(wc)-total, cq.nwc)
		n := int(C.cverbs_poll_cq(ccq, C.int(want), cwp))
		if n < 0 {
			cq.mu.Unlock()
			// ibv_poll_cq returns a negative value, not an errno.
			return total, opErr("ibv_poll_cq", int(syscall.EIO))
		}
		out := wc[total : total+n]
		for i := range out {
			wcFromC(&out[i], &cw[i])
		}
		total += n
		if n < want {
			break
		}
	}
	cq.mu.Unlock()
	return total, nil
}

func wcFromC(out *WC, c *C.struct_ibv_wc) {
	w := WC{
		WRID:      uint64(c.wr_id),
		Status:    WCStatus(c.status),
		Opcode:    WCOpcode(c.opcode),
		VendorErr: uint32(c.vendor_err),
		ByteLen:   uint32(c.byte_len),
		QPNum:     uint32(c.qp_num),
		SrcQP:     uint32(c.src_qp),
		Flags:     uint32(c.wc_flags),
	}
	// The union holds imm_data (big endian) or the invalidated rkey (host).
	u := (*[4]byte)(unsafe.Pointer(&c.anon0))
	switch {
	case w.Flags&WCFlagWithImm != 0:
		w.Imm = binary.BigEndian.Uint32(u[:])
	case w.Flags&WCFlagWithInv != 0:
		w.Imm = binary.NativeEndian.Uint32(u[:])
	}
	*out = w
}

// WCStatus is a completion status (enum ibv_wc_status values).
type WCStatus int

// Completion statuses.
const (
	WCSuccess          WCStatus = C.IBV_WC_SUCCESS
	WCLocLenErr        WCStatus = C.IBV_WC_LOC_LEN_ERR
	WCLocQPOpErr       WCStatus = C.IBV_WC_LOC_QP_OP_ERR
	WCLocEECOpErr      WCStatus = C.IBV_WC_LOC_EEC_OP_ERR
	WCLocProtErr       WCStatus = C.IBV_WC_LOC_PROT_ERR
	WCWRFlushErr       WCStatus = C.IBV_WC_WR_FLUSH_ERR
	WCMWBindErr        WCStatus = C.IBV_WC_MW_BIND_ERR
	WCBadRespErr       WCStatus = C.IBV_WC_BAD_RESP_ERR
	WCLocAccessErr     WCStatus = C.IBV_WC_LOC_ACCESS_ERR
	WCRemInvReqErr     WCStatus = C.IBV_WC_REM_INV_REQ_ERR
	WCRemAccessErr     WCStatus = C.IBV_WC_REM_ACCESS_ERR
	WCRemOpErr         WCStatus = C.IBV_WC_REM_OP_ERR
	WCRetryExcErr      WCStatus = C.IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExcErr   WCStatus = C.IBV_WC_RNR_RETRY_EXC_ERR
	WCLocRDDViolErr    WCStatus = C.IBV_WC_LOC_RDD_VIOL_ERR
	WCRemInvRDReqErr   WCStatus = C.IBV_WC_REM_INV_RD_REQ_ERR
	WCRemAbortErr      WCStatus = C.IBV_WC_REM_ABORT_ERR
	WCInvEECNErr       WCStatus = C.IBV_WC_INV_EECN_ERR
	WCInvEECStateErr   WCStatus = C.IBV_WC_INV_EEC_STATE_ERR
	WCFatalErr         WCStatus = C.IBV_WC_FATAL_ERR
	WCRespTimeoutErr   WCStatus = C.IBV_WC_RESP_TIMEOUT_ERR
	WCGeneralErr       WCStatus = C.IBV_WC_GENERAL_ERR
	WCTMErr            WCStatus = C.IBV_WC_TM_ERR
	WCTMRndvIncomplete WCStatus = C.IBV_WC_TM_RNDV_INCOMPLETE
)

// String returns the libibverbs description of the status.
func (s WCStatus) String() string {
	return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(s)))
}

// WCOpcode is the operation of a completion (enum ibv_wc_opcode values).
// It is not defined for completions with an error status.
type WCOpcode int

// Completion opcodes.
const (
	WCSend            WCOpcode = C.IBV_WC_SEND
	WCRDMAWrite       WCOpcode = C.IBV_WC_RDMA_WRITE
	WCRDMARead        WCOpcode = C.IBV_WC_RDMA_READ
	WCCompSwap        WCOpcode = C.IBV_WC_COMP_SWAP
	WCFetchAdd        WCOpcode = C.IBV_WC_FETCH_ADD
	WCBindMW          WCOpcode = C.IBV_WC_BIND_MW
	WCLocalInv        WCOpcode = C.IBV_WC_LOCAL_INV
	WCRecv            WCOpcode = C.IBV_WC_RECV
	WCRecvRDMAWithImm WCOpcode = C.IBV_WC_RECV_RDMA_WITH_IMM
)

var wcOpcodeNames = map[WCOpcode]string{
	WCSend:            "SEND",
	WCRDMAWrite:       "RDMA_WRITE",
	WCRDMARead:        "RDMA_READ",
	WCCompSwap:        "COMP_SWAP",
	WCFetchAdd:        "FETCH_ADD",
	WCBindMW:          "BIND_MW",
	WCLocalInv:        "LOCAL_INV",
	WCRecv:            "RECV",
	WCRecvRDMAWithImm: "RECV_RDMA_WITH_IMM",
}

// String returns the opcode's name.
func (o WCOpcode) String() string {
	if s, ok := wcOpcodeNames[o]; ok {
		return s
	}
	return "WCOpcode(" + strconv.Itoa(int(o)) + ")"
}

// Completion flags (IBV_WC_* bits) found in WC.Flags.
const (
	WCFlagGRH     = C.IBV_WC_GRH
	WCFlagWithImm = C.IBV_WC_WITH_IMM
	WCFlagIPCsum  = C.IBV_WC_IP_CSUM_OK
	WCFlagWithInv = C.IBV_WC_WITH_INV
)

// WC is a work completion, copied from struct ibv_wc. Imm is in host byte
// order: the immediate data when Flags has WCFlagWithImm, the invalidated
// rkey when it has WCFlagWithInv.
type WC struct {
	WRID      uint64
	Status    WCStatus
	Opcode    WCOpcode
	VendorErr uint32
	ByteLen   uint32
	Imm       uint32
	QPNum     uint32
	SrcQP     uint32
	Flags     uint32
}

// cptr returns the C CQ, or nil if cq is nil or closed.
func (cq *CQ) cptr() *C.struct_ibv_cq {
	if cq == nil {
		return nil
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.cq
}

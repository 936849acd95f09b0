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

// cgoQP is the state of a QP in the cgo build.
type cgoQP struct {
	// Lock order: mu, then sq.mu, then rq.mu. Posting takes only its queue's
	// lock (PostSendOne and PostRecvOne none: their caller serialises them);
	// Close takes all three.
	mu   sync.Mutex
	qp   *C.struct_ibv_qp
	num  uint32
	cap  QPCap
	pd   *PD
	srq  *SRQ
	cmid *C.struct_rdma_cm_id // set when made by CMID.NewQP
	sq   sendQueue
	rq   recvQueue
}

// qpInitAttr validates a and builds struct ibv_qp_init_attr. The caller
// holds nothing; CQs and the SRQ are only read here.
func qpInitAttr(op string, a *QPInitAttr, out *C.struct_ibv_qp_init_attr) error {
	if a.MaxSendWR < 0 || a.MaxRecvWR < 0 || a.MaxSendSGE < 0 || a.MaxRecvSGE < 0 || a.MaxInline < 0 ||
		a.MaxSendWR > 1<<24 || a.MaxRecvWR > 1<<24 || a.MaxSendSGE > 1<<10 || a.MaxRecvSGE > 1<<10 ||
		a.MaxInline > 1<<20 {
		return opErr(op, int(syscall.EINVAL))
	}
	scq, rcq := a.SendCQ, a.RecvCQ
	if rcq == nil {
		rcq = scq
	}
	if scq == nil {
		return opErr(op, int(syscall.EINVAL))
	}
	cs, cr := scq.cptr(), rcq.cptr()
	if cs == nil || cr == nil {
		return closedErr(op)
	}
	var csrq *C.struct_ibv_srq
	maxRecvWR, maxRecvSGE := a.MaxRecvWR, a.MaxRecvSGE
	if a.SRQ != nil {
		if csrq = a.SRQ.cptr(); csrq == nil {
			return closedErr(op)
		}
		maxRecvWR, maxRecvSGE = 0, 0
	}
	// Filled here, not by a C helper: a cgo call would cost a crossing
	// and a pointer check for each of the four pointers.
	*out = C.struct_ibv_qp_init_attr{
		send_cq: cs,
		recv_cq: cr,
		srq:     csrq,
		cap: C.struct_ibv_qp_cap{
			max_send_wr:     C.uint32_t(a.MaxSendWR),
			max_recv_wr:     C.uint32_t(maxRecvWR),
			max_send_sge:    C.uint32_t(a.MaxSendSGE),
			max_recv_sge:    C.uint32_t(maxRecvSGE),
			max_inline_data: C.uint32_t(a.MaxInline),
		},
		qp_type: C.IBV_QPT_RC,
	}
	return nil
}

// newQP wraps a created ibv_qp: records the capabilities the provider
// granted (init.cap is updated by the create call) and allocates the posting
// arrays. On failure the caller destroys the QP.
func newQP(cqp *C.struct_ibv_qp, init *C.struct_ibv_qp_init_attr, pd *PD, srq *SRQ) (*QP, bool) {
	qp := &QP{cgoQP{
		qp:  cqp,
		num: uint32(cqp.qp_num),
		pd:  pd,
		srq: srq,
		cap: QPCap{
			MaxSendWR:  int(init.cap.max_send_wr),
			MaxRecvWR:  int(init.cap.max_recv_wr),
			MaxSendSGE: int(init.cap.max_send_sge),
			MaxRecvSGE: int(init.cap.max_recv_sge),
			MaxInline:  int(init.cap.max_inline_data),
		},
	}}
	qp.sq.ud = cqp.qp_type == C.IBV_QPT_UD
	if !qp.sq.alloc(qp.cap.MaxSendWR, qp.cap.MaxSendSGE) {
		return nil, false
	}
	if srq == nil && !qp.rq.alloc(qp.cap.MaxRecvWR, qp.cap.MaxRecvSGE) {
		qp.sq.free()
		return nil, false
	}
	if !qp.sq.ud {
		qp.sq.rxe = findRXESend(cqp, &qp.cap)
		if srq == nil {
			qp.rq.rxe = findRXERecv(cqp, &qp.cap)
		}
	}
	qpRegistry.add(unsafe.Pointer(cqp), qp)
	return qp, true
}

// NewQP creates an RC queue pair (ibv_create_qp) in the RESET state.
func (pd *PD) NewQP(attr QPInitAttr) (*QP, error) {
	return pd.createQP("ibv_create_qp", attr, C.IBV_QPT_RC)
}

// createQP creates a QP of type qpType (RC or UD) in pd.
func (pd *PD) createQP(op string, attr QPInitAttr, qpType C.enum_ibv_qp_type) (*QP, error) {
	var init C.struct_ibv_qp_init_attr
	if err := qpInitAttr(op, &attr, &init); err != nil {
		return nil, err
	}
	init.qp_type = qpType
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	cqp, err := C.ibv_create_qp(p, &init)
	if cqp == nil {
		return nil, errnoErr(op, err)
	}
	qp, ok := newQP(cqp, &init, pd, attr.SRQ)
	if !ok {
		C.ibv_destroy_qp(cqp)
		return nil, opErr(op, int(syscall.ENOMEM))
	}
	return qp, nil
}

// Num returns the QP number.
func (qp *QP) Num() uint32 {
	if qp == nil {
		return 0
	}
	return qp.num
}

// Cap returns the capabilities the QP was created with.
func (qp *QP) Cap() QPCap {
	if qp == nil {
		return QPCap{}
	}
	return qp.cap
}

// SRQ returns the SRQ the QP receives from, or nil.
func (qp *QP) SRQ() *SRQ {
	if qp == nil {
		return nil
	}
	return qp.srq
}

// Close destroys the QP and frees its posting arrays. For a QP made by
// CMID.NewQP this is rdma_destroy_qp.
func (qp *QP) Close() error {
	if qp == nil {
		return nil
	}
	qp.mu.Lock()
	defer qp.mu.Unlock()
	qp.sq.mu.Lock()
	defer qp.sq.mu.Unlock()
	qp.rq.mu.Lock()
	defer qp.rq.mu.Unlock()
	if qp.qp == nil {
		return nil
	}
	cqp := qp.qp
	if qp.cmid != nil {
		if rc := C.cverbs_cm_destroy_qp(qp.cmid); rc != 0 {
			return opErr("rdma_destroy_qp", int(rc))
		}
	} else if rc := C.ibv_destroy_qp(cqp); rc != 0 {
		return opErr("ibv_destroy_qp", int(rc))
	}
	qp.qp = nil
	qp.cmid = nil
	qp.sq.free()
	qp.rq.free()
	qpRegistry.del(unsafe.Pointer(cqp), qp)
	return nil
}

// alive reports whether the QP is not closed.
func (qp *QP) alive() bool {
	qp.mu.Lock()
	defer qp.mu.Unlock()
	return qp.qp != nil
}

// lock takes qp.mu and returns the C QP; the caller unlocks qp.mu.
func (qp *QP) lock(op string) (*C.struct_ibv_qp, error) {
	if qp == nil {
		return nil, closedErr(op)
	}
	qp.mu.Lock()
	if qp.qp == nil {
		qp.mu.Unlock()
		return nil, closedErr(op)
	}
	return qp.qp, nil
}

// State queries the QP's current state (ibv_query_qp). Linux 6.1's
// soft-iWARP does not report it: RESET, whatever the state (6.12 does).
func (qp *QP) State() (QPState, error) {
	const op = "ibv_query_qp"
	cqp, err := qp.lock(op)
	if err != nil {
		return 0, err
	}
	defer qp.mu.Unlock()
	var st C.int
	if rc := C.cverbs_query_qp_state(cqp, &st); rc != 0 {
		return 0, opErr(op, int(rc))
	}
	return QPState(st), nil
}

// QueryRTS reads back the attributes ToRTS sets (ibv_query_qp). On the
// passive side of an rdma_cm connection RetryCnt and RNRRetry are the ones
// the peer asked for in its request.
func (qp *QP) QueryRTS() (RTSAttr, error) {
	const op = "ibv_query_qp"
	cqp, err := qp.lock(op)
	if err != nil {
		return RTSAttr{}, err
	}
	defer qp.mu.Unlock()
	var psn C.uint32_t
	var timeout, retry, rnr, rd C.uint8_t
	if rc := C.cverbs_query_rts(cqp, &psn, &timeout, &retry, &rnr, &rd); rc != 0 {
		return RTSAttr{}, opErr(op, int(rc))
	}
	return RTSAttr{SQPSN: uint32(psn), Timeout: int(timeout), RetryCnt: int(retry),
		RNRRetry: int(rnr), MaxRdAtomic: int(rd)}, nil
}

// ToInit moves the QP from RESET to INIT on port with the given remote
// access rights (pkey index 0).
func (qp *QP) ToInit(port uint8, access Access) error {
	const op = "ibv_modify_qp(INIT)"
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
	return opErr(op, int(C.cverbs_to_init(cqp, C.uint8_t(port), C.uint(access))))
}

// ToRTR moves the QP from INIT to RTR.
func (qp *QP) ToRTR(a RTRAttr) error {
	const op = "ibv_modify_qp(RTR)"
	mtu := mtuEnum(a.MTU)
	if mtu == 0 || a.SGIDIndex < 0 || a.SGIDIndex > 255 || a.MaxDestRdAtomic < 0 || a.MaxDestRdAtomic > 255 ||
		a.MinRNRTimer < 0 || a.MinRNRTimer > 31 || a.DestQPNum >= 1<<24 || a.RQPSN >= 1<<24 {
		return opErr(op, int(syscall.EINVAL))
	}
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
	global := C.int(0)
	if a.DGID != [16]byte{} {
		global = 1
	}
	hop := a.HopLimit
	if hop == 0 {
		hop = 64
	}
	rc := C.cverbs_to_rtr(cqp, C.uint8_t(a.Port), C.uint32_t(a.DestQPNum), C.uint32_t(a.RQPSN),
		C.int(mtu), (*C.uint8_t)(unsafe.Pointer(&a.DGID[0])), global, C.int(a.SGIDIndex),
		C.uint16_t(a.DLID), C.uint8_t(a.SL), C.uint8_t(hop),
		C.uint8_t(a.MaxDestRdAtomic), C.uint8_t(a.MinRNRTimer))
	return opErr(op, int(rc))
}

// ToRTS moves the QP from RTR to RTS.
func (qp *QP) ToRTS(a RTSAttr) error {
	const op = "ibv_modify_qp(RTS)"
	if a.SQPSN >= 1<<24 || a.Timeout < 0 || a.Timeout > 31 || a.RetryCnt < 0 || a.RetryCnt > 7 ||
		a.RNRRetry < 0 || a.RNRRetry > 7 || a.MaxRdAtomic < 0 || a.MaxRdAtomic > 255 {
		return opErr(op, int(syscall.EINVAL))
	}
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
	rc := C.cverbs_to_rts(cqp, C.uint32_t(a.SQPSN), C.uint8_t(a.Timeout), C.uint8_t(a.RetryCnt),
		C.uint8_t(a.RNRRetry), C.uint8_t(a.MaxRdAtomic))
	return opErr(op, int(rc))
}

// ToError moves the QP to ERR: outstanding and later WRs complete with
// WCWRFlushErr.
func (qp *QP) ToError() error { return qp.toState("ibv_modify_qp(ERR)", QPErr) }

// ToReset moves the QP to RESET, discarding all WRs and completions state,
// so it can be brought up again with ToInit.
func (qp *QP) ToReset() error { return qp.toState("ibv_modify_qp(RESET)", QPReset) }

func (qp *QP) toState(op string, s QPState) error {
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
	return opErr(op, int(C.cverbs_modify_state(cqp, C.int(s))))
}

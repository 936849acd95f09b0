//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"syscall"
	"time"
)

// cmModifyOps are ModifyQP's operation names, by state.
var cmModifyOps = [...]string{
	QPInit: "rdma_init_qp_attr(INIT)",
	QPRTR:  "rdma_init_qp_attr(RTR)",
	QPRTS:  "rdma_init_qp_attr(RTS)",
}

func cmModifyOp(state QPState) string {
	if int(state) < len(cmModifyOps) && cmModifyOps[state] != "" {
		return cmModifyOps[state]
	}
	return "rdma_init_qp_attr(" + state.String() + ")"
}

// ModifyQP moves an external QP (made with PD.NewQP, not CMID.NewQP) to
// state using the attributes rdma_cm computed for this id
// (rdma_init_qp_attr), then ibv_modify_qp. Use it for QPInit, QPRTR and
// QPRTS; use QP.ToError and QP.ToReset for the others.
//
// Active side: ResolveAddr, ResolveRoute, ModifyQP(QPInit), Connect with
// QPNum, CMEventConnectResponse, ModifyQP(QPRTR), ModifyQP(QPRTS), Establish.
// Passive side: CMEventConnectRequest, ModifyQP(QPInit), ModifyQP(QPRTR),
// ModifyQP(QPRTS), Accept with QPNum, CMEventEstablished. ReadyQP does
// either's steps from INIT on in one call.
func (id *CMID) ModifyQP(qp *QP, state QPState) error {
	op := cmModifyOp(state)
	cid, cqp, err := id.lockWithQP(op, qp)
	if err != nil {
		return err
	}
	defer id.unlockWithQP(qp)
	return opErr(op, int(C.cverbs_cm_modify_qp(cid, cqp, C.int(state))))
}

// Establish tells rdma_cm that the active side's external QP is in RTS
// (rdma_establish), completing the connection after CMEventConnectResponse.
func (id *CMID) Establish() error {
	const op = "rdma_establish"
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_establish(cid)))
}

// ReadyQP brings an external QP into use for the id's connection in one
// call into C: SetACKTimeout(ackTimeout) unless ackTimeout is negative,
// ModifyQP to QPInit, QPRTR and QPRTS, then Accept(*accept) on the passive
// side, or Establish on the active side (accept nil, after
// CMEventConnectResponse). The error is that of the step that failed, an
// *OpError whose Op names it (OpSetACKTimeout, ModifyQP's, OpAccept,
// OpEstablish); the steps before it took effect. rts is what QueryRTS
// would read back after RTS; known is false when rdma_cm did not give the
// timeout and retry count (QueryRTS then says).
func (id *CMID) ReadyQP(qp *QP, ackTimeout int, accept *ConnParam) (rts RTSAttr, known bool, err error) {
	op := "rdma_cm_ready_qp"
	if ackTimeout > 31 {
		return RTSAttr{}, false, opErr(OpSetACKTimeout, int(syscall.EINVAL))
	}
	var p ConnParam
	if accept != nil {
		p = *accept
		if !p.valid() {
			return RTSAttr{}, false, opErr(OpAccept, int(syscall.EINVAL))
		}
	}
	cid, cqp, err := id.lockWithQP(op, qp)
	if err != nil {
		return RTSAttr{}, false, err
	}
	defer id.unlockWithQP(qp)
	var out C.struct_cverbs_cm_rts
	var step C.int
	rc := C.cverbs_cm_ready_qp(cid, cqp, C.int(ackTimeout), cbool(accept != nil), p.privateData(), C.uint8_t(len(p.PrivateData)),
		C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth), C.uint8_t(p.RetryCount),
		C.uint8_t(p.RNRRetryCount), cbool(p.FlowControl), cbool(p.SRQ), C.uint32_t(p.QPNum), &out, &step)
	if rc != 0 {
		switch step {
		case 0:
			op = OpSetACKTimeout
		case 1, 2, 3:
			op = cmModifyOp([...]QPState{QPInit, QPRTR, QPRTS}[step-1])
		default:
			op = OpEstablish
			if accept != nil {
				op = OpAccept
			}
		}
		return RTSAttr{}, false, opErr(op, int(rc))
	}
	return RTSAttr{SQPSN: uint32(out.sq_psn), Timeout: int(out.timeout), RetryCnt: int(out.retry_cnt),
		RNRRetry: int(out.rnr_retry), MaxRdAtomic: int(out.max_rd_atomic)}, out.known != 0, nil
}

// ConnectQP moves the external QP to QPInit (ModifyQP) and sends the
// connect request for it (Connect with p), in one call into C; the
// error's Op says which failed. Like Connect, it may block on iWARP.
func (id *CMID) ConnectQP(qp *QP, p ConnParam) error {
	const op = "rdma_connect"
	if !p.valid() {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, cqp, err := id.lockWithQP(op, qp)
	if err != nil {
		return err
	}
	defer id.unlockWithQP(qp)
	var step C.int
	rc := C.cverbs_cm_init_connect(cid, cqp, p.privateData(), C.uint8_t(len(p.PrivateData)),
		C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth), C.uint8_t(p.RetryCount),
		C.uint8_t(p.RNRRetryCount), cbool(p.FlowControl), cbool(p.SRQ), C.uint32_t(p.QPNum), &step)
	if rc != 0 && step == 0 {
		return opErr(cmModifyOp(QPInit), int(rc))
	}
	return opErr(op, int(rc))
}

// ResolveRouteACK is SetACKTimeout(ackTimeout) then ResolveRoute(timeout),
// in one call into C; the error's Op says which failed.
func (id *CMID) ResolveRouteACK(ackTimeout uint8, timeout time.Duration) error {
	if ackTimeout > 31 {
		return opErr(OpSetACKTimeout, int(syscall.EINVAL))
	}
	const op = "rdma_resolve_route"
	ms, ok := timeoutMS(timeout)
	if !ok {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	var step C.int
	if rc := C.cverbs_resolve_route_ack(cid, C.uint8_t(ackTimeout), ms, &step); rc != 0 {
		if step == 0 {
			return opErr(OpSetACKTimeout, int(rc))
		}
		return opErr(op, int(rc))
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// lockWithQP locks the id, then qp, as the lock order says; unlockWithQP
// unlocks both.
func (id *CMID) lockWithQP(op string, qp *QP) (*C.struct_rdma_cm_id, *C.struct_ibv_qp, error) {
	cid, err := id.lock(op)
	if err != nil {
		return nil, nil, err
	}
	cqp, err := qp.lock(op)
	if err != nil {
		id.mu.Unlock()
		return nil, nil, err
	}
	return cid, cqp, nil
}

func (id *CMID) unlockWithQP(qp *QP) {
	qp.mu.Unlock()
	id.mu.Unlock()
}

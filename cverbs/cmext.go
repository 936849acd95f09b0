//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

// ModifyQP moves an external QP (made with PD.NewQP, not CMID.NewQP) to
// state using the attributes rdma_cm computed for this id
// (rdma_init_qp_attr), then ibv_modify_qp. Use it for QPInit, QPRTR and
// QPRTS; use QP.ToError and QP.ToReset for the others.
//
// Active side: ResolveAddr, ResolveRoute, ModifyQP(QPInit), Connect with
// QPNum, CMEventConnectResponse, ModifyQP(QPRTR), ModifyQP(QPRTS), Establish.
// Passive side: CMEventConnectRequest, ModifyQP(QPInit), ModifyQP(QPRTR),
// ModifyQP(QPRTS), Accept with QPNum, CMEventEstablished.
func (id *CMID) ModifyQP(qp *QP, state QPState) error {
	op := "rdma_init_qp_attr(" + state.String() + ")"
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
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

//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Unreliable datagram: UD QPs, address handles, and rdma_cm ids in the
// RDMA_PS_UDP port space, whose Connect and Accept exchange QP numbers
// through SIDR (Service ID Resolution) rather than connect.

// cgoAH is the state of an AH in the cgo build. The pointer is atomic so a
// post reads it without a lock; Close clears it first.
type cgoAH struct {
	mu sync.Mutex
	ah atomic.Pointer[C.struct_ibv_ah]
	pd *PD
}

// cptr returns the ibv_ah for a post, or 0 if ah is nil or destroyed.
func (ah *AH) cptr() uintptr {
	if ah == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(ah.ah.Load()))
}

// CreateUDID creates an rdma_cm id in the RDMA_PS_UDP port space
// (rdma_create_id) whose events arrive on ch. Its Connect sends a SIDR
// request: CMEventEstablished (with UD set, the peer's QPNum, QKey and
// AHAttr), CMEventRejected or CMEventUnreachable follows. Listening on it
// gives connect requests of such ids; Accept (with QPNum) answers one and no
// event follows on the passive side.
func (ch *EventChannel) CreateUDID() (*CMID, error) {
	const op = "rdma_create_id(RDMA_PS_UDP)"
	cch, err := ch.lock(op)
	if err != nil {
		return nil, err
	}
	defer ch.mu.RUnlock()
	var cid *C.struct_rdma_cm_id
	if rc := C.cverbs_create_udp_id(cch, &cid); rc != 0 {
		return nil, opErr(op, int(rc))
	}
	return newCMID(cid, ch), nil
}

// NewUDQP creates an unreliable datagram queue pair (ibv_create_qp,
// IBV_QPT_UD) in the RESET state; ToRTSUD makes it ready. Its receives get
// the GRHSize bytes of the Global Routing Header before the datagram.
func (pd *PD) NewUDQP(attr QPInitAttr) (*QP, error) {
	return pd.createQP("ibv_create_qp(UD)", attr, C.IBV_QPT_UD)
}

// ToRTSUD brings a UD QP in RESET to RTS, as librdmacm's rdma_create_qp
// does for an id in RDMA_PS_UDP: INIT on port with P_Key index 0 and qkey
// (UDPQKey to talk to rdma_cm peers), RTR, then RTS.
func (qp *QP) ToRTSUD(port uint8, qkey uint32) error {
	const op = "ibv_modify_qp(UD RTS)"
	cqp, err := qp.lock(op)
	if err != nil {
		return err
	}
	defer qp.mu.Unlock()
	return opErr(op, int(C.cverbs_ud_to_rts(cqp, C.uint8_t(port), 0, C.uint32_t(qkey))))
}

// CreateAH creates an address handle for attr (ibv_create_ah).
func (pd *PD) CreateAH(attr AHAttr) (*AH, error) {
	const op = "ibv_create_ah"
	var ca C.struct_ibv_ah_attr
	ahAttrToC(&attr, &ca)
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	cah, err := C.ibv_create_ah(p, &ca)
	if cah == nil {
		return nil, errnoErr(op, err)
	}
	ah := &AH{cgoAH{pd: pd}}
	ah.ah.Store(cah)
	return ah, nil
}

// Close destroys the address handle (ibv_destroy_ah). Closing it again, or
// a nil AH, does nothing.
func (ah *AH) Close() error {
	if ah == nil {
		return nil
	}
	ah.mu.Lock()
	defer ah.mu.Unlock()
	cah := ah.ah.Load()
	if cah == nil {
		return nil
	}
	if rc := C.ibv_destroy_ah(cah); rc != 0 {
		return opErr("ibv_destroy_ah", int(rc))
	}
	ah.ah.Store(nil)
	return nil
}

func ahAttrToC(a *AHAttr, c *C.struct_ibv_ah_attr) {
	*c = C.struct_ibv_ah_attr{}
	c.dlid = C.uint16_t(a.DLID)
	c.sl = C.uint8_t(a.SL)
	c.src_path_bits = C.uint8_t(a.SrcPathBits)
	c.static_rate = C.uint8_t(a.StaticRate)
	c.port_num = C.uint8_t(a.PortNum)
	if a.IsGlobal {
		c.is_global = 1
		g := &c.grh
		*(*[16]byte)(unsafe.Pointer(&g.dgid)) = a.GRH.DGID
		g.flow_label = C.uint32_t(a.GRH.FlowLabel)
		g.sgid_index = C.uint8_t(a.GRH.SGIDIndex)
		g.hop_limit = C.uint8_t(a.GRH.HopLimit)
		g.traffic_class = C.uint8_t(a.GRH.TrafficClass)
	}
}

func ahAttrFromC(c *C.struct_ibv_ah_attr) AHAttr {
	a := AHAttr{DLID: uint16(c.dlid), SL: uint8(c.sl), SrcPathBits: uint8(c.src_path_bits),
		StaticRate: uint8(c.static_rate), PortNum: uint8(c.port_num), IsGlobal: c.is_global != 0}
	if a.IsGlobal {
		g := &c.grh
		a.GRH = GlobalRoute{DGID: *(*[16]byte)(unsafe.Pointer(&g.dgid)), FlowLabel: uint32(g.flow_label),
			SGIDIndex: uint8(g.sgid_index), HopLimit: uint8(g.hop_limit), TrafficClass: uint8(g.traffic_class)}
	}
	return a
}

package udat

import (
	"net/netip"

	"github.com/udapl-go/udapl/cverbs"
)

// An RC EP gets the rdma_cm id of its next active connection with its
// queue pair, as C's cma provider gives each EP its id at dat_ep_create
// and dat_ep_reset: bound to the IA's address, with the EP's ACK timeout,
// and the QP moved to INIT through it (cverbs CreateIDForQP), all in the
// call into C that would have moved the QP to INIT alone. dat_ep_connect
// then starts at address resolution, and the connection's path is short of
// the id's creation, its binding (a local port), the ACK timeout and the
// QP's first INIT: four system calls, as in C.
//
// The id serves one connection attempt. An EP that connects on the passive
// side keeps it unused; Reset readies a new one with the QP, and Free
// destroys it. When rdma_cm cannot give one (the IA has no address, say),
// the QP goes to INIT by itself and Connect makes its id, as a redial does.
// So does every EP on iWARP, where the local port is a TCP port that
// rdma_connect may find taken (redialLocked): bound at dat_ep_create, an
// EP would hold one even when it only ever accepts.

// initQP moves qp, the EP's new or reset RC queue pair, to INIT, through
// the id of the EP's next active connection when rdma_cm gives one. Caller
// holds ep.mu or is creating the EP.
func (ep *EP) initQP(qp *cverbs.QP) error {
	ia := ep.ia
	ep.dropSpareLocked()
	if ia.addr.IsValid() && ia.ibTransport() && ep.connEVD != nil && !ep.freeing {
		id, err := ia.ech.CreateIDForQP(netip.AddrPortFrom(ia.addr, 0), uint8(ep.attr.ACKTimeout), qp)
		if err == nil {
			ia.registerCM(id, ep)
			ep.spare = id
			return nil
		}
	}
	return qp.ToInit(ia.port, qpAccess)
}

// takeSpareLocked detaches the EP's readied id and returns it, nil when
// there is none. Caller holds ep.mu.
func (ep *EP) takeSpareLocked() *cverbs.CMID {
	id := ep.spare
	ep.spare = nil
	return id
}

// dropSpareLocked destroys the EP's readied id, if it has one. Caller
// holds ep.mu or is creating the EP.
func (ep *EP) dropSpareLocked() {
	if id := ep.takeSpareLocked(); id != nil {
		ep.ia.unregisterCM(id)
		id.Close()
	}
}

// dialIDLocked returns the id for a connection attempt: the readied one
// (ready), else a new one. Caller holds ep.mu.
func (ep *EP) dialIDLocked() (id *cverbs.CMID, ready bool, err error) {
	if id = ep.takeSpareLocked(); id != nil {
		return id, true, nil
	}
	ia := ep.ia
	if id, err = ia.ech.CreateID(); err != nil {
		return nil, false, err
	}
	ia.registerCM(id, ep)
	return id, false, nil
}

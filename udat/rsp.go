package udat

import (
	"sync"

	"github.com/udapl-go/udapl/cverbs"
)

// RSP is a Reserved Service Point: it listens on a connection qualifier for
// one EP reserved for it. A connection request moves the EP to
// PASSIVE_CONNECTION_PENDING and arrives as EventConnectionRequest on the
// RSP's EVD; accepting its CR connects that EP.
type RSP struct {
	object
	ia       *IA
	connQual ConnQual
	evd      *EVD
	ep       *EP
	id       *cverbs.CMID
	mu       sync.Mutex
}

// CreateRSP reserves ep, which must be UNCONNECTED, for connection requests
// to connQual (dat_rsp_create). evd must have EVDCRFlag.
func (ia *IA) CreateRSP(connQual ConnQual, ep *EP, evd *EVD) (*RSP, error) {
	const op = "dat_rsp_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := ep.check(op); err != nil {
		return nil, err
	}
	if err := evd.checkRole(op, ia, EVDCRFlag, InvalidHandleEVDCR); err != nil {
		return nil, err
	}
	if ep.ia != ia {
		return nil, badHandle(op, HandleTypeEP)
	}
	if !ia.addr.IsValid() {
		return nil, newError(op, InvalidAddress|InvalidAddressUnsupported)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if s := ep.getState(); s != EPStateUnconnected {
		return nil, newError(op, InvalidState|stateSubtype(s))
	}
	r := &RSP{object: liveObject(), ia: ia, connQual: connQual, evd: evd, ep: ep}
	id, err := ia.listenCM(op, connQual, r, false)
	if err != nil {
		return nil, err
	}
	r.id = id
	if !addChild(ia, ia.rsps, r) {
		ia.unregisterCM(id)
		id.Close()
		return nil, badHandle(op, HandleTypeIA)
	}
	evd.ref(1)
	ep.rsp = r
	ep.localQual = connQual
	ep.setState(EPStateReserved)
	return r, nil
}

func (r *RSP) check(op string) error {
	if r == nil || r.dead() {
		return badHandle(op, HandleTypeRSP)
	}
	return nil
}

// RSPParam is what dat_rsp_query returns.
type RSPParam struct {
	IA       *IA
	ConnQual ConnQual
	EVD      *EVD
	EP       *EP
}

// Query returns the RSP's parameters (dat_rsp_query).
func (r *RSP) Query() (RSPParam, error) {
	if err := r.check("dat_rsp_query"); err != nil {
		return RSPParam{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return RSPParam{IA: r.ia, ConnQual: r.connQual, EVD: r.evd, EP: r.ep}, nil
}

// Free stops listening (dat_rsp_free). An EP still RESERVED returns to
// UNCONNECTED.
func (r *RSP) Free() error {
	const op = "dat_rsp_free"
	if err := r.check(op); err != nil {
		return err
	}
	r.mu.Lock()
	if r.freed.Swap(true) {
		r.mu.Unlock()
		return badHandle(op, HandleTypeRSP)
	}
	ep := r.ep
	r.ep = nil
	r.mu.Unlock()
	if ep != nil {
		ep.mu.Lock()
		if ep.rsp == r {
			ep.rsp = nil
			if ep.getState() == EPStateReserved {
				ep.setState(EPStateUnconnected)
			}
		}
		ep.mu.Unlock()
	}
	r.ia.unregisterCM(r.id)
	err := r.id.Close()
	delChild(r.ia, r.ia.rsps, r)
	r.evd.ref(-1)
	if err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

// detach forgets ep (it is being freed).
func (r *RSP) detach(ep *EP) {
	r.mu.Lock()
	if r.ep == ep {
		r.ep = nil
	}
	r.mu.Unlock()
}

func (r *RSP) request(ev cverbs.CMEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ep := r.ep
	if r.dead() || ep == nil {
		ev.ID.Reject(nil)
		ev.ID.Close()
		return
	}
	ep.mu.Lock()
	if ep.getState() != EPStateReserved {
		ep.mu.Unlock()
		ev.ID.Reject(nil)
		ev.ID.Close()
		return
	}
	cr := r.ia.newCR(ev, r.connQual)
	if cr == nil {
		ep.mu.Unlock()
		return
	}
	cr.rsp = r
	cr.localEP = ep
	ep.cr = cr
	ep.setState(EPStatePassiveConnectionPending)
	ep.mu.Unlock()
	r.evd.pushInternal(Event{Number: EventConnectionRequest,
		CR: CRArrivalData{RSP: r, LocalIAAddress: r.ia.addr, ConnQual: r.connQual, CR: cr}})
}

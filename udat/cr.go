package udat

import (
	"bytes"
	"net/netip"
	"sync"

	"github.com/udapl-go/udapl/cverbs"
)

// CR is a Connection Request that arrived at a PSP or RSP. It lives until it
// is accepted, rejected or handed off.
type CR struct {
	object
	ia          *IA
	psp         *PSP
	rsp         *RSP
	id          *cverbs.CMID
	remote      netip.AddrPort
	connQual    ConnQual
	privateData []byte
	// The request's RDMA read depths, as the IB CM reports them to this
	// side: respRes is the requester's initiator depth (the reads it will
	// issue here) and initDepth its responder resources (the reads this
	// side may issue).
	respRes   uint8
	initDepth uint8

	mu      sync.Mutex
	ep      *EP // the EP it was accepted with
	localEP *EP // the RSP's EP, or the EP a PSPProviderFlag PSP created
	// providerEP: localEP was created for this request (providerep.go)
	providerEP bool
	aborted    bool
	ud         *udRequest // a UD EP's request (ud_cm.go)
}

func (ia *IA) newCR(ev cverbs.CMEvent, connQual ConnQual) *CR {
	cr := &CR{object: liveObject(), ia: ia, id: ev.ID, remote: ev.ID.PeerAddr(), connQual: connQual,
		privateData: bytes.Clone(ev.PrivateData), respRes: ev.ResponderResources, initDepth: ev.InitiatorDepth}
	ia.registerCM(ev.ID, cr)
	if !addChild(ia, ia.crs, cr) {
		ia.unregisterCM(ev.ID)
		ev.ID.Reject(nil)
		ev.ID.Close()
		return nil
	}
	return cr
}

func (cr *CR) check(op string) error {
	if cr == nil || cr.dead() {
		return badHandle(op, HandleTypeCR)
	}
	return nil
}

// CRParam is what dat_cr_query returns.
type CRParam struct {
	RemoteAddr     netip.Addr
	RemotePortQual PortQual
	PrivateData    []byte
	LocalEP        *EP // the RSP's EP, the EP a PSPProviderFlag PSP created, or nil
}

// Query returns the request's parameters (dat_cr_query). PrivateData is the
// requester's private data (zero-padded by the transport to its maximum
// size).
func (cr *CR) Query() (CRParam, error) {
	if err := cr.check("dat_cr_query"); err != nil {
		return CRParam{}, err
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return CRParam{RemoteAddr: cr.remote.Addr(), RemotePortQual: PortQual(cr.remote.Port()),
		PrivateData: cr.privateData, LocalEP: cr.localEP}, nil
}

// done invalidates the CR handle. Caller holds cr.mu.
func (cr *CR) doneLocked() {
	cr.freed.Store(true)
	delChild(cr.ia, cr.ia.crs, cr)
}

// Accept accepts the request with ep (dat_cr_accept). For a request that
// came to an RSP, ep may be nil (the RSP's EP is used) or must be that EP;
// for a PSPConsumerFlag PSP, ep must be UNCONNECTED. privateData (at most
// ProviderAttr.MaxAcceptPrivateSize bytes: 160, 251 on iWARP) goes to the
// requester in its EventConnectionEstablished. For a request to a PSP with
// PSPProviderFlag, ep is nil or the EP the PSP created, which must have
// a PZ and a connect EVD by then (see EP.Modify). The EP is CONNECTED when
// EventConnectionEstablished arrives on its connect EVD;
// EventConnectionAcceptCompletionError reports a failure, also one of the
// accept itself (the requester gave up, say), for which Accept returns nil
// and the EP is DISCONNECTED. The CR is destroyed.
func (cr *CR) Accept(ep *EP, privateData []byte) error {
	const op = "dat_cr_accept"
	if err := cr.check(op); err != nil {
		return err
	}
	if len(privateData) > cr.ia.privateData.accept {
		return newError(op, InvalidParameter|InvalidArg4)
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.dead() {
		return badHandle(op, HandleTypeCR)
	}
	if ep == nil {
		ep = cr.localEP
	}
	if ep == nil || ep.dead() || ep.ia != cr.ia || (cr.localEP != nil && ep != cr.localEP) {
		return badHandle(op, HandleTypeEP)
	}
	if cr.ud != nil {
		return cr.acceptUD(op, ep, privateData)
	}
	if ep.isUD() {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.connEVD == nil {
		return newError(op, InvalidState|InvalidStateEPEVDConnect)
	}
	s := ep.getState()
	want := EPStateUnconnected
	switch {
	case cr.providerEP:
		want = EPStateTentativeConnectionPending
	case cr.localEP != nil:
		want = EPStatePassiveConnectionPending
	}
	if s != want {
		return newError(op, InvalidState|stateSubtype(s))
	}
	if ep.pz.internal {
		return newError(op, InvalidState|InvalidStateEPUnconfTentative)
	}
	id := cr.id
	ep.cmid = id
	ep.remote = cr.remote
	ep.remoteQual = ConnQual(cr.remote.Port())
	ep.localQual = cr.connQual
	ep.terminated = false
	ep.cr = nil
	ep.setState(EPStateCompletionPending)
	cr.ep = ep
	cr.doneLocked()
	// Past this point a failure is reported once, by the event, and the
	// call succeeds: the peer may have given up on its request already
	// (rdma_accept then fails with EINVAL), which the C reference
	// reports the same way.
	fail := func(error) error {
		id.Reject(nil)
		ep.failLocked(EventConnectionAcceptCompletionError, nil)
		return nil
	}
	oldIn, oldOut, oldSet := ep.rdIn, ep.rdOut, ep.rdSet
	ep.rdIn = min(ep.attr.MaxRDMAReadIn, int(cr.respRes))
	ep.rdOut = min(ep.attr.MaxRDMAReadOut, int(cr.initDepth))
	ep.rdSet = true
	// The ACK timeout, INIT, RTR, RTS and rdma_accept in one call.
	rts, known, err := id.ReadyQP(ep.qp, int(uint8(ep.attr.ACKTimeout)), &cverbs.ConnParam{
		PrivateData:        privateData,
		ResponderResources: uint8(ep.rdIn),
		InitiatorDepth:     uint8(ep.rdOut),
		RetryCount:         uint8(ep.attr.RetryCount), // unused: the REQ's count applies
		RNRRetryCount:      cmRNRRetryCount,
		FlowControl:        true,
		QPNum:              ep.qpn,
	})
	if err != nil {
		if !isOp(err, cverbs.OpAccept) {
			// The depths were not taken yet when the QP failed.
			ep.rdIn, ep.rdOut, ep.rdSet = oldIn, oldOut, oldSet
		}
		return fail(err)
	}
	ep.rts, ep.rtsSet = rts, known
	cr.ia.count(IACounterSPCRAccepted)
	return nil
}

// Reject refuses the request (dat_cr_reject, DAT 2.0 form with private
// data). The requester gets EventConnectionPeerRejected with privateData (at
// most 144 bytes, 247 on iWARP). The CR is destroyed, and so is the EP a
// PSPProviderFlag PSP created for it.
func (cr *CR) Reject(privateData []byte) error {
	const op = "dat_cr_reject"
	if err := cr.check(op); err != nil {
		return err
	}
	if len(privateData) > cr.ia.privateData.reject || (cr.ud != nil && len(privateData) > maxUDRepPrivData) {
		return newError(op, InvalidParameter|InvalidArg3)
	}
	cr.mu.Lock()
	if cr.dead() {
		cr.mu.Unlock()
		return badHandle(op, HandleTypeCR)
	}
	cr.doneLocked()
	lep := cr.localEP
	cr.mu.Unlock()
	cr.ia.count(IACounterSPCRRejected)
	pd := append(append(make([]byte, 0, len(rejectHeader)+len(privateData)), rejectHeader...), privateData...)
	if cr.ud != nil {
		pd = appendUDHeader(nil, privateData)
	}
	err := cr.id.Reject(pd)
	cr.ia.unregisterCM(cr.id)
	cr.id.Close()
	if lep != nil && cr.providerEP {
		lep.free(true) // the Consumer never took it: it goes with the request
	} else if lep != nil {
		lep.mu.Lock()
		if lep.getState() == EPStatePassiveConnectionPending {
			lep.cr = nil
			lep.setState(EPStateReserved)
		}
		lep.mu.Unlock()
	}
	if err != nil && !cr.aborted {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

// Handoff would pass the request to another service point (dat_cr_handoff).
// rdma_cm cannot move a request between listeners, so it fails with
// DAT_NOT_IMPLEMENTED, as in the C reference; the CR stays valid.
func (cr *CR) Handoff(connQual ConnQual) error {
	const op = "dat_cr_handoff"
	if err := cr.check(op); err != nil {
		return err
	}
	return newError(op, NotImplemented)
}

// cmEvent handles an rdma_cm event for the request's id: once accepted, the
// EP handles them; before, a request the peer gave up is marked aborted.
func (cr *CR) cmEvent(ev cverbs.CMEvent) {
	cr.mu.Lock()
	ep := cr.ep
	if ep == nil {
		switch ev.Type {
		case cverbs.CMEventDisconnected, cverbs.CMEventConnectError, cverbs.CMEventUnreachable, cverbs.CMEventRejected:
			cr.aborted = true
		}
	}
	cr.mu.Unlock()
	if ep != nil {
		ep.cmEvent(ev)
	}
}

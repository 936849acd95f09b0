package udat

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/udapl-go/udapl/cverbs"
)

// UD connections (see ud.go): a SIDR exchange per peer, on rdma_cm ids of
// the RDMA_PS_UDP port space.

// ibSIDRReject is IB_SIDR_REJECT: the status of the UNREACHABLE event of a
// request the peer rejected.
const ibSIDRReject = 2

// udUsable reports whether a UD EP may resolve another peer: UNCONNECTED
// (none yet) or CONNECTED (some).
func udUsable(s EPState) bool { return s == EPStateUnconnected || s == EPStateConnected }

// udConnect starts resolving the peer at dst (Connect on a UD EP). The EP
// stays in its state; the outcome arrives on its connect EVD as
// EventIBUDConnectionEstablished, EventIBUDConnectionReject or
// EventIBUDConnectionError (also after timeout).
func (ep *EP) udConnect(op string, dst netip.AddrPort, connQual ConnQual, timeout Timeout, privateData []byte) error {
	ia := ep.ia
	gid, _, err := ia.localGID()
	if err != nil {
		return newErrorDetail(op, InvalidAddress|InvalidAddressUnsupported, err.Error())
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.freeing {
		return badHandle(op, HandleTypeEP)
	}
	if s := ep.getState(); !udUsable(s) {
		return newError(op, InvalidState|stateSubtype(s))
	}
	id, err := ia.ech.CreateUDID()
	if err != nil {
		return verbsErr(op, err, InsufficientResources)
	}
	cm := &UDCM{object: liveObject(), ep: ep, id: id, active: true, remote: dst, connQual: connQual,
		pd: encodeUDRequest(udRequest{qpn: ep.qpn, qkey: cverbs.UDPQKey, lid: ia.portAttr.LID, gid: gid}, privateData)}
	ia.registerCM(id, cm)
	ep.ud.cms[cm] = struct{}{}
	var src netip.AddrPort
	if ia.addr.IsValid() {
		src = netip.AddrPortFrom(ia.addr, 0)
	}
	rt := cmResolveTimeout
	if timeout != TimeoutInfinite {
		d := time.Duration(timeout) * time.Microsecond
		rt = min(rt, max(d, time.Millisecond))
		time.AfterFunc(d, func() { cm.fail(EventIBUDConnectionError, IBUDConnectError, nil) })
	}
	if err := id.ResolveAddr(src, dst, rt); err != nil {
		delete(ep.ud.cms, cm)
		cm.freed.Store(true)
		ia.unregisterCM(id)
		id.Close()
		return verbsErr(op, err, InvalidAddress|InvalidAddressUnreachable)
	}
	return nil
}

// finish posts the connection's last event once; it reports whether this
// call did.
func (cm *UDCM) finish() bool {
	ep := cm.ep
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if cm.done || cm.dead() {
		return false
	}
	cm.done = true
	return true
}

// fail ends a connection attempt with a reject or error event.
func (cm *UDCM) fail(num EventNumber, t IBExtType, pd []byte) {
	if !cm.finish() {
		return
	}
	ep := cm.ep
	ep.connEVD.countConn()
	ep.connEVD.pushInternal(Event{Number: num, Conn: ConnectionEventData{EP: ep, PrivateData: pd},
		IB: IBExtensionData{Type: t, Status: IBOpErr, CM: cm}})
}

// established posts the established event of a resolved peer, with its
// address handle, and makes the EP CONNECTED.
func (cm *UDCM) established(t IBExtType, a *AH, qpn uint32, pd []byte) {
	if !cm.finish() {
		a.ep.mu.Lock()
		delete(a.ep.ud.ahs, a)
		a.ep.mu.Unlock()
		a.free()
		return
	}
	ep := cm.ep
	ep.state.CompareAndSwap(uint32(EPStateUnconnected), uint32(EPStateConnected))
	ep.connEVD.countConn()
	ep.connEVD.pushInternal(Event{Number: EventIBUDConnectionEstablished, Conn: ConnectionEventData{EP: ep, PrivateData: pd},
		IB: IBExtensionData{Type: t, Status: IBOpSuccess, CM: cm,
			RemoteAH: IBAddrHandle{AH: a, QPN: qpn, IAAddr: cm.remote.Addr()}}})
}

// cmEvent handles an rdma_cm event of the active side of a UD connection.
func (cm *UDCM) cmEvent(ev cverbs.CMEvent) {
	if cm.dead() {
		return
	}
	ep, id := cm.ep, cm.id
	switch ev.Type {
	case cverbs.CMEventAddrResolved:
		if err := id.ResolveRoute(cmResolveTimeout); err != nil {
			cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
		}
	case cverbs.CMEventRouteResolved:
		if err := id.Connect(cverbs.ConnParam{PrivateData: cm.pd, QPNum: ep.qpn}); err != nil {
			cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
		}
	case cverbs.CMEventEstablished:
		pd, _ := parseUDHeader(ev.PrivateData, udHeaderLen)
		a, err := ep.newAH(ev.AHAttr, ev.QKey)
		if err != nil {
			cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
			return
		}
		cm.established(IBUDRemoteAH, a, ev.QPNum, bytes.Clone(pd))
	case cverbs.CMEventUnreachable, cverbs.CMEventRejected:
		if ev.Status == ibSIDRReject || ev.Type == cverbs.CMEventRejected {
			pd, _ := parseUDHeader(ev.PrivateData, udHeaderLen)
			cm.fail(EventIBUDConnectionReject, IBUDConnectReject, bytes.Clone(pd))
			return
		}
		cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
	case cverbs.CMEventAddrError, cverbs.CMEventRouteError, cverbs.CMEventConnectError, cverbs.CMEventDeviceRemoval:
		cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
	}
}

// udRequest turns a UD connection request into a CR and an
// EventIBUDConnectionRequest. A request without the header of a Go UD EP is
// rejected. Caller holds p.mu.
func (p *PSP) udRequest(ev cverbs.CMEvent) {
	req, pd, ok := decodeUDRequest(ev.PrivateData)
	if !ok {
		ev.ID.Reject(nil)
		ev.ID.Close()
		return
	}
	ev.PrivateData = pd
	cr := p.ia.newCR(ev, p.connQual)
	if cr == nil {
		return
	}
	cr.psp = p
	cr.ud = &req
	p.evd.pushInternal(Event{Number: EventIBUDConnectionRequest,
		CR: CRArrivalData{PSP: p, LocalIAAddress: p.ia.addr, ConnQual: p.connQual, CR: cr},
		IB: IBExtensionData{Type: IBUDConnectRequest}})
}

// acceptUD accepts a UD connection request with ep, a UD EP that is
// UNCONNECTED or CONNECTED: it makes the address handle of the requester
// from what its header says, answers it, and posts ep's
// EventIBUDConnectionEstablished (IBUDPassiveRemoteAH). Caller holds cr.mu.
func (cr *CR) acceptUD(op string, ep *EP, privateData []byte) error {
	ia := cr.ia
	if !ep.isUD() {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if len(privateData) > maxUDRepPrivData {
		return newError(op, InvalidParameter|InvalidArg4)
	}
	if ep.connEVD == nil {
		return newError(op, InvalidState|InvalidStateEPEVDConnect)
	}
	if s := ep.getState(); !udUsable(s) {
		return newError(op, InvalidState|stateSubtype(s))
	}
	_, sgid, err := ia.localGID()
	if err != nil {
		return newErrorDetail(op, InvalidAddress|InvalidAddressUnsupported, err.Error())
	}
	req := cr.ud
	attr := cverbs.AHAttr{DLID: req.lid, PortNum: ia.port, IsGlobal: true,
		GRH: cverbs.GlobalRoute{DGID: req.gid, SGIDIndex: uint8(sgid), HopLimit: 64}}
	a, err := ep.newAH(attr, req.qkey)
	if err != nil {
		return verbsErr(op, err, InsufficientResources)
	}
	cm := &UDCM{object: liveObject(), ep: ep, id: cr.id, remote: cr.remote, connQual: cr.connQual}
	ep.mu.Lock()
	ep.ud.cms[cm] = struct{}{}
	ep.mu.Unlock()
	ia.registerCM(cr.id, cm)
	cr.ep = ep
	cr.doneLocked()
	err = cr.id.Accept(cverbs.ConnParam{PrivateData: appendUDHeader(nil, privateData), QPNum: ep.qpn})
	if err != nil {
		ep.mu.Lock()
		delete(ep.ud.cms, cm)
		ep.mu.Unlock()
		cm.fail(EventIBUDConnectionError, IBUDConnectError, nil)
		cm.close()
		ep.mu.Lock()
		delete(ep.ud.ahs, a)
		ep.mu.Unlock()
		a.free()
		return verbsErr(op, err, InternalError)
	}
	// The requester's private data, as C's UD providers give it to the
	// passive side too.
	cm.established(IBUDPassiveRemoteAH, a, req.qpn, bytes.Clone(cr.privateData))
	ia.count(IACounterSPCRAccepted)
	return nil
}

// udDisconnectLocked ends every connection of a UD EP (Disconnect): their
// rdma_cm ids are freed, the QP flushes what is outstanding, and the EP is
// DISCONNECTED with an EventConnectionDisconnected. Its address handles
// stay until freed. Caller holds ep.mu.
func (ep *EP) udDisconnectLocked() {
	cms := keys(ep.ud.cms)
	clear(ep.ud.cms)
	for _, cm := range cms {
		cm.done = true
		go cm.close()
	}
	ep.failLocked(EventConnectionDisconnected, nil)
}

package udat

import (
	"bytes"
	"errors"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/udapl-go/udapl/cverbs"
)

// Connection management follows the C reference's cma provider, so that C
// uDAPL programs and this package connect to each other:
//
//   - a connection qualifier up to 0xffff is the rdma_cm port; a larger one
//     maps to (conn_qual % 32001) + 33534;
//   - connect sends responder_resources = MaxRDMAReadIn, initiator_depth =
//     MaxRDMAReadOut, flow control on, the EP's RetryCount (C: 7) and RNR
//     retry count 7; each side sets its EP's ACKTimeout (C: rdma_cm's
//     default) on its rdma_cm id (retransmit.go);
//   - private data goes on the wire unchanged, up to the limits of
//     privateDataLimits; a reject carries the 4-byte header 02 00 02 00
//     before the Consumer's private data, and the active side strips it;
//   - when the peer disconnects, the EP disconnects too.
//
// The EP's QP exists from EP creation on and is driven by rdma_cm as an
// external QP (cverbs CMID.ModifyQP).

const (
	cmRNRRetryCount      = 7 // forever: a receiver short of receives is not dead (but see retransmit.go on Soft-RoCE)
	cmResolveTimeout     = 2 * time.Second
	ibRejConsumerDefined = 28 // IB_CM_REJ_CONSUMER_DEFINED
)

var rejectHeader = []byte{0x02, 0x00, 0x02, 0x00}

// peerRejected tells a reject by the peer's Consumer from one by its
// connection manager or transport. On InfiniBand and RoCE the reject's
// reason says which; iWARP gives ECONNREFUSED for both, but a DAT peer's
// reject, C's as ours, carries rejectHeader in its private data, and a
// refused TCP connection carries none.
func peerRejected(ev cverbs.CMEvent) bool {
	return ev.Status == ibRejConsumerDefined || bytes.HasPrefix(ev.PrivateData, rejectHeader)
}

// ConnQualPort returns the rdma_cm port a connection qualifier maps to.
func ConnQualPort(connQual ConnQual) uint16 {
	if connQual <= 0xffff {
		return uint16(connQual)
	}
	return uint16(connQual%32001 + 33534)
}

// registerCM records which object a connection manager id serves: *EP,
// *CR, *PSP, *RSP or *UDCM. The record is the id's Context, under ia.mu:
// the ids are udat's own, and a CM event finds its owner without a map.
func (ia *IA) registerCM(id *cverbs.CMID, owner any) {
	ia.mu.Lock()
	id.Context = owner
	ia.mu.Unlock()
}

func (ia *IA) unregisterCM(id *cverbs.CMID) {
	if id == nil {
		return
	}
	ia.mu.Lock()
	id.Context = nil
	ia.mu.Unlock()
}

func (ia *IA) cmOwner(id *cverbs.CMID) any {
	if id == nil {
		return nil
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	return id.Context
}

// listenCM makes an rdma_cm id that listens on connQual for owner, a PSP or
// an RSP; with ud, in the RDMA_PS_UDP port space, where the connection
// requests of UD EPs arrive.
func (ia *IA) listenCM(op string, connQual ConnQual, owner any, ud bool) (*cverbs.CMID, error) {
	create := ia.ech.CreateID
	if ud {
		create = ia.ech.CreateUDID
	}
	id, err := create()
	if err != nil {
		return nil, verbsErr(op, err, InsufficientResources)
	}
	ia.registerCM(id, owner)
	err = id.BindAddr(netip.AddrPortFrom(ia.addr, ConnQualPort(connQual)))
	if err == nil {
		err = id.Listen(listenBacklog)
	}
	if err != nil {
		ia.unregisterCM(id)
		id.Close()
		return nil, verbsErr(op, err, ConnQualInUse)
	}
	return id, nil
}

// beforeCMEvent, when set, runs before each rdma_cm event is handled:
// tests hold an event back with it.
var beforeCMEvent atomic.Pointer[func(cverbs.CMEvent)]

// dispatchCM hands an rdma_cm event to the service point, EP, UD EP or CR
// it belongs to.
func (ia *IA) dispatchCM(ev cverbs.CMEvent) {
	if hold := beforeCMEvent.Load(); hold != nil {
		(*hold)(ev)
	}
	if ev.Type == cverbs.CMEventConnectRequest {
		switch sp := ia.cmOwner(ev.ListenID).(type) {
		case *PSP:
			sp.request(ev)
		case *RSP:
			sp.request(ev)
		default:
			if ev.ID != nil {
				ev.ID.Reject(nil)
				ev.ID.Close()
			}
		}
		return
	}
	switch o := ia.cmOwner(ev.ID).(type) {
	case *EP:
		o.cmEvent(ev)
	case *UDCM:
		o.cmEvent(ev)
	case *CR:
		o.cmEvent(ev)
	}
}

// Connect requests a connection to the service point connQual of the IA at
// remote (dat_ep_connect). It returns once the request is under way; the
// outcome arrives on the EP's connect EVD: EventConnectionEstablished (with
// the peer's private data), EventConnectionPeerRejected (with the private
// data the peer rejected with), EventConnectionNonPeerRejected,
// EventConnectionUnreachable or EventConnectionTimedOut after timeout
// microseconds (TimeoutInfinite: no limit). The EP must be UNCONNECTED.
func (ep *EP) Connect(remote netip.Addr, connQual ConnQual, timeout Timeout, privateData []byte, qos QoS, flags ConnectFlags) error {
	const op = "dat_ep_connect"
	if err := ep.check(op); err != nil {
		return err
	}
	if !remote.IsValid() || remote.IsUnspecified() {
		return newError(op, InvalidAddress|InvalidAddressMalformed)
	}
	return ep.connect(op, netip.AddrPortFrom(remote.Unmap(), ConnQualPort(connQual)), connQual, timeout, privateData, qos, flags)
}

func (ep *EP) connect(op string, dst netip.AddrPort, connQual ConnQual, timeout Timeout, privateData []byte, qos QoS, flags ConnectFlags) error {
	ep.count(EPCounterConnect) // past the handle checks, as C counts it
	if len(privateData) > ep.ia.privateData.connect {
		return newError(op, InvalidParameter|InvalidArg5)
	}
	if flags&^3 != 0 {
		return newError(op, InvalidParameter|InvalidArg8)
	}
	if qos&^0x0f != 0 {
		return newError(op, InvalidParameter|InvalidArg7)
	}
	if ep.connEVD == nil {
		return newError(op, InvalidState|InvalidStateEPEVDConnect)
	}
	if ep.isUD() {
		return ep.udConnect(op, dst, connQual, timeout, privateData)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.freeing {
		return badHandle(op, HandleTypeEP)
	}
	if s := ep.getState(); s != EPStateUnconnected {
		return newError(op, InvalidState|stateSubtype(s))
	}
	ep.remote = dst
	ep.remoteQual = connQual
	ep.connPD = bytes.Clone(privateData)
	ep.terminated = false
	ep.setState(EPStateActiveConnectionPending)
	ep.dialDeadline = time.Time{}
	if timeout != TimeoutInfinite {
		ep.dialDeadline = time.Now().Add(time.Duration(timeout) * time.Microsecond)
	}
	ep.redials = 0
	if err := ep.dialLocked(op); err != nil {
		ep.setState(EPStateUnconnected)
		return err
	}
	return nil
}

// dialLocked starts the active connection attempt to ep.remote on the
// EP's readied rdma_cm id (epid.go) or a new one: address resolution, whose
// event leads on to the route and rdma_connect (cmEvent), and the
// Consumer's timeout. Caller holds ep.mu.
func (ep *EP) dialLocked(op string) error {
	ia := ep.ia
	id, ready, err := ep.dialIDLocked()
	if err != nil {
		return verbsErr(op, err, InsufficientResources)
	}
	ep.cmid, ep.cmidReady = id, ready
	rt := cmResolveTimeout
	if !ep.dialDeadline.IsZero() {
		d := time.Until(ep.dialDeadline)
		rt = min(rt, max(d, time.Millisecond))
		ep.timer = time.AfterFunc(d, func() { ep.timedOut(id, EPStateActiveConnectionPending, EventConnectionTimedOut) })
	}
	var src netip.AddrPort // a readied id is bound already
	if ia.addr.IsValid() && !ready {
		src = netip.AddrPortFrom(ia.addr, 0)
	}
	if err := id.ResolveAddr(src, ep.remote, rt); err != nil {
		ep.cmid = nil
		if ep.timer != nil {
			ep.timer.Stop()
			ep.timer = nil
		}
		ia.unregisterCM(id)
		id.Close()
		return verbsErr(op, err, InvalidAddress|InvalidAddressUnreachable)
	}
	return nil
}

// maxRedials bounds how often one connection attempt starts again for
// want of a local port.
const maxRedials = 4

// redialLocked starts the connection attempt again on a new rdma_cm id,
// so with another local port, when rdma_connect failed for want of the
// one it had, and reports whether it did. On iWARP rdma_connect makes a
// TCP connection from the port rdma_cm picked, and rdma_cm picks it without
// regard to the ports TCP holds: one another socket listens on, or one in
// TIME_WAIT after a connection to the same peer, fails the kernel's bind
// (EADDRINUSE) or connect (EADDRNOTAVAIL). C gives up there; the peer is
// reachable, so udat takes another port. Caller holds ep.mu.
func (ep *EP) redialLocked(errno syscall.Errno) bool {
	if errno != syscall.EADDRINUSE && errno != syscall.EADDRNOTAVAIL || ep.redials == maxRedials {
		return false
	}
	ep.redials++
	if ep.timer != nil {
		ep.timer.Stop()
		ep.timer = nil
	}
	return ep.dialLocked("rdma_connect") == nil
}

// DupConnect connects ep to the same remote service point as dupEP is
// connected to (dat_ep_dup_connect): the remote IA address and connection
// qualifier of dupEP. dupEP must be CONNECTED.
func (ep *EP) DupConnect(dupEP *EP, timeout Timeout, privateData []byte, qos QoS) error {
	const op = "dat_ep_dup_connect"
	if err := ep.check(op); err != nil {
		return err
	}
	if dupEP == nil || dupEP.dead() {
		return newError(op, InvalidHandle|InvalidHandleEP)
	}
	dupEP.mu.Lock()
	s := dupEP.getState()
	remote, qual := dupEP.remote, dupEP.remoteQual
	dupEP.mu.Unlock()
	if s != EPStateConnected {
		return newError(op, InvalidState|stateSubtype(s))
	}
	return ep.connect(op, netip.AddrPortFrom(remote.Addr(), ConnQualPort(qual)), qual, timeout, privateData, qos, 0)
}

// timedOut ends what the EP's timer bounded, if the EP is still in state
// pending on the same connection: a connection attempt that took longer
// than the Consumer's timeout (TIMED_OUT), or a disconnect whose answer did
// not come in time (DISCONNECTED, its outstanding DTOs flushed).
func (ep *EP) timedOut(id *cverbs.CMID, pending EPState, ev EventNumber) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.cmid != id || ep.getState() != pending {
		return
	}
	ep.timer = nil
	ep.failLocked(ev, nil)
}

// abruptDisconnectWait is how long an abrupt Disconnect waits for the
// connection manager's answer before it ends the connection itself, as C's
// cma provider does (25 waits of 10 ms). A graceful one waits as long as the
// EP's DTOs may take to fail when the peer is gone (EPAttr.DeadPeerTimeout).
// Without a bound, a peer that cannot be reached holds the EP's DTOs and its
// DISCONNECTED event for as long as the connection manager resends its
// disconnect request: 70 s on Soft-RoCE.
const abruptDisconnectWait = 250 * time.Millisecond

// failLocked ends a connection attempt or a connection: the EP becomes
// DISCONNECTED, its QP flushes, and the event is posted once. Caller holds
// ep.mu.
func (ep *EP) failLocked(num EventNumber, pd []byte) {
	ep.setState(EPStateDisconnected)
	if ep.timer != nil {
		ep.timer.Stop()
		ep.timer = nil
	}
	ep.flushQueues()
	if !ep.terminated {
		ep.terminated = true
		ep.connEVD.countConn()
		ep.connEVD.pushInternal(Event{Number: num, Conn: ConnectionEventData{EP: ep, PrivateData: pd}})
	}
}

// establishedLocked completes a connection. Caller holds ep.mu.
func (ep *EP) establishedLocked(pd []byte) {
	if ep.timer != nil {
		ep.timer.Stop()
		ep.timer = nil
	}
	s := ep.getState()
	if !ep.state.CompareAndSwap(uint32(s), uint32(EPStateConnected)) {
		return
	}
	ep.armWatch()
	ep.connEVD.countConn()
	ep.connEVD.pushInternal(Event{Number: EventConnectionEstablished, Conn: ConnectionEventData{EP: ep, PrivateData: pd}})
}

// isOp reports whether err is a cverbs error of operation op.
func isOp(err error, op string) bool {
	var oe *cverbs.OpError
	return errors.As(err, &oe) && oe.Op == op
}

// beforeConnect, when set, runs before each rdma_connect: tests stand in
// with it for a connect that blocks.
var beforeConnect func(*EP)

// sendConnect sends the connection request of id (rdma_connect) in a
// goroutine of its own, outside ep.mu, where it may block (cmEvent sends
// it inline on InfiniBand and RoCE, where it does not): on iWARP
// rdma_connect blocks in the kernel's TCP connect until TCP gives up,
// minutes for an address that does not answer. Meanwhile the Consumer's
// timeout ends the attempt on time, other connections' events flow, and
// Free or Reset leave the id to be closed here (takeIDLocked).
func (ep *EP) sendConnect(id *cverbs.CMID, p cverbs.ConnParam) {
	if beforeConnect != nil {
		beforeConnect(ep)
	}
	err := id.Connect(p)
	ep.mu.Lock()
	if ep.dialing == id {
		ep.dialing = nil
	}
	if err != nil && ep.cmid == id && ep.getState() == EPStateActiveConnectionPending {
		var en syscall.Errno
		errors.As(err, &en)
		if !ep.redialLocked(en) {
			ep.failLocked(connectFailure(en), nil)
		}
	}
	stale := ep.cmid != id
	ep.mu.Unlock()
	if stale {
		ep.ia.unregisterCM(id)
		id.Close()
	}
}

// connectFailure is the event that ends a connection attempt that failed
// with errno: on iWARP, whose rdma_connect makes the TCP connection, a
// refused one means that no one listens there, a reject by the peer's
// transport.
func connectFailure(errno syscall.Errno) EventNumber {
	switch errno {
	case syscall.ETIMEDOUT:
		return EventConnectionTimedOut
	case syscall.ECONNREFUSED:
		return EventConnectionNonPeerRejected
	}
	return EventConnectionUnreachable
}

// takeIDLocked detaches the EP's rdma_cm id and returns it for the caller
// to close, or nil when its rdma_connect is still running: sendConnect
// closes it then. Caller holds ep.mu.
func (ep *EP) takeIDLocked() *cverbs.CMID {
	id := ep.cmid
	ep.cmid = nil
	if id == ep.dialing {
		return nil
	}
	return id
}

// idleIDLocked returns the EP's rdma_cm id unless it is nil or busy in
// rdma_connect, which holds it. Caller holds ep.mu.
func (ep *EP) idleIDLocked() *cverbs.CMID {
	if ep.cmid == ep.dialing {
		return nil
	}
	return ep.cmid
}

// cmEvent handles an rdma_cm event for the EP's connection.
func (ep *EP) cmEvent(ev cverbs.CMEvent) {
	if ev.Type == cverbs.CMEventDisconnected && !ep.ia.ibTransport() {
		// iWARP ends the stream of a QP that failed (a remote access
		// error, say) as an orderly end, after the device raised the
		// failure: handled first, it breaks the EP (handleAsync), and
		// the end is BROKEN, not DISCONNECTED. Before ep.mu, which
		// handleAsync does not take but its callers' locks come after.
		ep.ia.vctx.DrainAsync(ep.ia.handleAsync)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	id := ep.cmid
	if id == nil || ev.ID != id {
		return
	}
	s := ep.getState()
	active := s == EPStateActiveConnectionPending
	switch ev.Type {
	case cverbs.CMEventAddrResolved:
		if !active {
			return
		}
		// The ACK timeout before the route: on RoCE the route's packet
		// lifetime follows from it. A readied id has it.
		var err error
		if ep.cmidReady {
			err = id.ResolveRoute(cmResolveTimeout)
		} else {
			err = id.ResolveRouteACK(uint8(ep.attr.ACKTimeout), cmResolveTimeout)
		}
		if err != nil {
			ep.failLocked(EventConnectionUnreachable, nil)
		}
	case cverbs.CMEventRouteResolved:
		if !active {
			return
		}
		p := cverbs.ConnParam{
			PrivateData:        ep.connPD,
			ResponderResources: uint8(ep.attr.MaxRDMAReadIn),
			InitiatorDepth:     uint8(ep.attr.MaxRDMAReadOut),
			RetryCount:         uint8(ep.attr.RetryCount),
			RNRRetryCount:      cmRNRRetryCount,
			FlowControl:        true,
			QPNum:              ep.qpn,
		}
		if ep.ia.ibTransport() && beforeConnect == nil {
			// On InfiniBand and RoCE rdma_connect only hands the request
			// to the kernel's CM, which sends it: INIT (unless the id was
			// readied) and the request go in one call, here, without a
			// goroutine.
			var err error
			if ep.cmidReady {
				err = id.Connect(p)
			} else {
				err = id.ConnectQP(ep.qp, p)
			}
			if err != nil {
				if isOp(err, "rdma_connect") {
					var en syscall.Errno
					errors.As(err, &en)
					ep.failLocked(connectFailure(en), nil)
				} else {
					ep.failLocked(EventConnectionNonPeerRejected, nil)
				}
			}
			return
		}
		if !ep.cmidReady {
			if err := id.ModifyQP(ep.qp, cverbs.QPInit); err != nil {
				ep.failLocked(EventConnectionNonPeerRejected, nil)
				return
			}
		}
		ep.dialing = id
		go ep.sendConnect(id, p)
	case cverbs.CMEventConnectResponse:
		if !active {
			return
		}
		// INIT again first, as librdmacm does for its own QPs: before the
		// connection existed, rdma_init_qp_attr gave the QP no remote
		// access; now it gives remote write, and remote read when the
		// peer accepted RDMA reads. Without this the peer's RDMA to this
		// side fails. Then RTR, RTS and rdma_establish, all in one call.
		rts, known, err := id.ReadyQP(ep.qp, -1, nil)
		if err != nil {
			if !isOp(err, cverbs.OpEstablish) {
				id.Reject(nil) // the QP is not ready: the peer must not wait
			}
			ep.failLocked(EventConnectionNonPeerRejected, nil)
			return
		}
		ep.rts, ep.rtsSet = rts, known
		// The reply's depths, as the IB CM reports them to this side:
		// ResponderResources is the reads the peer will issue here,
		// InitiatorDepth those it takes.
		ep.rdIn = min(ep.attr.MaxRDMAReadIn, int(ev.ResponderResources))
		ep.rdOut = min(ep.attr.MaxRDMAReadOut, int(ev.InitiatorDepth))
		ep.rdSet = true
		ep.establishedLocked(ev.PrivateData)
	case cverbs.CMEventEstablished:
		if !ep.ia.ibTransport() && (s == EPStateActiveConnectionPending || s == EPStateCompletionPending) {
			// iWARP: the depths the connection got (MPA's IRD and ORD
			// exchange), which soft-iWARP may raise above those asked: its
			// passive side takes an IRD up to the active side's ORD
			// (siw_accept, relaxed_ird_negotiation). The iWARP connection
			// manager reports the IRD as InitiatorDepth and the ORD as
			// ResponderResources (cma_iw_handler).
			ep.rdIn, ep.rdOut, ep.rdSet = int(ev.InitiatorDepth), int(ev.ResponderResources), true
		}
		switch s {
		case EPStateActiveConnectionPending:
			ep.establishedLocked(ev.PrivateData)
		case EPStateCompletionPending:
			// The passive side's ESTABLISHED carries no private data.
			ep.establishedLocked(nil)
		}
	case cverbs.CMEventRejected:
		switch s {
		case EPStateActiveConnectionPending:
			if peerRejected(ev) {
				ep.failLocked(EventConnectionPeerRejected, bytes.TrimPrefix(ev.PrivateData, rejectHeader))
			} else {
				ep.failLocked(EventConnectionNonPeerRejected, nil)
			}
		case EPStateCompletionPending:
			ep.failLocked(EventConnectionAcceptCompletionError, nil)
		}
	case cverbs.CMEventAddrError, cverbs.CMEventRouteError, cverbs.CMEventUnreachable, cverbs.CMEventConnectError:
		switch s {
		case EPStateActiveConnectionPending:
			ep.failLocked(connectFailure(syscall.Errno(max(ev.Status, -ev.Status))), nil)
		case EPStateCompletionPending:
			ep.failLocked(EventConnectionAcceptCompletionError, nil)
		case EPStateConnected, EPStateDisconnectPending:
			ep.failLocked(EventConnectionBroken, nil)
		}
	case cverbs.CMEventDisconnected:
		switch s {
		case EPStateConnected, EPStateCompletionPending:
			// A DTO that failed before the end was reported broke the
			// connection, whatever ends it now (on iWARP a local error
			// closes the stream at once): its completion is taken in
			// first, as a poll would, and reports BROKEN (markBroken).
			ep.recvEVD.reap()
			ep.reqEVD.reap()
			if ep.getState() == EPStateDisconnected {
				break
			}
			// The peer disconnected, or on iWARP the link went down,
			// which its connection manager reports the same way: answer.
			ep.flushQueues()
			id.Disconnect()
			end := EventConnectionDisconnected
			if ep.ia.linkDown() {
				end = EventConnectionBroken
			}
			ep.failLocked(end, nil)
		case EPStateDisconnectPending:
			ep.failLocked(EventConnectionDisconnected, nil)
		case EPStateDisconnected:
			// A broken connection already reported its end.
		}
	case cverbs.CMEventDeviceRemoval:
		ep.failLocked(EventConnectionBroken, nil)
	}
}

// Disconnect ends the EP's connection (dat_ep_disconnect). With
// CloseGracefulFlag, DTOs in progress may complete; with CloseAbruptFlag they
// are flushed at once. The EP is DISCONNECTED when EventConnectionDisconnected
// arrives on its connect EVD: when the peer answers, or at the latest 250 ms
// after an abrupt disconnect and EPAttr.DeadPeerTimeout after a graceful one,
// when the DTOs still outstanding are flushed. A connection attempt still
// pending is abandoned the same way.
func (ep *EP) Disconnect(flags CloseFlags) error {
	const op = "dat_ep_disconnect"
	if err := ep.check(op); err != nil {
		return err
	}
	ep.count(EPCounterDisconnect)
	if flags != CloseAbruptFlag && flags != CloseGracefulFlag {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.freeing {
		return badHandle(op, HandleTypeEP)
	}
	s := ep.getState()
	if ep.isUD() && udUsable(s) {
		ep.udDisconnectLocked()
		return nil
	}
	switch s {
	case EPStateConnected, EPStateCompletionPending:
		if !ep.state.CompareAndSwap(uint32(s), uint32(EPStateDisconnectPending)) {
			return nil // broken meanwhile: already DISCONNECTED
		}
		if flags == CloseAbruptFlag {
			ep.flushQueues()
		}
		if err := ep.cmid.Disconnect(); err != nil {
			ep.failLocked(EventConnectionDisconnected, nil)
			return nil
		}
		id, wait := ep.cmid, abruptDisconnectWait
		if flags == CloseGracefulFlag {
			wait = ep.attr.DeadPeerTimeout()
		}
		ep.timer = time.AfterFunc(wait, func() { ep.timedOut(id, EPStateDisconnectPending, EventConnectionDisconnected) })
		return nil
	case EPStateDisconnectPending:
		if flags == CloseAbruptFlag {
			ep.flushQueues()
		}
		return nil
	case EPStateActiveConnectionPending:
		if id := ep.idleIDLocked(); id != nil {
			id.Disconnect()
		}
		ep.failLocked(EventConnectionDisconnected, nil)
		return nil
	case EPStatePassiveConnectionPending:
		cr := ep.cr
		ep.cr = nil
		if cr != nil {
			go cr.Reject(nil)
		}
		ep.setState(EPStateReserved)
		return nil
	case EPStateDisconnected:
		return nil
	}
	return newError(op, InvalidState|stateSubtype(s))
}

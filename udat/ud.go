package udat

import (
	"fmt"
	"net/netip"
	"sync/atomic"

	"github.com/udapl-go/udapl/cverbs"
)

// Unreliable datagrams: the UD part of the IB extensions of OFA DAPL 2.x
// (DAT_IB_SERVICE_TYPE_UD). A UD EP owns one UD QP that talks to many peers.
// "Connecting" it (Connect, a PSP and CR.Accept) resolves one peer: both
// sides get an address handle (IBAddrHandle) for it in an
// EventIBUDConnectionEstablished, then send datagrams with PostSendUD and
// receive them with PostRecv. The connections go through rdma_cm's
// RDMA_PS_UDP port space (SIDR), which tells the active side the passive
// QP; the active side tells the passive one its own QP number, qkey, LID
// and GID in a header before the Consumer's private data:
//
//	connect:        'U' 'D' 1 len | qpn (4) | qkey (4) | lid (2) | 0 0 | gid (16) | private data
//	accept, reject: 'U' 'D' 1 len | private data
//
// (integers big-endian, len the length of the Consumer's private data), so
// the Consumer's private data come back at their length rather than padded
// to SIDR's fixed sizes. A UD accept or reject carries at most 132 bytes of
// private data. C's cma provider offers no UD (DAT_IB_UD is absent from its
// provider attributes), so these EPs talk to Go peers only.

// ServiceTypeIBUD is DAT_IB_SERVICE_TYPE_UD: EPAttr.ServiceType of an EP
// whose QP is an unreliable datagram QP.
const ServiceTypeIBUD = ServiceTypeExtensionBase

// The UD connection events (DAT_IB_EVENT_NUMBER). Each has IB.Type saying
// what its extension data hold.
const (
	// EventIBUDConnectionRequest is DAT_IB_UD_CONNECTION_REQUEST_EVENT: a
	// UD connection request at a PSP; CR is filled as for
	// EventConnectionRequest and IB.Type is IBUDConnectRequest.
	EventIBUDConnectionRequest EventNumber = EventIBDTO + 1 + iota
	// EventIBUDConnectionEstablished is
	// DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED: a peer is resolved. IB.Type
	// is IBUDRemoteAH (active side, Conn.PrivateData the peer's) or
	// IBUDPassiveRemoteAH (passive side), IB.RemoteAH addresses the peer
	// and IB.CM is the connection's state (EP.UDCMFree).
	EventIBUDConnectionEstablished
	// EventIBUDConnectionReject is DAT_IB_UD_CONNECTION_REJECT_EVENT: the
	// peer rejected the request (IB.Type IBUDConnectReject,
	// Conn.PrivateData the peer's).
	EventIBUDConnectionReject
	// EventIBUDConnectionError is DAT_IB_UD_CONNECTION_ERROR_EVENT: the
	// peer could not be reached or did not answer in time (IB.Type
	// IBUDConnectError).
	EventIBUDConnectionError
)

// The UD DTO operations (DAT_IB_DTOS).
const (
	// DTOIBSendUD is DAT_IB_DTO_SEND_UD: a datagram sent (PostSendUD).
	DTOIBSendUD DTOOp = DTOIBRecvMsgImmed + 1 + iota
	// DTOIBRecvUD is DAT_IB_DTO_RECV_UD: a datagram received on a UD EP.
	DTOIBRecvUD
	// DTOIBRecvUDImmed is DAT_IB_DTO_RECV_UD_IMMED: a datagram received
	// with immediate data.
	DTOIBRecvUDImmed
)

// The UD extension data types (DAT_IB_EXT_TYPE).
const (
	// IBUDConnectRequest is DAT_IB_UD_CONNECT_REQUEST.
	IBUDConnectRequest IBExtType = 5
	// IBUDRemoteAH is DAT_IB_UD_REMOTE_AH: the active side's established
	// event.
	IBUDRemoteAH IBExtType = 6
	// IBUDPassiveRemoteAH is DAT_IB_UD_PASSIVE_REMOTE_AH: the passive
	// side's established event.
	IBUDPassiveRemoteAH IBExtType = 7
	// IBUDSend is DAT_IB_UD_SEND: a datagram send completed.
	IBUDSend IBExtType = 8
	// IBUDRecv is DAT_IB_UD_RECV: a datagram arrived; RemoteAH.QPN is
	// the sender's QP.
	IBUDRecv IBExtType = 9
	// IBUDConnectReject is DAT_IB_UD_CONNECT_REJECT.
	IBUDConnectReject IBExtType = 10
	// IBUDConnectError is DAT_IB_UD_CONNECT_ERROR.
	IBUDConnectError IBExtType = 11
)

// GRHSize is the size of the Global Routing Header that precedes every
// datagram in a UD receive buffer: as with C DAPL, post receive buffers of
// the largest datagram plus 40 bytes; the transferred length counts the
// header too.
const GRHSize = cverbs.GRHSize

// IBAddrHandle is DAT_IB_ADDR_HANDLE: how to reach one UD peer. AH is the
// address handle (C's struct ibv_ah *), QPN the peer's QP and IAAddr its IA
// address. The receive event of a datagram fills only QPN, with the
// sender's QP (its IA address is in the source GID of the GRH).
type IBAddrHandle struct {
	AH     *AH
	QPN    uint32
	IAAddr netip.Addr
}

// AH is an address handle: the route to one UD peer. As in C, where it
// belongs to the protection domain, every UD EP of the PZ of the EP that
// resolved it may send through it, until that EP frees it (EP.UDAHFree,
// or the EP's Free).
type AH struct {
	object
	ep   *EP // the EP that resolved it
	pz   *PZ
	vah  *cverbs.AH
	qkey uint32
	// refs counts the resolving EP's hold, until it frees the handle, and
	// the sends posted through it and not completed: the verbs handle is
	// destroyed when the last of them ends, never under a send.
	refs atomic.Int64
}

// hold takes a reference for a send, unless the handle is freed.
func (a *AH) hold() bool {
	for {
		n := a.refs.Load()
		if n <= 0 {
			return false
		}
		if a.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives back a reference; the last destroys the verbs handle.
func (a *AH) release() {
	if a.refs.Add(-1) == 0 {
		a.vah.Close()
	}
}

// free ends the resolving EP's hold: no new send may use the handle.
func (a *AH) free() {
	if !a.freed.Swap(true) {
		a.release()
	}
}

// UDCM is the state of one UD connection (C's CM handle, given in the
// established event's context): the rdma_cm id that resolved the peer.
// EP.UDCMFree frees it once the Consumer has the address handle; the EP's
// Free or Disconnect frees the ones left.
type UDCM struct {
	object
	ep       *EP
	id       *cverbs.CMID
	active   bool
	remote   netip.AddrPort
	connQual ConnQual
	pd       []byte // the connect request's private data, header included
	// done: the connection's last event (established, reject or error)
	// is posted.
	done bool
}

// udEP is the state a UD EP adds: its peers' connections and address
// handles, guarded by the EP's mu.
type udEP struct {
	cms map[*UDCM]struct{}
	ahs map[*AH]struct{}
	// self routes the EP's flush markers (udMarker) to its own port; made
	// at the first flush that needs one, guarded by the send ring's mu.
	self *cverbs.AH
}

// isUD reports whether the EP is a UD EP.
func (ep *EP) isUD() bool { return ep.ud != nil }

// PostSendUD sends the data of localIOV as one datagram to the peer ah
// addresses (dat_ib_post_send_ud). The EP must be a UD EP (else
// DAT_INVALID_PARAMETER | DAT_INVALID_ARG1) and CONNECTED, or DISCONNECTED
// (the send completes at once as flushed); ah must be a live address
// handle that a UD EP of the same PZ resolved, else DAT_INVALID_HANDLE. A datagram larger than the
// port's active MTU (the EP's MaxMessageSize) is DAT_INVALID_PARAMETER |
// DAT_INVALID_ARG3, like any DTO over the EP's largest message. Otherwise
// the rules of PostSend apply. The completion is an EventIBDTO with Op
// DTOIBSendUD and IB.Type IBUDSend; the peer's receive completes as
// DTOIBRecvUD.
func (ep *EP) PostSendUD(localIOV []LMRTriplet, ah *IBAddrHandle, cookie uint64, flags CompletionFlags) error {
	return ep.postOne(&Request{Op: DTOIBSendUD, LocalIOV: localIOV, AH: ah, Cookie: cookie, Flags: flags})
}

// checkUD makes the checks a UD EP adds to those of every request: only UD
// sends, to one of its live address handles, no larger than the MTU.
func (ep *EP) checkUD(o *requestOp, req *Request) error {
	if req.Op != DTOIBSendUD {
		if ep.isUD() {
			return newError(o.name, ModelNotSupported)
		}
		return nil
	}
	if !ep.isUD() {
		return newError(o.name, InvalidParameter|InvalidArg1)
	}
	if req.AH == nil || req.AH.AH == nil || req.AH.AH.dead() || req.AH.AH.pz != ep.pz {
		return newError(o.name, InvalidHandle)
	}
	return nil
}

// udMaxMessage is the largest datagram a UD EP sends: the port's MTU.
func (ia *IA) udMaxMessage() uint64 { return uint64(ia.portAttr.ActiveMTU) }

// checkUDSize refuses a datagram over the MTU.
func (ep *EP) checkUDSize(o *requestOp, total uint64) error {
	if limit := ep.ia.udMaxMessage(); total > limit {
		return newErrorDetail(o.name, InvalidParameter|o.iovArg,
			fmt.Sprintf("%d bytes exceed the port's MTU, %d bytes, the largest datagram", total, limit))
	}
	return nil
}

// makeUDQP creates the EP's UD QP and brings it to RTS with rdma_cm's
// RDMA_PS_UDP qkey, as rdma_create_qp does: a UD QP needs no connection.
func (ep *EP) makeUDQP(init cverbs.QPInitAttr) (*cverbs.QP, error) {
	qp, err := ep.pz.pd.NewUDQP(init)
	if err != nil && init.MaxInline > 0 {
		init.MaxInline = 0
		qp, err = ep.pz.pd.NewUDQP(init)
	}
	if err != nil {
		return nil, err
	}
	if err := qp.ToRTSUD(ep.ia.port, cverbs.UDPQKey); err != nil {
		qp.Close()
		return nil, err
	}
	return qp, nil
}

// newAH makes an address handle of the EP for attr and records it.
func (ep *EP) newAH(attr cverbs.AHAttr, qkey uint32) (*AH, error) {
	vah, err := ep.pz.pd.CreateAH(attr)
	if err != nil {
		return nil, err
	}
	a := &AH{object: liveObject(), ep: ep, pz: ep.pz, vah: vah, qkey: qkey}
	a.refs.Store(1)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.freeing || ep.dead() {
		a.free()
		return nil, badHandle("dat_ib_ud_ah", HandleTypeEP)
	}
	ep.ud.ahs[a] = struct{}{}
	return a, nil
}

// UDAHFree frees an address handle the EP resolved (dat_ib_ud_ah_free). A
// nil or freed handle, or one another EP resolved, gives
// DAT_INVALID_HANDLE; one that sends of any EP still use (posted and not
// completed) gives DAT_INVALID_STATE.
func (ep *EP) UDAHFree(ah *IBAddrHandle) error {
	const op = "dat_ib_ud_ah_free"
	if err := ep.check(op); err != nil {
		return err
	}
	if ah == nil || ah.AH == nil || ah.AH.ep != ep {
		return newError(op, InvalidHandle)
	}
	a := ah.AH
	ep.reqEVD.reap()
	ep.mu.Lock()
	if _, ok := ep.ud.ahs[a]; !ok || a.dead() {
		ep.mu.Unlock()
		return newError(op, InvalidHandle)
	}
	if a.refs.Load() > 1 {
		ep.mu.Unlock()
		return newError(op, InvalidState)
	}
	delete(ep.ud.ahs, a)
	ep.mu.Unlock()
	a.free()
	return nil
}

// UDCMFree frees the state of one UD connection of the EP
// (dat_ib_ud_cm_free): its rdma_cm id. The address handle it gave stays
// valid. A connection still being resolved is abandoned without an event.
// A nil, freed or foreign cm gives DAT_INVALID_HANDLE.
func (ep *EP) UDCMFree(cm *UDCM) error {
	const op = "dat_ib_ud_cm_free"
	if err := ep.check(op); err != nil {
		return err
	}
	if cm == nil || cm.ep != ep {
		return newError(op, InvalidHandle)
	}
	ep.mu.Lock()
	if _, ok := ep.ud.cms[cm]; !ok || cm.dead() {
		ep.mu.Unlock()
		return newError(op, InvalidHandle)
	}
	delete(ep.ud.cms, cm)
	ep.mu.Unlock()
	return verbsErr(op, cm.close(), InternalError)
}

// close destroys the connection's rdma_cm id; no event follows.
func (cm *UDCM) close() error {
	if cm.freed.Swap(true) {
		return nil
	}
	cm.ep.ia.unregisterCM(cm.id)
	return cm.id.Close()
}

// closeUDCMs frees the connections of a UD EP (its Free).
func (ep *EP) closeUDCMs() {
	ep.mu.Lock()
	cms := keys(ep.ud.cms)
	clear(ep.ud.cms)
	ep.mu.Unlock()
	for _, cm := range cms {
		cm.close()
	}
}

// closeUDAHs frees the address handles of a UD EP, once its QP is gone.
func (ep *EP) closeUDAHs() {
	ep.mu.Lock()
	ahs := keys(ep.ud.ahs)
	clear(ep.ud.ahs)
	ep.mu.Unlock()
	for _, a := range ahs {
		a.free() // sends of other EPs still posted through it keep it
	}
	ep.sq.mu.Lock()
	ep.ud.self.Close()
	ep.ud.self = nil
	ep.sq.mu.Unlock()
}

// markerQKey is the qkey of a UD flush marker: not the one the EP's QP
// accepts (cverbs.UDPQKey), so that a marker that left the QP after all
// would be dropped where it arrived.
const markerQKey = cverbs.UDPQKey ^ 1

// udMarker makes wr the flush marker of a UD EP (EP.postFlushMarker): a
// signalled zero-length datagram to its own QP, through an address handle
// of its own port. It reports false if no such handle can be made. Caller
// holds ep.sq.mu.
func (ep *EP) udMarker(wr *cverbs.SendWR) bool {
	if ep.ud.self == nil {
		gid, idx, err := ep.ia.localGID()
		if err != nil {
			return false
		}
		attr := cverbs.AHAttr{DLID: ep.ia.portAttr.LID, PortNum: ep.ia.port, IsGlobal: true,
			GRH: cverbs.GlobalRoute{DGID: gid, SGIDIndex: uint8(idx), HopLimit: 64}}
		if ep.ud.self, err = ep.pz.pd.CreateAH(attr); err != nil {
			return false
		}
	}
	wr.Op, wr.AH, wr.RemoteQPN, wr.RemoteQKey = cverbs.OpSend, ep.ud.self, ep.qpn, markerQKey
	return true
}

// localGID returns the GID the IA's port sends from and its index in the
// GID table: on RoCE the entry of the IA address (RoCE v2 preferred, as
// rdma_cm does), on InfiniBand entry 0.
func (ia *IA) localGID() ([16]byte, int, error) {
	if ia.portAttr.LinkLayer != cverbs.LinkLayerEthernet {
		g, err := ia.vctx.QueryGID(ia.port, 0)
		return g, 0, err
	}
	want := netip.AddrFrom16(ia.addr.As16()).As16() // IPv4 as ::ffff:a.b.c.d
	if slot := ia.gidSlot.Load(); slot > 0 {
		// The table changes only as the netdev's addresses do.
		if e, err := ia.vctx.QueryGIDEntry(ia.port, int(slot-1)); err == nil && e.GID == want {
			return e.GID, e.Index, nil
		}
	}
	best, found := cverbs.GIDEntry{}, false
	for i := 0; i < ia.portAttr.GIDTblLen; i++ {
		e, err := ia.vctx.QueryGIDEntry(ia.port, i)
		if err != nil || e.GID != want {
			continue
		}
		if !found || e.Type == cverbs.GIDTypeRoCEv2 {
			best, found = e, true
		}
		if e.Type == cverbs.GIDTypeRoCEv2 {
			break
		}
	}
	if !found {
		ia.gidSlot.Store(0)
		return [16]byte{}, 0, fmt.Errorf("no GID of %v on port %d", ia.addr, ia.port)
	}
	ia.gidSlot.Store(int32(best.Index) + 1)
	return best.GID, best.Index, nil
}

// The private-data headers of UD connections (see the top of this file).
const (
	udHeaderLen      = 4
	udReqHeaderLen   = 32
	udHeaderVersion  = 1
	maxUDRepPrivData = 136 - udHeaderLen // IB_CM_SIDR_REP_PRIVATE_DATA_SIZE
)

// udRequest is what a UD connect request tells the passive side.
type udRequest struct {
	qpn, qkey uint32
	lid       uint16
	gid       [16]byte
}

func appendUDHeader(b []byte, pd []byte) []byte {
	return append(append(b, 'U', 'D', udHeaderVersion, byte(len(pd))), pd...)
}

func encodeUDRequest(r udRequest, pd []byte) []byte {
	b := make([]byte, 0, udReqHeaderLen+len(pd))
	b = append(b, 'U', 'D', udHeaderVersion, byte(len(pd)))
	b = append(b, byte(r.qpn>>24), byte(r.qpn>>16), byte(r.qpn>>8), byte(r.qpn))
	b = append(b, byte(r.qkey>>24), byte(r.qkey>>16), byte(r.qkey>>8), byte(r.qkey))
	b = append(b, byte(r.lid>>8), byte(r.lid), 0, 0)
	b = append(b, r.gid[:]...)
	return append(b, pd...)
}

// parseUDHeader returns the Consumer's private data after a header of size
// n, or false if b does not start with a UD header.
func parseUDHeader(b []byte, n int) ([]byte, bool) {
	if len(b) < n || b[0] != 'U' || b[1] != 'D' || b[2] != udHeaderVersion || len(b) < n+int(b[3]) {
		return nil, false
	}
	if b[3] == 0 {
		return nil, true
	}
	return b[n : n+int(b[3]) : n+int(b[3])], true
}

func decodeUDRequest(b []byte) (udRequest, []byte, bool) {
	pd, ok := parseUDHeader(b, udReqHeaderLen)
	if !ok {
		return udRequest{}, nil, false
	}
	be32 := func(p []byte) uint32 { return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3]) }
	r := udRequest{qpn: be32(b[4:]), qkey: be32(b[8:]), lid: uint16(b[12])<<8 | uint16(b[13])}
	copy(r.gid[:], b[16:32])
	return r, pd, true
}

// recvOp is the operation a receive of the EP reports until its completion
// says more: DTOIBRecvUD on a UD EP.
func (ep *EP) recvOp() DTOOp {
	if ep.isUD() {
		return DTOIBRecvUD
	}
	return DTOReceive
}

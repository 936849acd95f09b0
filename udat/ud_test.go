//go:build linux && cgo

package udat

// Device tests of unreliable datagrams (ud.go, ud_cm.go): UD EPs resolving
// peers through a PSP, datagrams both ways, the events' extension data, the
// post-time checks, and freeing address handles and connection state.

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// udSide is one UD EP with its EVDs and memory.
func newUDSide(t testing.TB, ia *IA, pz *PZ) side {
	t.Helper()
	needUD(t, ia, pz)
	attr := DefaultEPAttr()
	attr.ServiceType = ServiceTypeIBUD
	attr.MaxRecvDTOs, attr.MaxRequestDTOs = 128, 128
	return newSide(t, ia, pz, pairOpts{evdQLen: 256}, &attr, nil)
}

// udPeer is what one side of a UD connection learned.
type udPeer struct {
	ah IBAddrHandle
	cm *UDCM
	ev Event
}

// udRig is a UD server EP of one PZ behind a PSP of its own, for the UD
// EPs of a test to resolve.
type udRig struct {
	ia     *IA
	pz     *PZ
	server side
	psp    *PSP
	crEVD  *EVD
	qual   ConnQual
}

// newUDRig opens the device and sets up a udRig in a PZ of its own.
func newUDRig(t testing.TB) *udRig {
	t.Helper()
	ia := openIA(t)
	return newUDRigIn(t, ia, mustPZ(t, ia))
}

// newUDRigIn sets up a udRig in pz of ia.
func newUDRigIn(t testing.TB, ia *IA, pz *PZ) *udRig {
	t.Helper()
	r := &udRig{ia: ia, pz: pz, server: newUDSide(t, ia, pz)}
	r.psp, r.crEVD, r.qual = listenPSP(t, ia)
	return r
}

// connect creates a UD EP in r's PZ and resolves r.server from it (see
// resolve): the new side, and what it and the server learned.
func (r *udRig) connect(t testing.TB, pd, apd []byte) (client side, c, s udPeer) {
	t.Helper()
	client = newUDSide(t, r.ia, r.pz)
	c, s = r.resolve(t, client, pd, apd)
	return client, c, s
}

// resolve resolves r.server from client through r's PSP: the client
// connects with pd, the server accepts with apd. It returns what each side
// learned.
func (r *udRig) resolve(t testing.TB, client side, pd, apd []byte) (c, s udPeer) {
	t.Helper()
	ia, server, psp, crEVD, qual := r.ia, r.server, r.psp, r.crEVD, r.qual
	require.NoError(t, client.ep.Connect(ia.Address(), qual, waitUS, pd, QoSBestEffort, ConnectDefault))
	ev := waitEvent(t, crEVD)
	require.Equal(t, EventIBUDConnectionRequest, ev.Number)
	require.Equal(t, IBUDConnectRequest, ev.IB.Type)
	require.Same(t, psp, ev.CR.PSP)
	require.Equal(t, qual, ev.CR.ConnQual)
	cp, err := ev.CR.CR.Query()
	require.NoError(t, err)
	require.Equal(t, pd, cp.PrivateData, "the requester's private data, at its length")
	require.NoError(t, ev.CR.CR.Accept(server.ep, apd))

	sev := waitEvent(t, server.conn)
	require.Equal(t, EventIBUDConnectionEstablished, sev.Number)
	require.Equal(t, IBUDPassiveRemoteAH, sev.IB.Type)
	require.Equal(t, IBOpSuccess, sev.IB.Status)
	require.Same(t, server.ep, sev.Conn.EP)
	require.NotNil(t, sev.IB.RemoteAH.AH)
	require.NotNil(t, sev.IB.CM)
	require.Equal(t, client.ep.qpn, sev.IB.RemoteAH.QPN, "the passive side learns the requester's QP")
	require.Equal(t, ia.Address(), sev.IB.RemoteAH.IAAddr)
	if len(pd) > 0 {
		require.Equal(t, pd, sev.Conn.PrivateData, "the passive side gets the requester's private data")
	} else {
		require.Empty(t, sev.Conn.PrivateData)
	}

	cev := waitEvent(t, client.conn)
	require.Equal(t, EventIBUDConnectionEstablished, cev.Number)
	require.Equal(t, IBUDRemoteAH, cev.IB.Type)
	require.Same(t, client.ep, cev.Conn.EP)
	require.Equal(t, apd, cev.Conn.PrivateData, "the acceptor's private data, at its length")
	require.NotNil(t, cev.IB.RemoteAH.AH)
	require.NotNil(t, cev.IB.CM)
	require.Equal(t, server.ep.qpn, cev.IB.RemoteAH.QPN, "the active side learns the passive QP")
	require.Equal(t, ia.Address(), cev.IB.RemoteAH.IAAddr)

	for _, sd := range []side{client, server} {
		st, _, _, err := sd.ep.GetStatus()
		require.NoError(t, err)
		require.Equal(t, EPStateConnected, st)
	}
	return udPeer{ah: cev.IB.RemoteAH, cm: cev.IB.CM, ev: cev}, udPeer{ah: sev.IB.RemoteAH, cm: sev.IB.CM, ev: sev}
}

// udSendRecv sends msg from `from` to the peer ah and checks it arrives at
// `to` after the GRH, from from's QP.
func udSendRecv(t testing.TB, from, to side, ah *IBAddrHandle, msg string, cookie uint64) {
	t.Helper()
	n := len(msg)
	require.NoError(t, to.ep.PostRecv([]LMRTriplet{to.lmr.Triplet(8192, GRHSize+n)}, cookie, CompletionDefault))
	copy(from.lmr.Bytes()[4096:], msg)
	require.NoError(t, from.ep.PostSendUD([]LMRTriplet{from.lmr.Triplet(4096, n)}, ah, cookie, CompletionDefault))
	ev := waitIBDTO(t, from.req)
	require.Equal(t, DTOCompletionData{EP: from.ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: uint64(n), Op: DTOIBSendUD}, ev.DTO)
	require.Equal(t, IBUDSend, ev.IB.Type)
	require.Equal(t, IBOpSuccess, ev.IB.Status)
	ev = waitIBDTO(t, to.recv)
	require.Equal(t, DTOCompletionData{EP: to.ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: uint64(GRHSize + n), Op: DTOIBRecvUD}, ev.DTO)
	require.Equal(t, IBUDRecv, ev.IB.Type)
	require.Equal(t, IBOpSuccess, ev.IB.Status)
	require.Equal(t, from.ep.qpn, ev.IB.RemoteAH.QPN, "the receive names the sender's QP")
	require.Equal(t, msg, string(to.lmr.Bytes()[8192+GRHSize:8192+GRHSize+n]))
}

func TestUDConnectAndExchange(t *testing.T) {
	r := newUDRig(t)
	ia, server := r.ia, r.server
	client, c, s := r.connect(t, []byte("ud hello"), []byte("ud welcome"))

	p, err := client.ep.Query()
	require.NoError(t, err)
	require.Equal(t, ServiceTypeIBUD, p.Attr.ServiceType)
	require.Equal(t, uint32(ia.portAttr.ActiveMTU), p.Attr.MaxMessageSize, "a datagram is at most the MTU")

	udSendRecv(t, client, server, &c.ah, "datagram to the server", 1)
	udSendRecv(t, server, client, &s.ah, "datagram back to the client", 2)
	requireEmpty(t, client.req)
	requireEmpty(t, server.req)
}

// A UD resolution costs a few calls into C on each side, not one per GID
// table entry (Soft-RoCE's table has 1,024, each a system call: 30
// resolutions a second where RC made hundreds of connections).
func TestUDResolutionCgoCalls(t *testing.T) {
	r := newUDRig(t)
	r.connect(t, nil, nil) // the first finds the GID entry
	client := newUDSide(t, r.ia, r.pz)
	calls := cgoCallsOf(func() { r.resolve(t, client, []byte("again"), nil) })
	t.Logf("cgo calls of a UD resolution, both sides: %d (GID table: %d entries)", calls, r.ia.portAttr.GIDTblLen)
	require.Less(t, calls, uint64(64))
}

func TestUDSeveralPeers(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	a, ac, as := r.connect(t, []byte("from a"), nil)
	b, bc, bs := r.connect(t, []byte("from b"), []byte("to b"))
	require.NotSame(t, as.ah.AH, bs.ah.AH)
	require.NotSame(t, as.cm, bs.cm)

	// One UD QP talks to both: each datagram names its sender.
	udSendRecv(t, a, server, &ac.ah, "a to server", 10)
	udSendRecv(t, b, server, &bc.ah, "b to server", 11)
	udSendRecv(t, server, a, &as.ah, "server to a", 12)
	udSendRecv(t, server, b, &bs.ah, "server to b", 13)
}

func TestUDManyInFlight(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	client, c, _ := r.connect(t, nil, nil)

	const n, size = 100, 64
	slot := GRHSize + size
	for i := 0; i < n; i++ {
		require.NoError(t, server.ep.PostRecv([]LMRTriplet{server.lmr.Triplet(i*slot, slot)}, uint64(i), CompletionDefault))
	}
	reqs := make([]Request, n)
	for i := range reqs {
		fill(client.lmr.Bytes()[i*size:(i+1)*size], byte(i+1))
		reqs[i] = Request{Op: DTOIBSendUD, LocalIOV: []LMRTriplet{client.lmr.Triplet(i*size, size)}, AH: &c.ah, Cookie: uint64(1000 + i)}
	}
	k, err := client.ep.PostRequests(reqs)
	require.NoError(t, err)
	require.Equal(t, n, k)
	for i := 0; i < n; i++ {
		ev := waitIBDTO(t, client.req)
		require.Equal(t, uint64(1000+i), ev.DTO.Cookie, "sends complete in order")
		require.Equal(t, DTOSuccess, ev.DTO.Status)
	}
	for i := 0; i < n; i++ {
		ev := waitIBDTO(t, server.recv)
		require.Equal(t, uint64(i), ev.DTO.Cookie)
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.Equal(t, uint64(slot), ev.DTO.TransferredLength)
		got := server.lmr.Bytes()[i*slot+GRHSize : (i+1)*slot]
		require.Truef(t, bytes.Equal(bytes.Repeat([]byte{byte(i + 1)}, size), got), "datagram %d", i)
	}
}

func TestUDPostChecks(t *testing.T) {
	r := newUDRig(t)
	ia, pz, server := r.ia, r.pz, r.server
	client, c, _ := r.connect(t, nil, nil)

	mtu := ia.portAttr.ActiveMTU
	big, err := ia.AllocLMR(pz, 2*mtu, MemPrivAll)
	require.NoError(t, err)
	err = client.ep.PostSendUD([]LMRTriplet{big.Triplet(0, mtu+1)}, &c.ah, 1, CompletionDefault)
	requireCode(t, err, InvalidParameter|InvalidArg3, "a datagram over the MTU")
	require.Contains(t, err.Error(), fmt.Sprint(mtu))
	// Exactly the MTU goes.
	require.NoError(t, server.ep.PostRecv([]LMRTriplet{server.lmr.Triplet(0, GRHSize+mtu)}, 2, CompletionDefault))
	require.NoError(t, client.ep.PostSendUD([]LMRTriplet{big.Triplet(0, mtu)}, &c.ah, 2, CompletionDefault))
	require.Equal(t, DTOSuccess, waitIBDTO(t, client.req).DTO.Status)
	require.Equal(t, uint64(GRHSize+mtu), waitIBDTO(t, server.recv).DTO.TransferredLength)

	requireCode(t, client.ep.PostSendUD(nil, nil, 3, CompletionDefault), InvalidHandle, "nil address handle")
	requireCode(t, client.ep.PostSendUD(nil, &IBAddrHandle{QPN: c.ah.QPN}, 3, CompletionDefault), InvalidHandle, "no AH")
	requireCode(t, client.ep.PostSendUD(nil, &c.ah, 3, CompletionFlags(0x1000)), InvalidParameter|InvalidArg6, "bad flags")
	requireCode(t, client.ep.PostSend(nil, 3, CompletionDefault), ModelNotSupported, "a plain send on a UD EP")
	requireCode(t, client.ep.PostRDMAWrite(nil, 3, RMRTriplet{}, CompletionDefault), ModelNotSupported)
	var nilEP *EP
	requireCode(t, nilEP.PostSendUD(nil, &c.ah, 3, CompletionDefault), InvalidHandle|InvalidHandleEP)

	// A UD send on an RC EP (an AH of another PZ: TestUDAddressHandleSharedInPZ).
	rc := newPair(t, pairOpts{})
	requireCode(t, rc.client.ep.PostSendUD(nil, &c.ah, 3, CompletionDefault), InvalidParameter|InvalidArg1)
	requireEmpty(t, client.req)
}

func TestUDFreeAHAndCM(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	client, c, s := r.connect(t, nil, nil)

	// CM state freed: the AH keeps working.
	require.NoError(t, client.ep.UDCMFree(c.cm))
	require.NoError(t, server.ep.UDCMFree(s.cm))
	requireCode(t, client.ep.UDCMFree(c.cm), InvalidHandle, "freed twice")
	requireCode(t, client.ep.UDCMFree(nil), InvalidHandle)
	requireCode(t, client.ep.UDCMFree(s.cm), InvalidHandle, "another EP's")
	udSendRecv(t, client, server, &c.ah, "after cm free", 1)

	// An AH a send still uses cannot go; once the send is done it can.
	require.NoError(t, client.ep.PostSendUD([]LMRTriplet{client.lmr.Triplet(0, 8)}, &c.ah, 2, CompletionDefault))
	if err := client.ep.UDAHFree(&c.ah); err != nil {
		requireCode(t, err, InvalidState)
		waitIBDTO(t, client.req)
		require.NoError(t, client.ep.UDAHFree(&c.ah))
	} else {
		waitIBDTO(t, client.req) // the send was done already
	}
	requireCode(t, client.ep.UDAHFree(&c.ah), InvalidHandle, "freed twice")
	requireCode(t, client.ep.UDAHFree(nil), InvalidHandle)
	requireCode(t, client.ep.UDAHFree(&s.ah), InvalidHandle, "another EP's")
	requireCode(t, client.ep.PostSendUD(nil, &c.ah, 3, CompletionDefault), InvalidHandle, "a freed AH")
	var nilEP *EP
	requireCode(t, nilEP.UDAHFree(&s.ah), InvalidHandle|InvalidHandleEP)
	requireCode(t, nilEP.UDCMFree(s.cm), InvalidHandle|InvalidHandleEP)

	// The server's AH is left to the EP's Free; and after it, nothing.
	require.NoError(t, server.ep.Free())
	requireCode(t, server.ep.UDAHFree(&s.ah), InvalidHandle|InvalidHandleEP)
	require.True(t, s.ah.AH.dead(), "EP.Free frees the address handles")
}

func TestUDFlushOnFree(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	r.connect(t, nil, nil)

	const n = 10
	for i := 0; i < n; i++ {
		require.NoError(t, server.ep.PostRecv([]LMRTriplet{server.lmr.Triplet(i*128, 128)}, uint64(i), CompletionDefault))
	}
	require.NoError(t, server.ep.Free())
	for i := 0; i < n; i++ {
		ev := waitIBDTO(t, server.recv)
		require.Equal(t, uint64(i), ev.DTO.Cookie)
		require.Equal(t, DTOErrFlushed, ev.DTO.Status)
		require.Equal(t, DTOIBRecvUD, ev.DTO.Op)
		require.Equal(t, IBExtensionData{Type: IBUDRecv, Status: IBOpErr}, ev.IB)
	}
	requireEmpty(t, server.recv)
}

func TestUDReject(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	client := newUDSide(t, ia, pz)
	_, crEVD, qual := listenPSP(t, ia)
	require.NoError(t, client.ep.Connect(ia.Address(), qual, waitUS, []byte("may I"), QoSBestEffort, ConnectDefault))
	ev := waitEvent(t, crEVD)
	require.Equal(t, EventIBUDConnectionRequest, ev.Number)
	requireCode(t, ev.CR.CR.Reject(make([]byte, 133)), InvalidParameter|InvalidArg3, "over a UD reject's private data")
	require.NoError(t, ev.CR.CR.Reject([]byte("no")))
	ev = waitEvent(t, client.conn)
	require.Equal(t, EventIBUDConnectionReject, ev.Number)
	require.Equal(t, IBUDConnectReject, ev.IB.Type)
	require.Equal(t, []byte("no"), ev.Conn.PrivateData)
	st, _, _, err := client.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateUnconnected, st, "a UD EP with no peer stays UNCONNECTED")
	require.NoError(t, client.ep.UDCMFree(ev.IB.CM))
}

func TestUDZeroAllocs(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	client, c, _ := r.connect(t, nil, nil)
	recv := []LMRTriplet{server.lmr.Triplet(0, GRHSize+32)}
	send := []LMRTriplet{client.lmr.Triplet(1024, 32)}
	ah := &c.ah
	reap := func(e *EVD) {
		for {
			ev, err := e.Dequeue()
			if err == nil {
				if ev.DTO.Status != DTOSuccess || ev.Number != EventIBDTO {
					panic("bad completion")
				}
				return
			}
		}
	}
	round := func() {
		if err := server.ep.PostRecv(recv, 1, CompletionDefault); err != nil {
			panic(err)
		}
		if err := client.ep.PostSendUD(send, ah, 2, CompletionDefault); err != nil {
			panic(err)
		}
		reap(client.req)
		reap(server.recv)
	}
	round()
	require.Zero(t, testing.AllocsPerRun(50, round), "allocations per UD post+completion round")
}

func TestUDDisconnectFlushReset(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	client, c, _ := r.connect(t, nil, nil)

	for i := 0; i < 4; i++ {
		require.NoError(t, client.ep.PostRecv([]LMRTriplet{client.lmr.Triplet(i*128, 128)}, uint64(i), CompletionDefault))
	}
	require.NoError(t, client.ep.Disconnect(CloseAbruptFlag))
	ev := waitEvent(t, client.conn)
	require.Equal(t, EventConnectionDisconnected, ev.Number)
	st, _, _, err := client.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
	for i := 0; i < 4; i++ {
		ev := waitIBDTO(t, client.recv)
		require.Equal(t, uint64(i), ev.DTO.Cookie)
		require.Equal(t, DTOErrFlushed, ev.DTO.Status)
	}
	requireCode(t, client.ep.UDCMFree(c.cm), InvalidHandle, "Disconnect frees the connections")
	// A send posted now is flushed at once.
	require.NoError(t, client.ep.PostSendUD([]LMRTriplet{client.lmr.Triplet(0, 8)}, &c.ah, 9, CompletionDefault))
	ev = waitIBDTO(t, client.req)
	require.Equal(t, DTOCompletionData{EP: client.ep, Cookie: 9, Status: DTOErrFlushed, Op: DTOIBSendUD}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBUDSend, Status: IBOpErr}, ev.IB)

	// Reset brings the QP back: the EP resolves its peer again and sends.
	require.NoError(t, client.ep.Reset())
	st, _, _, err = client.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateUnconnected, st)
	require.NoError(t, client.ep.UDAHFree(&c.ah))
	c, s := r.resolve(t, client, nil, nil)
	udSendRecv(t, client, server, &c.ah, "after reset", 1)
	udSendRecv(t, server, client, &s.ah, "back after reset", 2)
}

func TestUDConnectErrors(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	client := newUDSide(t, ia, pz)

	// Nobody listens: the request times out.
	require.NoError(t, client.ep.Connect(ia.Address(), nextConnQual(), 300_000, nil, QoSBestEffort, ConnectDefault))
	ev := waitEvent(t, client.conn)
	require.Equal(t, EventIBUDConnectionError, ev.Number)
	require.Equal(t, IBUDConnectError, ev.IB.Type)
	require.Equal(t, IBOpErr, ev.IB.Status)
	require.NoError(t, client.ep.UDCMFree(ev.IB.CM))
	requireCode(t, client.ep.Connect(ia.Address(), 1, waitUS, make([]byte, 57), QoSBestEffort, ConnectDefault),
		InvalidParameter|InvalidArg5)

	// A UD request cannot be accepted by an RC EP, nor an RC one by a UD EP.
	psp, crEVD, qual := listenPSP(t, ia)
	_ = psp
	rc := newSide(t, ia, pz, pairOpts{}, nil, nil)
	require.NoError(t, client.ep.Connect(ia.Address(), qual, waitUS, nil, QoSBestEffort, ConnectDefault))
	ev = waitEvent(t, crEVD)
	require.Equal(t, EventIBUDConnectionRequest, ev.Number)
	requireCode(t, ev.CR.CR.Accept(rc.ep, nil), InvalidParameter|InvalidArg2)
	server := newUDSide(t, ia, pz)
	requireCode(t, ev.CR.CR.Accept(server.ep, make([]byte, 133)), InvalidParameter|InvalidArg4, "over a UD accept's private data")
	require.NoError(t, ev.CR.CR.Accept(server.ep, nil))
	require.Equal(t, EventIBUDConnectionEstablished, waitEvent(t, client.conn).Number)

	require.NoError(t, rc.ep.Connect(ia.Address(), qual, waitUS, nil, QoSBestEffort, ConnectDefault))
	ev = waitEvent(t, crEVD)
	require.Equal(t, EventConnectionRequest, ev.Number, "an RC request at the same PSP")
	requireCode(t, ev.CR.CR.Accept(server.ep, nil), InvalidParameter|InvalidArg2)
	require.NoError(t, ev.CR.CR.Reject(nil))
	require.Equal(t, EventConnectionPeerRejected, waitEvent(t, rc.conn).Number)

	// UD EPs take no SRQ.
	srq, err := ia.CreateSRQ(pz, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1})
	require.NoError(t, err)
	attr := DefaultEPAttr()
	attr.ServiceType = ServiceTypeIBUD
	_, err = ia.CreateEPWithSRQ(pz, client.recv, client.req, nil, srq, &attr)
	requireCode(t, err, InvalidParameter|InvalidArg7)
}

// Closing the IA frees UD EPs with their address handles and connections.
func TestUDIAClose(t *testing.T) {
	r := newUDRig(t)
	ia := r.ia
	client, c, s := r.connect(t, nil, nil)
	require.NoError(t, ia.Close(CloseAbruptFlag))
	for _, a := range []*AH{c.ah.AH, s.ah.AH} {
		require.True(t, a.dead())
	}
	for _, cm := range []*UDCM{c.cm, s.cm} {
		require.True(t, cm.dead())
		require.Nil(t, ia.cmOwner(cm.id), "the CM id is unregistered")
	}
	require.True(t, client.ep.dead())
}

// As in C, where an address handle belongs to the protection domain, every
// UD EP of the PZ may send through a handle another EP resolved (OFA's
// dtestsrq -u sends from every EP with its first EP's); an EP of another
// PZ may not. Once the resolving EP is freed no new send may use it, and a
// send already posted through it still completes.
func TestUDAddressHandleSharedInPZ(t *testing.T) {
	r := newUDRig(t)
	server := r.server
	a, ac, _ := r.connect(t, nil, nil)
	b, _, _ := r.connect(t, nil, nil) // b is CONNECTED too
	udSendRecv(t, b, server, &ac.ah, "b through a's handle", 20)

	other := newUDSide(t, r.ia, mustPZ(t, r.ia))
	r.resolve(t, other, nil, nil)
	requireCode(t, other.ep.PostSendUD([]LMRTriplet{other.lmr.Triplet(0, 8)}, &ac.ah, 21, CompletionDefault), InvalidHandle,
		"a handle of another PZ")

	require.NoError(t, server.ep.PostRecv([]LMRTriplet{server.lmr.Triplet(8192, GRHSize+8)}, 22, CompletionDefault))
	require.NoError(t, b.ep.PostSendUD([]LMRTriplet{b.lmr.Triplet(0, 8)}, &ac.ah, 22, CompletionDefault))
	require.NoError(t, a.ep.Free(), "the resolving EP goes while b's send may be in flight")
	ev := waitIBDTO(t, b.req)
	require.Equal(t, DTOSuccess, ev.DTO.Status, "b's send is not cut off")
	require.Equal(t, DTOSuccess, waitIBDTO(t, server.recv).DTO.Status)
	requireCode(t, b.ep.PostSendUD([]LMRTriplet{b.lmr.Triplet(0, 8)}, &ac.ah, 23, CompletionDefault), InvalidHandle,
		"the handle is freed with its EP")
}

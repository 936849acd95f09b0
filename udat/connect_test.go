//go:build linux && cgo

package udat

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newSidesAndCREVD opens the device and creates two unconnected EPs, c and s,
// in one PZ, and a CR EVD for the service point each test makes for s.
func newSidesAndCREVD(t *testing.T) (ia *IA, c, s side, crEVD *EVD) {
	t.Helper()
	ia = openIA(t)
	pz := mustPZ(t, ia)
	c = newSide(t, ia, pz, pairOpts{}, nil, nil)
	s = newSide(t, ia, pz, pairOpts{}, nil, nil)
	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	return ia, c, s, crEVD
}

// Private data travels with the request and the accept; the passive side's
// ESTABLISHED event carries none (dat_evd_wait: "For the Passive side,
// DAT_CONNECTION_EVENT_ESTABLISHED event private_data is not defined and
// private_data_size returns zero").
func TestConnectPrivateDataAndStates(t *testing.T) {
	ia, c, s, crEVD := newSidesAndCREVD(t)
	psp, q, err := ia.CreatePSPAny(crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	pq, err := psp.Query()
	require.NoError(t, err)
	require.Equal(t, q, pq.ConnQual)
	require.Equal(t, crEVD, pq.EVD)

	pd := []byte("request private data")
	require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, pd, QoSBestEffort, ConnectDefault))
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Contains(t, []EPState{EPStateActiveConnectionPending, EPStateConnected}, st)
	requireCode(t, c.ep.Connect(ia.Address(), q, waitUS, nil, 0, 0), InvalidState|stateSubtype(st))

	ev := waitEvent(t, crEVD)
	require.Equal(t, EventConnectionRequest, ev.Number)
	require.Equal(t, psp, ev.CR.PSP)
	require.Equal(t, q, ev.CR.ConnQual)
	require.Equal(t, ia.Address(), ev.CR.LocalIAAddress)
	cr := ev.CR.CR
	crp, err := cr.Query()
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(crp.PrivateData, pd), "request private data %q", crp.PrivateData)
	require.Equal(t, ia.Address(), crp.RemoteAddr)
	ht, err := GetHandleType(cr)
	require.NoError(t, err)
	require.Equal(t, HandleTypeCR, ht)

	require.NoError(t, cr.Accept(s.ep, []byte("accept private data")))
	requireCode(t, cr.Accept(s.ep, nil), InvalidHandle|InvalidHandleCR, "the CR is destroyed by accept")
	ev = waitEvent(t, c.conn)
	require.Equal(t, EventConnectionEstablished, ev.Number)
	require.Equal(t, c.ep, ev.Conn.EP)
	require.True(t, bytes.HasPrefix(ev.Conn.PrivateData, []byte("accept private data")))
	ev = waitEvent(t, s.conn)
	require.Equal(t, EventConnectionEstablished, ev.Number)
	require.Empty(t, ev.Conn.PrivateData)
	for _, sd := range []side{c, s} {
		st, _, _, err := sd.ep.GetStatus()
		require.NoError(t, err)
		require.Equal(t, EPStateConnected, st)
	}
	ep, err := c.ep.Query()
	require.NoError(t, err)
	require.Equal(t, ia.Address(), ep.RemoteAddr)
	require.Equal(t, PortQual(q), ep.RemotePortQual)
	require.NoError(t, psp.Free())
	requireCode(t, psp.Free(), InvalidHandle|InvalidHandlePSP)
}

// dat_cr_reject (DAT 2.0, with private data): the requester gets
// DAT_CONNECTION_EVENT_PEER_REJECTED with the private data; a request no
// service point listens for is DAT_CONNECTION_EVENT_NON_PEER_REJECTED.
// A rejected EP is DISCONNECTED, and Reset makes it usable again.
func TestConnectRejected(t *testing.T) {
	ia := openIA(t)
	c := newSide(t, ia, mustPZ(t, ia), pairOpts{}, nil, nil)
	_, crEVD, q := listenPSP(t, ia)
	postRecvs(t, c, 0, 64, 1, 5)
	require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, nil, 0, 0))
	cr := waitEvent(t, crEVD).CR.CR
	requireCode(t, cr.Reject(make([]byte, ia.privateData.reject+1)), InvalidParameter|InvalidArg3)
	require.NoError(t, cr.Reject([]byte("go away")))
	ev := waitEvent(t, c.conn)
	require.Equal(t, EventConnectionPeerRejected, ev.Number)
	require.True(t, bytes.HasPrefix(ev.Conn.PrivateData, []byte("go away")), "reject data %q", ev.Conn.PrivateData)
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
	// The pre-posted receive is flushed.
	d := waitDTO(t, c.recv)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(5), d.Cookie)

	require.NoError(t, c.ep.Reset())
	st, _, _, err = c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateUnconnected, st)
	require.NoError(t, c.ep.Connect(ia.Address(), nextConnQual(), waitUS, nil, 0, 0))
	ev = waitEvent(t, c.conn)
	require.Equal(t, EventConnectionNonPeerRejected, ev.Number)
}

// A request the passive side never answers ends with
// DAT_CONNECTION_EVENT_TIMED_OUT after the connect timeout.
func TestConnectTimedOut(t *testing.T) {
	ia := openIA(t)
	c := newSide(t, ia, mustPZ(t, ia), pairOpts{}, nil, nil)
	_, crEVD, q := listenPSP(t, ia)
	start := time.Now()
	require.NoError(t, c.ep.Connect(ia.Address(), q, 500_000, nil, 0, 0))
	cr := waitEvent(t, crEVD).CR.CR
	ev := waitEvent(t, c.conn)
	require.Equal(t, EventConnectionTimedOut, ev.Number)
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
	cr.Reject(nil)
	requireEmpty(t, c.conn)
}

// A connect whose rdma_connect blocks (on iWARP, the kernel's TCP connect
// to an address that does not answer blocks for minutes) holds up nothing
// else: the Consumer's timeout ends it on time, another EP of the IA
// connects meanwhile, and Free does not wait for it.
func TestBlockedConnectDelaysNothing(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	slow := newSide(t, ia, pz, pairOpts{}, nil, nil)
	stuck := make(chan struct{}, 2)
	release := make(chan struct{})
	beforeConnect = func(ep *EP) {
		if ep == slow.ep {
			stuck <- struct{}{}
			<-release
		}
	}
	t.Cleanup(func() { beforeConnect = nil })
	defer close(release)

	_, crEVD, q := listenPSP(t, ia)
	start := time.Now()
	require.NoError(t, slow.ep.Connect(ia.Address(), q, 300_000, nil, 0, 0))
	<-stuck
	p := newPairIn(t, ia, pz, pairOpts{}) // connects while slow's rdma_connect blocks
	ev := waitEvent(t, slow.conn)
	require.Equal(t, EventConnectionTimedOut, ev.Number)
	t.Logf("timed out after %v", time.Since(start))
	_, err := slow.ep.Query()
	require.NoError(t, err, "Query does not wait for the blocked connect")
	require.NoError(t, slow.ep.Reset())
	require.NoError(t, slow.ep.Connect(ia.Address(), q, 300_000, nil, 0, 0))
	<-stuck
	require.NoError(t, slow.ep.Disconnect(CloseAbruptFlag))
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, slow.conn).Number)
	require.NoError(t, slow.ep.Free())
	disconnectPair(t, p)
	requireEmpty(t, crEVD) // neither request was sent
}

// A dequeue from an EVD that takes connection events or requests takes
// the IA's pending rdma_cm events itself (IA.pollCM): a program that polls
// it without blocking needs no other goroutine to run, where the IA's CM
// goroutine would wait, with every P busy polling, for the scheduler to
// preempt one (up to 10 ms per event). Here that goroutine is stopped, and
// a connection is made by dequeues alone: request, accept, ESTABLISHED on
// both sides.
func TestDequeueTakesCMEvents(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	c := newSide(t, ia, pz, pairOpts{}, nil, nil)
	s := newSide(t, ia, pz, pairOpts{}, nil, nil)
	_, crEVD, q := listenPSP(t, ia)
	ia.cancel()
	ia.loops.Wait() // the IA's goroutines, its CM goroutine among them
	poll := func(e *EVD, want EventNumber) Event {
		t.Helper()
		var ev Event
		var err error
		require.Eventually(t, func() bool {
			err = e.DequeueInto(&ev)
			return err != ErrQueueEmpty
		}, 10*time.Second, 100*time.Microsecond, "%v by dequeues alone", want)
		require.NoError(t, err)
		require.Equal(t, want, ev.Number)
		return ev
	}
	require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, []byte("hello"), QoSBestEffort, ConnectDefault))
	ev := poll(crEVD, EventConnectionRequest)
	require.NoError(t, ev.CR.CR.Accept(s.ep, nil))
	poll(c.conn, EventConnectionEstablished)
	poll(s.conn, EventConnectionEstablished)
	require.NoError(t, c.ep.Disconnect(CloseAbruptFlag))
	poll(c.conn, EventConnectionDisconnected)
	poll(s.conn, EventConnectionDisconnected)
}

// An address nobody answers for is DAT_CONNECTION_EVENT_UNREACHABLE, or
// DAT_CONNECTION_EVENT_TIMED_OUT when the connect timeout comes first (on a
// dummy interface, address resolution succeeds and the request goes
// unanswered).
func TestConnectUnreachable(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	c := newSide(t, ia, pz, pairOpts{}, nil, nil)
	a4 := ia.Address().As4()
	a4[3] ^= 0x40 // another host on the device's subnet
	require.NoError(t, c.ep.Connect(netip.AddrFrom4(a4), 1, 3_000_000, nil, 0, 0))
	ev := waitEvent(t, c.conn)
	require.Contains(t, []EventNumber{EventConnectionUnreachable, EventConnectionTimedOut}, ev.Number)
}

// On iWARP rdma_connect makes a TCP connection from the local port rdma_cm
// picked, without regard to the ports TCP holds. A connect whose port
// turns out to be taken takes another one rather than report a reachable
// peer unreachable (redialLocked). With the kernel's ephemeral range
// narrowed to two ports and a TCP listener on one, rdma_cm, which passes
// over the port it gave out last, draws the held one at nearly every
// connect (8 of 8 on Linux 6.1, 7 of 8 on 6.12).
func TestConnectTakesAnotherLocalPort(t *testing.T) {
	ia := openIA(t)
	if ia.ibTransport() {
		notApplicable(t, ia, "TCP connection in rdma_connect (InfiniBand transport)")
	}
	const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"
	saved, err := os.ReadFile(rangeFile)
	require.NoError(t, err)
	const held, free = 61000, 61001 // above the default range: nothing else has them
	require.NoError(t, os.WriteFile(rangeFile, []byte(fmt.Sprintf("%d %d\n", held, free)), 0o644))
	t.Cleanup(func() { require.NoError(t, os.WriteFile(rangeFile, saved, 0o644)) })
	l, err := net.Listen("tcp4", fmt.Sprintf(":%d", held))
	require.NoError(t, err)
	defer l.Close()

	pz := mustPZ(t, ia)
	redials := 0
	for range 8 {
		p := newPairIn(t, ia, pz, pairOpts{})
		p.client.ep.mu.Lock()
		redials += p.client.ep.redials
		p.client.ep.mu.Unlock()
		disconnectPair(t, p)
	}
	require.NotZero(t, redials, "no connect drew the held port")
	t.Logf("%d of 8 connects took another port", redials)
}

// A PSP holds as many connection requests as the kernel allows (rdma_ucm's
// max_backlog, 1024 unless set), as C's cma provider asks with a backlog
// of 0: while the server's connection events are held up, 150 connects
// all reach the Consumer, none refused by the kernel.
func TestPSPBacklog(t *testing.T) {
	const n = 150
	server, client := openIA(t), openIA(t)
	crEVD, err := server.CreateEVD(2*n, EVDCRFlag)
	require.NoError(t, err)
	q := nextConnQual()
	psp, err := server.CreatePSP(q, crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	pz := mustPZ(t, client)
	conn, err := client.CreateEVD(2*n, EVDConnectionFlag)
	require.NoError(t, err)
	dto, err := client.CreateEVD(2*n, EVDDTOFlag)
	require.NoError(t, err)
	attr := EPAttr{ServiceType: ServiceTypeRC, MaxRDMASize: 1 << 16, QoS: QoSBestEffort,
		RecvCompletionFlags: CompletionDefault, RequestCompletionFlags: CompletionDefault,
		MaxRecvDTOs: 1, MaxRequestDTOs: 1, MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 1, MaxRDMAReadOut: 1}

	psp.mu.Lock() // holds the server IA's connection events at the first request
	held := true
	defer func() {
		if held {
			psp.mu.Unlock()
		}
	}()
	for i := range n {
		ep, err := client.CreateEP(pz, dto, dto, conn, &attr)
		require.NoError(t, err, "EP %d", i)
		require.NoError(t, ep.Connect(server.Address(), q, waitUS, nil, 0, 0), "EP %d", i)
	}
	time.Sleep(time.Second) // for the last requests to reach the server's kernel
	psp.mu.Unlock()
	held = false
	for i := range n {
		ev := waitEvent(t, crEVD)
		require.Equal(t, EventConnectionRequest, ev.Number, "event %d", i)
		require.NoError(t, ev.CR.CR.Reject(nil))
	}
}

// Each connection message carries as much private data as its transport
// allows, and not a byte more: on InfiniBand and RoCE what the IB CM's
// messages leave (connect 56, accept 160, reject 144 bytes), on iWARP what
// MPA version 2 leaves in a one-byte length (251, 251, and 247 after the
// reject header). The peer gets every byte: on iWARP exactly those, on IB padded
// with zeros to the message's field.
func TestPrivateDataLimits(t *testing.T) {
	ia := openIA(t)
	want := privateDataLimits{connect: 56, accept: 160, reject: 144}
	if !ia.ibTransport() {
		want = privateDataLimits{connect: 251, accept: 251, reject: 247}
	}
	_, pa, err := ia.Query()
	require.NoError(t, err)
	require.Equal(t, want.connect, pa.MaxPrivateDataSize)
	require.Equal(t, want.accept, pa.MaxAcceptPrivateSize)
	carries := func(got, sent []byte, what string) {
		t.Helper()
		require.GreaterOrEqual(t, len(got), len(sent), what)
		require.Equal(t, sent, got[:len(sent)], what)
		require.Equal(t, make([]byte, len(got)-len(sent)), got[len(sent):], what+": the padding")
		if !ia.ibTransport() {
			require.Len(t, got, len(sent), what+": iWARP pads nothing")
		}
	}
	pz := mustPZ(t, ia)
	_, crEVD, q := listenPSP(t, ia)
	for _, accept := range []bool{true, false} {
		c := newSide(t, ia, pz, pairOpts{}, nil, nil)
		connPD := pattern(want.connect, 1)
		requireCode(t, c.ep.Connect(ia.Address(), q, waitUS, pattern(want.connect+1, 1), 0, 0), InvalidParameter|InvalidArg5)
		require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, connPD, 0, 0))
		cr := waitEvent(t, crEVD).CR.CR
		cp, err := cr.Query()
		require.NoError(t, err)
		carries(cp.PrivateData, connPD, "the connect's private data")
		if accept {
			s := newSide(t, ia, pz, pairOpts{}, nil, nil)
			acceptPD := pattern(want.accept, 2)
			requireCode(t, cr.Accept(s.ep, pattern(want.accept+1, 2)), InvalidParameter|InvalidArg4)
			require.NoError(t, cr.Accept(s.ep, acceptPD))
			ev := waitEvent(t, c.conn)
			require.Equal(t, EventConnectionEstablished, ev.Number)
			carries(ev.Conn.PrivateData, acceptPD, "the accept's private data")
			require.Equal(t, EventConnectionEstablished, waitEvent(t, s.conn).Number)
			continue
		}
		rejectPD := pattern(want.reject, 3)
		requireCode(t, cr.Reject(pattern(want.reject+1, 3)), InvalidParameter|InvalidArg3)
		require.NoError(t, cr.Reject(rejectPD))
		ev := waitEvent(t, c.conn)
		require.Equal(t, EventConnectionPeerRejected, ev.Number)
		carries(ev.Conn.PrivateData, rejectPD, "the reject's private data")
	}
}

// Bad connect arguments are refused before anything happens.
func TestConnectInvalidArguments(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	c := newSide(t, ia, pz, pairOpts{}, nil, nil)
	addr := ia.Address()
	requireCode(t, c.ep.Connect(netip.Addr{}, 1, waitUS, nil, 0, 0), InvalidAddress|InvalidAddressMalformed)
	requireCode(t, c.ep.Connect(addr, 1, waitUS, make([]byte, ia.privateData.connect+1), 0, 0), InvalidParameter|InvalidArg5)
	requireCode(t, c.ep.Connect(addr, 1, waitUS, nil, 0x100, 0), InvalidParameter|InvalidArg7)
	requireCode(t, c.ep.Connect(addr, 1, waitUS, nil, 0, 4), InvalidParameter|InvalidArg8)
	noConn, err := ia.CreateEP(pz, c.recv, c.req, nil, nil)
	require.NoError(t, err)
	requireCode(t, noConn.Connect(addr, 1, waitUS, nil, 0, 0), InvalidState|InvalidStateEPEVDConnect)
	requireCode(t, c.ep.Disconnect(CloseAbruptFlag), InvalidState|InvalidStateEPUnconnected)
	requireCode(t, c.ep.Disconnect(7), InvalidParameter|InvalidArg2)
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateUnconnected, st)
}

// dat_ep_disconnect, graceful and abrupt, from either side: both sides get
// DAT_CONNECTION_EVENT_DISCONNECTED and end DISCONNECTED; outstanding
// receives are flushed.
func TestDisconnect(t *testing.T) {
	for _, flags := range []CloseFlags{CloseGracefulFlag, CloseAbruptFlag} {
		t.Run(flags.String(), func(t *testing.T) {
			p := newPair(t, pairOpts{})
			postRecvs(t, p.client, 0, 64, 2, 1)
			require.NoError(t, p.server.ep.Disconnect(flags))
			require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.server.conn).Number)
			require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.client.conn).Number)
			for _, sd := range []side{p.client, p.server} {
				st, _, _, err := sd.ep.GetStatus()
				require.NoError(t, err)
				require.Equal(t, EPStateDisconnected, st)
			}
			for i := 1; i <= 2; i++ {
				d := waitDTO(t, p.client.recv)
				require.Equal(t, DTOErrFlushed, d.Status)
				require.Equal(t, uint64(i), d.Cookie)
			}
			require.NoError(t, p.client.ep.Disconnect(flags), "disconnecting a DISCONNECTED EP is a no-op")
			requireEmpty(t, p.client.conn)
			_, recvIdle, reqIdle, err := p.client.ep.GetStatus()
			require.NoError(t, err)
			require.True(t, recvIdle)
			require.True(t, reqIdle)
		})
	}
}

// A disconnected EP is reset and connects again.
func TestResetAndReconnect(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	p := newPairIn(t, ia, pz, pairOpts{})
	requireCode(t, p.client.ep.Reset(), InvalidState|InvalidStateEPConnected)
	disconnectPair(t, p)
	require.NoError(t, p.client.ep.Reset())
	require.NoError(t, p.server.ep.Reset())
	require.NoError(t, p.client.ep.Connect(ia.Address(), p.qual, waitUS, nil, 0, 0))
	cr := waitEvent(t, p.cr).CR.CR
	postRecvs(t, p.server, 0, 64, 1, 9)
	require.NoError(t, cr.Accept(p.server.ep, nil))
	require.Equal(t, EventConnectionEstablished, waitEvent(t, p.client.conn).Number)
	require.Equal(t, EventConnectionEstablished, waitEvent(t, p.server.conn).Number)
	require.NoError(t, p.client.ep.PostSend([]LMRTriplet{p.client.lmr.Triplet(0, 8)}, 1, 0))
	require.Equal(t, DTOSuccess, waitDTO(t, p.client.req).Status)
	d := waitDTO(t, p.server.recv)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(9), d.Cookie)
}

// An RSP reserves one EP; its request moves the EP to
// PASSIVE_CONNECTION_PENDING, and accepting the CR connects it.
func TestRSP(t *testing.T) {
	ia, c, s, crEVD := newSidesAndCREVD(t)
	q := nextConnQual()
	rsp, err := ia.CreateRSP(q, s.ep, crEVD)
	require.NoError(t, err)
	_, err = ia.CreateRSP(nextConnQual(), s.ep, crEVD)
	requireCode(t, err, InvalidState|InvalidStateEPReserved)
	rp, err := rsp.Query()
	require.NoError(t, err)
	require.Equal(t, s.ep, rp.EP)
	require.Equal(t, q, rp.ConnQual)
	require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, nil, 0, 0))
	ev := waitEvent(t, crEVD)
	require.Equal(t, EventConnectionRequest, ev.Number)
	require.Equal(t, rsp, ev.CR.RSP)
	require.Equal(t, rsp, ev.CR.SP())
	crp, err := ev.CR.CR.Query()
	require.NoError(t, err)
	require.Equal(t, s.ep, crp.LocalEP)
	st, _, _, err := s.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStatePassiveConnectionPending, st)
	require.NoError(t, ev.CR.CR.Accept(nil, nil))
	require.Equal(t, EventConnectionEstablished, waitEvent(t, c.conn).Number)
	require.Equal(t, EventConnectionEstablished, waitEvent(t, s.conn).Number)
	require.NoError(t, rsp.Free())
}

// dat_cr_handoff cannot be done with rdma_cm: DAT_NOT_IMPLEMENTED, and the
// CR stays usable.
func TestCRHandoff(t *testing.T) {
	ia := openIA(t)
	c := newSide(t, ia, mustPZ(t, ia), pairOpts{}, nil, nil)
	_, crEVD, q := listenPSP(t, ia)
	require.NoError(t, c.ep.Connect(ia.Address(), q, waitUS, nil, 0, 0))
	cr := waitEvent(t, crEVD).CR.CR
	requireCode(t, cr.Handoff(nextConnQual()), NotImplemented)
	require.NoError(t, cr.Reject(nil))
	require.Equal(t, EventConnectionPeerRejected, waitEvent(t, c.conn).Number)
}

// A connection qualifier can be listened on once.
func TestPSPConnQualInUse(t *testing.T) {
	ia := openIA(t)
	psp, crEVD, q := listenPSP(t, ia)
	_, err := ia.CreatePSP(q, crEVD, PSPConsumerFlag)
	requireCode(t, err, ConnQualInUse)
	_, err = ia.CreatePSP(nextConnQual(), crEVD, PSPFlags(2))
	requireCode(t, err, InvalidParameter|InvalidArg4)
	dto, err := ia.CreateEVD(4, EVDDTOFlag)
	require.NoError(t, err)
	_, err = ia.CreatePSP(nextConnQual(), dto, PSPConsumerFlag)
	requireCode(t, err, InvalidHandle|InvalidHandleEVDCR)
	requireCode(t, crEVD.Free(), InvalidState|InvalidStateEVDInUse)
	require.NoError(t, psp.Free())
	require.NoError(t, crEVD.Free())
}

// dat_ep_dup_connect connects to the service point another EP is connected
// to.
func TestDupConnect(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	p := newPairIn(t, ia, pz, pairOpts{})
	c2 := newSide(t, ia, pz, pairOpts{}, nil, nil)
	s2 := newSide(t, ia, pz, pairOpts{}, nil, nil)
	require.NoError(t, c2.ep.DupConnect(p.client.ep, waitUS, []byte("dup"), 0))
	ev := waitEvent(t, p.cr)
	require.Equal(t, p.psp, ev.CR.PSP)
	require.NoError(t, ev.CR.CR.Accept(s2.ep, nil))
	require.Equal(t, EventConnectionEstablished, waitEvent(t, c2.conn).Number)
	require.Equal(t, EventConnectionEstablished, waitEvent(t, s2.conn).Number)
	c3 := newSide(t, ia, pz, pairOpts{}, nil, nil)
	requireCode(t, c3.ep.DupConnect(c3.ep, waitUS, nil, 0), InvalidState|InvalidStateEPUnconnected)
}

// Freeing a connected EP disconnects it; the peer sees
// DAT_CONNECTION_EVENT_DISCONNECTED.
func TestFreeConnectedEP(t *testing.T) {
	p := newPair(t, pairOpts{})
	postRecvs(t, p.client, 0, 64, 1, 1)
	require.NoError(t, p.client.ep.Free())
	require.Equal(t, EventConnectionDisconnected, waitEvent(t, p.server.conn).Number)
	d := waitDTO(t, p.client.recv)
	require.Equal(t, DTOErrFlushed, d.Status, "the freed EP's receive is flushed")
	require.NoError(t, p.server.ep.Free())
	require.NoError(t, p.client.req.Free())
}

// Accept checks its EP.
func TestAcceptInvalid(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	p := newPairIn(t, ia, pz, pairOpts{})
	c2 := newSide(t, ia, pz, pairOpts{}, nil, nil)
	require.NoError(t, c2.ep.Connect(ia.Address(), p.qual, waitUS, nil, 0, 0))
	cr := waitEvent(t, p.cr).CR.CR
	requireCode(t, cr.Accept(p.server.ep, nil), InvalidState|InvalidStateEPConnected)
	requireCode(t, cr.Accept(nil, nil), InvalidHandle|InvalidHandleEP)
	s2 := newSide(t, ia, pz, pairOpts{}, nil, nil)
	requireCode(t, cr.Accept(s2.ep, make([]byte, ia.privateData.accept+1)), InvalidParameter|InvalidArg4)
	require.NoError(t, cr.Accept(s2.ep, make([]byte, ia.privateData.accept)))
	require.Equal(t, EventConnectionEstablished, waitEvent(t, c2.conn).Number)
}

// pattern returns n bytes, none zero, that differ with seed.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) + seed
	}
	return b
}

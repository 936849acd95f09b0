package dtestport

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// The dtestsrq protocol (dtestsrq.c), RC (no -u). No TCP exchange: the
// client is given the server's address (-h) and port (-p).
//
//  1. Each side creates -c EPs (on one SRQ of c*B receives with -S 1, the
//     default) and posts c*B receives of -b bytes (default: the
//     DAT_IB_TRANSPORT_MTU attribute), cookie i*B+j at rbuf+cookie*b.
//  2. The server listens on -p; the client connects EP i with 4 bytes of
//     private data, i big-endian; the server accepts each request on its
//     EP of that index, with the same 4 bytes.
//  3. -t rounds: the client sends B messages on each EP, then both
//     receive c*B, then the server answers with B on each EP. A message
//     is b bytes: byte 0 the header (client 0x55, server 0xaa), bytes 4-7
//     the EP index and 8-11 the message number on that EP (from 1, over
//     all rounds), both big-endian. The receiver checks the header and
//     that each EP's numbers follow on, and reposts the receive with its
//     cookie; then each side takes its c*B send completions (b bytes).
//  4. The client disconnects each EP; each side waits for the connection
//     event and, with an SRQ, for DAT_ASYNC_ERROR_EP_BROKEN on the async
//     EVD for that EP (OFA DAPL's mapping of IBV_EVENT_QP_LAST_WQE_REACHED),
//     with no timeout; then it frees the EP.
const (
	DtestsrqPass = "DAPL RC SRQ Test Complete."
	// DtestsrqPassNoSRQ is the pass line of -S 0.
	DtestsrqPassNoSRQ = "DAPL RC none SRQ Test Complete."
)

// DtestsrqOpts are the options both sides must agree on.
type DtestsrqOpts struct {
	Conns, Burst, Rounds int // -c, -B, -t
	BufLen               int // -b; 0: the DAT_IB_TRANSPORT_MTU attribute
	Port                 udat.ConnQual
	SRQ                  bool // the Go side's receives on an SRQ
	// EPBrokenWait bounds the wait for DAT_ASYNC_ERROR_EP_BROKEN after each
	// disconnection (C waits for ever); 0 does not wait.
	EPBrokenWait time.Duration
	// PeerWaitsEPBroken: the peer has an SRQ and so, as the C program,
	// waits for EP_BROKEN after each disconnection before the next.
	PeerWaitsEPBroken bool
}

// DtestsrqResult is what a Go side saw that the test may compare with C.
type DtestsrqResult struct {
	EPBroken int // EP_BROKEN async events, one per EP when the device raises LAST_WQE_REACHED
	// Stalled: the server saw no EP_BROKEN after the first disconnection
	// and stopped there, as its peer, waiting for the same event, then
	// disconnects no more EPs.
	Stalled bool
}

type dtestsrq struct {
	ctx    context.Context
	server bool
	o      DtestsrqOpts
	logf   func(string, ...any)
	res    DtestsrqResult

	ia                    *udat.IA
	pz                    *udat.PZ
	srq                   *udat.SRQ
	rbuf, sbuf            *udat.LMR
	req, rcv, conn, crEVD *udat.EVD
	eps                   []*udat.EP
	psp                   *udat.PSP
	lastMsg               []uint32
}

// DtestsrqServer runs dtestsrq's server on device; ready is called once
// its PSP exists.
func DtestsrqServer(ctx context.Context, device string, o DtestsrqOpts, logf func(string, ...any), ready func()) (DtestsrqResult, error) {
	s := &dtestsrq{ctx: ctx, server: true, o: o, logf: logf}
	defer s.close()
	err := run(func() {
		s.open(device)
		var err error
		s.psp, err = s.ia.CreatePSP(o.Port, s.crEVD, udat.PSPConsumerFlag)
		check(err, "create the PSP")
		ready()
		s.accept()
		s.protocol()
	})
	return s.res, err
}

// DtestsrqClient runs dtestsrq's client on device against host.
func DtestsrqClient(ctx context.Context, device string, host netip.Addr, o DtestsrqOpts, logf func(string, ...any)) (DtestsrqResult, error) {
	s := &dtestsrq{ctx: ctx, o: o, logf: logf}
	defer s.close()
	err := run(func() {
		s.open(device)
		for i, ep := range s.eps {
			var pd [4]byte
			binary.BigEndian.PutUint32(pd[:], uint32(i))
			check(ep.Connect(host, o.Port, 100_000_000, pd[:], udat.QoSBestEffort, udat.ConnectDefault), "connect")
		}
		for range s.eps {
			waitConn(s.ctx, s.conn, udat.EventConnectionEstablished, "a connection")
		}
		s.protocol()
	})
	return s.res, err
}

func (s *dtestsrq) name() string {
	if s.server {
		return "server"
	}
	return "client"
}

func (s *dtestsrq) open(device string) {
	var err error
	s.ia, err = udat.OpenIA(device, 8)
	check(err, "open the IA")
	if s.o.BufLen == 0 {
		_, pa, err := s.ia.Query()
		check(err, "query the IA")
		for _, a := range pa.ProviderSpecificAttr {
			if a.Name == "DAT_IB_TRANSPORT_MTU" {
				fmt.Sscan(a.Value, &s.o.BufLen)
			}
		}
		if s.o.BufLen == 0 {
			fail("no DAT_IB_TRANSPORT_MTU attribute")
		}
	}
	n := s.o.Conns * s.o.Burst
	s.lastMsg = make([]uint32, s.o.Conns)
	s.pz, err = s.ia.CreatePZ()
	check(err, "create the PZ")
	s.req, err = s.ia.CreateEVD(n, udat.EVDDTOFlag)
	check(err, "create the request EVD")
	s.rcv, err = s.ia.CreateEVD(n, udat.EVDDTOFlag)
	check(err, "create the receive EVD")
	s.conn, err = s.ia.CreateEVD(2*s.o.Conns, udat.EVDConnectionFlag)
	check(err, "create the connection EVD")
	s.crEVD, err = s.ia.CreateEVD(s.o.Conns, udat.EVDCRFlag)
	check(err, "create the CR EVD")
	if s.o.SRQ {
		s.srq, err = s.ia.CreateSRQ(s.pz, udat.SRQAttr{MaxRecvDTOs: n, MaxRecvIOV: 1})
		check(err, "create the SRQ")
	}
	s.rbuf, err = s.ia.AllocLMR(s.pz, n*s.o.BufLen, udat.MemPrivAll)
	check(err, "register rbuf")
	s.sbuf, err = s.ia.AllocLMR(s.pz, n*s.o.BufLen, udat.MemPrivAll)
	check(err, "register sbuf")
	per := s.o.Burst
	if !s.server {
		per = n
	}
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, QoS: udat.QoSBestEffort,
		RecvCompletionFlags: udat.CompletionDefault, RequestCompletionFlags: udat.CompletionDefault,
		MaxRecvDTOs: per, MaxRequestDTOs: per, MaxRecvIOV: 1, MaxRequestIOV: 1,
	}
	for range s.o.Conns {
		var ep *udat.EP
		if s.srq != nil {
			ep, err = s.ia.CreateEPWithSRQ(s.pz, s.rcv, s.req, s.conn, s.srq, &attr)
		} else {
			ep, err = s.ia.CreateEP(s.pz, s.rcv, s.req, s.conn, &attr)
		}
		check(err, "create an EP")
		s.eps = append(s.eps, ep)
	}
	for i := range s.o.Conns {
		for j := range s.o.Burst {
			s.postRecv(s.eps[i], uint64(i*s.o.Burst+j))
		}
	}
}

func (s *dtestsrq) postRecv(ep *udat.EP, cookie uint64) {
	iov := []udat.LMRTriplet{s.rbuf.Triplet(int(cookie)*s.o.BufLen, s.o.BufLen)}
	if s.srq != nil {
		check(s.srq.PostRecv(iov, cookie), "post a receive to the SRQ")
	} else {
		check(ep.PostRecv(iov, cookie, udat.CompletionDefault), "post a receive")
	}
}

func (s *dtestsrq) accept() {
	for range s.o.Conns {
		ev := waitEvent(s.ctx, s.crEVD, "a connection request")
		if ev.Number != udat.EventConnectionRequest || ev.CR.ConnQual != s.o.Port || ev.CR.PSP != s.psp {
			fail("connection request: %v on %d, want one on %d at our PSP", ev.Number, ev.CR.ConnQual, s.o.Port)
		}
		cp, err := ev.CR.CR.Query()
		check(err, "query the CR")
		if len(cp.PrivateData) < 4 {
			fail("the request's private data %v, want an EP index", cp.PrivateData)
		}
		i := binary.BigEndian.Uint32(cp.PrivateData)
		if int(i) >= len(s.eps) {
			fail("the request asks for EP %d of %d", i, len(s.eps))
		}
		check(ev.CR.CR.Accept(s.eps[i], cp.PrivateData[:4]), "accept")
	}
	for range s.eps {
		waitConn(s.ctx, s.conn, udat.EventConnectionEstablished, "a connection")
	}
}

func (s *dtestsrq) protocol() {
	s.logf("Go dtestsrq %s: %d connections established", s.name(), len(s.eps))
	hdr, want := byte(0x55), byte(0xaa)
	if s.server {
		hdr, want = want, hdr
	}
	sent := 0
	send := func() {
		off := 0
		for ep := range s.o.Conns {
			for i := range s.o.Burst {
				b := s.sbuf.Bytes()[off : off+s.o.BufLen]
				clear(b[:12])
				b[0] = hdr
				binary.BigEndian.PutUint32(b[4:], uint32(ep))
				binary.BigEndian.PutUint32(b[8:], uint32(sent+i+1))
				check(s.eps[ep].PostSend([]udat.LMRTriplet{s.sbuf.Triplet(off, s.o.BufLen)}, uint64(off), udat.CompletionDefault), "send")
				off += s.o.BufLen
			}
		}
	}
	for round := range s.o.Rounds {
		if !s.server {
			send()
		}
		for range s.o.Conns * s.o.Burst {
			s.recvOne(round, want)
		}
		if s.server {
			send()
		}
		sent += s.o.Burst
		for range s.o.Conns * s.o.Burst {
			ev := waitEvent(s.ctx, s.req, "a send completion")
			if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess || ev.DTO.TransferredLength != uint64(s.o.BufLen) {
				fail("send completion: %v status %v length %d", ev.Number, ev.DTO.Status, ev.DTO.TransferredLength)
			}
		}
	}
	s.logf("Go dtestsrq %s: %d rounds of %d messages on %d connections checked", s.name(), s.o.Rounds, s.o.Burst, s.o.Conns)
	s.disconnect()
}

// recvOne takes one message: its length, header and EP's next number
// checked, then its receive posted again with its cookie.
func (s *dtestsrq) recvOne(round int, want byte) {
	ev := waitEvent(s.ctx, s.rcv, fmt.Sprintf("a message of round %d", round))
	d := ev.DTO
	n := uint64(s.o.Conns * s.o.Burst)
	if ev.Number != udat.EventDTOCompletion || d.Status != udat.DTOSuccess || d.TransferredLength != uint64(s.o.BufLen) || d.Cookie >= n {
		fail("receive: %v status %v length %d cookie %d, want success, %d bytes, a cookie below %d", ev.Number, d.Status, d.TransferredLength, d.Cookie, s.o.BufLen, n)
	}
	m := s.rbuf.Bytes()[int(d.Cookie)*s.o.BufLen:]
	ep, num := binary.BigEndian.Uint32(m[4:]), binary.BigEndian.Uint32(m[8:])
	if m[0] != want || int(ep) >= s.o.Conns || num != s.lastMsg[ep]+1 {
		fail("message header %#x EP %d number %d, want header %#x and EP %d's number %d", m[0], ep, num, want, ep, s.lastMsg[min(int(ep), s.o.Conns-1)]+1)
	}
	if s.srq == nil && d.EP != s.eps[ep] {
		fail("message for EP %d arrived on another EP", ep)
	}
	s.lastMsg[ep] = num
	s.postRecv(d.EP, d.Cookie)
}

// disconnect is step 4: each EP's connection event and, with an SRQ,
// its EP_BROKEN (waited for EPBrokenWait), then its free.
func (s *dtestsrq) disconnect() {
	async := s.ia.AsyncEVD()
	for i := range s.eps {
		if !s.server {
			check(s.eps[i].Disconnect(udat.CloseDefault), "disconnect")
		}
		ev := waitConn(s.ctx, s.conn, udat.EventConnectionDisconnected, "a disconnection")
		k := -1
		for j, ep := range s.eps {
			if ep != nil && ep == ev.Conn.EP {
				k = j
			}
		}
		if k < 0 {
			fail("disconnection of an EP not ours or already freed")
		}
		if s.srq != nil && s.o.EPBrokenWait > 0 {
			ctx, cancel := context.WithTimeout(s.ctx, s.o.EPBrokenWait)
			ae, _, err := async.WaitContext(ctx, 1)
			cancel()
			switch {
			case err == nil && ae.Number == udat.EventAsyncErrorEPBroken && ae.Async.Handle == s.eps[k]:
				s.res.EPBroken++
			case err == nil:
				fail("async event %v for %v, want EP_BROKEN for the disconnected EP", ae.Number, ae.Async.Handle)
			case udat.CodeOf(err).Type() != udat.TimeoutExpired:
				fail("waiting for EP_BROKEN: %w (%v)", err, context.Cause(s.ctx))
			case s.server && s.o.PeerWaitsEPBroken:
				s.res.Stalled = true
			}
		}
		check(s.eps[k].Free(), "free an EP")
		s.eps[k] = nil
		if s.res.Stalled {
			for j, ep := range s.eps {
				if ep != nil {
					check(ep.Free(), "free a connected EP")
					s.eps[j] = nil
				}
			}
			s.logf("Go dtestsrq server: no EP_BROKEN after the first disconnection: stopped, the other EPs freed connected")
			break
		}
	}
	s.logf("Go dtestsrq %s: %d EPs disconnected and freed, %d EP_BROKEN events", s.name(), len(s.eps), s.res.EPBroken)
	s.teardown()
}

func (s *dtestsrq) teardown() {
	if s.psp != nil {
		check(s.psp.Free(), "free the PSP")
		s.psp = nil
	}
	for _, l := range []**udat.LMR{&s.rbuf, &s.sbuf} {
		check((*l).Free(), "free an LMR")
		*l = nil
	}
	if s.srq != nil {
		check(s.srq.Free(), "free the SRQ")
		s.srq = nil
	}
	freeBase([]**udat.EVD{&s.req, &s.rcv, &s.conn, &s.crEVD}, &s.pz, &s.ia, udat.CloseAbruptFlag)
}

func (s *dtestsrq) close() {
	closeAll(s.ia, append(freers(s.eps), s.psp, s.rbuf, s.sbuf, s.srq, s.req, s.rcv, s.conn, s.crEVD, s.pz)...)
}

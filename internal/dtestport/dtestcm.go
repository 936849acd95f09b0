package dtestport

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// The dtestcm protocol (dtestcm.c), one listen (no -m): the connection
// setup rate, of RC connections or (-u) of UD address resolutions.
//
//  1. Each side creates -c RC EPs (1 receive, 1 request each) up front;
//     the server creates its PSP on -p, then sends the TCP ConnMsg.
//  2. The client connects its EPs -b at a time, each with 48 bytes of
//     private data 1..48, and takes that burst's ESTABLISHED events
//     (checking the private data 2..49) before the next burst. It times
//     all of it: its CPS is -c over that time.
//  3. The server accepts the requests as they come, in order, on its EPs
//     0..c-1, checking the private data and answering with each byte plus
//     one, and then takes the c ESTABLISHED events.
//  4. The client disconnects all; both take c DISCONNECTED events, each
//     for one of their EPs, and free it.
//
// Without -w both poll their EVDs (dat_evd_dequeue in a loop), with -w
// they wait (dat_evd_wait). With -u the EPs are UD (a 2048-byte message
// size, no RDMA): the events are the IB extension's UD connection request
// and established events, and in step 4 both sides free their EPs without
// a disconnection. C's cma provider has no UD, so this mode runs Go
// against Go only.
const DtestcmPass = "DAPL Connection Test Complete."

// DtestcmOpts are the options both sides agree on.
type DtestcmOpts struct {
	Conns, Burst int // -c, -b
	Port         udat.ConnQual
	Wait         bool // -w: dat_evd_wait rather than polling
	UD           bool // -u: UD EPs: address resolutions, not connections
}

type dtestcm struct {
	ctx    context.Context
	server bool
	o      DtestcmOpts
	logf   func(string, ...any)

	ia             *udat.IA
	pz             *udat.PZ
	req, rcv       *udat.EVD
	conn, crEVD    *udat.EVD
	eps            []*udat.EP
	psp            *udat.PSP
	pd, back       []byte
	connectElapsed time.Duration
}

// DtestcmServer runs dtestcm's server on device; ready is called once it
// listens for the TCP exchange.
func DtestcmServer(ctx context.Context, device string, o DtestcmOpts, logf func(string, ...any), ready func()) error {
	s := &dtestcm{ctx: ctx, server: true, o: o, logf: logf}
	defer s.close()
	return run(func() {
		s.open(device)
		var err error
		s.psp, err = s.ia.CreatePSP(o.Port, s.crEVD, udat.PSPConsumerFlag)
		check(err, "create the PSP")
		l, err := Listen()
		check(err, "TCP")
		defer l.Close()
		ready()
		_, err = l.Exchange(ctx, ConnMsg{Addr: s.ia.Address(), Provider: Provider}, false)
		check(err, "TCP exchange")
		s.accept()
		s.disconnect()
	})
}

// DtestcmClient runs dtestcm's client on device against host and returns
// its connections per second, timed as C times them.
func DtestcmClient(ctx context.Context, device string, host netip.Addr, o DtestcmOpts, logf func(string, ...any)) (float64, error) {
	s := &dtestcm{ctx: ctx, o: o, logf: logf}
	defer s.close()
	err := run(func() {
		s.open(device)
		m, err := Dial(ctx, host, nil)
		check(err, "TCP exchange")
		s.connect(m.Addr)
		s.disconnect()
	})
	if err != nil {
		return 0, err
	}
	return float64(o.Conns) / s.connectElapsed.Seconds(), nil
}

func (s *dtestcm) name() string {
	if s.server {
		return "server"
	}
	return "client"
}

func (s *dtestcm) open(device string) {
	if s.o.Burst > s.o.Conns {
		s.o.Burst = s.o.Conns
	}
	s.pd, s.back = make([]byte, 48), make([]byte, 48)
	for i := range s.pd {
		s.pd[i], s.back[i] = byte(i+1), byte(i+2)
	}
	var err error
	s.ia, err = udat.OpenIA(device, 8)
	check(err, "open the IA")
	s.pz, err = s.ia.CreatePZ()
	check(err, "create the PZ")
	s.crEVD, err = s.ia.CreateEVD(s.o.Conns, udat.EVDCRFlag)
	check(err, "create the CR EVD")
	s.conn, err = s.ia.CreateEVD(2*s.o.Conns, udat.EVDConnectionFlag)
	check(err, "create the connection EVD")
	s.req, err = s.ia.CreateEVD(1, udat.EVDDTOFlag)
	check(err, "create the request EVD")
	s.rcv, err = s.ia.CreateEVD(1, udat.EVDDTOFlag)
	check(err, "create the receive EVD")
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxRDMASize: 0x10000, QoS: udat.QoSBestEffort,
		RecvCompletionFlags: udat.CompletionDefault, RequestCompletionFlags: udat.CompletionDefault,
		MaxRecvDTOs: 1, MaxRequestDTOs: 1, MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 4, MaxRDMAReadOut: 4,
	}
	if s.o.UD {
		attr.ServiceType, attr.MaxMessageSize = udat.ServiceTypeIBUD, 2048
		attr.MaxRDMASize, attr.MaxRDMAReadIn, attr.MaxRDMAReadOut = 0, 0, 0
	}
	s.eps = make([]*udat.EP, s.o.Conns)
	for i := range s.eps {
		s.eps[i], err = s.ia.CreateEP(s.pz, s.rcv, s.req, s.conn, &attr)
		check(err, "create an EP")
	}
}

// next takes one event from evd, polling or waiting as -w says.
func (s *dtestcm) next(evd *udat.EVD, what string) udat.Event {
	if s.o.Wait {
		return waitEvent(s.ctx, evd, what)
	}
	deadline := time.Now().Add(Wait)
	for n := 0; ; n++ {
		ev, err := evd.Dequeue()
		if err == nil {
			return ev
		}
		if err != udat.ErrQueueEmpty {
			fail("polling for %s: %w", what, err)
		}
		if n%4096 == 0 {
			if s.ctx.Err() != nil {
				fail("polling for %s: %v", what, context.Cause(s.ctx))
			}
			if time.Now().After(deadline) {
				fail("polling for %s: nothing in %v", what, Wait)
			}
		}
	}
}

// requestEvent and establishedEvent are the events a connection request
// and an established connection (or resolved address) arrive as.
func (s *dtestcm) requestEvent() udat.EventNumber {
	if s.o.UD {
		return udat.EventIBUDConnectionRequest
	}
	return udat.EventConnectionRequest
}

func (s *dtestcm) establishedEvent() udat.EventNumber {
	if s.o.UD {
		return udat.EventIBUDConnectionEstablished
	}
	return udat.EventConnectionEstablished
}

func (s *dtestcm) checkPD(pd, want []byte, what string) {
	if len(pd) < 48 || string(pd[:48]) != string(want) {
		fail("%s: private data %v, want %v", what, pd, want)
	}
}

func (s *dtestcm) accept() {
	for i := range s.eps {
		ev := s.next(s.crEVD, "a connection request")
		if ev.Number != s.requestEvent() || ev.CR.ConnQual != s.o.Port {
			fail("connection request %d: %v on %d", i, ev.Number, ev.CR.ConnQual)
		}
		cp, err := ev.CR.CR.Query()
		check(err, "query the CR")
		s.checkPD(cp.PrivateData, s.pd, "connection request")
		check(ev.CR.CR.Accept(s.eps[i], s.back), "accept")
	}
	for i := range s.eps {
		ev := s.next(s.conn, "an established connection")
		if ev.Number != s.establishedEvent() {
			fail("connection %d: %v, want %v", i, ev.Number, s.establishedEvent())
		}
	}
	s.logf("Go dtestcm server: all %d connected", len(s.eps))
}

func (s *dtestcm) connect(server netip.Addr) {
	start := time.Now()
	for i := 0; i < len(s.eps); i += s.o.Burst {
		n := min(s.o.Burst, len(s.eps)-i)
		for k := range n {
			check(s.eps[i+k].Connect(server, s.o.Port, 100_000_000, s.pd, udat.QoSBestEffort, udat.ConnectDefault), "connect")
		}
		for range n {
			ev := s.next(s.conn, "an established connection")
			if ev.Number != s.establishedEvent() {
				fail("connection: %v, want %v", ev.Number, s.establishedEvent())
			}
			s.checkPD(ev.Conn.PrivateData, s.back, "established connection")
		}
	}
	s.connectElapsed = time.Since(start)
	s.logf("Go dtestcm client: all %d connected in %v: %.1f connections/s", len(s.eps), s.connectElapsed, float64(len(s.eps))/s.connectElapsed.Seconds())
}

// disconnect ends the connections (UD: frees the EPs) and frees the rest.
func (s *dtestcm) disconnect() {
	if s.o.UD {
		s.freeUD()
	} else {
		s.disconnectRC()
	}
	if s.psp != nil {
		check(s.psp.Free(), "free the PSP")
		s.psp = nil
	}
	freeBase([]**udat.EVD{&s.crEVD, &s.conn, &s.req, &s.rcv}, &s.pz, &s.ia, udat.CloseAbruptFlag)
	s.logf("Go dtestcm %s: all disconnected and freed", s.name())
}

// disconnectRC has the client disconnect every EP; both sides free each
// EP as its DISCONNECTED event comes.
func (s *dtestcm) disconnectRC() {
	if !s.server {
		for _, ep := range s.eps {
			check(ep.Disconnect(udat.CloseDefault), "disconnect")
		}
	}
	idx := make(map[*udat.EP]int, len(s.eps))
	for i, ep := range s.eps {
		idx[ep] = i
	}
	for range s.eps {
		ev := waitEvent(s.ctx, s.conn, "a disconnection")
		i, ok := idx[ev.Conn.EP]
		if ev.Number != udat.EventConnectionDisconnected || !ok {
			fail("disconnection: %v for an EP not ours or freed", ev.Number)
		}
		delete(idx, ev.Conn.EP)
		check(s.eps[i].Free(), "free an EP")
		s.eps[i] = nil
	}
}

// freeUD frees the UD EPs: there is no connection to end.
func (s *dtestcm) freeUD() {
	for i, ep := range s.eps {
		check(ep.Free(), "free an EP")
		s.eps[i] = nil
	}
}

func (s *dtestcm) close() {
	closeAll(s.ia, append(freers(s.eps), s.psp, s.crEVD, s.conn, s.req, s.rcv, s.pz)...)
}

var cpsLine = regexp.MustCompile(`Connections: +[0-9.]+ usec, CPS +([0-9.]+) .*Num=(\d+)`)

// ParseCPS reads the C client's connections per second from its output.
func ParseCPS(out string, conns int) (float64, error) {
	m := cpsLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no \"Connections: ... CPS\" line")
	}
	if n, _ := strconv.Atoi(m[2]); n != conns {
		return 0, fmt.Errorf("the C client made %s connections, want %d", m[2], conns)
	}
	return strconv.ParseFloat(m[1], 64)
}

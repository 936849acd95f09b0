package main

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// server accepts connections on one PSP and serves each in its own
// goroutine. A client run (a session) may open several connections.
type server struct {
	cfg    *config
	log    io.Writer
	ia     *udat.IA
	pz     *udat.PZ
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[uint32]*session
	served   int
	failed   int
}

type session struct {
	req    request
	from   netip.Addr
	done   int
	failed error
}

// runServer serves clients until ctx ends or, with -sessions N, until N
// client runs are over. It returns an error if it could not start or if a
// session failed.
func runServer(ctx context.Context, cfg *config, log io.Writer) error {
	ia, err := udat.OpenIA(cfg.device, 16)
	if err != nil {
		return openError(cfg.device, err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	pz, err := ia.CreatePZ()
	if err != nil {
		return fmt.Errorf("create a PZ: %w", err)
	}
	crEVD, err := ia.CreateEVD(64, udat.EVDCRFlag)
	if err != nil {
		return fmt.Errorf("create the CR EVD: %w", err)
	}
	psp, err := ia.CreatePSP(udat.ConnQual(cfg.port), crEVD, udat.PSPConsumerFlag)
	if err != nil {
		return listenError(cfg.port, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{cfg: cfg, log: log, ia: ia, pz: pz, cancel: cancel, sessions: map[uint32]*session{}}
	fmt.Fprintf(log, "udattest server: listening on %s port %d (IA %s)\n", ia.Address(), cfg.port, cfg.device)

	var wg sync.WaitGroup
	for {
		ev, _, err := crEVD.WaitContext(ctx, 1)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			psp.Free()
			wg.Wait()
			return fmt.Errorf("wait for connection requests: %w", err)
		}
		if ev.Number != udat.EventConnectionRequest {
			continue
		}
		cr := ev.CR.CR
		p, err := cr.Query()
		if err != nil {
			cr.Reject(nil)
			continue
		}
		req, err := parseRequest(p.PrivateData)
		if err != nil {
			fmt.Fprintf(log, "udattest server: rejected a connection from %s: %v\n", p.RemoteAddr, err)
			cr.Reject([]byte("udattest: bad request"))
			continue
		}
		s.begin(req, p.RemoteAddr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.end(req, s.serve(cr, req))
		}()
	}
	psp.Free()
	wg.Wait()
	if s.failed > 0 {
		return fmt.Errorf("%d of %d client runs failed", s.failed, s.served)
	}
	return nil
}

func (s *server) begin(req request, from netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[req.session]; !ok {
		s.sessions[req.session] = &session{req: req, from: from}
	}
}

// end records the end of one connection of a session, and the session's end
// when it was its last.
func (s *server) end(req request, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[req.session]
	ss.done++
	if err != nil && ss.failed == nil {
		ss.failed = fmt.Errorf("endpoint %d: %w", req.epIndex, err)
	}
	if ss.done < int(ss.req.eps) {
		return
	}
	delete(s.sessions, req.session)
	s.served++
	status := "ok"
	if ss.failed != nil {
		s.failed++
		status = "FAILED: " + ss.failed.Error()
	}
	fmt.Fprintf(s.log, "udattest server: %s from %s: %s\n", describe(ss.req), ss.from, status)
	if s.cfg.sessions > 0 && s.served >= s.cfg.sessions {
		s.cancel()
	}
}

// describe names the test a request asks for.
func describe(r request) string {
	switch r.test {
	case 'Q':
		return "quick check"
	case 'T':
		return fmt.Sprintf("transaction test (%d EPs, %d rounds of %d B)", r.eps, r.iters, r.size)
	}
	kind := "bandwidth"
	if r.lat {
		kind = "latency"
	}
	return fmt.Sprintf("%s %s test (%d B x %d)", r.op.title(), kind, r.size, r.iters)
}

// serverLayout sizes the server's buffer for a request.
func serverLayout(r request) layout {
	lay := layout{nRecv: 8, slotSize: ctrlSize, dataLen: int(r.size), sendDepth: 8, segs: int(r.segs)}
	switch r.test {
	case 'Q':
		lay.dataLen = quickDataLen
		lay.segs = 2
	case 'T':
		lay.segs = 2
	case 'P':
		switch {
		case r.op == opSend && r.lat:
			lay.nRecv, lay.slotSize = 16, max(int(r.size), ctrlSize)
			lay.sendDepth = 2*latSignal + 8
		case r.op == opSend:
			// As many receives as perftest's ib_send_bw (-r 512): a
			// receiver that falls behind gets RNR NAKs, and rdma_cm
			// leaves the QPs' minimum RNR timer at 0, i.e. 655 ms.
			slot := max(int(r.size), ctrlSize)
			lay.nRecv, lay.slotSize = clamp(2*int(r.depth), 512, 4096), slot
			lay.nRecv = clamp((64<<20)/slot, 16, lay.nRecv)
			if r.credits {
				// The source word of the credit writes (credits.go).
				lay.dataLen = max(lay.dataLen, creditLen)
			}
		case r.op == opWrite && r.lat:
			lay.dataLen = 2 * int(r.size)
			lay.sendDepth = 2*latSignal + 8
		}
	}
	return lay
}

// serve runs one connection: accept, exchange triplets, the test's own
// server part if it has one, then control messages until the client is
// done.
func (s *server) serve(cr *udat.CR, req request) error {
	lay := serverLayout(req)
	c, err := newConn(s.ia, s.pz, lay, s.cfg.timeout)
	if err != nil {
		cr.Reject(nil)
		return err
	}
	defer c.close()
	c.block = true
	if r := req; r.test == 'P' && r.op == opWrite && r.lat {
		c.inboxOff, c.inboxLen = int(r.size), int(r.size)
	}
	if err := c.postAllRecvs(); err != nil {
		cr.Reject(nil)
		return err
	}
	if err := cr.Accept(c.ep, makeReply(req.nonce)); err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	ev, err := c.waitConnEvent()
	if err != nil {
		return fmt.Errorf("wait for the connection: %w", err)
	}
	if ev.Number != udat.EventConnectionEstablished {
		return fmt.Errorf("the connection did not come up: %v", ev.Number)
	}
	if err := c.hello(false); err != nil {
		return err
	}
	if req.test == 'P' {
		c.block = req.block
		var err error
		switch {
		case req.op == opSend && req.lat:
			err = sendPingPong(c, int(req.iters), int(req.size), int(req.segs), false, nil, nil)
		case req.op == opSend:
			err = sinkSends(c, req, s.cfg.sinkStall)
		case req.op == opWrite && req.lat:
			err = writePingPong(c, int(req.iters), int(req.size), int(req.segs), false, nil, nil)
		}
		if err != nil {
			c.ep.Disconnect(udat.CloseAbruptFlag)
			return err
		}
		c.block = true
	}
	return c.serveCtrl()
}

// serveCtrl answers control messages until msgDone, then waits for the
// client to disconnect. Each wait is bounded by -timeout; during a one-sided
// run the client's msgProgress messages keep it from expiring.
func (c *conn) serveCtrl() error {
	for {
		m, err := c.recvCtrl()
		if err != nil {
			return err
		}
		switch m.typ {
		case msgVerify, msgFill:
			if m.a > uint64(c.lay.dataLen) || m.b > uint64(c.lay.dataLen)-m.a {
				return fmt.Errorf("request for bytes %d..%d of a %d-byte region", m.a, m.a+m.b, c.lay.dataLen)
			}
			region := c.data()[m.a : m.a+m.b]
			r := ctrl{typ: msgResult, a: 1}
			if m.typ == msgFill {
				fillPattern(region, m.c)
			} else if r.c = uint64(crc32.ChecksumIEEE(region)); r.c != m.c {
				r.a = 0
			}
			if err := c.sendCtrl(&r); err != nil {
				return err
			}
		case msgProgress:
			// The client is alive and busy; wait again.
		case msgEcho:
			m.typ = msgEcho
			if err := c.sendCtrl(&m); err != nil {
				return err
			}
		case msgDone:
			// The client disconnects once it has this answer, and on
			// soft-iWARP its disconnection can overtake the answer's
			// send completion, which then comes back flushed although
			// the client took the answer. The DISCONNECTED that follows
			// says that the run ended as it should.
			if err := c.sendCtrl(&ctrl{typ: msgResult, a: 1}); err != nil && !flushed(err) {
				return err
			}
			return c.waitDisconnected()
		default:
			return fmt.Errorf("unknown control message type %d", m.typ)
		}
	}
}

// sinkSends receives the messages of a send bandwidth run (its iterations
// and its latency samples). It waits for one, takes the others already
// there, and reposts them all with one EP.PostRecvs call, as perftest's
// server reposts after each poll of a batch of completions. With credits
// it tells the client, after a repost, how many receives it has posted in
// all (creditWriter). stall, for the tests, is how long it leaves its first
// message's receive unposted, as a server the scheduler left behind.
func sinkSends(c *conn, req request, stall time.Duration) error {
	n, size := int(req.iters)+int(req.latIters), int(req.size)
	iovs := make([]udat.LMRTriplet, c.lay.nRecv)
	recvs := make([]udat.Recv, 0, c.lay.nRecv)
	take := func(i int, d udat.DTOCompletionData) error {
		if d.Status != udat.DTOSuccess || d.TransferredLength != uint64(size) {
			return fmt.Errorf("message %d: %v, %d bytes, expected %d", i, d.Status, d.TransferredLength, size)
		}
		slot := int(d.Cookie)
		iovs[slot] = c.lmr.Triplet(c.lay.recvOff()+slot*c.lay.slotSize, c.lay.slotSize)
		recvs = append(recvs, udat.Recv{LocalIOV: iovs[slot : slot+1], Cookie: d.Cookie})
		return nil
	}
	// Every receive is posted as the run starts (serve's, and recvCtrl's
	// repost of the hello's).
	posted := c.lay.nRecv
	var cw *creditWriter
	if req.credits {
		var err error
		if cw, err = newCreditWriter(c); err != nil {
			return err
		}
		if err := cw.write(posted); err != nil {
			return err
		}
	}
	for i := 0; i < n; {
		d, err := c.nextDTO(c.rcvEVD, "receive")
		if err != nil {
			return fmt.Errorf("message %d of %d: %w", i+1, n, err)
		}
		i++
		if err := take(i, d); err != nil {
			return err
		}
		if stall > 0 {
			time.Sleep(stall)
			stall = 0
		}
		for i < n && len(recvs) < cap(recvs) {
			err := c.rcvEVD.DequeueInto(&c.ev)
			if err == udat.ErrQueueEmpty {
				break
			}
			if err != nil {
				return fmt.Errorf("message %d of %d: %w", i+1, n, err)
			}
			i++
			if err := take(i, c.ev.DTO); err != nil {
				return err
			}
		}
		if _, err := c.ep.PostRecvs(recvs); err != nil {
			return fmt.Errorf("repost %d receives: %w", len(recvs), err)
		}
		posted += len(recvs)
		recvs = recvs[:0]
		if cw != nil {
			if err := cw.update(posted); err != nil {
				return fmt.Errorf("after message %d of %d: %w", i, n, err)
			}
		}
	}
	if cw != nil {
		return cw.finish()
	}
	return nil
}

package crosshost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/rpc"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
	"github.com/udapl-go/udapl/internal/devtest"
)

// The hostile peer: a puppet written straight against verbs and rdma_cm
// (package cverbs), so that it can do what no DAT peer would. The role
// "hostile" listens on TCP port req.Port of its host and serves one control
// connection with net/rpc; the test on the other host (hostile_test.go)
// drives it step by step: connect and stop half-way, send what does not
// fit, use keys it was never given, stop answering. Every call reports what
// the peer's own verbs saw, so that a test can tell a refusal by our side
// from one by the peer's.

func init() { roles["hostile"] = runHostile }

// hostileMemSize is the peer's registered memory: targets for our RDMA
// reads, sources and sinks for its own DTOs.
const hostileMemSize = 1 << 20

func runHostile(ctx context.Context, req request, ready func(), rl *roleLog) error {
	h, err := newHostile(rl)
	if err != nil {
		return err
	}
	defer h.close()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", fmt.Sprintf(":%d", req.Port))
	if err != nil {
		return err
	}
	defer ln.Close()
	srv := rpc.NewServer()
	if err := srv.RegisterName("Hostile", h); err != nil {
		return err
	}
	ready()
	go func() { <-ctx.Done(); ln.Close() }()
	conn, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	go func() { <-ctx.Done(); conn.Close() }()
	srv.ServeConn(conn) // until the test closes the connection
	return nil
}

// Hostile is the peer's state; its exported methods are the calls.
type Hostile struct {
	mu   sync.Mutex
	rl   *roleLog
	vctx *cverbs.Context
	pd   *cverbs.PD
	ech  *cverbs.EventChannel
	cq   *cverbs.CQ
	mem  []byte
	mr   *cverbs.MR

	conns   map[int]*hconn
	nextH   int
	backlog []cverbs.CMEvent
	// The rdma_cm events not taken yet, queued by the event goroutine
	// without limit (a flood of requests must not block it).
	evMu    sync.Mutex
	evq     []cverbs.CMEvent
	evc     chan struct{}
	stop    context.CancelFunc
	wg      sync.WaitGroup
	lis     *cverbs.CMID
	udqps   []*cverbs.QP
	ahs     []*cverbs.AH
	port    uint8
	nextWR  uint64
	pending []cverbs.WC // completions polled while waiting for another
}

// hconn is one rdma_cm id of the peer and its QP.
type hconn struct {
	id       *cverbs.CMID
	qp       *cverbs.QP
	external bool // the QP is not the id's: rdma_cm does not move it
	ud       bool
	// UD: where the peer that answered our request is.
	ah        *cverbs.AH
	qpn, qkey uint32
}

func newHostile(rl *roleLog) (h *Hostile, err error) {
	h = &Hostile{rl: rl, conns: map[int]*hconn{}, evc: make(chan struct{}, 1), port: 1}
	defer func() {
		if err != nil {
			h.close()
		}
	}()
	if h.vctx, err = cverbs.Open(devtest.Device()); err != nil {
		return nil, err
	}
	if h.pd, err = h.vctx.AllocPD(); err != nil {
		return nil, err
	}
	if h.cq, err = h.vctx.NewCQ(1024, nil); err != nil {
		return nil, err
	}
	h.mem = make([]byte, hostileMemSize) // kept by h while registered: the Go heap does not move it
	all := cverbs.AccessLocalWrite | cverbs.AccessRemoteWrite | cverbs.AccessRemoteRead | cverbs.AccessRemoteAtomic
	if h.mr, err = h.pd.RegMR(unsafe.Pointer(&h.mem[0]), len(h.mem), all); err != nil {
		return nil, err
	}
	if h.ech, err = cverbs.NewEventChannel(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			ev, err := h.ech.GetEvent(ctx)
			if err != nil {
				return
			}
			h.evMu.Lock()
			h.evq = append(h.evq, ev)
			h.evMu.Unlock()
			select {
			case h.evc <- struct{}{}:
			default:
			}
		}
	}()
	return h, nil
}

func (h *Hostile) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, c := range h.conns {
		h.closeConn(c)
		delete(h.conns, k)
	}
	if h.lis != nil {
		h.lis.Close()
	}
	for _, ev := range h.backlog {
		if ev.Type == cverbs.CMEventConnectRequest {
			ev.ID.Close()
		}
	}
	for _, a := range h.ahs {
		a.Close()
	}
	for _, q := range h.udqps {
		q.Close()
	}
	if h.stop != nil {
		h.stop()
		h.wg.Wait()
	}
	// Connect requests that came after the last call.
	for _, ev := range h.evq {
		if ev.Type == cverbs.CMEventConnectRequest {
			ev.ID.Close()
		}
	}
	if h.ech != nil {
		h.ech.Close()
	}
	if h.mr != nil {
		h.mr.Close()
	}
	if h.cq != nil {
		h.cq.Close()
	}
	if h.pd != nil {
		h.pd.Close()
	}
	if h.vctx != nil {
		h.vctx.Close()
	}
}

func (h *Hostile) closeConn(c *hconn) {
	if c.ah != nil {
		c.ah.Close()
	}
	if c.id != nil {
		c.id.Close() // and the id's own QP
	}
	if c.external && c.qp != nil {
		c.qp.Close()
	}
}

// event waits for the next event of id (ListenID for connect requests).
func (h *Hostile) event(id *cverbs.CMID, d time.Duration) (cverbs.CMEvent, error) {
	mine := func(ev cverbs.CMEvent) bool {
		return ev.ID == id || (ev.Type == cverbs.CMEventConnectRequest && ev.ListenID == id)
	}
	for i, ev := range h.backlog {
		if mine(ev) {
			h.backlog = append(h.backlog[:i], h.backlog[i+1:]...)
			return ev, nil
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		h.evMu.Lock()
		q := h.evq
		h.evq = nil
		h.evMu.Unlock()
		for i, ev := range q {
			if mine(ev) {
				h.backlog = append(h.backlog, q[i+1:]...)
				return ev, nil
			}
			h.backlog = append(h.backlog, ev)
		}
		select {
		case <-h.evc:
		case <-timer.C:
			return cverbs.CMEvent{}, fmt.Errorf("no rdma_cm event within %v", d)
		}
	}
}

func (h *Hostile) expect(id *cverbs.CMID, want cverbs.CMEventType) error {
	ev, err := h.event(id, 10*time.Second)
	if err != nil {
		return fmt.Errorf("waiting for %v: %w", want, err)
	}
	if ev.Type != want {
		return fmt.Errorf("got %v (status %d), want %v", ev.Type, ev.Status, want)
	}
	return nil
}

func (h *Hostile) qpAttr() cverbs.QPInitAttr {
	return cverbs.QPInitAttr{SendCQ: h.cq, RecvCQ: h.cq, MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1}
}

func (h *Hostile) add(c *hconn) int {
	h.nextH++
	h.conns[h.nextH] = c
	return h.nextH
}

func (h *Hostile) conn(k int) (*hconn, error) {
	c := h.conns[k]
	if c == nil {
		return nil, fmt.Errorf("no connection %d", k)
	}
	return c, nil
}

// HConnect asks for a connection to our side.
type HConnect struct {
	Addr        string
	Port        uint16
	PrivateData []byte
	// External gives the id a QP of its own that rdma_cm does not move:
	// the connection stops after the reply (CMEventConnectResponse) until
	// Establish, which never comes unless the test calls it.
	External   bool
	NoWait     bool // return once the request is sent
	RetryCount uint8
	RNRRetry   uint8
	UD         bool // a SIDR request (RDMA_PS_UDP) for a UD EP
	// UDHeader puts the header a udat UD EP expects before PrivateData
	// (udat/ud.go): the peer's announced UD QP, rdma_cm's QKey, its GID.
	UDHeader bool
}

// udHeader is udat's UD request header for the peer's announced QP.
func (h *Hostile) udHeader(local netip.Addr, pd []byte) ([]byte, error) {
	q, err := h.udQP(false)
	if err != nil {
		return nil, err
	}
	be := func(b []byte, v uint32) []byte { return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
	b := []byte{'U', 'D', 1, byte(len(pd))}
	b = be(b, q.Num())
	b = be(b, cverbs.UDPQKey)
	b = append(b, 0, 0, 0, 0)
	gid := netip.AddrFrom16(local.As16()).As16()
	b = append(b, gid[:]...)
	return append(b, pd...), nil
}

// HEvent is what the peer saw.
type HEvent struct {
	Conn        int
	Event       string
	Type        cverbs.CMEventType
	Status      int
	PrivateData []byte
	QPNum       uint32
	QKey        uint32
}

func evReply(k int, ev cverbs.CMEvent) HEvent {
	return HEvent{Conn: k, Event: ev.Type.String(), Type: ev.Type, Status: ev.Status, PrivateData: ev.PrivateData, QPNum: ev.QPNum, QKey: ev.QKey}
}

func (h *Hostile) Connect(a HConnect, r *HEvent) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	addr, err := netip.ParseAddr(a.Addr)
	if err != nil {
		return err
	}
	c := &hconn{ud: a.UD}
	if a.UD {
		c.id, err = h.ech.CreateUDID()
	} else {
		c.id, err = h.ech.CreateID()
	}
	if err != nil {
		return err
	}
	k := h.add(c)
	r.Conn = k
	if err := c.id.ResolveAddr(netip.AddrPort{}, netip.AddrPortFrom(addr, a.Port), 0); err != nil {
		return err
	}
	if err := h.expect(c.id, cverbs.CMEventAddrResolved); err != nil {
		return err
	}
	if err := c.id.ResolveRoute(0); err != nil {
		return err
	}
	if err := h.expect(c.id, cverbs.CMEventRouteResolved); err != nil {
		return err
	}
	if a.UDHeader {
		if a.PrivateData, err = h.udHeader(c.id.LocalAddr().Addr(), a.PrivateData); err != nil {
			return err
		}
	}
	p := cverbs.ConnParam{PrivateData: a.PrivateData, ResponderResources: 4, InitiatorDepth: 4,
		RetryCount: a.RetryCount, RNRRetryCount: a.RNRRetry, FlowControl: true}
	switch {
	case a.UD:
	case a.External:
		if c.qp, err = h.pd.NewQP(h.qpAttr()); err != nil {
			return err
		}
		c.external = true
		if err := c.id.ModifyQP(c.qp, cverbs.QPInit); err != nil {
			return err
		}
		p.QPNum = c.qp.Num()
	default:
		if c.qp, err = c.id.NewQP(h.pd, h.qpAttr()); err != nil {
			return err
		}
	}
	if err := c.id.Connect(p); err != nil {
		return err
	}
	if a.NoWait {
		r.Event = "sent"
		return nil
	}
	ev, err := h.event(c.id, 30*time.Second)
	if err != nil {
		return err
	}
	*r = evReply(k, ev)
	if a.UD && ev.Type == cverbs.CMEventEstablished {
		c.qpn, c.qkey = ev.QPNum, ev.QKey
		if c.ah, err = h.pd.CreateAH(ev.AHAttr); err != nil {
			return err
		}
	}
	return nil
}

// Await waits for the next event of a connection.
func (h *Hostile) Await(k int, r *HEvent) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(k)
	if err != nil {
		return err
	}
	ev, err := h.event(c.id, 30*time.Second)
	if err != nil {
		return err
	}
	*r = evReply(k, ev)
	return nil
}

// Establish completes a connection with an external QP after its reply.
func (h *Hostile) Establish(k int, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(k)
	if err != nil {
		return err
	}
	for _, st := range []cverbs.QPState{cverbs.QPRTR, cverbs.QPRTS} {
		if err := c.id.ModifyQP(c.qp, st); err != nil {
			return err
		}
	}
	return c.id.Establish()
}

// Close destroys a connection's id (rdma_destroy_id: a request or reply
// not answered yet is rejected) and its QP.
func (h *Hostile) Close(k int, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(k)
	if err != nil {
		return err
	}
	h.closeConn(c)
	delete(h.conns, k)
	return nil
}

// Disconnect sends a disconnect request.
func (h *Hostile) Disconnect(k int, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(k)
	if err != nil {
		return err
	}
	return c.id.Disconnect()
}

// Stop moves a connection's QP to the error state without a word to the
// peer: from then on it answers no packet.
func (h *Hostile) Stop(k int, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(k)
	if err != nil {
		return err
	}
	return c.qp.ToError()
}

// Listen makes the peer listen for our connection requests.
func (h *Hostile) Listen(port uint16, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, err := h.ech.CreateID()
	if err != nil {
		return err
	}
	if err := id.BindAddr(netip.AddrPortFrom(netip.IPv4Unspecified(), port)); err != nil {
		id.Close()
		return err
	}
	if err := id.Listen(16); err != nil {
		id.Close()
		return err
	}
	h.lis = id
	return nil
}

// HAnswer answers the next connection request: with a reject or an
// accept, carrying PrivateData.
type HAnswer struct {
	Reject      bool
	PrivateData []byte
}

func (h *Hostile) Answer(a HAnswer, r *HEvent) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lis == nil {
		return errors.New("not listening")
	}
	ev, err := h.event(h.lis, 30*time.Second)
	if err != nil {
		return err
	}
	*r = evReply(0, ev)
	if a.Reject {
		err := ev.ID.Reject(a.PrivateData)
		ev.ID.Close()
		return err
	}
	c := &hconn{id: ev.ID}
	k := h.add(c)
	r.Conn = k
	if c.qp, err = c.id.NewQP(h.pd, h.qpAttr()); err != nil {
		return err
	}
	if err := c.id.Accept(cverbs.ConnParam{PrivateData: a.PrivateData, ResponderResources: 4, InitiatorDepth: 4, RNRRetryCount: 7, FlowControl: true}); err != nil {
		return err
	}
	return h.expect(c.id, cverbs.CMEventEstablished) // else a disconnect now would send nothing
}

// HPost is one DTO of the peer: on connection Conn, Op over Len bytes of
// the peer's memory at Off, to RemoteAddr with RKey.
type HPost struct {
	Conn       int
	Op         cverbs.SendOp
	Off, Len   int
	Fill       byte // written over the local bytes first (sends, writes)
	RemoteAddr uint64
	RKey       uint32
	Compare    uint64
	Swap       uint64
	Wait       time.Duration // for the completion; 0: 10 s
	// UDStranger sends the datagram from a UD QP that our side never
	// heard of (else from the one the request announced).
	UDStranger bool
}

// HDone is a completion the peer saw.
type HDone struct {
	Status  cverbs.WCStatus
	Text    string
	ByteLen uint32
}

func (h *Hostile) Post(a HPost, r *HDone) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(a.Conn)
	if err != nil {
		return err
	}
	if a.Off < 0 || a.Len < 0 || a.Off+a.Len > len(h.mem) {
		return errors.New("outside the peer's memory")
	}
	if a.Fill != 0 && (a.Op == cverbs.OpSend || a.Op == cverbs.OpRDMAWrite) {
		for i := range a.Len {
			h.mem[a.Off+i] = a.Fill
		}
	}
	h.nextWR++
	id := h.nextWR
	wr := cverbs.SendWR{ID: id, Op: a.Op, Flags: cverbs.SendSignaled, SGL: []cverbs.SGE{h.mr.SGE(a.Off, a.Len)},
		RemoteAddr: a.RemoteAddr, RKey: a.RKey, CompareAdd: a.Compare, Swap: a.Swap}
	qp := c.qp
	if c.ud {
		if qp, err = h.udQP(a.UDStranger); err != nil {
			return err
		}
		wr.AH, wr.RemoteQPN, wr.RemoteQKey = c.ah, c.qpn, c.qkey
	}
	if _, err := qp.PostSend([]cverbs.SendWR{wr}); err != nil {
		return err
	}
	return h.await(id, a.Wait, r)
}

// udQP returns the peer's UD QP: 0 announced in its requests, 1 a stranger.
func (h *Hostile) udQP(stranger bool) (*cverbs.QP, error) {
	for len(h.udqps) < 2 {
		q, err := h.pd.NewUDQP(h.qpAttr())
		if err != nil {
			return nil, err
		}
		if err := q.ToRTSUD(h.port, cverbs.UDPQKey); err != nil {
			q.Close()
			return nil, err
		}
		h.udqps = append(h.udqps, q)
	}
	if stranger {
		return h.udqps[1], nil
	}
	return h.udqps[0], nil
}

// UDQPNums are the numbers of the peer's UD QPs: announced, stranger.
func (h *Hostile) UDQPNums(_ int, r *[2]uint32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, stranger := range []bool{false, true} {
		q, err := h.udQP(stranger)
		if err != nil {
			return err
		}
		r[i] = q.Num()
	}
	return nil
}

// HRecv posts a receive of Len bytes at Off.
type HRecv struct {
	Conn     int
	Off, Len int
}

func (h *Hostile) PostRecv(a HRecv, r *uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.conn(a.Conn)
	if err != nil {
		return err
	}
	h.nextWR++
	*r = h.nextWR
	_, err = c.qp.PostRecv([]cverbs.RecvWR{{ID: h.nextWR, SGL: []cverbs.SGE{h.mr.SGE(a.Off, a.Len)}}})
	return err
}

// HWait waits for the completion of work request ID.
type HWait struct {
	ID   uint64
	Wait time.Duration
}

func (h *Hostile) WaitWR(a HWait, r *HDone) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.await(a.ID, a.Wait, r)
}

// await polls the peer's CQ for work request id.
func (h *Hostile) await(id uint64, d time.Duration, r *HDone) error {
	if d == 0 {
		d = 10 * time.Second
	}
	deadline := time.Now().Add(d)
	wc := make([]cverbs.WC, 16)
	for {
		for i, w := range h.pending {
			if w.WRID == id {
				h.pending = append(h.pending[:i], h.pending[i+1:]...)
				*r = HDone{Status: w.Status, Text: w.Status.String(), ByteLen: w.ByteLen}
				return nil
			}
		}
		n, err := h.cq.Poll(wc)
		if err != nil {
			return err
		}
		h.pending = append(h.pending, wc[:n]...)
		if n > 0 {
			continue
		}
		if time.Now().After(deadline) {
			*r = HDone{Text: "no completion"}
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// HMem is the peer's memory as our side may address it.
type HMem struct {
	Addr uint64
	RKey uint32
}

func (h *Hostile) Mem(_ int, r *HMem) error {
	*r = HMem{Addr: uint64(h.mr.Addr), RKey: h.mr.RKey}
	return nil
}

// HBytes names bytes of the peer's memory.
type HBytes struct {
	Off, Len int
	Fill     byte
}

// Fill writes a byte over a range of the peer's memory.
func (h *Hostile) Fill(a HBytes, _ *struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range a.Len {
		h.mem[a.Off+i] = a.Fill
	}
	return nil
}

// Bytes reads a range of the peer's memory.
func (h *Hostile) Bytes(a HBytes, r *[]byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	*r = append([]byte(nil), h.mem[a.Off:a.Off+a.Len]...)
	return nil
}

// hostilePeer is the test's handle on a hostile role.
type hostilePeer struct {
	t    *testing.T
	cl   *rpc.Client
	role *roleRun
}

// startHostile starts the hostile role on the peer host and connects to it.
func startHostile(t *testing.T) *hostilePeer {
	t.Helper()
	port := nextPort()
	role := startRole(t, request{Role: "hostile", Port: port})
	var cl *rpc.Client
	var err error
	for range 50 {
		var c net.Conn
		c, err = net.DialTimeout("tcp", netip.AddrPortFrom(peerAddr(t), port).String(), 5*time.Second)
		if err == nil {
			cl = rpc.NewClient(c)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err, "the control connection to the hostile peer")
	p := &hostilePeer{t: t, cl: cl, role: role}
	t.Cleanup(func() {
		cl.Close()
		role.finish(t, time.Minute)
	})
	return p
}

// call makes one call on the peer; it fails the test if the call fails or
// takes more than a minute.
func (p *hostilePeer) call(method string, args, reply any) {
	p.t.Helper()
	require.NoError(p.t, p.try(method, args, reply), "hostile peer: %s(%+v)", method, args)
}

// try makes one call and returns its error.
func (p *hostilePeer) try(method string, args, reply any) error {
	c := p.cl.Go("Hostile."+method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-c.Done:
		return c.Error
	case <-time.After(time.Minute):
		return fmt.Errorf("no answer within a minute")
	}
}

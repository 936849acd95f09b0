//go:build linux && cgo

package cverbs

// Shared set-up for device tests: a device rig (context, PD, port, RoCE v2
// GID), registered buffers, QP ends and connected pairs, and polling helpers.
// Every device test starts with devtest.Require and then fails, never skips,
// when the device cannot be used. On an iWARP device (siw0) the rig has no
// GID to connect QPs by hand with: its pairs connect through rdma_cm, and
// the tests of what iWARP lacks (UD, immediate data, atomics, connecting
// QPs by hand) skip, saying so (rig.skipIfIWARP).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/internal/devtest"
)

const (
	testIP      = "192.0.2.1"
	waitTimeout = 20 * time.Second
	bufSize     = 64 << 10
	queueDepth  = 256
	allAccess   = AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic
)

type rig struct {
	ctx    *Context
	pd     *PD
	port   uint8
	gidIdx int
	gid    [16]byte // zero on iWARP
	mtu    int
	iwarp  bool // the device is iWARP: QPs reach RTS through rdma_cm only
	// noQPState: the device's query_qp does not report the QP state, and
	// ibv_query_qp says RESET whatever it is (siw of Linux 6.1).
	noQPState bool
}

// newRig opens the test device and finds the RoCE v2 GID of 192.0.2.1 (on
// RoCE; an iWARP port's GID table holds its MAC address only).
func newRig(t testing.TB) *rig {
	t.Helper()
	dev := devtest.Require(t)
	ctx, err := Open(dev)
	require.NoError(t, err, "open RDMA device %q", dev)
	t.Cleanup(func() { assert.NoError(t, ctx.Close()) })
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pd.Close()) })

	r := &rig{ctx: ctx, pd: pd, port: 1}
	pa, err := ctx.QueryPort(r.port)
	require.NoError(t, err)
	require.Equal(t, PortActive, pa.State, "port state")
	r.mtu = pa.ActiveMTU
	require.NotZero(t, r.mtu)
	r.iwarp = ctx.Transport() == TransportIWARP
	if !r.iwarp {
		r.gidIdx, r.gid = findGID(t, ctx, r.port, netip.MustParseAddr(testIP))
	} else {
		r.noQPState = !reportsQPState(t, r)
	}
	return r
}

// reportsQPState reports whether the device's ibv_query_qp gives the QP
// state: whether a QP moved to INIT says INIT.
func reportsQPState(t testing.TB, r *rig) bool {
	t.Helper()
	cq, err := r.ctx.NewCQ(1, nil)
	require.NoError(t, err)
	defer cq.Close()
	qp, err := r.pd.NewQP(QPInitAttr{SendCQ: cq, RecvCQ: cq, MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1})
	require.NoError(t, err)
	defer qp.Close()
	require.NoError(t, qp.ToInit(r.port, allAccess))
	st, err := qp.State()
	require.NoError(t, err)
	return st == QPInit
}

// requireQPState checks that qp is in state want, unless the device does
// not report QP states (rig.noQPState).
func (r *rig) requireQPState(t testing.TB, qp *QP, want QPState) {
	t.Helper()
	st, err := qp.State()
	require.NoError(t, err)
	if r.noQPState && st == QPReset {
		t.Logf("%s does not report QP states: QP %d not checked to be %v", r.ctx.Name(), qp.Num(), want)
		return
	}
	require.Equal(t, want, st)
}

// skipIfIWARP skips t on an iWARP device, which lacks the mechanism t
// tests: why names it.
func (r *rig) skipIfIWARP(t testing.TB, why string) {
	t.Helper()
	if r.iwarp {
		t.Skipf("not applicable: iWARP (%s): %s", r.ctx.Name(), why)
	}
}

// findGID scans the GID table for the IPv4-mapped GID of ip, preferring a
// RoCE v2 entry.
func findGID(t testing.TB, ctx *Context, port uint8, ip netip.Addr) (int, [16]byte) {
	t.Helper()
	want := netip.AddrFrom16(ip.As16()).As16() // ::ffff:a.b.c.d
	pa, err := ctx.QueryPort(port)
	require.NoError(t, err)
	fallback := -1
	for i := 0; i < pa.GIDTblLen; i++ {
		e, err := ctx.QueryGIDEntry(port, i)
		if err != nil || e.GID != want {
			continue
		}
		if e.Type == GIDTypeRoCEv2 {
			return i, want
		}
		if fallback < 0 {
			fallback = i
		}
	}
	if fallback < 0 {
		// No ibv_query_gid_ex: plain GID scan.
		for i := 0; i < pa.GIDTblLen; i++ {
			if g, err := ctx.QueryGID(port, i); err == nil && g == want {
				fallback = i
				break
			}
		}
	}
	require.GreaterOrEqual(t, fallback, 0, "no GID for %v on port %d", ip, port)
	return fallback, want
}

// newChannel creates a completion channel that the test's cleanup closes.
func (r *rig) newChannel(t testing.TB) *CompChannel {
	ch, err := r.ctx.NewCompChannel()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ch.Close()) })
	return ch
}

// buf is mmap'ed memory (outside the Go heap) registered as an MR.
type buf struct {
	b  []byte
	mr *MR
}

func (r *rig) newBuf(t testing.TB, size int, access Access) *buf {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(b) })
	mr, err := r.pd.RegMR(unsafe.Pointer(&b[0]), size, access)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, mr.Close()) })
	require.Equal(t, uintptr(unsafe.Pointer(&b[0])), mr.Addr)
	require.Equal(t, size, mr.Len)
	return &buf{b: b, mr: mr}
}

func (b *buf) sge(off, n int) SGE  { return b.mr.SGE(off, n) }
func (b *buf) addr(off int) uint64 { return uint64(b.mr.Addr) + uint64(off) }
func (b *buf) clear()              { clear(b.b) }

// end is one side of an RC connection.
type end struct {
	scq, rcq *CQ
	qp       *QP
	buf      *buf
}

type endOpts struct {
	srq *SRQ
	ch  *CompChannel // completion channel of the receive CQ
}

// newEnd makes the CQs and buffer of an end; the QP comes from newQP or
// from a CMID.
func (r *rig) newEnd(t testing.TB, o endOpts) *end {
	t.Helper()
	e := &end{buf: r.newBuf(t, bufSize, allAccess)}
	var err error
	e.scq, err = r.ctx.NewCQ(2*queueDepth, nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.scq.Close()) })
	e.rcq, err = r.ctx.NewCQ(2*queueDepth, o.ch)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.rcq.Close()) })
	return e
}

func (e *end) initAttr(srq *SRQ) QPInitAttr {
	return QPInitAttr{
		SendCQ: e.scq, RecvCQ: e.rcq, SRQ: srq,
		MaxSendWR: queueDepth, MaxRecvWR: queueDepth,
		MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64,
	}
}

func (r *rig) newQPEnd(t testing.TB, o endOpts) *end {
	t.Helper()
	e := r.newEnd(t, o)
	qp, err := r.pd.NewQP(e.initAttr(o.srq))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, qp.Close()) })
	e.qp = qp
	c := qp.Cap()
	require.GreaterOrEqual(t, c.MaxSendWR, queueDepth)
	require.GreaterOrEqual(t, c.MaxSendSGE, 4)
	if o.srq == nil {
		require.GreaterOrEqual(t, c.MaxRecvWR, queueDepth)
		require.GreaterOrEqual(t, c.MaxRecvSGE, 4)
	}
	st, err := qp.State()
	require.NoError(t, err)
	if r.iwarp && st == QPInit {
		return e // soft-iWARP from Linux 6.12 on reports a new QP's IDLE state as INIT
	}
	require.Equal(t, QPReset, st)
	return e
}

// connectQPs brings a and b to RTS against each other: by hand, or on
// iWARP through rdma_cm (connectQPsCM).
func (r *rig) connectQPs(t testing.TB, a, b *end) {
	t.Helper()
	if r.iwarp {
		r.connectQPsCM(t, a, b)
		return
	}
	for _, p := range [][2]*end{{a, b}, {b, a}} {
		me, peer := p[0], p[1]
		require.NoError(t, me.qp.ToInit(r.port, allAccess))
		require.NoError(t, me.qp.ToRTR(RTRAttr{
			Port: r.port, DestQPNum: peer.qp.Num(), RQPSN: 0x123, MTU: r.mtu,
			DGID: r.gid, SGIDIndex: r.gidIdx, MaxDestRdAtomic: 4, MinRNRTimer: 12,
		}))
		require.NoError(t, me.qp.ToRTS(RTSAttr{SQPSN: 0x123, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 4}))
		st, err := me.qp.State()
		require.NoError(t, err)
		require.Equal(t, QPRTS, st)
	}
}

// connectQPsCM connects a and b, QPs made by PD.NewQP and in RESET,
// through rdma_cm, as iWARP requires: they go to INIT by hand, a connects
// to a listener on an ephemeral port with a's QP number, b accepts with
// its own, and the kernel moves both to RTS as the connection is made. The
// rdma_cm ids stay until the test ends (closing one tears its connection
// down).
func (r *rig) connectQPsCM(t testing.TB, a, b *end) {
	t.Helper()
	sch, cch := newChannel(t), newChannel(t)
	listen, err := sch.CreateID()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, listen.Close()) })
	ip := netip.MustParseAddr(testIP)
	require.NoError(t, listen.BindAddr(netip.AddrPortFrom(ip, 0)))
	require.NoError(t, listen.Listen(1))
	dst := listen.LocalAddr()
	require.NotZero(t, dst.Port())
	for _, e := range []*end{a, b} {
		require.NoError(t, e.qp.ToInit(r.port, allAccess))
	}

	var sid, cid *CMID
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitTimeout)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { // passive side
		ev, err := expectEvent(gctx, sch, CMEventConnectRequest)
		if err != nil {
			return err
		}
		sid = ev.ID
		if err := sid.Accept(cmParamQP("rig server", b.qp)); err != nil {
			return err
		}
		_, err = expectEvent(gctx, sch, CMEventEstablished)
		return err
	})
	g.Go(func() error { // active side
		var err error
		if cid, err = cch.CreateID(); err != nil {
			return err
		}
		if err := resolve(gctx, cch, cid, netip.AddrPortFrom(ip, 0), dst); err != nil {
			return err
		}
		if err := cid.Connect(cmParamQP("rig client", a.qp)); err != nil {
			return err
		}
		_, err = expectEvent(gctx, cch, CMEventEstablished)
		return err
	})
	err = g.Wait()
	t.Cleanup(func() {
		for _, id := range []*CMID{sid, cid} {
			if id != nil {
				assert.NoError(t, id.Close())
			}
		}
	})
	require.NoError(t, err, "connecting QPs %d and %d through rdma_cm", a.qp.Num(), b.qp.Num())
	for _, e := range []*end{a, b} {
		r.requireQPState(t, e.qp, QPRTS)
	}
}

// newPair returns two ends connected by hand over the RoCE v2 GID (on
// iWARP, through rdma_cm).
func (r *rig) newPair(t testing.TB, ao, bo endOpts) (a, b *end) {
	t.Helper()
	a, b = r.newQPEnd(t, ao), r.newQPEnd(t, bo)
	r.connectQPs(t, a, b)
	return a, b
}

// pollN polls cq until it has n completions or timeout passes.
func pollN(cq *CQ, n int, timeout time.Duration) ([]WC, error) {
	out := make([]WC, 0, n)
	wc := make([]WC, 32)
	deadline := time.Now().Add(timeout)
	for len(out) < n {
		k, err := cq.Poll(wc[:min(len(wc), n-len(out))])
		if err != nil {
			return out, err
		}
		out = append(out, wc[:k]...)
		if k == 0 {
			if time.Now().After(deadline) {
				return out, fmt.Errorf("poll: got %d of %d completions in %v", len(out), n, timeout)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	return out, nil
}

func mustPoll(t testing.TB, cq *CQ, n int) []WC {
	t.Helper()
	wcs, err := pollN(cq, n, waitTimeout)
	require.NoError(t, err)
	return wcs
}

// checkWCs reports the first completion that failed or has the wrong opcode.
func checkWCs(wcs []WC, op WCOpcode) error {
	for i, w := range wcs {
		if w.Status != WCSuccess {
			return fmt.Errorf("wc %d (id %d): status %v (vendor %#x)", i, w.WRID, w.Status, w.VendorErr)
		}
		if w.Opcode != op {
			return fmt.Errorf("wc %d (id %d): opcode %v, want %v", i, w.WRID, w.Opcode, op)
		}
	}
	return nil
}

func pollOK(cq *CQ, n int, op WCOpcode) ([]WC, error) {
	wcs, err := pollN(cq, n, waitTimeout)
	if err != nil {
		return wcs, err
	}
	return wcs, checkWCs(wcs, op)
}

// mustPollOK polls n successful completions of opcode op off cq; the test
// fails if they do not come.
func mustPollOK(t testing.TB, cq *CQ, n int, op WCOpcode) []WC {
	t.Helper()
	wcs, err := pollOK(cq, n, op)
	require.NoError(t, err)
	return wcs
}

// requireQuiet checks that no further completion arrives on cq for a while.
func requireQuiet(t testing.TB, cq *CQ, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	wc := make([]WC, 4)
	n, err := cq.Poll(wc)
	require.NoError(t, err)
	require.Zero(t, n, "unexpected completions: %+v", wc[:n])
}

func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7) + byte(i>>8)
	}
}

// requireWritten checks that RDMA writes whose completions came back put
// want at got. A write's completion says only that its data has left: on
// iWARP (soft-iWARP hands it to TCP) the peer places it a moment later,
// so the bytes get a bounded while to arrive.
func requireWritten(t *testing.T, got, want []byte) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		err := sameBytes("written", got, want)
		if err == nil || time.Now().After(deadline) {
			require.NoError(t, err)
			return
		}
	}
}

func sameBytes(what string, got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: byte %d is %#x, want %#x", what, i, got[i], want[i])
		}
	}
	return nil
}

// expectEvent waits for the next rdma_cm event on ch and checks its type.
func expectEvent(ctx context.Context, ch *EventChannel, want CMEventType) (CMEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		return ev, fmt.Errorf("waiting for %v: %w", want, err)
	}
	if ev.Type != want {
		return ev, fmt.Errorf("got event %v (status %d), want %v", ev.Type, ev.Status, want)
	}
	return ev, nil
}

// cmPair is a connection made through rdma_cm: a is the active side
// (connector), b the passive side (the listener's child id).
type cmPair struct {
	sch, cch    *EventChannel
	listen      *CMID
	sid, cid    *CMID
	a, b        *end
	lport, port uint16
}

func newChannel(t testing.TB) *EventChannel {
	t.Helper()
	ch, err := NewEventChannel()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ch.Close()) })
	return ch
}

// newListener binds a listening id on 192.0.2.1:port.
func newListener(t testing.TB, ch *EventChannel, port uint16) *CMID {
	t.Helper()
	id, err := ch.CreateID()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, id.Close()) })
	ap := netip.AddrPortFrom(netip.MustParseAddr(testIP), port)
	require.NoError(t, id.BindAddr(ap))
	require.NoError(t, id.Listen(8))
	require.Equal(t, ap, id.LocalAddr())
	return id
}

// resolve runs ResolveAddr and ResolveRoute on id from src to dst.
func resolve(ctx context.Context, ch *EventChannel, id *CMID, src, dst netip.AddrPort) error {
	if err := id.ResolveAddr(src, dst, 5*time.Second); err != nil {
		return err
	}
	if _, err := expectEvent(ctx, ch, CMEventAddrResolved); err != nil {
		return err
	}
	if err := id.ResolveRoute(5 * time.Second); err != nil {
		return err
	}
	_, err := expectEvent(ctx, ch, CMEventRouteResolved)
	return err
}

func cmParam(pd string) ConnParam {
	return ConnParam{
		PrivateData: []byte(pd), ResponderResources: 4, InitiatorDepth: 4,
		RetryCount: 7, RNRRetryCount: 7,
	}
}

// cmParamQP is cmParam for a connection of qp, a QP of the test's own.
func cmParamQP(pd string, qp *QP) ConnParam {
	p := cmParam(pd)
	p.QPNum = qp.Num()
	return p
}

// newCMPair connects two ends through rdma_cm with QPs made by
// CMID.NewQP: a listener on lport and a connector bound to cport.
func (r *rig) newCMPair(t testing.TB, lport, cport uint16) *cmPair {
	t.Helper()
	p := &cmPair{lport: lport, port: cport}
	p.sch, p.cch = newChannel(t), newChannel(t)
	p.listen = newListener(t, p.sch, lport)
	p.a, p.b = r.newEnd(t, endOpts{}), r.newEnd(t, endOpts{})
	t.Cleanup(func() {
		// Before the CQs (registered earlier, cleaned up later).
		assert.NoError(t, p.sid.Close())
		assert.NoError(t, p.cid.Close())
	})
	ip := netip.MustParseAddr(testIP)
	dst, src := netip.AddrPortFrom(ip, lport), netip.AddrPortFrom(ip, cport)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitTimeout)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { // passive side
		ev, err := expectEvent(gctx, p.sch, CMEventConnectRequest)
		if err != nil {
			return err
		}
		p.sid = ev.ID
		if ev.ListenID != p.listen {
			return errors.New("connect request: ListenID is not the listener")
		}
		if !bytes.HasPrefix(ev.PrivateData, []byte("hello from client")) {
			return fmt.Errorf("connect request private data %q", ev.PrivateData)
		}
		if n := p.sid.DeviceName(); n != r.ctx.Name() {
			return fmt.Errorf("child id on device %q, want %q", n, r.ctx.Name())
		}
		if p.b.qp, err = p.sid.NewQP(r.pd, p.b.initAttr(nil)); err != nil {
			return err
		}
		if err := p.sid.Accept(cmParam("hello from server")); err != nil {
			return err
		}
		ev, err = expectEvent(gctx, p.sch, CMEventEstablished)
		if err == nil && ev.ID != p.sid {
			err = errors.New("established: wrong id")
		}
		return err
	})
	g.Go(func() error { // active side
		var err error
		if p.cid, err = p.cch.CreateID(); err != nil {
			return err
		}
		if err := resolve(gctx, p.cch, p.cid, src, dst); err != nil {
			return err
		}
		if p.a.qp, err = p.cid.NewQP(r.pd, p.a.initAttr(nil)); err != nil {
			return err
		}
		if err := p.cid.Connect(cmParam("hello from client")); err != nil {
			return err
		}
		ev, err := expectEvent(gctx, p.cch, CMEventEstablished)
		if err != nil {
			return err
		}
		if ev.ID != p.cid {
			return errors.New("established: wrong id")
		}
		if !bytes.HasPrefix(ev.PrivateData, []byte("hello from server")) {
			return fmt.Errorf("established private data %q", ev.PrivateData)
		}
		return nil
	})
	require.NoError(t, g.Wait())
	require.Equal(t, src, p.cid.LocalAddr())
	require.Equal(t, dst, p.cid.PeerAddr())
	require.Equal(t, dst, p.sid.LocalAddr())
	require.Equal(t, src, p.sid.PeerAddr())
	require.Same(t, p.a.qp, p.cid.QP())
	return p
}

// disconnect disconnects from the active side and checks both sides see it.
// The passive side answers with its own Disconnect (the DREP), which is what
// completes the active side's disconnect.
func (p *cmPair) disconnect(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cid.Disconnect())
	ctx := context.Background()
	ev, err := expectEvent(ctx, p.sch, CMEventDisconnected)
	require.NoError(t, err)
	require.Same(t, p.sid, ev.ID)
	require.NoError(t, p.sid.Disconnect())
	ev, err = expectEvent(ctx, p.cch, CMEventDisconnected)
	require.NoError(t, err)
	require.Same(t, p.cid, ev.ID)
}

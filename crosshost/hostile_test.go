package crosshost

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// Peers that misbehave (issue 27, part 2): a hostile peer (the role of
// hostile_peer_test.go, written straight against verbs and rdma_cm) breaks
// the rules on purpose, and our side, a plain udat program, must not crash,
// hang, leak, or let the peer touch memory it was not given. Each test
// checks the DAT outcome on our side (event, asynchronous error, DTO
// status), that the IA stays usable (a well-behaved connection from the
// same peer works afterwards), and that nothing leaked: every object frees,
// the IA then closes gracefully, and goroutines and file descriptors are
// back where they were.

// checkLeaks records the process's goroutines and file descriptors and,
// when the test ends (after every cleanup registered later), checks that
// they came back to that.
func checkLeaks(t *testing.T) {
	t.Helper()
	selfAddr(t) // librdmacm opens the devices once per process, and keeps them
	g0, fd0 := runtime.NumGoroutine(), countFDs(t)
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			g, fd := runtime.NumGoroutine(), countFDs(t)
			if g <= g0 && fd <= fd0 {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("leak: goroutines %d -> %d, file descriptors %d -> %d\n%s", g0, g, fd0, fd, buf)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// ours is our side: an IA with a PSP, EVDs and whatever EPs and LMRs a
// test makes; free frees them all and closes the IA gracefully.
type ours struct {
	t                     *testing.T
	ia                    *udat.IA
	pz                    *udat.PZ
	req, rcv, conn, crEVD *udat.EVD
	psp                   *udat.PSP
	port                  uint16
	eps                   []*udat.EP
	lmrs                  []*udat.LMR
	rmrs                  []*udat.RMR
	freed                 bool
	cookie                uint64
	lastConn              int // the hostile peer's connection of the subtest
}

func openOurs(t *testing.T) *ours {
	t.Helper()
	selfAddr(t)
	o := &ours{t: t, port: nextPort()}
	var err error
	o.ia, err = udat.OpenIA(selfDevice(t), 16)
	require.NoError(t, err)
	t.Cleanup(func() {
		if !o.freed {
			o.ia.Close(udat.CloseAbruptFlag)
		}
	})
	o.pz, err = o.ia.CreatePZ()
	require.NoError(t, err)
	o.req, err = o.ia.CreateEVD(64, udat.EVDDTOFlag|udat.EVDRMRBindFlag)
	require.NoError(t, err)
	o.rcv, err = o.ia.CreateEVD(64, udat.EVDDTOFlag)
	require.NoError(t, err)
	o.conn, err = o.ia.CreateEVD(16, udat.EVDConnectionFlag)
	require.NoError(t, err)
	o.crEVD, err = o.ia.CreateEVD(16, udat.EVDCRFlag)
	require.NoError(t, err)
	o.psp, err = o.ia.CreatePSP(udat.ConnQual(o.port), o.crEVD, udat.PSPConsumerFlag)
	require.NoError(t, err)
	return o
}

func selfDevice(t *testing.T) string {
	selfAddr(t)
	return devtest.Device()
}

// hostileAttr is our EPs' attributes: small queues, the default
// retransmission settings (a dead peer is noticed in about 0.5 s).
func hostileAttr() *udat.EPAttr {
	return &udat.EPAttr{ServiceType: udat.ServiceTypeRC, MaxRecvDTOs: 8, MaxRequestDTOs: 8,
		MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 4, MaxRDMAReadOut: 4}
}

func (o *ours) newEP(attr *udat.EPAttr) *udat.EP {
	o.t.Helper()
	if attr == nil {
		attr = hostileAttr()
	}
	ep, err := o.ia.CreateEP(o.pz, o.rcv, o.req, o.conn, attr)
	require.NoError(o.t, err)
	o.eps = append(o.eps, ep)
	return ep
}

func (o *ours) newLMR(size int, priv udat.MemPriv) *udat.LMR {
	o.t.Helper()
	l, err := o.ia.AllocLMR(o.pz, size, priv)
	require.NoError(o.t, err)
	o.lmrs = append(o.lmrs, l)
	return l
}

// waitCR waits for the next connection request at the PSP.
func (o *ours) waitCR(d time.Duration) *udat.CR {
	o.t.Helper()
	ev := o.wait(o.crEVD, d)
	require.Equal(o.t, udat.EventConnectionRequest, ev.Number)
	require.NotNil(o.t, ev.CR.CR)
	return ev.CR.CR
}

func (o *ours) wait(e *udat.EVD, d time.Duration) udat.Event {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ev, _, err := e.WaitContext(ctx, 1)
	require.NoError(o.t, err, "no event within %v", d)
	return ev
}

// none checks that e stays empty for d.
func (o *ours) none(e *udat.EVD, d time.Duration, what string) {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ev, _, err := e.WaitContext(ctx, 1)
	if err == nil {
		o.t.Errorf("%s: unexpected event %v (DTO status %v)", what, ev.Number, ev.DTO.Status)
	}
}

// postRecvs posts n receives of size bytes each from l.
func (o *ours) postRecvs(ep *udat.EP, l *udat.LMR, n, size int) []uint64 {
	o.t.Helper()
	var cs []uint64
	for i := range n {
		o.cookie++
		require.NoError(o.t, ep.PostRecv([]udat.LMRTriplet{l.Triplet(i*size, size)}, o.cookie, udat.CompletionDefault))
		cs = append(cs, o.cookie)
	}
	return cs
}

// drainRecvs waits for the completions of cookies on the receive EVD and
// returns their statuses.
func (o *ours) drainRecvs(cookies []uint64, d time.Duration) map[uint64]udat.DTOStatus {
	o.t.Helper()
	got := map[uint64]udat.DTOStatus{}
	for len(got) < len(cookies) {
		ev := o.wait(o.rcv, d)
		require.Equal(o.t, udat.EventDTOCompletion, ev.Number)
		_, dup := got[ev.DTO.Cookie]
		require.False(o.t, dup, "cookie %d completed twice", ev.DTO.Cookie)
		got[ev.DTO.Cookie] = ev.DTO.Status
	}
	return got
}

// free frees every object of the test and closes the IA gracefully: an
// object udat kept alive behind the Consumer's back fails it.
func (o *ours) free() {
	o.t.Helper()
	for _, ep := range o.eps {
		if ep != nil {
			assert.NoError(o.t, ep.Free(), "free an EP")
		}
	}
	for _, r := range o.rmrs {
		if r != nil {
			assert.NoError(o.t, r.Free(), "free an RMR")
		}
	}
	for _, l := range o.lmrs {
		if l != nil {
			assert.NoError(o.t, l.Free(), "free an LMR")
		}
	}
	assert.NoError(o.t, o.psp.Free())
	for _, e := range []*udat.EVD{o.req, o.rcv, o.conn, o.crEVD} {
		assert.NoError(o.t, e.Free())
	}
	assert.NoError(o.t, o.pz.Free())
	require.NoError(o.t, o.ia.Close(udat.CloseGracefulFlag), "close the IA gracefully: something is still alive")
	o.freed = true
}

// accept waits for the hostile peer's request and accepts it with a new
// EP, which is returned once connected; the peer's Connect call runs in a
// goroutine and its answer is returned too.
func (o *ours) accept(p *hostilePeer, c HConnect, pd []byte) (*udat.EP, HEvent) {
	o.t.Helper()
	c.Addr, c.Port = selfAddr(o.t).String(), o.port
	done := make(chan error, 1)
	var hev HEvent
	go func() { done <- p.try("Connect", c, &hev) }()
	cr := o.waitCR(30 * time.Second)
	ep := o.newEP(nil)
	require.NoError(o.t, cr.Accept(ep, pd))
	ev := o.wait(o.conn, 30*time.Second)
	require.Equal(o.t, udat.EventConnectionEstablished, ev.Number)
	require.NoError(o.t, <-done)
	require.Equal(o.t, cverbs.CMEventEstablished, hev.Type, "the peer's connection")
	return ep, hev
}

// wellBehaved checks that the IA still serves: the peer connects again,
// reads good memory with its proper key, and disconnects; our EP sees the
// disconnect.
func (o *ours) wellBehaved(p *hostilePeer) {
	o.t.Helper()
	l := o.newLMR(4096, udat.MemPrivAll)
	buf := l.Bytes()
	for i := range buf {
		buf[i] = byte(i*7 + 3)
	}
	ep, hev := o.accept(p, HConnect{}, nil)
	var d HDone
	p.call("Post", HPost{Conn: hev.Conn, Op: cverbs.OpRDMARead, Off: 0, Len: 4096, RemoteAddr: l.Triplet(0, 4096).VirtualAddress, RKey: l.RMRContext()}, &d)
	require.Equal(o.t, cverbs.WCSuccess, d.Status, "a proper RDMA read after the misbehaviour: %s", d.Text)
	var got []byte
	p.call("Bytes", HBytes{Off: 0, Len: 4096}, &got)
	require.Equal(o.t, buf, got, "what the proper read fetched")
	p.call("Disconnect", hev.Conn, nil)
	ev := o.wait(o.conn, 30*time.Second)
	require.Equal(o.t, udat.EventConnectionDisconnected, ev.Number)
	require.Equal(o.t, ep, ev.Conn.EP)
	p.call("Close", hev.Conn, nil)
}

// observe collects what our side reports for d: connection events, async
// errors, receive completions.
type observed struct {
	conn   []udat.EventNumber
	async  []udat.EventNumber
	recv   []udat.DTOStatus
	broken time.Duration // when the first connection event came
}

func (o *ours) observe(d time.Duration, until func(observed) bool) observed {
	var ob observed
	start := time.Now()
	for time.Since(start) < d {
		moved := false
		if ev, err := o.conn.Dequeue(); err == nil {
			if len(ob.conn) == 0 {
				ob.broken = time.Since(start)
			}
			ob.conn = append(ob.conn, ev.Number)
			moved = true
		}
		if ev, err := o.ia.AsyncEVD().Dequeue(); err == nil {
			ob.async = append(ob.async, ev.Number)
			moved = true
		}
		if ev, err := o.rcv.Dequeue(); err == nil {
			ob.recv = append(ob.recv, ev.DTO.Status)
			moved = true
		}
		if until != nil && until(ob) {
			break
		}
		if !moved {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return ob
}

func (ob observed) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connection %v (first after %v), async %v, receives %v", ob.conn, ob.broken.Round(time.Millisecond), ob.async, ob.recv)
	return b.String()
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)*13 + seed
	}
	return b
}

// TestHostileMemoryAccess: the peer uses keys it was never given, a key
// after its region was freed or its window unbound, addresses outside what
// a key covers, writes where it may only read and atomics where it may not.
// Each attempt fails on the peer (remote access error), our memory is
// untouched, and our side sees the connection end (broken, receives
// flushed); the IA then serves a proper peer. iWARP has no NAK, no atomics
// and no memory windows: there the peer's completion and the end differ
// (iwarpOutcome), and the attempts that need the missing features do not
// apply.
func TestHostileMemoryAccess(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	p := startHostile(t)

	const size = 8192
	ro := o.newLMR(size, udat.MemPrivLocalRead|udat.MemPrivLocalWrite|udat.MemPrivRemoteRead)
	rw := o.newLMR(size, udat.MemPrivAll)
	gone := o.newLMR(size, udat.MemPrivAll)
	goneKey, goneVA := gone.RMRContext(), gone.Triplet(0, size).VirtualAddress
	require.NoError(t, gone.Free())
	o.lmrs[len(o.lmrs)-1] = nil
	want := map[*udat.LMR][]byte{}
	for i, l := range []*udat.LMR{ro, rw} {
		copy(l.Bytes(), pattern(size, byte(i+1)))
		want[l] = pattern(size, byte(i+1))
	}
	va := func(l *udat.LMR, off int) uint64 { return l.Triplet(off, 0).VirtualAddress }

	// target is where an attempt goes, found once our EP is connected
	// (an RMR binds through a connected EP).
	type target struct {
		addr uint64
		rkey uint32
	}
	fixed := func(l *udat.LMR, off int, rkey func() uint32) func(*udat.EP) target {
		return func(*udat.EP) target {
			if l == nil {
				return target{goneVA + uint64(off), rkey()}
			}
			return target{va(l, off), rkey()}
		}
	}
	// window binds an RMR to [1024, 2048) of rw with priv, checks that the
	// peer may read it, then does what spoil says to it; the attempt
	// goes to off within the window.
	window := func(priv udat.MemPriv, off int, spoil func(*udat.RMR, *udat.EP)) func(*udat.EP) target {
		return func(ep *udat.EP) target {
			r, err := o.pz.CreateRMR()
			require.NoError(o.t, err)
			o.rmrs = append(o.rmrs, r)
			o.cookie++
			rkey, err := r.Bind(rw, rw.Triplet(1024, 1024), priv, udat.VATypeVA, ep, o.cookie, udat.CompletionDefault)
			require.NoError(o.t, err)
			ev := o.wait(o.req, 10*time.Second)
			require.Equal(o.t, udat.EventRMRBindCompletion, ev.Number)
			require.Equal(o.t, udat.DTOSuccess, ev.RMR.Status)
			hev := o.lastConn
			var d HDone
			p.call("Post", HPost{Conn: hev, Op: cverbs.OpRDMARead, Off: 2048, Len: 1024, RemoteAddr: va(rw, 1024), RKey: rkey}, &d)
			require.Equal(o.t, cverbs.WCSuccess, d.Status, "a read of the whole window: %s", d.Text)
			var got []byte
			p.call("Bytes", HBytes{Off: 2048, Len: 1024}, &got)
			requireSame(o.t, want[rw][1024:2048], got, "what the read of the window fetched")
			if spoil != nil {
				spoil(r, ep)
			}
			return target{va(rw, 1024+off), rkey}
		}
	}
	unbind := func(r *udat.RMR, ep *udat.EP) {
		o.cookie++
		_, err := r.Bind(rw, udat.LMRTriplet{}, udat.MemPrivNone, udat.VATypeVA, ep, o.cookie, udat.CompletionDefault)
		require.NoError(o.t, err)
		ev := o.wait(o.req, 10*time.Second)
		require.Equal(o.t, udat.EventRMRBindCompletion, ev.Number)
		require.Equal(o.t, udat.DTOSuccess, ev.RMR.Status)
	}
	free := func(r *udat.RMR, _ *udat.EP) {
		require.NoError(o.t, r.Free())
		o.rmrs[len(o.rmrs)-1] = nil
	}
	remoteRW := udat.MemPrivRemoteRead | udat.MemPrivRemoteWrite

	type attempt struct {
		name       string
		op         cverbs.SendOp
		at         func(*udat.EP) target
		len        int
		wantStatus []cverbs.WCStatus
		// outside says the attempt is outside an RMR's window but
		// inside the LMR it is bound in: Soft-RoCE (Linux 6.1 and 6.12)
		// checks an RDMA access through a memory window against the
		// memory region only, so there the access succeeds.
		outside bool
		iw      iwarpOutcome
	}
	remAccess := []cverbs.WCStatus{cverbs.WCRemAccessErr}
	epBroken := []udat.EventNumber{udat.EventAsyncErrorEPBroken}
	// On soft-iWARP a read we refuse completes flushed at the peer (siw
	// does not report our TERMINATE). A write we refuse has no NAK: the
	// peer's completion is one of iwarpSendDone. Our QP's access error on a
	// write is raised before the stream closes, so the end is BROKEN; for
	// a read, siw_qp_sq_process closes the stream (siw_qp_cm_drop) and
	// raises IB_EVENT_QP_REQ_ERR, as it does when a stream closes under a
	// read response, so udat leaves the end to the connection manager
	// (udat's IA.endsStreamWith): DISCONNECTED, with the asynchronous
	// error; BROKEN only if the close is not reported in time. A write
	// whose key names no memory here raises no error at all: DISCONNECTED.
	iwRead := iwarpOutcome{[]cverbs.WCStatus{cverbs.WCWRFlushErr},
		[]udat.EventNumber{udat.EventConnectionBroken, udat.EventConnectionDisconnected}, epBroken, ""}
	iwWrite := iwarpOutcome{iwarpSendDone, []udat.EventNumber{udat.EventConnectionBroken}, epBroken, ""}
	iwNoKey := iwarpOutcome{iwarpSendDone, []udat.EventNumber{udat.EventConnectionDisconnected}, nil, ""}
	noAtomics := iwarpOutcome{lacks: "has no atomics"}
	noWindows := iwarpOutcome{lacks: "has no memory windows"}
	atomicRefused := []cverbs.WCStatus{cverbs.WCRemAccessErr, cverbs.WCRemInvReqErr}
	attempts := []attempt{
		{"a guessed rkey", cverbs.OpRDMARead, fixed(rw, 0, func() uint32 { return rw.RMRContext() ^ 0x5a5a00 }), 64, remAccess, false, iwRead},
		{"a guessed rkey, write", cverbs.OpRDMAWrite, fixed(rw, 0, func() uint32 { return rw.RMRContext() + 0x100 }), 64, remAccess, false, iwNoKey},
		{"the rkey of a freed LMR", cverbs.OpRDMARead, fixed(nil, 0, func() uint32 { return goneKey }), 64, remAccess, false, iwRead},
		{"the rkey of a freed LMR, write", cverbs.OpRDMAWrite, fixed(nil, 0, func() uint32 { return goneKey }), 64, remAccess, false, iwNoKey},
		{"past the end of the region", cverbs.OpRDMARead, fixed(rw, size-32, rw.RMRContext), 64, remAccess, false, iwRead},
		{"past the end of the region, write", cverbs.OpRDMAWrite, fixed(rw, size-32, rw.RMRContext), 64, remAccess, false, iwWrite},
		{"before the start of the region, write", cverbs.OpRDMAWrite, fixed(rw, -64, rw.RMRContext), 64, remAccess, false, iwWrite},
		{"a write to a read-only region", cverbs.OpRDMAWrite, fixed(ro, 0, ro.RMRContext), 64, remAccess, false, iwWrite},
		{"an atomic without atomic rights", cverbs.OpAtomicFetchAdd, fixed(rw, 0, rw.RMRContext), 8, atomicRefused, false, noAtomics},
		{"a compare and swap on a read-only region", cverbs.OpAtomicCmpSwap, fixed(ro, 0, ro.RMRContext), 8, atomicRefused, false, noAtomics},
		{"an RMR context past its window", cverbs.OpRDMARead, window(remoteRW, 1000, nil), 64, remAccess, true, noWindows},
		{"an RMR context before its window, write", cverbs.OpRDMAWrite, window(remoteRW, -8, nil), 64, remAccess, true, noWindows},
		{"an RMR context past its LMR", cverbs.OpRDMARead, window(remoteRW, size-1024-32, nil), 64, remAccess, false, noWindows},
		{"a write through a read-only RMR", cverbs.OpRDMAWrite, window(udat.MemPrivRemoteRead, 0, nil), 64, remAccess, false, noWindows},
		{"an atomic through an RMR without atomic rights", cverbs.OpAtomicFetchAdd, window(remoteRW, 0, nil), 8, atomicRefused, false, noAtomics},
		{"an RMR context after unbind", cverbs.OpRDMARead, window(remoteRW, 0, unbind), 64, remAccess, false, noWindows},
		{"an RMR context after unbind, write", cverbs.OpRDMAWrite, window(remoteRW, 0, unbind), 64, remAccess, false, noWindows},
		{"an RMR context after free", cverbs.OpRDMARead, window(remoteRW, 0, free), 64, remAccess, false, noWindows},
		{"an RMR context after free, write", cverbs.OpRDMAWrite, window(remoteRW, 0, free), 64, remAccess, false, noWindows},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			o.t = t
			iwarp := deviceIWARP()
			if iwarp && a.iw.lacks != "" {
				t.Skip("not applicable: " + devtest.Device() + " is iWARP, which " + a.iw.lacks)
			}
			for l, w := range want {
				copy(l.Bytes(), w) // what an earlier attempt may have spoilt
			}
			recvBuf := o.newLMR(4*1024, udat.MemPrivAll)
			ep, hev := o.accept(p, HConnect{}, nil)
			o.lastConn = hev.Conn
			cookies := o.postRecvs(ep, recvBuf, 2, 1024)
			tg := a.at(ep)
			p.call("Fill", HBytes{Off: 0, Len: 4096, Fill: 0xee}, nil)
			var d HDone
			p.call("Post", HPost{Conn: hev.Conn, Op: a.op, Off: 0, Len: a.len, RemoteAddr: tg.addr, RKey: tg.rkey, Fill: 0xab}, &d)
			t.Logf("the peer's %v: %s", a.op, d.Text)
			if a.outside && !rmrWindowEnforced() {
				rxeWindowGap(t, o, p, a.op, d, want, rw, tg.addr-va(rw, 0), a.len, ro, hev.Conn)
				got := o.drainRecvs(cookies, 10*time.Second)
				assert.Equal(t, map[uint64]udat.DTOStatus{cookies[0]: udat.DTOErrFlushed, cookies[1]: udat.DTOErrFlushed}, got)
				return
			}
			if iwarp {
				assert.Contains(t, a.iw.peer, d.Status, "the peer's completion")
			} else {
				assert.Contains(t, a.wantStatus, d.Status, "the peer's completion")
			}
			if a.op != cverbs.OpRDMAWrite {
				var got []byte
				p.call("Bytes", HBytes{Off: 0, Len: a.len}, &got)
				assert.Equal(t, bytes.Repeat([]byte{0xee}, a.len), got, "the peer got bytes of ours")
			}
			for l, w := range want {
				assertSame(t, w, l.Bytes(), "our memory")
			}
			// Our side: the connection breaks (DAT_CONNECTION_EVENT_BROKEN)
			// and the receives are flushed; the peer has not disconnected.
			ob := o.observe(10*time.Second, func(ob observed) bool { return len(ob.conn) > 0 && len(ob.recv) == len(cookies) })
			t.Logf("our side: %v", ob)
			if iwarp {
				require.Len(t, ob.conn, 1)
				assert.Contains(t, a.iw.end, ob.conn[0])
			} else {
				assert.Equal(t, []udat.EventNumber{udat.EventConnectionBroken}, ob.conn)
			}
			assert.Equal(t, []udat.DTOStatus{udat.DTOErrFlushed, udat.DTOErrFlushed}, ob.recv)
			st, _, _, err := ep.GetStatus()
			require.NoError(t, err)
			assert.Equal(t, udat.EPStateDisconnected, st)
			p.call("Close", hev.Conn, nil)
			async := ob.async
			ob = o.observe(time.Second, nil)
			assert.Empty(t, ob.conn, "after the broken connection")
			if iwarp {
				assert.Equal(t, a.iw.async, append(async, ob.async...), "the asynchronous errors")
			} else {
				assert.Empty(t, ob.async)
			}
			// The memory is still as it was once the dust settles.
			for l, w := range want {
				assertSame(t, w, l.Bytes(), "our memory")
			}
		})
	}
	o.t = t
	o.wellBehaved(p)
	o.free()
}

// iwarpOutcome is what an attempt of TestHostileMemoryAccess comes to on
// iWARP: the peer's completion and how our side's connection ends (each one
// of these), and the asynchronous errors our side raises; or, for an
// attempt iWARP cannot make, what it lacks.
type iwarpOutcome struct {
	peer  []cverbs.WCStatus
	end   []udat.EventNumber
	async []udat.EventNumber
	lacks string
}

// firstDiff describes where got differs from want, or returns "".
func firstDiff(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			j := i
			for j < len(want) && want[j] != got[j] {
				j++
			}
			return fmt.Sprintf("bytes [%d, %d) differ: % x..., want % x...", i, j, got[i:min(j, i+16)], want[i:min(j, i+16)])
		}
	}
	return ""
}

func assertSame(t *testing.T, want, got []byte, what string) bool {
	t.Helper()
	if d := firstDiff(want, got); d != "" {
		t.Errorf("%s: %s", what, d)
		return false
	}
	return true
}

func requireSame(t *testing.T, want, got []byte, what string) {
	t.Helper()
	if !assertSame(t, want, got, what) {
		t.FailNow()
	}
}

// TestHostileSends: the peer sends more than our posted receive holds, and
// sends when we have no receive posted (receiver not ready). iWARP has no
// NAK and no receiver-not-ready retry: there the peer's send completes as
// it leaves, and the connection ends on our side.
func TestHostileSends(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	p := startHostile(t)
	iwarp := deviceIWARP()

	t.Run("more than the receive holds", func(t *testing.T) {
		o.t = t
		// The receive takes 64 bytes in the middle of a region whose
		// other bytes must not change.
		l := o.newLMR(4096, udat.MemPrivAll)
		guard := pattern(4096, 9)
		copy(l.Bytes(), guard)
		ep, hev := o.accept(p, HConnect{}, nil)
		o.cookie++
		small := o.cookie
		require.NoError(t, ep.PostRecv([]udat.LMRTriplet{l.Triplet(1024, 64)}, small, udat.CompletionDefault))
		more := o.postRecvs(ep, o.newLMR(4096, udat.MemPrivAll), 2, 2048)
		var d HDone
		p.call("Post", HPost{Conn: hev.Conn, Op: cverbs.OpSend, Off: 0, Len: 1000, Fill: 0x77}, &d)
		t.Logf("the peer's send: %s", d.Text)
		if iwarp {
			assert.Contains(t, iwarpSendDone, d.Status, "the peer's send of 1000 bytes into 64 (no NAK on iWARP)")
		} else {
			assert.NotEqual(t, cverbs.WCSuccess, d.Status, "the peer's send of 1000 bytes into 64")
		}
		// DAT_DTO_LENGTH_ERROR (DAT 2.0: DAT_DTO_ERR_LOCAL_LENGTH) for the
		// receive, the others flushed, the connection broken.
		got := o.drainRecvs(append([]uint64{small}, more...), 10*time.Second)
		assert.Equal(t, udat.DTOErrLocalLength, got[small], "the receive the send did not fit")
		for _, c := range more {
			assert.Equal(t, udat.DTOErrFlushed, got[c])
		}
		ev := o.wait(o.conn, 10*time.Second)
		assert.Equal(t, udat.EventConnectionBroken, ev.Number)
		assertSame(t, guard[:1024], l.Bytes()[:1024], "our memory before the receive buffer")
		assertSame(t, guard[1024+64:], l.Bytes()[1024+64:], "our memory after the receive buffer")
		p.call("Close", hev.Conn, nil)
		ob := o.observe(time.Second, nil)
		assert.Empty(t, ob.conn)
		if iwarp {
			// soft-iWARP raises an error for our QP as the receive
			// fails.
			assert.Equal(t, []udat.EventNumber{udat.EventAsyncErrorEPBroken}, ob.async)
		} else {
			assert.Empty(t, ob.async)
		}
	})

	t.Run("no receive posted", func(t *testing.T) {
		o.t = t
		if iwarp {
			noRecvIWARP(t, o, p)
			return
		}
		// We answer with rdma_cm's RNR retry count 7: the peer's send
		// waits, for ever, until we post a receive; nothing fails.
		ep, hev := o.accept(p, HConnect{}, nil)
		done := make(chan HDone, 1)
		go func() {
			var d HDone
			p.try("Post", HPost{Conn: hev.Conn, Op: cverbs.OpSend, Off: 0, Len: 512, Fill: 0x42, Wait: 30 * time.Second}, &d)
			done <- d
		}()
		time.Sleep(2 * time.Second) // far beyond the RNR timer and the ACK timeout
		select {
		case d := <-done:
			t.Fatalf("the send completed without a receive: %s", d.Text)
		default:
		}
		ob := o.observe(100*time.Millisecond, nil)
		assert.Empty(t, ob.conn, "our side while the peer's send waits")
		assert.Empty(t, ob.async)
		st, _, _, err := ep.GetStatus()
		require.NoError(t, err)
		assert.Equal(t, udat.EPStateConnected, st)
		l := o.newLMR(4096, udat.MemPrivAll)
		cs := o.postRecvs(ep, l, 1, 1024)
		got := o.drainRecvs(cs, 20*time.Second)
		assert.Equal(t, udat.DTOSuccess, got[cs[0]])
		assert.Equal(t, bytes.Repeat([]byte{0x42}, 512), l.Bytes()[:512])
		d := <-done
		assert.Equal(t, cverbs.WCSuccess, d.Status, "the peer's send once we posted: %s", d.Text)
		p.call("Disconnect", hev.Conn, nil)
		ev := o.wait(o.conn, 10*time.Second)
		assert.Equal(t, udat.EventConnectionDisconnected, ev.Number)
		p.call("Close", hev.Conn, nil)
	})
	o.t = t
	o.wellBehaved(p)
	o.free()
}

// iwarpSendDone is the peer's completion of a send or RDMA write our side
// refuses on iWARP, which has no NAK: a success, or a local QP error when
// our TERMINATE beats it (timing: both seen on soft-iWARP).
var iwarpSendDone = []cverbs.WCStatus{cverbs.WCSuccess, cverbs.WCLocQPOpErr}

// noRecvIWARP is TestHostileSends' "no receive posted" on iWARP, which has
// no receiver-not-ready retry: the peer's send completes as it leaves, our
// side ends the connection, and a receive posted then completes flushed.
func noRecvIWARP(t *testing.T, o *ours, p *hostilePeer) {
	ep, hev := o.accept(p, HConnect{}, nil)
	var d HDone
	p.call("Post", HPost{Conn: hev.Conn, Op: cverbs.OpSend, Off: 0, Len: 512, Fill: 0x42}, &d)
	t.Logf("the peer's send without a receive: %s", d.Text)
	assert.Contains(t, iwarpSendDone, d.Status, "the peer's send without a receive")
	// soft-iWARP terminates the connection without an error for our QP
	// (no receive completes, no asynchronous error): udat can tell it from
	// a disconnect by nothing.
	ob := o.observe(10*time.Second, func(ob observed) bool { return len(ob.conn) > 0 })
	t.Logf("our side: %v", ob)
	assert.Equal(t, []udat.EventNumber{udat.EventConnectionDisconnected}, ob.conn)
	assert.Empty(t, ob.async)
	st, _, _, err := ep.GetStatus()
	require.NoError(t, err)
	assert.Equal(t, udat.EPStateDisconnected, st)
	l := o.newLMR(4096, udat.MemPrivAll)
	copy(l.Bytes(), pattern(4096, 3))
	cs := o.postRecvs(ep, l, 1, 1024)
	got := o.drainRecvs(cs, 10*time.Second)
	assert.Equal(t, map[uint64]udat.DTOStatus{cs[0]: udat.DTOErrFlushed}, got, "a receive after the end")
	assertSame(t, pattern(4096, 3), l.Bytes(), "our memory")
	p.call("Close", hev.Conn, nil)
	ob = o.observe(time.Second, nil)
	assert.Empty(t, ob.conn)
	assert.Empty(t, ob.async)
}

// TestHostileStopsAnswering: the peer's QP stops answering (moved to the
// error state without a disconnect) in the middle of RDMA reads we are
// making of its memory. The read in progress fails with
// DAT_DTO_ERR_TRANSPORT about DeadPeerTimeout later, the rest are flushed,
// and the connection is broken; nothing hangs. On iWARP a QP that enters
// the error state closes its stream, as a disconnect does: every read is
// flushed at once and the end is DISCONNECTED; the peer's retry count means
// nothing there.
func TestHostileStopsAnswering(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	p := startHostile(t)
	var mem HMem
	p.call("Mem", 0, &mem)
	for _, tc := range []struct {
		name  string
		retry uint8 // the retry count the peer asks for in its request
	}{
		{"the peer asks for retry count 6", 6},
		{"the peer asks for retry count 7 (for ever on rxe)", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o.t = t
			iwarp := deviceIWARP()
			if iwarp && tc.retry == 7 {
				t.Skip("not applicable: " + devtest.Device() + " is iWARP, which has no retry count (TCP retransmits): the case before covers it")
			}
			const size = 256 << 10
			l := o.newLMR(size, udat.MemPrivAll)
			ep, hev := o.accept(p, HConnect{RetryCount: tc.retry}, nil)
			const n = 4
			reads := map[uint64]bool{}
			post := func() {
				o.cookie++
				require.NoError(t, ep.PostRDMARead([]udat.LMRTriplet{l.Triplet(0, size)}, o.cookie,
					udat.RMRTriplet{VirtualAddress: mem.Addr, SegmentLength: size, RMRContext: mem.RKey}, udat.CompletionDefault))
				reads[o.cookie] = true
			}
			for range n {
				post()
			}
			// Reads stream from the peer's memory; after the first one the
			// peer stops, while the others are under way. We keep n in
			// flight until one fails.
			ev := o.wait(o.req, 30*time.Second)
			require.Equal(t, udat.DTOSuccess, ev.DTO.Status, "a read before the peer stops")
			delete(reads, ev.DTO.Cookie)
			post()
			stopped := make(chan time.Time, 1)
			go func() {
				p.try("Stop", hev.Conn, nil)
				stopped <- time.Now()
			}()
			// With the peer's 7, rxe resends for ever and the watchdog
			// ends the read, after twice our own DeadPeerTimeout (at
			// least 1 s) and one ACK timeout per 4 KiB (udat/watchdog.go).
			bound := hostileAttr().DeadPeerTimeout() + detectSlack
			if tc.retry == 7 {
				ack := udat.ACKTimeoutDuration(udat.DefaultACKTimeout)
				bound = max(2*hostileAttr().DeadPeerTimeout(), time.Second) + size/4096*ack + detectSlack
			}
			if iwarp {
				bound = detectSlack // the stream closes at once
			}
			statuses := map[udat.DTOStatus]int{}
			var failedAt time.Time
			for len(reads) > 0 {
				ev := o.wait(o.req, bound+20*time.Second)
				require.True(t, reads[ev.DTO.Cookie], "cookie %d", ev.DTO.Cookie)
				delete(reads, ev.DTO.Cookie)
				statuses[ev.DTO.Status]++
				if ev.DTO.Status == udat.DTOSuccess {
					if failedAt.IsZero() {
						post()
					}
				} else if failedAt.IsZero() {
					failedAt = time.Now()
				}
			}
			stopAt := <-stopped
			t.Logf("reads: %v; the first failed %v after the peer stopped (bound %v)", statuses, failedAt.Sub(stopAt).Round(time.Millisecond), bound)
			end := udat.EventConnectionBroken
			if iwarp {
				assert.Equal(t, n, statuses[udat.DTOErrFlushed], "every read in flight flushed")
				end = udat.EventConnectionDisconnected
			} else {
				assert.Equal(t, 1, statuses[udat.DTOErrTransport], "one read fails with DAT_DTO_ERR_TRANSPORT")
				assert.Equal(t, n-1, statuses[udat.DTOErrFlushed], "the rest flushed")
			}
			assert.Less(t, failedAt.Sub(stopAt), bound)
			ev = o.wait(o.conn, 10*time.Second)
			assert.Equal(t, end, ev.Number)
			p.call("Close", hev.Conn, nil)
			ob := o.observe(time.Second, nil)
			assert.Empty(t, ob.conn)
		})
	}
	o.t = t
	o.wellBehaved(p)
	o.free()
}

// TestHostileHandshake: the peer floods our PSP with requests it never
// completes, and gives up at each step of the handshake. Our side never
// sees a connection that was not made, every EP involved frees, a proper
// connection goes through meanwhile, and the IA closes gracefully. iWARP's
// MPA exchange has no step after the reply: the peer's kernel establishes
// the connection as it takes our reply, whatever QP the peer gave it.
func TestHostileHandshake(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	p := startHostile(t)
	self := selfAddr(t).String()
	iwarp := deviceIWARP()
	noRTU := func(t *testing.T) {
		if iwarp {
			t.Skip("not applicable: " + devtest.Device() + " is iWARP, whose MPA exchange has no step after the reply")
		}
	}

	t.Run("a flood of requests never completed", func(t *testing.T) {
		o.t = t
		const n = 48
		var conns []int
		for range n {
			var hev HEvent
			p.call("Connect", HConnect{Addr: self, Port: o.port, External: true, NoWait: true}, &hev)
			conns = append(conns, hev.Conn)
		}
		// We accept half of them (each EP waits for an RTU that never
		// comes; on iWARP each connects) and leave the rest unanswered.
		var pending []*udat.EP
		var crs []*udat.CR
		for i := range n {
			cr := o.waitCR(30 * time.Second)
			if i%2 == 0 {
				ep := o.newEP(nil)
				require.NoError(t, cr.Accept(ep, nil))
				pending = append(pending, ep)
			} else {
				crs = append(crs, cr)
			}
		}
		wantState := udat.EPStateCompletionPending
		if iwarp {
			wantState = udat.EPStateConnected
			established := map[*udat.EP]int{}
			for range pending {
				ev := o.wait(o.conn, 30*time.Second)
				require.Equal(t, udat.EventConnectionEstablished, ev.Number)
				established[ev.Conn.EP]++
			}
			for _, ep := range pending {
				assert.Equal(t, 1, established[ep], "ESTABLISHED of an accepted EP")
			}
		}
		// A proper connection goes through the flood.
		o.wellBehaved(p)
		for _, ep := range pending {
			st, _, _, err := ep.GetStatus()
			require.NoError(t, err)
			assert.Equal(t, wantState, st, "an EP whose accept the peer never completed")
		}
		ob := o.observe(500*time.Millisecond, nil)
		assert.Empty(t, ob.conn, "no connection event for the half-open connections")
		// Rejecting the unanswered requests and freeing the pending EPs
		// works while the peer still holds its ids.
		for _, cr := range crs {
			assert.NoError(t, cr.Reject(nil))
		}
		for _, ep := range pending {
			require.NoError(t, ep.Free())
			for i, e := range o.eps {
				if e == ep {
					o.eps[i] = nil
				}
			}
		}
		for _, k := range conns {
			p.call("Close", k, nil)
		}
		ob = o.observe(time.Second, nil)
		assert.Empty(t, ob.conn)
		assert.Empty(t, ob.async)
	})

	// accepted connects with an external QP, waits for our reply, and
	// returns the peer's connection with our EP in COMPLETION_PENDING.
	accepted := func(t *testing.T) (*udat.EP, int) {
		var hev HEvent
		done := make(chan error, 1)
		go func() {
			done <- p.try("Connect", HConnect{Addr: self, Port: o.port, External: true}, &hev)
		}()
		cr := o.waitCR(30 * time.Second)
		ep := o.newEP(nil)
		require.NoError(t, cr.Accept(ep, []byte("hello")))
		require.NoError(t, <-done)
		want := cverbs.CMEventConnectResponse
		if iwarp {
			want = cverbs.CMEventEstablished
		}
		require.Equal(t, want, hev.Type, "the peer's reply: %s", hev.Event)
		return ep, hev.Conn
	}
	// establish completes the peer's connection (iWARP's kernel did).
	establish := func(k int) {
		if !iwarp {
			p.call("Establish", k, nil)
		}
	}

	for _, tc := range []struct {
		name string
		// step misbehaves at some point; it returns the EP of ours
		// involved, if any, and what our side must see on it.
		step func(t *testing.T) (*udat.EP, []udat.EventNumber)
	}{
		{"gives up after its request", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			var hev HEvent
			p.call("Connect", HConnect{Addr: self, Port: o.port, External: true, NoWait: true}, &hev)
			cr := o.waitCR(30 * time.Second)
			start := time.Now()
			p.call("Close", hev.Conn, nil)
			// (About 10 s on soft-iWARP: the peer's kernel ends its
			// connect first.)
			t.Logf("the peer's close took %v", time.Since(start).Round(time.Millisecond))
			time.Sleep(500 * time.Millisecond) // the peer's reject arrives
			// dat_cr_accept succeeds and the event reports the failure,
			// as in the C reference (udat returned an error and posted
			// the event too).
			ep := o.newEP(nil)
			require.NoError(t, cr.Accept(ep, nil), "accept of an abandoned request")
			return ep, []udat.EventNumber{udat.EventConnectionAcceptCompletionError}
		}},
		{"gives up after our reply", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			noRTU(t)
			ep, k := accepted(t)
			p.call("Close", k, nil) // a reject in answer to our reply
			return ep, []udat.EventNumber{udat.EventConnectionAcceptCompletionError}
		}},
		{"disconnects instead of establishing", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			noRTU(t)
			ep, k := accepted(t)
			err := p.try("Disconnect", k, nil)
			t.Logf("the peer's disconnect before establishing: %v", err)
			p.call("Close", k, nil)
			return ep, []udat.EventNumber{udat.EventConnectionAcceptCompletionError}
		}},
		{"disconnects at once", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			ep, k := accepted(t)
			establish(k)
			p.call("Disconnect", k, nil)
			p.call("Close", k, nil)
			return ep, []udat.EventNumber{udat.EventConnectionEstablished, udat.EventConnectionDisconnected}
		}},
		{"never answers our disconnect request", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			ep, k := accepted(t)
			establish(k)
			ev := o.wait(o.conn, 10*time.Second)
			require.Equal(t, udat.EventConnectionEstablished, ev.Number)
			// The peer takes our DREQ (rdma_cm reports it) but never
			// calls rdma_disconnect, which would send the DREP (on
			// iWARP its kernel answers our TCP close by itself).
			start := time.Now()
			require.NoError(t, ep.Disconnect(udat.CloseAbruptFlag))
			// udat, like C, waits 250 ms for the reply (EP.Disconnect),
			// not the 70 s the connection manager resends its request.
			ev = o.wait(o.conn, 250*time.Millisecond+detectSlack)
			t.Logf("EventConnectionDisconnected %v after our abrupt disconnect", time.Since(start).Round(time.Millisecond))
			assert.Equal(t, udat.EventConnectionDisconnected, ev.Number)
			p.call("Close", k, nil)
			return ep, nil
		}},
		{"establishes and vanishes", func(t *testing.T) (*udat.EP, []udat.EventNumber) {
			ep, k := accepted(t)
			establish(k)
			p.call("Close", k, nil) // rdma_destroy_id: a disconnect request
			return ep, []udat.EventNumber{udat.EventConnectionEstablished, udat.EventConnectionDisconnected}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o.t = t
			ep, want := tc.step(t)
			ob := o.observe(30*time.Second, func(ob observed) bool { return len(ob.conn) >= len(want) })
			ob2 := o.observe(time.Second, nil)
			t.Logf("our side: %v, then %v", ob, ob2)
			assert.Equal(t, want, ob.conn)
			assert.Empty(t, ob2.conn)
			assert.Empty(t, ob.async)
			st, _, _, err := ep.GetStatus()
			require.NoError(t, err)
			assert.Equal(t, udat.EPStateDisconnected, st)
		})
	}
	o.t = t
	o.wellBehaved(p)
	o.free()
}

// garbage returns n random bytes (seeded, so that a failure repeats).
func garbage(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// requirePadded checks that got is sent, zero-padded by the transport
// (InfiniBand's CM pads to its message's field; iWARP's MPA does not pad).
func requirePadded(t *testing.T, sent, got []byte, what string) {
	t.Helper()
	if deviceIWARP() {
		require.Len(t, got, len(sent), "%s: length", what)
	}
	require.GreaterOrEqual(t, len(got), len(sent), "%s: length", what)
	requireSame(t, sent, got[:len(sent)], what)
	requireSame(t, make([]byte, len(got)-len(sent)), got[len(sent):], what+": the padding")
}

// privateDataLimits are the transport's limits for private data: through
// rdma_cm (IPv4) InfiniBand's CM carries 56 bytes in a request, 196 in a
// reply and 148 in a reject; iWARP's MPA version 2 takes 4 of rdma_cm's
// 255 for its IRD and ORD, and leaves 251 in each.
func privateDataLimits() (req, rep, rej int) {
	if deviceIWARP() {
		return 251, 251, 251
	}
	return 56, 196, 148
}

// TestHostilePrivateData: the peer sends private data of every length the
// transport carries, random bytes, in its requests, replies and rejects.
// Our side reports each as DAT says (the CR's private data, the private
// data of EventConnectionEstablished and EventConnectionPeerRejected),
// byte for byte, and interprets none of it.
func TestHostilePrivateData(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	p := startHostile(t)
	rng := rand.New(rand.NewPCG(27, 2))
	self := selfAddr(t).String()
	maxREQPrivateData, maxREPPrivateData, maxREJPrivateData := privateDataLimits()
	iwarp := deviceIWARP()
	// lostRejects counts the rejects whose private data did not arrive:
	// soft-iWARP's siw_reject sends its MPA reply and closes the socket at
	// once, and the requester's siw may take the close before it has read
	// the reply, reporting the reject without private data (a race in the
	// kernel: from 1 to 42 of the 250 here in a run).
	var lostRejects int
	t.Cleanup(func() {
		if lostRejects > 0 {
			t.Logf("%d rejects arrived without their private data (soft-iWARP)", lostRejects)
		}
	})

	t.Run("in requests", func(t *testing.T) {
		o.t = t
		for n := 0; n <= maxREQPrivateData; n++ {
			sent := garbage(rng, n)
			var hev HEvent
			done := make(chan error, 1)
			go func() { done <- p.try("Connect", HConnect{Addr: self, Port: o.port, PrivateData: sent}, &hev) }()
			cr := o.waitCR(30 * time.Second)
			q, err := cr.Query()
			require.NoError(t, err)
			requirePadded(t, sent, q.PrivateData, fmt.Sprintf("a request's %d bytes", n))
			// Our reject carries private data of the same length back
			// (at most what a reject carries after DAT's header).
			back := sent[:min(n, maxREJPrivateData-4)]
			require.NoError(t, cr.Reject(back))
			require.NoError(t, <-done)
			require.Equal(t, cverbs.CMEventRejected, hev.Type, "the peer's answer")
			if iwarp && len(hev.PrivateData) == 0 {
				lostRejects++ // see lostRejects
			} else {
				requirePadded(t, append([]byte{2, 0, 2, 0}, back...), hev.PrivateData, "our reject's private data")
			}
			p.call("Close", hev.Conn, nil)
		}
	})

	port := nextPort()
	p.call("Listen", port, nil)
	peer := peerAddr(t)
	connect := func(t *testing.T, ep *udat.EP) {
		t.Helper()
		require.NoError(t, ep.Connect(peer, udat.ConnQual(port), udat.Timeout(20*time.Second/time.Microsecond), nil, udat.QoSBestEffort, udat.ConnectDefault))
	}
	t.Run("in rejects", func(t *testing.T) {
		o.t = t
		ep := o.newEP(nil)
		for n := 0; n <= maxREJPrivateData; n++ {
			sent := garbage(rng, n)
			if n == 8 {
				sent = append([]byte{2, 0, 2, 0}, sent[4:]...) // our own reject header, forged
			}
			connect(t, ep)
			var hev HEvent
			p.call("Answer", HAnswer{Reject: true, PrivateData: sent}, &hev)
			ev := o.wait(o.conn, 30*time.Second)
			forged := bytes.HasPrefix(sent, []byte{2, 0, 2, 0})
			if iwarp && forged && ev.Number == udat.EventConnectionNonPeerRejected {
				lostRejects++ // see lostRejects: the header did not arrive
				forged = false
			}
			if iwarp && !forged {
				// iWARP refuses a connection with the same ECONNREFUSED
				// whoever refuses it: only DAT's header tells a peer
				// Consumer's reject.
				require.Equal(t, udat.EventConnectionNonPeerRejected, ev.Number, "a reject with %d bytes", n)
				require.Empty(t, ev.Conn.PrivateData)
				require.NoError(t, ep.Reset())
				continue
			}
			require.Equal(t, udat.EventConnectionPeerRejected, ev.Number, "a reject with %d bytes", n)
			want := sent
			if forged {
				want = sent[4:]
			}
			requirePadded(t, want, ev.Conn.PrivateData, fmt.Sprintf("a reject's %d bytes", n))
			require.NoError(t, ep.Reset())
		}
	})
	t.Run("in replies", func(t *testing.T) {
		o.t = t
		ep := o.newEP(nil)
		for n := 0; n <= maxREPPrivateData; n++ {
			sent := garbage(rng, n)
			connect(t, ep)
			var hev HEvent
			p.call("Answer", HAnswer{PrivateData: sent}, &hev)
			ev := o.wait(o.conn, 30*time.Second)
			require.Equal(t, udat.EventConnectionEstablished, ev.Number, "a reply with %d bytes", n)
			requirePadded(t, sent, ev.Conn.PrivateData, fmt.Sprintf("a reply's %d bytes", n))
			p.call("Disconnect", hev.Conn, nil)
			ev = o.wait(o.conn, 30*time.Second)
			require.Equal(t, udat.EventConnectionDisconnected, ev.Number)
			p.call("Close", hev.Conn, nil)
			require.NoError(t, ep.Reset())
		}
	})
	t.Run("in UD requests", func(t *testing.T) {
		o.t = t
		// A SIDR request without a UD header of ours is rejected before
		// the Consumer sees it; one whose header lies about its length
		// too. The IA goes on.
		attr := &udat.EPAttr{ServiceType: udat.ServiceTypeIBUD, MaxRecvDTOs: 4, MaxRequestDTOs: 4, MaxRecvIOV: 1, MaxRequestIOV: 1}
		ud, err := o.ia.CreateEP(o.pz, o.rcv, o.req, o.conn, attr)
		skipNoUD(t, err)
		require.NoError(t, err)
		o.eps = append(o.eps, ud)
		for i, pd := range [][]byte{
			nil, garbage(rng, 1), garbage(rng, 31), garbage(rng, 32), garbage(rng, 180),
			append([]byte{'U', 'D', 1, 200}, garbage(rng, 40)...), // claims more than there is
			append([]byte{'U', 'D', 9, 0}, garbage(rng, 40)...),   // another version
		} {
			if len(pd) > 0 && pd[0] == 'U' && i < 5 {
				pd[0] = 'X'
			}
			var hev HEvent
			p.call("Connect", HConnect{Addr: self, Port: o.port, UD: true, PrivateData: pd}, &hev)
			assert.Contains(t, []cverbs.CMEventType{cverbs.CMEventRejected, cverbs.CMEventUnreachable}, hev.Type,
				"the peer's answer to a UD request with %d bytes % x...: %s", len(pd), pd[:min(len(pd), 8)], hev.Event)
			p.call("Close", hev.Conn, nil)
		}
		o.none(o.crEVD, 200*time.Millisecond, "garbage UD requests")
		// A well-formed request with garbage after the header reaches
		// the Consumer, with that garbage as its private data.
		sent := garbage(rng, 100)
		var hev HEvent
		done := make(chan error, 1)
		go func() {
			done <- p.try("Connect", HConnect{Addr: self, Port: o.port, UD: true, UDHeader: true, PrivateData: sent}, &hev)
		}()
		ev := o.wait(o.crEVD, 30*time.Second)
		require.Equal(t, udat.EventIBUDConnectionRequest, ev.Number)
		q, err := ev.CR.CR.Query()
		require.NoError(t, err)
		requireSame(t, sent, q.PrivateData, "the private data after the header")
		require.NoError(t, ev.CR.CR.Accept(ud, nil))
		require.NoError(t, <-done)
		require.Equal(t, cverbs.CMEventEstablished, hev.Type, "the peer's UD connection: %s", hev.Event)
		ev = o.wait(o.conn, 10*time.Second)
		require.Equal(t, udat.EventIBUDConnectionEstablished, ev.Number)
		p.call("Close", hev.Conn, nil)
	})
	o.t = t
	o.wellBehaved(p)
	o.free()
}

// TestHostileUD: datagrams to our UD EP from a QP we never resolved, and
// datagrams larger than the receive. A UD EP takes datagrams from anyone
// who knows its QP number and QKey: the receive reports the true sender
// (RemoteAH.QPN), not the one the peer announced. A datagram that does not
// fit fails that receive only; the EP goes on.
func TestHostileUD(t *testing.T) {
	checkLeaks(t)
	o := openOurs(t)
	attr := &udat.EPAttr{ServiceType: udat.ServiceTypeIBUD, MaxRecvDTOs: 8, MaxRequestDTOs: 4, MaxRecvIOV: 1, MaxRequestIOV: 1}
	ud, err := o.ia.CreateEP(o.pz, o.rcv, o.req, o.conn, attr)
	if deviceIWARP() {
		o.free()
	}
	skipNoUD(t, err)
	require.NoError(t, err)
	p := startHostile(t)
	self := selfAddr(t).String()
	o.eps = append(o.eps, ud)
	var qpns [2]uint32
	p.call("UDQPNums", 0, &qpns)

	var hev HEvent
	done := make(chan error, 1)
	go func() {
		done <- p.try("Connect", HConnect{Addr: self, Port: o.port, UD: true, UDHeader: true}, &hev)
	}()
	ev := o.wait(o.crEVD, 30*time.Second)
	require.Equal(t, udat.EventIBUDConnectionRequest, ev.Number)
	require.NoError(t, ev.CR.CR.Accept(ud, nil))
	require.NoError(t, <-done)
	require.Equal(t, cverbs.CMEventEstablished, hev.Type, "the peer's UD connection: %s", hev.Event)
	ev = o.wait(o.conn, 10*time.Second)
	require.Equal(t, udat.EventIBUDConnectionEstablished, ev.Number)
	assert.Equal(t, qpns[0], ev.IB.RemoteAH.QPN, "the QP the peer announced")

	const slot = udat.GRHSize + 256
	l := o.newLMR(8*slot, udat.MemPrivAll)
	guard := pattern(8*slot, 5)
	copy(l.Bytes(), guard)
	recv := func() uint64 {
		o.cookie++
		k := int(o.cookie % 8)
		require.NoError(t, ud.PostRecv([]udat.LMRTriplet{l.Triplet(k*slot, slot)}, o.cookie, udat.CompletionDefault))
		return o.cookie
	}
	expect := func(what string, cookie uint64, status udat.DTOStatus, from uint32, n int) {
		t.Helper()
		ev := o.wait(o.rcv, 10*time.Second)
		require.Equal(t, cookie, ev.DTO.Cookie, what)
		require.Equal(t, status, ev.DTO.Status, what)
		if status == udat.DTOSuccess {
			assert.Equal(t, udat.DTOIBRecvUD, ev.DTO.Op, what)
			assert.Equal(t, from, ev.IB.RemoteAH.QPN, "%s: the sender", what)
			assert.Equal(t, uint64(udat.GRHSize+n), ev.DTO.TransferredLength, what)
		}
	}
	send := func(stranger bool, n int, fill byte) HDone {
		var d HDone
		p.call("Post", HPost{Conn: hev.Conn, Op: cverbs.OpSend, Off: 0, Len: n, Fill: fill, UDStranger: stranger}, &d)
		return d
	}

	c := recv()
	require.Equal(t, cverbs.WCSuccess, send(false, 100, 0x11).Status)
	expect("a datagram from the announced QP", c, udat.DTOSuccess, qpns[0], 100)

	c = recv()
	require.Equal(t, cverbs.WCSuccess, send(true, 100, 0x22).Status)
	expect("a datagram from a stranger", c, udat.DTOSuccess, qpns[1], 100)
	k := int(c % 8)
	assertSame(t, bytes.Repeat([]byte{0x22}, 100), l.Bytes()[k*slot+udat.GRHSize:k*slot+udat.GRHSize+100], "the stranger's datagram")

	// Too large for the receive (but within the MTU): the sender's send
	// completes (UD has no acknowledgement). Soft-RoCE on Linux 6.1 fails
	// our receive and moves the UD QP to the error state by itself (a
	// datagram of 512 bytes into a receive of 256 completed with "local QP
	// operation error", reported as DAT_DTO_ERR_LOCAL_LENGTH, and the next
	// receive was flushed, QP state ERR), so the EP is broken for every
	// peer: DISCONNECTED, later receives flushed. On 6.12 it drops the
	// datagram, as UD may: the receive stays posted and takes the next
	// datagram that fits. A new UD EP works after either.
	c = recv()
	d := send(true, 512, 0x33)
	t.Logf("the peer's send of 512 bytes into %d: %s", slot-udat.GRHSize, d.Text)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	ev, _, err = o.rcv.WaitContext(ctx, 1)
	cancel()
	if err != nil {
		t.Logf("the datagram that did not fit was dropped: no completion in 3 s (%v)", err)
		require.Equal(t, cverbs.WCSuccess, send(false, 100, 0x44).Status)
		expect("the receive after the dropped datagram", c, udat.DTOSuccess, qpns[0], 100)
		k := int(c % 8)
		assertSame(t, bytes.Repeat([]byte{0x44}, 100), l.Bytes()[k*slot+udat.GRHSize:k*slot+udat.GRHSize+100], "the datagram after the dropped one")
		st, _, _, err := ud.GetStatus()
		require.NoError(t, err)
		require.Equal(t, udat.EPStateConnected, st, "the UD EP after a dropped datagram")
	} else {
		require.Equal(t, c, ev.DTO.Cookie, "the receive the datagram did not fit")
		require.Equal(t, udat.DTOErrLocalLength, ev.DTO.Status, "the receive the datagram did not fit")
		next := int((c + 1) % 8) // the slot after it: the flushed receive below
		require.Eventually(t, func() bool {
			st, _, _, err := ud.GetStatus()
			return err == nil && st == udat.EPStateDisconnected
		}, 10*time.Second, 10*time.Millisecond, "the UD EP after its QP failed")
		c = recv()
		expect("a receive after the EP broke", c, udat.DTOErrFlushed, 0, 0)
		assertSame(t, guard[next*slot:(next+1)*slot], l.Bytes()[next*slot:(next+1)*slot], "the slot after the receive the datagram did not fit")
		ob := o.observe(time.Second, nil)
		t.Logf("our side after the UD EP broke: %v", ob)
	}
	p.call("Close", hev.Conn, nil)

	// A new UD EP takes the peer's datagrams again.
	ud2, err := o.ia.CreateEP(o.pz, o.rcv, o.req, o.conn, attr)
	require.NoError(t, err)
	o.eps = append(o.eps, ud2)
	go func() {
		done <- p.try("Connect", HConnect{Addr: self, Port: o.port, UD: true, UDHeader: true}, &hev)
	}()
	ev = o.wait(o.crEVD, 30*time.Second)
	require.Equal(t, udat.EventIBUDConnectionRequest, ev.Number)
	require.NoError(t, ev.CR.CR.Accept(ud2, nil))
	require.NoError(t, <-done)
	require.Equal(t, cverbs.CMEventEstablished, hev.Type, "the peer's UD connection: %s", hev.Event)
	ev = o.wait(o.conn, 10*time.Second)
	require.Equal(t, udat.EventIBUDConnectionEstablished, ev.Number)
	ud = ud2
	c = recv()
	require.Equal(t, cverbs.WCSuccess, send(true, 200, 0x44).Status)
	expect("a datagram to a new UD EP", c, udat.DTOSuccess, qpns[1], 200)
	p.call("Close", hev.Conn, nil)
	o.free()
}

// skipNoUD skips a UD test on iWARP, which has no UD, once udat refused the
// UD EP as documented (err, from CreateEP).
func skipNoUD(t *testing.T, err error) {
	t.Helper()
	if deviceIWARP() {
		require.ErrorIs(t, err, udat.ErrModelNotSupported, "a UD EP on iWARP")
		t.Skip("not applicable: " + devtest.Device() + " is iWARP, which has no UD")
	}
}

// rmrWindowEnforced reports whether the device keeps an RDMA access through
// an RMR inside the RMR's window. Soft-RoCE does not (rxe_resp.c checks an
// access through a memory window against the window's memory region only:
// seen on Linux 6.1 and 6.12, TestHostileMemoryAccess), so there an RMR
// grants access to the whole LMR it is bound in.
func rmrWindowEnforced() bool { return !strings.HasPrefix(devtest.Device(), "rxe") }

// rxeWindowGap checks what Soft-RoCE does with an access outside an RMR's
// window but inside its LMR: it succeeds, and touches only the bytes it
// names, of that LMR; the connection stays up. (On a device that enforces
// windows the attempt fails like the others.)
func rxeWindowGap(t *testing.T, o *ours, p *hostilePeer, op cverbs.SendOp, d HDone, want map[*udat.LMR][]byte, rw *udat.LMR, off uint64, n int, ro *udat.LMR, conn int) {
	t.Helper()
	t.Logf("KNOWN DEVICE DEFECT (%s): an RMR's window is not enforced; the access succeeds within its LMR", devtest.Device())
	require.Equal(t, cverbs.WCSuccess, d.Status, "Soft-RoCE's access outside the window")
	w := append([]byte(nil), want[rw]...)
	if op == cverbs.OpRDMAWrite {
		copy(w[off:off+uint64(n)], bytes.Repeat([]byte{0xab}, n))
	} else {
		var got []byte
		p.call("Bytes", HBytes{Off: 0, Len: n}, &got)
		assertSame(t, want[rw][off:off+uint64(n)], got, "what the read outside the window fetched")
	}
	assertSame(t, w, rw.Bytes(), "the LMR of the RMR: only the bytes named")
	assertSame(t, want[ro], ro.Bytes(), "another LMR")
	ob := o.observe(time.Second, nil)
	assert.Empty(t, ob.conn, "the connection after a successful access")
	p.call("Close", conn, nil)
	ev := o.wait(o.conn, 10*time.Second)
	assert.Equal(t, udat.EventConnectionDisconnected, ev.Number)
}

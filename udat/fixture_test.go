package udat

import (
	"bytes"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
)

// Device tests run both ends of every connection in one process, over the
// loopback of the Soft-RoCE device, each test on its own connection
// qualifiers.

const (
	waitUS   = Timeout(20_000_000) // generous: the VM is emulated
	quietDur = 50 * time.Millisecond
)

// connQualSeq numbers the connection qualifiers of package udat's tests.
// Every block of them lies below the kernel's ephemeral ports
// (ip_local_port_range, 32768-60999), from which rdma_cm takes the port of
// each active connection, and C's cma provider that of each EP it creates:
// a PSP on a port one of those holds fails with DAT_CONN_QUAL_IN_USE. The
// blocks: benchmarks from 5000, interop with C from 10000, fuzzing from
// 16000, these from 20000, dtestsrq from 27000, dtestcm from 27500.
var connQualSeq atomic.Uint64

func init() { connQualSeq.Store(uint64(20000 + os.Getpid()%3000)) }

func nextConnQual() ConnQual { return ConnQual(connQualSeq.Add(1)) }

// openIA opens the test device; the test fails if it cannot.
func openIA(t testing.TB) *IA {
	t.Helper()
	dev := devtest.Require(t)
	ia, err := OpenIA(dev, 32)
	require.NoError(t, err, "open the RDMA device %q", dev)
	require.True(t, ia.Address().IsValid(), "the device's network interface has an IPv4 address")
	t.Cleanup(func() { ia.Close(CloseAbruptFlag) })
	return ia
}

// pairOpts shapes the two endpoints of a test connection.
type pairOpts struct {
	clientAttr, serverAttr *EPAttr
	srq                    *SRQ // server EP uses it
	evdQLen                int
	// prepost runs on both EPs before connecting.
	prepost func(t testing.TB, ep *EP)
	// separate request/recv EVDs (default: one DTO EVD per EP for both)
	splitEVDs bool
}

// side is one end of a connection.
type side struct {
	ep      *EP
	req     *EVD
	recv    *EVD
	conn    *EVD
	lmr     *LMR
	estabPD []byte
}

type pair struct {
	ia             *IA
	pz             *PZ
	client, server side
	cr             *EVD
	psp            *PSP
	qual           ConnQual
}

func newSide(t testing.TB, ia *IA, pz *PZ, o pairOpts, attr *EPAttr, srq *SRQ) side {
	t.Helper()
	ql := o.evdQLen
	if ql == 0 {
		ql = 64
	}
	var s side
	var err error
	s.req, err = ia.CreateEVD(ql, EVDDTOFlag|EVDRMRBindFlag)
	require.NoError(t, err)
	s.recv = s.req
	if o.splitEVDs {
		s.recv, err = ia.CreateEVD(ql, EVDDTOFlag)
		require.NoError(t, err)
	}
	s.conn, err = ia.CreateEVD(8, EVDConnectionFlag)
	require.NoError(t, err)
	if srq != nil {
		s.ep, err = ia.CreateEPWithSRQ(pz, s.recv, s.req, s.conn, srq, attr)
	} else {
		s.ep, err = ia.CreateEP(pz, s.recv, s.req, s.conn, attr)
	}
	require.NoError(t, err)
	s.lmr, err = ia.AllocLMR(pz, 64<<10, MemPrivAll)
	require.NoError(t, err)
	return s
}

// newPair creates two EPs in one PZ and connects them through a PSP.
func newPair(t testing.TB, o pairOpts) *pair {
	t.Helper()
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	return newPairIn(t, ia, pz, o)
}

func newPairIn(t testing.TB, ia *IA, pz *PZ, o pairOpts) *pair {
	t.Helper()
	p := &pair{ia: ia, pz: pz}
	p.client = newSide(t, ia, pz, o, o.clientAttr, nil)
	p.server = newSide(t, ia, pz, o, o.serverAttr, o.srq)
	if o.prepost != nil {
		o.prepost(t, p.client.ep)
		o.prepost(t, p.server.ep)
	}
	p.connect(t)
	return p
}

// newPairForTraffic connects a pair for total messages posted at once from
// several goroutines: each EP takes maxRequests request DTOs and total
// receives, and each side's separate request and receive EVDs hold twice
// total events.
func newPairForTraffic(t testing.TB, maxRequests, total int) *pair {
	t.Helper()
	attr := DefaultEPAttr()
	attr.MaxRequestDTOs = maxRequests
	attr.MaxRecvDTOs = total
	return newPair(t, pairOpts{clientAttr: &attr, serverAttr: &attr, evdQLen: 2 * total, splitEVDs: true})
}

// newRecvFlagsPair connects a pair, with separate request and receive EVDs,
// whose server EP has the receive completion flags f, and posts n receives
// of 64 bytes at the server (cookies 1, 2, ...): for the tests of when a
// waiter on the server's receive EVD wakes.
func newRecvFlagsPair(t testing.TB, f CompletionFlags, n int) *pair {
	t.Helper()
	attr := DefaultEPAttr()
	attr.RecvCompletionFlags = f
	p := newPair(t, pairOpts{serverAttr: &attr, splitEVDs: true})
	postRecvs(t, p.server, 0, 64, n, 1)
	return p
}

// connect connects p.client.ep to p.server.ep through a PSP.
func (p *pair) connect(t testing.TB) {
	t.Helper()
	ia := p.ia
	var err error
	p.cr, err = ia.CreateEVD(8, EVDCRFlag)
	require.NoError(t, err)
	p.qual = nextConnQual()
	p.psp, err = ia.CreatePSP(p.qual, p.cr, PSPConsumerFlag)
	require.NoError(t, err)
	require.NoError(t, p.client.ep.Connect(ia.Address(), p.qual, waitUS, []byte("hello"), QoSBestEffort, ConnectDefault))
	ev := waitEvent(t, p.cr)
	require.Equal(t, EventConnectionRequest, ev.Number)
	require.NoError(t, ev.CR.CR.Accept(p.server.ep, []byte("welcome")))
	ev = waitEvent(t, p.client.conn)
	require.Equal(t, EventConnectionEstablished, ev.Number, "client connection event")
	p.client.estabPD = ev.Conn.PrivateData
	ev = waitEvent(t, p.server.conn)
	require.Equal(t, EventConnectionEstablished, ev.Number, "server connection event")
}

// listenPSP creates a Consumer PSP at a fresh connection qualifier, with a
// CR EVD of its own, for tests that connect EPs of their own to it.
func listenPSP(t testing.TB, ia *IA) (*PSP, *EVD, ConnQual) {
	t.Helper()
	crEVD, err := ia.CreateEVD(8, EVDCRFlag)
	require.NoError(t, err)
	qual := nextConnQual()
	psp, err := ia.CreatePSP(qual, crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	return psp, crEVD, qual
}

// waitEvent waits for one event on e.
func waitEvent(t testing.TB, e *EVD) Event {
	t.Helper()
	ev, _, err := e.Wait(waitUS, 1)
	require.NoError(t, err, "wait for an event")
	return ev
}

// waitDTO waits for one DTO completion event on e.
func waitDTO(t testing.TB, e *EVD) DTOCompletionData {
	t.Helper()
	ev := waitEvent(t, e)
	require.Equal(t, EventDTOCompletion, ev.Number, "event %v", ev.Number)
	return ev.DTO
}

// requireEmpty checks that no further event arrives on e.
func requireEmpty(t testing.TB, e *EVD) {
	t.Helper()
	time.Sleep(quietDur)
	ev, err := e.Dequeue()
	require.Truef(t, errors.Is(err, ErrQueueEmpty), "expected an empty EVD, got event %v (%+v), err %v", ev.Number, ev.DTO, err)
	require.Same(t, ErrQueueEmpty, err, "Dequeue returns the sentinel itself")
}

// waitResult is what an EVD.Wait in the background returned.
type waitResult struct {
	ev    Event
	nmore int
	err   error
}

// waitInBackground starts e.Wait(waitUS, threshold) in a goroutine, for
// tests that check when the waiter wakes (requireAsleep, requireWoken).
func waitInBackground(e *EVD, threshold int) <-chan waitResult {
	done := make(chan waitResult, 1)
	go func() {
		ev, n, err := e.Wait(waitUS, threshold)
		done <- waitResult{ev, n, err}
	}()
	return done
}

// requireAsleep checks that the waiter of done has not woken within 500 ms;
// why says what waking would mean.
func requireAsleep(t testing.TB, done <-chan waitResult, why string) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("%s: %+v", why, r)
	case <-time.After(500 * time.Millisecond):
	}
}

// requireWoken waits up to 20 s for the waiter of done, checks that its
// Wait succeeded and returns what it got; why says what not waking means.
func requireWoken(t testing.TB, done <-chan waitResult, why string) waitResult {
	t.Helper()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		return r
	case <-time.After(20 * time.Second):
		t.Fatal(why)
		return waitResult{}
	}
}

// reapSendsInBackground takes n send completions off e in a goroutine while
// the test posts from others, reporting (t.Errorf) any that failed. The
// function it returns waits up to 30 s for all n and returns how many times
// each cookie completed.
func reapSendsInBackground(t testing.TB, e *EVD, n int) (completed func() map[uint64]int) {
	counts := map[uint64]int{} // written by the reaper only, read once it is done
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for range n {
			ev, _, err := e.Wait(waitUS, 1)
			if err != nil {
				t.Errorf("wait for send completions: %v", err)
				return
			}
			if ev.DTO.Status != DTOSuccess {
				t.Errorf("send completion %+v", ev.DTO)
			}
			counts[ev.DTO.Cookie]++
		}
	}()
	return func() map[uint64]int {
		t.Helper()
		select {
		case <-reaped:
		case <-time.After(30 * time.Second):
			t.Fatal("send completions missing")
		}
		return counts
	}
}

// requireCode checks that err is a DAT error with exactly type|subtype.
func requireCode(t testing.TB, err error, code Return, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	var e *Error
	require.True(t, errors.As(err, &e), "error %v is a *udat.Error", err)
	require.Equalf(t, (ClassError | code).String(), e.Code.String(), "error %v", err)
}

// requireType checks that err is a DAT error of the type of code.
func requireType(t testing.TB, err error, code Return, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.Equalf(t, code.Type().String(), CodeOf(err).Type().String(), "error %v", err)
}

// postRecvs posts n receives of size bytes each at offsets off, off+size, ...
// of s.lmr, with cookies base, base+1, ...
func postRecvs(t testing.TB, s side, off, size, n int, base uint64) {
	t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(off+i*size, size)}, base+uint64(i), CompletionDefault))
	}
}

// foreignLMR allocates an LMR in a new PZ: its triplets belong to no EP or
// SRQ of the test's own PZ.
func foreignLMR(t testing.TB, ia *IA) *LMR {
	t.Helper()
	pz2, err := ia.CreatePZ()
	require.NoError(t, err)
	foreign, err := ia.AllocLMR(pz2, 4096, MemPrivAll)
	require.NoError(t, err)
	return foreign
}

// fill writes a repeated byte pattern into b.
func fill(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// disconnectPair disconnects the client and waits for both sides' events.
func disconnectPair(t testing.TB, p *pair) {
	t.Helper()
	require.NoError(t, p.client.ep.Disconnect(CloseGracefulFlag))
	ev := waitEvent(t, p.client.conn)
	require.Equal(t, EventConnectionDisconnected, ev.Number)
	ev = waitEvent(t, p.server.conn)
	require.Equal(t, EventConnectionDisconnected, ev.Number)
}

func deviceName(t testing.TB) string {
	t.Helper()
	return devtest.Require(t)
}

func mustPZ(t testing.TB, ia *IA) *PZ {
	t.Helper()
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	return pz
}

// sendRound returns one round of a send on p: the server posts a receive,
// the client sends 64 bytes, and take takes each side's completion,
// called again while it fails (for 20 s at most). A round allocates
// nothing of its own, for the tests that count allocations.
func sendRound(p *pair, take func(*EVD) error) func() {
	c, s := p.client, p.server
	send := []LMRTriplet{c.lmr.Triplet(0, 64)}
	recv := []LMRTriplet{s.lmr.Triplet(0, 64)}
	await := func(e *EVD) {
		deadline := time.Now().Add(20 * time.Second)
		for take(e) != nil {
			if time.Now().After(deadline) {
				panic("no completion")
			}
		}
	}
	return func() {
		if err := s.ep.PostRecv(recv, 1, CompletionDefault); err != nil {
			panic(err)
		}
		if err := c.ep.PostSend(send, 2, CompletionDefault); err != nil {
			panic(err)
		}
		await(c.req)
		await(s.recv)
	}
}

// requireLanded checks that an RDMA write whose completion came has put
// want into got. On InfiniBand and RoCE its completion means the peer has
// it; soft-iWARP completes a write once it has left (completesInOrder), and
// its data lands a moment later: there got has 5 s to catch up.
func requireLanded(t *testing.T, ia *IA, want, got []byte, what string) {
	t.Helper()
	if !ia.completesInOrder() {
		require.Eventually(t, func() bool { return bytes.Equal(want, got) }, 5*time.Second, time.Millisecond, what)
	}
	require.True(t, bytes.Equal(want, got), what)
}

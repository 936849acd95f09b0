//go:build linux && cgo

package udat

// Tests of dat_srq_post_recv(3DAT) and the other SRQ calls. Each test cites
// the paragraph of the man page (shared/seeds, DAT 1.2) it checks.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
	"golang.org/x/sync/errgroup"
)

type srqSetup struct {
	ia   *IA
	pz   *PZ
	srq  *SRQ
	lmr  *LMR // SRQ buffers
	a, b *pair
}

// newSRQSetup makes an SRQ and two connections whose server EPs use it.
func newSRQSetup(t testing.TB, attr SRQAttr, serverAttrA, serverAttrB *EPAttr) *srqSetup {
	t.Helper()
	ia, pz, srq := newSRQ(t, attr)
	lmr, err := ia.AllocLMR(pz, 64<<10, MemPrivLocalWrite|MemPrivLocalRead)
	require.NoError(t, err)
	s := &srqSetup{ia: ia, pz: pz, srq: srq, lmr: lmr}
	s.a = newPairIn(t, ia, pz, pairOpts{srq: srq, serverAttr: serverAttrA, splitEVDs: true})
	s.b = newPairIn(t, ia, pz, pairOpts{srq: srq, serverAttr: serverAttrB, splitEVDs: true})
	return s
}

// newSRQ opens the device and creates an SRQ of attr in a new PZ.
func newSRQ(t testing.TB, attr SRQAttr) (*IA, *PZ, *SRQ) {
	t.Helper()
	ia := openIA(t)
	pz := mustPZ(t, ia)
	srq, err := ia.CreateSRQ(pz, attr)
	require.NoError(t, err)
	return ia, pz, srq
}

func (s *srqSetup) post(t testing.TB, n, size int, base uint64) {
	t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(t, s.srq.PostRecv([]LMRTriplet{s.lmr.Triplet(i*size, size)}, base+uint64(i)))
	}
}

func send(t testing.TB, sd side, off, n int, cookie uint64, flags CompletionFlags) {
	t.Helper()
	require.NoError(t, sd.ep.PostSend([]LMRTriplet{sd.lmr.Triplet(off, n)}, cookie, flags))
}

// "num_segments: The number of lmr_triplets in local_iov. Can be 0 for
// receiving a zero-size message." and "local_iov: ... Can be NULL for
// receiving a zero-size message."
func TestSRQPostRecvZeroSizeMessage(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 2}, nil, nil)
	err := s.srq.PostRecv(nil, 1)
	siwRefuses(t, s.srq.ia, err, InvalidParameter|InvalidArg2, "receive without segments")
	require.NoError(t, err)
	require.NoError(t, s.srq.PostRecv([]LMRTriplet{}, 2))
	send(t, s.a.client, 0, 0, 1, CompletionDefault)
	send(t, s.a.client, 0, 0, 2, CompletionDefault)
	for _, ck := range []uint64{1, 2} {
		d := waitDTO(t, s.a.server.recv)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, ck, d.Cookie)
		require.Zero(t, d.TransferredLength)
		require.Equal(t, s.a.server.ep, d.EP)
	}
}

// "The dat_srq_post_recv() function posts the receive buffer that can be
// used for the incoming message into the local_iov by any connected EP that
// uses SRQ." and "The completion of the Receive posted to the SRQ is
// equivalent to what happened to the Receive posted to the Endpoint for the
// Endpoint that dequeued the Receive buffer from the Shared Receive queue."
func TestSRQPostRecvAnyConnectedEPConsumes(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	s.post(t, 2, 64, 10)
	copy(s.a.client.lmr.Bytes(), "from-a")
	copy(s.b.client.lmr.Bytes(), "from-b")
	send(t, s.a.client, 0, 6, 1, CompletionDefault)
	da := waitDTO(t, s.a.server.recv)
	send(t, s.b.client, 0, 6, 1, CompletionDefault)
	db := waitDTO(t, s.b.server.recv)
	require.Equal(t, s.a.server.ep, da.EP)
	require.Equal(t, s.b.server.ep, db.EP)
	require.Equal(t, DTOReceive, da.Op)
	require.ElementsMatch(t, []uint64{10, 11}, []uint64{da.Cookie, db.Cookie})
	got := map[uint64]string{}
	got[da.Cookie] = "a"
	got[db.Cookie] = "b"
	for ck, who := range got {
		off := int(ck-10) * 64
		require.Equal(t, "from-"+who, string(s.lmr.Bytes()[off:off+6]))
	}
	requireEmpty(t, s.a.server.recv)
	requireEmpty(t, s.b.server.recv)
}

// "The local_iov segments are filled in the I/O Vector order until the whole
// message is received. This ensures that all the front segments of the
// local_iov I/O Vector are completely filled, only one segment is partially
// filled, if needed, and all segments that follow it are not filled at all."
func TestSRQPostRecvFillsIOVInOrder(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 4, MaxRecvIOV: 3}, nil, nil)
	b := s.lmr.Bytes()
	fill(b[:1024], '.')
	iov := []LMRTriplet{s.lmr.Triplet(100, 8), s.lmr.Triplet(200, 8), s.lmr.Triplet(300, 8)}
	require.NoError(t, s.srq.PostRecv(iov, 1))
	copy(s.a.client.lmr.Bytes(), "AAAAAAAABBBB")
	send(t, s.a.client, 0, 12, 1, CompletionDefault)
	require.Equal(t, uint64(12), waitDTO(t, s.a.server.recv).TransferredLength)
	require.Equal(t, "AAAAAAAA", string(b[100:108]))
	require.Equal(t, "BBBB....", string(b[200:208]))
	require.Equal(t, "........", string(b[300:308]))
}

// "The user_cookie argument allows Consumers to have unique identifiers for
// each DTO. ... There is no requirement on the Consumer that the value
// user_cookie should be unique for each DTO. The user_cookie is returned to
// the Consumer in the Completion event for the posted Receive."
func TestSRQPostRecvCookieReturned(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	cookies := []uint64{0, 9, 9, ^uint64(0)}
	for i, ck := range cookies {
		require.NoError(t, s.srq.PostRecv([]LMRTriplet{s.lmr.Triplet(i*64, 64)}, ck))
	}
	for i := range cookies {
		send(t, s.a.client, 0, i+1, 0, CompletionSuppress)
	}
	for i, ck := range cookies {
		d := waitDTO(t, s.a.server.recv)
		require.Equal(t, ck, d.Cookie, "buffers are consumed in posting order")
		require.Equal(t, uint64(i+1), d.TransferredLength)
	}
}

// "The completion of the posted Receive is reported to the Consumer
// asynchronously through a DTO Completion event based on the configuration
// of the EP that dequeues the posted buffer and the specified completion_flags
// value for Solicited Wait for the matching Send." and USAGE: "If the
// Endpoint Recv Completion flag is DAT_COMPLETION_SOLICITED_WAIT_FLAG then
// matching Send DTO completion flag value for Solicited Wait determines if
// the completion will be Signalled or not. If the Endpoint Recv Completion
// flag is not DAT_COMPLETION_SOLICITED_WAIT_FLAG, the posted Recv completion
// will be generated with Signal."
func TestSRQPostRecvCompletionFollowsConsumingEP(t *testing.T) {
	solicited := DefaultEPAttr()
	solicited.RecvCompletionFlags = CompletionSolicitedWait
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, &solicited)
	needSolicitedNotify(t, s.srq.ia)
	s.post(t, 4, 64, 1)
	waiter := func(e *EVD) chan error {
		ch := make(chan error, 1)
		go func() {
			_, _, err := e.Wait(waitUS, 1)
			ch <- err
		}()
		return ch
	}
	wa := waiter(s.a.server.recv)
	wb := waiter(s.b.server.recv)
	time.Sleep(200 * time.Millisecond)
	send(t, s.a.client, 0, 8, 1, CompletionDefault)
	send(t, s.b.client, 0, 8, 1, CompletionDefault)
	select {
	case err := <-wa:
		require.NoError(t, err, "EP a (default flags) is signalled for every receive")
	case <-time.After(20 * time.Second):
		t.Fatal("EP a's receive did not wake its waiter")
	}
	select {
	case err := <-wb:
		t.Fatalf("EP b (solicited wait) was woken by an unsolicited send: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	send(t, s.b.client, 0, 8, 2, CompletionSolicitedWait)
	select {
	case err := <-wb:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the solicited send did not wake EP b's waiter")
	}
}

// "The posted Recv DTO will complete with signal, equivalently to the
// completion of Recv posted directly to the Endpoint that dequeued the Recv
// buffer from SRQ with DAT_COMPLETION_UNSIGNALLED_FLAG value not set for it."
// and "If EP Recv Completion Flag is DAT_COMPLETION_UNSIGNALLED_FLAG, which
// is the default value for SRQ EP, then all posted Recvs will generate
// completions with Signal Notifications." Every SRQ receive produces its
// event, whatever the EP's flags.
func TestSRQPostRecvAlwaysSignalled(t *testing.T) {
	unsig := DefaultEPAttr()
	unsig.RecvCompletionFlags = CompletionUnsignalled
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, &unsig, nil)
	s.post(t, 3, 64, 1)
	for i := 0; i < 3; i++ {
		send(t, s.a.client, 0, 4, 0, CompletionSuppress)
	}
	for i := 0; i < 3; i++ {
		require.Equal(t, uint64(i+1), waitDTO(t, s.a.server.recv).Cookie)
	}
	requireEmpty(t, s.a.server.recv)
}

// "A Consumer should not modify the local_iov or its content until the DTO
// is completed. ... Providers that allow Consumers to get ownership of the
// local_iov but not the memory it specified back after the dat_srq_post_recv()
// returns should document this behavior": the vector is copied.
func TestSRQPostRecvIOVReusableAfterReturn(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 4, MaxRecvIOV: 1}, nil, nil)
	iov := []LMRTriplet{s.lmr.Triplet(0, 16)}
	require.NoError(t, s.srq.PostRecv(iov, 1))
	iov[0] = LMRTriplet{LMRContext: 1, SegmentLength: 1, VirtualAddress: 1}
	copy(s.a.client.lmr.Bytes(), "kept")
	send(t, s.a.client, 0, 4, 1, CompletionDefault)
	require.Equal(t, uint64(4), waitDTO(t, s.a.server.recv).TransferredLength)
	require.Equal(t, "kept", string(s.lmr.Bytes()[:4]))
}

// "The DAT_SUCCESS return of the dat_srq_post_recv() is at least the
// equivalent of posting a Receive operation directly by native Transport.
// Providers shall avoid resource allocation as part of dat_srq_post_recv() to
// ensure that this operation is nonblocking."
func TestSRQPostRecvAllocatesNothing(t *testing.T) {
	ia, pz, srq := newSRQ(t, SRQAttr{MaxRecvDTOs: 128, MaxRecvIOV: 1})
	l, err := ia.AllocLMR(pz, 4096, MemPrivLocalWrite)
	require.NoError(t, err)
	iov := []LMRTriplet{l.Triplet(0, 64)}
	require.Zero(t, testing.AllocsPerRun(50, func() {
		if err := srq.PostRecv(iov, 1); err != nil {
			panic(err)
		}
	}))
}

// "The posted Recv DTOs will complete in the order of Send postings to the
// other endpoint of each connection whose local EP uses SRQ. There is no
// ordering among different connections regardless if they share SRQ and
// recv_evd or not."
func TestSRQPostRecvOrderPerConnection(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 32, MaxRecvIOV: 1}, nil, nil)
	s.post(t, 32, 64, 0)
	for i := 0; i < 16; i++ {
		for _, c := range []side{s.a.client, s.b.client} {
			copy(c.lmr.Bytes()[i*8:], fmt.Sprintf("msg%04d", i))
			send(t, c, i*8, 8, uint64(i), CompletionSuppress)
		}
	}
	for _, p := range []*pair{s.a, s.b} {
		for i := 0; i < 16; i++ {
			d := waitDTO(t, p.server.recv)
			require.Equal(t, DTOSuccess, d.Status)
			off := int(d.Cookie) * 64
			require.Equal(t, fmt.Sprintf("msg%04d", i), string(s.lmr.Bytes()[off:off+7]), "connection keeps send order")
		}
	}
}

// "If the reported status of the Completion DTO event corresponding to the
// posted RDMA Read DTO is not DAT_DTO_SUCCESS, the content of the local_iov is
// not defined and the transfered_length in the DTO Completion event is not
// defined." (sic: a receive). An overlong message fails the receive with
// DAT_DTO_LENGTH_ERROR on the consuming EP, as for an EP's own receive.
// The QP's error ends the connection: BROKEN, or on soft-iWARP, whose
// connection manager reports a QP's error as the end of its stream, the
// DISCONNECTED that may come first (TestDeviceFlushBreaksConnection).
func TestSRQPostRecvErrorCompletion(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 4, MaxRecvIOV: 1}, nil, nil)
	s.post(t, 1, 8, 1)
	send(t, s.a.client, 0, 64, 1, CompletionDefault)
	d := waitDTO(t, s.a.server.recv)
	require.Equal(t, DTOLengthError, d.Status)
	require.Equal(t, s.a.server.ep, d.EP)
	ends := []EventNumber{EventConnectionBroken}
	if onSIW(s.ia) {
		ends = append(ends, EventConnectionDisconnected)
	}
	require.Contains(t, ends, waitEvent(t, s.a.server.conn).Number)
}

// "The operation is valid for all states of the Shared Receive Queue." and
// "The dat_srq_post_recv() function is asynchronous, nonblocking, and its
// thread safety is Provider-dependent." This provider's SRQ posting is
// thread safe; buffers posted before any EP uses the SRQ serve later EPs.
func TestSRQPostRecvAnyStateConcurrent(t *testing.T) {
	ia, pz, srq := newSRQ(t, SRQAttr{MaxRecvDTOs: 64, MaxRecvIOV: 1})
	l, err := ia.AllocLMR(pz, 64*64, MemPrivLocalWrite)
	require.NoError(t, err)
	var g errgroup.Group
	for w := 0; w < 4; w++ {
		g.Go(func() error {
			for i := 0; i < 8; i++ {
				k := w*8 + i
				if err := srq.PostRecv([]LMRTriplet{l.Triplet(k*64, 64)}, uint64(k)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	q, err := srq.Query()
	require.NoError(t, err)
	require.Equal(t, 32, q.OutstandingDTOCount)
	p := newPairIn(t, ia, pz, pairOpts{srq: srq})
	for i := 0; i < 32; i++ {
		send(t, p.client, 0, 1, 0, CompletionSuppress)
	}
	seen := map[uint64]bool{}
	for i := 0; i < 32; i++ {
		d := waitDTO(t, p.server.recv)
		require.Equal(t, DTOSuccess, d.Status)
		seen[d.Cookie] = true
	}
	require.Len(t, seen, 32)
}

// The return values: "DAT_INVALID_HANDLE The srq_handle argument is an
// invalid DAT handle.", "DAT_INSUFFICIENT_RESOURCES", "DAT_INVALID_PARAMETER
// ... one of the IOV segments pointed to a memory outside its LMR.",
// "DAT_PROTECTION_VIOLATION ... Protection Zone mismatch between an LMR of
// one of the local_iov segments and the SRQ." and "DAT_PRIVILEGES_VIOLATION
// ... One of the LMRs used in local_iov was either invalid or did not have the
// local write privileges."
func TestSRQPostRecvErrors(t *testing.T) {
	ia, pz, srq := newSRQ(t, SRQAttr{MaxRecvDTOs: 2, MaxRecvIOV: 2})
	l, err := ia.AllocLMR(pz, 4096, MemPrivLocalWrite)
	require.NoError(t, err)
	foreign := foreignLMR(t, ia)
	readOnly, err := ia.AllocLMR(pz, 4096, MemPrivLocalRead)
	require.NoError(t, err)

	var nilSRQ *SRQ
	requireCode(t, nilSRQ.PostRecv(nil, 1), InvalidHandle|InvalidHandleSRQ)
	requireCode(t, srq.PostRecv([]LMRTriplet{l.Triplet(4090, 8)}, 1), InvalidParameter|InvalidArg3)
	requireCode(t, srq.PostRecv(make([]LMRTriplet, 3), 1), InvalidParameter|InvalidArg2)
	requireCode(t, srq.PostRecv([]LMRTriplet{foreign.Triplet(0, 8)}, 1), ProtectionViolation)
	requireCode(t, srq.PostRecv([]LMRTriplet{readOnly.Triplet(0, 8)}, 1), PrivilegesViolation|PrivilegesWrite)
	requireCode(t, srq.PostRecv([]LMRTriplet{{VirtualAddress: 8, SegmentLength: 8, LMRContext: 0xabcdef}}, 1), PrivilegesViolation)
	q, err := srq.Query()
	require.NoError(t, err)
	require.Zero(t, q.OutstandingDTOCount, "nothing was posted")
	require.NoError(t, srq.PostRecv([]LMRTriplet{l.Triplet(0, 8)}, 1))
	require.NoError(t, srq.PostRecv([]LMRTriplet{l.Triplet(8, 8)}, 2))
	requireCode(t, srq.PostRecv([]LMRTriplet{l.Triplet(16, 8)}, 3), InsufficientResources)
	require.NoError(t, srq.Free())
	requireCode(t, srq.PostRecv(nil, 1), InvalidHandle|InvalidHandleSRQ)
}

// USAGE: "Only the Endpoint that is in Connected or Disconnect Pending states
// can dequeue buffers from SRQ. When an Endpoint is transitioned into
// Disconnected state, all the buffers that it dequeued from SRQ are queued on
// the Endpoint recv_evd. All the buffers that the Endpoint has not completed
// by the time of transition into Disconnected state and that have not
// completed message reception will be flushed." A disconnected EP takes no
// more buffers: the rest serve the other EP.
func TestSRQDisconnectedEPTakesNoBuffers(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	s.post(t, 3, 64, 1)
	send(t, s.a.client, 0, 4, 1, CompletionDefault)
	require.Equal(t, uint64(1), waitDTO(t, s.a.server.recv).Cookie)
	disconnectPair(t, s.a)
	requireEmpty(t, s.a.server.recv)
	send(t, s.b.client, 0, 4, 1, CompletionDefault)
	send(t, s.b.client, 0, 4, 1, CompletionDefault)
	require.Equal(t, uint64(2), waitDTO(t, s.b.server.recv).Cookie)
	require.Equal(t, uint64(3), waitDTO(t, s.b.server.recv).Cookie)
	// An EP that uses an SRQ has no receive queue of its own.
	requireCode(t, s.b.server.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 8)}, 1, CompletionDefault), InvalidState)
	// Its receives are not known per EP.
	n, span, err := s.b.server.ep.RecvQuery()
	require.NoError(t, err)
	require.Equal(t, int(ValueUnknown), n)
	require.Equal(t, int(ValueUnknown), span)
}

// dat_srq_set_lw: "An asynchronous event will be generated when the number of
// buffers on the SRQ is below the low watermark for the first time. This can
// occur during the current call or when an associated EP takes a buffer from
// the SRQ." and "The asynchronous event will be generated only once per
// setting of the low watermark."
func TestSRQLowWatermark(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	async := s.ia.AsyncEVD()
	s.post(t, 4, 64, 1)
	require.NoError(t, s.srq.SetLW(3))
	requireEmpty(t, async)
	send(t, s.a.client, 0, 4, 1, CompletionDefault)
	send(t, s.a.client, 0, 4, 1, CompletionDefault)
	waitDTO(t, s.a.server.recv)
	waitDTO(t, s.a.server.recv)
	ev := waitEvent(t, async)
	require.Equal(t, EventSRQLowWatermark, ev.Number)
	require.Equal(t, s.srq, ev.Async.Handle)
	require.Equal(t, SRQLowWatermarkEvent, ev.Async.Reason)
	send(t, s.a.client, 0, 4, 1, CompletionDefault)
	waitDTO(t, s.a.server.recv)
	requireEmpty(t, async) // once per setting
	// Already below: the event comes during the call.
	require.NoError(t, s.srq.SetLW(4))
	ev = waitEvent(t, async)
	require.Equal(t, SRQLowWatermarkEvent, ev.Async.Reason)
	requireCode(t, s.srq.SetLW(9), InvalidParameter|InvalidArg2)
	q, err := s.srq.Query()
	require.NoError(t, err)
	require.Equal(t, 4, q.LowWatermark)
}

// dat_srq_resize keeps the posted buffers, and refuses a size below their
// number.
func TestSRQResize(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 2, MaxRecvIOV: 1}, nil, nil)
	s.post(t, 2, 64, 1)
	requireCode(t, s.srq.Resize(1), InvalidState)
	err := s.srq.Resize(6)
	siwRefuses(t, s.srq.ia, err, ModelNotSupported, "SRQ resize")
	require.NoError(t, err)
	for i := 2; i < 6; i++ {
		require.NoError(t, s.srq.PostRecv([]LMRTriplet{s.lmr.Triplet(i*64, 64)}, uint64(i+1)))
	}
	q, err := s.srq.Query()
	require.NoError(t, err)
	require.Equal(t, 6, q.MaxRecvDTOs)
	require.Equal(t, 6, q.OutstandingDTOCount)
	require.Equal(t, SRQStateOperational, q.State)
	for i := 0; i < 6; i++ {
		send(t, s.a.client, 0, 4, 0, CompletionSuppress)
	}
	for i := 0; i < 6; i++ {
		require.Equal(t, uint64(i+1), waitDTO(t, s.a.server.recv).Cookie)
	}
	requireCode(t, s.srq.Free(), InvalidState|InvalidStateSRQInUse)
}

// An SRQ-attached QP that reaches its last receive in the error state
// (IBV_EVENT_QP_LAST_WQE_REACHED, raised after every disconnect by the
// adapters that raise it; Soft-RoCE on 6.12 does, on 6.1 it does not, so
// the event is handed in there) is DAT_ASYNC_ERROR_EP_BROKEN on the async
// EVD, as OFA DAPL reports it: its dtestsrq waits for it after each
// disconnect.
func TestSRQLastWQEReachedIsEPBroken(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	async := s.ia.AsyncEVD()
	lastWQE := func(ep *EP) {
		s.ia.handleAsync(cverbs.AsyncEvent{Type: cverbs.EventQPLastWQEReached, QPNum: ep.qpn})
	}
	disconnectPair(t, s.a)
	// The device's own event comes right after the disconnect, if at all
	// (Linux 6.12's Soft-RoCE raises it, 6.1's does not).
	ev, _, err := async.Wait(Timeout(2_000_000), 1)
	if err != nil {
		requireCode(t, err, TimeoutExpired)
		lastWQE(s.a.server.ep)
		ev = waitEvent(t, async)
	}
	require.Equal(t, EventAsyncErrorEPBroken, ev.Number)
	require.Same(t, s.a.server.ep, ev.Async.Handle)
	require.Equal(t, EPTransferToError, ev.Async.Reason)
	// Once per connection: 6.12 raises the event several times.
	lastWQE(s.a.server.ep)
	requireEmpty(t, async)
	requireEmpty(t, s.a.server.conn)

	// On a connected EP it ends the connection too.
	lastWQE(s.b.server.ep)
	ev = waitEvent(t, async)
	require.Equal(t, EventAsyncErrorEPBroken, ev.Number)
	require.Same(t, s.b.server.ep, ev.Async.Handle)
	require.Equal(t, EventConnectionBroken, waitEvent(t, s.b.server.conn).Number)
	requireEmpty(t, async)

	// An EP its Consumer frees reports nothing, nor does a QP without an
	// SRQ.
	require.NoError(t, s.b.server.ep.Free())
	requireEmpty(t, async)
	lastWQE(s.b.client.ep)
	requireEmpty(t, async)
}

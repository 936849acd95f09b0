//go:build linux && cgo

package udat

// Tests of dat_ep_post_recv(3DAT). Each test cites the paragraph of the man
// page (shared/seeds, DAT 1.2) it checks.

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// "num_segments: Number of lmr_triplets in local_iov. Can be 0 for receiving
// a 0 size message." and "local_iov: ... Can be NULL for receiving a 0 size
// message."
func TestPostRecvZeroSizeMessage(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	err := s.ep.PostRecv(nil, 1, CompletionDefault)
	siwRefuses(t, p.ia, err, InvalidParameter|InvalidArg2, "receive without segments")
	require.NoError(t, err)
	require.NoError(t, s.ep.PostRecv([]LMRTriplet{}, 2, CompletionDefault))
	require.NoError(t, c.ep.PostSend(nil, 1, CompletionDefault))
	require.NoError(t, c.ep.PostSend(nil, 2, CompletionDefault))
	for _, ck := range []uint64{1, 2} {
		d := waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, ck, d.Cookie)
		require.Equal(t, uint64(0), d.TransferredLength)
	}
}

// "The dat_ep_post_recv() function requests the receive of the data over the
// connection of the ep_handle Endpoint of the incoming message into the
// local_iov." and "The local_iov segments are filled in the I/O Vector order
// until the whole message is received. This ensures that all the "front"
// segments of the local_iov I/O Vector are completely filled, only one
// segment is partially filled, if needed, and all segments that follow it
// are not filled at all."
func TestPostRecvFillsIOVInOrder(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	b := s.lmr.Bytes()
	fill(b[:4096], '.')
	iov := []LMRTriplet{s.lmr.Triplet(100, 8), s.lmr.Triplet(200, 8), s.lmr.Triplet(300, 8)}
	require.NoError(t, s.ep.PostRecv(iov, 1, CompletionDefault))
	copy(c.lmr.Bytes(), "AAAAAAAABBBB")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 12)}, 1, CompletionDefault))
	waitDTO(t, c.req)
	d := waitDTO(t, s.recv)
	require.Equal(t, uint64(12), d.TransferredLength)
	require.Equal(t, "AAAAAAAA", string(b[100:108]), "front segment completely filled")
	require.Equal(t, "BBBB....", string(b[200:208]), "one segment partly filled")
	require.Equal(t, "........", string(b[300:308]), "the segment after it not filled at all")
	require.Equal(t, bytes.Repeat([]byte{'.'}, 92), b[108:200], "nothing between the segments")
}

// "user_cookie: User-provided cookie that is returned to the Consumer at the
// completion of the Receive DTO. Can be NULL." and "The user_cookie allows
// Consumers to have unique identifiers for each DTO. ... There is no
// requirement on the Consumer that the value user_cookie should be unique for
// each DTO. The user_cookie is returned to the Consumer in the Completion
// event for the posted Receive."
func TestPostRecvCookieReturned(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	cookies := []uint64{0, 5, 5, ^uint64(0), 0}
	for i, ck := range cookies {
		require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(i*64, 64)}, ck, CompletionDefault))
	}
	for i := range cookies {
		require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, i+1)}, 0, CompletionSuppress))
	}
	for i, ck := range cookies {
		d := waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, ck, d.Cookie)
		require.Equal(t, uint64(i+1), d.TransferredLength)
		require.Equal(t, s.ep, d.EP)
		require.Equal(t, DTOReceive, d.Op)
	}
	requireEmpty(t, s.recv)
}

// "DAT_COMPLETION_UNSIGNALLED_FLAG 0x04 Non-notification completion. Local
// Endpoint must be configured for Unsignaled CompletionNotification
// Suppression." and "The value of DAT_COMPLETION _UNSIGNALLED_FLAG is only
// valid if the Endpoint Recv Completion Flags DAT_COMPLETION_UNSIGNALLED_FLAG.
// Otherwise, DAT_INVALID_PARAMETER is returned." A receive always completes
// (the hardware reports every receive), so an unsignalled receive still
// produces its event.
func TestPostRecvUnsignalledFlag(t *testing.T) {
	attr := DefaultEPAttr()
	attr.RecvCompletionFlags = CompletionUnsignalled
	p := newPair(t, pairOpts{serverAttr: &attr})
	c, s := p.client, p.server
	requireCode(t, c.ep.PostRecv([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionUnsignalled), InvalidParameter|InvalidArg5)
	for _, f := range []CompletionFlags{CompletionSuppress, CompletionSolicitedWait, CompletionBarrierFence, 0x100} {
		requireCode(t, c.ep.PostRecv([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, f), InvalidParameter|InvalidArg5, "flags %#x", f)
	}
	require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 8)}, 9, CompletionUnsignalled))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionDefault))
	d := waitDTO(t, s.recv)
	require.Equal(t, uint64(9), d.Cookie)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(1), waitDTO(t, c.req).Cookie)
	requireEmpty(t, s.recv)
	requireEmpty(t, c.req)
}

// "The completion of the posted Receive is reported to the Consumer
// asynchronously through a DTO Completion event based on the configuration
// of the connection for Solicited Wait and the specified completion_flags
// value for the matching Send." With the EP's receive completion flag
// DAT_COMPLETION_EVD_THRESHOLD_FLAG, the dat_evd_wait threshold decides when
// the waiter wakes.
func TestPostRecvCompletionThreshold(t *testing.T) {
	p := newRecvFlagsPair(t, CompletionEVDThreshold, 3)
	c, s := p.client, p.server
	done := waitInBackground(s.recv, 3)
	for i := 0; i < 2; i++ {
		require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionDefault))
		waitDTO(t, c.req)
	}
	requireAsleep(t, done, "waiter woke below its threshold")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionDefault))
	r := requireWoken(t, done, "waiter did not wake at its threshold")
	require.Equal(t, uint64(1), r.ev.DTO.Cookie)
	require.Equal(t, 2, r.nmore)
}

// "A Consumer must not modify the local_iov or its content until the DTO is
// completed. ... Providers that allow Consumers to get ownership of the
// local_iov but not the memory it specified back after the dat_ep_post_recv()
// returns should document this behavior": this provider copies the I/O
// vector; the slice may be reused as soon as PostRecv returns.
func TestPostRecvIOVReusableAfterReturn(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	iov := []LMRTriplet{s.lmr.Triplet(0, 16)}
	require.NoError(t, s.ep.PostRecv(iov, 1, CompletionDefault))
	iov[0] = s.lmr.Triplet(1000, 1)
	copy(c.lmr.Bytes(), "0123456789")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 10)}, 1, CompletionDefault))
	require.Equal(t, uint64(10), waitDTO(t, s.recv).TransferredLength)
	require.Equal(t, "0123456789", string(s.lmr.Bytes()[:10]))
}

// "The DAT_SUCCESS return of the dat_ep_post_recv() is at least the
// equivalent of posting a Receive operation directly by native Transport.
// Providers should avoid resource allocation as part of dat_ep_post_recv() to
// ensure that this operation is nonblocking and thread safe for an UpCall."
func TestPostRecvAllocatesNothing(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	sd := newSide(t, ia, pz, pairOpts{evdQLen: 512}, nil, nil)
	iov := []LMRTriplet{sd.lmr.Triplet(0, 64)}
	// Receives pre-posted on an unconnected EP stay pending; 64 fit.
	allocs := testing.AllocsPerRun(50, func() {
		if err := sd.ep.PostRecv(iov, 1, CompletionDefault); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

// "If the size of an incoming message is larger than the size of the
// local_iov, the reported status of the posted Receive DTO in the
// corresponding Completion DTO event is DAT_DTO_LENGTH_ERROR." Such an error
// breaks the connection: the EP is DISCONNECTED and the connect EVD gets
// DAT_CONNECTION_EVENT_BROKEN.
func TestPostRecvMessageTooLong(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 8, 2, 1)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 16)}, 1, CompletionDefault))
	d := waitDTO(t, s.recv)
	require.Equal(t, DTOLengthError, d.Status)
	require.Equal(t, uint64(1), d.Cookie)
	// "If the reported status ... is not DAT_DTO_SUCCESS, the content of the
	// local_iov is not defined": no length is reported either.
	require.Zero(t, d.TransferredLength)
	ev := waitEvent(t, s.conn)
	require.Equal(t, EventConnectionBroken, ev.Number)
	require.Equal(t, s.ep, ev.Conn.EP)
	st, _, _, err := s.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
	d = waitDTO(t, s.recv)
	require.Equal(t, DTOErrFlushed, d.Status, "the other receive is flushed")
	require.Equal(t, uint64(2), d.Cookie)
	requireEmpty(t, s.recv)
}

// The same with the order TestPostRecvMessageTooLong leaves to chance
// forced the other way: the connection manager reports the end before
// anything polls the failed receive. On IB the sender's send fails and its
// side, broken, disconnects; on iWARP the receiver's error closes the
// stream at once (the send has succeeded). The failure still breaks the
// receiver's connection: the end is not a peer's disconnect.
func TestPostRecvMessageTooLongBeforeThePoll(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 8, 2, 1)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 16)}, 1, CompletionDefault))
	if sent := waitDTO(t, c.req); c.ep.ia.ibTransport() {
		require.NotEqual(t, DTOSuccess, sent.Status, "the receiver refused it")
	}
	require.Contains(t, []EventNumber{EventConnectionBroken, EventConnectionDisconnected}, waitEvent(t, c.conn).Number)
	ev := waitEvent(t, s.conn)
	require.Equal(t, EventConnectionBroken, ev.Number)
	d := waitDTO(t, s.recv)
	require.Equal(t, DTOLengthError, d.Status)
	require.Equal(t, uint64(1), d.Cookie)
	d = waitDTO(t, s.recv)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(2), d.Cookie)
	requireEmpty(t, s.recv)
}

// "The operation is valid for all states of the Endpoint. The actual data
// transfer does not take place until the Endpoint is in the
// DAT_EP_STATE_CONNECTED state. The operation on the Endpoint in
// DAT_EP_STATE_DISCONNECTED is allowed. If the operation returns
// successfully, the posted Recv is immediately flushed to recv_evd_handle."
func TestPostRecvValidInEveryState(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	// UNCONNECTED: pre-posted receives wait for the connection.
	p := newPairIn(t, ia, pz, pairOpts{prepost: func(t testing.TB, ep *EP) {
		st, _, _, err := ep.GetStatus()
		require.NoError(t, err)
		require.Equal(t, EPStateUnconnected, st)
	}})
	c, s := p.client, p.server
	// Post on CONNECTED.
	postRecvs(t, s, 0, 64, 1, 1)
	copy(c.lmr.Bytes(), "x")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 1)}, 1, CompletionDefault))
	require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
	// DISCONNECTED: flushed at once.
	disconnectPair(t, p)
	require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 8)}, 33, CompletionDefault))
	d := waitDTO(t, s.recv)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(33), d.Cookie)
	require.Equal(t, DTOReceive, d.Op)
	// RESERVED (an EP waiting at an RSP): receives are accepted and pend.
	rs := newSide(t, ia, pz, pairOpts{}, nil, nil)
	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	rsp, err := ia.CreateRSP(nextConnQual(), rs.ep, crEVD)
	require.NoError(t, err)
	st, _, _, err := rs.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateReserved, st)
	require.NoError(t, rs.ep.PostRecv([]LMRTriplet{rs.lmr.Triplet(0, 8)}, 1, CompletionDefault))
	requireEmpty(t, rs.recv)
	require.NoError(t, rsp.Free())
}

// Receives posted before the connection exists complete once data arrives
// ("The actual data transfer does not take place until the Endpoint is in the
// DAT_EP_STATE_CONNECTED state").
func TestPostRecvBeforeConnect(t *testing.T) {
	p := newPair(t, pairOpts{prepost: func(t testing.TB, ep *EP) {
		// Each side's LMR is created by newSide; post through a fresh one.
		l, err := ep.ia.AllocLMR(ep.pz, 4096, MemPrivLocalWrite|MemPrivLocalRead)
		require.NoError(t, err)
		require.NoError(t, ep.PostRecv([]LMRTriplet{l.Triplet(0, 64)}, 1234, CompletionDefault))
		require.NoError(t, ep.SetConsumerContext(l))
	}})
	c, s := p.client, p.server
	requireEmpty(t, s.recv)
	copy(c.lmr.Bytes(), "early")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 5)}, 1, CompletionDefault))
	d := waitDTO(t, s.recv)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(1234), d.Cookie)
	v, err := s.ep.ConsumerContext()
	require.NoError(t, err)
	require.Equal(t, "early", string(v.(*LMR).Bytes()[:5]))
}

// "DAT_INSUFFICIENT_RESOURCES The operation failed due to resource
// limitations." A full receive queue refuses the next receive.
func TestPostRecvQueueFull(t *testing.T) {
	attr := DefaultEPAttr()
	attr.MaxRecvDTOs = 3
	p := newPair(t, pairOpts{serverAttr: &attr})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 3, 1)
	requireCode(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 8)}, 4, CompletionDefault), InsufficientResources)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionDefault))
	require.Equal(t, uint64(1), waitDTO(t, s.recv).Cookie)
	require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 8)}, 4, CompletionDefault))
}

// "DAT_INVALID_PARAMETER Invalid parameter. For example, one of the IOV
// segments pointed to a memory outside its LMR." and "DAT_INVALID_HANDLE The
// ep_handle parameter is invalid."
func TestPostRecvInvalidArguments(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	sd := newSide(t, ia, pz, pairOpts{}, nil, nil)
	l := sd.lmr
	n := len(l.Bytes())
	requireCode(t, sd.ep.PostRecv([]LMRTriplet{l.Triplet(n-1, 2)}, 1, CompletionDefault), InvalidParameter|InvalidArg3)
	requireCode(t, sd.ep.PostRecv([]LMRTriplet{l.Triplet(-8, 4)}, 1, CompletionDefault), InvalidParameter|InvalidArg3)
	tooMany := make([]LMRTriplet, sd.ep.attr.MaxRecvIOV+1)
	requireCode(t, sd.ep.PostRecv(tooMany, 1, CompletionDefault), InvalidParameter|InvalidArg2)
	var nilEP *EP
	requireCode(t, nilEP.PostRecv(nil, 1, CompletionDefault), InvalidHandle|InvalidHandleEP)
	nrecv, _, err := sd.ep.RecvQuery()
	require.NoError(t, err)
	require.Zero(t, nrecv, "nothing was posted")
	require.NoError(t, sd.ep.Free())
	requireCode(t, sd.ep.PostRecv(nil, 1, CompletionDefault), InvalidHandle|InvalidHandleEP)
}

// "DAT_PROTECTION_VIOLATION ... Protection Zone mismatch between an LMR of
// one of the local_iov segments and the local Endpoint." and
// "DAT_PRIVILEGES_VIOLATION ... One of the LMRs used in local_iov was either
// invalid or did not have the local read privileges." A receive writes into
// its buffers, so the privilege it needs is local write (as the
// dat_srq_post_recv page says); an LMR with only local read is refused.
func TestPostRecvProtectionAndPrivileges(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	sd := newSide(t, ia, pz, pairOpts{}, nil, nil)
	foreign := foreignLMR(t, ia)
	readOnly, err := ia.AllocLMR(pz, 4096, MemPrivLocalRead)
	require.NoError(t, err)
	freed, err := ia.AllocLMR(pz, 4096, MemPrivAll)
	require.NoError(t, err)
	ft := freed.Triplet(0, 8)
	require.NoError(t, freed.Free())
	requireCode(t, sd.ep.PostRecv([]LMRTriplet{foreign.Triplet(0, 8)}, 1, CompletionDefault), ProtectionViolation)
	requireCode(t, sd.ep.PostRecv([]LMRTriplet{readOnly.Triplet(0, 8)}, 1, CompletionDefault), PrivilegesViolation|PrivilegesWrite)
	requireCode(t, sd.ep.PostRecv([]LMRTriplet{ft}, 1, CompletionDefault), PrivilegesViolation)
	nrecv, _, err := sd.ep.RecvQuery()
	require.NoError(t, err)
	require.Zero(t, nrecv)
}

// USAGE: "For best Recv operation performance, the Consumer should align each
// buffer segment of local_iov to the Optimal Buffer Alignment attribute of the
// Provider." CreateLMR over a Go slice and unaligned segments work as well.
func TestPostRecvGoMemoryAndAlignment(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	buf := make([]byte, 1000)
	l, err := p.ia.CreateLMR(p.pz, buf, MemPrivLocalWrite, VATypeVA)
	require.NoError(t, err)
	require.NoError(t, s.ep.PostRecv([]LMRTriplet{l.Triplet(7, 100)}, 1, CompletionDefault))
	copy(c.lmr.Bytes(), "go-heap")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 7)}, 1, CompletionDefault))
	require.Equal(t, uint64(7), waitDTO(t, s.recv).TransferredLength)
	require.Equal(t, "go-heap", string(buf[7:14]))
	require.NoError(t, l.Free())
}

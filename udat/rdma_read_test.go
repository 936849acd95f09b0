//go:build linux && cgo

package udat

// Tests of dat_ep_post_rdma_read(3DAT). Each test cites the paragraph of the
// man page (shared/seeds, DAT 1.2) it checks.

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// "The dat_ep_post_rdma_read() function requests the transfer of all the
// data specified by the remote_buffer over the connection of the ep_handle
// Endpoint into the local_iov." and "remote_buffer: A pointer to an RMR
// Triplet that specifies the remote buffer from which the data is read."
func TestPostRDMAReadTransfersRemoteBuffer(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	copy(s.lmr.Bytes()[512:], "remote bytes to read")
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(64, 100)}, 5, s.lmr.RMRTriplet(512, 20), CompletionDefault))
	d := waitDTO(t, c.req)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(5), d.Cookie)
	require.Equal(t, DTORDMARead, d.Op)
	require.Equal(t, uint64(20), d.TransferredLength)
	require.Equal(t, c.ep, d.EP)
	require.Equal(t, "remote bytes to read", string(c.lmr.Bytes()[64:84]))
	requireEmpty(t, s.recv) // the peer's CPU is not involved
}

// "The local_iov segments are filled in the I/O Vector order until the whole
// message is received. This ensures that all the "front" segments of the
// local_iov I/O Vector are completely filled, only one segment is partially
// filled, if needed, and all segments that follow it are not filled at all."
func TestPostRDMAReadFillsIOVInOrder(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needReadIOV(t, c, 3)
	copy(s.lmr.Bytes(), "AAAAAAAABBBB")
	b := c.lmr.Bytes()
	fill(b[:1024], '.')
	iov := []LMRTriplet{c.lmr.Triplet(100, 8), c.lmr.Triplet(200, 8), c.lmr.Triplet(300, 8)}
	require.NoError(t, c.ep.PostRDMARead(iov, 1, s.lmr.RMRTriplet(0, 12), CompletionDefault))
	d := waitDTO(t, c.req)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(12), d.TransferredLength)
	require.Equal(t, "AAAAAAAA", string(b[100:108]))
	require.Equal(t, "BBBB....", string(b[200:208]))
	require.Equal(t, "........", string(b[300:308]))
}

// "user_cookie: User-provided cookie that is returned to the Consumer at the
// completion of the RDMA Read. Can be NULL." and "The user_cookie allows
// Consumers to have unique identifiers for each DTO. ... There is no
// requirement on the Consumer that the value user_cookie should be unique for
// each DTO. The user_cookie is returned to the Consumer in the Completion
// event for the posted RDMA Read."
func TestPostRDMAReadCookieReturned(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	cookies := []uint64{0, 3, 3, ^uint64(0)}
	for i, ck := range cookies {
		require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(i*16, 16)}, ck, s.lmr.RMRTriplet(0, 16), CompletionDefault))
	}
	for _, ck := range cookies {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, ck, d.Cookie)
	}
	requireEmpty(t, c.req)
}

// "A Consumer must not modify the local_iov or its content until the DTO is
// completed. ... Providers that allow Consumers to get ownership of the
// local_iov but not the memory it specifies back after the
// dat_ep_post_rdma_read() returns should document this behavior": the I/O
// vector is copied; the slice may be reused at once.
func TestPostRDMAReadIOVReusableAfterReturn(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	copy(s.lmr.Bytes(), "stable")
	iov := []LMRTriplet{c.lmr.Triplet(0, 6)}
	require.NoError(t, c.ep.PostRDMARead(iov, 1, s.lmr.RMRTriplet(0, 6), CompletionDefault))
	iov[0] = LMRTriplet{}
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	require.Equal(t, "stable", string(c.lmr.Bytes()[:6]))
}

// "DAT_COMPLETION_SUPPRESS_FLAG 0x01 Suppress successful Completion." and
// "The completion of the posted RDMA Read is reported to the Consumer
// asynchronously through a DTO Completion event based on the specified
// completion_flags value. The value of DAT_COMPLETION_UNSIGNALLED_FLAG is only
// valid if the Endpoint Request Completion Flags
// DAT_COMPLETION_UNSIGNALLED_FLAG. Otherwise, DAT_INVALID_PARAMETER is
// returned."
func TestPostRDMAReadCompletionFlags(t *testing.T) {
	attr := DefaultEPAttr()
	attr.RequestCompletionFlags = CompletionUnsignalled
	p := newPair(t, pairOpts{clientAttr: &attr})
	c, s := p.client, p.server
	copy(s.lmr.Bytes(), "abcdefgh")
	remote := s.lmr.RMRTriplet(0, 8)
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, remote, CompletionSuppress))
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(8, 8)}, 2, remote, CompletionUnsignalled))
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(16, 8)}, 3, remote, CompletionBarrierFence))
	d := waitDTO(t, c.req)
	require.Equal(t, uint64(3), d.Cookie, "the suppressed and unsignalled reads report nothing")
	requireEmpty(t, c.req)
	require.Equal(t, "abcdefghabcdefghabcdefgh", string(c.lmr.Bytes()[:24]))
	// On an EP without unsignalled request completions the flag is refused,
	// as is the solicited flag, which RDMA read does not have.
	requireCode(t, s.ep.PostRDMARead([]LMRTriplet{s.lmr.Triplet(0, 8)}, 1, c.lmr.RMRTriplet(0, 8), CompletionUnsignalled), InvalidParameter|InvalidArg6)
	requireCode(t, s.ep.PostRDMARead([]LMRTriplet{s.lmr.Triplet(0, 8)}, 1, c.lmr.RMRTriplet(0, 8), CompletionSolicitedWait), InvalidParameter|InvalidArg6)
	requireEmpty(t, s.req)
}

// "The DAT_SUCCESS return of the dat_ep_post_rdma_read() is at least the
// equivalent of posting an RDMA Read operation directly by native Transport.
// Providers should avoid resource allocation as part of
// dat_ep_post_rdma_read() to ensure that this operation is nonblocking and
// thread safe for an UpCall."
func TestPostRDMAReadAllocatesNothing(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	iov := []LMRTriplet{c.lmr.Triplet(0, 256)}
	remote := s.lmr.RMRTriplet(0, 256)
	round := func() {
		if err := c.ep.PostRDMARead(iov, 1, remote, CompletionDefault); err != nil {
			panic(err)
		}
		for {
			if _, err := c.req.Dequeue(); err == nil {
				return
			}
		}
	}
	round()
	require.Zero(t, testing.AllocsPerRun(50, round))
}

// "The operation is valid for the Endpoint in the DAT_EP_STATE_CONNECTED and
// DAT_EP_STATE_DISCONNECTED states. If the operation returns successfully
// for the Endpoint in the DAT_EP_STATE_DISCONNECTED state, the posted RDMA
// Read is immediately flushed to request_evd_handle." and
// "DAT_INVALID_STATE ... Endpoint was not in the DAT_EP_STATE_CONNECTED or
// DAT_EP_STATE_DISCONNECTED state."
func TestPostRDMAReadStates(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	lone := newSide(t, ia, pz, pairOpts{}, nil, nil)
	err = lone.ep.PostRDMARead([]LMRTriplet{lone.lmr.Triplet(0, 8)}, 1, lone.lmr.RMRTriplet(0, 8), CompletionDefault)
	requireCode(t, err, InvalidState|InvalidStateEPUnconnected)

	p := newPairIn(t, ia, pz, pairOpts{})
	disconnectPair(t, p)
	c, s := p.client, p.server
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8)}, 8, s.lmr.RMRTriplet(0, 8), CompletionDefault))
	d := waitDTO(t, c.req)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(8), d.Cookie)
	require.Equal(t, DTORDMARead, d.Op)
}

// "DAT_LENGTH_ERROR The size of the receiving buffer is too small for sending
// buffer data. The size of the local buffer is too small for the data of the
// remote buffer."
func TestPostRDMAReadLengthError(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needReadIOV(t, c, 2)
	err := c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8), c.lmr.Triplet(100, 8)}, 1, s.lmr.RMRTriplet(0, 17), CompletionDefault)
	requireCode(t, err, LengthError)
	requireEmpty(t, c.req)
	// Exactly enough room is fine; so is a zero-length read.
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8), c.lmr.Triplet(100, 9)}, 2, s.lmr.RMRTriplet(0, 17), CompletionDefault))
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	// RDMA write has the mirror rule: the remote buffer must hold the data.
	requireCode(t, c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(0, 9)}, 1, s.lmr.RMRTriplet(0, 8), CompletionDefault), LengthError)
}

// "DAT_INSUFFICIENT_RESOURCES The operation failed due to resource
// limitations." The send queue holds what the EP got for the 1 request it
// asked for (2 on Linux 6.12's Soft-RoCE); the read after those fails.
func TestPostRDMAReadQueueFull(t *testing.T) {
	p, room := newPairSendQueue(t, 1)
	c, s := p.client, p.server
	iov := []LMRTriplet{c.lmr.Triplet(0, 8)}
	for i := range room {
		require.NoError(t, c.ep.PostRDMARead(iov, uint64(i+1), s.lmr.RMRTriplet(0, 8), CompletionDefault))
	}
	requireCode(t, c.ep.PostRDMARead(iov, uint64(room+1), s.lmr.RMRTriplet(0, 8), CompletionDefault), InsufficientResources)
	for i := range room {
		require.Equal(t, uint64(i+1), waitDTO(t, c.req).Cookie)
	}
	requireEmpty(t, c.req)
}

// "DAT_INVALID_PARAMETER Invalid parameter. For example, one of the IOV
// segments pointed to a memory outside its LMR." and "DAT_INVALID_HANDLE The
// ep_handle parameter is invalid."
func TestPostRDMAReadInvalidArguments(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	n := len(c.lmr.Bytes())
	remote := s.lmr.RMRTriplet(0, 8)
	requireCode(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(n-4, 8)}, 1, remote, CompletionDefault), InvalidParameter|InvalidArg3)
	tooMany := make([]LMRTriplet, c.ep.attr.MaxRDMAReadIOV+1)
	requireCode(t, c.ep.PostRDMARead(tooMany, 1, remote, CompletionDefault), InvalidParameter|InvalidArg2)
	requireCode(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, remote, 0x40), InvalidParameter|InvalidArg6)
	var nilEP *EP
	requireCode(t, nilEP.PostRDMARead(nil, 1, remote, CompletionDefault), InvalidHandle|InvalidHandleEP)
	requireEmpty(t, c.req)
}

// "DAT_PROTECTION_VIOLATION Protection violation for local or remote memory
// access. Protection Zone mismatch between either an LMR of one of the
// local_iov segments and the local Endpoint or the rmr_context and the remote
// Endpoint." The local mismatch is found at post time; the remote one can
// only be found by the peer's hardware and is reported in the completion
// (DAT_DTO_ERR_REMOTE_ACCESS), which breaks the connection.
func TestPostRDMAReadProtectionViolation(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	foreign := foreignLMR(t, p.ia)
	requireCode(t, c.ep.PostRDMARead([]LMRTriplet{foreign.Triplet(0, 8)}, 1, s.lmr.RMRTriplet(0, 8), CompletionDefault), ProtectionViolation)
	requireEmpty(t, c.req)
	// The remote buffer belongs to another PZ than the server EP.
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8)}, 2, foreign.RMRTriplet(0, 8), CompletionDefault))
	d := waitDTO(t, c.req)
	require.Equal(t, uint64(2), d.Cookie)
	if onSIW(p.ia) {
		siwRemoteAccessError(t, c, d)
		return
	}
	require.Equal(t, DTOErrRemoteAccess, d.Status)
	require.Equal(t, EventConnectionBroken, waitEvent(t, c.conn).Number)
}

// siwRemoteAccessError checks what soft-iWARP makes of an RDMA read the
// peer refuses: the peer's siw sends a TERMINATE and closes the stream;
// the reader's siw takes the TERMINATE without completing the read with
// its cause (siw_proc_terminate only logs it) and closes its side, which
// flushes the read, and the connection manager reports the end of the
// connection. So the read is flushed, never a remote access error.
func siwRemoteAccessError(t *testing.T, c side, d DTOCompletionData) {
	t.Helper()
	require.Equal(t, DTOErrFlushed, d.Status, "siw: the read is flushed, its cause not reported")
	ev := waitEvent(t, c.conn).Number
	t.Logf("siw: the connection ends with %v", ev)
	require.Contains(t, []EventNumber{EventConnectionDisconnected, EventConnectionBroken}, ev)
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
}

// "DAT_PRIVILEGES_VIOLATION Privileges violation for local or remote memory
// access. Either one of the LMRs used in local_iov is invalid or does not have
// the local write privileges, or rmr_context does not have the remote read
// privileges." As for protection, the remote privilege is checked by the
// peer's hardware.
func TestPostRDMAReadPrivilegesViolation(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	readOnly, err := p.ia.AllocLMR(p.pz, 4096, MemPrivLocalRead|MemPrivRemoteRead)
	require.NoError(t, err)
	requireCode(t, c.ep.PostRDMARead([]LMRTriplet{readOnly.Triplet(0, 8)}, 1, s.lmr.RMRTriplet(0, 8), CompletionDefault), PrivilegesViolation|PrivilegesWrite)
	requireCode(t, c.ep.PostRDMARead([]LMRTriplet{{VirtualAddress: 1 << 20, SegmentLength: 8, LMRContext: 0x12345}}, 1, s.lmr.RMRTriplet(0, 8), CompletionDefault), PrivilegesViolation)
	requireEmpty(t, c.req)
	noRemote, err := p.ia.AllocLMR(p.pz, 4096, MemPrivLocalRead|MemPrivLocalWrite)
	require.NoError(t, err)
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 8)}, 2, noRemote.RMRTriplet(0, 8), CompletionDefault))
	d := waitDTO(t, c.req)
	if onSIW(p.ia) {
		// Soft-iWARP (Linux 6.1) serves an RDMA read without looking at
		// the source's remote read right: siw_qp_sq_process checks a read
		// response's memory with no permission at all
		// (siw_check_sgl_tx(pd, wqe, 0)). The read succeeds; nothing on
		// the reader's side can tell. migrating-from-c.md, On iWARP.
		require.Equal(t, DTOSuccess, d.Status, "siw does not check the remote read right")
		requireEmpty(t, c.conn)
		return
	}
	require.Equal(t, DTOErrRemoteAccess, d.Status)
	require.Equal(t, EventConnectionBroken, waitEvent(t, c.conn).Number)
	st, _, _, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
}

// USAGE: "If connection was established without outstanding RDMA Read
// attributes matching on Endpoints on both sides ..., connection is broken
// when the number of incoming RDMA Read exceeds the outstanding RDMA Read
// incoming attribute of the Endpoint." The library negotiates the outbound
// limit down to the peer's inbound one when it connects, so posting many more
// reads than either limit at once only queues them.
func TestPostRDMAReadOutstandingLimits(t *testing.T) {
	ca := DefaultEPAttr()
	ca.MaxRDMAReadOut = 4
	sa := DefaultEPAttr()
	sa.MaxRDMAReadIn = 1
	p := newPair(t, pairOpts{clientAttr: &ca, serverAttr: &sa})
	c, s := p.client, p.server
	for i := 0; i < 16; i++ {
		s.lmr.Bytes()[i] = byte('a' + i)
	}
	for i := 0; i < 16; i++ {
		require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(i, 1)}, uint64(i), s.lmr.RMRTriplet(i, 1), CompletionDefault))
	}
	for i := 0; i < 16; i++ {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, uint64(i), d.Cookie)
	}
	require.Equal(t, "abcdefghijklmnop", string(c.lmr.Bytes()[:16]))
}

// RDMA write, the companion of RDMA read, with concurrent posters.
func TestPostRDMAWrite(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	for i := 0; i < 8; i++ {
		fill(c.lmr.Bytes()[i*64:(i+1)*64], byte('0'+i))
	}
	var g errgroup.Group
	for i := 0; i < 8; i++ {
		g.Go(func() error {
			return c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(i*64, 64)}, uint64(i), s.lmr.RMRTriplet(1024+i*64, 64), CompletionDefault)
		})
	}
	require.NoError(t, g.Wait())
	seen := map[uint64]bool{}
	for i := 0; i < 8; i++ {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, DTORDMAWrite, d.Op)
		require.Equal(t, uint64(64), d.TransferredLength)
		seen[d.Cookie] = true
	}
	require.Len(t, seen, 8)
	requireLanded(t, p.ia, c.lmr.Bytes()[:8*64], s.lmr.Bytes()[1024:1024+8*64], "RDMA writes")
	requireEmpty(t, s.recv)
}

// RDMA works in both directions: the passive side reads and writes the
// active side's memory too.
func TestRDMAFromPassiveSide(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	copy(c.lmr.Bytes()[100:], "client data")
	require.NoError(t, s.ep.PostRDMARead([]LMRTriplet{s.lmr.Triplet(0, 11)}, 1, c.lmr.RMRTriplet(100, 11), 0))
	require.Equal(t, DTOSuccess, waitDTO(t, s.req).Status)
	require.Equal(t, "client data", string(s.lmr.Bytes()[:11]))
	copy(s.lmr.Bytes()[200:], "server data")
	require.NoError(t, s.ep.PostRDMAWrite([]LMRTriplet{s.lmr.Triplet(200, 11)}, 2, c.lmr.RMRTriplet(300, 11), 0))
	require.Equal(t, DTOSuccess, waitDTO(t, s.req).Status)
	requireLanded(t, p.ia, []byte("server data"), c.lmr.Bytes()[300:311], "RDMA write from the passive side")
}

// An adapter whose max_sge_rd is below its max_sge (siw: 1 and 6) writes
// only the segments it reads into: an RDMA read over more would complete
// with its whole length and leave the rest unwritten. The EP's read IOV is
// bounded by max_sge_rd: the device's where it is below max_sge, else
// faked at 2 on the IA.
func TestRDMAReadIOVBoundedByMaxSGERd(t *testing.T) {
	ia := openIA(t)
	require.Greater(t, ia.devAttr.MaxSGE, 2, "the device takes more than 2 segments")
	if ia.devAttr.MaxSGERd == 0 || ia.devAttr.MaxSGERd >= ia.devAttr.MaxSGE {
		ia.devAttr.MaxSGERd = 2
	}
	k := ia.devAttr.MaxSGERd
	a, _, err := ia.Query()
	require.NoError(t, err)
	require.Equal(t, k, a.MaxIOVSegmentsPerRDMARead)

	pz := mustPZ(t, ia)
	p := newPairIn(t, ia, pz, pairOpts{})
	c, s := p.client, p.server
	q, err := c.ep.Query()
	require.NoError(t, err)
	require.Equal(t, k, q.Attr.MaxRDMAReadIOV, "the default read IOV is the device's")
	require.GreaterOrEqual(t, q.Attr.MaxRequestIOV, k+2, "the other IOVs keep theirs")

	attr := DefaultEPAttr()
	attr.MaxRDMAReadIOV = k + 1
	_, err = ia.CreateEP(pz, c.req, c.req, c.conn, &attr)
	requireCode(t, err, InvalidParameter|InvalidArg6, "a read IOV over max_sge_rd")

	over := make([]LMRTriplet, k+1) // 8 bytes every 64
	for i := range over {
		over[i] = c.lmr.Triplet(i*64, 8)
	}
	requireCode(t, c.ep.PostRDMARead(over, 1, s.lmr.RMRTriplet(0, 8*(k+1)), CompletionDefault), InvalidParameter|InvalidArg2)
	fill(s.lmr.Bytes()[:8*k], 0x5a)
	require.NoError(t, c.ep.PostRDMARead(over[:k], 2, s.lmr.RMRTriplet(0, 8*k), CompletionDefault))
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 2, Status: DTOSuccess, TransferredLength: uint64(8 * k), Op: DTORDMARead}, waitDTO(t, c.req))
	for i := range k {
		require.Equal(t, bytes.Repeat([]byte{0x5a}, 8), c.lmr.Bytes()[i*64:i*64+8], "segment %d is written", i)
	}
}

// A suppressed RDMA read is done once a DTO posted after it completes: its
// buffer holds the data then, as the completion order of the request queue
// promises. Soft-iWARP completes an RDMA write as soon as it has left, while
// the read before it still waits for its response (IA.completesInOrder):
// udat asks the device for the read's completion and reports only the
// later one. The event is taken the moment it is there, and the end of the
// buffer, which the read writes last, checked first.
func TestPostRDMAReadSuppressedDoneBeforeLaterCompletion(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	const size = 4 << 20
	src, err := p.ia.AllocLMR(p.pz, size, MemPrivAll)
	require.NoError(t, err)
	dst, err := p.ia.AllocLMR(p.pz, size, MemPrivAll)
	require.NoError(t, err)
	for round := range 3 {
		for i := range src.Bytes() {
			src.Bytes()[i] = byte(i*7+round) | 1
		}
		clear(dst.Bytes())
		require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{dst.Triplet(0, size)}, 1, src.RMRTriplet(0, size), CompletionSuppress))
		require.NoError(t, c.ep.PostRDMAWrite(nil, 2, s.lmr.RMRTriplet(0, 0), CompletionDefault))
		deadline := time.Now().Add(20 * time.Second)
		var ev Event
		for {
			if ev, err = c.req.Dequeue(); err == nil {
				break
			}
			require.ErrorIs(t, err, ErrQueueEmpty)
			require.True(t, time.Now().Before(deadline), "no completion")
		}
		tail := bytes.Equal(src.Bytes()[size-4096:], dst.Bytes()[size-4096:])
		require.Equal(t, uint64(2), ev.DTO.Cookie, "the suppressed read reports nothing")
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.True(t, tail, "round %d: the end of the read's data is there when the write after it completes", round)
		require.True(t, bytes.Equal(src.Bytes(), dst.Bytes()), "round %d: the read's data is there", round)
		requireEmpty(t, c.req)
	}
}

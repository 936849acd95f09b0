//go:build linux && cgo

package udat

// Tests of dat_ep_post_send(3DAT). Each test cites the paragraph of the man
// page (shared/seeds, DAT 1.2) it checks.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// "num_segments: Number of lmr_triplets in local_iov. Can be 0 for 0 size
// message." and "local_iov: ... Can be NULL for 0 size message."
func TestPostSendZeroSizeMessage(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 2, 1)
	require.NoError(t, c.ep.PostSend(nil, 10, CompletionDefault))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{}, 11, CompletionDefault))
	for _, cookie := range []uint64{10, 11} {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, cookie, d.Cookie)
		require.Equal(t, uint64(0), d.TransferredLength)
		d = waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, uint64(0), d.TransferredLength)
	}
}

// "user_cookie: User-provided cookie that is returned to the Consumer at the
// completion of the send. Can be NULL." and "The user_cookie allows
// Consumers to have unique identifiers for each DTO. ... There is no
// requirement on the Consumer that the value user_cookie should be unique for
// each DTO. The user_cookie is returned to the Consumer in the Completion
// event for the posted Send."
func TestPostSendCookieReturned(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	cookies := []uint64{0, 42, 42, ^uint64(0), 7, 0}
	postRecvs(t, s, 0, 64, len(cookies), 100)
	for i, ck := range cookies {
		require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(i, 1)}, ck, CompletionDefault))
	}
	for _, ck := range cookies {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, ck, d.Cookie, "cookies come back unchanged, once each, in posting order")
		require.Equal(t, c.ep, d.EP)
		require.Equal(t, DTOSend, d.Op)
		require.Equal(t, uint64(1), d.TransferredLength)
	}
	for i := range cookies {
		d := waitDTO(t, s.recv)
		require.Equal(t, uint64(100+i), d.Cookie)
		require.Equal(t, DTOReceive, d.Op)
	}
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
}

// "DAT_COMPLETION_SUPPRESS_FLAG 0x01 Suppress successful Completion."
func TestPostSendSuppressFlag(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 3, 1)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionSuppress))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 2, CompletionSuppress))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 3, CompletionDefault))
	for i := 1; i <= 3; i++ {
		d := waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status, "all three sends arrive")
	}
	d := waitDTO(t, c.req)
	require.Equal(t, uint64(3), d.Cookie, "only the unsuppressed send reports")
	requireEmpty(t, c.req)
	// The suppressed sends' slots were reclaimed: the queue is idle.
	_, _, reqIdle, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.True(t, reqIdle)
}

// "DAT_COMPLETION_UNSIGNALLED_FLAG 0x04 Non-notification completion. Local
// Endpoint must be configured for Notification Suppression." and "The
// value of DAT_COMPLETION_UNSIGNALLED_FLAG is only valid if the Endpoint
// Request Completion Flags DAT_COMPLETION_UNSIGNALLED_FLAG. Otherwise,
// DAT_INVALID_PARAMETER is returned."
func TestPostSendUnsignalledFlag(t *testing.T) {
	attr := DefaultEPAttr()
	attr.RequestCompletionFlags = CompletionUnsignalled
	p := newPair(t, pairOpts{serverAttr: &attr})
	c, s := p.client, p.server
	postRecvs(t, c, 0, 64, 4, 1)
	// The client EP was not configured for unsignalled completions.
	err := c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionUnsignalled)
	requireCode(t, err, InvalidParameter|InvalidArg5)
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
	// The server EP was.
	require.NoError(t, s.ep.PostSend([]LMRTriplet{s.lmr.Triplet(0, 8)}, 1, CompletionUnsignalled))
	require.NoError(t, s.ep.PostSend([]LMRTriplet{s.lmr.Triplet(0, 8)}, 2, CompletionDefault))
	d := waitDTO(t, s.req)
	require.Equal(t, uint64(2), d.Cookie)
	requireEmpty(t, s.req)
	waitDTO(t, c.recv)
	waitDTO(t, c.recv)
}

// "DAT_COMPLETION_SOLICITED_WAIT_FLAG 0x02 Request for notification
// completion for matching receive on the other side of the connection."
// The receiver's EP is configured for solicited wait: a goroutine waiting on
// its receive EVD is woken by the solicited send, not by the one before it.
func TestPostSendSolicitedWaitFlag(t *testing.T) {
	p := newRecvFlagsPair(t, CompletionSolicitedWait, 2)
	needSolicitedNotify(t, p.ia)
	c, s := p.client, p.server
	done := waitInBackground(s.recv, 1)
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 1, CompletionDefault))
	waitDTO(t, c.req)
	requireAsleep(t, done, "an unsolicited receive woke the waiter")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8)}, 2, CompletionSolicitedWait))
	waitDTO(t, c.req)
	r := requireWoken(t, done, "the solicited receive did not wake the waiter")
	require.Equal(t, uint64(1), r.ev.DTO.Cookie, "events stay in order")
	require.Equal(t, 1, r.nmore, "the solicited receive is queued behind")
	d := waitDTO(t, s.recv)
	require.Equal(t, uint64(2), d.Cookie)
}

// "DAT_COMPLETION_BARRIER_FENCE_FLAG 0x08 Request for Barrier Fence." A fenced
// send does not start before the RDMA read posted ahead of it has completed,
// so it sends the data that read fetched.
func TestPostSendBarrierFenceFlag(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	copy(s.lmr.Bytes()[4096:], "fetched-by-rdma-read")
	fill(c.lmr.Bytes()[:20], 'z')
	postRecvs(t, s, 0, 64, 1, 1)
	require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, 20)}, 1, s.lmr.RMRTriplet(4096, 20), CompletionDefault))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 20)}, 2, CompletionBarrierFence))
	d := waitDTO(t, c.req)
	require.Equal(t, DTORDMARead, d.Op)
	require.Equal(t, DTOSuccess, d.Status)
	d = waitDTO(t, c.req)
	require.Equal(t, DTOSend, d.Op)
	require.Equal(t, DTOSuccess, d.Status)
	waitDTO(t, s.recv)
	require.Equal(t, "fetched-by-rdma-read", string(s.lmr.Bytes()[:20]))

	// A long read, and a fenced send of its last bytes, small enough to
	// go inline were it not fenced: the send carries what the read wrote.
	const n = 32 << 10
	for round := uint64(0); round < 10; round++ {
		tail := fmt.Sprintf("read-tail-%02d-xxxxxxx", round)
		fill(s.lmr.Bytes()[32<<10:64<<10], 'r')
		copy(s.lmr.Bytes()[64<<10-20:], tail)
		fill(c.lmr.Bytes()[:n], 'z')
		postRecvs(t, s, 0, 64, 1, 10+round)
		require.NoError(t, c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(0, n)}, 3, s.lmr.RMRTriplet(32<<10, n), CompletionDefault))
		require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(n-20, 20)}, 4, CompletionBarrierFence))
		require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
		require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
		require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
		require.Equal(t, tail, string(s.lmr.Bytes()[:20]), "round %d", round)
	}
}

// "The dat_ep_post_send() function requests a transfer of all the data from
// the local_iov over the connection of the ep_handle Endpoint to the remote
// side." and "The local_iov segments are traversed in the I/O Vector order
// until all the data is transferred."
func TestPostSendGathersIOVInOrder(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	other, err := p.ia.CreateLMR(p.pz, make([]byte, 4096), MemPrivLocalRead|MemPrivLocalWrite, VATypeVA)
	require.NoError(t, err)
	copy(c.lmr.Bytes()[1000:], "first-")
	copy(other.Bytes()[10:], "second-")
	copy(c.lmr.Bytes()[5:], "third")
	postRecvs(t, s, 0, 1024, 1, 1)
	iov := []LMRTriplet{c.lmr.Triplet(1000, 6), other.Triplet(10, 7), {}, c.lmr.Triplet(5, 5)}
	require.NoError(t, c.ep.PostSend(iov, 1, CompletionDefault))
	d := waitDTO(t, c.req)
	require.Equal(t, uint64(18), d.TransferredLength)
	d = waitDTO(t, s.recv)
	require.Equal(t, uint64(18), d.TransferredLength)
	require.Equal(t, "first-second-third", string(s.lmr.Bytes()[:18]))
}

// "A Consumer cannot modify the local_iov or its content until the DTO is
// completed. ... Providers that allow Consumers to get ownership of the
// local_iov back after the dat_ep_post_send() returns should document this
// behavior": this provider copies the I/O vector, so the slice (not the
// memory it names) may be reused at once.
func TestPostSendIOVReusableAfterReturn(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	copy(c.lmr.Bytes(), "payload!")
	postRecvs(t, s, 0, 64, 1, 1)
	iov := []LMRTriplet{c.lmr.Triplet(0, 8)}
	require.NoError(t, c.ep.PostSend(iov, 1, CompletionDefault))
	iov[0] = LMRTriplet{VirtualAddress: 1, SegmentLength: 1 << 30, LMRContext: 0xdead}
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	require.Equal(t, uint64(8), waitDTO(t, s.recv).TransferredLength)
	require.Equal(t, "payload!", string(s.lmr.Bytes()[:8]))
}

// "The DAT_SUCCESS return of the dat_ep_post_send() is at least the
// equivalent of posting a Send operation directly by native Transport.
// Providers should avoid resource allocation as part of dat_ep_post_send()
// to ensure that this operation is nonblocking and thread safe for an
// UpCall." Posting and reaping completions allocate nothing.
func TestPostSendAllocatesNothing(t *testing.T) {
	p := newPair(t, pairOpts{})
	round := sendRound(p, func(e *EVD) error {
		_, err := e.Dequeue()
		return err
	})
	round()
	allocs := testing.AllocsPerRun(50, round)
	require.Zero(t, allocs, "allocations per post+completion round")
}

// "The operation is valid for the Endpoint in the DAT_EP_STATE_CONNECTED and
// DAT_EP_STATE_DISCONNECTED states. If the operation returns successfully
// for the Endpoint in the DAT_EP_STATE_DISCONNECTED state, the posted Send is
// immediately flushed to request_evd_handle." and "DAT_INVALID_STATE ...
// Endpoint was not in the DAT_EP_STATE_CONNECTED or
// DAT_EP_STATE_DISCONNECTED state."
func TestPostSendStates(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	lone := newSide(t, ia, pz, pairOpts{}, nil, nil)
	err = lone.ep.PostSend([]LMRTriplet{lone.lmr.Triplet(0, 8)}, 1, CompletionDefault)
	requireCode(t, err, InvalidState|InvalidStateEPUnconnected)
	requireEmpty(t, lone.req)

	p := newPairIn(t, ia, pz, pairOpts{})
	postRecvs(t, p.server, 0, 64, 1, 1)
	disconnectPair(t, p)
	st, _, _, err := p.client.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateDisconnected, st)
	require.NoError(t, p.client.ep.PostSend([]LMRTriplet{p.client.lmr.Triplet(0, 8)}, 77, CompletionSuppress))
	d := waitDTO(t, p.client.req)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(77), d.Cookie)
	require.Equal(t, DTOSend, d.Op)
	// The server's pre-posted receive is flushed by the disconnect; no
	// message arrived.
	d = waitDTO(t, p.server.recv)
	require.Equal(t, DTOErrFlushed, d.Status)
	requireEmpty(t, p.server.recv)
}

// "DAT_INSUFFICIENT_RESOURCES The operation failed due to resource
// limitations." A send queue full of DTOs whose completions were not reaped
// refuses the next one, and nothing is posted.
func TestPostSendQueueFull(t *testing.T) {
	attr := DefaultEPAttr()
	attr.MaxRequestDTOs = 2
	p := newPair(t, pairOpts{clientAttr: &attr})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 3, 1)
	iov := []LMRTriplet{c.lmr.Triplet(0, 8)}
	require.NoError(t, c.ep.PostSend(iov, 1, CompletionDefault))
	require.NoError(t, c.ep.PostSend(iov, 2, CompletionDefault))
	requireCode(t, c.ep.PostSend(iov, 3, CompletionDefault), InsufficientResources)
	waitDTO(t, s.recv)
	waitDTO(t, s.recv)
	requireEmpty(t, s.recv)
	require.Equal(t, uint64(1), waitDTO(t, c.req).Cookie)
	require.Equal(t, uint64(2), waitDTO(t, c.req).Cookie)
	require.NoError(t, c.ep.PostSend(iov, 3, CompletionDefault))
	require.Equal(t, uint64(3), waitDTO(t, c.req).Cookie)
	waitDTO(t, s.recv)
}

// "DAT_INVALID_PARAMETER Invalid parameter. For example, one of the IOV
// segments pointed to a memory outside its LMR." Also: more segments than
// the EP allows, and unknown completion flags. Nothing is posted.
func TestPostSendInvalidParameter(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 1, 1)
	l := c.lmr
	n := len(l.Bytes())
	key := l.Context()
	va := l.Triplet(0, 0).VirtualAddress
	for name, iov := range map[string][]LMRTriplet{
		"starts before":      {{VirtualAddress: va - 1, SegmentLength: 8, LMRContext: key}},
		"ends after":         {l.Triplet(n-4, 8)},
		"starts after":       {l.Triplet(n, 1)},
		"wraps around":       {{VirtualAddress: ^uint64(0) - 2, SegmentLength: 8, LMRContext: key}},
		"second segment bad": {l.Triplet(0, 8), l.Triplet(n-1, 2)},
		"whole LMR plus one": {l.Triplet(0, n+1)},
		"far beyond the LMR": {{VirtualAddress: va + 1<<40, SegmentLength: 1, LMRContext: key}},
	} {
		requireCode(t, c.ep.PostSend(iov, 1, CompletionDefault), InvalidParameter|InvalidArg3, name)
	}
	tooMany := make([]LMRTriplet, c.ep.attr.MaxRequestIOV+1)
	for i := range tooMany {
		tooMany[i] = l.Triplet(i, 1)
	}
	requireCode(t, c.ep.PostSend(tooMany, 1, CompletionDefault), InvalidParameter|InvalidArg2)
	for _, f := range []CompletionFlags{CompletionEVDThreshold, 0x20, 0x40, 0x80000000} {
		requireCode(t, c.ep.PostSend([]LMRTriplet{l.Triplet(0, 8)}, 1, f), InvalidParameter|InvalidArg5, "flags %#x", f)
	}
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
	// The whole LMR is fine.
	require.NoError(t, c.ep.PostSend([]LMRTriplet{l.Triplet(0, 64)}, 1, CompletionDefault))
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
}

// "DAT_INVALID_HANDLE The ep_handle parameter is invalid."
func TestPostSendInvalidHandle(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	sd := newSide(t, ia, pz, pairOpts{}, nil, nil)
	iov := []LMRTriplet{sd.lmr.Triplet(0, 8)}
	var nilEP *EP
	requireCode(t, nilEP.PostSend(iov, 1, CompletionDefault), InvalidHandle|InvalidHandleEP)
	require.NoError(t, sd.ep.Free())
	requireCode(t, sd.ep.PostSend(iov, 1, CompletionDefault), InvalidHandle|InvalidHandleEP)
	requireEmpty(t, sd.req)
}

// "DAT_PROTECTION_VIOLATION Protection violation for local or remote memory
// access. Protection Zone mismatch between an LMR of one of the local_iov
// segments and the local Endpoint."
func TestPostSendProtectionViolation(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 1, 1)
	foreign := foreignLMR(t, p.ia)
	requireCode(t, c.ep.PostSend([]LMRTriplet{foreign.Triplet(0, 8)}, 1, CompletionDefault), ProtectionViolation)
	requireCode(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 8), foreign.Triplet(0, 8)}, 1, CompletionDefault), ProtectionViolation)
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
}

// "DAT_PRIVILEGES_VIOLATION Privileges violation for local or remote memory
// access. One of the LMRs used in local_iov was either invalid or did not
// have the local read privileges."
func TestPostSendPrivilegesViolation(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 64, 1, 1)
	writeOnly, err := p.ia.AllocLMR(p.pz, 4096, MemPrivLocalWrite)
	require.NoError(t, err)
	freed, err := p.ia.AllocLMR(p.pz, 4096, MemPrivAll)
	require.NoError(t, err)
	ft := freed.Triplet(0, 8)
	require.NoError(t, freed.Free())
	for name, c := range map[string]struct {
		iov  []LMRTriplet
		want Return
	}{
		"no local read":   {[]LMRTriplet{writeOnly.Triplet(0, 8)}, PrivilegesViolation | PrivilegesRead},
		"freed LMR":       {[]LMRTriplet{ft}, PrivilegesViolation},
		"unknown context": {[]LMRTriplet{{VirtualAddress: 4096, SegmentLength: 8, LMRContext: 0x7fffff00}}, PrivilegesViolation},
	} {
		requireCode(t, p.client.ep.PostSend(c.iov, 1, CompletionDefault), c.want, name)
	}
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
}

// USAGE: "For best Send operation performance, the Consumer should align each
// buffer segment of local_iov to the Optimal Buffer Alignment attribute of the
// Provider." AllocLMR memory is page aligned, which satisfies the provider's
// alignment and DAT_OPTIMAL_ALIGNMENT; unaligned segments work too.
func TestPostSendAlignment(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	_, pa, err := p.ia.Query()
	require.NoError(t, err)
	va := c.lmr.Triplet(0, 0).VirtualAddress
	require.Zero(t, va%uint64(pa.OptimalBufferAlignment))
	require.Zero(t, va%OptimalAlignment)
	postRecvs(t, s, 0, 64, 1, 1)
	copy(c.lmr.Bytes()[3:], "odd")
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(3, 3)}, 1, CompletionDefault))
	waitDTO(t, c.req)
	require.Equal(t, uint64(3), waitDTO(t, s.recv).TransferredLength)
	require.Equal(t, "odd", string(s.lmr.Bytes()[:3]))
}

//go:build linux && cgo

package udat

// Tests of EP.PostRequests and EP.PostRecvs, the batch forms of the post
// calls: the same checks and completions as one call per DTO, one provider
// call per batch, and a count of what was posted when a request is refused.

import (
	"bytes"
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// cgoCalls reads the runtime's count of calls from Go into C.
func cgoCalls() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// crossings is how many cgo calls a post makes that takes n through the
// verbs: none where the queue is written from Go (cverbs' Soft-RoCE path).
func crossings(direct bool, n uint64) uint64 {
	if direct {
		return 0
	}
	return n
}

// cgoCallsOf returns the calls from Go into C made while f ran. The runtime
// counts the whole process's calls, and the IA's event loops make some of
// their own now and then: tests take the fewest over several runs.
func cgoCallsOf(f func()) uint64 {
	c0 := cgoCalls()
	f()
	return cgoCalls() - c0
}

// A batch of sends, RDMA writes and RDMA reads, and a batch of receives:
// each DTO completes once, in posting order, with its own cookie, and moves
// its own bytes.
func TestPostRequestsMixedBatch(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	cb, sb := c.lmr.Bytes(), s.lmr.Bytes()
	for i := range 4 {
		fill(cb[i*64:(i+1)*64], byte('a'+i))
	}
	fill(sb[8192:8256], 'R')

	recvs := make([]Recv, 2)
	for i := range recvs {
		recvs[i] = Recv{LocalIOV: []LMRTriplet{s.lmr.Triplet(i*64, 64)}, Cookie: uint64(100 + i)}
	}
	n, err := s.ep.PostRecvs(recvs)
	require.NoError(t, err)
	require.Equal(t, len(recvs), n)

	reqs := []Request{
		{Op: DTOSend, LocalIOV: []LMRTriplet{c.lmr.Triplet(0, 64)}, Cookie: 1},
		{Op: DTORDMAWrite, LocalIOV: []LMRTriplet{c.lmr.Triplet(64, 64)}, Cookie: 2, Remote: s.lmr.RMRTriplet(4096, 64)},
		{Op: DTOSend, LocalIOV: []LMRTriplet{c.lmr.Triplet(128, 32), c.lmr.Triplet(192, 32)}, Cookie: 3},
		{Op: DTORDMARead, LocalIOV: []LMRTriplet{c.lmr.Triplet(1024, 64)}, Cookie: 4, Remote: s.lmr.RMRTriplet(8192, 64)},
	}
	n, err = c.ep.PostRequests(reqs)
	require.NoError(t, err)
	require.Equal(t, len(reqs), n)

	for _, r := range reqs {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, r.Cookie, d.Cookie)
		require.Equal(t, r.Op, d.Op)
		require.Equal(t, uint64(64), d.TransferredLength)
	}
	for i := range recvs {
		d := waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status)
		require.Equal(t, uint64(100+i), d.Cookie)
		require.Equal(t, uint64(64), d.TransferredLength)
	}
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
	require.Equal(t, cb[0:64], sb[0:64], "first send")
	require.Equal(t, cb[64:128], sb[4096:4160], "RDMA write")
	require.Equal(t, append(bytes.Clone(cb[128:160]), cb[192:224]...), sb[64:128], "second send, gathered")
	require.Equal(t, sb[8192:8256], cb[1024:1088], "RDMA read")
}

// A request that fails its checks is not posted, nor is any after it; the
// ones before it are, and complete as usual. The error is the one the
// single call would return.
func TestPostRequestsStopsAtFirstRefused(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	good := []LMRTriplet{c.lmr.Triplet(0, 8)}
	cases := []struct {
		name string
		bad  Request
		code Return
	}{
		{"segment outside its LMR", Request{Op: DTORDMAWrite, LocalIOV: []LMRTriplet{c.lmr.Triplet(64<<10-4, 8)}, Remote: s.lmr.RMRTriplet(0, 64)}, InvalidParameter | InvalidArg3},
		{"unknown LMR context", Request{Op: DTOSend, LocalIOV: []LMRTriplet{{LMRContext: 0xdead, VirtualAddress: 1, SegmentLength: 1}}}, PrivilegesViolation},
		{"RDMA read into a short buffer", Request{Op: DTORDMARead, LocalIOV: good, Remote: s.lmr.RMRTriplet(0, 64)}, LengthError},
		{"unknown flag", Request{Op: DTORDMAWrite, LocalIOV: good, Remote: s.lmr.RMRTriplet(0, 64), Flags: 0x100}, InvalidParameter | InvalidArg6},
		{"not a request", Request{Op: DTOReceive, LocalIOV: good}, InvalidParameter | InvalidArg2},
	}
	for i, tc := range cases {
		reqs := []Request{
			{Op: DTORDMAWrite, LocalIOV: good, Cookie: uint64(10 * i), Remote: s.lmr.RMRTriplet(0, 64)},
			{Op: DTORDMAWrite, LocalIOV: good, Cookie: uint64(10*i + 1), Remote: s.lmr.RMRTriplet(0, 64)},
			tc.bad,
			{Op: DTORDMAWrite, LocalIOV: good, Cookie: uint64(10*i + 3), Remote: s.lmr.RMRTriplet(0, 64)},
		}
		n, err := c.ep.PostRequests(reqs)
		require.Equal(t, 2, n, tc.name)
		requireCode(t, err, tc.code, tc.name)
		for k := range 2 {
			d := waitDTO(t, c.req)
			require.Equal(t, DTOSuccess, d.Status, tc.name)
			require.Equal(t, uint64(10*i+k), d.Cookie, tc.name)
		}
		requireEmpty(t, c.req)
	}
}

// More requests than the send queue has room for: the ones that fit are
// posted, the next gets DAT_INSUFFICIENT_RESOURCES. The room is what the
// EP got for the 4 it asked for (6 on Linux 6.12's Soft-RoCE). The
// watchdog may take completions between two provider calls of the batch
// (one per room's worth) and so make room for a few more: at least the
// room is posted, never the whole batch.
func TestPostRequestsQueueFull(t *testing.T) {
	p, room := newPairSendQueue(t, 4)
	c, s := p.client, p.server
	reqs := make([]Request, room+64)
	for i := range reqs {
		reqs[i] = Request{Op: DTORDMAWrite, LocalIOV: []LMRTriplet{c.lmr.Triplet(0, 8)}, Cookie: uint64(i), Remote: s.lmr.RMRTriplet(0, 8)}
	}
	n, err := c.ep.PostRequests(reqs)
	require.GreaterOrEqual(t, n, room)
	require.Less(t, n, len(reqs))
	requireCode(t, err, InsufficientResources)
	for i := range n {
		require.Equal(t, uint64(i), waitDTO(t, c.req).Cookie)
	}
	requireEmpty(t, c.req)
}

// A batch longer than one provider call takes (128 work requests) is
// posted whole, in order, in several calls.
func TestPostRequestsLongBatch(t *testing.T) {
	attr := DefaultEPAttr()
	attr.MaxRequestDTOs = 400
	p := newPair(t, pairOpts{clientAttr: &attr, evdQLen: 512})
	c, s := p.client, p.server
	reqs := make([]Request, 300)
	for i := range reqs {
		reqs[i] = Request{Op: DTORDMAWrite, LocalIOV: []LMRTriplet{c.lmr.Triplet(i, 1)}, Cookie: uint64(i), Remote: s.lmr.RMRTriplet(i, 1)}
	}
	calls := ^uint64(0)
	for range 3 {
		var n int
		var err error
		calls = min(calls, cgoCallsOf(func() { n, err = c.ep.PostRequests(reqs) }))
		require.NoError(t, err)
		require.Equal(t, len(reqs), n)
		for i := range reqs {
			d := waitDTO(t, c.req)
			require.Equal(t, DTOSuccess, d.Status)
			require.Equal(t, uint64(i), d.Cookie)
		}
	}
	require.Equal(t, crossings(c.ep.qp.Direct(), 3), calls, "300 requests: 128 + 128 + 44")
	requireEmpty(t, c.req)
}

// sendBatch returns n sends of 64 B from the client's LMR and n receives
// into the server's, cookies 0..n-1.
func sendBatch(p *pair, n int) ([]Request, []Recv) {
	reqs := make([]Request, n)
	recvs := make([]Recv, n)
	for i := range reqs {
		reqs[i] = Request{Op: DTOSend, LocalIOV: []LMRTriplet{p.client.lmr.Triplet(i*64, 64)}, Cookie: uint64(i)}
		recvs[i] = Recv{LocalIOV: []LMRTriplet{p.server.lmr.Triplet(i*64, 64)}, Cookie: uint64(i)}
	}
	return reqs, recvs
}

// A batch of up to 128 requests or receives is one call into C.
func TestPostBatchOneCgoCall(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	reqs, recvs := sendBatch(p, 16)
	recvCalls, requestCalls := ^uint64(0), ^uint64(0)
	for range 5 {
		var n int
		var err error
		recvCalls = min(recvCalls, cgoCallsOf(func() { n, err = s.ep.PostRecvs(recvs) }))
		require.NoError(t, err)
		require.Equal(t, len(recvs), n)
		requestCalls = min(requestCalls, cgoCallsOf(func() { n, err = c.ep.PostRequests(reqs) }))
		require.NoError(t, err)
		require.Equal(t, len(reqs), n)
		for range reqs {
			require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
			require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
		}
	}
	require.Equal(t, crossings(s.ep.qp.Direct(), 1), recvCalls, "one cgo call for a batch of 16 receives")
	require.Equal(t, crossings(c.ep.qp.Direct(), 1), requestCalls, "one cgo call for a batch of 16 requests")
}

// The state rules of the single calls: requests only on a connected EP (a
// DISCONNECTED one flushes each at once), receives in every state (flushed
// at once on a DISCONNECTED EP).
func TestPostRequestsStates(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	s := newSide(t, ia, pz, pairOpts{}, nil, nil)
	reqs := []Request{{Op: DTOSend, Cookie: 1}, {Op: DTOSend, Cookie: 2}}
	n, err := s.ep.PostRequests(reqs)
	require.Zero(t, n)
	requireCode(t, err, InvalidState|InvalidStateEPUnconnected)
	n, err = s.ep.PostRecvs([]Recv{{LocalIOV: []LMRTriplet{s.lmr.Triplet(0, 8)}, Cookie: 3}})
	require.NoError(t, err, "receives are valid before the connection")
	require.Equal(t, 1, n)

	p := newPair(t, pairOpts{})
	disconnectPair(t, p)
	c := p.client
	n, err = c.ep.PostRequests(reqs)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = c.ep.PostRecvs([]Recv{{LocalIOV: []LMRTriplet{c.lmr.Triplet(0, 8)}, Cookie: 4}, {Cookie: 5, Flags: 0x40}})
	require.Equal(t, 1, n, "the second receive has a bad flag")
	requireCode(t, err, InvalidParameter|InvalidArg5)
	for _, want := range []uint64{1, 2, 4} {
		d := waitDTO(t, c.req)
		require.Equal(t, DTOErrFlushed, d.Status)
		require.Equal(t, want, d.Cookie)
	}
	requireEmpty(t, c.req)

	var nilEP *EP
	_, err = nilEP.PostRequests(reqs)
	requireCode(t, err, InvalidHandle|InvalidHandleEP)
	_, err = nilEP.PostRecvs(nil)
	requireCode(t, err, InvalidHandle|InvalidHandleEP)
}

// Posting a batch allocates nothing.
func TestPostRequestsAllocatesNothing(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	reqs, recvs := sendBatch(p, 16)
	reap := func(e *EVD, n int) {
		deadline := time.Now().Add(20 * time.Second)
		for n > 0 {
			if _, err := e.Dequeue(); err == nil {
				n--
			} else if time.Now().After(deadline) {
				panic("no completion")
			}
		}
	}
	round := func() {
		if n, err := s.ep.PostRecvs(recvs); err != nil || n != len(recvs) {
			panic(err)
		}
		if n, err := c.ep.PostRequests(reqs); err != nil || n != len(reqs) {
			panic(err)
		}
		reap(c.req, len(reqs))
		reap(s.recv, len(recvs))
	}
	round()
	require.Zero(t, testing.AllocsPerRun(20, round), "allocations per batch round")
}

// Batches posted from several goroutines at once, while the queue fills and
// drains: every DTO that a call reports posted completes exactly once, and
// the ones it reports not posted never do. Run with -race.
func TestPostRequestsConcurrent(t *testing.T) {
	const (
		workers = 4
		batches = 20
		batch   = 8
		total   = workers * batches * batch
	)
	p := newPairForTraffic(t, 32, total)
	c, s := p.client, p.server

	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for b := range batches {
				recvs := make([]Recv, batch)
				for i := range recvs {
					k := (w*batches+b)*batch + i
					recvs[i] = Recv{LocalIOV: []LMRTriplet{s.lmr.Triplet(k*8, 8)}, Cookie: uint64(k)}
				}
				if n, err := s.ep.PostRecvs(recvs); err != nil || n != batch {
					return fmt.Errorf("post receives: %d, %w", n, err)
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())

	sendCompletions := reapSendsInBackground(t, c.req, total)
	for w := range workers {
		g.Go(func() error {
			for b := range batches {
				reqs := make([]Request, batch)
				for i := range reqs {
					k := uint64((w*batches+b)*batch + i)
					reqs[i] = Request{Op: DTOSend, LocalIOV: []LMRTriplet{c.lmr.Triplet(int(k%64)*8, 8)}, Cookie: k}
				}
				for len(reqs) > 0 {
					n, err := c.ep.PostRequests(reqs)
					reqs = reqs[n:]
					if err != nil && CodeOf(err).Type() != InsufficientResources {
						return err
					}
					if err != nil {
						time.Sleep(time.Millisecond) // the queue is full: let the reaper catch up
					}
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	completed := sendCompletions()
	require.Len(t, completed, total)
	for k, n := range completed {
		require.Equal(t, 1, n, "cookie %d", k)
	}
	for range total {
		require.Equal(t, DTOSuccess, waitDTO(t, s.recv).Status)
	}
	requireEmpty(t, c.req)
	requireEmpty(t, s.recv)
}

// SRQ.PostRecvs: one provider call for the batch; any EP on the SRQ takes
// the buffers in posting order; a refused receive stops the batch.
func TestSRQPostRecvs(t *testing.T) {
	s := newSRQSetup(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1}, nil, nil)
	recvs := make([]Recv, 3)
	for i := range recvs {
		recvs[i] = Recv{LocalIOV: []LMRTriplet{s.lmr.Triplet(i*64, 64)}, Cookie: uint64(20 + i)}
	}
	calls := ^uint64(0)
	for range 3 {
		var n int
		var err error
		calls = min(calls, cgoCallsOf(func() { n, err = s.srq.PostRecvs(recvs) }))
		require.NoError(t, err)
		require.Equal(t, 3, n)
		for i := range recvs {
			send(t, s.a.client, 0, i+1, 0, CompletionSuppress)
			d := waitDTO(t, s.a.server.recv)
			require.Equal(t, DTOSuccess, d.Status)
			require.Equal(t, uint64(20+i), d.Cookie)
			require.Equal(t, uint64(i+1), d.TransferredLength)
		}
	}
	require.Equal(t, crossings(s.srq.vsrq.Direct(), 1), calls, "one cgo call for the batch")

	n, err := s.srq.PostRecvs([]Recv{
		{LocalIOV: []LMRTriplet{s.lmr.Triplet(0, 64)}, Cookie: 30},
		{LocalIOV: []LMRTriplet{s.lmr.Triplet(64, 64)}, Cookie: 31, Flags: CompletionUnsignalled},
		{LocalIOV: []LMRTriplet{s.lmr.Triplet(128, 64)}, Cookie: 32},
	})
	require.Equal(t, 1, n)
	requireCode(t, err, InvalidParameter)
	n, err = s.srq.PostRecvs([]Recv{{LocalIOV: []LMRTriplet{s.lmr.Triplet(64<<10-8, 64)}, Cookie: 33}})
	require.Zero(t, n)
	requireCode(t, err, InvalidParameter|InvalidArg3)
	send(t, s.b.client, 0, 5, 0, CompletionSuppress)
	d := waitDTO(t, s.b.server.recv)
	require.Equal(t, uint64(30), d.Cookie)
	requireEmpty(t, s.a.server.recv)
	requireEmpty(t, s.b.server.recv)
	q, err := s.srq.Query()
	require.NoError(t, err)
	require.Zero(t, q.OutstandingDTOCount, "no receive left behind by the refused ones")
}

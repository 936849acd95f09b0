//go:build linux && cgo && udapl_fakedevice

package udat

// The data path over cverbs.FakeDevice, a device made of memory: the
// rounds whose user-space instructions scripts/instr-guard.sh counts under
// callgrind on any host (make guard), against the budgets in
// testdata/instr-budget.txt. The guard reads the inclusive cost of the
// methods named count<Row>...: each round's post and its completion, while
// the fake device's work between them is left out. Run without callgrind,
// the test checks that every round completes as it should.

import (
	"os"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// guardRig is a CONNECTED RC EP on a fake device, its request and receive
// EVDs, and a 64-byte LMR segment to move. The EP is connected to itself
// (cverbs.FakeDevice): its sends land in its own receives.
type guardRig struct {
	dev    *cverbs.FakeDevice
	ep     *EP
	evd    *EVD
	recv   *EVD
	iov    []LMRTriplet
	remote RMRTriplet
	reqs   []Request
	ev     Event
	evs    []Event
}

// guardBatch is the batch of the Write16 row, as udattest -batch 16 posts it.
const guardBatch = 16

func newGuardRig(t *testing.T) *guardRig {
	const depth = 64
	return newFakeRig(t, depth, depth+1) // and a flush marker
}

// newFakeRig is a guardRig whose EP and EVDs take depth DTOs and whose
// fake device's queues devDepth work requests.
func newFakeRig(t *testing.T, depth, devDepth int) *guardRig {
	const qpn, lkey = 0x11, 0x1234
	dev, err := cverbs.NewFakeDevice(devDepth, DefaultEPAttr().MaxRequestIOV, qpn)
	require.NoError(t, err)
	t.Cleanup(dev.Close)

	ia := &IA{object: liveObject(), lmrByKey: map[uint32]*LMR{}, epByQP: map[uint32]*EP{}, maxMsg: messageLimit(cverbs.PortAttr{})}
	pz := &PZ{object: liveObject(), ia: ia}
	buf := make([]byte, 4096)
	va := uint64(uintptr(unsafe.Pointer(&buf[0])))
	lmr := &LMR{object: liveObject(), ia: ia, pz: pz, buf: buf, priv: MemPrivAll, va: va, length: uint64(len(buf)), lkey: lkey, rkey: lkey}
	ia.lmrByKey[lkey] = lmr

	evds := [2]*EVD{}
	for i, cq := range []*cverbs.CQ{dev.CQ, dev.RecvCQ} {
		evds[i] = &EVD{object: liveObject(), ia: ia, flags: EVDDTOFlag, qlen: depth, q: make([]Event, depth)}
		evds[i].useCQ(nil, cq)
	}
	ep := &EP{object: liveObject(), ia: ia, pz: pz, reqEVD: evds[0], recvEVD: evds[1], attr: fillEPAttr(DefaultEPAttr(), 0)}
	ep.useQP(dev.QP)
	ep.setState(EPStateConnected)
	ia.epByQP[qpn] = ep

	g := &guardRig{dev: dev, ep: ep, evd: evds[0], recv: evds[1],
		iov:    []LMRTriplet{{LMRContext: lkey, VirtualAddress: va, SegmentLength: 64}},
		remote: RMRTriplet{RMRContext: lkey, VirtualAddress: va + 2048, SegmentLength: 64},
		reqs:   make([]Request, guardBatch), evs: make([]Event, guardBatch)}
	for i := range g.reqs {
		g.reqs[i] = Request{Op: DTORDMAWrite, LocalIOV: g.iov, Remote: g.remote}
	}
	return g
}

// The counted calls: one method each for a row's post and its completion.

//go:noinline
func (g *guardRig) countWritePost(cookie uint64) error {
	return g.ep.PostRDMAWrite(g.iov, cookie, g.remote, CompletionDefault)
}

//go:noinline
func (g *guardRig) countWriteDequeue() error { return g.evd.DequeueInto(&g.ev) }

//go:noinline
func (g *guardRig) countReadPost(cookie uint64) error {
	return g.ep.PostRDMARead(g.iov, cookie, g.remote, CompletionDefault)
}

//go:noinline
func (g *guardRig) countReadDequeue() error { return g.evd.DequeueInto(&g.ev) }

//go:noinline
func (g *guardRig) countSendPost(cookie uint64) error {
	return g.ep.PostSend(g.iov, cookie, CompletionDefault)
}

//go:noinline
func (g *guardRig) countSendDequeue() error { return g.evd.DequeueInto(&g.ev) }

//go:noinline
func (g *guardRig) countRecvPost(cookie uint64) error {
	return g.ep.PostRecv(g.iov, cookie, CompletionDefault)
}

//go:noinline
func (g *guardRig) countRecvDequeue() error { return g.recv.DequeueInto(&g.ev) }

//go:noinline
func (g *guardRig) countEmptyDequeue() error { return g.evd.DequeueInto(&g.ev) }

// WriteDeep is the pattern of udattest's throughput loop: RDMA writes
// posted one by one and dequeued one by one, guardBatch of them
// outstanding, so that the first dequeue polls them all and the others
// take them from the EVD's queue.

//go:noinline
func (g *guardRig) countWriteDeepPost(cookie uint64) error {
	return g.ep.PostRDMAWrite(g.iov, cookie, g.remote, CompletionDefault)
}

//go:noinline
func (g *guardRig) countWriteDeepDequeue() error { return g.evd.DequeueInto(&g.ev) }

//go:noinline
func (g *guardRig) countWrite16Post() (int, error) { return g.ep.PostRequests(g.reqs) }

//go:noinline
func (g *guardRig) countWrite16Dequeue() (int, error) { return g.evd.DequeueEvents(g.evs) }

// complete has the fake device complete what was posted: n requests.
func (g *guardRig) complete(t *testing.T, n int) {
	got, err := g.dev.Complete()
	require.NoError(t, err)
	require.Equal(t, n, got)
}

// checkEvent checks that ev reports DTO cookie of op done. It allocates
// only to report a failure: an allocation in the rounds brings garbage
// collections, whose write barriers inflate whichever row they meet.
func (g *guardRig) checkEvent(t *testing.T, ev *Event, op DTOOp, cookie uint64) {
	want := DTOCompletionData{EP: g.ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: 64, Op: op}
	if ev.Number != EventDTOCompletion || ev.DTO != want {
		require.Equal(t, EventDTOCompletion, ev.Number)
		require.Equal(t, want, ev.DTO)
	}
}

// guardRounds is how many rounds of each row to run: UDAPL_GUARD_ROUNDS,
// which the guard sets to two counts whose difference it measures.
func guardRounds(t *testing.T) int {
	n := 100
	if s := os.Getenv("UDAPL_GUARD_ROUNDS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	return n
}

func TestInstrGuardRounds(t *testing.T) {
	g := newGuardRig(t)
	rounds := guardRounds(t)
	cookie := uint64(0)
	// The methods are called directly: through a method value, callgrind
	// would see a wrapper (…-fm) in their place. A send lands in a receive
	// of the EP's own: the send row posts one first, the receive row a send
	// after, and takes its completion, none of it counted.
	for _, op := range []DTOOp{DTORDMAWrite, DTORDMARead, DTOSend, DTOReceive} {
		for range rounds {
			cookie++
			var err error
			switch op {
			case DTORDMAWrite:
				err = g.countWritePost(cookie)
			case DTORDMARead:
				err = g.countReadPost(cookie)
			case DTOSend:
				require.NoError(t, g.ep.PostRecv(g.iov, 0, CompletionDefault))
				err = g.countSendPost(cookie)
			default:
				require.NoError(t, g.countRecvPost(cookie))
				err = g.ep.PostSend(g.iov, 0, CompletionDefault)
			}
			require.NoError(t, err)
			g.complete(t, 1)
			switch op {
			case DTORDMAWrite:
				err = g.countWriteDequeue()
			case DTORDMARead:
				err = g.countReadDequeue()
			case DTOSend:
				err = g.countSendDequeue()
			default:
				err = g.countRecvDequeue()
			}
			require.NoError(t, err)
			g.checkEvent(t, &g.ev, op, cookie)
			var peer Event // the other end of a send
			switch op {
			case DTOSend:
				require.NoError(t, g.recv.DequeueInto(&peer))
				g.checkEvent(t, &peer, DTOReceive, 0)
			case DTOReceive:
				require.NoError(t, g.evd.DequeueInto(&peer))
				g.checkEvent(t, &peer, DTOSend, 0)
			}
		}
	}
	for range rounds {
		first := cookie + 1
		for range guardBatch {
			cookie++
			require.NoError(t, g.countWriteDeepPost(cookie))
		}
		g.complete(t, guardBatch)
		for i := range uint64(guardBatch) {
			require.NoError(t, g.countWriteDeepDequeue())
			g.checkEvent(t, &g.ev, DTORDMAWrite, first+i)
		}
	}
	for range rounds {
		for i := range g.reqs {
			cookie++
			g.reqs[i].Cookie = cookie
		}
		n, err := g.countWrite16Post()
		require.NoError(t, err)
		require.Equal(t, guardBatch, n)
		g.complete(t, guardBatch)
		n, err = g.countWrite16Dequeue()
		require.NoError(t, err)
		require.Equal(t, guardBatch, n)
		for i := range g.evs {
			g.checkEvent(t, &g.evs[i], DTORDMAWrite, g.reqs[i].Cookie)
		}
	}
	for range rounds {
		require.ErrorIs(t, g.countEmptyDequeue(), ErrQueueEmpty)
	}
	require.ErrorIs(t, g.recv.DequeueInto(&g.ev), ErrQueueEmpty)
}

package udat

// Unit tests that need no device: they run on the host (UDAPL_HOST_ONLY=1)
// as well as in the VM.

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

func TestWRIDRoundTrip(t *testing.T) {
	for _, c := range []struct {
		owner uint32
		kind  uint8
		seq   uint32
	}{{1, wrKindSend, 0}, {ownerMask, wrKindRecv, ^uint32(0)}, {12345, wrKindSRQ, 77}} {
		o, k, s := splitWRID(makeWRID(c.owner, c.kind, c.seq))
		require.Equal(t, c.owner, o)
		require.Equal(t, c.kind, k)
		require.Equal(t, c.seq, s)
	}
	a, b := newOwner(), newOwner()
	require.NotEqual(t, a, b)
	require.NotZero(t, a)
}

func fakeLMR(pz *PZ, va, n uint64, priv MemPriv) *LMR {
	return &LMR{object: liveObject(), pz: pz, va: va, length: n, priv: priv, lkey: uint32(va >> 12)}
}

// take completes slot seq of a FIFO ring successfully and returns the next
// completion the ring reports.
func take(r *fifoRing, owner, seq uint32) (dtoSlot, bool) {
	if !r.complete(owner, seq, DTOSuccess, &cverbs.WC{}) {
		return dtoSlot{}, false
	}
	return popNext(r)
}

func TestFIFORingSignalledAndUnsignalled(t *testing.T) {
	r := newFIFORing(4, 2, wrKindSend)
	// A suppressed DTO, then a signalled one.
	s0 := r.reserve(10, 8, DTOSend, false)
	s1 := r.reserve(11, 8, DTOSend, true)
	require.Equal(t, 2, r.outstanding())
	require.Equal(t, 1, r.pending())
	slot, ok := take(r, r.owner, s1)
	require.True(t, ok)
	require.Equal(t, uint64(11), slot.cookie)
	require.Zero(t, r.outstanding(), "the earlier unsignalled slot is reclaimed")
	_, ok = take(r, r.owner, s0)
	require.False(t, ok, "no event for a reclaimed unsignalled slot")
	_, ok = take(r, r.owner, s1)
	require.False(t, ok, "a completion is reported once")
}

func TestFIFORingFullAndUnreserve(t *testing.T) {
	r := newFIFORing(2, 1, wrKindRecv)
	r.reserve(1, 0, DTOReceive, true)
	r.reserve(2, 0, DTOReceive, true)
	require.True(t, r.full())
	r.unreserve()
	require.False(t, r.full())
	require.Equal(t, 1, r.outstanding())
	s := r.reserve(3, 0, DTOReceive, true)
	slot, ok := take(r, r.owner, s-1)
	require.True(t, ok)
	require.Equal(t, uint64(1), slot.cookie)
	slot, ok = take(r, r.owner, s)
	require.True(t, ok)
	require.Equal(t, uint64(3), slot.cookie)
	// Sequence numbers wrap around.
	r.head, r.tail = ^uint32(0), ^uint32(0)
	a := r.reserve(4, 0, DTOReceive, true)
	b := r.reserve(5, 0, DTOReceive, true)
	require.Equal(t, uint32(0), b)
	_, ok = take(r, r.owner, a)
	require.True(t, ok)
	_, ok = take(r, r.owner, b)
	require.True(t, ok)
	require.Zero(t, r.outstanding())
}

func TestFIFORingStaleAndDrain(t *testing.T) {
	r := newFIFORing(4, 1, wrKindSend)
	old := r.owner
	r.reserve(1, 0, DTOSend, true)
	r.reserve(2, 0, DTOSend, false)
	s := r.reserve(3, 0, DTOSend, true)
	_, ok := take(r, old+1, s)
	require.False(t, ok, "wrong owner")
	_, ok = take(r, old, s+10)
	require.False(t, ok, "not outstanding")
	left := r.drain()
	require.Len(t, left, 2, "signalled slots are flushed, unsignalled ones taken as done")
	require.Equal(t, uint64(1), left[0].cookie)
	require.Equal(t, uint64(3), left[1].cookie)
	require.NotEqual(t, old, r.owner)
	_, ok = take(r, old, s)
	require.False(t, ok, "late completions of the old queue are stale")
	require.Zero(t, r.outstanding())
}

// The ring's wr_ids name it: owner, kind and sequence number, and a new
// owner after a drain.
func TestFIFORingWRID(t *testing.T) {
	for _, kind := range []uint8{wrKindSend, wrKindRecv} {
		r := newFIFORing(4, 1, kind)
		seq := r.reserve(1, 0, DTOSend, true)
		require.Equal(t, makeWRID(r.owner, kind, seq), r.wrid(seq))
		r.drain()
		require.Equal(t, makeWRID(r.owner, kind, 7), r.wrid(7))
	}
}

// fifoRing.settled counts the settled slots of [head, tail), and
// usualHead takes the head only while there are none.
func TestFIFORingSettledCount(t *testing.T) {
	r := newFIFORing(8, 1, wrKindSend)
	check := func(what string) {
		t.Helper()
		n := 0
		for q := r.head; q != r.tail; q++ {
			if r.slots[q&r.mask].settled() {
				n++
			}
		}
		require.Equal(t, n, r.settled, what)
	}
	a := r.reserve(1, 8, DTOSend, true)
	r.reserve(2, 8, DTORDMAWrite, false)
	c := r.reserve(3, 8, DTORDMAWrite, true)
	check("posted")
	require.True(t, r.usualHead(r.at(r.head)), "nothing settled: the head is usual")
	require.True(t, r.complete(r.owner, c, DTOSuccess, &cverbs.WC{}))
	check("a later DTO completed, with the unsignalled one before it")
	require.False(t, r.usualHead(r.at(r.head)), "slots settled before their turn")
	_, ok := take(r, r.owner, a)
	require.True(t, ok)
	check("the head reported")
	_, ok = take(r, r.owner, c) // reported by next: already done
	require.False(t, ok)
	s, ok := popNext(r)
	require.True(t, ok)
	require.Equal(t, uint64(3), s.cookie)
	check("all reported")
	require.Zero(t, r.settled)

	d := r.reserve(4, 8, DTOSend, true)
	r.reserveFlushed(5, 0, DTOSend)
	check("a DTO flushed at post behind an outstanding one")
	require.False(t, r.usualHead(r.at(r.head)), "a flushed DTO waits behind the head")
	require.True(t, r.complete(r.owner, d, DTOSuccess, &cverbs.WC{}))
	for _, ok := popNext(r); ok; _, ok = popNext(r) {
	}
	check("reported")
	require.Zero(t, r.settled)

	r.reserve(6, 8, DTOSend, true)
	r.reserveFlushed(7, 0, DTOSend)
	r.drain()
	check("drained")
	require.Zero(t, r.settled)
	r.reserve(8, 8, DTOSend, true)
	require.True(t, r.usualHead(r.at(r.head)))
}

// popNext reports and pops the ring's next slot to report, as deliver does.
func popNext(r *fifoRing) (dtoSlot, bool) {
	s := r.next()
	if s == nil {
		return dtoSlot{}, false
	}
	out := *s
	r.pop()
	return out, true
}

// A barrier fence waits only for RDMA reads and atomics posted before it
// that have not completed: the ring tells whether there is one.
func TestFIFORingReadsBefore(t *testing.T) {
	r := newFIFORing(8, 1, wrKindSend)
	w := r.reserve(1, 8, DTORDMAWrite, true)
	r.reserve(2, 8, DTOSend, true)
	require.False(t, r.readsBefore(r.tail), "writes and sends are not waited for")

	rd := r.reserve(3, 8, DTORDMARead, false) // unsignalled
	fenced := r.reserve(4, 8, DTORDMAWrite, true)
	require.True(t, r.readsBefore(fenced), "an outstanding read")
	require.False(t, r.readsBefore(rd), "only DTOs posted before seq count")

	_, ok := take(r, r.owner, w)
	require.True(t, ok)
	require.True(t, r.readsBefore(fenced), "the read is still outstanding")
	// The fenced write's completion settles the unsignalled read before it.
	require.True(t, r.complete(r.owner, fenced, DTOSuccess, &cverbs.WC{}))
	require.False(t, r.readsBefore(r.tail), "the read completed")

	for _, op := range []DTOOp{DTOIBFetchAdd, DTOIBCmpSwap} {
		a := r.reserve(5, 8, op, true)
		require.True(t, r.readsBefore(r.tail), "%v is waited for", op)
		require.True(t, r.complete(r.owner, a, DTOSuccess, &cverbs.WC{}))
		require.False(t, r.readsBefore(r.tail))
	}
	// A read flushed at post time never reached the hardware.
	r.reserveFlushed(6, 0, DTORDMARead)
	require.False(t, r.readsBefore(r.tail))
}

func TestPoolRing(t *testing.T) {
	r := newPoolRing(2, 1)
	a := r.reserve(1, 8)
	b := r.reserve(2, 8)
	require.True(t, r.full())
	slot, ok := r.complete(r.owner, b)
	require.True(t, ok)
	require.Equal(t, uint64(2), slot.cookie)
	_, ok = r.complete(r.owner, b)
	require.False(t, ok)
	r.resize(4)
	require.Equal(t, 1, r.outstanding())
	for i := 0; i < 3; i++ {
		r.reserve(uint64(10+i), 0)
	}
	require.True(t, r.full())
	slot, ok = r.complete(r.owner, a)
	require.True(t, ok)
	require.Equal(t, uint64(1), slot.cookie)
	r.resize(1)
	require.True(t, r.full(), "a smaller size only lowers the limit")
}

// The post-time checks, over a fake LMR table.
func TestCheckIOV(t *testing.T) {
	pz, other := &PZ{}, &PZ{}
	ia := &IA{lmrByKey: map[uint32]*LMR{}}
	rw := fakeLMR(pz, 0x10000, 0x1000, MemPrivLocalRead|MemPrivLocalWrite)
	ro := fakeLMR(pz, 0x20000, 0x1000, MemPrivLocalRead)
	fo := fakeLMR(other, 0x30000, 0x1000, MemPrivAll)
	dead := fakeLMR(pz, 0x40000, 0x1000, MemPrivAll)
	dead.freed.Store(true)
	wo := fakeLMR(pz, 0x50000, 0x1000, MemPrivLocalWrite)
	for _, l := range []*LMR{rw, ro, fo, dead, wo} {
		ia.lmrByKey[l.lkey] = l
	}
	seg := func(l *LMR, off, n uint64) LMRTriplet {
		return LMRTriplet{VirtualAddress: l.va + off, SegmentLength: uint32(n), LMRContext: l.lkey}
	}
	sge := make([]cverbs.SGE, 0, 4)
	lmrv := make([]*LMR, 0, 4)
	for _, c := range []struct {
		name string
		iov  []LMRTriplet
		need MemPriv
		want Return
	}{
		{"inside", []LMRTriplet{seg(rw, 0, 0x1000)}, MemPrivLocalRead, Success},
		{"zero length skipped", []LMRTriplet{{LMRContext: 0xbad}, seg(rw, 5, 1)}, MemPrivLocalWrite, Success},
		{"before", []LMRTriplet{{VirtualAddress: rw.va - 1, SegmentLength: 2, LMRContext: rw.lkey}}, MemPrivLocalRead, InvalidParameter | InvalidArg3},
		{"past end", []LMRTriplet{seg(rw, 0xfff, 2)}, MemPrivLocalRead, InvalidParameter | InvalidArg3},
		{"wrap", []LMRTriplet{{VirtualAddress: ^uint64(0), SegmentLength: 2, LMRContext: rw.lkey}}, MemPrivLocalRead, InvalidParameter | InvalidArg3},
		{"other pz", []LMRTriplet{seg(fo, 0, 1)}, MemPrivLocalRead, ProtectionViolation},
		{"no local write", []LMRTriplet{seg(ro, 0, 1)}, MemPrivLocalWrite, PrivilegesViolation | PrivilegesWrite},
		{"no local read", []LMRTriplet{seg(wo, 0, 1)}, MemPrivLocalRead, PrivilegesViolation | PrivilegesRead},
		{"freed", []LMRTriplet{seg(dead, 0, 1)}, MemPrivLocalRead, PrivilegesViolation},
		{"unknown", []LMRTriplet{{VirtualAddress: 1, SegmentLength: 1, LMRContext: 0x7777}}, MemPrivLocalRead, PrivilegesViolation},
	} {
		sg, lv, total, err := checkIOV("op", ia, pz, c.iov, c.need, sge, lmrv)
		if c.want == Success {
			require.NoError(t, err, c.name)
			require.Len(t, sg, len(lv), c.name)
			require.Equal(t, uint64(0), total-sumSGE(sg), c.name)
			continue
		}
		require.Equal(t, (ClassError | c.want).String(), CodeOf(err).String(), c.name)
	}
}

func sumSGE(s []cverbs.SGE) uint64 {
	var n uint64
	for _, e := range s {
		n += uint64(e.Length)
	}
	return n
}

func TestTrimSGE(t *testing.T) {
	mk := func() ([]cverbs.SGE, []*LMR) {
		return []cverbs.SGE{{Length: 8}, {Length: 8}, {Length: 8}}, make([]*LMR, 3)
	}
	s, l := mk()
	s, l = trimSGE(s, l, 12)
	require.Equal(t, []cverbs.SGE{{Length: 8}, {Length: 4}}, s)
	require.Len(t, l, 2)
	s, l = mk()
	s, _ = trimSGE(s, l, 16)
	require.Len(t, s, 2)
	s, l = mk()
	s, _ = trimSGE(s, l, 0)
	require.Empty(t, s)
	s, l = mk()
	s, _ = trimSGE(s, l, 100)
	require.Len(t, s, 3)
}

func TestConnQualPort(t *testing.T) {
	require.Equal(t, uint16(1234), ConnQualPort(1234))
	require.Equal(t, uint16(0xffff), ConnQualPort(0xffff))
	require.Equal(t, uint16((0x10000%32001)+33534), ConnQualPort(0x10000))
	require.Equal(t, uint16((1_000_000%32001)+33534), ConnQualPort(1_000_000))
}

func TestDTOStatusMapping(t *testing.T) {
	for ws, ds := range map[cverbs.WCStatus]DTOStatus{
		cverbs.WCSuccess:        DTOSuccess,
		cverbs.WCLocLenErr:      DTOErrLocalLength,
		cverbs.WCLocQPOpErr:     DTOErrLocalEP,
		cverbs.WCLocProtErr:     DTOErrLocalProtection,
		cverbs.WCLocAccessErr:   DTOErrLocalProtection,
		cverbs.WCWRFlushErr:     DTOErrFlushed,
		cverbs.WCBadRespErr:     DTOErrBadResponse,
		cverbs.WCRemAccessErr:   DTOErrRemoteAccess,
		cverbs.WCRemInvReqErr:   DTOErrRemoteResponder,
		cverbs.WCRemOpErr:       DTOErrRemoteResponder,
		cverbs.WCRemAbortErr:    DTOErrRemoteResponder,
		cverbs.WCRetryExcErr:    DTOErrTransport,
		cverbs.WCFatalErr:       DTOErrTransport,
		cverbs.WCGeneralErr:     DTOErrTransport,
		cverbs.WCRNRRetryExcErr: DTOErrReceiverNotReady,
		cverbs.WCRespTimeoutErr: DTOErrReceiverNotReady,
	} {
		require.Equal(t, ds, dtoStatus(ws), "%v", ws)
	}
}

func TestStateSubtypes(t *testing.T) {
	for s, want := range map[EPState]Return{
		EPStateUnconnected:                InvalidStateEPUnconnected,
		EPStateReserved:                   InvalidStateEPReserved,
		EPStatePassiveConnectionPending:   InvalidStateEPPassConnPending,
		EPStateActiveConnectionPending:    InvalidStateEPActConnPending,
		EPStateTentativeConnectionPending: InvalidStateEPTentConnPending,
		EPStateConnected:                  InvalidStateEPConnected,
		EPStateDisconnectPending:          InvalidStateEPDiscPending,
		EPStateDisconnected:               InvalidStateEPDisconnected,
		EPStateCompletionPending:          InvalidStateEPComplPending,
	} {
		require.Equal(t, want, stateSubtype(s), "%v", s)
	}
}

func TestTripletLayoutIsSGE(t *testing.T) {
	// The DAT 2.0 LMR triplet is struct ibv_sge: same size, same field
	// order. (Also checked at compile time in lmr.go.)
	tr := LMRTriplet{VirtualAddress: 1, SegmentLength: 2, LMRContext: 3}
	sg := cverbs.SGE{Addr: 1, Length: 2, LKey: 3}
	require.Equal(t, sg, *(*cverbs.SGE)(unsafe.Pointer(&tr)))
}

// A DTO that waits behind a barrier fence is never posted inline: inline
// data is copied at post, before the RDMA reads it waits for have written
// it (on Linux 6.12's Soft-RoCE, 10 stale sends out of 10).
func TestFencedDTOIsNotInline(t *testing.T) {
	ep := &EP{maxInline: 64}
	for _, op := range []DTOOp{DTOSend, DTORDMAWrite} {
		req := &Request{Op: op, Flags: CompletionBarrierFence}
		o := requestOpOf(op)
		wf := ep.sendFlags(req, o, 20, true, true)
		require.NotZero(t, wf&cverbs.SendFence, "%v: fenced", op)
		require.Zero(t, wf&cverbs.SendInline, "%v: a fenced DTO is not inline", op)
		wf = ep.sendFlags(req, o, 20, true, false)
		require.NotZero(t, wf&cverbs.SendInline, "%v: with nothing to wait for, inline as usual", op)
	}
}

// Each row of requestOps names the operation it describes: postFast takes
// the row and posts the DTO as its op, so a row that named another would
// post the wrong operation.
func TestRequestOpsNameTheirOp(t *testing.T) {
	for i := range requestOps {
		if o := &requestOps[i]; o.name != "" {
			require.Equal(t, DTOOp(i), o.op, o.name)
		}
	}
}

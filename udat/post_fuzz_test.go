//go:build linux && cgo

package udat

// The fuzz targets of the request posts of post.go (checked by
// post_check.go, the usual DTO posted by post_fast.go): FuzzPostSend,
// FuzzPostRDMAWrite and FuzzPostRDMARead post one request with
// EP.PostSend, PostRDMAWrite and PostRDMARead, FuzzPostRequests batches
// with EP.PostRequests, over the connection of the device fuzzing harness
// (fuzz_fixture_test.go, which tells how an input is decoded and checked).

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// Requests: decoding and the model

// decodeRemote reads the remote buffer of an RDMA operation posted by side
// i: within the peer's LMR, or, for one mode in 16, as given (the transfer
// may then fail at the peer, and break the connection). ok reports the
// former.
func (e *fuzzEnv) decodeRemote(i int, mode uint8, off, n uint32) (r RMRTriplet, ok bool) {
	peer := e.side(1 - i).lmr
	if mode%16 != 15 {
		t := within(peer.Triplet(0, fuzzLMRSize), uint16(off), n)
		return RMRTriplet{VirtualAddress: t.VirtualAddress, SegmentLength: t.SegmentLength, RMRContext: peer.RMRContext()}, true
	}
	r = RMRTriplet{VirtualAddress: peer.Triplet(0, 0).VirtualAddress + uint64(int64(int32(off))), SegmentLength: n,
		RMRContext: peer.RMRContext()}
	if mode&0x20 != 0 {
		r.RMRContext = off ^ n
	}
	return r, false
}

const validFlags = CompletionSuppress | CompletionSolicitedWait | CompletionUnsignalled | CompletionBarrierFence

// modelRequest is the model of a send, RDMA write or RDMA read posted by
// side i.
func (e *fuzzEnv) modelRequest(i int, r Request, remoteOK bool) fuzzDTO {
	a := e.attr[i]
	x := fuzzDTO{op: r.Op, cookie: r.Cookie, remote: r.Remote, remoteOK: remoteOK,
		signaled: r.Flags&(CompletionSuppress|CompletionUnsignalled) == 0}
	if r.Op > DTORDMARead {
		x.viol = typesOf(InvalidParameter)
		return x
	}
	if r.Flags&^validFlags != 0 || (r.Op == DTORDMARead && r.Flags&CompletionSolicitedWait != 0) ||
		(r.Flags&CompletionUnsignalled != 0 && a.RequestCompletionFlags&CompletionUnsignalled == 0) {
		x.viol |= typesOf(InvalidParameter)
	}
	maxIOV, need, limit := a.MaxRequestIOV, MemPrivLocalRead, uint64(a.MaxMessageSize)
	switch r.Op {
	case DTORDMAWrite:
		maxIOV, limit = a.MaxRDMAWriteIOV, uint64(a.MaxRDMASize)
	case DTORDMARead:
		maxIOV, need, limit = a.MaxRDMAReadIOV, MemPrivLocalWrite, uint64(a.MaxRDMASize)
	}
	if len(r.LocalIOV) > maxIOV {
		x.viol |= typesOf(InvalidParameter)
	}
	viol, total, segs := e.checkIOVModel(r.LocalIOV, need)
	x.viol |= viol
	x.segs = segs
	x.length = total
	switch r.Op {
	case DTOSend:
		// The peer's sink receives take anything up to their size.
		x.expectOK = total <= fuzzSinkSize
	case DTORDMAWrite:
		if total > uint64(r.Remote.SegmentLength) {
			x.viol |= typesOf(LengthError)
		}
		x.expectOK = remoteOK
	case DTORDMARead:
		if total < uint64(r.Remote.SegmentLength) {
			x.viol |= typesOf(LengthError)
		}
		x.length = uint64(r.Remote.SegmentLength)
		x.expectOK = remoteOK
	}
	if x.length > limit {
		// Over the EP's largest DTO: a length error, or an invalid
		// parameter against the device's limit.
		x.viol |= typesOf(LengthError, InvalidParameter)
	}
	return x
}

// ---------------------------------------------------------------------------
// Requests: running an input

// peerRange is the segment of side i's peer LMR that remote names.
func (e *fuzzEnv) peerRange(i int, remote RMRTriplet, n uint64) []segRange {
	m := e.lmrs[e.side(1-i).lmr.Context()]
	return []segRange{{m, remote.VirtualAddress - m.va, n}}
}

// runRequests posts the requests reqs, with remoteOK telling which name a
// valid remote buffer, from side i with post, and checks the result and
// the completions.
func (e *fuzzEnv) runRequests(t *testing.T, call string, i int, reqs []Request, remoteOK []bool, post func() (int, error)) {
	t.Helper()
	s, peer := e.side(i), e.side(1-i)
	dtos := make([]fuzzDTO, len(reqs))
	for k, r := range reqs {
		dtos[k] = e.modelRequest(i, r, remoteOK[k])
	}
	// The memory of a single valid DTO is checked.
	var want map[*fuzzLMR][]byte
	if len(dtos) == 1 && dtos[0].viol == 0 && dtos[0].expectOK {
		x := dtos[0]
		var p memPlan
		switch x.op {
		case DTOSend:
			sink := e.lmrs[e.sink[1-i].Context()]
			p = memPlan{src: x.segs, dst: []segRange{{sink, 0, x.length}}}
		case DTORDMAWrite:
			p = memPlan{src: x.segs, dst: e.peerRange(i, x.remote, x.length)}
		case DTORDMARead:
			p = memPlan{src: e.peerRange(i, x.remote, x.length), dst: trim(x.segs, x.length)}
		}
		want = p.expect(e.snapshot())
	}

	n, err := post()
	checkPosted(t, call, dtos, n, err)
	e.count(n, err)
	posted := dtos[:n]
	if n == 0 {
		return
	}
	deadline := time.Now().Add(fuzzWait)
	// A successful suppressed or unsignalled request reports nothing: a
	// signalled zero-length RDMA write behind them shows they are done.
	for _, x := range posted {
		if !x.signaled {
			marker := posted[0].cookie - 1
			require.NoError(t, s.ep.PostRDMAWrite(nil, marker, peer.lmr.RMRTriplet(0, 0), CompletionDefault))
			posted = append(posted, fuzzDTO{op: DTORDMAWrite, cookie: marker, signaled: true, expectOK: true})
			break
		}
	}
	failed := e.await(t, s.req, s.ep, posted, deadline)
	if !failed && onSIW(e.p.ia) {
		// iWARP has no NAK: an RDMA write completes at the sender once
		// its data has left, whatever the remote buffer. A bad one breaks
		// the connection at the peer, which flushes the receives of the
		// sends after it.
		for _, x := range posted {
			failed = failed || x.op == DTORDMAWrite && !x.remoteOK
		}
	}
	if failed {
		e.broken = true // rebuilt before the next input
		e.stats.failed++
		return
	}
	// Each send took one of the peer's sink receives.
	sends := 0
	for _, x := range posted {
		if x.op == DTOSend {
			d := waitDTOEvent(t, peer.recv, deadline, "the receive of a send")
			require.Equal(t, DTOReceive, d.Op)
			require.Equal(t, DTOSuccess, d.Status, "the receive of send %#x", x.cookie)
			require.Equal(t, x.length, d.TransferredLength, "the receive of send %#x", x.cookie)
			require.Same(t, peer.ep, d.EP)
			sends++
		}
	}
	if sends > 0 {
		e.postSinks(t, 1-i, sends)
	}
	if want != nil {
		e.verify(t, want)
	}
}

// await takes the completions of posted (in posting order, cookies all
// different) from evd: one for each signalled DTO, in order, and none for
// an unsignalled one that succeeded. It stops at the first failed DTO (a
// failure breaks the connection and flushes the rest, in an order the
// model does not predict) and reports whether there was one.
func (e *fuzzEnv) await(t *testing.T, evd *EVD, ep *EP, posted []fuzzDTO, deadline time.Time) (failed bool) {
	t.Helper()
	mayFail := false
	for _, x := range posted {
		mayFail = mayFail || !x.expectOK
	}
	last := -1
	for {
		pending := -1
		for k := last + 1; k < len(posted); k++ {
			if posted[k].signaled {
				pending = k
				break
			}
		}
		if pending < 0 {
			return false
		}
		d := waitDTOEvent(t, evd, deadline, fmt.Sprintf("DTO %d (cookie %#x)", pending, posted[pending].cookie))
		k := 0
		for k < len(posted) && posted[k].cookie != d.Cookie {
			k++
		}
		require.Less(t, k, len(posted), "a completion with cookie %#x, which no DTO posted has: %+v", d.Cookie, d)
		x := posted[k]
		require.Same(t, ep, d.EP, "cookie %#x", x.cookie)
		require.Equal(t, x.op, d.Op, "cookie %#x", x.cookie)
		if d.Status != DTOSuccess {
			require.True(t, mayFail, "DTO %d (cookie %#x, %v) failed: %v", k, x.cookie, x.op, d.Status)
			return true
		}
		require.Greater(t, k, last, "DTO %d (cookie %#x) completed twice or out of order", k, x.cookie)
		for j := last + 1; j < k; j++ {
			require.False(t, posted[j].signaled,
				"signalled DTO %d (cookie %#x) reported nothing, yet DTO %d after it did", j, posted[j].cookie, k)
		}
		require.True(t, x.signaled, "unsignalled DTO %d (cookie %#x) reported its success", k, x.cookie)
		require.Equal(t, x.length, d.TransferredLength, "DTO %d (cookie %#x)", k, x.cookie)
		last = k
	}
}

// ---------------------------------------------------------------------------
// The targets

// requestSeed is the seed of a single-request target: cookie, flags, poster
// side, remote (mode, offset, length), I/O vector.
type requestSeed struct {
	cookie      uint64
	flags, side uint8
	rmode       uint8
	roff, rlen  uint32
	iov         []byte
}

var requestSeeds = []requestSeed{
	{1, 0, 0, 0, 0, 64, iovSeed(sOwn(0, 64))},
	{2, 0, 1, 0, 128, 4096, iovSeed(sOwn(128, 4096))},
	{3, 0, 0, 0, 0, 0, iovSeed()},
	{4, 0, 1, 0, 0, 0, []byte{0, 0}},
	{^uint64(0), 0, 0, 0, 100, 300, iovSeed(sOwn(0, 100), sOwn(1000, 100), sOwn(5000, 100))},
	{5, 0, 1, 0, 0, 1 << 16, iovSeed(sWhole())},
	{6, 0, 0, 0, 0, 1 << 16, iovSeed(sWhole(), sWhole(), sWhole(), sWhole(), sWhole())},
	{7, 0, 1, 0, 0, 8, iovSeed(sOther(otherPeer, 8, 8))},
	{8, 0, 0, 0, 0, 8, iovSeed(sOther(otherRO, 0, 8))},
	{9, 0, 1, 0, 0, 8, iovSeed(sOther(otherWO, 0, 8))},
	{10, 0, 0, 0, 0, 8, iovSeed(sOther(otherNone, 0, 8))},
	{11, 0, 1, 0, 0, 8, iovSeed(sOther(otherForeign, 0, 8))},
	{12, 0, 0, 0, 0, 8, iovSeed(sOther(otherStale, 0, 8))},
	{13, 0, 1, 0, 0, 8, iovSeed(sOther(otherSink, 0, 8))},
	{14, 0, 0, 0, 0, 8, iovSeed(sRaw(-1, 8))},
	{15, 0, 1, 0, 0, 8, iovSeed(sRaw(fuzzLMRSize-4, 8))},
	{16, 0, 0, 0, 0, 8, iovSeed(sRaw(fuzzLMRSize, 1))},
	{17, 0, 1, 0, 0, 8, iovSeed(sRaw(8, 0xFFFFFFFF))},
	{18, 0, 0, 0, 0, 8, iovSeed(sAny(0xFFFFFFFFFFFFFFF0, 0x20, 0))},
	{19, 0, 1, 0, 0, 8, iovSeed(sAny(0, 8, 0xFFFFFFFF))},
	{20, 0, 0, 0, 0, 8, iovSeed(sZero(0xDEAD, 0xBEEF), sOwn(0, 8), sZero(0, 0))},
	{21, uint8(CompletionSuppress), 0, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{22, uint8(CompletionSuppress), 1, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{23, uint8(CompletionUnsignalled), 0, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{24, uint8(CompletionUnsignalled), 1, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{25, uint8(CompletionSolicitedWait), 0, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{26, uint8(CompletionBarrierFence), 1, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{27, uint8(CompletionEVDThreshold), 0, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{28, 0xFF, 1, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{29, uint8(validFlags), 0, 0, 0, 16, iovSeed(sOwn(0, 16))},
	{30, 0, 1, 0, 0, 4, iovSeed(sOwn(0, 8))},
	{31, 0, 0, 0, 0, 8, iovSeed(sOwn(0, 4))},
	{32, 0, 1, 0, 60000, 60000, iovSeed(sOwn(0, 60000), sOwn(0, 60000))},
}

// Raw remote buffers: a made-up rmr_context, an offset outside the peer's
// LMR. The DTO then fails at the peer, and the connection is rebuilt.
var requestSeedsRemote = []requestSeed{
	{40, 0, 0, 0x2F, 0, 8, iovSeed(sOwn(0, 8))},
	{41, 0, 1, 0x0F, fuzzLMRSize, 8, iovSeed(sOwn(0, 8))},
	{42, uint8(CompletionUnsignalled), 0, 0x0F, 0xFFFFFFF0, 8, iovSeed(sOwn(0, 8))},
}

func addRequestSeeds(f *testing.F, remote bool) {
	seeds := requestSeeds
	if remote {
		seeds = append(seeds[:len(seeds):len(seeds)], requestSeedsRemote...)
	}
	for _, s := range seeds {
		f.Add(s.cookie, s.flags, s.side, s.rmode, s.roff, s.rlen, s.iov)
	}
}

// fuzzRequest is the body of the single-request targets.
func fuzzRequest(f *testing.F, op DTOOp) {
	h := newFuzzHolder(f, fuzzEnvOpts{sinks: op == DTOSend})
	addRequestSeeds(f, op != DTOSend)
	f.Fuzz(func(t *testing.T, cookie uint64, flags, side, rmode uint8, roff, rlen uint32, iovData []byte) {
		e := h.get(t)
		i := int(side & 1)
		a := e.attr[i]
		limit := map[DTOOp]int{DTOSend: a.MaxRequestIOV, DTORDMAWrite: a.MaxRDMAWriteIOV, DTORDMARead: a.MaxRDMAReadIOV}[op]
		iov := e.decodeIOV(&fuzzBytes{iovData}, i, limit)
		r := Request{Op: op, LocalIOV: iov, Cookie: cookie, Flags: CompletionFlags(flags)}
		remoteOK := true
		if op != DTOSend {
			r.Remote, remoteOK = e.decodeRemote(i, rmode, roff, rlen)
		}
		ep := e.side(i).ep
		call := fmt.Sprintf("%v from the %s: %+v", op, sideName(i), r)
		e.runRequests(t, call, i, []Request{r}, []bool{remoteOK}, func() (int, error) {
			switch op {
			case DTOSend:
				return postedOne(ep.PostSend(r.LocalIOV, r.Cookie, r.Flags))
			case DTORDMAWrite:
				return postedOne(ep.PostRDMAWrite(r.LocalIOV, r.Cookie, r.Remote, r.Flags))
			}
			return postedOne(ep.PostRDMARead(r.LocalIOV, r.Cookie, r.Remote, r.Flags))
		})
	})
}

func FuzzPostSend(f *testing.F)      { fuzzRequest(f, DTOSend) }
func FuzzPostRDMAWrite(f *testing.F) { fuzzRequest(f, DTORDMAWrite) }
func FuzzPostRDMARead(f *testing.F)  { fuzzRequest(f, DTORDMARead) }

// FuzzPostRequests posts batches of up to four sends, RDMA writes, RDMA
// reads and unknown operations with EP.PostRequests. Each request is
// [op:u8 flags:u8 rmode:u8 roff:u32 rlen:u32 iov...].
func FuzzPostRequests(f *testing.F) {
	h := newFuzzHolder(f, fuzzEnvOpts{sinks: true})
	req := func(op, flags, rmode uint8, roff, rlen uint32, iov []byte) []byte {
		return cat([]byte{op, flags, rmode}, le32(roff), le32(rlen), iov)
	}
	batch := func(side uint8, reqs ...[]byte) []byte {
		return cat(append([][]byte{{side, byte(len(reqs))}}, reqs...)...)
	}
	own8 := iovSeed(sOwn(0, 8))
	for k, b := range [][]byte{
		batch(0),
		batch(0, req(0, 0, 0, 0, 0, own8)),
		batch(1, req(0, 0, 0, 0, 0, own8), req(1, 0, 0, 0, 8, own8), req(2, 0, 0, 64, 8, own8)),
		batch(0, req(0, uint8(CompletionSuppress), 0, 0, 0, own8), req(1, uint8(CompletionUnsignalled), 0, 0, 8, own8),
			req(2, 0, 0, 0, 8, own8), req(0, 0, 0, 0, 0, iovSeed())),
		batch(1, req(0, 0, 0, 0, 0, own8), req(0, 0, 0, 0, 0, iovSeed(sOther(otherRO, 0, 8))), req(0, 0, 0, 0, 0, own8)),
		batch(0, req(1, 0, 0, 0, 8, own8), req(3, 0, 0, 0, 0, cat(le32(uint32(DTOReceive)), own8))),
		batch(1, req(2, uint8(CompletionSolicitedWait), 0, 0, 8, own8)),
		batch(0, req(1, 0, 0, 0, 4, own8), req(0, 0, 0, 0, 0, own8)),
		batch(1, req(0, 0, 0, 0, 0, own8), req(1, 0, 0x2F, 0, 8, own8), req(0, uint8(CompletionSuppress), 0, 0, 0, own8)),
	} {
		f.Add(uint64(k)<<32, b)
	}
	f.Fuzz(func(t *testing.T, cookie uint64, data []byte) {
		e := h.get(t)
		d := &fuzzBytes{data}
		i := int(d.u8() & 1)
		a := e.attr[i]
		n := int(d.u8()) % 5
		reqs := make([]Request, n)
		remoteOK := make([]bool, n)
		for k := range reqs {
			r := &reqs[k]
			r.Op = DTOOp(d.u8() % 4)
			r.Flags = CompletionFlags(d.u8())
			rmode, roff, rlen := d.u8(), d.u32(), d.u32()
			if r.Op == 3 {
				r.Op = DTOOp(d.u32())
				if r.Op >= DTOExtensionBase && r.Op <= DTOIBRecvMsgImmed {
					// Not a kind the model knows: the IB extensions
					// (ext_ib_test.go) consume the peer's receives and
					// need atomic memory, which this harness does not
					// model, so keep the value out of their range.
					r.Op += 1 << 16
				}
			}
			limit := a.MaxRequestIOV
			switch r.Op {
			case DTORDMAWrite:
				limit = a.MaxRDMAWriteIOV
			case DTORDMARead:
				limit = a.MaxRDMAReadIOV
			}
			r.LocalIOV = e.decodeIOV(d, i, limit)
			r.Cookie = cookie + uint64(k)
			remoteOK[k] = true
			if r.Op == DTORDMAWrite || r.Op == DTORDMARead {
				r.Remote, remoteOK[k] = e.decodeRemote(i, rmode, roff, rlen)
			}
		}
		ep := e.side(i).ep
		call := fmt.Sprintf("PostRequests from the %s: %+v", sideName(i), reqs)
		e.runRequests(t, call, i, reqs, remoteOK, func() (int, error) { return ep.PostRequests(reqs) })
	})
}

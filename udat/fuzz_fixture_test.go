//go:build linux && cgo

package udat

// The fuzz targets of udat (go test -fuzz) sit beside the code they fuzz,
// in files named *_fuzz_test.go. Those that need no RDMA device have no
// build constraint and build and run on every platform:
//
//	datconf_fuzz_test.go    FuzzParseDatConf  dat.conf text into the parser
//	return_fuzz_test.go     FuzzStrerror      DAT_RETURN values into Strerror, String and Error
//	ia_fuzz_test.go         FuzzOpenIAName    IA names into OpenIA
//
// The device targets, built for Linux with cgo, post on a live connection
// over the Soft-RoCE device and, like every device test, fail without one
// unless the run is host-only (UDAPL_HOST_ONLY=1):
//
//	post_fuzz_test.go       FuzzPostSend, FuzzPostRDMAWrite, FuzzPostRDMARead, FuzzPostRequests
//	post_recv_fuzz_test.go  FuzzPostRecv
//	srq_fuzz_test.go        FuzzSRQPostRecv
//
// Their seeds (f.Add) run in every go test. make fuzz runs each target for
// a bounded time, the ones without a build constraint on the host, the
// device ones in the VM.
//
// This file is the device targets' harness. They decode the fuzzer's bytes
// into I/O vectors: segments of a real LMR with fuzzed offsets and lengths,
// segments of the peer's LMR, of LMRs without the needed privilege, of
// another PZ, of a freed LMR, and made-up lmr_contexts; plus a cookie,
// completion flags and, for RDMA, the remote buffer. A model of the
// post-time checks decides, for each input, which DAT error types the call
// may return (none: it must succeed). A DTO that was posted must come back
// once, with its cookie, and when the model can tell what the transfer
// writes, the memory of every LMR is compared with the expected contents
// afterwards.

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
)

// ---------------------------------------------------------------------------
// Device fuzzing: decoding

// fuzzBytes hands out the fuzzer's bytes as little-endian numbers, zeros
// once they run out.
type fuzzBytes struct{ b []byte }

func (d *fuzzBytes) take(n int) []byte {
	var buf [8]byte
	k := copy(buf[:n], d.b)
	d.b = d.b[k:]
	return buf[:n]
}
func (d *fuzzBytes) u8() uint8   { return d.take(1)[0] }
func (d *fuzzBytes) u16() uint16 { return binary.LittleEndian.Uint16(d.take(2)) }
func (d *fuzzBytes) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }
func (d *fuzzBytes) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }

// Segment encodings of an I/O vector (the first byte selects one, modulo 8).
const (
	segOwn   = 0 // [0 off:u16 len:u32] within the poster's LMR (also 1, 2)
	segRaw   = 3 // [3 delta:i32 len:u32] the poster's LMR, address and length as given
	segAny   = 4 // [4 va:u64 len:u32 ctx:u32] anything at all
	segOther = 5 // [5 which:u8 off:u16 len:u32] within another LMR (fuzzEnv.others)
	segZero  = 6 // [6 va:u64 ctx:u32] zero length, other fields garbage
	segWhole = 7 // [7] the poster's whole LMR
)

// The seeds are written with these.
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func sOwn(off uint16, n uint32) []byte { return cat([]byte{segOwn}, le16(off), le32(n)) }
func sRaw(delta int32, n uint32) []byte {
	return cat([]byte{segRaw}, le32(uint32(delta)), le32(n))
}
func sAny(va uint64, n, ctx uint32) []byte { return cat([]byte{segAny}, le64(va), le32(n), le32(ctx)) }
func sOther(which uint8, off uint16, n uint32) []byte {
	return cat([]byte{segOther, which}, le16(off), le32(n))
}
func sZero(va uint64, ctx uint32) []byte { return cat([]byte{segZero}, le64(va), le32(ctx)) }
func sWhole() []byte                     { return []byte{segWhole} }

// iovSeed encodes an I/O vector of segs; with no segs, nilIOV chooses nil
// over an empty slice.
func iovSeed(segs ...[]byte) []byte {
	if len(segs) == 0 {
		return []byte{0, 1}
	}
	return cat(append([][]byte{{byte(len(segs))}}, segs...)...)
}

// The others a segOther segment picks from.
const (
	otherPeer    = iota // the peer's LMR (same PZ, every privilege)
	otherRO             // local and remote read only
	otherWO             // local write only
	otherNone           // no privilege
	otherForeign        // another PZ
	otherStale          // freed
	otherSink           // the poster's receive sink (only where there are sinks)
)

// ---------------------------------------------------------------------------
// Device fuzzing: the connection

// fuzzEnvOpts shapes the connection a device target posts on.
type fuzzEnvOpts struct {
	sinks bool // both EPs keep receives posted for the other's sends
	srq   bool // the server EP takes its receives from an SRQ
}

const (
	fuzzLMRSize  = 64 << 10  // the LMR of each side (newPair's)
	fuzzSinkSize = 256 << 10 // each receive sink: room for the largest send
	fuzzSinks    = 8         // receives kept posted on each sink side
	fuzzWait     = 6 * time.Second
	sinkCookie   = 0x51_4e_4b_00_00_00_00_00
	fuzzSendBase = 0x50_45_45_52_00_00_00_00
)

// fuzzLMR is what the model knows of an LMR.
type fuzzLMR struct {
	l    *LMR
	name string
	va   uint64
	size uint64
	pz   *PZ
	priv MemPriv
}

// fuzzEnv is the connection of a device target, kept across inputs and
// rebuilt when an input broke it.
type fuzzEnv struct {
	opts   fuzzEnvOpts
	ia     *IA
	pz     *PZ
	p      *pair
	srq    *SRQ
	srqIOV int
	attr   [2]EPAttr // what the EPs carry (Query), client then server
	sink   [2]*LMR
	lmrs   map[uint32]*fuzzLMR // live LMRs by lmr_context
	all    []*fuzzLMR
	others [2][]LMRTriplet // per poster: whole triplets of otherPeer...
	broken bool
	stats  *fuzzStats
}

// fuzzConnQualBase gives each process (the fuzzing engine runs several
// workers) a block of 20 connection qualifiers of its own, which its
// device targets' connections take in turn (fuzzOpens): a qualifier comes
// back only 20 connections later. On iWARP a PSP is a TCP listener, and
// the port of a connection just closed may still be held (siw, Linux
// 6.12: DAT_CONN_QUAL_IN_USE when each target started the block again).
// The blocks lie where connQualSeq says.
var fuzzConnQualBase = 16000 + uint64(os.Getpid()%200)*20

// fuzzOpens counts the process's fuzz connections (fuzzHolder.open).
var fuzzOpens atomic.Uint64

// fuzzHolder is a device target's connection, opened on first use.
type fuzzHolder struct {
	opts  fuzzEnvOpts
	env   *fuzzEnv
	stats fuzzStats
}

// fuzzStats counts what a device target's inputs did (logged with -v).
type fuzzStats struct {
	inputs, refused, posted, failed, verified, rebuilds int
}

// newFuzzHolder marks f as a device test and returns the holder of its
// connection, which is closed when f ends. The connection is opened here,
// so that a missing device fails f once, except in the fuzzing coordinator,
// which runs no inputs itself.
func newFuzzHolder(f *testing.F, o fuzzEnvOpts) *fuzzHolder {
	devtest.Require(f)
	h := &fuzzHolder{opts: o}
	if !fuzzCoordinator() {
		h.open(f)
	}
	f.Cleanup(func() {
		if h.env != nil {
			h.env.close()
		}
		s := h.stats
		if s.inputs == 0 {
			return // the fuzzing coordinator, whose workers run the inputs
		}
		f.Logf("%d inputs: %d refused at post time, %d DTOs posted, %d failed (connection rebuilt %d times), memory checked after %d",
			s.inputs, s.refused, s.posted, s.failed, s.rebuilds, s.verified)
	})
	return h
}

// get returns a connected environment with empty EVDs, rebuilding it if
// the last input broke it.
func (h *fuzzHolder) get(t *testing.T) *fuzzEnv {
	t.Helper()
	e := h.env
	if e != nil && !e.broken {
		for i := range 2 {
			s := e.side(i)
			st, _, _, err := s.ep.GetStatus()
			require.NoError(t, err)
			if st != EPStateConnected {
				e.broken = true
				break
			}
		}
	}
	h.stats.inputs++
	// An input that failed half-way leaves the connection in a state the
	// next one cannot start from.
	t.Cleanup(func() {
		if t.Failed() && h.env != nil {
			h.env.broken = true
		}
	})
	if e != nil && e.broken {
		e.close()
		h.env = nil
		h.stats.rebuilds++
	}
	if h.env == nil {
		h.open(t)
		return h.env
	}
	// Nothing may be left over from the last input.
	for i := range 2 {
		s := e.side(i)
		for _, evd := range []*EVD{s.req, s.recv, s.conn} {
			ev, err := evd.Dequeue()
			require.Same(t, ErrQueueEmpty, err, "stray event on the %s side after the last input: %v %+v",
				sideName(i), ev.Number, ev.DTO)
		}
	}
	return e
}

func (h *fuzzHolder) open(t testing.TB) {
	t.Helper()
	connQualSeq.Store(fuzzConnQualBase + fuzzOpens.Add(1)%20)
	h.env = openFuzzEnv(t, h.opts)
	h.env.stats = &h.stats
}

// fuzzCoordinator reports whether this process coordinates fuzzing workers
// (go test -fuzz) rather than running inputs.
func fuzzCoordinator() bool {
	fz, w := flag.Lookup("test.fuzz"), flag.Lookup("test.fuzzworker")
	return fz != nil && fz.Value.String() != "" && (w == nil || w.Value.String() != "true")
}

func sideName(i int) string { return [2]string{"client", "server"}[i] }

func openFuzzEnv(t testing.TB, o fuzzEnvOpts) *fuzzEnv {
	t.Helper()
	dev := devtest.Device()
	ia, err := OpenIA(dev, 32)
	require.NoError(t, err, "open the RDMA device %q", dev)
	e := &fuzzEnv{opts: o, ia: ia, lmrs: map[uint32]*fuzzLMR{}}
	ok := false
	defer func() {
		if !ok {
			ia.Close(CloseAbruptFlag)
		}
	}()
	e.pz = mustPZ(t, ia)

	// The client allows unsignalled requests and receives and has its own
	// segment limits; the server has the defaults and a smaller message
	// size (the sizes asked for are minimums: the EPs may carry more).
	ca, sa := DefaultEPAttr(), DefaultEPAttr()
	ca.RequestCompletionFlags = CompletionUnsignalled
	ca.RecvCompletionFlags = CompletionUnsignalled
	iaAttr, _, err := ia.Query()
	require.NoError(t, err)
	ca.MaxRequestIOV, ca.MaxRDMAWriteIOV, ca.MaxRecvIOV = 3, 2, 2
	ca.MaxRDMAReadIOV = min(4, iaAttr.MaxIOVSegmentsPerRDMARead) // soft-iWARP: 1
	ca.MaxMessageSize, ca.MaxRDMASize = 1<<20, 1<<20
	sa.MaxMessageSize, sa.MaxRDMASize = 96<<10, 128<<10
	po := pairOpts{clientAttr: &ca, serverAttr: &sa, splitEVDs: true}
	if o.srq {
		e.srqIOV = 3
		e.srq, err = ia.CreateSRQ(e.pz, SRQAttr{MaxRecvDTOs: 16, MaxRecvIOV: e.srqIOV})
		require.NoError(t, err)
		po.srq = e.srq
	}
	e.p = newPairIn(t, ia, e.pz, po)
	for i := range 2 {
		s := e.side(i)
		q, err := s.ep.Query()
		require.NoError(t, err)
		e.attr[i] = q.Attr
		e.add(s.lmr, sideName(i)+" LMR")
	}

	alloc := func(pz *PZ, size int, priv MemPriv, name string) *LMR {
		l, err := ia.AllocLMR(pz, size, priv)
		require.NoError(t, err)
		e.add(l, name)
		return l
	}
	ro := alloc(e.pz, 4096, MemPrivLocalRead|MemPrivRemoteRead, "read-only LMR")
	wo := alloc(e.pz, 4096, MemPrivLocalWrite, "write-only LMR")
	none := alloc(e.pz, 4096, MemPrivNone, "LMR without privileges")
	foreign := alloc(mustPZ(t, ia), 4096, MemPrivAll, "LMR of another PZ")
	if o.sinks {
		for i := range 2 {
			e.sink[i] = alloc(e.pz, fuzzSinkSize, MemPrivLocalRead|MemPrivLocalWrite, sideName(i)+" sink")
		}
	}
	// Freed last, so that no later registration reuses its lmr_context.
	stale, err := ia.AllocLMR(e.pz, 4096, MemPrivAll)
	require.NoError(t, err)
	staleT := stale.Triplet(0, 4096)
	require.NoError(t, stale.Free())

	for i := range 2 {
		peer := e.side(1 - i).lmr
		e.others[i] = []LMRTriplet{peer.Triplet(0, fuzzLMRSize), ro.Triplet(0, 4096), wo.Triplet(0, 4096),
			none.Triplet(0, 4096), foreign.Triplet(0, 4096), staleT}
		if o.sinks {
			e.others[i] = append(e.others[i], e.sink[i].Triplet(0, fuzzSinkSize))
		}
	}
	// Contents that make any misplaced byte show.
	for _, m := range e.all {
		b := m.l.Bytes()
		for j := range b {
			b[j] = byte(j*131+j>>8) ^ byte(m.l.Context())
		}
	}
	if o.sinks {
		for i := range 2 {
			e.postSinks(t, i, fuzzSinks)
		}
	}
	ok = true
	return e
}

func (e *fuzzEnv) add(l *LMR, name string) {
	m := &fuzzLMR{l: l, name: name, va: uint64(l.Triplet(0, 0).VirtualAddress), size: uint64(len(l.Bytes())),
		pz: lmrPZ(l), priv: lmrPriv(l)}
	e.lmrs[l.Context()] = m
	e.all = append(e.all, m)
}

func lmrPZ(l *LMR) *PZ {
	q, err := l.Query()
	if err != nil {
		return nil
	}
	return q.PZ
}

func lmrPriv(l *LMR) MemPriv {
	q, err := l.Query()
	if err != nil {
		return 0
	}
	return q.MemPriv
}

func (e *fuzzEnv) close() {
	if e.ia != nil {
		e.ia.Close(CloseAbruptFlag)
		e.ia = nil
	}
}

func (e *fuzzEnv) side(i int) *side {
	if i == 0 {
		return &e.p.client
	}
	return &e.p.server
}

// postSinks posts n receives of side i's whole sink.
func (e *fuzzEnv) postSinks(t testing.TB, i, n int) {
	t.Helper()
	s := e.side(i)
	for k := range n {
		require.NoError(t, s.ep.PostRecv([]LMRTriplet{e.sink[i].Triplet(0, fuzzSinkSize)}, sinkCookie+uint64(k), CompletionDefault))
	}
}

// decodeIOV reads an I/O vector for side i's EP whose limit is limit
// segments: up to two more than that.
func (e *fuzzEnv) decodeIOV(d *fuzzBytes, i, limit int) []LMRTriplet {
	n := int(d.u8()) % (limit + 3)
	if n == 0 {
		if d.u8()&1 == 1 {
			return nil
		}
		return []LMRTriplet{}
	}
	own := e.side(i).lmr
	iov := make([]LMRTriplet, n)
	for k := range iov {
		switch d.u8() % 8 {
		case segRaw:
			delta := int64(int32(d.u32()))
			iov[k] = LMRTriplet{VirtualAddress: own.Triplet(0, 0).VirtualAddress + uint64(delta),
				SegmentLength: d.u32(), LMRContext: own.Context()}
		case segAny:
			iov[k] = LMRTriplet{VirtualAddress: d.u64(), SegmentLength: d.u32(), LMRContext: d.u32()}
		case segOther:
			o := e.others[i][int(d.u8())%len(e.others[i])]
			iov[k] = within(o, d.u16(), d.u32())
		case segZero:
			iov[k] = LMRTriplet{VirtualAddress: d.u64(), LMRContext: d.u32()}
		case segWhole:
			iov[k] = own.Triplet(0, fuzzLMRSize)
		default:
			iov[k] = within(own.Triplet(0, fuzzLMRSize), d.u16(), d.u32())
		}
	}
	return iov
}

// within returns a piece of whole, the triplet of a whole LMR, at off with
// length n, both reduced to fit.
func within(whole LMRTriplet, off uint16, n uint32) LMRTriplet {
	size := uint64(whole.SegmentLength)
	o := uint64(off) % size
	l := uint64(n) % (size - o + 1)
	return LMRTriplet{VirtualAddress: whole.VirtualAddress + o, SegmentLength: uint32(l), LMRContext: whole.LMRContext}
}

// ---------------------------------------------------------------------------
// Device fuzzing: the model of the post-time checks

// typeSet is a set of DAT error types.
type typeSet uint64

func typesOf(ts ...Return) typeSet {
	var s typeSet
	for _, t := range ts {
		s |= 1 << (t.Type() >> 16)
	}
	return s
}

func (s typeSet) has(r Return) bool {
	i := r.Type() >> 16
	return i < 64 && s&(1<<i) != 0
}

func (s typeSet) String() string {
	var names []string
	for x := uint64(s); x != 0; x &= x - 1 {
		names = append(names, (Return(bits.TrailingZeros64(x)) << 16).String())
	}
	return "{" + strings.Join(names, " ") + "}"
}

// postTypes are the DAT error types the post calls document.
var postTypes = typesOf(InvalidParameter, InvalidHandle, InvalidState, LengthError, ProtectionViolation,
	PrivilegesViolation, InsufficientResources)

// segRange is a nonzero segment of a valid I/O vector: n bytes at off in l.
type segRange struct {
	m      *fuzzLMR
	off, n uint64
}

// checkIOVModel returns the error types the segments of iov allow for a
// DTO of the EP or SRQ of pz that needs privilege need, the total length,
// and the segments (meaningful only when the set is empty).
func (e *fuzzEnv) checkIOVModel(iov []LMRTriplet, need MemPriv) (typeSet, uint64, []segRange) {
	var viol typeSet
	var total uint64
	var segs []segRange
	for _, s := range iov {
		if s.SegmentLength == 0 {
			continue // skipped, whatever its other fields
		}
		total += uint64(s.SegmentLength)
		m := e.lmrs[s.LMRContext]
		if m == nil {
			// Unknown or freed: DAT_PRIVILEGES_VIOLATION in this library,
			// an invalid parameter or protection violation elsewhere.
			viol |= typesOf(PrivilegesViolation, ProtectionViolation, InvalidParameter)
			continue
		}
		if m.pz != e.pz {
			viol |= typesOf(ProtectionViolation)
		}
		off := s.VirtualAddress - m.va
		if s.VirtualAddress < m.va || off > m.size || uint64(s.SegmentLength) > m.size-off {
			viol |= typesOf(InvalidParameter)
		}
		if m.priv&need != need {
			viol |= typesOf(PrivilegesViolation)
		}
		segs = append(segs, segRange{m, off, uint64(s.SegmentLength)})
	}
	return viol, total, segs
}

// fuzzDTO is one request or receive of an input, with what the model
// expects of it.
type fuzzDTO struct {
	op       DTOOp
	cookie   uint64
	viol     typeSet // error types its checks allow; empty: it must be posted
	signaled bool    // a successful completion is reported
	expectOK bool    // it must complete successfully
	length   uint64  // TransferredLength of a successful completion
	segs     []segRange
	remote   RMRTriplet
	remoteOK bool
}

// modelRecv is the model of a receive posted to side i's EP, or to the
// SRQ when srq is set.
func (e *fuzzEnv) modelRecv(i int, rv Recv, srq bool) fuzzDTO {
	x := fuzzDTO{op: DTOReceive, cookie: rv.Cookie, signaled: true, expectOK: true}
	if srq {
		if rv.Flags != CompletionDefault {
			x.viol |= typesOf(InvalidParameter)
		}
		if len(rv.LocalIOV) > e.srqIOV {
			x.viol |= typesOf(InvalidParameter)
		}
	} else {
		a := e.attr[i]
		if rv.Flags&^CompletionUnsignalled != 0 ||
			(rv.Flags&CompletionUnsignalled != 0 && a.RecvCompletionFlags&CompletionUnsignalled == 0) {
			x.viol |= typesOf(InvalidParameter)
		}
		if e.srq != nil && i == 1 {
			x.viol |= typesOf(InvalidState) // its receives come from the SRQ
		}
		if len(rv.LocalIOV) > a.MaxRecvIOV {
			x.viol |= typesOf(InvalidParameter)
		}
	}
	if len(rv.LocalIOV) == 0 && onSIW(e.p.ia) {
		x.viol |= typesOf(InvalidParameter) // no receive without segments
	}
	viol, total, segs := e.checkIOVModel(rv.LocalIOV, MemPrivLocalWrite)
	x.viol |= viol
	x.length, x.segs = total, segs
	return x
}

// checkPosted checks what a post call of dtos returned: the ones before the
// first that the model rejects are posted, and the error, if any, has one
// of that one's types.
func checkPosted(t *testing.T, call string, dtos []fuzzDTO, n int, err error) {
	t.Helper()
	first := len(dtos)
	for k, x := range dtos {
		if x.viol != 0 {
			first = k
			break
		}
	}
	if first == len(dtos) {
		require.NoError(t, err, "%s: every DTO passes the checks", call)
		require.Equal(t, len(dtos), n, "%s: every DTO is posted", call)
		return
	}
	require.Error(t, err, "%s: DTO %d must be refused (it allows %v)", call, first, dtos[first].viol)
	var de *Error
	require.ErrorAs(t, err, &de, "%s returns a *udat.Error", call)
	require.True(t, de.Code.IsError(), "%v", err)
	require.True(t, postTypes.has(de.Code), "%s: %v is not among the types it documents", call, err)
	require.True(t, dtos[first].viol.has(de.Code), "%s: DTO %d got %v, want one of %v", call, first, err, dtos[first].viol)
	require.Equal(t, first, n, "%s: the DTOs before the refused one are posted, no other", call)
}

// ---------------------------------------------------------------------------
// Device fuzzing: memory

// memPlan is what one posted DTO writes: the bytes read from src go to dst.
type memPlan struct {
	src, dst []segRange
}

// snapshot copies the memory of every LMR.
func (e *fuzzEnv) snapshot() map[*fuzzLMR][]byte {
	s := make(map[*fuzzLMR][]byte, len(e.all))
	for _, m := range e.all {
		s[m] = bytes.Clone(m.l.Bytes())
	}
	return s
}

func overlaps(a, b []segRange) bool {
	for _, x := range a {
		for _, y := range b {
			if x.m == y.m && x.off < y.off+y.n && y.off < x.off+x.n {
				return true
			}
		}
	}
	return false
}

// expect returns the memory plan p leaves, from the snapshot before, or nil
// when it cannot tell (the source and destination overlap, or the
// destination overlaps itself).
func (p memPlan) expect(before map[*fuzzLMR][]byte) map[*fuzzLMR][]byte {
	if overlaps(p.src, p.dst) {
		return nil
	}
	for k := range p.dst {
		if overlaps(p.dst[k:k+1], p.dst[k+1:]) {
			return nil
		}
	}
	var data []byte
	for _, s := range p.src {
		data = append(data, before[s.m][s.off:s.off+s.n]...)
	}
	after := make(map[*fuzzLMR][]byte, len(before))
	for m, b := range before {
		after[m] = b
	}
	for _, d := range p.dst {
		if len(data) == 0 {
			break
		}
		b := bytes.Clone(after[d.m])
		k := copy(b[d.off:d.off+d.n], data)
		data = data[k:]
		after[d.m] = b
	}
	return after
}

// count records what a post call did.
func (e *fuzzEnv) count(n int, err error) {
	e.stats.posted += n
	if err != nil {
		e.stats.refused++
	}
}

// verify compares the memory of every LMR with want.
func (e *fuzzEnv) verify(t *testing.T, want map[*fuzzLMR][]byte) {
	t.Helper()
	e.stats.verified++
	for _, m := range e.all {
		got := m.l.Bytes()
		if w := want[m]; !bytes.Equal(got, w) {
			k := 0
			for k < len(got) && got[k] == w[k] {
				k++
			}
			t.Fatalf("the %s differs from the expected contents from offset %d (of %d): got %#x, want %#x",
				m.name, k, len(got), got[k:min(k+16, len(got))], w[k:min(k+16, len(w))])
		}
	}
}

// trim cuts segments to n bytes in order, as an RDMA read or a receive
// fills them.
func trim(segs []segRange, n uint64) []segRange {
	var out []segRange
	for _, s := range segs {
		if n == 0 {
			break
		}
		s.n = min(s.n, n)
		n -= s.n
		out = append(out, s)
	}
	return out
}

// ---------------------------------------------------------------------------
// Device fuzzing: running an input

// waitDTOEvent waits until deadline for a DTO completion on evd.
func waitDTOEvent(t *testing.T, evd *EVD, deadline time.Time, what string) DTOCompletionData {
	t.Helper()
	left := time.Until(deadline)
	if left < time.Millisecond {
		left = time.Millisecond
	}
	ev, _, err := evd.Wait(Timeout(left/time.Microsecond), 1)
	require.NoError(t, err, "waiting for the completion of %s", what)
	require.Equal(t, EventDTOCompletion, ev.Number, "waiting for the completion of %s", what)
	return ev.DTO
}

// runRecvs posts the receives recvs to side i's EP (or to the SRQ) with
// post, then makes the peer send one message into each posted one, of at
// most msg bytes, and checks the completions.
func (e *fuzzEnv) runRecvs(t *testing.T, call string, i int, srq bool, recvs []Recv, msg uint16, post func() (int, error)) {
	t.Helper()
	s, peer := e.side(i), e.side(1-i)
	dtos := make([]fuzzDTO, len(recvs))
	for k, rv := range recvs {
		dtos[k] = e.modelRecv(i, rv, srq)
	}
	n, err := post()
	checkPosted(t, call, dtos, n, err)
	e.count(n, err)
	if n == 0 {
		return
	}
	posted := dtos[:n]
	// The message sizes: what the receive holds, up to msg bytes (over an
	// SRQ, any message may land in any of the posted receives).
	size := make([]uint64, n)
	least := posted[0].length
	for _, x := range posted {
		least = min(least, x.length)
	}
	for k, x := range posted {
		size[k] = min(x.length, uint64(msg), fuzzLMRSize)
		if srq {
			size[k] = min(least, uint64(msg), fuzzLMRSize)
		}
	}
	src := e.lmrs[peer.lmr.Context()]
	var want map[*fuzzLMR][]byte
	if n == 1 {
		want = memPlan{src: []segRange{{src, 0, size[0]}}, dst: trim(posted[0].segs, size[0])}.expect(e.snapshot())
	}
	deadline := time.Now().Add(fuzzWait)
	for k := range n {
		require.NoError(t, peer.ep.PostSend([]LMRTriplet{peer.lmr.Triplet(0, int(size[k]))}, fuzzSendBase+uint64(k), CompletionDefault))
	}
	for k := range n {
		d := waitDTOEvent(t, peer.req, deadline, "the peer's send")
		require.Equal(t, DTOSuccess, d.Status, "the peer's send into receive %#x", posted[k].cookie)
		require.Equal(t, fuzzSendBase+uint64(k), d.Cookie)
	}
	got := make([]uint64, n)
	for k := range n {
		d := waitDTOEvent(t, s.recv, deadline, fmt.Sprintf("receive %d", k))
		require.Equal(t, DTOReceive, d.Op)
		require.Equal(t, DTOSuccess, d.Status, "receive %#x", d.Cookie)
		require.Same(t, s.ep, d.EP)
		require.Equal(t, size[k], d.TransferredLength, "receive %#x", d.Cookie)
		got[k] = d.Cookie
	}
	cookies := make([]uint64, n)
	for k, x := range posted {
		cookies[k] = x.cookie
	}
	if srq {
		require.ElementsMatch(t, cookies, got, "each posted receive completes once")
	} else {
		require.Equal(t, cookies, got, "the receives complete once each, in order")
	}
	if want != nil {
		e.verify(t, want)
	}
}

// ---------------------------------------------------------------------------
// Device fuzzing: the seeds of the receive targets

// recvSeed is a seed of the receive targets: the size of the messages the
// peer sends, and the input [a:u8 batch:u8 per receive: flags:u8 iov...].
type recvSeed struct {
	msg  uint16
	data []byte
}

// rv encodes one receive of a recvSeed's input.
func rv(flags uint8, iov []byte) []byte { return cat([]byte{flags}, iov) }

// recvInput encodes a receive target's input: a (the side or the mode), the
// batch and the receives.
func recvInput(a, batch uint8, recvs ...[]byte) []byte {
	return cat(append([][]byte{{a, batch}}, recvs...)...)
}

// addRecvSeeds adds seeds, each with a cookie of its own.
func addRecvSeeds(f *testing.F, seeds []recvSeed) {
	for k, s := range seeds {
		f.Add(uint64(k)<<8, s.msg, s.data)
	}
}

// postedOne is what a post call of one DTO returns, as a post of several
// does: how many were posted, and the error.
func postedOne(err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return 1, nil
}

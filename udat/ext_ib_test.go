//go:build linux && cgo

package udat

// Device tests of the IB extensions (ext_ib.go): RDMA write with immediate
// data, sends with immediate data, fetch-and-add and compare-and-swap, and
// the extended completions that report them on both sides.

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// waitIBDTO waits for one extended DTO completion event on e.
func waitIBDTO(t testing.TB, e *EVD) Event {
	t.Helper()
	ev := waitEvent(t, e)
	require.Equal(t, EventIBDTO, ev.Number, "event %v (%+v)", ev.Number, ev.DTO)
	return ev
}

// atomicLMR allocates memory the peer may operate on with the atomics.
func atomicLMR(t testing.TB, p *pair) *LMR {
	t.Helper()
	l, err := p.ia.AllocLMR(p.pz, 4096, MemPrivAll|MemPrivIBRemoteAtomic)
	require.NoError(t, err)
	return l
}

func TestIBRDMAWriteImmed(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needImmediate(t, c)
	// A receive with no segment is enough for the immediate data.
	require.NoError(t, s.ep.PostRecv(nil, 77, CompletionDefault))
	copy(c.lmr.Bytes()[256:], "written with immediate data")
	require.NoError(t, c.ep.PostRDMAWriteImmed([]LMRTriplet{c.lmr.Triplet(256, 27)}, 5,
		s.lmr.RMRTriplet(1024, 27), 0xdeadbeef, CompletionDefault))

	ev := waitIBDTO(t, c.req)
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 5, Status: DTOSuccess, TransferredLength: 27, Op: DTOIBRDMAWriteImmed}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBRDMAWriteImmed, Status: IBOpSuccess}, ev.IB)

	ev = waitIBDTO(t, s.recv)
	require.Equal(t, DTOCompletionData{EP: s.ep, Cookie: 77, Status: DTOSuccess, TransferredLength: 27, Op: DTOIBRecvImmed}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBRDMAWriteImmedData, Status: IBOpSuccess, ImmedData: 0xdeadbeef}, ev.IB)
	require.Equal(t, "written with immediate data", string(s.lmr.Bytes()[1024:1051]))
	requireEmpty(t, s.recv)
}

func TestIBSendImmed(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needImmediate(t, c)
	postRecvs(t, s, 0, 64, 1, 40)
	copy(c.lmr.Bytes()[512:], "hello with immediate")
	require.NoError(t, c.ep.PostSendImmed([]LMRTriplet{c.lmr.Triplet(512, 20)}, 6, 0x01020304, CompletionDefault))

	d := waitDTO(t, c.req) // the sender's side is an ordinary send
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 6, Status: DTOSuccess, TransferredLength: 20, Op: DTOSend}, d)

	ev := waitIBDTO(t, s.recv)
	require.Equal(t, DTOCompletionData{EP: s.ep, Cookie: 40, Status: DTOSuccess, TransferredLength: 20, Op: DTOIBRecvMsgImmed}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBRecvImmedData, Status: IBOpSuccess, ImmedData: 0x01020304}, ev.IB)
	require.Equal(t, "hello with immediate", string(s.lmr.Bytes()[:20]))

	// A plain send still completes as a plain receive.
	postRecvs(t, s, 64, 64, 1, 41)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(512, 5)}, 7, CompletionDefault))
	waitDTO(t, c.req)
	d = waitDTO(t, s.recv)
	require.Equal(t, DTOReceive, d.Op)
	require.Equal(t, uint64(41), d.Cookie)
}

func TestIBFetchAndAddAndCmpAndSwap(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needAtomics(t, c)
	target := atomicLMR(t, p)
	word := func(l *LMR, off int) uint64 { return binary.NativeEndian.Uint64(l.Bytes()[off:]) }
	binary.NativeEndian.PutUint64(target.Bytes()[8:], 40)

	require.NoError(t, c.ep.PostFetchAndAdd(2, c.lmr.Triplet(0, 8), 1, target.RMRTriplet(8, 8), CompletionDefault))
	ev := waitIBDTO(t, c.req)
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 1, Status: DTOSuccess, TransferredLength: 8, Op: DTOIBFetchAdd}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBFetchAndAdd, Status: IBOpSuccess}, ev.IB)
	require.Equal(t, uint64(40), word(c.lmr, 0), "the old value")
	require.Equal(t, uint64(42), word(target, 8), "the sum")

	// A compare that matches swaps; one that does not leaves the memory.
	require.NoError(t, c.ep.PostCmpAndSwap(42, 7, c.lmr.Triplet(16, 8), 2, target.RMRTriplet(8, 8), CompletionDefault))
	ev = waitIBDTO(t, c.req)
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 2, Status: DTOSuccess, TransferredLength: 8, Op: DTOIBCmpSwap}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBCmpAndSwap, Status: IBOpSuccess}, ev.IB)
	require.Equal(t, uint64(42), word(c.lmr, 16))
	require.Equal(t, uint64(7), word(target, 8))

	require.NoError(t, c.ep.PostCmpAndSwap(1, 9, c.lmr.Triplet(24, 8), 3, target.RMRTriplet(8, 8), CompletionDefault))
	ev = waitIBDTO(t, c.req)
	require.Equal(t, DTOSuccess, ev.DTO.Status)
	require.Equal(t, uint64(7), word(c.lmr, 24))
	require.Equal(t, uint64(7), word(target, 8), "no swap")

	// A remote triplet longer than 8 bytes, as C programs pass the peer's
	// whole RMR triplet (dtestx: 256 bytes): the atomic works on its first
	// 8 bytes and leaves the rest.
	binary.NativeEndian.PutUint64(target.Bytes()[16:], 99)
	require.NoError(t, c.ep.PostFetchAndAdd(3, c.lmr.Triplet(32, 8), 4, target.RMRTriplet(8, 256), CompletionDefault))
	require.Equal(t, DTOSuccess, waitIBDTO(t, c.req).DTO.Status)
	require.Equal(t, uint64(7), word(c.lmr, 32))
	require.Equal(t, uint64(10), word(target, 8))
	require.NoError(t, c.ep.PostCmpAndSwap(10, 5, c.lmr.Triplet(40, 8), 5, target.RMRTriplet(8, 256), CompletionDefault))
	require.Equal(t, DTOSuccess, waitIBDTO(t, c.req).DTO.Status)
	require.Equal(t, uint64(10), word(c.lmr, 40))
	require.Equal(t, uint64(5), word(target, 8))
	require.Equal(t, uint64(99), word(target, 16), "the bytes after the first 8 are left")
	requireEmpty(t, s.recv)
	requireEmpty(t, c.req)
}

// The checks made before anything is posted.
func TestIBAtomicPostTimeChecks(t *testing.T) {
	p := newPair(t, pairOpts{})
	c := p.client
	target := atomicLMR(t, p)
	remote := target.RMRTriplet(0, 8)
	readOnly, err := p.ia.AllocLMR(p.pz, 4096, MemPrivLocalRead)
	require.NoError(t, err)

	requireCode(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 4), 1, remote, CompletionDefault), InvalidParameter|InvalidArg3)
	requireCode(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 8), 1, target.RMRTriplet(0, 4), CompletionDefault), InvalidParameter|InvalidArg5)
	requireCode(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 8), 1, target.RMRTriplet(4, 8), CompletionDefault), InvalidParameter|InvalidArg5)
	requireCode(t, c.ep.PostFetchAndAdd(1, readOnly.Triplet(0, 8), 1, remote, CompletionDefault), PrivilegesViolation|PrivilegesWrite)
	requireCode(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 8), 1, remote, CompletionSolicitedWait), InvalidParameter|InvalidArg6)
	requireCode(t, c.ep.PostCmpAndSwap(1, 2, c.lmr.Triplet(0, 9), 1, remote, CompletionDefault), InvalidParameter|InvalidArg4)
	requireCode(t, c.ep.PostCmpAndSwap(1, 2, c.lmr.Triplet(0, 8), 1, target.RMRTriplet(1, 8), CompletionDefault), InvalidParameter|InvalidArg6)
	requireCode(t, c.ep.PostCmpAndSwap(1, 2, c.lmr.Triplet(0, 8), 1, remote, 0x80), InvalidParameter|InvalidArg7)
	want := LengthError
	if providerAttr(t, p.ia, "DAT_IB_IMMED_DATA") != "TRUE" {
		want = ModelNotSupported // before the length: no immediate data at all
	}
	requireCode(t, c.ep.PostRDMAWriteImmed([]LMRTriplet{c.lmr.Triplet(0, 64)}, 1, target.RMRTriplet(0, 32), 1, CompletionDefault), want)
	requireCode(t, c.ep.PostRDMAWriteImmed(nil, 1, remote, 1, 0x80), InvalidParameter|InvalidArg7)
	_, err = c.ep.PostRequests([]Request{{Op: DTORDMAWrite, WithImmed: true, Remote: remote}})
	requireCode(t, err, InvalidParameter|InvalidArg2)
	_, err = c.ep.PostRequests([]Request{{Op: DTOIBRecvImmed}})
	requireCode(t, err, InvalidParameter|InvalidArg2)
	requireEmpty(t, c.req)
	st, _, reqIdle, err := c.ep.GetStatus()
	require.NoError(t, err)
	require.Equal(t, EPStateConnected, st)
	require.True(t, reqIdle, "nothing was posted")
}

// The target's memory must allow atomics: the peer's device refuses them
// otherwise, and the DTO fails with a remote access error.
func TestIBAtomicWithoutRemoteAtomicPrivilege(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	needAtomics(t, c)
	binary.NativeEndian.PutUint64(s.lmr.Bytes()[64:], 5)
	require.NoError(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 8), 9, s.lmr.RMRTriplet(64, 8), CompletionDefault))
	ev := waitIBDTO(t, c.req)
	require.Equal(t, uint64(9), ev.DTO.Cookie)
	require.Equal(t, DTOErrRemoteAccess, ev.DTO.Status)
	require.Equal(t, uint64(0), ev.DTO.TransferredLength)
	require.Equal(t, IBExtensionData{Type: IBFetchAndAdd, Status: IBOpErr}, ev.IB)
	require.Equal(t, uint64(5), binary.NativeEndian.Uint64(s.lmr.Bytes()[64:]), "memory unchanged")
	require.Equal(t, EventConnectionBroken, waitEvent(t, c.conn).Number)
}

// Extended requests batch with the others, complete in posting order, and
// reach an SRQ's receives with their immediate data.
func TestIBExtensionsBatchedToSRQ(t *testing.T) {
	ia, pz, srq := newSRQ(t, SRQAttr{MaxRecvDTOs: 8, MaxRecvIOV: 1})
	p := newPairIn(t, ia, pz, pairOpts{srq: srq})
	c, s := p.client, p.server
	needImmediate(t, c)
	for i := range 3 {
		require.NoError(t, srq.PostRecv([]LMRTriplet{s.lmr.Triplet(i*64, 64)}, uint64(100+i)))
	}
	target := atomicLMR(t, p)
	copy(c.lmr.Bytes()[1024:], "abcdefgh")
	reqs := []Request{
		{Op: DTOIBRDMAWriteImmed, LocalIOV: []LMRTriplet{c.lmr.Triplet(1024, 8)}, Cookie: 1, Remote: s.lmr.RMRTriplet(4096, 8), Immed: 11},
		{Op: DTOIBFetchAdd, LocalIOV: []LMRTriplet{c.lmr.Triplet(0, 8)}, Cookie: 2, Remote: target.RMRTriplet(0, 8), Add: 3},
		{Op: DTOSend, LocalIOV: []LMRTriplet{c.lmr.Triplet(1024, 4)}, Cookie: 3, Immed: 12, WithImmed: true},
		{Op: DTOIBCmpSwap, LocalIOV: []LMRTriplet{c.lmr.Triplet(8, 8)}, Cookie: 4, Remote: target.RMRTriplet(0, 8), Compare: 3, Swap: 30},
		{Op: DTOIBRDMAWriteImmed, Cookie: 5, Remote: s.lmr.RMRTriplet(0, 0), Immed: 13},
	}
	n, err := c.ep.PostRequests(reqs)
	require.NoError(t, err)
	require.Equal(t, len(reqs), n)

	wantOps := []DTOOp{DTOIBRDMAWriteImmed, DTOIBFetchAdd, DTOSend, DTOIBCmpSwap, DTOIBRDMAWriteImmed}
	for i, op := range wantOps {
		ev := waitEvent(t, c.req)
		require.Equal(t, uint64(i+1), ev.DTO.Cookie)
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.Equal(t, op, ev.DTO.Op)
	}
	require.Equal(t, uint64(30), binary.NativeEndian.Uint64(target.Bytes()), "3 added, then swapped for 30")
	require.Equal(t, uint64(3), binary.NativeEndian.Uint64(c.lmr.Bytes()[8:]))

	// The three receives complete in arrival order, each with its
	// immediate data; the SRQ hands out its buffers in any order.
	want := []struct {
		op    DTOOp
		typ   IBExtType
		immed uint32
		n     uint64
	}{{DTOIBRecvImmed, IBRDMAWriteImmedData, 11, 8}, {DTOIBRecvMsgImmed, IBRecvImmedData, 12, 4}, {DTOIBRecvImmed, IBRDMAWriteImmedData, 13, 0}}
	for _, w := range want {
		ev := waitIBDTO(t, s.recv)
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.Equal(t, w.op, ev.DTO.Op)
		require.Equal(t, w.n, ev.DTO.TransferredLength)
		require.Equal(t, IBExtensionData{Type: w.typ, Status: IBOpSuccess, ImmedData: w.immed}, ev.IB)
	}
	require.Equal(t, "abcdefgh", string(s.lmr.Bytes()[4096:4104]))
}

// On a DISCONNECTED EP an extended request completes at once, flushed.
func TestIBExtensionFlushedWhenDisconnected(t *testing.T) {
	p := newPair(t, pairOpts{})
	c := p.client
	needAtomics(t, c)
	disconnectPair(t, p)
	target := atomicLMR(t, p)
	require.NoError(t, c.ep.PostFetchAndAdd(1, c.lmr.Triplet(0, 8), 4, target.RMRTriplet(0, 8), CompletionDefault))
	ev := waitIBDTO(t, c.req)
	require.Equal(t, DTOCompletionData{EP: c.ep, Cookie: 4, Status: DTOErrFlushed, Op: DTOIBFetchAdd}, ev.DTO)
	require.Equal(t, IBExtensionData{Type: IBFetchAndAdd, Status: IBOpErr}, ev.IB)
}

// IA.Query reports the IB extensions and the provider-specific attributes
// that the C reference reports for the same device: datpeer -q prints what
// dat_ia_query of OFA DAPL's cma provider says.
func TestIAQueryIBAttributesMatchC(t *testing.T) {
	ia := openIA(t)
	a, p, err := ia.Query()
	require.NoError(t, err)
	if ia.ibTransport() { // else none, as C says below
		require.Equal(t, ExtensionIB, a.ExtensionSupported)
	}
	require.Equal(t, IBExtensionVersion, a.ExtensionVersion)

	bin := buildDatPeer(t)
	conf, err := filepath.Abs(filepath.Join("..", "testdata", "datpeer", "dat.conf"))
	require.NoError(t, err)
	// The C reference crashed once, with SIGSEGV after printing every
	// attribute, in a CI run's race suite; 150 runs of datpeer -q in a loop
	// and 30 runs of this test did not repeat it. A crash of the reference
	// is logged and retried, twice at most; its answer is compared as
	// strictly either way.
	var out []byte
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), dpRunLimit)
		cmd := exec.CommandContext(ctx, bin, "-q")
		cmd.Env = append(os.Environ(), "DAT_OVERRIDE="+conf)
		out, err = cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if try < 3 && errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
			t.Logf("datpeer -q (try %d) died: %v; output:\n%s", try, err, out)
			continue
		}
		break
	}
	require.NoError(t, err, "datpeer -q:\n%s", out)
	t.Logf("datpeer -q:\n%s", out)

	var cAttrs []NamedAttr
	cIA := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		kind, kv, _ := strings.Cut(line, " ")
		name, value, ok := strings.Cut(kv, "=")
		require.True(t, ok, "datpeer -q line %q", line)
		switch kind {
		case "attr":
			cAttrs = append(cAttrs, NamedAttr{name, value})
		case "ia":
			cIA[name] = value
		}
	}
	// Debian's C library is built without DAPL_COUNTERS; one built with
	// them lists DAT_COUNTERS last, as udat does (counters.go).
	if !slices.Contains(cAttrs, NamedAttr{countersAttr, "TRUE"}) {
		cAttrs = append(cAttrs, NamedAttr{countersAttr, "TRUE"})
	}
	require.Equal(t, cAttrs, p.ProviderSpecificAttr, "the provider-specific attributes, in C's order")
	require.Equal(t, strconv.Itoa(int(a.ExtensionSupported)), cIA["extension_supported"])
	require.Equal(t, strconv.Itoa(a.ExtensionVersion), cIA["extension_version"])
}

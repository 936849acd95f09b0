//go:build linux && cgo

package udat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/internal/devtest"
)

// Wire compatibility with the C reference: the Go side of each subtest
// talks, through the public API of this package, to testdata/datpeer, a C
// uDAPL program linked with libdat2 that opens the cma provider
// (libdaplofa.so.2, rdma_cm) through testdata/datpeer/dat.conf. The protocol
// is the one documented at the top of datpeer.c; the constants below are its
// numbers. Each subtest runs one datpeer process on its own connection
// qualifier: the Go side in either role, and a reject in both directions.

const (
	dpRegion     = 4096
	dpBufSize    = 3 * dpRegion // regions [0] messages, [1] RDMA target, [2] RDMA source
	dpMsgSize    = 64
	dpRecvSlot   = 256
	dpNumRecv    = 8
	dpNumMsgs    = 4 // messages each side receives
	dpTripletLen = 16
	dpTagClient  = "udapl-c"
	dpTagServer  = "udapl-s"
	dpTagReject  = "reject-me"
	dpRejectByC  = "rejected-by-c"
	dpRejectByGo = "rejected-by-go"
	dpRoleServer = 'S'
	dpMemPriv    = MemPrivAll | MemPrivIBRemoteAtomic // -x needs the atomic privilege
	dpImmedBase  = 0xC0DE0000                         // | role: the X phase's RDMA write with immediate data
	dpMsgImmed   = 0x5E4D0000                         // | role: the Go side's X phase messages
	dpAtomicSlot = 128                                // offset in region [0] of the atomics' result
	dpNumMsgsExt = 6                                  // messages each side receives with -x
	dpRoleClient = 'C'

	dpWait       = 20 * time.Second  // one Go wait (the C program waits 10 s)
	dpCRWait     = 40 * time.Second  // the Go server's wait for the C client's request
	dpListenWait = 30 * time.Second  // the C server's start-up
	dpRunLimit   = 120 * time.Second // a whole datpeer run
)

func TestInteropWithC(t *testing.T) {
	devtest.Require(t)
	bin := buildDatPeer(t)

	// 1. C server <- Go client: the whole protocol.
	t.Run("CServerGoClient", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleClient)
		c := startDatPeer(t, bin, q, "-s", "-p", dpQual(q))
		g.c = c
		c.waitListening(t)
		g.runClient(q, dpTagClient)
		g.teardown(nil, dpNumRecv-dpNumMsgs)
		c.finish(t, "PASSED")
		c.requireLine(t, `connection request: private data \d+ bytes: .* tag "`+dpTagClient+`"`)
	})

	// 2. Go server <- C client: the whole protocol.
	t.Run("GoServerCClient", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleServer)
		psp := g.listen(q)
		g.c = startDatPeer(t, bin, q, "-c", "-h", g.ia.Address().String(), "-p", dpQual(q))
		cr := g.waitRequest(psp, q, dpTagClient)
		g.runServer(cr)
		g.teardown(psp, dpNumRecv-dpNumMsgs)
		g.c.finish(t, "PASSED")
		g.c.requireLine(t, `accept: private data \d+ bytes: .* tag "`+dpTagServer+`"`)
	})

	// 2x. The protocol with the IB extensions phase, both ways: RDMA write
	// with immediate data, fetch-and-add and compare-and-swap from C and Go,
	// and the Go side's sends with immediate data to C.
	t.Run("CServerGoClientExtensions", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleClient)
		g.ext = true
		c := startDatPeer(t, bin, q, "-s", "-x", "-p", dpQual(q))
		g.c = c
		c.waitListening(t)
		g.runClient(q, dpTagClient)
		g.teardown(nil, dpNumRecv-dpNumMsgsExt)
		c.finish(t, "PASSED")
		c.requireLine(t, `received RDMA write with immediate data 0xc0de0043 \(4096 bytes, slot 3, data checked\)`)
		c.requireLine(t, `received "swapped" \(64 bytes, slot 4, immediate data 0x5e4d0043\)`)
		c.requireLine(t, `the client's atomics left 7`)
	})
	t.Run("GoServerCClientExtensions", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleServer)
		g.ext = true
		psp := g.listen(q)
		g.c = startDatPeer(t, bin, q, "-c", "-x", "-h", g.ia.Address().String(), "-p", dpQual(q))
		cr := g.waitRequest(psp, q, dpTagClient)
		g.runServer(cr)
		g.teardown(psp, dpNumRecv-dpNumMsgsExt)
		g.c.finish(t, "PASSED")
		g.c.requireLine(t, `received "atomic" \(64 bytes, slot 3, immediate data 0x5e4d0053\)`)
		g.c.requireLine(t, `fetch-and-add\(5\) complete, old value 1000`)
		g.c.requireLine(t, `compare-and-swap\(1005, swap\) complete, old value 1005`)
		g.c.requireLine(t, `compare-and-swap\(1, swap\) complete, old value 7`)
		g.c.requireLine(t, `received RDMA write with immediate data 0xc0de0053 \(4096 bytes, slot 4, data checked\)`)
	})

	// 3a. The C server rejects the Go client.
	t.Run("CServerRejectsGoClient", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleClient)
		c := startDatPeer(t, bin, q, "-s", "-p", dpQual(q))
		g.c = c
		c.waitListening(t)
		require.NoError(t, g.ep.Connect(g.ia.Address(), q, Timeout(dpWait/time.Microsecond), g.privateData(dpTagReject), QoSBestEffort, ConnectDefault))
		ev := g.wait(g.conn, dpWait, "the answer to the connection request")
		require.Equal(t, EventConnectionPeerRejected, ev.Number, "connection event %v", ev.Number)
		assert.Same(t, g.ep, ev.Conn.EP)
		pd := ev.Conn.PrivateData
		t.Logf("PEER_REJECTED with %d bytes of private data: %q", len(pd), dpCString(pd))
		require.True(t, bytes.HasPrefix(pd, []byte(dpRejectByC)),
			"the reject private data %q starts with %q (the 4-byte cma header 02 00 02 00 stripped)", pd, dpRejectByC)
		requireAllZero(t, pd[len(dpRejectByC):], "reject private data after %q", dpRejectByC)
		g.requireState(EPStateDisconnected)
		g.teardown(nil, dpNumRecv)
		c.finish(t, "PASSED (reject)")
		c.requireLine(t, `rejected the request with private data "`+dpRejectByC+`"`)
	})

	// 3b. The Go server rejects the C client.
	t.Run("GoServerRejectsCClient", func(t *testing.T) {
		q := nextConnQual()
		g := newGoPeer(t, dpRoleServer)
		psp := g.listen(q)
		g.c = startDatPeer(t, bin, q, "-c", "-h", g.ia.Address().String(), "-p", dpQual(q), "-r")
		cr := g.waitRequest(psp, q, dpTagReject)
		require.NoError(t, cr.Reject([]byte(dpRejectByGo)))
		g.c.finish(t, "PASSED (reject)")
		// The C client saw the consumer's private data, the header stripped by
		// the cma provider: the 4 bytes the Go side prepended are right.
		g.c.requireLine(t, `connection event PEER_REJECTED, private data \d+ bytes: "`+dpRejectByGo+`"$`)
		requireEmpty(t, g.conn)
		g.requireState(EPStateUnconnected)
		g.teardown(psp, dpNumRecv)
	})
}

func dpQual(q ConnQual) string { return strconv.FormatUint(uint64(q), 10) }

// buildDatPeer compiles testdata/datpeer/datpeer.c. A missing compiler or
// libdat2 fails the test: this is a device test, and it must not pass by
// skipping.
func buildDatPeer(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	require.NoError(t, err, "the C interop test needs a C compiler (cc) and libdat2 with <dat2/udat.h> "+
		"(Debian: gcc, libdapl-dev, libdapl2); only a host-only run (%s=1) skips it", devtest.HostOnlyEnv)
	src := filepath.Join("..", "testdata", "datpeer", "datpeer.c")
	_, err = os.Stat(src)
	require.NoError(t, err, "the C peer's source")
	bin := filepath.Join(t.TempDir(), "datpeer")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, cc, "-O2", "-Wall", "-o", bin, src, "-ldat2").CombinedOutput()
	require.NoError(t, err, "building the C peer (cc -O2 -Wall -o %s %s -ldat2) failed; "+
		"libdat2 and its headers (<dat2/udat.h>, Debian: libdapl-dev) are needed:\n%s", bin, src, out)
	if len(out) > 0 {
		t.Logf("cc: %s", out)
	}
	return bin
}

// datPeer is one run of the C program.
type datPeer struct {
	name string
	qual ConnQual

	mu         sync.Mutex
	out        bytes.Buffer // stdout and stderr
	listenQual string
	exitErr    error

	listening chan struct{} // closed at the "listening on conn_qual N" line
	exited    chan struct{} // closed once the program has exited
	// failed is cancelled when the program ends with an error or without
	// printing PASSED, so that the Go side stops waiting at once.
	failed context.Context
	group  errgroup.Group
}

// startDatPeer starts datpeer with args; connection qualifier q is the one
// it listens on or connects to.
func startDatPeer(t *testing.T, bin string, q ConnQual, args ...string) *datPeer {
	t.Helper()
	conf, err := filepath.Abs(filepath.Join("..", "testdata", "datpeer", "dat.conf"))
	require.NoError(t, err)
	p := &datPeer{
		name:      "datpeer " + strings.Join(args, " "),
		qual:      q,
		listening: make(chan struct{}),
		exited:    make(chan struct{}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), dpRunLimit)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), DatConfEnv+"="+conf)
	cmd.Stderr = (*dpOutput)(p)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	if err := cmd.Start(); err != nil {
		cancel()
		require.NoError(t, err, "start %s", p.name)
	}
	failed, fail := context.WithCancelCause(context.Background())
	p.failed = failed
	t.Logf("started %s (DAT_OVERRIDE=%s)", p.name, conf)

	p.group.Go(func() error {
		defer close(p.exited)
		sc := bufio.NewScanner(stdout)
		listening := false
		for sc.Scan() {
			line := sc.Text()
			p.write(line + "\n")
			const mark = "listening on conn_qual "
			if i := strings.Index(line, mark); i >= 0 && !listening {
				listening = true
				p.mu.Lock()
				p.listenQual = strings.TrimSpace(line[i+len(mark):])
				p.mu.Unlock()
				close(p.listening)
			}
		}
		io.Copy(io.Discard, stdout)
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr = err
		passed := p.passedLocked()
		p.mu.Unlock()
		switch {
		case err != nil:
			fail(fmt.Errorf("%s: %w", p.name, err))
		case !passed:
			fail(fmt.Errorf("%s exited without PASSED", p.name))
		}
		return nil
	})
	t.Cleanup(func() {
		cancel() // kills the program if it still runs
		p.group.Wait()
		fail(nil)
		if t.Failed() || testing.Verbose() {
			t.Logf("output of %s:\n%s", p.name, p.output())
		}
	})
	return p
}

// dpOutput collects the program's stderr into its output.
type dpOutput datPeer

func (o *dpOutput) Write(b []byte) (int, error) { return (*datPeer)(o).write(string(b)) }

func (p *datPeer) write(s string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.WriteString(s)
}

func (p *datPeer) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *datPeer) passedLocked() bool {
	for _, l := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(l, "]: PASSED") {
			return true
		}
	}
	return false
}

// waitListening waits until the C server's PSP exists.
func (p *datPeer) waitListening(t *testing.T) {
	t.Helper()
	select {
	case <-p.listening:
	case <-p.exited:
		select {
		case <-p.listening:
		default:
			require.FailNowf(t, "the C server did not start", "%s exited before listening: %v\n%s", p.name, p.exitErr, p.output())
		}
	case <-time.After(dpListenWait):
		require.FailNowf(t, "the C server did not start", "%s printed no \"listening on conn_qual\" line within %v\n%s", p.name, dpListenWait, p.output())
	}
	p.mu.Lock()
	got := p.listenQual
	p.mu.Unlock()
	require.Equal(t, dpQual(p.qual), got, "the C server's connection qualifier")
}

// finish waits for the program to exit and checks it passed: exit status 0
// and a last step "PASSED" or "PASSED (reject)".
func (p *datPeer) finish(t *testing.T, want string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(dpWait):
		require.FailNowf(t, "the C peer did not exit", "%s still runs %v after the Go side finished\n%s", p.name, dpWait, p.output())
	}
	p.mu.Lock()
	err := p.exitErr
	p.mu.Unlock()
	out := p.output()
	require.NoError(t, err, "%s exit status\n%s", p.name, out)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasSuffix(last, "]: "+want), "%s ends with %q, not with %q\n%s", p.name, last, want, out)
	require.NotContains(t, out, "FAILED")
}

// requireLine checks that the program printed a line matching the regular
// expression re.
func (p *datPeer) requireLine(t *testing.T, re string) {
	t.Helper()
	require.Regexp(t, regexp.MustCompile("(?m)"+re), p.output(), "output of %s", p.name)
}

// goPeer is the Go side of the protocol.
type goPeer struct {
	t    *testing.T
	c    *datPeer // the C program, once it runs
	role byte

	ia             *IA
	pz             *PZ
	lmr            *LMR
	buf            []byte
	va             uint64
	req, rcv, conn *EVD
	crEVD          *EVD
	ep             *EP

	peerVA     uint64
	peerRMR    uint32
	nextRecv   int
	nextCookie uint64
	// ext runs the IB extensions phase (datpeer -x); the Go side then
	// sends that phase's messages with immediate data.
	ext bool
}

// newGoPeer opens the IA and creates, as datpeer's setup does, the buffer,
// the EVDs and the EP, and posts the 8 receives.
func newGoPeer(t *testing.T, role byte) *goPeer {
	t.Helper()
	g := &goPeer{t: t, role: role, nextCookie: 100}
	g.ia = openIA(t)
	g.pz = mustPZ(t, g.ia)
	var err error
	g.lmr, err = g.ia.AllocLMR(g.pz, dpBufSize, dpMemPriv)
	require.NoError(t, err)
	g.buf = g.lmr.Bytes()
	require.Len(t, g.buf, dpBufSize)
	clear(g.buf)
	dpFill(g.region(2), role)
	require.NoError(t, g.ia.SyncRDMARead([]LMRTriplet{g.lmr.Triplet(2*dpRegion, dpRegion)}))
	g.va = g.lmr.Triplet(0, dpBufSize).VirtualAddress
	require.Equal(t, uint64(uintptr(unsafe.Pointer(&g.buf[0]))), g.va, "the LMR's address is its buffer's (DAT_VA_TYPE_VA)")
	lp, err := g.lmr.Query()
	require.NoError(t, err)
	require.Equal(t, g.va, lp.RegisteredAddress)
	require.Equal(t, g.lmr.RMRContext(), lp.RMRContext)
	require.Equal(t, dpMemPriv, lp.MemPriv)

	g.req, err = g.ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	g.rcv, err = g.ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	g.conn, err = g.ia.CreateEVD(8, EVDConnectionFlag)
	require.NoError(t, err)
	attr := EPAttr{
		ServiceType:            ServiceTypeRC,
		MaxMessageSize:         dpBufSize,
		MaxRDMASize:            dpBufSize,
		QoS:                    QoSBestEffort,
		RecvCompletionFlags:    CompletionDefault,
		RequestCompletionFlags: CompletionDefault,
		MaxRecvDTOs:            dpNumRecv,
		MaxRequestDTOs:         8,
		MaxRecvIOV:             1,
		MaxRequestIOV:          1,
		MaxRDMAReadIn:          4,
		MaxRDMAReadOut:         4,
	}
	g.ep, err = g.ia.CreateEP(g.pz, g.rcv, g.req, g.conn, &attr)
	require.NoError(t, err)
	for k := 0; k < dpNumRecv; k++ {
		require.NoError(t, g.ep.PostRecv([]LMRTriplet{g.lmr.Triplet(dpRecvSlot*(k+1), dpRecvSlot)}, uint64(k), CompletionDefault))
	}
	t.Logf("Go %c: buffer at %#x, lmr_context %#x, rmr_context %#x; %d receives posted",
		role, g.va, g.lmr.Context(), g.lmr.RMRContext(), dpNumRecv)
	return g
}

func (g *goPeer) region(r int) []byte { return g.buf[r*dpRegion : (r+1)*dpRegion] }

// privateData is the triplet of the Go buffer followed by tag.
func (g *goPeer) privateData(tag string) []byte {
	pd := make([]byte, dpTripletLen, dpTripletLen+len(tag))
	binary.LittleEndian.PutUint64(pd[0:], g.va)
	binary.LittleEndian.PutUint32(pd[8:], dpBufSize)
	binary.LittleEndian.PutUint32(pd[12:], g.lmr.RMRContext())
	return append(pd, tag...)
}

// parsePeer reads the peer's triplet from private data and checks its tag:
// the bytes from offset 16 to the first NUL or the end, the rest zero (the
// transport pads the field).
func (g *goPeer) parsePeer(pd []byte, wantTag, what string) {
	t := g.t
	t.Helper()
	require.GreaterOrEqual(t, len(pd), dpTripletLen, "%s: private data %x holds a triplet", what, pd)
	g.peerVA = binary.LittleEndian.Uint64(pd[0:])
	length := binary.LittleEndian.Uint32(pd[8:])
	g.peerRMR = binary.LittleEndian.Uint32(pd[12:])
	tag := dpCString(pd[dpTripletLen:])
	t.Logf("%s: %d bytes of private data: peer va %#x len %d rmr_context %#x tag %q",
		what, len(pd), g.peerVA, length, g.peerRMR, tag)
	require.Equal(t, uint32(dpBufSize), length, "%s: the peer's segment length", what)
	require.NotZero(t, g.peerVA, "%s: the peer's address", what)
	require.Equal(t, wantTag, tag, "%s: tag", what)
	requireAllZero(t, pd[dpTripletLen+len(tag):], "%s: private data after the tag", what)
}

// wait waits for one event on e; it gives up early when the C program fails.
func (g *goPeer) wait(e *EVD, d time.Duration, what string) Event {
	t := g.t
	t.Helper()
	parent := context.Background()
	if g.c != nil {
		parent = g.c.failed
	}
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	ev, _, err := e.WaitContext(ctx, 1)
	if err != nil && parent.Err() != nil {
		require.FailNowf(t, "the C peer failed", "waiting for %s: %v; the C peer ended first: %v\n%s",
			what, err, context.Cause(parent), g.c.output())
	}
	require.NoError(t, err, "wait (%v) for %s", d, what)
	return ev
}

// waitDTO waits for the completion of one DTO and checks it succeeded.
func (g *goPeer) waitDTO(e *EVD, cookie uint64, op DTOOp, length int, what string) {
	t := g.t
	t.Helper()
	ev := g.wait(e, dpWait, what)
	require.Equal(t, EventDTOCompletion, ev.Number, "%s: event %v", what, ev.Number)
	d := ev.DTO
	require.Equal(t, DTOSuccess, d.Status, "%s: completion status", what)
	require.Equal(t, cookie, d.Cookie, "%s: cookie", what)
	require.Equal(t, uint64(length), d.TransferredLength, "%s: transferred length", what)
	assert.Equal(t, op, d.Op, "%s: operation", what)
	assert.Same(t, g.ep, d.EP, "%s: EP", what)
}

func (g *goPeer) send(word string) {
	g.t.Helper()
	g.sendMsg(word, false)
}

// sendImmed sends word as send does, with immediate data dpMsgImmed|role.
func (g *goPeer) sendImmed(word string) {
	g.t.Helper()
	g.sendMsg(word, true)
}

// sendMsg sends word in a 64-byte message and waits for its completion.
func (g *goPeer) sendMsg(word string, withImmed bool) {
	g.t.Helper()
	msg := g.buf[:dpMsgSize]
	clear(msg)
	copy(msg, word)
	cookie := g.nextCookie
	g.nextCookie++
	what := fmt.Sprintf("send %q (with immediate data: %v)", word, withImmed)
	iov := []LMRTriplet{g.lmr.Triplet(0, dpMsgSize)}
	if withImmed {
		require.NoError(g.t, g.ep.PostSendImmed(iov, cookie, dpMsgImmed|uint32(g.role), CompletionDefault), what)
	} else {
		require.NoError(g.t, g.ep.PostSend(iov, cookie, CompletionDefault), what)
	}
	g.waitDTO(g.req, cookie, DTOSend, dpMsgSize, what)
}

// waitIB waits for the extended completion of one DTO and checks it.
func (g *goPeer) waitIB(e *EVD, cookie uint64, op DTOOp, x IBExtensionData, length int, what string) {
	t := g.t
	t.Helper()
	ev := g.wait(e, dpWait, what)
	require.Equal(t, EventIBDTO, ev.Number, "%s: event %v", what, ev.Number)
	require.Equal(t, DTOCompletionData{EP: g.ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: uint64(length), Op: op}, ev.DTO, what)
	require.Equal(t, x, ev.IB, "%s: extension data", what)
}

// writeImmed writes region [2] to the peer's region [1] with immediate
// data dpImmedBase|role (step X1 or X3).
func (g *goPeer) writeImmed() {
	g.t.Helper()
	cookie := g.nextCookie
	g.nextCookie++
	remote := RMRTriplet{VirtualAddress: g.peerVA + dpRegion, SegmentLength: dpRegion, RMRContext: g.peerRMR}
	require.NoError(g.t, g.ep.PostRDMAWriteImmed([]LMRTriplet{g.lmr.Triplet(2*dpRegion, dpRegion)}, cookie, remote, dpImmedBase|uint32(g.role), CompletionDefault))
	g.waitIB(g.req, cookie, DTOIBRDMAWriteImmed, IBExtensionData{Type: IBRDMAWriteImmed}, dpRegion, "RDMA write with immediate data")
}

// recvWriteImmed waits for the receive that the peer's RDMA write with
// immediate data consumes and checks the data it wrote.
func (g *goPeer) recvWriteImmed(peer byte) {
	g.t.Helper()
	k := g.nextRecv
	g.nextRecv++
	g.waitIB(g.rcv, uint64(k), DTOIBRecvImmed, IBExtensionData{Type: IBRDMAWriteImmedData, ImmedData: dpImmedBase | uint32(peer)},
		dpRegion, "the receive of the peer's RDMA write with immediate data")
	g.checkRegion1(peer, "the peer's RDMA write with immediate data", false)
}

// atomic posts a fetch-and-add of v (swap < 0) or a compare-and-swap of v
// for swap on the peer's word W and checks the old value it returns.
func (g *goPeer) atomic(v uint64, swap int64, wantOld uint64) {
	t := g.t
	t.Helper()
	cookie := g.nextCookie
	g.nextCookie++
	local := g.lmr.Triplet(dpAtomicSlot, 8)
	remote := RMRTriplet{VirtualAddress: g.peerVA + dpRegion, SegmentLength: 8, RMRContext: g.peerRMR}
	res := g.buf[dpAtomicSlot : dpAtomicSlot+8]
	for i := range res {
		res[i] = 0xff
	}
	if swap < 0 {
		require.NoError(t, g.ep.PostFetchAndAdd(v, local, cookie, remote, CompletionDefault))
		g.waitIB(g.req, cookie, DTOIBFetchAdd, IBExtensionData{Type: IBFetchAndAdd}, 8, "fetch-and-add")
	} else {
		require.NoError(t, g.ep.PostCmpAndSwap(v, uint64(swap), local, cookie, remote, CompletionDefault))
		g.waitIB(g.req, cookie, DTOIBCmpSwap, IBExtensionData{Type: IBCmpAndSwap}, 8, "compare-and-swap")
	}
	require.Equal(t, wantOld, binary.NativeEndian.Uint64(res), "the old value of the peer's word")
}

func (g *goPeer) recv(word string) {
	t := g.t
	t.Helper()
	k := g.nextRecv
	g.nextRecv++
	require.Less(t, k, dpNumRecv, "out of receive slots")
	what := fmt.Sprintf("receive %q", word)
	g.waitDTO(g.rcv, uint64(k), DTOReceive, dpMsgSize, what)
	want := make([]byte, dpMsgSize)
	copy(want, word)
	off := dpRecvSlot * (k + 1)
	require.Equal(t, want, g.buf[off:off+dpMsgSize], "%s: slot %d", what, k)
}

// rdmaWrite writes the Go pattern, region [2], to the peer's region [1].
func (g *goPeer) rdmaWrite() {
	g.t.Helper()
	cookie := g.nextCookie
	g.nextCookie++
	remote := RMRTriplet{VirtualAddress: g.peerVA + dpRegion, SegmentLength: dpRegion, RMRContext: g.peerRMR}
	require.NoError(g.t, g.ep.PostRDMAWrite([]LMRTriplet{g.lmr.Triplet(2*dpRegion, dpRegion)}, cookie, remote, CompletionDefault))
	g.waitDTO(g.req, cookie, DTORDMAWrite, dpRegion, "RDMA write")
}

// rdmaRead reads the peer's region [2] into region [1].
func (g *goPeer) rdmaRead() {
	g.t.Helper()
	cookie := g.nextCookie
	g.nextCookie++
	remote := RMRTriplet{VirtualAddress: g.peerVA + 2*dpRegion, SegmentLength: dpRegion, RMRContext: g.peerRMR}
	require.NoError(g.t, g.ep.PostRDMARead([]LMRTriplet{g.lmr.Triplet(dpRegion, dpRegion)}, cookie, remote, CompletionDefault))
	g.waitDTO(g.req, cookie, DTORDMARead, dpRegion, "RDMA read")
}

// checkRegion1 checks, byte for byte, that region [1] holds the pattern of
// role, then clears it when clearAfter is set.
func (g *goPeer) checkRegion1(role byte, what string, clearAfter bool) {
	t := g.t
	t.Helper()
	require.NoError(t, g.ia.SyncRDMAWrite([]LMRTriplet{g.lmr.Triplet(dpRegion, dpRegion)}))
	got := g.region(1)
	for i, b := range got {
		if want := dpPattern(role, i); b != want {
			require.FailNowf(t, "wrong RDMA data", "%s: byte %d of region [1] is %#02x, want %#02x (pattern of '%c')", what, i, b, want, role)
		}
	}
	if clearAfter {
		clear(got)
	}
}

func (g *goPeer) requireState(want EPState) {
	g.t.Helper()
	s, _, _, err := g.ep.GetStatus()
	require.NoError(g.t, err)
	require.Equal(g.t, want, s, "EP state")
}

// runClient is the client's side of the protocol, steps 1 to 8.
func (g *goPeer) runClient(q ConnQual, tag string) {
	t := g.t
	t.Helper()
	require.NoError(t, g.ep.Connect(g.ia.Address(), q, Timeout(dpWait/time.Microsecond), g.privateData(tag), QoSBestEffort, ConnectDefault))
	ev := g.wait(g.conn, dpWait, "ESTABLISHED")
	require.Equal(t, EventConnectionEstablished, ev.Number, "connection event %v", ev.Number)
	assert.Same(t, g.ep, ev.Conn.EP)
	g.parsePeer(ev.Conn.PrivateData, dpTagServer, "accept")
	g.requireState(EPStateConnected)

	g.send("ping")
	g.recv("pong")

	g.rdmaWrite()
	g.send("wrote")

	g.rdmaRead()
	g.checkRegion1(dpRoleServer, "RDMA read of the server's region [2]", true)
	g.send("read")

	g.recv("wrote")
	g.checkRegion1(dpRoleServer, "the server's RDMA write", false)
	g.recv("read")

	if g.ext {
		g.writeImmed()
		g.recv("atomic")
		g.atomic(5, -1, 1000)
		g.atomic(1005, 7, 1005)
		g.atomic(1, 9, 7)
		clear(g.region(1))
		g.sendImmed("swapped")
		g.recvWriteImmed(dpRoleServer)
	}

	g.send("done")
	g.recv("bye")

	require.NoError(t, g.ep.Disconnect(CloseGracefulFlag))
	ev = g.wait(g.conn, dpWait, "DISCONNECTED")
	require.Equal(t, EventConnectionDisconnected, ev.Number, "connection event %v", ev.Number)
	assert.Same(t, g.ep, ev.Conn.EP)
	g.requireState(EPStateDisconnected)
}

// listen creates the Go server's PSP on q.
func (g *goPeer) listen(q ConnQual) *PSP {
	t := g.t
	t.Helper()
	var err error
	g.crEVD, err = g.ia.CreateEVD(8, EVDCRFlag)
	require.NoError(t, err)
	psp, err := g.ia.CreatePSP(q, g.crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	t.Logf("Go server listening on conn_qual %d (rdma_cm port %d)", q, ConnQualPort(q))
	return psp
}

// waitRequest waits for the C client's connection request and checks it.
func (g *goPeer) waitRequest(psp *PSP, q ConnQual, wantTag string) *CR {
	t := g.t
	t.Helper()
	ev := g.wait(g.crEVD, dpCRWait, "the connection request")
	require.Equal(t, EventConnectionRequest, ev.Number, "event %v", ev.Number)
	assert.Same(t, psp, ev.CR.PSP)
	assert.Nil(t, ev.CR.RSP)
	assert.Equal(t, q, ev.CR.ConnQual)
	require.NotNil(t, ev.CR.CR)
	p, err := ev.CR.CR.Query()
	require.NoError(t, err)
	assert.Equal(t, g.ia.Address(), p.RemoteAddr, "the C client's address")
	assert.Nil(t, p.LocalEP)
	g.parsePeer(p.PrivateData, wantTag, "connection request")
	return ev.CR.CR
}

// runServer is the server's side of the protocol after the request, steps 1
// to 8.
func (g *goPeer) runServer(cr *CR) {
	t := g.t
	t.Helper()
	require.NoError(t, cr.Accept(g.ep, g.privateData(dpTagServer)))
	ev := g.wait(g.conn, dpWait, "ESTABLISHED")
	require.Equal(t, EventConnectionEstablished, ev.Number, "connection event %v", ev.Number)
	assert.Same(t, g.ep, ev.Conn.EP)
	assert.Empty(t, ev.Conn.PrivateData, "the passive side's ESTABLISHED carries no private data")
	g.requireState(EPStateConnected)

	g.recv("ping")
	g.send("pong")

	g.recv("wrote")
	g.checkRegion1(dpRoleClient, "the client's RDMA write", true)

	g.recv("read")

	g.rdmaWrite()
	g.send("wrote")

	g.rdmaRead()
	g.checkRegion1(dpRoleClient, "RDMA read of the client's region [2]", g.ext)
	g.send("read")

	if g.ext {
		g.recvWriteImmed(dpRoleClient)
		w := g.region(1)
		clear(w)
		binary.NativeEndian.PutUint64(w, 1000)
		g.sendImmed("atomic")
		g.recv("swapped")
		require.Equal(t, uint64(7), binary.NativeEndian.Uint64(w), "the word after the client's atomics")
		g.writeImmed()
	}

	g.recv("done")
	g.send("bye")

	ev = g.wait(g.conn, dpWait, "DISCONNECTED")
	require.Equal(t, EventConnectionDisconnected, ev.Number, "connection event %v", ev.Number)
	assert.Same(t, g.ep, ev.Conn.EP)
	g.requireState(EPStateDisconnected)
}

// teardown frees everything, checking that the receives never consumed
// complete as flushed, and nothing else is left.
func (g *goPeer) teardown(psp *PSP, flushed int) {
	t := g.t
	t.Helper()
	require.NoError(t, g.ep.Free())
	if psp != nil {
		require.NoError(t, psp.Free())
	}
	left := map[uint64]bool{}
	for k := dpNumRecv - flushed; k < dpNumRecv; k++ {
		left[uint64(k)] = true
	}
	for range flushed {
		ev := g.wait(g.rcv, dpWait, "a flushed receive")
		require.Equal(t, EventDTOCompletion, ev.Number, "event %v", ev.Number)
		require.Equal(t, DTOErrFlushed, ev.DTO.Status, "receive %d", ev.DTO.Cookie)
		require.True(t, left[ev.DTO.Cookie], "flushed receive cookie %d, want one of %v", ev.DTO.Cookie, left)
		delete(left, ev.DTO.Cookie)
	}
	requireEmpty(t, g.rcv)
	requireEmpty(t, g.req)
	requireEmpty(t, g.conn)
	require.NoError(t, g.lmr.Free())
	for _, e := range []*EVD{g.req, g.rcv, g.conn, g.crEVD} {
		if e != nil {
			require.NoError(t, e.Free())
		}
	}
	require.NoError(t, g.pz.Free())
	require.NoError(t, g.ia.Close(CloseGracefulFlag))
}

func dpPattern(role byte, i int) byte { return byte(i*7 + int(role)) }

func dpFill(b []byte, role byte) {
	for i := range b {
		b[i] = dpPattern(role, i)
	}
}

// dpCString returns b up to its first NUL.
func dpCString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// requireAllZero checks that b, the padding of a private data field, is zero.
func requireAllZero(t *testing.T, b []byte, format string, args ...any) {
	t.Helper()
	for i, c := range b {
		if c != 0 {
			require.FailNowf(t, "non-zero padding", "%s: byte %d of %x is not zero", fmt.Sprintf(format, args...), i, b)
		}
	}
}

//go:build linux && cgo

package udat_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/internal/datpeer"
	"github.com/udapl-go/udapl/internal/datpeer/gopeer"
	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// Wire compatibility with the C reference: the Go peer (gopeer) of each
// subtest talks, through the public API of udat, to testdata/datpeer, a C
// uDAPL program linked with libdat2 that opens the cma provider
// (libdaplofa.so.2, rdma_cm) through testdata/datpeer/dat.conf, in the
// protocol documented at the top of datpeer.c. Each subtest runs one
// datpeer process on its own connection qualifier: the Go side in either
// role, with and without the IB extensions phase, and a reject in both
// directions.

const (
	dpListenWait = 30 * time.Second // the C server's start-up
	dpExitWait   = 20 * time.Second // the C peer's exit after the Go side's
)

// interopQual numbers the subtests' connection qualifiers, apart from
// those of package udat's tests, which share the process (connQualSeq).
var interopQual atomic.Uint64

func init() { interopQual.Store(uint64(10000 + os.Getpid()%5000)) }

func TestInteropWithC(t *testing.T) {
	dev := devtest.Require(t)
	bin := udat.BuildDatPeer(t)
	// udat offers the IB extension on InfiniBand and RoCE, none on iWARP.
	iwarp := !hasIBExtension(t, dev)
	// goSide runs the Go peer; its waits give up when the C peer fails.
	goSide := func(t *testing.T, c *datPeer, role byte, opts gopeer.Opts, f func(g *gopeer.Peer)) {
		t.Helper()
		require.NoError(t, gopeer.Run(c.failed, dev, role, opts, t.Logf, f))
	}

	// 1. C server <- Go client: the whole protocol.
	t.Run("CServerGoClient", func(t *testing.T) {
		c := newDatPeer(t, bin, "-s")
		c.start(t)
		c.waitListening(t)
		goSide(t, c, datpeer.RoleClient, gopeer.Opts{}, func(g *gopeer.Peer) { g.RunClient(g.Addr(), c.qual) })
		c.finish(t, "PASSED")
		c.requireLine(t, `connection request: private data \d+ bytes: .* tag "`+datpeer.TagClient+`"`)
	})

	// 2. Go server <- C client: the whole protocol.
	t.Run("GoServerCClient", func(t *testing.T) {
		c := newDatPeer(t, bin, "-c")
		goSide(t, c, datpeer.RoleServer, gopeer.Opts{}, func(g *gopeer.Peer) {
			g.Listen(c.qual)
			c.start(t, "-h", g.Addr().String())
			g.RunServer()
		})
		c.finish(t, "PASSED")
		c.requireLine(t, `accept: private data \d+ bytes: .* tag "`+datpeer.TagServer+`"`)
	})

	// 2x. The protocol with the IB extensions phase, both ways: RDMA write
	// with immediate data, fetch-and-add and compare-and-swap from C and Go,
	// and the Go side's sends with immediate data to C.
	t.Run("CServerGoClientExtensions", func(t *testing.T) {
		if iwarp {
			t.Skip("not applicable: " + dev + " has no IB extensions")
		}
		c := newDatPeer(t, bin, "-s", "-x")
		c.start(t)
		c.waitListening(t)
		goSide(t, c, datpeer.RoleClient, gopeer.Opts{Ext: true}, func(g *gopeer.Peer) { g.RunClient(g.Addr(), c.qual) })
		c.finish(t, "PASSED")
		c.requireLine(t, `received RDMA write with immediate data 0xc0de0043 \(4096 bytes, slot 3, data checked\)`)
		c.requireLine(t, `received "swapped" \(64 bytes, slot 4, immediate data 0x5e4d0043\)`)
		c.requireLine(t, `the client's atomics left 7`)
	})
	t.Run("GoServerCClientExtensions", func(t *testing.T) {
		if iwarp {
			t.Skip("not applicable: " + dev + " has no IB extensions")
		}
		c := newDatPeer(t, bin, "-c", "-x")
		goSide(t, c, datpeer.RoleServer, gopeer.Opts{Ext: true}, func(g *gopeer.Peer) {
			g.Listen(c.qual)
			c.start(t, "-h", g.Addr().String())
			g.RunServer()
		})
		c.finish(t, "PASSED")
		c.requireLine(t, `received "atomic" \(64 bytes, slot 3, immediate data 0x5e4d0053\)`)
		c.requireLine(t, `fetch-and-add\(5\) complete, old value 1000`)
		c.requireLine(t, `compare-and-swap\(1005, swap\) complete, old value 1005`)
		c.requireLine(t, `compare-and-swap\(1, swap\) complete, old value 7`)
		c.requireLine(t, `received RDMA write with immediate data 0xc0de0053 \(4096 bytes, slot 4, data checked\)`)
	})

	// 3a. The C server rejects the Go client; the Go peer checks the
	// reject's private data (the 4-byte cma header 02 00 02 00 stripped).
	t.Run("CServerRejectsGoClient", func(t *testing.T) {
		c := newDatPeer(t, bin, "-s")
		c.start(t)
		c.waitListening(t)
		goSide(t, c, datpeer.RoleClient, gopeer.Opts{Reject: true}, func(g *gopeer.Peer) { g.RunClient(g.Addr(), c.qual) })
		c.finish(t, "PASSED (reject)")
		c.requireLine(t, `rejected the request with private data "`+datpeer.RejectByC+`"`)
	})

	// 3b. The Go server rejects the C client.
	t.Run("GoServerRejectsCClient", func(t *testing.T) {
		if iwarp {
			t.Skip("not applicable: " + dev + " is iWARP, where C's cma provider reports a peer's reject as non-peer")
		}
		c := newDatPeer(t, bin, "-c", "-r")
		goSide(t, c, datpeer.RoleServer, gopeer.Opts{}, func(g *gopeer.Peer) {
			g.Listen(c.qual)
			c.start(t, "-h", g.Addr().String())
			g.RunServer()
		})
		c.finish(t, "PASSED (reject)")
		// The C client saw the consumer's private data, the header stripped by
		// the cma provider: the 4 bytes the Go side prepended are right.
		c.requireLine(t, `connection event PEER_REJECTED, private data \d+ bytes: "`+datpeer.RejectByGo+`"$`)
	})
}

// datPeer is one run of the C program.
type datPeer struct {
	bin  string
	args []string
	name string
	qual udat.ConnQual // the one it listens on or connects to

	mu         sync.Mutex
	out        bytes.Buffer // stdout and stderr
	listenQual string
	exitErr    error

	listening chan struct{} // closed at the "listening on conn_qual N" line
	exited    chan struct{} // closed once the program has exited
	// failed is cancelled when the program ends with an error or without
	// printing PASSED, so that the Go side stops waiting at once.
	failed context.Context
	fail   context.CancelCauseFunc
	group  errgroup.Group
}

// newDatPeer prepares a run of datpeer with args on a new connection
// qualifier; start starts it.
func newDatPeer(t *testing.T, bin string, args ...string) *datPeer {
	q := udat.ConnQual(interopQual.Add(1))
	p := &datPeer{
		bin:       bin,
		args:      append(args, "-p", strconv.FormatUint(uint64(q), 10)),
		qual:      q,
		listening: make(chan struct{}),
		exited:    make(chan struct{}),
	}
	p.failed, p.fail = context.WithCancelCause(context.Background())
	t.Cleanup(func() { p.fail(nil) })
	return p
}

// start starts the program, with more arguments.
func (p *datPeer) start(t *testing.T, more ...string) {
	t.Helper()
	args := slices.Concat(p.args, more)
	p.name = "datpeer " + strings.Join(args, " ")
	cmd, cancel, err := datpeer.Command(context.Background(), p.bin, args...)
	require.NoError(t, err)
	cmd.Stderr = (*dpOutput)(p)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	if err := cmd.Start(); err != nil {
		cancel()
		require.NoError(t, err, "start %s", p.name)
	}
	t.Logf("started %s", p.name)

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
			p.fail(fmt.Errorf("%s: %w", p.name, err))
		case !passed:
			p.fail(fmt.Errorf("%s exited without PASSED", p.name))
		}
		return nil
	})
	t.Cleanup(func() {
		cancel() // kills the program if it still runs
		p.group.Wait()
		if t.Failed() || testing.Verbose() {
			t.Logf("output of %s:\n%s", p.name, p.output())
		}
	})
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
	require.Equal(t, strconv.FormatUint(uint64(p.qual), 10), got, "the C server's connection qualifier")
}

// finish waits for the program to exit and checks it passed: exit status 0
// and a last step "PASSED" or "PASSED (reject)".
func (p *datPeer) finish(t *testing.T, want string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(dpExitWait):
		require.FailNowf(t, "the C peer did not exit", "%s still runs %v after the Go side finished\n%s", p.name, dpExitWait, p.output())
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

// hasIBExtension reports whether the IA on dev offers the IB extension
// (DAT_EXTENSION_INTERFACE).
func hasIBExtension(t *testing.T, dev string) bool {
	t.Helper()
	ia, err := udat.OpenIA(dev, 8)
	require.NoError(t, err)
	defer ia.Close(udat.CloseAbruptFlag)
	_, pa, err := ia.Query()
	require.NoError(t, err)
	for _, a := range pa.ProviderSpecificAttr {
		if a.Name == "DAT_EXTENSION_INTERFACE" {
			return a.Value == "TRUE"
		}
	}
	require.Fail(t, "no DAT_EXTENSION_INTERFACE attribute")
	return false
}

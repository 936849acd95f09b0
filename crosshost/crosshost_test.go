package crosshost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// The cross-host tests without faults: each runs one side here and the
// other as a role on the peer host, Go and C in both roles, and checks what
// both sides saw.

var portSeq atomic.Uint32

func init() { portSeq.Store(uint32(30000 + os.Getpid()%2000*8)) }

func nextPort() uint16 { return uint16(portSeq.Add(1)) }

// runHere runs one datpeer-protocol side in this test.
func runHere(t *testing.T, role byte, opts dpOpts, f func(g *dpPeer)) {
	t.Helper()
	devtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, dpRun(ctx, role, opts, t.Logf, f))
}

func TestGoClientToGoServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dpOpts
	}{
		{"client disconnects", dpOpts{}},
		{"server disconnects", dpOpts{ServerDisconnects: true}},
		{"server on an SRQ", dpOpts{SRQ: true}},
		{"reject", dpOpts{Reject: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := nextPort()
			srv := startRole(t, request{Role: "go-server", Port: port, Args: roleArgs{DP: tc.opts}})
			runHere(t, dpRoleClient, tc.opts, func(g *dpPeer) { g.runClient(peerAddr(t), udat.ConnQual(port)) })
			srv.finish(t, time.Minute)
		})
	}
}

func TestGoServerToGoClient(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dpOpts
	}{
		{"client disconnects", dpOpts{}},
		{"server disconnects, server on an SRQ", dpOpts{ServerDisconnects: true, SRQ: true}},
		{"reject", dpOpts{Reject: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := nextPort()
			runHere(t, dpRoleServer, tc.opts, func(g *dpPeer) {
				g.listen(udat.ConnQual(port))
				cl := startRole(t, request{Role: "go-client", Port: port, Args: roleArgs{DP: tc.opts}})
				g.runServer()
				cl.finish(t, time.Minute)
			})
		})
	}
}

// TestGoAndCAcrossTheWire runs the C datpeer (OFA DAPL's cma provider) on
// one host and the Go side on the other, in both roles.
func TestGoAndCAcrossTheWire(t *testing.T) {
	bin := buildDatPeer(t)
	t.Run("C server, Go client", func(t *testing.T) {
		port := nextPort()
		srv := startRole(t, request{Role: "c-server", Port: port, Args: roleArgs{DatPeer: bin}})
		runHere(t, dpRoleClient, dpOpts{}, func(g *dpPeer) { g.runClient(peerAddr(t), udat.ConnQual(port)) })
		srv.finish(t, time.Minute)
	})
	t.Run("C server rejects Go client", func(t *testing.T) {
		port := nextPort()
		srv := startRole(t, request{Role: "c-server", Port: port, Args: roleArgs{DatPeer: bin}})
		runHere(t, dpRoleClient, dpOpts{Reject: true}, func(g *dpPeer) { g.runClient(peerAddr(t), udat.ConnQual(port)) })
		srv.finish(t, time.Minute)
	})
	t.Run("Go server, C client", func(t *testing.T) {
		port := nextPort()
		runHere(t, dpRoleServer, dpOpts{}, func(g *dpPeer) {
			g.listen(udat.ConnQual(port))
			cl := startRole(t, request{Role: "c-client", Port: port, Args: roleArgs{DatPeer: bin}})
			g.runServer()
			cl.finish(t, time.Minute)
		})
	})
	t.Run("Go server rejects C client", func(t *testing.T) {
		port := nextPort()
		runHere(t, dpRoleServer, dpOpts{}, func(g *dpPeer) {
			g.listen(udat.ConnQual(port))
			cl := startRole(t, request{Role: "c-client", Port: port, Args: roleArgs{DatPeer: bin, DP: dpOpts{Reject: true}}})
			g.runServer()
			cl.finish(t, time.Minute)
		})
	})
}

var datPeerBin struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// buildDatPeer compiles testdata/datpeer/datpeer.c once, where both hosts
// can run it: the shared directory of the pair, else a temporary one.
func buildDatPeer(t *testing.T) string {
	t.Helper()
	selfAddr(t) // a device test
	d := &datPeerBin
	d.once.Do(func() {
		dir := pairDir()
		if !inPair() {
			dir, d.err = os.MkdirTemp("", "crosshost-datpeer")
			if d.err != nil {
				return
			}
		}
		d.path = filepath.Join(dir, "datpeer")
		src := filepath.Join("..", "testdata", "datpeer", "datpeer.c")
		d.out, d.err = exec.Command("cc", "-O2", "-Wall", "-o", d.path, src, "-ldat2").CombinedOutput()
	})
	require.NoError(t, d.err, "building the C peer (cc, libdat2 and <dat2/udat.h>, Debian: gcc libdapl-dev, are needed):\n%s", d.out)
	return d.path
}

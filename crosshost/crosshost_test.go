package crosshost

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/datpeer"
	"github.com/udapl-go/udapl/internal/datpeer/gopeer"
	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// The cross-host tests without faults: each runs one side here and the
// other as a role on the peer host, Go and C in both roles, and checks what
// both sides saw.

var portSeq atomic.Uint32

// Below the kernel's ephemeral ports (32768-60999), which rdma_cm gives
// each active connection (C's cma provider each EP): a listener on one of
// those could find it taken.
func init() { portSeq.Store(uint32(10000 + os.Getpid()%2000*8)) }

func nextPort() uint16 { return uint16(portSeq.Add(1)) }

// runHere runs one datpeer-protocol side in this test.
func runHere(t *testing.T, role byte, opts gopeer.Opts, f func(g *gopeer.Peer)) {
	t.Helper()
	devtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, gopeer.Run(ctx, devtest.Device(), role, opts, t.Logf, f))
}

func TestGoClientToGoServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts gopeer.Opts
	}{
		{"client disconnects", gopeer.Opts{}},
		{"server disconnects", gopeer.Opts{ServerDisconnects: true}},
		{"server on an SRQ", gopeer.Opts{SRQ: true}},
		{"reject", gopeer.Opts{Reject: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := nextPort()
			srv := startRole(t, request{Role: "go-server", Port: port, Args: roleArgs{DP: tc.opts}})
			runHere(t, datpeer.RoleClient, tc.opts, func(g *gopeer.Peer) { g.RunClient(peerAddr(t), udat.ConnQual(port)) })
			srv.finish(t, time.Minute)
		})
	}
}

func TestGoServerToGoClient(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts gopeer.Opts
	}{
		{"client disconnects", gopeer.Opts{}},
		{"server disconnects, server on an SRQ", gopeer.Opts{ServerDisconnects: true, SRQ: true}},
		{"reject", gopeer.Opts{Reject: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := nextPort()
			runHere(t, datpeer.RoleServer, tc.opts, func(g *gopeer.Peer) {
				g.Listen(udat.ConnQual(port))
				cl := startRole(t, request{Role: "go-client", Port: port, Args: roleArgs{DP: tc.opts}})
				g.RunServer()
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
		runHere(t, datpeer.RoleClient, gopeer.Opts{}, func(g *gopeer.Peer) { g.RunClient(peerAddr(t), udat.ConnQual(port)) })
		srv.finish(t, time.Minute)
	})
	t.Run("C server rejects Go client", func(t *testing.T) {
		port := nextPort()
		srv := startRole(t, request{Role: "c-server", Port: port, Args: roleArgs{DatPeer: bin}})
		runHere(t, datpeer.RoleClient, gopeer.Opts{Reject: true}, func(g *gopeer.Peer) { g.RunClient(peerAddr(t), udat.ConnQual(port)) })
		srv.finish(t, time.Minute)
	})
	t.Run("Go server, C client", func(t *testing.T) {
		port := nextPort()
		runHere(t, datpeer.RoleServer, gopeer.Opts{}, func(g *gopeer.Peer) {
			g.Listen(udat.ConnQual(port))
			cl := startRole(t, request{Role: "c-client", Port: port, Args: roleArgs{DatPeer: bin}})
			g.RunServer()
			cl.finish(t, time.Minute)
		})
	})
	t.Run("Go server rejects C client", func(t *testing.T) {
		if deviceIWARP() {
			t.Skip("not applicable: " + devtest.Device() + " is iWARP, where C's cma provider reports a peer's reject as non-peer")
		}
		port := nextPort()
		runHere(t, datpeer.RoleServer, gopeer.Opts{}, func(g *gopeer.Peer) {
			g.Listen(udat.ConnQual(port))
			cl := startRole(t, request{Role: "c-client", Port: port, Args: roleArgs{DatPeer: bin, DP: gopeer.Opts{Reject: true}}})
			g.RunServer()
			cl.finish(t, time.Minute)
		})
	})
}

var datPeerBin struct {
	once sync.Once
	path string
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
		d.err = datpeer.Build(context.Background(), d.path)
	})
	require.NoError(t, d.err)
	return d.path
}

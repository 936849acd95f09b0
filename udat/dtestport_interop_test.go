//go:build linux && cgo

package udat_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/cverbs"
	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/internal/dtestport"
	"github.com/udapl-go/udapl/udat"
)

// The C test programs of dapl2-utils (dtest, dtestx, dtestsrq, dtestcm)
// against Go programs of our own that speak their wire protocols
// (internal/dtestport), in both roles where the C program takes both. The
// C programs open the cma provider on rxe0's netdev through
// testdata/datpeer/dat.conf. dtest, dtestx and dtestcm use fixed ports
// (TCP 15828, connection qualifiers 45248 and 31111-31112), so these tests
// do not run in parallel with each other.

const dtFinishWait = 30 * time.Second // the C program's exit after the Go side's

// dtProgram is the installed C program name, failing the test if it is
// missing (dapl2-utils).
func dtProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require.NoError(t, err, "%s from dapl2-utils (scripts/install-deps.sh installs it)", name)
	return p
}

// dtStart starts a C program; the test's cleanup kills it and, on failure
// or with -v, prints its output.
func dtStart(t *testing.T, bin, pass string, args ...string) *dtestport.Proc {
	t.Helper()
	p, err := dtestport.Start(bin, pass, args...)
	require.NoError(t, err)
	t.Logf("started %s", p.Name)
	t.Cleanup(func() {
		p.Kill()
		if err := p.CrashedAtExit(); err != nil {
			t.Logf("%s crashed closing its IA or exiting, its work done (OFA DAPL, not udat): %v", p.Name, err)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("output of %s:\n%s", p.Name, p.Output())
		}
	})
	return p
}

// dtAddr is the address of dev's IA: where both sides listen.
func dtAddr(t *testing.T, dev string) netip.Addr {
	t.Helper()
	ia, err := udat.OpenIA(dev, 8)
	require.NoError(t, err)
	defer ia.Close(udat.CloseAbruptFlag)
	return ia.Address()
}

// dtSoftIWARP reports whether dev is a soft-iWARP device (vendor "bmt").
func dtSoftIWARP(t *testing.T, dev string) bool {
	t.Helper()
	c, err := cverbs.Open(dev)
	require.NoError(t, err)
	defer c.Close()
	a, err := c.QueryDevice()
	require.NoError(t, err)
	return a.VendorID == 0x626d74
}

// dtLines checks that the C program printed a line matching each regular
// expression.
func dtLines(t *testing.T, p *dtestport.Proc, res ...string) {
	t.Helper()
	for _, re := range res {
		require.Regexp(t, regexp.MustCompile("(?m)"+re), p.Output(), "output of %s", p.Name)
	}
}

// dtFinish waits up to wait for the C program to pass and checks its
// lines (dtLines).
func dtFinish(t *testing.T, p *dtestport.Proc, wait time.Duration, res ...string) {
	t.Helper()
	require.NoError(t, p.Finish(wait), p.Output())
	dtLines(t, p, res...)
}

// dtGoServer runs a Go server in an errgroup: serve gets a context that
// ends when the C client (bin with args, started by dtStart once the
// server listens) fails.
func dtGoServer(t *testing.T, serve func(ctx context.Context, ready func()) error, bin, pass string, args ...string) *dtestport.Proc {
	t.Helper()
	p, err := dtGoServerErr(t, serve, bin, pass, args...)
	require.NoError(t, err)
	return p
}

// dtGoServerErr is dtGoServer returning the server's error, with the C
// client if it was started.
func dtGoServerErr(t *testing.T, serve func(ctx context.Context, ready func()) error, bin, pass string, args ...string) (*dtestport.Proc, error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var p *dtestport.Proc
	var g errgroup.Group
	g.Go(func() error {
		return serve(ctx, func() {
			p = dtStart(t, bin, pass, args...)
			context.AfterFunc(p.Failed(), func() { cancel(context.Cause(p.Failed())) })
		})
	})
	if err := g.Wait(); err != nil {
		return p, err
	}
	if p == nil {
		return nil, errors.New("the Go server never became ready")
	}
	return p, nil
}

// dtPortTaken reports whether C's client gave up at rdma_connect's
// EADDRINUSE: on soft-iWARP rdma_cm picks a local port without regard to
// the TCP sockets that hold one, where udat picks another and C stops
// (migrating-from-c.md, "On iWARP").
func dtPortTaken(c *dtestport.Proc) bool {
	return c != nil && strings.Contains(c.Output(), "rdma_connect ERR -1 Address already in use")
}

// dtOnceMoreIfPortTaken runs run, which starts C's client, once more when
// that client gave up on a taken port (dtPortTaken): C's defect, not ours.
// It fails t on any other error and returns the client.
func dtOnceMoreIfPortTaken(t *testing.T, run func() (*dtestport.Proc, error)) *dtestport.Proc {
	t.Helper()
	c, err := run()
	if err != nil && dtPortTaken(c) {
		t.Logf("C's client gave up on a taken port (%v): once more", err)
		c, err = run()
	}
	require.NoError(t, err)
	return c
}

func TestDtestWithC(t *testing.T) {
	dev := devtest.Require(t)
	bin := dtProgram(t, "dtest")
	addr := dtAddr(t, dev)
	o := dtestport.DtestOpts{BufLen: 4096, Burst: 1000}
	args := []string{"-P", dtestport.Provider, "-b", strconv.Itoa(o.BufLen), "-B", strconv.Itoa(o.Burst)}

	t.Run("CServerGoClient", func(t *testing.T) {
		var c *dtestport.Proc
		for try := 1; ; try++ {
			c = dtStart(t, bin, dtestport.DtestPass, append([]string{"-s"}, args...)...)
			require.NoError(t, c.WaitOutput("Server is waiting for client connection", 30*time.Second))
			err := dtestport.DtestClient(c.Failed(), dev, addr, o, t.Logf)
			// The C server sends as soon as it is connected, and
			// soft-iWARP's active side fails a connection whose first
			// data comes before it has taken the MPA reply (EPROTO in
			// siw_recv_mpa_rr): the client sees UNREACHABLE, about 1
			// run in 10. Not ours to cure (migrating-from-c.md): once
			// more, with a new server.
			if err != nil && try == 1 && dtSoftIWARP(t, dev) && strings.Contains(err.Error(), udat.EventConnectionUnreachable.String()) {
				t.Logf("try 1 lost its connection to siw's MPA start-up race: %v; once more", err)
				c.Kill()
				continue
			}
			require.NoError(t, err)
			break
		}
		// The client has checked all 100 of the server's pongs. The
		// server prints its summary only after its teardown, where OFA
		// DAPL crashes now and then (once in CI): a crash after the
		// ping-pong began is one at exit.
		c.WorkVerifiedAfter("PING DATA with SEND MSG")
		dtFinish(t, c, dtFinishWait,
			`CONNECTED!`,
			`SERVER: RDMA write buffer contains: client RDMA write data\.\.\.$`,
			// The C server reads the Go client's rbuf as soon as it has
			// sent its message: before or after the client set its text.
			`SERVER: RCV RDMA read buffer contains: (client RDMA read data|server RDMA write data)\.\.\.$`)
		if c.CrashedAtExit() == nil {
			dtLines(t, c, `Message PingPong: \(100 x 4096\)`)
		}
	})

	t.Run("GoServerCClient", func(t *testing.T) {
		c := dtGoServer(t, func(ctx context.Context, ready func()) error {
			return dtestport.DtestServer(ctx, dev, o, t.Logf, ready)
		}, bin, dtestport.DtestPass, append([]string{"-h", addr.String()}, args...)...)
		dtFinish(t, c, dtFinishWait,
			`CONNECTED!`,
			`CLIENT: RDMA write buffer contains: server RDMA write data\.\.\.$`,
			`CLIENT: RCV RDMA read buffer contains: (server RDMA read data|client RDMA write data)\.\.\.$`,
			`Message PingPong: \(100 x 4096\)`)
	})
}

func TestDtestxWithC(t *testing.T) {
	dev := devtest.Require(t)
	if !hasIBExtension(t, dev) {
		t.Skip("not applicable: " + dev + " has no IB extensions")
	}
	bin := dtProgram(t, "dtestx")
	addr := dtAddr(t, dev)
	const size = 256 // dtestx's default -b

	// The C program prints what it received and checks the atomics'
	// results itself (it exits 1 otherwise).
	t.Run("CServerGoClient", func(t *testing.T) {
		// dtestx's output is not flushed before it exits: the Go client's
		// TCP connect retries until the server listens.
		c := dtStart(t, bin, dtestport.DtestxPass, "-s", "-P", dtestport.Provider)
		err := dtestport.DtestxClient(c.Failed(), dev, addr, size, t.Logf)
		require.NoError(t, err)
		dtFinish(t, c, dtFinishWait,
			`Server received immed_data=0x7777$`,
			`rdma buffer 0x[0-9a-f]+ contains: Client written data$`,
			`RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED`,
			`CMP_SWAP test - PASSED`,
			`Client original data \(on Server\) = 100, expected 0x100`,
			`FETCH_ADD test - PASSED`)
	})

	t.Run("GoServerCClient", func(t *testing.T) {
		c := dtGoServer(t, func(ctx context.Context, ready func()) error {
			return dtestport.DtestxServer(ctx, dev, size, t.Logf, ready)
		}, bin, dtestport.DtestxPass, "-h", addr.String(), "-P", dtestport.Provider)
		dtFinish(t, c, dtFinishWait,
			`Client received immed_data=0x1111$`,
			`rdma buffer 0x[0-9a-f]+ contains: Server data$`,
			`RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED`,
			`CMP_SWAP test - PASSED`,
			`Server original data \(on Client\) = 10, expected 0x10`,
			`FETCH_ADD test - PASSED`)
	})
}

// TestDtestxUDWithC: dtestx -u (and dtestsrq -u, dtestcm -u) cannot run
// against C over rdma_cm: OFA DAPL's cma provider has no UD (its QP
// allocation, openib_common/qp.c, fails DAT_IB_SERVICE_TYPE_UD when built
// for cma: "DAPL ERR create_qp Invalid argument", dat_ep_create
// DAT_INVALID_PARAMETER), and its UD providers (ucm, scm) resolve peers
// with their own wire protocols, not rdma_cm's SIDR that udat speaks. The
// test checks that the C side still fails so, and ends as not applicable.
func TestDtestxUDWithC(t *testing.T) {
	dev := devtest.Require(t)
	if !hasIBExtension(t, dev) {
		t.Skip("not applicable: " + dev + " has no IB extensions, so no UD")
	}
	bin := dtProgram(t, "dtestx")
	c := dtStart(t, bin, dtestport.DtestxPass, "-s", "-u", "-P", dtestport.Provider)
	require.Error(t, c.Finish(dtFinishWait), "dtestx -u over the cma provider passed on its own: port its UD protocol")
	require.Contains(t, c.Output(), "create_qp Invalid argument", "dtestx -u failed otherwise than known")
	t.Skip("not applicable: the C cma provider has no UD (dat_ep_create: DAT_INVALID_PARAMETER, create_qp: Invalid argument)")
}

func TestDtestsrqWithC(t *testing.T) {
	dev := devtest.Require(t)
	bin := dtProgram(t, "dtestsrq")
	addr := dtAddr(t, dev)
	// 3 connections, bursts of 4 messages, 3 rounds; the buffer length is
	// DAT_IB_TRANSPORT_MTU on both sides.
	o := dtestport.DtestsrqOpts{Conns: 3, Burst: 4, Rounds: 3, Port: udat.ConnQual(27000 + os.Getpid()%500), SRQ: true, EPBrokenWait: 3 * time.Second}
	args := func(o dtestport.DtestsrqOpts, srq bool) []string {
		a := []string{"-v", "-P", dtestport.Provider, "-p", strconv.Itoa(int(o.Port)),
			"-c", strconv.Itoa(o.Conns), "-B", strconv.Itoa(o.Burst), "-t", strconv.Itoa(o.Rounds)}
		if !srq {
			a = append(a, "-S", "0")
		}
		return a
	}
	// After the data, C (with its SRQ) waits for DAT_ASYNC_ERROR_EP_BROKEN
	// for each EP, without a timeout. Where the device raises
	// IBV_EVENT_QP_LAST_WQE_REACHED the Go side sees the same events and C
	// must finish; where it does not (rxe on Linux 6.1), C must have
	// reached that wait, its data checked, and it is stopped there.
	//
	// Where the device raises it (rxe on Linux 6.12), it raises it more
	// than once for the first EP the active side disconnects, and OFA DAPL
	// posts EP_BROKEN each time: the C client then takes the second one
	// for its next EP and fails ("Invalid EP via async event"), in C/C
	// too. udat posts one per connection.
	finish := func(t *testing.T, c *dtestport.Proc, res dtestport.DtestsrqResult, pass string) {
		t.Helper()
		if res.EPBroken == o.Conns && pass == dtestport.DtestsrqPass && !strings.Contains(c.Name, " -s ") {
			err := c.Finish(dtFinishWait)
			if err != nil && strings.Contains(c.Output(), "Invalid EP via async event") {
				require.Contains(t, c.Output(), "Freed EP[0]")
				t.Logf("the C client failed by itself, as in C/C here: a second EP_BROKEN for its first EP")
				return
			}
			require.NoError(t, err)
			return
		}
		if res.EPBroken == o.Conns || pass == dtestport.DtestsrqPassNoSRQ {
			require.NoError(t, c.Finish(dtFinishWait))
			return
		}
		require.Zero(t, res.EPBroken, "EP_BROKEN for some of the EPs only")
		require.NoError(t, c.WaitOutput(`(?m)^ Wait for EP async event$`, dtFinishWait))
		time.Sleep(time.Second)
		require.True(t, c.Running(), "C left its wait for EP_BROKEN")
		require.NotContains(t, c.Output(), "ERR")
		t.Logf("the device raised no LAST_WQE_REACHED: C waits for DAT_ASYNC_ERROR_EP_BROKEN for ever, as udat would; stopped")
	}
	for _, srq := range []bool{true, false} {
		name, pass := "", dtestport.DtestsrqPass
		if !srq {
			// The C side with -S 0 (no SRQ): it then finishes on any
			// device; the Go side keeps its SRQ.
			name, pass = "CNoSRQ", dtestport.DtestsrqPassNoSRQ
		}
		o := o
		o.PeerWaitsEPBroken = srq
		t.Run("CServerGoClient"+name, func(t *testing.T) {
			o := o
			o.Port++
			c := dtStart(t, bin, pass, append([]string{"-s"}, args(o, srq)...)...)
			require.NoError(t, c.WaitOutput("server ready on port", 30*time.Second))
			res, err := dtestport.DtestsrqClient(c.Failed(), dev, addr, o, t.Logf)
			require.NoError(t, err)
			finish(t, c, res, pass)
			dtLines(t, c, `ALL 3 CONNECTED on server!`)
		})
		t.Run("GoServerCClient"+name, func(t *testing.T) {
			o := o
			o.Port += 2
			var res dtestport.DtestsrqResult
			c := dtGoServer(t, func(ctx context.Context, ready func()) (err error) {
				res, err = dtestport.DtestsrqServer(ctx, dev, o, t.Logf, ready)
				return err
			}, bin, pass, append([]string{"-h", addr.String()}, args(o, srq)...)...)
			finish(t, c, res, pass)
			dtLines(t, c, `ALL 3 CONNECTED on client!`)
		})
	}
}

// dtestcmConnsEnv sets TestDtestcmWithC's connection count (default 100,
// bursts of 100 as the table; 1000 for the report).
const dtestcmConnsEnv = "UDAPL_DTESTCM_CONNS"

// dtestcmRuns counts the runs of the dtestcm tests in this process, each
// on ports of its own.
var dtestcmRuns atomic.Int64

// dtestcmGoGo runs the Go port's server and client against each other and
// returns the client's rate. It reports both sides' errors: a side that
// fails ends the other's connections as it closes its IA, so the other's
// error may come first.
func dtestcmGoGo(t *testing.T, dev string, addr netip.Addr, o dtestport.DtestcmOpts) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dtestport.RunLimit)
	defer cancel()
	ready, serverDone := make(chan struct{}), make(chan struct{})
	var g errgroup.Group
	var cps float64
	var serverErr, clientErr error
	g.Go(func() error {
		defer close(serverDone)
		serverErr = dtestport.DtestcmServer(ctx, dev, o, t.Logf, func() { close(ready) })
		return nil
	})
	g.Go(func() error {
		select {
		case <-ready:
			cps, clientErr = dtestport.DtestcmClient(ctx, dev, addr, o, t.Logf)
		case <-serverDone: // it failed before it listened
		}
		return nil
	})
	g.Wait()
	if serverErr != nil {
		serverErr = fmt.Errorf("server: %w", serverErr)
	}
	if clientErr != nil {
		clientErr = fmt.Errorf("client: %w", clientErr)
	}
	return cps, errors.Join(serverErr, clientErr)
}

// TestDtestcmUD runs dtestcm's UD mode (-u: each "connection" resolves the
// peer's address) Go against Go, waiting and polling: C's side cannot take
// part (TestDtestxUDWithC), so the C program's own run is checked to fail
// as known.
func TestDtestcmUD(t *testing.T) {
	dev := devtest.Require(t)
	if !hasIBExtension(t, dev) {
		t.Skip("not applicable: " + dev + " has no IB extensions, so no UD")
	}
	addr := dtAddr(t, dev)
	port := 28500 + os.Getpid()%500 + 16*int(dtestcmRuns.Add(1)-1) // see connQualSeq
	t.Run("C", func(t *testing.T) {
		c := dtStart(t, dtProgram(t, "dtestcm"), dtestport.DtestcmPass, "-s", "-u", "-c", "1", "-P", dtestport.Provider, "-p", strconv.Itoa(port))
		require.Error(t, c.Finish(dtFinishWait), "dtestcm -u over the cma provider passed on its own: run it against the Go port")
		require.Contains(t, c.Output(), "create_qp Invalid argument", "dtestcm -u failed otherwise than known")
	})
	for _, wait := range []bool{true, false} {
		name := map[bool]string{true: "Wait", false: "Poll"}[wait]
		t.Run("GoServerGoClient"+name, func(t *testing.T) {
			port++
			cps, err := dtestcmGoGo(t, dev, addr, dtestport.DtestcmOpts{Conns: 100, Burst: 100, Port: udat.ConnQual(port), Wait: wait, UD: true})
			require.NoError(t, err)
			t.Logf("dtestcm -u -c 100 -b 100, Go against Go: %.0f address resolutions/s", cps)
		})
	}
}

// TestDtestcmWithC runs dtestcm's RC protocol in the four combinations of
// C and Go server and client, with dat_evd_wait (-w) and polling, checks
// each (private data both ways, every connection established and
// disconnected, every EP freed) and prints the client's connections per
// second for each as one table (all measured in this one run: compare
// only within it).
func TestDtestcmWithC(t *testing.T) {
	dev := devtest.Require(t)
	bin := dtProgram(t, "dtestcm")
	addr := dtAddr(t, dev)
	conns := 100
	if v := os.Getenv(dtestcmConnsEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, dtestcmConnsEnv)
		conns = n
	}
	// C DAPL on soft-iWARP refuses its QPs from about the 40th on
	// (cverbs/siwguard.go: udat steers clear of that, C does not; its test
	// is cverbs' TestManySmallQPsOnOneCQ), so every run makes fewer
	// connections there, to keep the four comparable.
	siw := dtSoftIWARP(t, dev)
	if siw && os.Getenv(dtestcmConnsEnv) == "" {
		conns = 30
	}
	// Each run (-count) on ports of its own: a connection to a port used
	// within the last minute can meet its predecessors in TIME_WAIT. The
	// block lies below the ephemeral ports (connQualSeq): C's server
	// creates its EPs, each taking one of those, before its PSP.
	port := 27500 + os.Getpid()%500 + 16*int(dtestcmRuns.Add(1)-1)
	// dtestcm's server frees its EPs slowly (C: 50 ms each under load).
	finishWait := dtFinishWait + time.Duration(conns)*200*time.Millisecond
	defer func(d time.Duration) { dtestport.RunLimit = d }(dtestport.RunLimit)
	dtestport.RunLimit = 2*time.Minute + 2*finishWait
	type row struct{ cc, cgo, goc, gogo float64 }
	rates := map[bool]*row{true: {}, false: {}}
	for _, wait := range []bool{true, false} {
		mode := "Poll"
		if wait {
			mode = "Wait"
		}
		r := rates[wait]
		next := func() dtestport.DtestcmOpts {
			port++
			return dtestport.DtestcmOpts{Conns: conns, Burst: 100, Port: udat.ConnQual(port), Wait: wait}
		}
		cargs := func(o dtestport.DtestcmOpts, more ...string) []string {
			a := append(more, "-P", dtestport.Provider, "-p", strconv.Itoa(int(o.Port)), "-c", strconv.Itoa(o.Conns), "-b", strconv.Itoa(o.Burst))
			if o.Wait {
				a = append(a, "-w")
			}
			return a
		}
		// finishCClient waits for C's client, whose steps after it has
		// connected all (disconnecting them) its server has checked when
		// the server passed.
		finishCClient := func(c *dtestport.Proc) error {
			c.WorkVerifiedAfter(`ALL ` + strconv.Itoa(conns) + ` CONNECTED on Client!`)
			return c.Finish(finishWait)
		}
		// cClient runs run, which starts C's client, and returns it with
		// its rate. That client prints its rate last, after closing its
		// IA, and now and then crashes while it takes its disconnections
		// or closes its IA (OFA DAPL's defect, which dtStart reports):
		// without its rate, the run is made once more.
		cClient := func(t *testing.T, run func() (*dtestport.Proc, error)) (*dtestport.Proc, float64) {
			t.Helper()
			c := dtOnceMoreIfPortTaken(t, run)
			v, err := dtestport.ParseCPS(c.Output(), conns)
			if crash := c.CrashedAtExit(); err != nil && crash != nil {
				t.Logf("C's client crashed before printing its rate (%v): once more", crash)
				c = dtOnceMoreIfPortTaken(t, run)
				v, err = dtestport.ParseCPS(c.Output(), conns)
			}
			require.NoError(t, err, c.Output())
			return c, v
		}
		t.Run("CServerCClient"+mode, func(t *testing.T) {
			var s *dtestport.Proc
			_, r.cc = cClient(t, func() (*dtestport.Proc, error) {
				o := next()
				s = dtStart(t, bin, dtestport.DtestcmPass, cargs(o, "-s")...)
				require.NoError(t, s.WaitOutput("Conn server waiting for client", 60*time.Second))
				c := dtStart(t, bin, dtestport.DtestcmPass, cargs(o, "-h", addr.String())...)
				err := finishCClient(c)
				if err != nil {
					s.Kill()
				}
				return c, err
			})
			require.NoError(t, s.Finish(finishWait))
			dtLines(t, s, `ALL \d+ CONNECTED on Server!`)
		})
		t.Run("CServerGoClient"+mode, func(t *testing.T) {
			o := next()
			c := dtStart(t, bin, dtestport.DtestcmPass, cargs(o, "-s")...)
			v, err := dtestport.DtestcmClient(c.Failed(), dev, addr, o, t.Logf)
			require.NoError(t, err)
			dtFinish(t, c, finishWait, `ALL `+strconv.Itoa(o.Conns)+` CONNECTED on Server!`)
			r.cgo = v
		})
		t.Run("GoServerCClient"+mode, func(t *testing.T) {
			var o dtestport.DtestcmOpts
			var c *dtestport.Proc
			c, r.goc = cClient(t, func() (*dtestport.Proc, error) {
				o = next()
				c, err := dtGoServerErr(t, func(ctx context.Context, ready func()) error {
					return dtestport.DtestcmServer(ctx, dev, o, t.Logf, ready)
				}, bin, dtestport.DtestcmPass, cargs(o, "-h", addr.String())...)
				if err == nil {
					err = finishCClient(c)
				}
				return c, err
			})
			dtLines(t, c, `ALL `+strconv.Itoa(o.Conns)+` CONNECTED on Client!`)
		})
		t.Run("GoServerGoClient"+mode, func(t *testing.T) {
			var err error
			r.gogo, err = dtestcmGoGo(t, dev, addr, next())
			require.NoError(t, err)
		})
	}
	t.Logf("dtestcm -c %d -b 100 (RC, connections per second, this run):\n"+
		"| mode | C server, C client | C server, Go client | Go server, C client | Go, Go |\n"+
		"|---|---:|---:|---:|---:|\n"+
		"| dat_evd_wait (-w) | %.0f | %.0f | %.0f | %.0f |\n"+
		"| polling | %.0f | %.0f | %.0f | %.0f |",
		conns, rates[true].cc, rates[true].cgo, rates[true].goc, rates[true].gogo,
		rates[false].cc, rates[false].cgo, rates[false].goc, rates[false].gogo)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// End-to-end device tests: server and client run in this process, over the
// loopback of the device (192.0.2.1 in the test VM), each test on its own
// port.

var portSeq atomic.Uint32

// Below the kernel's ephemeral ports (32768-60999), which rdma_cm gives
// each active connection: a server on one of those could find it taken.
func init() { portSeq.Store(uint32(20000 + os.Getpid()%10000)) }

func nextPort() uint { return uint(portSeq.Add(1)) }

// deviceAddr opens the test device once to learn its address; the test
// fails if there is no device.
func deviceAddr(t *testing.T) (string, string) {
	t.Helper()
	dev := devtest.Require(t)
	ia, err := udat.OpenIA(dev, 4)
	require.NoError(t, err, "open the RDMA device %q (device tests run inside the VM: make test)", dev)
	defer ia.Close(udat.CloseAbruptFlag)
	require.True(t, ia.Address().IsValid(), "the device's netdev has an IPv4 address")
	return dev, ia.Address().String()
}

// readSegments is how many segments an RDMA read on dev reads into.
func readSegments(t *testing.T, dev string) int {
	t.Helper()
	ia, err := udat.OpenIA(dev, 4)
	require.NoError(t, err)
	defer ia.Close(udat.CloseAbruptFlag)
	a, _, err := ia.Query()
	require.NoError(t, err)
	return a.MaxIOVSegmentsPerRDMARead
}

// syncBuffer is a bytes.Buffer safe for the server goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs a server on its own port until the test ends and
// returns the port.
func startServer(t *testing.T, dev string) uint {
	t.Helper()
	port, _ := startServerTimeout(t, dev, 30*time.Second)
	return port
}

// startServerTimeout is startServer with the server's -timeout; it also
// returns the server's log.
func startServerTimeout(t *testing.T, dev string, timeout time.Duration) (uint, *syncBuffer) {
	t.Helper()
	return startServerConfig(t, &config{device: dev, timeout: timeout}, 0)
}

// startServerConfig is startServer with the server's config (its port and
// server mode set here); at the end the server must report failed client
// runs as many as failures.
func startServerConfig(t *testing.T, cfg *config, failures int) (uint, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log, done := launchServer(ctx, t, cfg)
	t.Cleanup(func() {
		cancel()
		err := <-done
		t.Logf("server log:\n%s", log.String())
		if failures == 0 {
			assert.NoError(t, err, "the server reports no failed client run")
		} else {
			assert.ErrorContains(t, err, fmt.Sprintf("%d of ", failures), "the server reports the failed client runs")
		}
	})
	return cfg.port, log
}

// launchServer runs a server of cfg on a port of its own (set in cfg
// here) and returns once it listens, with its log and its result to come.
func launchServer(ctx context.Context, t *testing.T, cfg *config) (*syncBuffer, <-chan error) {
	t.Helper()
	log := &syncBuffer{}
	done := make(chan error, 1)
	cfg.server, cfg.port = true, nextPort()
	go func() {
		done <- runServer(ctx, cfg, log)
	}()
	// The server is up when it says so.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "listening") {
		select {
		case err := <-done:
			t.Fatalf("the server stopped: %v\n%s", err, log.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "the server did not start")
		time.Sleep(10 * time.Millisecond)
	}
	return log, done
}

// runArgs runs the client with args and returns its exit status, stdout and
// stderr.
func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	status := run(append(args, "-progress", "off"), &out, &errb)
	t.Logf("udattest %s: status %d\n%s%s", strings.Join(args, " "), status, out.String(), errb.String())
	return status, out.String(), errb.String()
}

// lastJSON decodes the JSON result line of the output.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &m), "the last line is JSON: %q", lines[len(lines)-1])
	return m
}

func TestEndToEndQuick(t *testing.T) {
	dev, addr := deviceAddr(t)
	port := startServer(t, dev)
	for _, wait := range []string{"poll", "block"} {
		status, out, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-wait", wait)
		require.Equal(t, 0, status, errs)
		for _, step := range []string{"connect with private data", "exchange RMR triplets", "RDMA write burst",
			"RDMA read", "message ping-pong", "disconnect"} {
			assert.Regexp(t, `(?m)^  `+step+` +ok `, out)
		}
		assert.Contains(t, out, "\nPASSED\n")
		assert.Equal(t, "PASSED", lastJSON(t, out)["result"])
	}
}

func TestEndToEndPerf(t *testing.T) {
	dev, addr := deviceAddr(t)
	port := startServer(t, dev)
	p := fmt.Sprint(port)
	cases := [][]string{
		{"-o", "write", "-n", "2000", "-size", "64"},
		{"-o", "read", "-n", "1000", "-size", "4k", "-q", "16"},
		{"-o", "send", "-n", "2000", "-size", "64", "-q", "32", "-signal", "8"},
		{"-o", "write", "-n", "2000", "-size", "64", "-batch", "16"},
		{"-o", "send", "-n", "1000", "-size", "64", "-q", "32", "-batch", "7", "-signal", "3"},
		{"-o", "read", "-n", "500", "-size", "4k", "-q", "16", "-batch", "4", "-segs", "2"},
		{"-o", "send", "-n", "500", "-size", "4k", "-wait", "block", "-lat-n", "100"},
		{"-o", "write", "-n", "500", "-size", "1000", "-segs", "4", "-signal", "4", "-q", "8"},
		{"-o", "send", "-lat", "-n", "500", "-size", "64"},
		{"-o", "send", "-lat", "-n", "200", "-size", "4k", "-wait", "block"},
		{"-o", "write", "-lat", "-n", "500", "-size", "64"},
		{"-o", "write", "-lat", "-n", "200", "-size", "30", "-segs", "3"},
		{"-o", "read", "-lat", "-n", "300", "-size", "64"},
	}
	readSegs := readSegments(t, dev)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			status, out, errs := runArgs(t, append([]string{"-D", dev, "-h", addr, "-p", p, "-T", "P"}, args...)...)
			if args[1] == "read" && slices.Contains(args, "-segs") && readSegs < 2 {
				// soft-iWARP reads into one segment (max_sge_rd 1).
				require.NotEqual(t, 0, status)
				require.Contains(t, errs, fmt.Sprintf("reads into at most %d segment(s) per RDMA read", readSegs))
				t.Skipf("not applicable: %s reads into %d segment per RDMA read", dev, readSegs)
			}
			require.Equal(t, 0, status, errs)
			assert.Contains(t, out, "#bytes")
			m := lastJSON(t, out)
			assert.Equal(t, "PASSED", m["result"])
			assert.Greater(t, m["msg_rate"], 0.0)
			assert.Greater(t, m["mb_per_s"], 0.0)
			assert.Greater(t, m["lat_p50_us"], 0.0)
			assert.GreaterOrEqual(t, m["lat_p99_us"], m["lat_p50_us"])
			assert.GreaterOrEqual(t, m["lat_p999_us"], m["lat_p99_us"])
		})
	}
}

// TestEndToEndSendCredits: a send bandwidth run against a server that
// falls behind (it leaves a receive unposted for a second, as a server the
// scheduler left behind) passes with credits: the client stops at the
// server's receives and goes on when the server has reposted them. Every
// way of posting and signalling stops there: one send per post with every
// one or every 8th signalled, posts of 7 with every 3rd, blocking waits
// with latency samples after the run. On a device without
// receiver-not-ready retry (siw0) credits are the default, and the same run
// without them fails: the client's 513th send finds none of the server's
// 512 receives posted, and the connection ends. On RoCE (rxe0) only the
// runs with -credits on are made: there a send that finds no receive waits
// resent, for at most the connection's retransmission budget (udat's
// retransmit.go), which the stall may outlast.
func TestEndToEndSendCredits(t *testing.T) {
	const stall = time.Second
	dev, addr := deviceAddr(t)
	ia, err := udat.OpenIA(dev, 4)
	require.NoError(t, err)
	rnr := rnrRetry(ia)
	ia.Close(udat.CloseAbruptFlag)
	switch {
	case strings.HasPrefix(dev, "siw"):
		assert.False(t, rnr, "iWARP has no receiver-not-ready retry")
	case strings.HasPrefix(dev, "rxe"):
		assert.True(t, rnr, "RoCE has receiver-not-ready retry")
	}
	port, _ := startServerConfig(t, &config{device: dev, timeout: 30 * time.Second, sinkStall: stall}, 0)
	base := []string{"-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "P", "-o", "send", "-size", "64", "-n", "5000", "-timeout", "10s"}
	cases := [][]string{
		{"-lat-n", "0"},
		{"-signal", "8", "-lat-n", "0"},
		{"-batch", "7", "-signal", "3", "-lat-n", "0"},
		{"-wait", "block", "-q", "16", "-lat-n", "100"},
	}
	for _, args := range cases {
		credits := []string{"on"}
		if !rnr {
			credits = append(credits, "auto")
		}
		for _, cr := range credits {
			args := append(append(append([]string{}, base...), args...), "-credits", cr)
			t.Run(strings.Join(args[len(base):], " "), func(t *testing.T) {
				start := time.Now()
				status, out, errs := runArgs(t, args...)
				require.Equal(t, 0, status, errs)
				m := lastJSON(t, out)
				assert.Equal(t, "PASSED", m["result"])
				assert.Equal(t, true, m["credits"], "the run used credits")
				assert.Contains(t, out, ", credits,", "the title says so")
				assert.GreaterOrEqual(t, time.Since(start), stall, "the server stalled")
			})
		}
	}
	if rnr {
		return
	}
	t.Run("-credits off", func(t *testing.T) {
		port, log := startServerConfig(t, &config{device: dev, timeout: 10 * time.Second, sinkStall: stall}, 1)
		status, out, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "P", "-o", "send", "-size", "64",
			"-n", "5000", "-timeout", "10s", "-lat-n", "0", "-credits", "off")
		assert.Equal(t, 1, status, "without credits the client gets ahead of the server's receives, and the connection ends")
		assert.Equal(t, "FAILED", lastJSON(t, out)["result"])
		assert.Nil(t, lastJSON(t, out)["credits"])
		t.Logf("without credits: %s", strings.TrimSpace(errs))
		require.Eventually(t, func() bool { return strings.Contains(log.String(), "FAILED") }, 20*time.Second, 10*time.Millisecond,
			"the server's run fails too")
	})
}

func TestEndToEndTransactions(t *testing.T) {
	dev, addr := deviceAddr(t)
	port := startServer(t, dev)
	status, out, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "T", "-eps", "6", "-n", "20", "-size", "3000")
	require.Equal(t, 0, status, errs)
	m := lastJSON(t, out)
	assert.Equal(t, "PASSED", m["result"])
	assert.Equal(t, float64(6*20*dtosPerRound), m["ops"])
	status, out, errs = runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "T", "-eps", "2", "-n", "5", "-wait", "block", "-json")
	require.Equal(t, 0, status, errs)
	assert.Equal(t, 1, strings.Count(out, "\n"), "-json prints the JSON line only")
	assert.Equal(t, "PASSED", lastJSON(t, out)["result"])
}

func TestEndToEndSessionsLimit(t *testing.T) {
	dev, addr := deviceAddr(t)
	port := nextPort()
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServer(context.Background(), &config{server: true, device: dev, port: port, timeout: 30 * time.Second, sessions: 2}, log)
	}()
	for !strings.Contains(log.String(), "listening") {
		time.Sleep(10 * time.Millisecond)
	}
	status, _, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port))
	require.Equal(t, 0, status, errs)
	status, _, errs = runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "T", "-eps", "3", "-n", "2")
	require.Equal(t, 0, status, errs)
	select {
	case err := <-done:
		require.NoError(t, err, log.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not exit after 2 sessions")
	}
	assert.Equal(t, 2, strings.Count(log.String(), ": ok\n"), log.String())
}

func TestEndToEndErrors(t *testing.T) {
	dev, addr := deviceAddr(t)

	// No server: connection refused, exit status 1.
	status, out, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(nextPort()))
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, "no udattest server is listening")
	assert.Contains(t, out, "FAILED")
	assert.Equal(t, "FAILED", lastJSON(t, out)["result"])

	// Port in use: a second server on the port fails.
	port := startServer(t, dev)
	var sout, serr bytes.Buffer
	assert.Equal(t, 1, run([]string{"-s", "-D", dev, "-p", fmt.Sprint(port)}, &sout, &serr))
	assert.Contains(t, serr.String(), fmt.Sprintf("port %d is already in use", port))

	// No such device.
	status, _, errs = runArgs(t, "-D", "nosuchdev0", "-h", addr)
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, `cannot open the IA "nosuchdev0": no such RDMA device`)

	// An address nobody answers: the connect times out.
	status, _, errs = runArgs(t, "-D", dev, "-h", "192.0.2.222", "-p", fmt.Sprint(nextPort()), "-timeout", "3s")
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, "timed out")
}

// TestEndToEndLongRunShortTimeout: -timeout bounds each wait, not the run.
// Performance runs three times as long as the -timeout of both sides pass,
// in particular the one-sided ones, where the server only waits for the
// run's end (the client's msgProgress messages keep it waiting).
func TestEndToEndLongRunShortTimeout(t *testing.T) {
	const timeout = 3 * time.Second
	dev, addr := deviceAddr(t)
	port, log := startServerTimeout(t, dev, timeout)
	base := []string{"-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "P", "-timeout", timeout.String(), "-json"}
	cases := [][]string{
		{"-o", "write", "-size", "64k", "-lat-n", "0"},
		{"-o", "read", "-size", "64k", "-wait", "block", "-lat-n", "100"},
		{"-o", "read", "-lat", "-size", "16k"},
		{"-o", "write", "-size", "4k", "-signal", "8", "-batch", "4"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			args := append(append([]string{}, base...), args...)
			// How many operations take about 3 x -timeout: from a short run,
			// then again with more until a run lasts 2 x -timeout.
			status, out, errs := runArgs(t, append(args, "-n", "300")...)
			require.Equal(t, 0, status, errs)
			rate, _ := lastJSON(t, out)["msg_rate"].(float64)
			require.Greater(t, rate, 0.0)
			n := int(rate * 3 * timeout.Seconds())
			var took time.Duration
			for try := 0; try < 3 && took < 2*timeout; try++ {
				if try > 0 {
					n = int(float64(n) * 3 * timeout.Seconds() / took.Seconds())
				}
				start := time.Now()
				status, out, errs = runArgs(t, append(args, "-n", fmt.Sprint(n))...)
				took = time.Since(start)
				require.Equal(t, 0, status, "a run of %d operations, %v with -timeout %v: %s", n, took, timeout, errs)
				assert.Equal(t, "PASSED", lastJSON(t, out)["result"])
			}
			require.GreaterOrEqual(t, took, 2*timeout, "the run lasted over twice -timeout")
			t.Logf("%d operations in %v with -timeout %v: PASSED", n, took.Round(time.Millisecond), timeout)
		})
	}
	assert.NotContains(t, log.String(), "FAILED")
}

// helloServer connects a perf client of cfg to its server and exchanges
// hellos; the client's IA closes when the test ends.
func helloServer(t *testing.T, cfg *config) *conn {
	t.Helper()
	cl, err := openClient(cfg)
	require.NoError(t, err)
	t.Cleanup(cl.close)
	c, err := newConn(cl.ia, cl.pz, clientLayout(cfg), cfg.timeout)
	require.NoError(t, err)
	require.NoError(t, c.postAllRecvs())
	req := cl.request('P', cfg)
	require.NoError(t, c.dial(cl.addr, cfg.port, &req))
	require.NoError(t, c.hello(true))
	return c
}

// TestEndToEndSilentClient: a client that connects and then says nothing
// fails its run on the server after the server's -timeout, and says so.
func TestEndToEndSilentClient(t *testing.T) {
	const timeout = 2 * time.Second
	dev, addr := deviceAddr(t)
	srv := &config{device: dev, timeout: timeout, sessions: 1}
	log, done := launchServer(context.Background(), t, srv)
	cfg := &config{host: addr, device: dev, port: srv.port, timeout: 30 * time.Second, test: testPerf, op: opWrite,
		size: 4096, iters: 1 << 30, depth: 64, signal: 1, batch: 1, segs: 1}
	c := helloServer(t, cfg)
	defer c.close()
	assert.Equal(t, timeout, c.peerTimeout, "the server's hello gives its -timeout")
	start := time.Now()
	// Silent from here on.
	select {
	case err := <-done:
		took := time.Since(start)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "1 of 1 client runs failed")
		assert.GreaterOrEqual(t, took, timeout-100*time.Millisecond)
		t.Logf("the server gave up after %v: %s", took.Round(time.Millisecond), log.String())
	case <-time.After(timeout + 20*time.Second):
		t.Fatalf("the server still waits for the silent client:\n%s", log.String())
	}
	assert.Contains(t, log.String(), "FAILED: endpoint 0: receive a control message: timed out waiting for the peer: nothing happened for 2s (-timeout)")
}

// TestEndToEndSilentServer: a server that accepts, exchanges hellos and then
// says nothing fails the client's run after the client's -timeout, with a
// clear error, though the one-sided run itself completes.
func TestEndToEndSilentServer(t *testing.T) {
	dev, addr := deviceAddr(t)
	port := nextPort()
	ia, err := udat.OpenIA(dev, 16)
	require.NoError(t, err)
	defer ia.Close(udat.CloseAbruptFlag)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	crEVD, err := ia.CreateEVD(8, udat.EVDCRFlag)
	require.NoError(t, err)
	psp, err := ia.CreatePSP(udat.ConnQual(port), crEVD, udat.PSPConsumerFlag)
	require.NoError(t, err)
	defer psp.Free()
	served := make(chan error, 1)
	go func() {
		served <- func() error {
			ev, _, err := crEVD.Wait(usec(30*time.Second), 1)
			if err != nil {
				return err
			}
			cr := ev.CR.CR
			p, err := cr.Query()
			if err != nil {
				return err
			}
			req, err := parseRequest(p.PrivateData)
			if err != nil {
				return err
			}
			c, err := newConn(ia, pz, serverLayout(req), 30*time.Second)
			if err != nil {
				return err
			}
			defer c.close()
			c.block = true
			if err := c.postAllRecvs(); err != nil {
				return err
			}
			if err := cr.Accept(c.ep, makeReply(req.nonce)); err != nil {
				return err
			}
			if _, err := c.waitConnEvent(); err != nil {
				return err
			}
			if err := c.hello(false); err != nil {
				return err
			}
			// Silent until the client goes.
			return c.waitDisconnected()
		}()
	}()
	start := time.Now()
	status, out, errs := runArgs(t, "-D", dev, "-h", addr, "-p", fmt.Sprint(port), "-T", "P", "-o", "write", "-n", "2000", "-timeout", "2s")
	took := time.Since(start)
	assert.Equal(t, 1, status)
	assert.Equal(t, "FAILED", lastJSON(t, out)["result"])
	assert.Contains(t, errs, "end the test: receive a control message: timed out waiting for the peer: nothing happened for 2s (-timeout)")
	assert.GreaterOrEqual(t, took, 2*time.Second)
	select {
	case err := <-served:
		t.Logf("the silent server: %v", err)
	case <-time.After(40 * time.Second):
		t.Fatal("the silent server did not end")
	}
}

// TestEndToEndLatencyAfterBeat: the latency phase that follows a throughput
// run may start with a msgProgress in flight (the last window of
// operations outlasted a beat); each sample then still times its own
// operation, and the phase passes.
func TestEndToEndLatencyAfterBeat(t *testing.T) {
	const timeout = 5 * time.Second
	dev, addr := deviceAddr(t)
	srv := &config{device: dev, timeout: timeout, sessions: 1}
	log, done := launchServer(context.Background(), t, srv)
	cfg := &config{host: addr, device: dev, port: srv.port, timeout: 30 * time.Second, test: testPerf, op: opRead,
		size: 4096, iters: 100, depth: 8, signal: 1, batch: 1, segs: 1, latIters: 10}
	c := helloServer(t, cfg)

	require.NoError(t, c.sendBeat(cfg.iters))
	samples := make([]time.Duration, cfg.latIters)
	require.NoError(t, c.opLatency(opRead, 64, 1, samples, nil))
	assert.False(t, c.beatOut, "the beat was reaped")
	c.close()
	select {
	case <-done: // the server's run fails: the client left without its end message
	case <-time.After(timeout + 20*time.Second):
		t.Fatalf("the server did not end:\n%s", log.String())
	}
}

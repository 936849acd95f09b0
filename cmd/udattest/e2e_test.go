package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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

func init() { portSeq.Store(uint32(30000 + os.Getpid()%10000)) }

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
	port := nextPort()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServer(ctx, &config{server: true, device: dev, port: port, timeout: 30 * time.Second}, log)
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
	t.Cleanup(func() {
		cancel()
		err := <-done
		t.Logf("server log:\n%s", log.String())
		assert.NoError(t, err, "the server reports no failed client run")
	})
	return port
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
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			status, out, errs := runArgs(t, append([]string{"-D", dev, "-h", addr, "-p", p, "-T", "P"}, args...)...)
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
		require.NoError(t, err)
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

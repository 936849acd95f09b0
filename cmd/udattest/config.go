package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// Test kinds, as dapltest's -T letters.
const (
	testQuick = "Q" // dtest-like end-to-end check
	testPerf  = "P" // performance, like dapltest -T P and perftest
	testTrans = "T" // transactions, like dapltest -T T
)

// Operations of the performance test.
type opKind uint8

const (
	opSend opKind = iota
	opWrite
	opRead
)

var opNames = [...]string{opSend: "send", opWrite: "write", opRead: "read"}

func (o opKind) String() string { return opNames[o] }

// dto is the DAT operation of o.
func (o opKind) dto() udat.DTOOp {
	switch o {
	case opSend:
		return udat.DTOSend
	case opWrite:
		return udat.DTORDMAWrite
	}
	return udat.DTORDMARead
}

// title is the name a table shows for the operation.
func (o opKind) title() string {
	switch o {
	case opSend:
		return "send/recv"
	case opWrite:
		return "RDMA write"
	}
	return "RDMA read"
}

// Defaults.
const (
	defaultPort    = 47811
	defaultTimeout = 30 * time.Second
	maxSegs        = 16
)

// config is everything the command line says.
type config struct {
	server   bool
	host     string
	device   string
	port     uint
	test     string
	timeout  time.Duration
	verbose  bool
	progress string // "auto", "on" or "off"
	jsonOnly bool
	cpuProf  string        // write a CPU profile here
	yield    time.Duration // -yield: how often the polling loops yield (0: never)
	causes   string        // -lat-causes: the directory of the latency tail's notes
	sessions int           // server: exit after this many client sessions (0: never)

	// performance
	op       opKind
	size     int
	iters    int
	depth    int
	signal   int
	batch    int
	block    bool
	lat      bool
	latIters int
	segs     int
	credits  string // -credits: "auto", "on" or "off" (credits.go)

	// sinkStall, for the tests: how long the server leaves the receive of a
	// send bandwidth run's first message unposted (sinkSends).
	sinkStall time.Duration

	// transactions
	eps int
}

// usageError is a command line error: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

const usageText = `udattest - uDAPL (DAT) end-to-end and performance test for Go

Usage:
  udattest -s [-D IA] [-p PORT] [-sessions N]       run the server
  udattest -h HOST [-T Q|P|T] [options]             run a test against a server

  Start the server on one node and the client on the other (or both on one
  node, over the loopback of its RDMA device). The client chooses the test
  and tells the server in the connection's private data.

Tests (-T):
  Q  quick check (default), like dtest: connect with private data, exchange
     RMR triplets, RDMA write burst, RDMA read, message ping-pong,
     disconnect; all data verified. Prints PASSED or FAILED.
  P  performance, like dapltest -T P and perftest: message rate, bandwidth
     and latency percentiles of one operation, as a table and one JSON line.
  T  transactions, like dapltest -T T: several EPs, one goroutine each,
     mixed RDMA write, RDMA read and send/recv, every byte validated.

Common options:
  -s                 server mode
  -h HOST            client mode: the server's IP address or name
  -c                 client mode (implied by -h)
  -D IA              IA to open: RDMA device (rxe0), its netdev (d0), or a
                     dat.conf provider name (default $UDAPL_DEVICE or rxe0)
  -p PORT            connection qualifier (port) of the server (default 47811)
  -timeout DUR       bound on each wait (a connection, a completion, a
                     message of the peer), not on the run: a run of any length
                     passes while it makes progress, a peer silent for DUR
                     fails it (default 30s)
  -progress on|off   live progress line on stderr (default: when stderr is a
                     terminal)
  -json              print only the JSON result line
  -v                 verbose: print the IA's attributes; the server logs every
                     connection request
  -cpuprofile FILE   write a Go CPU profile of the run to FILE
  -yield DUR         how often a busy-polling loop yields to the Go scheduler
                     (default 2ms; 0: never, as the instruction count runs it:
                     see docs/performance.md)
  -sessions N        server: exit after serving N client runs (default 0: never)
  -lat-causes DIR    on both ends of a polling -lat run: note what befell each
                     message (yields, thread switches, GC); the server leaves
                     its notes in DIR and the client prints the causes of the
                     slow samples (lat-causes: lines on stderr). The notes
                     slow every message: not for the plain numbers

Performance options (-T P):
  -o OP              send (SR), write (RW) or read (RR) (default write)
  -size BYTES        message size (default 64; k, K, m, M suffixes)
  -n N               iterations (default 10000)
  -q N               queue depth: operations in flight (default 64)
  -signal N          request a completion every N operations (default 1)
  -batch N           post N operations per call (EP.PostRequests), each time
                     N fit in the queue, like perftest's --post_list, and
                     poll up to N completions per call (EVD.DequeueEvents)
                     (default 1: one dat_ep_post_* call per operation)
  -wait poll|block   poll the EVDs or block in dat_evd_wait (default poll)
  -segs N            split each message into N IOV segments (default 1)
  -lat               latency test, like perftest's ib_*_lat: send and write
                     ping-pong (half round trip), read round trip
  -lat-n N           bandwidth test: also time N single operations for the
                     latency percentiles (default 1000, 0: none)
  -credits auto|on|off
                     send bandwidth test: post a send only when the server
                     has a receive posted for it, as the server tells by
                     RDMA-writing its count of receives posted (default auto:
                     on devices without receiver-not-ready retry, iWARP,
                     where a send that finds no receive ends the connection)

Transaction options (-T T):
  -eps N             endpoints, each driven by its own goroutine (default 4)
  -n N               rounds per endpoint (default 200)
  -size BYTES        transfer size (default 4096)

Exit status: 0 when the test passed, 1 when it failed or could not run,
2 on a usage error.

Examples:
  udattest -s &                                  # server on rxe0, port 47811
  udattest -h 192.0.2.1                          # quick check
  udattest -h 192.0.2.1 -T P -o write -size 4k -n 20000
  udattest -h 192.0.2.1 -T P -o send -lat -size 64
  udattest -h 192.0.2.1 -T T -eps 8 -n 500
`

// parseArgs turns the command line (without the program name) into a
// config.
func parseArgs(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("udattest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	client := false
	var opStr, waitStr, sizeStr string
	iters, size := -1, -1
	fs.BoolVar(&c.server, "s", false, "")
	fs.StringVar(&c.host, "h", "", "")
	fs.BoolVar(&client, "c", false, "")
	fs.StringVar(&c.device, "D", "", "")
	fs.UintVar(&c.port, "p", defaultPort, "")
	fs.StringVar(&c.test, "T", testQuick, "")
	fs.DurationVar(&c.timeout, "timeout", defaultTimeout, "")
	fs.BoolVar(&c.verbose, "v", false, "")
	fs.StringVar(&c.progress, "progress", "auto", "")
	fs.BoolVar(&c.jsonOnly, "json", false, "")
	fs.IntVar(&c.sessions, "sessions", 0, "")
	fs.StringVar(&c.cpuProf, "cpuprofile", "", "")
	fs.DurationVar(&c.yield, "yield", defaultYield, "")
	fs.StringVar(&c.causes, "lat-causes", "", "")
	fs.StringVar(&opStr, "o", "write", "")
	fs.StringVar(&sizeStr, "size", "", "")
	fs.IntVar(&iters, "n", -1, "")
	fs.IntVar(&c.depth, "q", 64, "")
	fs.IntVar(&c.signal, "signal", 1, "")
	fs.IntVar(&c.batch, "batch", 1, "")
	fs.StringVar(&waitStr, "wait", "poll", "")
	fs.IntVar(&c.segs, "segs", 1, "")
	fs.BoolVar(&c.lat, "lat", false, "")
	fs.IntVar(&c.latIters, "lat-n", 1000, "")
	fs.StringVar(&c.credits, "credits", "auto", "")
	fs.IntVar(&c.eps, "eps", 4, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	if c.device == "" {
		c.device = os.Getenv("UDAPL_DEVICE")
	}
	if c.device == "" {
		c.device = "rxe0"
	}
	switch {
	case c.server && (client || c.host != ""):
		return nil, usagef("-s (server) and -c/-h (client) exclude each other")
	case !c.server && c.host == "":
		if client {
			return nil, usagef("client mode needs the server's address: -h HOST")
		}
		return nil, usagef("choose server (-s) or client (-h HOST) mode")
	}
	if c.port == 0 || c.port > 0xffff {
		return nil, usagef("-p %d: the port must be 1..65535", c.port)
	}
	if c.yield < 0 {
		return nil, usagef("-yield must not be negative")
	}
	if c.timeout <= 0 {
		return nil, usagef("-timeout must be positive")
	}
	if c.sessions < 0 {
		return nil, usagef("-sessions must not be negative")
	}
	switch strings.ToLower(c.progress) {
	case "auto", "":
		c.progress = "auto"
	case "on", "yes", "true", "1":
		c.progress = "on"
	case "off", "no", "false", "0":
		c.progress = "off"
	default:
		return nil, usagef("-progress %q: want on or off", c.progress)
	}
	t, err := parseTest(c.test)
	if err != nil {
		return nil, err
	}
	c.test = t
	if c.op, err = parseOp(opStr); err != nil {
		return nil, err
	}
	switch c.credits = strings.ToLower(c.credits); c.credits {
	case "auto", "on", "off":
	default:
		return nil, usagef("-credits %q: want auto, on or off", c.credits)
	}
	switch strings.ToLower(waitStr) {
	case "poll", "p":
		c.block = false
	case "block", "b":
		c.block = true
	default:
		return nil, usagef("-wait %q: want poll or block", waitStr)
	}
	if sizeStr != "" {
		if size, err = parseSize(sizeStr); err != nil {
			return nil, err
		}
	}
	// Defaults that depend on the test.
	switch c.test {
	case testTrans:
		c.size = pick(size, 4096)
		c.iters = pick(iters, 200)
	default:
		c.size = pick(size, 64)
		c.iters = pick(iters, 10000)
	}
	if c.server {
		return c, nil
	}
	return c, c.check()
}

// check validates the client's test parameters.
func (c *config) check() error {
	if c.size < 1 || c.size > 1<<30 {
		return usagef("-size %d: must be 1 B..1 GiB", c.size)
	}
	if c.iters < 1 {
		return usagef("-n %d: must be at least 1", c.iters)
	}
	if c.depth < 1 || c.depth > 4096 {
		return usagef("-q %d: must be 1..4096", c.depth)
	}
	if c.signal < 1 || c.signal > c.depth {
		return usagef("-signal %d: must be 1..queue depth (%d)", c.signal, c.depth)
	}
	if c.batch < 1 || c.batch > c.depth {
		return usagef("-batch %d: must be 1..queue depth (%d)", c.batch, c.depth)
	}
	if c.segs < 1 || c.segs > maxSegs {
		return usagef("-segs %d: must be 1..%d", c.segs, maxSegs)
	}
	if c.segs > c.size {
		return usagef("-segs %d: more segments than bytes (-size %d)", c.segs, c.size)
	}
	if c.latIters < 0 {
		return usagef("-lat-n must not be negative")
	}
	if c.test == testTrans && (c.eps < 1 || c.eps > 256) {
		return usagef("-eps %d: must be 1..256", c.eps)
	}
	if c.test == testPerf && c.lat {
		if c.op == opWrite && c.block {
			return usagef("-lat -o write polls memory for the peer's write; it has no -wait block")
		}
		if c.op == opWrite && c.size < 4 {
			return usagef("-lat -o write needs -size 4 or more (the sequence word)")
		}
	}
	if c.credits == "on" && (c.test != testPerf || c.op != opSend || c.lat) {
		return usagef("-credits on: credits are for the send bandwidth test (-T P -o send without -lat)")
	}
	if c.test == testPerf && c.op == opSend && c.size > 1<<24 {
		return usagef("-o send: -size at most 16 MiB")
	}
	return nil
}

func pick(v, def int) int {
	if v < 0 {
		return def
	}
	return v
}

func parseTest(s string) (string, error) {
	switch strings.ToLower(s) {
	case "q", "quick":
		return testQuick, nil
	case "p", "perf", "performance":
		return testPerf, nil
	case "t", "trans", "transaction":
		return testTrans, nil
	}
	return "", usagef("-T %q: want Q (quick), P (performance) or T (transaction)", s)
}

func parseOp(s string) (opKind, error) {
	switch strings.ToLower(s) {
	case "send", "sr", "recv", "send/recv":
		return opSend, nil
	case "write", "rw", "rdma_write":
		return opWrite, nil
	case "read", "rr", "rdma_read":
		return opRead, nil
	}
	return 0, usagef("-o %q: want send, write or read", s)
}

// parseSize reads a byte count with an optional k/K (KiB) or m/M (MiB)
// suffix, as perftest takes them.
func parseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "i")
	mul := 1
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mul, t = 1<<10, t[:n-1]
		case 'm', 'M':
			mul, t = 1<<20, t[:n-1]
		case 'g', 'G':
			mul, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.Atoi(t)
	if err != nil || v < 0 || v > (1<<30)/mul {
		return 0, usagef("-size %q: not a size (e.g. 64, 4k, 1M)", s)
	}
	return v * mul, nil
}

// Package dtestport holds Go programs of our own, written against package
// udat's public API, that speak the wire protocols of the C test programs
// of dapl2-utils (OFA DAPL 2.x, test/dtest): dtest, dtestx, dtestsrq and
// dtestcm. Each file is one program's protocol, in both roles where the C
// program takes both; the interop tests in package udat run them against
// the C originals (/usr/bin/dtest*), which open the cma provider through
// testdata/datpeer/dat.conf.
//
// Nothing here is copied from the C sources: the protocols are described
// in each file's comment, as read from dapl 2.1.10's test/dtest.
package dtestport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/udapl-go/udapl/internal/datpeer"
)

// Provider is the dat.conf name of the cma provider on d0 (rxe0 in the VM)
// in testdata/datpeer/dat.conf: the C programs' -P.
const Provider = "ofa-v2-cma-roe-d0"

// RunLimit bounds one run of a C program (the C programs wait for ever);
// a test that runs longer ones may raise it before it starts them.
var RunLimit = 150 * time.Second

// Proc is one run of a C program, its stdout and stderr collected.
type Proc struct {
	Name string

	mu     sync.Mutex
	out    bytes.Buffer
	err    error
	done   chan struct{}
	cancel context.CancelFunc
	// failed ends when the program has exited with an error, or without
	// its pass mark, or a while after any exit: the Go side's waits give
	// up then instead of waiting for their own timeouts.
	failed context.Context
	fail   context.CancelCauseFunc
	pass   string
	// doneMark, when set, is the output after which the Go side has
	// verified all the program's work (WorkVerifiedAfter).
	doneMark string
}

// Start runs bin (a C program of dapl2-utils) with args, its libdat2
// pointed at testdata/datpeer/dat.conf (DAT_OVERRIDE), killed after
// RunLimit. pass is what its output holds when it passed.
func Start(bin, pass string, args ...string) (*Proc, error) {
	dir, err := datpeer.Dir()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), RunLimit)
	// The programs print to a pipe, fully buffered, and some flush
	// nothing before they exit: stdbuf makes stdout line-buffered, so that
	// the test sees how far a program got.
	argv := append([]string{bin}, args...)
	if sb, err := exec.LookPath("stdbuf"); err == nil {
		argv = append([]string{sb, "-oL"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "DAT_OVERRIDE="+filepath.Join(dir, "dat.conf"))
	cmd.WaitDelay = 5 * time.Second
	p := &Proc{Name: filepath.Base(bin) + " " + strings.Join(args, " "), done: make(chan struct{}), cancel: cancel, pass: pass}
	p.failed, p.fail = context.WithCancelCause(context.Background())
	cmd.Stdout = (*procOut)(p)
	cmd.Stderr = (*procOut)(p)
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		out := p.out.String()
		crashed := p.crashLocked() != nil
		p.mu.Unlock()
		close(p.done)
		switch {
		case err != nil && !crashed:
			p.fail(fmt.Errorf("%s: %w", p.Name, err))
		case !crashed && !strings.Contains(out, pass):
			p.fail(fmt.Errorf("%s exited without %q", p.Name, pass))
		default:
			time.AfterFunc(20*time.Second, func() { p.fail(fmt.Errorf("%s exited 20 s ago", p.Name)) })
		}
	}()
	return p, nil
}

type procOut Proc

func (o *procOut) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.Write(b)
}

// Failed is cancelled when the program failed (or exited a while ago).
func (p *Proc) Failed() context.Context { return p.failed }

// Output is what the program has printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Running reports whether the program has not exited yet.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Kill ends the program if it still runs and waits for it.
func (p *Proc) Kill() {
	p.cancel()
	<-p.done
	p.fail(errors.New("killed"))
}

// WaitOutput waits until the output matches re, the program exits, or d
// passes.
func (p *Proc) WaitOutput(re string, d time.Duration) error {
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(d)
	for {
		if rx.MatchString(p.Output()) {
			return nil
		}
		select {
		case <-p.done:
			if rx.MatchString(p.Output()) {
				return nil
			}
			return fmt.Errorf("%s exited (%v) before printing %q", p.Name, p.exitErr(), re)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s printed no %q within %v", p.Name, re, d)
		}
	}
}

func (p *Proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.crashLocked() != nil {
		return nil
	}
	return p.err
}

// closingMark is what the C programs print (with -v) just before
// dat_ia_close, once every other step has passed: a failed step ends them
// before it.
const closingMark = "Closing Interface Adaptor"

// CrashedAtExit returns how the program died if a crash killed it once its
// work was done: after its pass mark, or while it closed its IA (after
// closingMark); nil otherwise. OFA DAPL 2.1's cma provider crashes now and
// then in dat_ia_close or while the process exits (SIGSEGV: in CI, datpeer
// after "freed everything", dtestsrq after "Test Complete" and after
// "Closing Interface Adaptor"): the run itself passed, and the test reports
// the crash as C's rather than failing on it. WorkVerifiedAfter widens
// "done" for a program that prints nothing between its last step and
// its exit.
func (p *Proc) CrashedAtExit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crashLocked()
}

// WorkVerifiedAfter tells p that the Go side has checked every step the
// program takes after printing mark (dtest's server prints nothing from
// its last step, the ping-pong, through its teardown): a crash after mark
// is then one at exit (CrashedAtExit). Call it before Finish.
func (p *Proc) WorkVerifiedAfter(mark string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.doneMark = mark
}

// crashLocked is CrashedAtExit with p.mu held.
func (p *Proc) crashLocked() error {
	if p.err == nil || !crashSignal(p.err) {
		return nil
	}
	out := p.out.String()
	for _, mark := range []string{p.pass, closingMark, p.doneMark} {
		if mark != "" && strings.Contains(out, mark) {
			return p.err
		}
	}
	return nil
}

// crashSignal reports whether err is an exit by a crash's signal: not by
// Kill's, nor a nonzero status.
func crashSignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	switch ws.Signal() {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT:
		return true
	}
	return false
}

// Finish waits up to d for the program to exit, and checks that it exited
// 0 with its pass mark, or crashed once its work was done (CrashedAtExit),
// and printed no "FAILED" line.
func (p *Proc) Finish(d time.Duration) error {
	select {
	case <-p.done:
	case <-time.After(d):
		return fmt.Errorf("%s still runs %v after the Go side finished", p.Name, d)
	}
	if err := p.exitErr(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	out := p.Output()
	if strings.Contains(out, "FAILED") {
		return fmt.Errorf("%s printed FAILED", p.Name)
	}
	if !strings.Contains(out, p.pass) && p.CrashedAtExit() == nil {
		return fmt.Errorf("%s exited 0 without %q", p.Name, p.pass)
	}
	return nil
}

// The TCP exchange of dtest, dtestx and dtestcm: before any DAT
// connection the server listens on TCP port ConnPort; the client connects
// and reads ConnMsgSize bytes, the text "%04hx:%08x:%08x:%08x:%s" (the
// server's LID, QPN and scope id, all 0 on rdma_cm, its IPv4 address as
// the in_addr's s_addr printed as a host integer, and its provider name),
// NUL-padded. The client takes the address from it, and the provider name
// too (dtest and dtestx overwrite their -P with it). dtestx's client then
// sends its own such message back.
const (
	ConnPort    = 15828
	ConnMsgSize = 128
)

// ConnMsg is one such message.
type ConnMsg struct {
	Addr     netip.Addr
	Provider string
}

// Encode is m as the C programs write it.
func (m ConnMsg) Encode() []byte {
	a := m.Addr.As4()
	s := fmt.Sprintf("%04x:%08x:%08x:%08x:%s", 0, 0, 0, binary.LittleEndian.Uint32(a[:]), m.Provider)
	b := make([]byte, ConnMsgSize)
	copy(b, s)
	return b
}

// ParseConnMsg reads a message as the C programs' sscanf does, and
// requires an IPv4 address (rdma_cm: no LID and QPN).
func ParseConnMsg(b []byte) (ConnMsg, error) {
	s := datpeer.CString(b)
	f := strings.SplitN(s, ":", 5)
	if len(f) != 5 {
		return ConnMsg{}, fmt.Errorf("connection message %q: want 5 fields", s)
	}
	var v [4]uint64
	for i := range 4 {
		n, err := strconv.ParseUint(f[i], 16, 32)
		if err != nil {
			return ConnMsg{}, fmt.Errorf("connection message %q field %d: %w", s, i, err)
		}
		v[i] = n
	}
	if v[0] != 0 || v[1] != 0 || v[3] == 0 {
		return ConnMsg{}, fmt.Errorf("connection message %q: want no LID and QPN and an IPv4 address", s)
	}
	var a [4]byte
	binary.LittleEndian.PutUint32(a[:], uint32(v[3]))
	prov, _, _ := strings.Cut(f[4], " ")
	return ConnMsg{Addr: netip.AddrFrom4(a), Provider: prov}, nil
}

// Listener is the server's side of the TCP exchange.
type Listener struct{ l net.Listener }

// Listen listens on ConnPort.
func Listen() (*Listener, error) {
	l, err := net.Listen("tcp4", ":"+strconv.Itoa(ConnPort))
	if err != nil {
		return nil, fmt.Errorf("listen on TCP port %d: %w", ConnPort, err)
	}
	return &Listener{l}, nil
}

// Close closes the listener.
func (l *Listener) Close() error { return l.l.Close() }

// Exchange accepts one client, sends it mine and, with reply, reads the
// client's message back (dtestx). It gives up when ctx ends.
func (l *Listener) Exchange(ctx context.Context, mine ConnMsg, reply bool) (ConnMsg, error) {
	stop := context.AfterFunc(ctx, func() { l.l.Close() })
	defer stop()
	c, err := l.l.Accept()
	if err != nil {
		return ConnMsg{}, fmt.Errorf("accept the client's TCP connection: %w (%v)", err, context.Cause(ctx))
	}
	defer c.Close()
	l.l.Close() // as C: one client
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(mine.Encode()); err != nil {
		return ConnMsg{}, fmt.Errorf("send the server's connection message: %w", err)
	}
	if !reply {
		return ConnMsg{}, nil
	}
	b := make([]byte, ConnMsgSize)
	if _, err := io.ReadFull(c, b); err != nil {
		return ConnMsg{}, fmt.Errorf("read the client's connection message: %w", err)
	}
	return ParseConnMsg(b)
}

// Dial is the client's side: it connects to host's ConnPort (retrying
// until ctx ends: the C server listens only once its IA is open), reads
// the server's message and, with mine, sends it back (dtestx).
func Dial(ctx context.Context, host netip.Addr, mine *ConnMsg) (ConnMsg, error) {
	addr := netip.AddrPortFrom(host, ConnPort).String()
	var c net.Conn
	for {
		var err error
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp4", addr)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return ConnMsg{}, fmt.Errorf("connect to %s: %w (%v)", addr, err, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	b := make([]byte, ConnMsgSize)
	if _, err := io.ReadFull(c, b); err != nil {
		return ConnMsg{}, fmt.Errorf("read the server's connection message: %w", err)
	}
	m, err := ParseConnMsg(b)
	if err != nil {
		return m, err
	}
	if mine != nil {
		if _, err := c.Write(mine.Encode()); err != nil {
			return m, fmt.Errorf("send the client's connection message: %w", err)
		}
	}
	return m, nil
}

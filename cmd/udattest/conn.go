package main

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// layout describes the one registered buffer of a connection:
//
//	[control send slot][receive slots: nRecv x slotSize][data region]
//
// The data region starts on a page boundary.
type layout struct {
	nRecv    int
	slotSize int
	dataLen  int
	// sendDepth is the number of requests (sends, RDMA) that may be in
	// flight, control messages included.
	sendDepth int
	segs      int
}

func (l layout) recvOff() int { return ctrlSize }

func (l layout) dataOff() int {
	return alignUp(ctrlSize+l.nRecv*l.slotSize, 4096)
}

func (l layout) total() int { return l.dataOff() + max(l.dataLen, 64) }

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// cookieCtrl marks the completion of a control message send.
const cookieCtrl = 1 << 62

// conn is one end of a connection: the EP, its EVDs and its buffer.
type conn struct {
	ia                   *udat.IA
	ep                   *udat.EP
	reqEVD, rcvEVD, cEVD *udat.EVD
	lmr                  *udat.LMR
	buf                  []byte
	lay                  layout
	block                bool
	timeout              time.Duration
	peer                 udat.RMRTriplet // the peer's data region
	seq                  uint32
	// peerTimeout is the peer's -timeout, from its hello (0: an older
	// udattest that does not say, and takes no msgProgress).
	peerTimeout time.Duration
	// hb, when set, asks the loops that keep the peer idle to send it a
	// msgProgress now and then; beatOut is set while one is in flight.
	hb      *heartbeat
	beatOut bool
	// inboxOff and inboxLen are the part of the data region the peer may
	// reach (hello advertises it); inboxLen 0 means all of it.
	inboxOff, inboxLen int

	yield yielder // of the polling loops
	// ev receives the events the loops take, one 280-byte copy each; evs
	// the bursts of the batch loop (reqCookies).
	ev  udat.Event
	evs []udat.Event

	iov []udat.LMRTriplet // scratch I/O vector
	one [1]udat.LMRTriplet
	// readSegs is how many segments an RDMA read of the EP may take: 1 on
	// soft-iWARP (max_sge_rd), where the quick and transaction tests read
	// into one segment instead of two.
	readSegs int

	// credits, the client's of a send bandwidth run that uses them
	// (credits.go); without, a count no compare exceeds.
	credits sendCredits
}

// newConn creates an EP with its own EVDs and buffer in pz.
func newConn(ia *udat.IA, pz *udat.PZ, lay layout, timeout time.Duration) (*conn, error) {
	c := &conn{ia: ia, lay: lay, timeout: timeout, credits: noCredits()}
	var err error
	fail := func(what string, err error) (*conn, error) {
		c.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	reqLen := lay.sendDepth + 8
	if c.reqEVD, err = ia.CreateEVD(reqLen, udat.EVDDTOFlag); err != nil {
		return fail("create the request EVD", err)
	}
	if c.rcvEVD, err = ia.CreateEVD(lay.nRecv+8, udat.EVDDTOFlag); err != nil {
		return fail("create the receive EVD", err)
	}
	if c.cEVD, err = ia.CreateEVD(8, udat.EVDConnectionFlag); err != nil {
		return fail("create the connection EVD", err)
	}
	attr := udat.DefaultEPAttr()
	attr.MaxRequestDTOs = lay.sendDepth
	attr.MaxRecvDTOs = lay.nRecv
	segs := max(lay.segs, 2)
	attr.MaxRequestIOV, attr.MaxRDMAWriteIOV, attr.MaxRDMAReadIOV, attr.MaxRecvIOV = segs, segs, segs, segs
	if ia, _, err := ia.Query(); err == nil {
		// As many RDMA reads in flight as the device allows, like perftest.
		attr.MaxRDMAReadOut = clamp(ia.MaxRDMAReadOut, 1, 128)
		attr.MaxRDMAReadIn = clamp(ia.MaxRDMAReadIn, 1, 128)
		// An RDMA read may take fewer segments than a send: soft-iWARP
		// (siw0) takes 1 (max_sge_rd), and asking for more fails
		// dat_ep_create with DAT_INVALID_ARG6.
		if r := ia.MaxIOVSegmentsPerRDMARead; r > 0 && r < attr.MaxRDMAReadIOV {
			attr.MaxRDMAReadIOV = r
		}
		if ia.MaxIOVSegmentsPerDTO > 0 && segs > ia.MaxIOVSegmentsPerDTO {
			return fail("create the EP", fmt.Errorf("%d segments: the device takes at most %d", segs, ia.MaxIOVSegmentsPerDTO))
		}
	}
	if c.ep, err = ia.CreateEP(pz, c.rcvEVD, c.reqEVD, c.cEVD, &attr); err != nil {
		return fail("create the EP", err)
	}
	c.readSegs = attr.MaxRDMAReadIOV
	if c.lmr, err = ia.AllocLMR(pz, lay.total(), udat.MemPrivAll); err != nil {
		return fail(fmt.Sprintf("register %d bytes of memory", lay.total()), err)
	}
	c.buf = c.lmr.Bytes()
	c.iov = make([]udat.LMRTriplet, 0, maxSegs)
	return c, nil
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

// close frees everything; it is safe on a partly built conn.
func (c *conn) close() {
	if c.ep != nil {
		c.ep.Free()
	}
	if c.lmr != nil {
		c.lmr.Free()
	}
	for _, e := range []*udat.EVD{c.reqEVD, c.rcvEVD, c.cEVD} {
		if e != nil {
			e.Free()
		}
	}
}

// data returns the data region.
func (c *conn) data() []byte {
	o := c.lay.dataOff()
	return c.buf[o : o+c.lay.dataLen]
}

// dataRMR is the triplet the peer uses to reach the data region (or its
// inbox part).
func (c *conn) dataRMR() udat.RMRTriplet {
	if c.inboxLen > 0 {
		return c.lmr.RMRTriplet(c.lay.dataOff()+c.inboxOff, c.inboxLen)
	}
	return c.lmr.RMRTriplet(c.lay.dataOff(), c.lay.dataLen)
}

// segments builds the I/O vector for n bytes at offset off of the data
// region, split into segs nearly equal segments.
func (c *conn) segments(off, n, segs int) []udat.LMRTriplet {
	iov := c.iov[:0]
	base := c.lay.dataOff() + off
	for i := 0; i < segs; i++ {
		lo, hi := n*i/segs, n*(i+1)/segs
		iov = append(iov, c.lmr.Triplet(base+lo, hi-lo))
	}
	return iov
}

func (c *conn) recvSlot(i int) []byte {
	o := c.lay.recvOff() + i*c.lay.slotSize
	return c.buf[o : o+c.lay.slotSize]
}

// postRecv posts receive slot i (cookie i).
func (c *conn) postRecv(i int) error {
	c.one[0] = c.lmr.Triplet(c.lay.recvOff()+i*c.lay.slotSize, c.lay.slotSize)
	if err := c.ep.PostRecv(c.one[:], uint64(i), udat.CompletionDefault); err != nil {
		return fmt.Errorf("post a receive: %w", err)
	}
	return nil
}

func (c *conn) postAllRecvs() error {
	for i := 0; i < c.lay.nRecv; i++ {
		if err := c.postRecv(i); err != nil {
			return err
		}
	}
	return nil
}

// errTimeout is the error of one wait that ran past -timeout.
var errTimeout = errors.New("timed out waiting for the peer")

// timedOut says which bound a wait ran past.
func (c *conn) timedOut() error {
	return fmt.Errorf("%w: nothing happened for %v (-timeout)", errTimeout, c.timeout)
}

// spinDeadline bounds a busy-polling loop by the conn's timeout while
// reading the clock only once every mask+1 spins (a clock read is a system
// call in the VM): the first read starts the timeout.
type spinDeadline struct{ at time.Time }

// expired reports, at spin i (counted from 1), whether timeout has passed
// since the loop's first clock read; mask+1 is a power of two.
func (d *spinDeadline) expired(i, mask int, timeout time.Duration) bool {
	return i&mask == 0 && d.passed(timeout)
}

// passed reads the clock for expired.
func (d *spinDeadline) passed(timeout time.Duration) bool {
	now := time.Now()
	if d.at.IsZero() {
		d.at = now.Add(timeout)
		return false
	}
	return now.After(d.at)
}

// yielder makes a busy-polling goroutine yield to the scheduler every
// yieldInterval. A goroutine that runs for 10 ms without yielding is due
// for preemption, and when that finds it inside a cgo call (as a poller
// mostly is, posting and polling) the runtime takes its P away and then
// wakes its monitor thread every 20 us for the next millisecond or more:
// thousands of wake-ups a second, felt as lost message rate on the two CPUs
// of the test VM. A yield wakes an idle thread once, so it is worth it only
// every few milliseconds: the clock is read every 64 polls. -yield sets
// the interval (yieldInterval); 0 turns the yields off, as the instruction
// count does: under valgrind they come dozens of times more often per
// operation than at full speed, and the scheduler work they wake would be
// counted as the loop's.
type yielder struct {
	polls uint32
	last  time.Time
}

// defaultYield is -yield's default.
const defaultYield = 2 * time.Millisecond

// yieldInterval is how often the polling loops yield: -yield, set once
// before any loop runs.
var yieldInterval = defaultYield

// poll counts one poll and yields when yieldInterval has passed.
func (y *yielder) poll() {
	if y.polls++; y.polls%64 != 0 {
		return
	}
	y.due()
}

// wait counts one blocking wait and yields when yieldInterval has passed.
// It reads the clock every 8 waits, not 64: a wait that blocks lasts
// 0.1-0.5 ms, and its goroutine, blocked in a cgo call, is never
// rescheduled otherwise, so 64 of them run past the 10 ms after which the
// runtime preempts it and its monitor keeps waking (2-vCPU VM, blocking
// 4 KiB send ping-pong, per round trip: 1.07 monitor naps with a check every
// 64 waits, 0.20 with one every wait, 0.17 with one every 8, each measured
// in its own version of udattest). A wait that finds its event queued
// is short, and reading the clock at every one cost about 130 instructions
// per 64 B RDMA write (callgrind, deterministic VM).
func (y *yielder) wait() {
	if y.polls++; y.polls%8 != 0 {
		return
	}
	y.due()
}

// due yields if yieldInterval has passed; with -yield 0, never.
func (y *yielder) due() {
	if yieldInterval == 0 {
		return
	}
	if now := time.Now(); now.Sub(y.last) >= yieldInterval {
		runtime.Gosched()
		y.last = now
	}
}

// next takes the next event of evd into *ev, polling (dat_evd_dequeue) or
// blocking (dat_evd_wait) as the conn is set up to, for at most the conn's
// timeout: -timeout bounds each wait, not the run.
func (c *conn) next(evd *udat.EVD, ev *udat.Event) error {
	if c.block {
		return c.wait(evd, ev)
	}
	var deadline spinDeadline
	for i := 1; ; i++ {
		c.yield.poll()
		err := evd.DequeueInto(ev)
		if err != udat.ErrQueueEmpty { // DequeueInto returns the sentinel itself
			return err
		}
		if deadline.expired(i, 0xfff, c.timeout) {
			return c.timedOut()
		}
	}
}

// wait takes the next event of evd into *ev with a blocking wait
// (dat_evd_wait) of at most the conn's timeout.
func (c *conn) wait(evd *udat.EVD, ev *udat.Event) error {
	// A blocking wait that finds its event queued does not block, and a run
	// of such waits is busy polling to the scheduler: it yields like the
	// polling loop (measured: without it, a futex wake-up pair and a sysmon
	// nanosleep per completion).
	c.yield.wait()
	_, err := evd.WaitInto(usec(c.timeout), 1, ev)
	if err != nil && errors.Is(err, udat.ErrTimeoutExpired) {
		return c.timedOut()
	}
	return err
}

// nextDTO waits for a DTO completion on evd and checks that it succeeded.
func (c *conn) nextDTO(evd *udat.EVD, what string) (udat.DTOCompletionData, error) {
	ev := &c.ev
	var err error = udat.ErrQueueEmpty
	if !c.block {
		// Most polls find their completion queued: take it here.
		c.yield.poll()
		err = evd.DequeueInto(ev)
	}
	if err == udat.ErrQueueEmpty {
		err = c.next(evd, ev)
	}
	return c.checkDTO(ev, err, what)
}

// checkDTO checks that the event taken into ev, with err the error of the
// call that took it, is a successful DTO completion.
func (c *conn) checkDTO(ev *udat.Event, err error, what string) (udat.DTOCompletionData, error) {
	if err != nil {
		return udat.DTOCompletionData{}, fmt.Errorf("%s: %w", what, err)
	}
	if ev.Number != udat.EventDTOCompletion {
		return udat.DTOCompletionData{}, fmt.Errorf("%s: unexpected event %v", what, ev.Number)
	}
	if ev.DTO.Status != udat.DTOSuccess {
		return ev.DTO, fmt.Errorf("%s: %v completed with %w", what, ev.DTO.Op, dtoStatusError{ev.DTO.Status})
	}
	return ev.DTO, nil
}

// dtoStatusError is the error of a DTO that completed with status.
type dtoStatusError struct{ status udat.DTOStatus }

func (e dtoStatusError) Error() string { return e.status.String() }

// flushed reports whether err is that of a DTO that completed flushed.
func flushed(err error) bool {
	var se dtoStatusError
	return errors.As(err, &se) && se.status == udat.DTOErrFlushed
}

func usec(d time.Duration) udat.Timeout {
	us := d.Microseconds()
	if us >= math.MaxUint32 {
		return udat.TimeoutInfinite - 1
	}
	return udat.Timeout(us)
}

// sendCtrl sends a control message and waits for its send to complete.
func (c *conn) sendCtrl(m *ctrl) error {
	if err := c.reapBeat(); err != nil {
		return err
	}
	c.seq++
	m.seq = c.seq
	m.marshal(c.buf[:ctrlSize])
	c.one[0] = c.lmr.Triplet(0, ctrlSize)
	if err := c.ep.PostSend(c.one[:], cookieCtrl, udat.CompletionDefault); err != nil {
		return fmt.Errorf("send a control message: %w", err)
	}
	d, err := c.nextDTO(c.reqEVD, "send a control message")
	if err != nil {
		return err
	}
	if d.Cookie != cookieCtrl {
		return fmt.Errorf("send a control message: completion of cookie %#x instead", d.Cookie)
	}
	return nil
}

// recvCtrl waits for a control message and reposts its receive slot.
func (c *conn) recvCtrl() (ctrl, error) {
	d, err := c.nextDTO(c.rcvEVD, "receive a control message")
	if err != nil {
		return ctrl{}, err
	}
	slot := int(d.Cookie)
	if slot >= c.lay.nRecv {
		return ctrl{}, fmt.Errorf("receive a control message: unknown cookie %d", d.Cookie)
	}
	m, perr := parseCtrl(c.recvSlot(slot)[:d.TransferredLength])
	if err := c.postRecv(slot); err != nil {
		return m, err
	}
	return m, perr
}

// call sends a request and returns the peer's msgResult answer.
func (c *conn) call(m *ctrl) (ctrl, error) {
	if err := c.sendCtrl(m); err != nil {
		return ctrl{}, err
	}
	r, err := c.recvCtrl()
	if err != nil {
		return r, err
	}
	if r.typ != msgResult {
		return r, fmt.Errorf("expected a result message, got type %d", r.typ)
	}
	return r, nil
}

// hello sends this side's data region triplet and -timeout and receives
// the peer's: the active side (the client) sends first, the passive side
// answers. A passive side must not send first on iWARP: soft-iWARP's
// active side fails a connection whose first data arrives before it has
// taken the MPA reply (docs/migrating-from-c.md, "On iWARP").
func (c *conn) hello(active bool) error {
	if active {
		if err := c.sendHello(); err != nil {
			return err
		}
	}
	m, err := c.recvCtrl()
	if err != nil {
		return err
	}
	if m.typ != msgHello {
		return fmt.Errorf("expected the peer's hello, got message type %d", m.typ)
	}
	c.peer = m.rmr
	c.peerTimeout = time.Duration(min(m.a, uint64(math.MaxInt64/time.Millisecond))) * time.Millisecond
	if active {
		return nil
	}
	return c.sendHello()
}

// sendHello sends this side's hello: its data region triplet and -timeout.
func (c *conn) sendHello() error {
	ms := uint64((c.timeout + time.Millisecond - 1) / time.Millisecond) // 0 would mean "not said"
	return c.sendCtrl(&ctrl{typ: msgHello, rmr: c.dataRMR(), a: ms})
}

// waitConnEvent waits for the next event on the connection EVD.
func (c *conn) waitConnEvent() (udat.Event, error) {
	ev, _, err := c.cEVD.Wait(usec(c.timeout), 1)
	if errors.Is(err, udat.ErrTimeoutExpired) {
		return ev, c.timedOut()
	}
	return ev, err
}

// dial connects to the server at addr:port with the request as private data
// and checks the server's reply.
func (c *conn) dial(addr netip.Addr, port uint, req *request) error {
	err := c.ep.Connect(addr, udat.ConnQual(port), usec(c.timeout), req.marshal(), udat.QoSBestEffort, udat.ConnectDefault)
	if err != nil {
		return connectError(addr, port, err, 0)
	}
	ev, err := c.waitConnEvent()
	if err != nil {
		return connectError(addr, port, err, 0)
	}
	if ev.Number != udat.EventConnectionEstablished {
		return connectError(addr, port, nil, ev.Number)
	}
	return checkReply(ev.Conn.PrivateData, req.nonce)
}

// disconnect ends the connection gracefully and waits until it is down.
func (c *conn) disconnect() error {
	if err := c.ep.Disconnect(udat.CloseGracefulFlag); err != nil {
		return fmt.Errorf("disconnect: %w", err)
	}
	return c.waitDisconnected()
}

// waitDisconnected waits for the connection's end.
func (c *conn) waitDisconnected() error {
	for {
		ev, err := c.waitConnEvent()
		if err != nil {
			return fmt.Errorf("wait for the disconnect: %w", err)
		}
		switch ev.Number {
		case udat.EventConnectionDisconnected:
			return nil
		case udat.EventConnectionBroken:
			return fmt.Errorf("the connection broke")
		}
	}
}

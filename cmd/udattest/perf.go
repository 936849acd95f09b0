package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/udapl-go/udapl/udat"
)

// latSignal is how often the ping-pong tests ask for a send completion.
const latSignal = 8

// clientLayout sizes the client's buffer for a performance run.
func clientLayout(cfg *config) layout {
	lay := layout{nRecv: 8, slotSize: ctrlSize, dataLen: cfg.size, sendDepth: cfg.depth + 4, segs: cfg.segs}
	if cfg.lat {
		lay.sendDepth = 2*latSignal + 8
		switch cfg.op {
		case opSend:
			lay.nRecv, lay.slotSize = 16, max(cfg.size, ctrlSize)
		case opWrite:
			lay.dataLen = 2 * cfg.size
		}
	}
	return lay
}

// perfTitle describes a performance run in one line; credits says whether
// it ran with credits (credits.go).
func perfTitle(cfg *config, credits bool) string {
	wait := "polling"
	if cfg.block {
		wait = "blocking waits"
	}
	seg := "1 segment"
	if cfg.segs > 1 {
		seg = fmt.Sprintf("%d segments", cfg.segs)
	}
	if cfg.lat {
		how := "ping-pong, half round trip"
		if cfg.op == opRead {
			how = "round trip"
		}
		return fmt.Sprintf("%s latency (%s), %s, %s, %s", cfg.op.title(), how, wait, seg, "udattest")
	}
	post := "one post per operation"
	if cfg.batch > 1 {
		post = fmt.Sprintf("posts of %d", cfg.batch)
	}
	if credits {
		post += ", credits"
	}
	return fmt.Sprintf("%s bandwidth, queue depth %d, completion every %d, %s, %s, %s, %s",
		cfg.op.title(), cfg.depth, cfg.signal, post, wait, seg, "udattest")
}

// checkReadSegments refuses, before connecting, an RDMA read of more
// segments than the device reads into (max_sge_rd: 1 on soft-iWARP), which
// udat would refuse at the first post.
func checkReadSegments(cfg *config, ia *udat.IA) error {
	if cfg.op != opRead || cfg.segs == 1 {
		return nil
	}
	a, _, err := ia.Query()
	if err != nil {
		return err
	}
	if m := a.MaxIOVSegmentsPerRDMARead; m > 0 && cfg.segs > m {
		return fmt.Errorf("-segs %d: the device reads into at most %d segment(s) per RDMA read (max_sge_rd)", cfg.segs, m)
	}
	return nil
}

// runPerf is the client of the performance test.
func runPerf(cfg *config, out io.Writer, showProgress bool) (*result, error) {
	res := &result{Tool: "udattest", Test: "perf", Mode: "bw", Op: cfg.op.String(), Size: cfg.size,
		Iters: cfg.iters, Depth: cfg.depth, Signal: cfg.signal, Batch: cfg.batch, Wait: waitName(cfg.block), Segs: cfg.segs}
	if cfg.lat {
		res.Mode, res.Depth, res.Signal, res.Batch = "lat", 1, 0, 0
	}
	cl, err := openClient(cfg)
	if err != nil {
		return res, err
	}
	defer cl.close()
	if err := checkReadSegments(cfg, cl.ia); err != nil {
		return res, err
	}
	credits := useCredits(cfg, cl.ia)
	lay := clientLayout(cfg)
	if credits {
		lay = withCreditWord(lay, cfg.size)
	}
	c, err := newConn(cl.ia, cl.pz, lay, cfg.timeout)
	if err != nil {
		return res, err
	}
	defer c.close()
	c.block = cfg.block
	if cfg.lat && cfg.op == opWrite {
		c.inboxOff, c.inboxLen = cfg.size, cfg.size
	}
	if credits {
		c.enableCredits(cfg.size)
		res.Credits = true
	}
	if err := c.postAllRecvs(); err != nil {
		return res, err
	}
	req := cl.request('P', cfg)
	req.credits = credits
	if cfg.lat {
		req.latIters = 0
	}
	if err := c.dial(cl.addr, cfg.port, &req); err != nil {
		return res, err
	}
	if err := c.hello(true); err != nil {
		return res, err
	}

	if peerIdle(cfg) {
		c.startBeats()
	}
	p := startProgress(showProgress, progressOut, fmt.Sprintf("%s %d B", cfg.op.title(), cfg.size), int64(cfg.iters), cfg.size)
	var elapsed time.Duration
	var samples []time.Duration
	if cfg.lat {
		samples = make([]time.Duration, cfg.iters)
		start := time.Now()
		switch cfg.op {
		case opSend:
			err = sendPingPong(c, cfg.iters, cfg.size, cfg.segs, true, samples, p)
		case opWrite:
			err = writePingPong(c, cfg.iters, cfg.size, cfg.segs, true, samples, p)
		case opRead:
			err = c.opLatency(opRead, cfg.size, cfg.segs, samples, p)
		}
		elapsed = time.Since(start)
	} else {
		elapsed, err = c.throughput(cfg.op, cfg.iters, cfg.size, cfg.depth, cfg.signal, cfg.batch, cfg.segs, p)
		c.credits.sent = cfg.iters
		if err == nil && cfg.latIters > 0 {
			samples = make([]time.Duration, cfg.latIters)
			err = c.opLatency(cfg.op, cfg.size, cfg.segs, samples, nil)
			c.credits.sent += cfg.latIters
		}
		if err == nil && credits {
			// The message that ends the test is a send too.
			err = c.awaitCredit(c.credits.sent + 1)
		}
	}
	p.finish()
	c.stopBeats()
	if err != nil {
		c.ep.Disconnect(udat.CloseAbruptFlag)
		return res, err
	}
	if err := c.finish(); err != nil {
		return res, err
	}
	if lc := clientCauses; lc != nil {
		clientCauses = nil
		lc.report(os.Stderr, samples, lc.takePeer(cfg.iters))
	}
	res.setRate(int64(cfg.iters), cfg.size, elapsed)
	res.setLatency(summarize(samples))
	res.Result = "PASSED"
	return res, nil
}

// finish tells the server the test is over and disconnects.
func (c *conn) finish() error {
	r, err := c.call(&ctrl{typ: msgDone})
	if err != nil {
		return fmt.Errorf("end the test: %w", err)
	}
	if r.a != 1 {
		return fmt.Errorf("the server reported a failure")
	}
	return c.disconnect()
}

func waitName(block bool) string {
	if block {
		return "block"
	}
	return "poll"
}

// postRequests posts reqs, operations of kind op: with the DAT call when
// there is one, as one list otherwise.
func (c *conn) postRequests(op opKind, reqs []udat.Request) error {
	if len(reqs) == 1 {
		r := &reqs[0]
		return c.post(op, r.LocalIOV, r.Cookie, r.Remote, r.Flags)
	}
	_, err := c.ep.PostRequests(reqs)
	return err
}

// post posts one operation of kind op.
func (c *conn) post(op opKind, iov []udat.LMRTriplet, cookie uint64, remote udat.RMRTriplet, flags udat.CompletionFlags) error {
	switch op {
	case opSend:
		return c.ep.PostSend(iov, cookie, flags)
	case opWrite:
		return c.ep.PostRDMAWrite(iov, cookie, remote, flags)
	}
	return c.ep.PostRDMARead(iov, cookie, remote, flags)
}

// throughput runs n operations of size bytes with up to depth in flight,
// asking for a completion every signal operations (and for the last), the
// way dapltest -T P and perftest's *_bw tests do. A completion's cookie is
// the number of operations it covers. With batch > 1 it posts batch
// operations per EP.PostRequests call whenever that many fit in the queue
// (and the rest at the end), as perftest's --post_list does. With credits
// (credits.go) it posts no send beyond the server's receives, and asks for
// the completion of the last one the credits let go, as no later send may
// follow to bring it.
func (c *conn) throughput(op opKind, n, size, depth, signal, batch, segs int, p *progress) (time.Duration, error) {
	iov := c.segments(0, size, segs)
	remote := c.peer
	remote.SegmentLength = uint32(size)
	flags := newSignaller(signal, n)
	if batch > 1 {
		reqs := make([]udat.Request, batch) // the same but for cookie and flags
		c.evs = make([]udat.Event, batch)
		for i := range reqs {
			reqs[i] = udat.Request{Op: op.dto(), LocalIOV: iov, Remote: remote}
		}
		start := time.Now()
		err := c.throughputBatch(op, n, depth, &flags, reqs, p)
		return time.Since(start), err
	}
	ep := c.ep
	cr := &c.credits
	posted, completed := 0, 0
	start := time.Now()
	for completed < n {
		limit := min(n, completed+depth)
		if limit > cr.known { // credits, and maybe too few
			want := limit
			var err error
			if limit, err = c.creditLimit(want, posted); err != nil {
				return 0, fmt.Errorf("after %d of %d operations: %w", posted, n, err)
			}
			if limit < want {
				flags.stopAt(limit)
			}
		}
		// One at a time: the DAT call, as dapltest makes it (in the loop,
		// not through post: one call per operation).
		for posted < limit {
			posted++
			f := flags.next(posted)
			var err error
			switch op {
			case opWrite:
				err = ep.PostRDMAWrite(iov, uint64(posted), remote, f)
			case opRead:
				err = ep.PostRDMARead(iov, uint64(posted), remote, f)
			default:
				err = ep.PostSend(iov, uint64(posted), f)
			}
			if err != nil {
				return 0, fmt.Errorf("post %s %d of %d: %w", op.title(), posted, n, err)
			}
		}
		cookie, err := c.reqCookie("wait for a completion")
		if err != nil {
			return 0, fmt.Errorf("after %d of %d operations: %w", completed, n, err)
		}
		completed = int(cookie)
		p.set(int64(completed))
		if c.beatDue() {
			if err := c.sendBeat(completed); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start), nil
}

// throughputBatch is throughput's loop for posts of len(reqs): it posts
// them with one EP.PostRequests whenever that many fit in the queue (the
// rest at the end) and takes the completions in bursts (reqCookies). reqs
// are made but for their cookies and flags. Every request is signalled
// when flags asks for every one, and then only the cookies are written:
// the loop is meant to cost next to nothing beside the library's calls, as
// perftest's does.
func (c *conn) throughputBatch(op opKind, n, depth int, flags *signaller, reqs []udat.Request, p *progress) error {
	allSignalled := flags.every == 1
	cr := &c.credits
	posted, completed := 0, 0
	for completed < n {
		for k := min(len(reqs), n-posted); k > 0 && posted+k-completed <= depth; k = min(len(reqs), n-posted) {
			if posted+k > cr.known { // credits, and maybe too few: a shorter post
				lim, err := c.creditLimit(posted+k, posted)
				if err != nil {
					return fmt.Errorf("after %d of %d operations: %w", posted, n, err)
				}
				if lim < posted+k {
					k = lim - posted
					flags.stopAt(lim)
				}
			}
			batch := reqs[:k]
			if allSignalled {
				for i := range batch {
					batch[i].Cookie = uint64(posted + 1 + i)
				}
			} else {
				for i := range batch {
					batch[i].Cookie, batch[i].Flags = uint64(posted+1+i), flags.next(posted+1+i)
				}
			}
			posted += k
			if err := c.postRequests(op, batch); err != nil {
				return fmt.Errorf("post %s %d of %d: %w", op.title(), posted, n, err)
			}
		}
		cookie, err := c.reqCookies("wait for completions") // a burst of them
		if err != nil {
			return fmt.Errorf("after %d of %d operations: %w", completed, n, err)
		}
		completed = int(cookie)
		p.set(int64(completed))
		if c.beatDue() {
			if err := c.sendBeat(completed); err != nil {
				return err
			}
		}
	}
	return nil
}

// signaller gives the completion flags of a run's operations, in order:
// every every-th asks for a completion, and so does the last, the n-th,
// and the one stopAt names. A countdown, not a division per operation.
type signaller struct {
	every, left, n int
	// last is the next operation to ask for a completion whatever the
	// countdown says: the n-th, or the one stopAt names until it is
	// posted.
	last int
}

// newSignaller returns the signaller of a run of n operations that asks
// for a completion every every operations.
func newSignaller(every, n int) signaller {
	return signaller{every: every, left: every, n: n, last: n}
}

// next returns the flags of operation posted, counted from 1.
func (s *signaller) next(posted int) udat.CompletionFlags {
	if s.left--; s.left == 0 || posted == s.last {
		s.left = s.every
		if posted == s.last {
			s.last = s.n
		}
		return udat.CompletionDefault
	}
	return udat.CompletionSuppress
}

// stopAt asks for the completion of operation k (k <= n), not yet posted,
// whatever the countdown says: the last one posted before the loop waits
// for its completions and nothing else (the credits ran out).
func (s *signaller) stopAt(k int) { s.last = k }

// opLatency times single operations, one at a time, from post to
// completion, as dapltest's latency phase does. With credits it waits, off
// the clock, until the server has a receive for each send. A msgProgress
// the throughput phase left in flight is reaped first: its completion
// would otherwise be taken for the first operation's.
func (c *conn) opLatency(op opKind, size, segs int, samples []time.Duration, p *progress) error {
	iov := c.segments(0, size, segs)
	remote := c.peer
	remote.SegmentLength = uint32(size)
	cr := &c.credits
	if err := c.reapBeat(); err != nil {
		return err
	}
	for i := range samples {
		if k := cr.sent + i + 1; k > cr.known {
			if err := c.awaitCredit(k); err != nil {
				return err
			}
		}
		t0 := time.Now()
		if err := c.post(op, iov, uint64(i), remote, udat.CompletionDefault); err != nil {
			return fmt.Errorf("post %s: %w", op.title(), err)
		}
		d, err := c.nextDTO(c.reqEVD, "wait for a completion")
		if err != nil {
			return err
		}
		samples[i] = time.Since(t0)
		if d.Cookie != uint64(i) {
			return fmt.Errorf("%s %d: completion of cookie %#x instead", op.title(), i, d.Cookie)
		}
		p.set(int64(i + 1))
		if err := c.beat(i + 1); err != nil {
			return err
		}
		if err := c.reapBeat(); err != nil {
			return err
		}
	}
	return nil
}

// lazyReaper asks for a completion every latSignal requests of a ping-pong
// test and reaps those completions off the critical path: after the next
// message is on its way, without waiting, and only blocks when the queue
// would otherwise fill.
type lazyReaper struct {
	c       *conn
	pending int        // signalled requests not reaped yet
	lc      *latCauses // counts the waits, when on
}

// flags returns the completion flags of request i (counted from 1) of n.
func (r *lazyReaper) flags(i, n int) udat.CompletionFlags {
	if i%latSignal == 0 || i == n {
		r.pending++
		return udat.CompletionDefault
	}
	return udat.CompletionSuppress
}

// room waits until one more request fits: at most 2*latSignal requests are
// in flight (the layout gives room for them).
func (r *lazyReaper) room() error {
	for r.pending >= 2 {
		if err := r.wait(); err != nil {
			return err
		}
	}
	return nil
}

func (r *lazyReaper) wait() error {
	if r.lc != nil {
		r.lc.reaps++
	}
	if _, err := r.c.pingDTO(r.c.reqEVD, "request completion"); err != nil {
		return err
	}
	r.pending--
	return nil
}

// drain reaps the completions already there.
func (r *lazyReaper) drain() error {
	for r.pending > 0 {
		ev := &r.c.ev
		err := r.c.reqEVD.DequeueInto(ev)
		if err == udat.ErrQueueEmpty {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess {
			return fmt.Errorf("request completion: %v %v", ev.Number, ev.DTO.Status)
		}
		r.pending--
	}
	return nil
}

// finish waits for all.
func (r *lazyReaper) finish() error {
	for r.pending > 0 {
		if err := r.wait(); err != nil {
			return err
		}
	}
	return nil
}

// pingDTO is nextDTO for the ping-pong loops: when polling, it polls
// without ever yielding to the scheduler (and without the yielder's clock
// reads). A yield there (every 2 ms, about one message in 60) made its
// sample slow more often than not: runtime.Gosched wakes an idle thread to
// look for work (goschedImpl's wakep), which takes one of the test VM's two
// CPUs from a poller (the send ping-pong with -lat-causes, 8 runs
// of 3,000 messages: 215 of the client's 380 yields ended in a sample above
// twice the median, 74 in the p99 tail). What the yield is for, not
// starving the scheduler, onePWhile sees to.
func (c *conn) pingDTO(evd *udat.EVD, what string) (udat.DTOCompletionData, error) {
	if c.block {
		return c.nextDTO(evd, what)
	}
	ev := &c.ev
	var deadline spinDeadline
	for i := 1; ; i++ {
		err := evd.DequeueInto(ev)
		if err != udat.ErrQueueEmpty { // DequeueInto returns the sentinel itself
			return c.checkDTO(ev, err, what)
		}
		if deadline.expired(i, 0xfff, c.timeout) {
			return c.checkDTO(ev, c.timedOut(), what)
		}
	}
}

// onePWhile runs a polling ping-pong with one P (GOMAXPROCS 1) when on,
// unless GOMAXPROCS is set in the environment; it returns the function
// that gives the Ps back. Each polling ping-pong of the process gets a P of
// its own (a client and a server in one process, as the tests run them,
// would otherwise take turns at every preemption, 10 ms apart), up to
// the GOMAXPROCS there was before; the last to end restores it. With
// two Ps, each time the runtime preempts the poller (every 10 ms) it wakes
// an idle thread to take the other P (wakep), and that thread, spinning
// for work and going back to sleep, takes a CPU from one of the two
// pollers of the test VM: a slow sample each time, and with the thread's
// wake-ups the tail. With one P there is nothing to wake; the other
// goroutines (the library's watchdog, timers) run when the poller is
// preempted. A polling loop makes no cgo calls on Soft-RoCE's direct path,
// so the monitor has no call to take the P from (procs.go); a blocking
// one does, and keeps its Ps.
func onePWhile(on bool) func() {
	if !on || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	oneP.mu.Lock()
	if oneP.users++; oneP.users == 1 {
		oneP.prev = runtime.GOMAXPROCS(1)
	} else {
		runtime.GOMAXPROCS(min(oneP.users, oneP.prev))
	}
	oneP.mu.Unlock()
	return func() {
		oneP.mu.Lock()
		if oneP.users--; oneP.users == 0 {
			runtime.GOMAXPROCS(oneP.prev)
		} else {
			runtime.GOMAXPROCS(min(oneP.users, oneP.prev))
		}
		oneP.mu.Unlock()
	}
}

// pingYield yields to the Go scheduler every pingYieldEvery messages of
// a polling ping-pong that runs with one P, right after a post, while the
// message is on its way. The runtime preempts a goroutine that ran for
// 10 ms: its monitor thread signals the poller's thread, at whatever point
// of a round trip it is, every 10-20 ms. A yield of its own makes that
// never due, and with one P it wakes no thread (nothing for wakep to
// start); with several it would, so it is off then.
type pingYield struct {
	on bool
	n  int
}

// pingYieldEvery messages the loop yields: about 0.5 ms of 64 B round trips
// in the test VM, well inside the runtime's 10 ms.
const pingYieldEvery = 16

func newPingYield(block bool) pingYield {
	return pingYield{on: !block && runtime.GOMAXPROCS(0) == 1}
}

// sent counts a message posted and yields when one is due.
func (y *pingYield) sent() {
	if !y.on {
		return
	}
	if y.n++; y.n%pingYieldEvery == 0 {
		runtime.Gosched()
	}
}

// oneP counts the ping-pongs running with one P (a server may run several
// at once).
var oneP struct {
	mu    sync.Mutex
	users int
	prev  int
}

// pingTimer records ping-pong samples the way perftest does: the time
// between consecutive sends of the initiator, halved. It ticks as a send
// has been posted, so reading the clock is not on the critical path (the
// message is on its way meanwhile).
type pingTimer struct {
	samples []time.Duration
	last    time.Time
	n       int
	p       *progress
}

func (t *pingTimer) tick() {
	now := time.Now()
	if t.n > 0 {
		t.samples[t.n-1] = now.Sub(t.last) / 2
		t.p.set(int64(t.n))
	}
	t.last = now
	t.n++
}

// sendPingPong bounces n messages of size bytes: the initiator sends and
// waits for the echo, recording half the round trip in samples; the other
// side echoes. Each side reposts a receive and reaps its send completions
// after its next message is on its way.
func sendPingPong(c *conn, n, size, segs int, initiator bool, samples []time.Duration, p *progress) error {
	iov := c.segments(0, size, segs)
	defer onePWhile(!c.block)()
	y := newPingYield(c.block)
	lc := newLatCauses(n, &c.yield)
	r := &lazyReaper{c: c, lc: lc}
	t := &pingTimer{samples: samples, p: p}
	send := func(i int) error {
		if err := r.room(); err != nil {
			return err
		}
		if err := c.ep.PostSend(iov, uint64(i), r.flags(i, n)); err != nil {
			return fmt.Errorf("post send %d: %w", i, err)
		}
		return nil
	}
	recv := func(i int) (int, error) {
		d, err := c.pingDTO(c.rcvEVD, "receive")
		if err != nil {
			return 0, fmt.Errorf("message %d: %w", i, err)
		}
		if d.TransferredLength != uint64(size) {
			return 0, fmt.Errorf("message %d: %d bytes, expected %d", i, d.TransferredLength, size)
		}
		return int(d.Cookie), nil
	}
	slot := -1 // the receive to repost
	for i := 1; i <= n; i++ {
		if !initiator {
			var err error
			if slot, err = recv(i); err != nil {
				return err
			}
		}
		if err := send(i); err != nil {
			return err
		}
		if initiator {
			t.tick()
		}
		lc.note()
		y.sent()
		if slot >= 0 {
			if err := c.postRecv(slot); err != nil {
				return err
			}
			slot = -1
		}
		if err := r.drain(); err != nil {
			return err
		}
		if initiator {
			var err error
			if slot, err = recv(i); err != nil {
				return err
			}
		}
	}
	if initiator {
		t.tick()
		lc.note()
		if err := c.postRecv(slot); err != nil {
			return err
		}
	}
	return lc.end(initiator, r.finish())
}

// writePingPong bounces RDMA writes like perftest's ib_write_lat: each side
// writes a message whose last word is the iteration number into the peer's
// inbox and polls its own inbox for the peer's. The data region holds the
// outgoing message at [0, size) and the inbox at [size, 2*size).
func writePingPong(c *conn, n, size, segs int, initiator bool, samples []time.Duration, p *progress) error {
	iov := c.segments(0, size, segs)
	remote := c.peer
	seqOff := (size - 4) &^ 3
	out := c.data()[seqOff : seqOff+4]
	in := (*uint32)(unsafe.Pointer(&c.data()[size+seqOff]))
	defer onePWhile(!c.block)()
	y := newPingYield(c.block)
	lc := newLatCauses(n, &c.yield)
	r := &lazyReaper{c: c, lc: lc}
	t := &pingTimer{samples: samples, p: p}
	write := func(i int) error {
		if err := r.room(); err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(out, uint32(i))
		if err := c.ep.PostRDMAWrite(iov, uint64(i), remote, r.flags(i, n)); err != nil {
			return fmt.Errorf("post RDMA write %d: %w", i, err)
		}
		if initiator {
			t.tick()
		}
		lc.note()
		y.sent()
		return r.drain()
	}
	wait := func(i int) error {
		var le [4]byte
		binary.LittleEndian.PutUint32(le[:], uint32(i))
		want := binary.NativeEndian.Uint32(le[:])
		var deadline spinDeadline
		for spins := 1; atomic.LoadUint32(in) != want; spins++ {
			if deadline.expired(spins, 0xffff, c.timeout) {
				return fmt.Errorf("RDMA write %d of the peer: %w", i, c.timedOut())
			}
		}
		return nil
	}
	for i := 1; i <= n; i++ {
		if !initiator {
			if err := wait(i); err != nil {
				return err
			}
		}
		if err := write(i); err != nil {
			return err
		}
		if initiator {
			if err := wait(i); err != nil {
				return err
			}
		}
	}
	if initiator {
		t.tick()
		lc.note()
	}
	return lc.end(initiator, r.finish())
}

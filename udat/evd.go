package udat

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/udapl-go/udapl/cverbs"
)

// EVD is an Event Dispatcher: a queue of events of the kinds named by its
// flags. An EVD with EVDDTOFlag or EVDRMRBindFlag owns a completion queue
// (and its completion channel) that DTO completions of the EPs that use it go
// to; every EVD also queues the events the library itself generates
// (connection, connection request, asynchronous and software events, and the
// completions of DTOs flushed without reaching the hardware).
type EVD struct {
	object
	ia    *IA
	flags EVDFlags

	ch *cverbs.CompChannel

	mu sync.Mutex
	// cq takes the completions of the EPs' queues, scq (created on demand)
	// the receives of EPs that use solicited wait; see cqsize.go.
	cq, scq   *cverbs.CQ
	use, suse cqUse
	qlen      int
	q         []Event // ring of queued events
	qhead, qn int
	wc        []cverbs.WC // poll buffer, reused; never longer than q
	// A waiter that blocks does so on blockedOn (ch), or on wakeUp when
	// the EVD has no channel or a CNO's watcher owns it, until
	// interruptLocked wakes it.
	blocked    bool
	blockedOn  *cverbs.CompChannel
	wakeUp     chan struct{}
	timer      *time.Timer // sleep's deadline, made once: one waiter at a time
	aborted    bool
	unwaitable bool
	disabled   bool
	refs       int // EPs, PSPs, RSPs that deliver to this EVD
	cno        *CNO
	watch      *cqWatch // waits on ch while the EVD has a CNO (cno.go)
	counts     evdCounts

	waiting atomic.Bool
}

// takesCM reports whether the EVD takes connection events or connection
// requests and no completions: a dequeue that finds it empty has the IA's
// pending rdma_cm events handled (pollOther).
func (e *EVD) takesCM() bool {
	return e.flags&(EVDConnectionFlag|EVDCRFlag) != 0 && e.flags&(EVDDTOFlag|EVDRMRBindFlag) == 0
}

const validEVDFlags = EVDSoftwareFlag | EVDCRFlag | EVDDTOFlag | EVDConnectionFlag | EVDRMRBindFlag | EVDAsyncFlag

// CreateEVD creates an Event Dispatcher with room for at least qlen events
// (dat_evd_create). flags combine EVDDTOFlag, EVDConnectionFlag, EVDCRFlag,
// EVDRMRBindFlag and EVDSoftwareFlag. The IA has one asynchronous EVD of its
// own (AsyncEVD); EVDAsyncFlag is refused here. The CQ behind a DTO EVD
// grows as EPs use it, so that no completion is lost (see cqsize.go).
// CreateEVDWithCNO takes the cno_handle of the C call.
func (ia *IA) CreateEVD(qlen int, flags EVDFlags) (*EVD, error) {
	const op = "dat_evd_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if qlen <= 0 || (ia.devAttr.MaxCQE > 0 && qlen > ia.devAttr.MaxCQE) {
		return nil, newError(op, InvalidParameter|InvalidArg2)
	}
	if flags == 0 || flags&^validEVDFlags != 0 || flags&EVDAsyncFlag != 0 {
		return nil, newError(op, InvalidParameter|InvalidArg4)
	}
	e, err := newEVD(ia, qlen, flags)
	if err != nil {
		return nil, err
	}
	if !addChild(ia, ia.evds, e) {
		e.release()
		return nil, badHandle(op, HandleTypeIA)
	}
	return e, nil
}

func newEVD(ia *IA, qlen int, flags EVDFlags) (*EVD, error) {
	const op = "dat_evd_create"
	e := &EVD{object: liveObject(), ia: ia, flags: flags, qlen: qlen, q: make([]Event, qlen)}
	if flags&(EVDDTOFlag|EVDRMRBindFlag) != 0 {
		ch, err := ia.vctx.NewCompChannel()
		if err != nil {
			return nil, verbsErr(op, err, InsufficientResources|ResourceTEVD)
		}
		cq, err := ia.vctx.NewCQ(ia.cqSize(qlen), ch)
		if err != nil {
			ch.Close()
			return nil, verbsErr(op, err, InsufficientResources|ResourceTEVD)
		}
		e.useCQ(ch, cq)
	}
	return e, nil
}

// useCQ makes cq, of completion channel ch, the CQ the EVD polls.
func (e *EVD) useCQ(ch *cverbs.CompChannel, cq *cverbs.CQ) {
	e.ch, e.cq = ch, cq
	e.wc = make([]cverbs.WC, min(e.qlen, 64))
}

func (e *EVD) check(op string) error {
	if e == nil || e.dead() {
		return newError(op, InvalidHandle)
	}
	return nil
}

// lock checks the handle and takes mu; a Free that got there first makes
// it DAT_INVALID_HANDLE, as for a handle freed before the call.
func (e *EVD) lock(op string) error {
	if err := e.check(op); err != nil {
		return err
	}
	e.mu.Lock()
	if e.dead() {
		e.mu.Unlock()
		return newError(op, InvalidHandle)
	}
	return nil
}

// checkRole validates an EVD passed to an object for a given role: it must be
// live, belong to ia and have flag; sub is the DAT_INVALID_HANDLE subtype for
// that role (InvalidHandleEVDRecv, ...).
func (e *EVD) checkRole(op string, ia *IA, flag EVDFlags, sub Return) error {
	if e == nil || e.dead() || e.ia != ia || e.flags&flag == 0 {
		return newError(op, InvalidHandle|sub)
	}
	return nil
}

func (e *EVD) ref(d int) {
	e.mu.Lock()
	e.refs += d
	e.mu.Unlock()
}

// pushLocked queues ev; the queue grows if the library has to queue more
// events than the EVD was sized for. Caller holds mu.
func (e *EVD) pushLocked(ev Event) {
	p := e.pushSlotLocked()
	*p = ev
	p.EVD = e
}

// pushSlotLocked queues a zero event for the caller to fill in where it
// lies in the queue: a completion's event (about 200 bytes) is built once,
// not copied in. Caller holds mu.
func (e *EVD) pushSlotLocked() *Event {
	if e.qn == len(e.q) {
		e.growLocked()
	}
	p := e.tailLocked()
	e.qn++
	*p = Event{}
	p.EVD = e
	return p
}

// tailLocked returns the free slot after the last queued event, for the
// caller to fill in and count in qn: popLocked left no pointers in it, and
// the rest of what it took. The queue has room. Caller holds mu.
func (e *EVD) tailLocked() *Event {
	i := e.qhead + e.qn
	if i >= len(e.q) {
		i -= len(e.q)
	}
	return &e.q[i]
}

// freeRunLocked returns the free slots of the queue that follow the last
// queued event in a row, up to the end of the ring or its head, as
// tailLocked would return them one by one (empty: the queue is full).
// Caller holds mu.
func (e *EVD) freeRunLocked() []Event {
	i := e.qhead + e.qn
	if i >= len(e.q) {
		return e.q[i-len(e.q) : e.qhead]
	}
	return e.q[i:]
}

// growLocked doubles the queue, when the library has to queue more events
// than the EVD was sized for. Caller holds mu.
func (e *EVD) growLocked() {
	nq := make([]Event, 2*len(e.q)+1)
	for i := 0; i < e.qn; i++ {
		nq[i] = e.q[(e.qhead+i)%len(e.q)]
	}
	e.q, e.qhead = nq, 0
}

// popLocked moves the first queued event into *ev, and leaves no pointers
// in the queue. Caller holds mu and has checked that the queue is not
// empty.
func (e *EVD) popLocked(ev *Event) {
	p := &e.q[e.qhead]
	if p.Number == EventDTOCompletion {
		// A DTO completion sets only its DTO data (deliver, slotEventTo), a
		// fifth of the 280-byte Event: *ev is made from it in place, not
		// copied whole, and only its pointers are cleared.
		ev.resetForDTO()
		ev.Number, ev.EVD = EventDTOCompletion, e
		ev.DTO = p.DTO // alone: in the assignment above it was copied aside first
		p.EVD, p.DTO.EP = nil, nil
	} else {
		*ev = *p
		*p = Event{}
	}
	if e.qhead++; e.qhead == len(e.q) {
		e.qhead = 0
	}
	e.qn--
}

// wakeLocked reports newly queued events: it wakes the goroutine waiting on
// the EVD or, when none waits and the EVD is enabled, triggers its CNO.
func (e *EVD) wakeLocked() {
	if e.waiting.Load() {
		e.interruptLocked()
	} else if e.cno != nil && !e.disabled {
		e.cno.trigger(e)
	}
}

// interruptLocked makes a waiter look at the EVD again.
func (e *EVD) interruptLocked() {
	if !e.blocked {
		return
	}
	e.blocked = false
	if e.blockedOn != nil {
		e.blockedOn.Interrupt()
		e.blockedOn = nil
		return
	}
	select {
	case e.wakeUp <- struct{}{}:
	default: // woken already
	}
}

// pushInternal queues an event generated by the library and wakes a waiter
// (or triggers the CNO).
func (e *EVD) pushInternal(ev Event) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if !e.dead() {
		e.pushLocked(ev)
		e.wakeLocked()
	}
	e.mu.Unlock()
}

// polling reports whether completions can still be polled into the EVD
// (false for nil, freed and aborted EVDs).
func (e *EVD) polling() bool {
	if e == nil || e.dead() {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cq != nil && !e.aborted
}

// reap moves every completion waiting in the CQ to the event queue, which
// grows as needed: the DTOs they report are then done, and their LMRs free.
// New events notify as if they had just arrived (the CQ watcher of a CNO
// will find them taken in already).
func (e *EVD) reap() {
	if e == nil {
		return
	}
	e.mu.Lock()
	if !e.dead() {
		before := e.qn
		e.poll(true)
		if e.qn > before {
			e.wakeLocked()
		}
	}
	e.mu.Unlock()
}

// pollLocked moves completions from the CQ to the event queue, as many as
// there is room for. It allocates nothing. Caller holds mu.
func (e *EVD) pollLocked() { e.poll(false) }

// poll moves completions from the CQs to the event queue: as many as there
// is room for, or, with all, every one (the queue grows as for the events
// the library generates). Caller holds mu.
func (e *EVD) poll(all bool) {
	if e.aborted {
		return
	}
	e.pollCQ(e.cq, all)
	e.pollCQ(e.scq, all)
}

func (e *EVD) pollCQ(cq *cverbs.CQ, all bool) {
	if cq == nil {
		return
	}
	for {
		room := len(e.q) - e.qn
		if all {
			room = len(e.wc)
		}
		if room <= 0 {
			return
		}
		n := min(room, len(e.wc))
		got, err := cq.PollSerial(e.wc[:n])
		if err != nil || got <= 0 {
			return
		}
		e.deliver(e.wc[:got])
		if got < n {
			return
		}
	}
}

// pollArmLocked is pollLocked for a waiter that may block: when the queue
// holds fewer than threshold events it arms the CQs, then polls again, so a
// completion that arrived before the arm is found by the poll and a later
// one wakes the channel. Only the receives of EPs that use solicited wait
// hold back the wake-up until a solicited one (or an error) arrives.
// Without such EPs, poll, arm and poll are one cgo call. Caller holds mu.
func (e *EVD) pollArmLocked(threshold int) {
	if e.scq != nil || e.aborted {
		e.pollLocked()
		if e.qn < threshold && !e.aborted {
			e.armLocked()
			e.pollLocked()
		}
		return
	}
	armed := false
	for {
		n := min(len(e.q)-e.qn, len(e.wc))
		if n <= 0 {
			break
		}
		got, armedNow, err := e.cq.PollArm(e.wc[:n], threshold-e.qn, false)
		if armedNow {
			e.counts[EVDCounterWaitNotify]++
		}
		armed = armed || armedNow
		e.deliver(e.wc[:got])
		if err != nil || got < n {
			break
		}
	}
	// The C side counted completions; not every one makes an event.
	if e.qn < threshold && !armed {
		e.counts[EVDCounterWaitNotify]++
		e.cq.ReqNotify(false)
		e.pollLocked()
	}
}

var errWaitTimeout = newError("dat_evd_wait", TimeoutExpired)

// Dequeue removes the first event from the EVD (dat_evd_dequeue). When
// there is none it returns ErrQueueEmpty itself (DAT_QUEUE_EMPTY), so that a
// polling loop may test for it with err == ErrQueueEmpty, which costs less
// than errors.Is. It does not allocate.
func (e *EVD) Dequeue() (ev Event, err error) {
	err = e.DequeueInto(&ev)
	return ev, err
}

// DequeueInto is Dequeue writing the event into *ev, as dat_evd_dequeue
// writes into the caller's DAT_EVENT: a polling loop that reuses one Event
// copies each event (280 bytes) once, from the queue into *ev. *ev is left
// as it was when there is no event (ErrQueueEmpty) or an error. A nil ev is
// DAT_INVALID_PARAMETER.
func (e *EVD) DequeueInto(ev *Event) error {
	if e == nil || ev == nil || !e.made {
		return e.dequeueError(ev)
	}
	// Freed is checked under mu: a freed EVD's mutex still works, and Free
	// marks it freed under mu. (made never changes.)
	e.mu.Lock()
	if e.freed.Load() {
		e.mu.Unlock()
		return e.dequeueError(ev)
	}
	// Counted as C counts them: a poll, and what the call found, after it
	// or not (C never counts DEQUEUE_POLL_FOUND).
	e.counts[EVDCounterDequeue]++
	if e.qn == 0 {
		e.counts[EVDCounterDequeuePoll]++
		if e.pollEvents(unsafe.Slice(ev, 1)) == 1 {
			e.counts[EVDCounterDequeueFound]++
			e.mu.Unlock()
			return nil
		}
		if e.qn == 0 {
			e.counts[EVDCounterDequeueNotFound]++
			e.mu.Unlock()
			return ErrQueueEmpty
		}
	}
	e.counts[EVDCounterDequeueFound]++
	e.popLocked(ev)
	e.mu.Unlock()
	return nil
}

// DequeueEvents removes up to len(evs) events from the EVD into evs, in
// order, as that many DequeueInto calls would, and returns how many it
// took: a polling loop takes a burst of completions with one call, one
// lock and one poll of the CQ. With no event it returns 0 and ErrQueueEmpty
// itself, as Dequeue does. evs[n:] are left as they were. It is an
// extension of DAT, the counterpart of EP.PostRequests, counted as n calls
// to dat_evd_dequeue (one when none was found), and does not allocate. An
// empty evs is DAT_INVALID_PARAMETER.
func (e *EVD) DequeueEvents(evs []Event) (int, error) {
	if e == nil || len(evs) == 0 {
		return 0, e.dequeueError(nil)
	}
	e.mu.Lock()
	if e.dead() {
		e.mu.Unlock()
		return 0, e.dequeueError(nil)
	}
	n := 0
	if e.qn == 0 {
		e.counts[EVDCounterDequeuePoll]++
		n = e.pollEvents(evs)
	}
	for ; n < len(evs) && e.qn > 0; n++ {
		e.popLocked(&evs[n])
	}
	if n == 0 {
		e.counts[EVDCounterDequeue]++
		e.counts[EVDCounterDequeueNotFound]++
		e.mu.Unlock()
		return 0, ErrQueueEmpty
	}
	e.counts[EVDCounterDequeue] += uint64(n)
	e.counts[EVDCounterDequeueFound] += uint64(n)
	e.mu.Unlock()
	return n, nil
}

// pollEvents is pollLocked for an empty queue whose first events are taken
// into evs at once: the usual completions (takeUsual) polled are written
// straight there, in order, rather than queued and popped, up to the first
// that is not usual; that one and the rest are queued. A burst polls no
// more completions than evs holds and leaves the rest in the CQ for the
// next call, since a queued event is written twice, here and when popped;
// a single event polls ahead, as many as the queue holds, since popping
// the next one costs less than polling for it; when it gets more than one,
// all are queued, in one run, and the caller pops the first (a run of one
// into evs and another into the queue would cost a takeUsual more). It
// returns how many it wrote into evs. Caller holds mu, which pollOther
// releases for a while, and has found the queue empty.
func (e *EVD) pollEvents(evs []Event) int {
	if e.aborted || e.cq == nil || e.scq != nil {
		e.pollOther()
		return 0
	}
	// Empty, the queue may start anywhere: at the front, its free slots
	// are one run for deliver (one takeUsual), not two around the end.
	e.qhead = 0
	wc := e.wc
	if len(evs) > 1 && len(evs) < len(wc) {
		wc = wc[:len(evs)]
	}
	got, err := e.cq.PollSerial(wc)
	if err != nil || got <= 0 {
		return 0
	}
	if got > 1 && len(evs) == 1 {
		e.deliver(wc[:got])
		return 0
	}
	k := e.takeUsual(wc[:got], evs)
	if k < got {
		e.deliver(wc[k:got])
	}
	return k
}

// pollOther is pollEvents for an EVD without the one CQ it takes events
// from in place: it queues what the CQs hold and, for an EVD that takes
// rdma_cm events (takesCM), has the IA's pending ones handled
// (IA.pollCM), which queues them here. It releases mu meanwhile, since
// handling an event takes it. Caller holds mu.
func (e *EVD) pollOther() {
	e.pollLocked()
	if e.takesCM() {
		e.mu.Unlock()
		e.ia.pollCM()
		e.mu.Lock()
	}
}

// dequeueError is the error of a DequeueInto that got a bad handle or a nil
// ev (one of them is): the handle is checked first, as C checks them.
func (e *EVD) dequeueError(ev *Event) error {
	const op = "dat_evd_dequeue"
	if err := e.check(op); err != nil {
		return err
	}
	return newError(op, InvalidParameter|InvalidArg2)
}

// Wait removes the first event from the EVD once at least threshold events
// are queued, waiting up to timeout microseconds (TimeoutInfinite: forever)
// for them (dat_evd_wait). It also returns the number of events left in the
// queue (nmore). Only one goroutine may wait on an EVD at a time; another
// gets DAT_INVALID_STATE. A timeout gives DAT_TIMEOUT_EXPIRED; closing the IA
// abruptly gives DAT_ABORT. A wait that has to block holds its goroutine's
// OS thread in the kernel, as a C thread in dat_evd_wait does: a completion
// then wakes it directly, not through the netpoller and the scheduler.
//
// A wait polls the CQ only when fewer than threshold events are queued, as
// Dequeue polls only an empty queue: nmore counts the events already
// queued, and completions still in the CQ are taken by a later call. (C
// DAPL polls on every wait, so its nmore may count completions that arrived
// since the last poll.)
func (e *EVD) Wait(timeout Timeout, threshold int) (ev Event, nmore int, err error) {
	nmore, err = e.WaitInto(timeout, threshold, &ev)
	return ev, nmore, err
}

// WaitInto is Wait writing the event into *ev, as dat_evd_wait writes into
// the caller's DAT_EVENT: a loop that reuses one Event copies each event
// once, from the queue into *ev. *ev is left as it was when the wait
// returns an error. A nil ev is DAT_INVALID_PARAMETER.
func (e *EVD) WaitInto(timeout Timeout, threshold int, ev *Event) (nmore int, err error) {
	const op = "dat_evd_wait"
	if err := e.check(op); err != nil {
		return 0, err
	}
	if ev == nil { // after the handle, before the threshold, as C checks them
		return 0, newError(op, InvalidParameter|InvalidArg4)
	}
	limit := time.Duration(-1)
	if timeout != TimeoutInfinite {
		limit = time.Duration(timeout) * time.Microsecond
	}
	return e.wait(context.Background(), op, threshold, limit, ev)
}

// WaitContext is Wait with a context instead of a timeout. A context that
// expires gives DAT_TIMEOUT_EXPIRED and one that is cancelled gives
// DAT_INTERRUPTED_CALL.
func (e *EVD) WaitContext(ctx context.Context, threshold int) (ev Event, nmore int, err error) {
	const op = "dat_evd_wait"
	if err := e.check(op); err != nil {
		return Event{}, 0, err
	}
	if ctx == nil {
		return Event{}, 0, newError(op, InvalidParameter|InvalidArg2)
	}
	nmore, err = e.wait(ctx, op, threshold, -1, &ev)
	return ev, nmore, err
}

// wait takes the first event into *ev once threshold events are queued and
// returns how many are left. It waits until ctx ends and, when limit is not
// negative, for at most limit from the moment it first has to block (0:
// it only polls). Like C's, the limit starts then: most waits find their
// events queued and never read the clock.
func (e *EVD) wait(ctx context.Context, op string, threshold int, limit time.Duration, ev *Event) (int, error) {
	if threshold < 1 || threshold > e.qlen {
		return 0, newError(op, InvalidParameter|InvalidArg3)
	}
	if !e.waiting.CompareAndSwap(false, true) {
		return 0, newError(op, InvalidState|InvalidStateEVDWaiter)
	}
	// The waiter leaves under mu, so an event that arrives as it gives up
	// finds it gone and triggers the CNO.
	leave := func() {
		e.waiting.Store(false)
		e.mu.Unlock()
	}
	pollOnly := limit == 0
	var deadline time.Time // set when the wait first blocks, with a limit
	for first := true; ; first = false {
		e.mu.Lock()
		if first {
			e.counts[EVDCounterWait]++
		}
		if e.aborted || e.dead() {
			// An abrupt IA close aborts the wait; a Free that raced it
			// freed the handle.
			code := Abort
			if !e.aborted {
				code = InvalidHandle
			}
			leave()
			return 0, newError(op, code)
		}
		if e.unwaitable {
			leave()
			return 0, newError(op, InvalidState|InvalidStateEVDUnwaitable)
		}
		// A poll is a cgo call: a queue that holds enough is not polled.
		if e.qn < threshold {
			if pollOnly || e.cq == nil {
				e.pollLocked()
			} else {
				e.pollArmLocked(threshold)
			}
		}
		if e.qn >= threshold {
			e.popLocked(ev)
			n := e.qn
			leave()
			return n, nil
		}
		err := ctx.Err()
		if err == nil && limit > 0 {
			if now := time.Now(); deadline.IsZero() {
				deadline = now.Add(limit)
			} else if !now.Before(deadline) {
				err = context.DeadlineExceeded
			}
		}
		if err != nil || pollOnly {
			leave()
			return 0, ctxError(op, err)
		}
		ch := e.ch
		if e.watch != nil {
			ch = nil // the CNO's watcher waits on the channel and wakes us
		}
		if ch == nil && e.wakeUp == nil {
			e.wakeUp = make(chan struct{}, 1)
		}
		e.blocked, e.blockedOn = true, ch
		e.counts[EVDCounterWaitBlocked]++
		e.mu.Unlock()
		if ch != nil {
			// The blocked thread's own timeout ends the wait at the
			// deadline: no runtime timer to set up, wake and tear down.
			ch.WaitBlockingUntil(ctx, deadline)
		} else {
			e.sleep(ctx, deadline)
		}
		e.mu.Lock()
		e.blocked, e.blockedOn = false, nil
		e.mu.Unlock()
	}
}

// sleep blocks a waiter that has no channel to block on (the EVD has
// none, or a CNO's watcher owns it) until interruptLocked wakes it, ctx
// ends or the deadline (if not zero) passes.
func (e *EVD) sleep(ctx context.Context, deadline time.Time) {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		if e.timer == nil {
			e.timer = time.NewTimer(time.Until(deadline))
		} else {
			e.timer.Reset(time.Until(deadline))
		}
		defer e.timer.Stop()
		expired = e.timer.C
	}
	select {
	case <-e.wakeUp:
	case <-ctx.Done():
	case <-expired:
	}
}

func ctxError(op string, err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return errWaitTimeoutFor(op)
	}
	return newError(op, InterruptedCall)
}

func errWaitTimeoutFor(op string) error {
	if op == "dat_evd_wait" {
		return errWaitTimeout
	}
	return newError(op, TimeoutExpired)
}

// PostSE posts a software event to the EVD (dat_evd_post_se). ev.Number must
// be EventSoftware and the EVD must have been created with EVDSoftwareFlag;
// ev.Software is returned unchanged with the event. A full queue gives
// DAT_QUEUE_FULL.
func (e *EVD) PostSE(ev Event) error {
	const op = "dat_evd_post_se"
	if err := e.check(op); err != nil {
		return err
	}
	if e.flags&EVDSoftwareFlag == 0 {
		return newError(op, InvalidParameter|InvalidArg1)
	}
	if ev.Number != EventSoftware {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if err := e.lock(op); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if e.qn >= e.qlen {
		return newError(op, QueueFull)
	}
	e.pushLocked(Event{Number: EventSoftware, Software: ev.Software})
	e.wakeLocked()
	return nil
}

// Resize changes the number of events the EVD holds (dat_evd_resize). It
// fails with DAT_INVALID_STATE if more events than qlen are queued. The CQ
// behind the EVD keeps room for every DTO its EPs can have outstanding,
// whatever qlen (see cqsize.go).
func (e *EVD) Resize(qlen int) error {
	const op = "dat_evd_resize"
	if err := e.check(op); err != nil {
		return err
	}
	if qlen <= 0 || (e.ia.devAttr.MaxCQE > 0 && qlen > e.ia.devAttr.MaxCQE) {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if err := e.lock(op); err != nil {
		return err
	}
	defer e.mu.Unlock()
	e.pollLocked()
	if e.qn > qlen {
		return newError(op, InvalidState)
	}
	if old := e.qlen; e.cq != nil && qlen > old {
		e.qlen = qlen
		if err := e.fitLocked(e.cq, &e.use); err != nil {
			e.qlen = old
			return newErrorDetail(op, InsufficientResources|ResourceTEVD, err.Error())
		}
	}
	nq := make([]Event, qlen)
	for i := 0; i < e.qn; i++ {
		nq[i] = e.q[(e.qhead+i)%len(e.q)]
	}
	e.q, e.qhead, e.qlen = nq, 0, qlen
	if e.wc != nil && len(e.wc) > qlen {
		e.wc = e.wc[:qlen]
	}
	return nil
}

// EVDParam is what dat_evd_query returns.
type EVDParam struct {
	IA    *IA
	QLen  int
	State EVDState
	CNO   *CNO // nil: none
	Flags EVDFlags
}

// Query returns the EVD's parameters (dat_evd_query).
func (e *EVD) Query() (EVDParam, error) {
	if err := e.lock("dat_evd_query"); err != nil {
		return EVDParam{}, err
	}
	defer e.mu.Unlock()
	st := EVDStateEnabled
	if e.disabled {
		st = EVDStateDisabled
	}
	if e.unwaitable {
		st |= EVDStateUnwaitable
	} else {
		st |= EVDStateWaitable
	}
	return EVDParam{IA: e.ia, QLen: e.qlen, State: st, CNO: e.cno, Flags: e.flags}, nil
}

// Enable enables the EVD (dat_evd_enable): its events trigger its CNO
// again. Waiting on the EVD does not depend on it.
func (e *EVD) Enable() error {
	return e.setFlag("dat_evd_enable", func() { e.disabled = false })
}

// Disable disables the EVD (dat_evd_disable): its events no longer trigger
// its CNO; see Enable.
func (e *EVD) Disable() error {
	return e.setFlag("dat_evd_disable", func() { e.disabled = true })
}

// SetUnwaitable makes Wait fail at once with DAT_INVALID_STATE, and wakes a
// goroutine already waiting (dat_evd_set_unwaitable). Events still arrive and
// can be dequeued.
func (e *EVD) SetUnwaitable() error {
	return e.setFlag("dat_evd_set_unwaitable", func() { e.unwaitable = true })
}

// ClearUnwaitable makes the EVD waitable again (dat_evd_clear_unwaitable).
func (e *EVD) ClearUnwaitable() error {
	return e.setFlag("dat_evd_clear_unwaitable", func() { e.unwaitable = false })
}

func (e *EVD) setFlag(op string, set func()) error {
	if err := e.lock(op); err != nil {
		return err
	}
	set()
	e.interruptLocked()
	e.mu.Unlock()
	return nil
}

// Free destroys the EVD (dat_evd_free). It fails with DAT_INVALID_STATE
// while an EP, PSP or RSP delivers events to it, while a goroutine waits on
// it, and for the IA's asynchronous EVD.
func (e *EVD) Free() error {
	const op = "dat_evd_free"
	if err := e.check(op); err != nil {
		return err
	}
	if e == e.ia.asyncEVD {
		return newError(op, InvalidState|InvalidStateEVDAsync)
	}
	e.mu.Lock()
	if e.refs > 0 {
		e.mu.Unlock()
		return newError(op, InvalidState|InvalidStateEVDInUse)
	}
	if e.waiting.Load() {
		e.mu.Unlock()
		return newError(op, InvalidState|InvalidStateEVDWaiter)
	}
	e.mu.Unlock()
	return e.release()
}

// abort makes waiters return DAT_ABORT (abrupt IA close).
func (e *EVD) abort() {
	e.mu.Lock()
	e.aborted = true
	e.interruptLocked()
	e.mu.Unlock()
}

// release destroys the EVD's verbs objects and invalidates the handle.
func (e *EVD) release() error {
	e.mu.Lock()
	if e.freed.Swap(true) {
		e.mu.Unlock()
		return badHandle("dat_evd_free", HandleTypeEVD)
	}
	e.interruptLocked()
	w := e.leaveCNOLocked()
	cq, scq, ch := e.cq, e.scq, e.ch
	e.cq, e.scq = nil, nil
	e.qn, e.qhead = 0, 0
	e.mu.Unlock()
	w.stop()
	// A woken waiter leaves the completion channel before it is closed.
	for i := 0; i < 2000 && e.waiting.Load(); i++ {
		time.Sleep(time.Millisecond)
	}
	delChild(e.ia, e.ia.evds, e)
	var err error
	if cq != nil {
		err = cq.Close()
	}
	if scq != nil {
		err = cmp.Or(scq.Close(), err)
	}
	if ch != nil {
		ch.Close()
	}
	if err != nil {
		return verbsErr("dat_evd_free", err, InternalError)
	}
	return nil
}

package udat

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/udapl-go/udapl/cverbs"
)

// CNO is a Consumer Notification Object: one place to wait for the EVDs
// associated with it (dat_cno_create). An EVD triggers its CNO when an
// event that would wake a waiter arrives while the EVD is enabled and no
// goroutine waits on the EVD itself (EVD.Wait has priority): a signalled DTO
// completion (for the receives of an EP with CompletionSolicitedWait, only a
// solicited one or an error), a connection, connection request, software or
// asynchronous event, or the report of a flushed DTO. Whether the EVD is
// waitable does not matter. A trigger stays until a Wait takes it, so none
// is lost between two waits; Wait returns the EVD that triggered the CNO,
// which is only a hint: the consumer dequeues from every EVD of the CNO.
//
// A DTO EVD associated with a CNO keeps its completion queues armed: a
// goroutine of the library, parked in the netpoller (no OS thread), waits
// on its completion channel while the association lasts, so completions of
// the device trigger the CNO even though nobody waits or polls.
type CNO struct {
	object
	ia *IA

	mu        sync.Mutex
	agent     WaitProxyAgent
	evds      map[*EVD]struct{} // the EVDs associated with the CNO
	waiters   int
	triggered bool
	by        *EVD          // the EVD that triggered it
	ready     chan struct{} // closed when triggered, replaced when a Wait takes the trigger
	aborted   bool
}

// WaitProxyAgent is the Go form of DAT_OS_WAIT_PROXY_AGENT: a function the
// CNO calls, on a goroutine of its own, when it is triggered, with the EVD
// that triggered it (nil when the last EVD associated with the CNO was
// freed). As in DAT, the agent is called once: after the call it is no
// longer associated with the CNO (ModifyAgent sets another). A nil agent is
// DAT_OS_WAIT_PROXY_AGENT_NULL.
type WaitProxyAgent func(evd *EVD)

// CNOParam is what dat_cno_query returns.
type CNOParam struct {
	IA        *IA
	ProxyType ProxyType // ProxyTypeAgent while an agent is associated, else ProxyTypeNone
	Agent     WaitProxyAgent
}

// closedChan is what Ready returns for a nil or freed CNO: a receive
// proceeds at once, and the Wait that follows reports the bad handle.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// CreateCNO creates a CNO with no EVDs (dat_cno_create). agent, if not nil,
// is called the next time the CNO is triggered.
func (ia *IA) CreateCNO(agent WaitProxyAgent) (*CNO, error) {
	const op = "dat_cno_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	c := &CNO{object: liveObject(), ia: ia, agent: agent,
		evds: map[*EVD]struct{}{}, ready: make(chan struct{})}
	if !addChild(ia, ia.cnos, c) {
		return nil, badHandle(op, HandleTypeIA)
	}
	return c, nil
}

func (c *CNO) check(op string) error {
	if c == nil || c.dead() {
		return badHandle(op, HandleTypeCNO)
	}
	return nil
}

// ModifyAgent replaces the CNO's proxy agent; nil removes it
// (dat_cno_modify_agent).
func (c *CNO) ModifyAgent(agent WaitProxyAgent) error {
	const op = "dat_cno_modify_agent"
	if err := c.check(op); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead() {
		return badHandle(op, HandleTypeCNO)
	}
	c.agent = agent
	return nil
}

// Query returns the CNO's parameters (dat_cno_query).
func (c *CNO) Query() (CNOParam, error) {
	const op = "dat_cno_query"
	if err := c.check(op); err != nil {
		return CNOParam{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := CNOParam{IA: c.ia, ProxyType: ProxyTypeNone, Agent: c.agent}
	if c.agent != nil {
		p.ProxyType = ProxyTypeAgent
	}
	return p, nil
}

// Wait waits up to timeout microseconds (TimeoutInfinite: forever; 0: only
// look) for the CNO to be triggered, takes the trigger and returns the EVD
// that triggered it (dat_cno_wait). A trigger that came before the call is
// returned at once. As the man page says, a timeout gives DAT_QUEUE_EMPTY;
// the EVD is nil (DAT_SUCCESS) when the last EVD of the CNO was freed, and
// closing the IA abruptly gives DAT_ABORT. Many goroutines may wait on one
// CNO; each trigger wakes one of them.
func (c *CNO) Wait(timeout Timeout) (*EVD, error) {
	const op = "dat_cno_wait"
	if err := c.check(op); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if timeout != TimeoutInfinite && timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout)*time.Microsecond)
		defer cancel()
	}
	return c.wait(ctx, op, timeout == 0)
}

// WaitContext is Wait with a context instead of a timeout. A context that
// expires gives DAT_QUEUE_EMPTY and one that is cancelled gives
// DAT_INTERRUPTED_CALL.
func (c *CNO) WaitContext(ctx context.Context) (*EVD, error) {
	const op = "dat_cno_wait"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, newError(op, InvalidParameter|InvalidArg2)
	}
	return c.wait(ctx, op, false)
}

func (c *CNO) wait(ctx context.Context, op string, pollOnly bool) (*EVD, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiters++
	defer func() { c.waiters-- }()
	for {
		switch {
		case c.aborted:
			return nil, newError(op, Abort)
		case c.dead():
			return nil, badHandle(op, HandleTypeCNO)
		case c.triggered:
			evd := c.by
			c.triggered, c.by = false, nil
			c.ready = make(chan struct{})
			return evd, nil
		case pollOnly:
			return nil, newError(op, QueueEmpty)
		}
		if err := ctx.Err(); err != nil {
			return nil, cnoCtxError(op, err)
		}
		ready := c.ready
		c.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
		}
		c.mu.Lock()
	}
}

func cnoCtxError(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return newError(op, QueueEmpty)
	}
	return newError(op, InterruptedCall)
}

// Ready returns a channel that is closed once the CNO is triggered, for use
// in a select; then Wait(0) takes the trigger. The channel of a trigger
// that a Wait has taken stays closed: call Ready again for the next one.
// A nil or freed CNO gives a closed channel (and Wait then reports it).
func (c *CNO) Ready() <-chan struct{} {
	if c == nil || c.dead() {
		return closedChan
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready
}

// Free destroys the CNO (dat_cno_free). It fails with DAT_INVALID_STATE
// while an EVD is associated with it or a goroutine waits on it.
func (c *CNO) Free() error {
	const op = "dat_cno_free"
	if err := c.check(op); err != nil {
		return err
	}
	c.mu.Lock()
	if len(c.evds) > 0 || c.waiters > 0 {
		c.mu.Unlock()
		return newError(op, InvalidState|InvalidStateCNOInUse)
	}
	if c.freed.Swap(true) {
		c.mu.Unlock()
		return badHandle(op, HandleTypeCNO)
	}
	c.closeReadyLocked()
	c.mu.Unlock()
	delChild(c.ia, c.ia.cnos, c)
	return nil
}

// abort makes waiters return DAT_ABORT (abrupt IA close).
func (c *CNO) abort() {
	c.mu.Lock()
	c.aborted = true
	c.closeReadyLocked()
	c.mu.Unlock()
}

// destroy frees the CNO whatever uses it (abrupt IA close, after abort).
func (c *CNO) destroy() {
	c.mu.Lock()
	evds := keys(c.evds)
	c.mu.Unlock()
	for _, e := range evds {
		e.mu.Lock()
		w := e.setCNOLocked(nil)
		e.mu.Unlock()
		w.stop()
	}
	c.mu.Lock()
	c.freed.Store(true)
	c.closeReadyLocked()
	c.mu.Unlock()
	delChild(c.ia, c.ia.cnos, c)
}

func (c *CNO) closeReadyLocked() {
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// trigger triggers the CNO for e (nil: its last EVD was freed) unless it
// is triggered already, and hands the trigger to the agent. The caller may
// hold e.mu (EVD before CNO is the lock order).
func (c *CNO) trigger(e *EVD) {
	c.mu.Lock()
	if c.triggered || c.aborted || c.dead() {
		c.mu.Unlock()
		return
	}
	c.triggered, c.by = true, e
	close(c.ready)
	agent := c.agent
	c.agent = nil
	c.mu.Unlock()
	if agent != nil {
		go agent(e)
	}
}

// CreateEVDWithCNO is CreateEVD with the CNO the EVD triggers
// (dat_evd_create with a cno_handle); a nil cno is no CNO. A CNO of another
// IA, or a freed one, gives DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_CNO.
func (ia *IA) CreateEVDWithCNO(qlen int, cno *CNO, flags EVDFlags) (*EVD, error) {
	const op = "dat_evd_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if cno != nil && (cno.dead() || cno.ia != ia) {
		return nil, badHandle(op, HandleTypeCNO)
	}
	e, err := ia.CreateEVD(qlen, flags)
	if err != nil || cno == nil {
		return e, err
	}
	if e.ModifyCNO(cno) != nil {
		// The CNO was freed meanwhile.
		e.Free()
		return nil, badHandle(op, HandleTypeCNO)
	}
	return e, nil
}

// ModifyCNO associates the EVD with cno, or with no CNO when cno is nil
// (dat_evd_modify_cno). A notification that arrives during the call may go
// to the old CNO or to the new one, as the man page allows.
func (e *EVD) ModifyCNO(cno *CNO) error {
	const op = "dat_evd_modify_cno"
	if err := e.check(op); err != nil {
		return err
	}
	if cno != nil && (cno.dead() || cno.ia != e.ia) {
		return badHandle(op, HandleTypeCNO)
	}
	if err := e.lock(op); err != nil {
		return err
	}
	if cno != nil {
		// Associate first: a Free of the CNO that got there first wins.
		cno.mu.Lock()
		gone := cno.dead()
		if !gone {
			cno.evds[e] = struct{}{}
		}
		cno.mu.Unlock()
		if gone {
			e.mu.Unlock()
			return badHandle(op, HandleTypeCNO)
		}
	}
	w := e.setCNOLocked(cno)
	e.mu.Unlock()
	w.stop()
	return nil
}

// setCNOLocked makes cno (already told of e, or nil) the EVD's CNO and
// starts or stops the watcher of its CQs; the caller stops the returned
// watcher after releasing e.mu. Caller holds e.mu.
func (e *EVD) setCNOLocked(cno *CNO) *cqWatch {
	old := e.cno
	e.cno = cno
	if old != nil && old != cno {
		old.mu.Lock()
		delete(old.evds, e)
		old.mu.Unlock()
	}
	if cno != nil {
		e.startWatchLocked()
		return nil
	}
	return e.stopWatchLocked()
}

// leaveCNOLocked ends the CNO association of an EVD being freed; a CNO left
// without EVDs is triggered with none, to release its waiters, as the man
// page says. Caller holds e.mu and stops the returned watcher after
// releasing it.
func (e *EVD) leaveCNOLocked() *cqWatch {
	c := e.cno
	w := e.setCNOLocked(nil)
	if c != nil {
		c.mu.Lock()
		last := len(c.evds) == 0
		c.mu.Unlock()
		if last {
			c.trigger(nil)
		}
	}
	return w
}

// cqWatch is the goroutine that waits on a DTO EVD's completion channel
// while the EVD has a CNO (nobody else may be waiting on it).
type cqWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the watcher and waits until it has left the channel. Nil-safe.
func (w *cqWatch) stop() {
	if w != nil {
		w.cancel()
		<-w.done
	}
}

func (e *EVD) startWatchLocked() {
	if e.cq == nil || e.watch != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &cqWatch{cancel: cancel, done: make(chan struct{})}
	e.watch = w
	e.armLocked()
	// A waiter parked on the channel leaves it to the watcher.
	e.interruptLocked()
	go e.watchCQ(ctx, w)
}

// stopWatchLocked detaches the watcher; a waiter goes back to waiting on
// the channel itself.
func (e *EVD) stopWatchLocked() *cqWatch {
	w := e.watch
	if w != nil {
		e.watch = nil
		w.cancel()
		e.interruptLocked()
	}
	return w
}

// armLocked asks the CQs for an event at their next completion (the
// solicited CQ: at its next solicited one or error, where the device can
// tell). Caller holds e.mu.
func (e *EVD) armLocked() {
	e.counts[EVDCounterWaitNotify]++
	if e.cq != nil {
		e.cq.ReqNotify(false)
	}
	if e.scq != nil {
		e.scq.ReqNotify(e.ia.solicitedNotifies())
	}
}

// watchCQ turns the completion events of the EVD's CQs into notifications:
// it re-arms the CQs, takes in their completions and, if that queued new
// events (or the queue is full, so that completions wait in the CQ), wakes
// the EVD's waiter or triggers its CNO; in that order, so that no completion
// goes unnoticed. An event for completions already taken in (by Dequeue, or
// by the previous round), or left on the channel from before the watcher
// started, triggers nothing.
func (e *EVD) watchCQ(ctx context.Context, w *cqWatch) {
	defer close(w.done)
	for {
		_, err := e.ch.Wait(ctx)
		if ctx.Err() != nil || errors.Is(err, cverbs.ErrClosed) {
			return
		}
		if err != nil {
			// Not an event we know of; pause so an error cannot spin.
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		e.mu.Lock()
		if e.watch != w || e.dead() || e.aborted {
			e.mu.Unlock()
			return
		}
		e.armLocked()
		before := e.qn
		e.pollLocked()
		if e.qn > before || e.qn == len(e.q) || e.waiting.Load() {
			e.wakeLocked()
		}
		e.mu.Unlock()
	}
}

// The Handle methods of CNO (see handle.go).

func (h *CNO) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}

// HandleType reports HandleTypeCNO (dat_get_handle_type).
func (h *CNO) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeCNO, "dat_get_handle_type")
}

// SetConsumerContext stores v in the CNO (dat_set_consumer_context).
func (h *CNO) SetConsumerContext(v any) error {
	return setCtx(h.obj(), h == nil, HandleTypeCNO, v)
}

// ConsumerContext returns the value stored in the CNO
// (dat_get_consumer_context).
func (h *CNO) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeCNO) }

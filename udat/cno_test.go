//go:build linux && cgo

package udat

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// cnoPair is a connected pair whose two receive EVDs feed one CNO.
func cnoPair(t *testing.T, agent WaitProxyAgent, o pairOpts) (*pair, *CNO) {
	t.Helper()
	o.splitEVDs = true
	p := newPair(t, o)
	cno, err := p.ia.CreateCNO(agent)
	require.NoError(t, err)
	require.NoError(t, p.client.recv.ModifyCNO(cno))
	require.NoError(t, p.server.recv.ModifyCNO(cno))
	return p, cno
}

// sendTo posts a receive on to and sends 8 bytes to it from the other side;
// the send's own completion goes to the sender's request EVD, not the CNO's.
func sendTo(t *testing.T, from, to side, cookie uint64, flags CompletionFlags) {
	t.Helper()
	postRecvs(t, to, 0, 64, 1, cookie)
	require.NoError(t, from.ep.PostSend([]LMRTriplet{from.lmr.Triplet(0, 8)}, cookie, flags))
	require.Equal(t, DTOSuccess, waitDTO(t, from.req).Status)
}

// requireRecv dequeues the receive completion with cookie from e.
func requireRecv(t *testing.T, e *EVD, cookie uint64) {
	t.Helper()
	ev, err := e.Dequeue()
	require.NoError(t, err)
	require.Equal(t, EventDTOCompletion, ev.Number)
	require.Equal(t, cookie, ev.DTO.Cookie)
	require.Equal(t, DTOSuccess, ev.DTO.Status)
}

// requireUntriggered checks, after a quiet spell, that no trigger is pending.
func requireUntriggered(t *testing.T, cno *CNO) {
	t.Helper()
	time.Sleep(quietDur)
	evd, err := cno.Wait(0)
	requireCode(t, err, QueueEmpty, "no trigger pending")
	require.Nil(t, evd)
}

// dat_cno_wait(3DAT): one waiter for the EVDs of the CNO; it returns the EVD
// that a device completion, arriving with nobody waiting or polling,
// triggered.
func TestCNOReturnsTheEVDOfARealCompletion(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	c, s := p.client, p.server
	for i, dst := range []struct {
		from, to side
	}{{c, s}, {s, c}, {c, s}} {
		cookie := uint64(100 + i)
		sendTo(t, dst.from, dst.to, cookie, CompletionDefault)
		evd, err := cno.Wait(waitUS)
		require.NoError(t, err, "round %d", i)
		require.Same(t, dst.to.recv, evd, "round %d: the receiving side's EVD", i)
		requireRecv(t, evd, cookie)
	}
	requireUntriggered(t, cno)
	q, err := s.recv.Query()
	require.NoError(t, err)
	require.Same(t, cno, q.CNO)
}

// dat_cno_wait(3DAT): DAT_QUEUE_EMPTY "The operation timed out without a
// notification", with a null evd_handle; DAT_INTERRUPTED_CALL for a wait
// that is interrupted (a cancelled context).
func TestCNOWaitTimeoutAndCancel(t *testing.T) {
	ia := openIA(t)
	cno, err := ia.CreateCNO(nil)
	require.NoError(t, err)

	start := time.Now()
	evd, err := cno.Wait(100_000)
	requireCode(t, err, QueueEmpty)
	require.Nil(t, evd)
	require.GreaterOrEqual(t, time.Since(start), 90*time.Millisecond)

	_, err = cno.Wait(0)
	requireCode(t, err, QueueEmpty, "a zero timeout only looks")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = cno.WaitContext(ctx)
	requireCode(t, err, QueueEmpty, "an expired context is a timeout")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	evd, err = cno.WaitContext(ctx)
	requireCode(t, err, InterruptedCall)
	require.Nil(t, evd)

	//lint:ignore SA1012 the nil context is the point
	_, err = cno.WaitContext(nil)
	requireCode(t, err, InvalidParameter|InvalidArg2)
}

// A trigger that comes before the wait is kept for it; the agent (called on
// the trigger, with nobody waiting) proves that the trigger came first.
func TestCNOTriggerBeforeWaitIsKept(t *testing.T) {
	called := make(chan *EVD, 1)
	p, cno := cnoPair(t, func(e *EVD) { called <- e }, pairOpts{})
	sendTo(t, p.client, p.server, 7, CompletionDefault)
	select {
	case e := <-called:
		require.Same(t, p.server.recv, e, "the agent gets the triggering EVD")
	case <-time.After(time.Duration(waitUS) * time.Microsecond):
		t.Fatal("the agent was not called")
	}
	evd, err := cno.Wait(0)
	require.NoError(t, err, "the trigger waits for the Wait")
	require.Same(t, p.server.recv, evd)
	requireRecv(t, evd, 7)
}

// dat_cno_create(3DAT): the agent "is invoked when the CNO is triggered.
// After it is invoked, it is no longer associated with the CNO."
// dat_cno_modify_agent(3DAT) sets another; dat_cno_query(3DAT) shows it.
func TestCNOAgent(t *testing.T) {
	var calls atomic.Int32
	called := make(chan *EVD, 4)
	agent := func(e *EVD) { calls.Add(1); called <- e }
	p, cno := cnoPair(t, agent, pairOpts{})
	q, err := cno.Query()
	require.NoError(t, err)
	require.Equal(t, ProxyTypeAgent, q.ProxyType)
	require.NotNil(t, q.Agent)
	require.Same(t, p.ia, q.IA)

	recvAgent := func(want *EVD) {
		t.Helper()
		select {
		case e := <-called:
			require.Same(t, want, e)
		case <-time.After(time.Duration(waitUS) * time.Microsecond):
			t.Fatal("the agent was not called")
		}
	}
	sendTo(t, p.server, p.client, 1, CompletionDefault)
	recvAgent(p.client.recv)
	q, err = cno.Query()
	require.NoError(t, err)
	require.Equal(t, ProxyTypeNone, q.ProxyType, "a called agent leaves the CNO")
	require.Nil(t, q.Agent)
	evd, err := cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 1)

	// No agent: the next trigger calls nothing.
	sendTo(t, p.client, p.server, 2, CompletionDefault)
	evd, err = cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 2)
	require.Equal(t, int32(1), calls.Load())

	require.NoError(t, cno.ModifyAgent(agent))
	q, err = cno.Query()
	require.NoError(t, err)
	require.Equal(t, ProxyTypeAgent, q.ProxyType)
	sendTo(t, p.client, p.server, 3, CompletionDefault)
	recvAgent(p.server.recv)
	evd, err = cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 3)

	require.NoError(t, cno.ModifyAgent(agent))
	require.NoError(t, cno.ModifyAgent(nil))
	sendTo(t, p.client, p.server, 4, CompletionDefault)
	evd, err = cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 4)
	time.Sleep(quietDur)
	require.Equal(t, int32(2), calls.Load(), "a removed agent is not called")
}

// Ready gives select a channel that is closed by a trigger; Wait(0) then
// takes it, and the next Ready channel is open again.
func TestCNOReadyForSelect(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	ready := cno.Ready()
	select {
	case <-ready:
		t.Fatal("ready before any event")
	default:
	}
	sendTo(t, p.client, p.server, 5, CompletionDefault)
	select {
	case <-ready:
	case <-time.After(time.Duration(waitUS) * time.Microsecond):
		t.Fatal("Ready's channel was not closed by the trigger")
	}
	evd, err := cno.Wait(0)
	require.NoError(t, err)
	require.Same(t, p.server.recv, evd)
	requireRecv(t, evd, 5)
	select {
	case <-cno.Ready():
		t.Fatal("ready again with no new trigger")
	default:
	}
}

// A direct waiter on an EVD with a CNO times out like any other waiter,
// although the CNO's watcher, not the waiter, waits on the channel.
func TestCNODirectWaiterTimesOut(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	start := time.Now()
	_, _, err := p.server.recv.Wait(100_000, 1)
	requireCode(t, err, TimeoutExpired)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	require.Less(t, time.Since(start), 5*time.Second)
	requireUntriggered(t, cno)
}

// dat_evd_wait has priority: "A uDAPL Consumer waiting directly upon an
// Event Dispatcher preempts the CNO" (dat_cno_wait(3DAT)).
func TestCNODirectWaiterPreempts(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	s := p.server
	var g errgroup.Group
	var got Event
	g.Go(func() error {
		var err error
		got, _, err = s.recv.Wait(waitUS, 1)
		return err
	})
	require.Eventually(t, s.recv.waiting.Load, 5*time.Second, time.Millisecond)
	time.Sleep(10 * time.Millisecond) // let it park
	sendTo(t, p.client, s, 9, CompletionDefault)
	require.NoError(t, g.Wait())
	require.Equal(t, uint64(9), got.DTO.Cookie)
	requireUntriggered(t, cno)

	// The waiter gone, the next completion triggers the CNO again.
	sendTo(t, p.client, s, 10, CompletionDefault)
	evd, err := cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 10)
}

// dat_evd_modify_cno(3DAT): attach, detach (DAT_HANDLE_NULL), move; a
// disabled EVD does not trigger (dat_evd_enable(3DAT)).
func TestCNOModifyAndDisable(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	c, s := p.client, p.server

	require.NoError(t, s.recv.ModifyCNO(nil))
	q, err := s.recv.Query()
	require.NoError(t, err)
	require.Nil(t, q.CNO)
	sendTo(t, c, s, 20, CompletionDefault)
	require.Eventually(t, func() bool {
		ev, err := s.recv.Dequeue()
		return err == nil && ev.DTO.Cookie == 20
	}, 5*time.Second, time.Millisecond, "the completion arrives")
	requireUntriggered(t, cno)

	require.NoError(t, s.recv.ModifyCNO(cno))
	sendTo(t, c, s, 21, CompletionDefault)
	evd, err := cno.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 21)

	// Moved to a second CNO: the first no longer hears of it, once a
	// notification "in progress" during the move is collected (the man
	// page).
	cno2, err := p.ia.CreateCNO(nil)
	require.NoError(t, err)
	require.NoError(t, s.recv.ModifyCNO(cno2))
	time.Sleep(quietDur)
	cno.Wait(0)
	sendTo(t, c, s, 22, CompletionDefault)
	evd, err = cno2.Wait(waitUS)
	require.NoError(t, err)
	require.Same(t, s.recv, evd)
	requireRecv(t, evd, 22)
	requireUntriggered(t, cno)

	// Disabled: the event is queued, the CNO is not triggered.
	require.NoError(t, s.recv.Disable())
	sendTo(t, c, s, 23, CompletionDefault)
	require.Eventually(t, func() bool {
		ev, err := s.recv.Dequeue()
		return err == nil && ev.DTO.Cookie == 23
	}, 5*time.Second, time.Millisecond)
	requireUntriggered(t, cno2)
	require.NoError(t, s.recv.Enable())
	sendTo(t, c, s, 24, CompletionDefault)
	evd, err = cno2.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 24)

	// dat_evd_set_unwaitable(3DAT): "This call does not affect a CNO
	// associated with this EVD at all."
	require.NoError(t, s.recv.SetUnwaitable())
	sendTo(t, c, s, 25, CompletionDefault)
	evd, err = cno2.Wait(waitUS)
	require.NoError(t, err)
	requireRecv(t, evd, 25)
	require.NoError(t, s.recv.ClearUnwaitable())

	require.NoError(t, s.recv.ModifyCNO(nil))
	require.NoError(t, cno2.Free())
	requireCode(t, s.recv.ModifyCNO(cno2), InvalidHandle|InvalidHandleCNO, "a freed CNO")
}

// The receives of a solicited-wait EP trigger the CNO only when solicited
// (or in error), as they wake a waiter only then.
func TestCNOSolicitedWait(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{serverAttr: &EPAttr{RecvCompletionFlags: CompletionSolicitedWait}})
	c, s := p.client, p.server
	sendTo(t, c, s, 30, CompletionDefault)
	if p.ia.solicitedNotifies() {
		requireUntriggered(t, cno)
	} else {
		evd, err := cno.Wait(waitUS)
		require.NoError(t, err, "soft-iWARP cannot hold a receive back: it triggers the CNO")
		require.Same(t, s.recv, evd)
	}
	requireRecv(t, s.recv, 30)
	sendTo(t, c, s, 31, CompletionSolicitedWait)
	evd, err := cno.Wait(waitUS)
	require.NoError(t, err)
	require.Same(t, s.recv, evd)
	requireRecv(t, evd, 31)
}

// Software events (dat_evd_post_se) and connection events trigger the CNO
// too; dat_cno_free(3DAT)'s recipe unblocks a waiter with a software EVD.
func TestCNOSoftwareAndConnectionEvents(t *testing.T) {
	p := newPair(t, pairOpts{})
	cno, err := p.ia.CreateCNO(nil)
	require.NoError(t, err)
	se, err := p.ia.CreateEVDWithCNO(4, cno, EVDSoftwareFlag)
	require.NoError(t, err)
	q, err := se.Query()
	require.NoError(t, err)
	require.Same(t, cno, q.CNO)

	var g errgroup.Group
	var got *EVD
	g.Go(func() error {
		var err error
		got, err = cno.Wait(waitUS)
		return err
	})
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, se.PostSE(Event{Number: EventSoftware, Software: 42}))
	require.NoError(t, g.Wait())
	require.Same(t, se, got)
	ev, err := se.Dequeue()
	require.NoError(t, err)
	require.Equal(t, EventSoftware, ev.Number)

	require.NoError(t, p.server.conn.ModifyCNO(cno))
	require.NoError(t, p.client.ep.Disconnect(CloseGracefulFlag))
	evd, err := cno.Wait(waitUS)
	require.NoError(t, err)
	require.Same(t, p.server.conn, evd)
	ev = waitEvent(t, p.server.conn)
	require.Equal(t, EventConnectionDisconnected, ev.Number)
	waitEvent(t, p.client.conn)
	require.NoError(t, p.server.conn.ModifyCNO(nil))
}

// dat_cno_free(3DAT): "A CNO cannot be deleted while it is referenced by an
// Event Dispatcher or while a thread is blocked on it." A freed CNO is an
// invalid handle everywhere.
func TestCNOFree(t *testing.T) {
	ia := openIA(t)
	cno, err := ia.CreateCNO(nil)
	require.NoError(t, err)
	evd, err := ia.CreateEVDWithCNO(8, cno, EVDDTOFlag)
	require.NoError(t, err)
	requireCode(t, cno.Free(), InvalidState|InvalidStateCNOInUse, "an EVD uses it")
	require.NoError(t, evd.ModifyCNO(nil))

	var g errgroup.Group
	g.Go(func() error { _, err := cno.Wait(waitUS); return err })
	require.Eventually(t, func() bool {
		cno.mu.Lock()
		defer cno.mu.Unlock()
		return cno.waiters == 1
	}, 5*time.Second, time.Millisecond)
	requireCode(t, cno.Free(), InvalidState|InvalidStateCNOInUse, "a goroutine waits on it")
	// The man page's recipe: a software EVD wakes the waiter.
	se, err := ia.CreateEVDWithCNO(1, cno, EVDSoftwareFlag)
	require.NoError(t, err)
	require.NoError(t, se.PostSE(Event{Number: EventSoftware}))
	require.NoError(t, g.Wait())
	require.NoError(t, se.ModifyCNO(nil))

	ht, err := cno.HandleType()
	require.NoError(t, err)
	require.Equal(t, HandleTypeCNO, ht)
	require.NoError(t, SetConsumerContext(cno, "ctx"))
	v, err := GetConsumerContext(cno)
	require.NoError(t, err)
	require.Equal(t, "ctx", v)

	require.NoError(t, cno.Free())
	bad := InvalidHandle | InvalidHandleCNO
	requireCode(t, cno.Free(), bad)
	requireCode(t, e2(cno.Wait(0)), bad)
	requireCode(t, e2(cno.WaitContext(context.Background())), bad)
	requireCode(t, e2(cno.Query()), bad)
	requireCode(t, cno.ModifyAgent(nil), bad)
	requireCode(t, e2(GetHandleType(cno)), bad)
	requireCode(t, SetConsumerContext(cno, 1), bad)
	requireCode(t, e2(GetConsumerContext(cno)), bad)
	requireCode(t, e2(ia.CreateEVDWithCNO(8, cno, EVDDTOFlag)), bad)
	requireCode(t, evd.ModifyCNO(cno), bad)
	select {
	case <-cno.Ready():
	default:
		t.Fatal("a freed CNO's Ready channel is closed, so a select does not hang")
	}

	// A CNO of another IA is no CNO of this one.
	other := openIA(t)
	ocno, err := other.CreateCNO(nil)
	require.NoError(t, err)
	requireCode(t, evd.ModifyCNO(ocno), bad)
	requireCode(t, e2(ia.CreateEVDWithCNO(8, ocno, EVDDTOFlag)), bad)
	require.NoError(t, ocno.Free())
	require.NoError(t, se.Free())
	require.NoError(t, evd.Free())
}

func e2[T any](_ T, err error) error { return err }

// dat_cno_wait(3DAT): waiters "are unblocked with the NULL handle ... when
// the IA instance is destroyed or when all EVDs the CNO is associated with
// are freed". Closing the IA abruptly gives DAT_ABORT, as for EVD waiters.
func TestCNOUnblockedByFreeAndClose(t *testing.T) {
	ia := openIA(t)
	cno, err := ia.CreateCNO(nil)
	require.NoError(t, err)
	a, err := ia.CreateEVDWithCNO(8, cno, EVDDTOFlag)
	require.NoError(t, err)
	b, err := ia.CreateEVDWithCNO(8, cno, EVDSoftwareFlag)
	require.NoError(t, err)
	var g errgroup.Group
	var got *EVD = a
	g.Go(func() error {
		var err error
		got, err = cno.Wait(waitUS)
		return err
	})
	require.NoError(t, a.Free())
	time.Sleep(quietDur)
	cno.mu.Lock()
	triggered := cno.triggered
	cno.mu.Unlock()
	require.False(t, triggered, "one EVD is left")
	require.NoError(t, b.Free())
	require.NoError(t, g.Wait())
	require.Nil(t, got, "the last EVD freed: a null EVD")

	b, err = ia.CreateEVDWithCNO(8, cno, EVDDTOFlag)
	require.NoError(t, err)
	g.Go(func() error { _, err := cno.Wait(TimeoutInfinite); return err })
	require.Eventually(t, func() bool {
		cno.mu.Lock()
		defer cno.mu.Unlock()
		return cno.waiters == 1
	}, 5*time.Second, time.Millisecond)
	requireCode(t, ia.Close(CloseGracefulFlag), InvalidState|InvalidStateIAInUse)
	require.NoError(t, ia.Close(CloseAbruptFlag))
	requireCode(t, g.Wait(), Abort)
	requireCode(t, e2(cno.Wait(0)), InvalidHandle|InvalidHandleCNO, "the IA freed it")
	requireCode(t, b.Free(), InvalidHandle)
}

// Many completions on two EVDs, one goroutine waiting on the CNO and
// draining both EVDs after each trigger: every completion is seen and no
// trigger is lost (the waiter would hang otherwise).
func TestCNOManyCompletionsNothingLost(t *testing.T) {
	const n = 200
	p, cno := cnoPair(t, nil, pairOpts{})
	c, s := p.client, p.server
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var g errgroup.Group
	var seen [2]atomic.Int64
	g.Go(func() error {
		for seen[0].Load()+seen[1].Load() < 2*n {
			if _, err := cno.WaitContext(ctx); err != nil {
				return err
			}
			for i, e := range []*EVD{c.recv, s.recv} {
				for {
					ev, err := e.Dequeue()
					if err == ErrQueueEmpty {
						break
					}
					if err != nil {
						return err
					}
					if ev.DTO.Status != DTOSuccess {
						t.Errorf("status %v", ev.DTO.Status)
					}
					seen[i].Add(1)
				}
			}
		}
		return nil
	})
	// Each side sends to the other; the receiving EVDs are c.recv (index
	// 0) and s.recv (index 1). A sender stays at most 8 receives ahead of
	// the CNO's consumer, so the receive queues never fill.
	for k, pr := range []struct{ from, to side }{{s, c}, {c, s}} {
		g.Go(func() error {
			for i := 0; i < n; i++ {
				for int64(i)-seen[k].Load() > 8 {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					time.Sleep(100 * time.Microsecond)
				}
				if err := pr.to.ep.PostRecv([]LMRTriplet{pr.to.lmr.Triplet(0, 64)}, uint64(i), CompletionDefault); err != nil {
					return err
				}
				if err := pr.from.ep.PostSend([]LMRTriplet{pr.from.lmr.Triplet(1024*(k+1), 8)}, uint64(i), CompletionDefault); err != nil {
					return err
				}
				ev, _, err := pr.from.req.WaitContext(ctx, 1)
				if err != nil {
					return err
				}
				if ev.DTO.Status != DTOSuccess {
					t.Errorf("send status %v", ev.DTO.Status)
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	assert.Equal(t, int64(n), seen[0].Load())
	assert.Equal(t, int64(n), seen[1].Load())
}

// EP.GetStatus takes in the completions waiting in the device (as LMR.Free
// does); one it takes in before the CQ watcher does still triggers the CNO.
func TestCNOCompletionTakenInByGetStatus(t *testing.T) {
	p, cno := cnoPair(t, nil, pairOpts{})
	c, s := p.client, p.server
	for i := uint64(0); i < 20; i++ {
		sendTo(t, c, s, 40+i, CompletionDefault)
		_, _, _, err := s.ep.GetStatus()
		require.NoError(t, err)
		evd, err := cno.Wait(waitUS)
		require.NoError(t, err, "round %d", i)
		require.Same(t, s.recv, evd)
		requireRecv(t, evd, 40+i)
	}
}

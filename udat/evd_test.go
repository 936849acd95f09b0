//go:build linux && cgo

package udat

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dat_evd_wait: the timeout is in microseconds; 0 polls.
func TestEVDWaitTimeout(t *testing.T) {
	ia := openIA(t)
	for _, flags := range []EVDFlags{EVDSoftwareFlag, EVDDTOFlag | EVDSoftwareFlag} {
		e, err := ia.CreateEVD(4, flags)
		require.NoError(t, err)
		start := time.Now()
		_, _, err = e.Wait(200_000, 1)
		requireCode(t, err, TimeoutExpired)
		require.True(t, errors.Is(err, ErrTimeoutExpired))
		require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
		_, _, err = e.Wait(0, 1)
		requireCode(t, err, TimeoutExpired)
		_, err = e.Dequeue()
		requireCode(t, err, QueueEmpty)
	}
}

// WaitContext: a deadline gives DAT_TIMEOUT_EXPIRED, a cancel
// DAT_INTERRUPTED_CALL; an event posted meanwhile wakes the waiter.
func TestEVDWaitContext(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(4, EVDSoftwareFlag|EVDDTOFlag)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err = e.WaitContext(ctx, 1)
	requireCode(t, err, TimeoutExpired)
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, _, err = e.WaitContext(ctx, 1)
	requireCode(t, err, InterruptedCall)
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.PostSE(Event{Number: EventSoftware, Software: "hi"})
	}()
	ev, n, err := e.WaitContext(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, EventSoftware, ev.Number)
	require.Equal(t, "hi", ev.Software)
	require.Equal(t, e, ev.EVD)
	require.Zero(t, n)
	//lint:ignore SA1012 a nil context is refused, not a panic
	_, _, err = e.WaitContext(nil, 1)
	requireType(t, err, InvalidParameter)
}

// One waiter at a time; the threshold must be between 1 and the queue
// length.
func TestEVDWaiterAndThreshold(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(4, EVDSoftwareFlag)
	require.NoError(t, err)
	for _, th := range []int{0, -1, 5} {
		_, _, err := e.Wait(0, th)
		requireCode(t, err, InvalidParameter|InvalidArg3, "threshold %d", th)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := e.Wait(waitUS, 2)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, _, err = e.Wait(0, 1)
	requireCode(t, err, InvalidState|InvalidStateEVDWaiter)
	requireCode(t, e.Free(), InvalidState|InvalidStateEVDWaiter)
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: 1}))
	select {
	case err := <-done:
		t.Fatalf("woke below threshold: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: 2}))
	require.NoError(t, <-done)
	ev, err := e.Dequeue()
	require.NoError(t, err)
	require.Equal(t, 2, ev.Software)
}

// dat_evd_post_se: software events only, on a software EVD, within the
// queue length (DAT_QUEUE_FULL).
func TestEVDPostSE(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(2, EVDSoftwareFlag)
	require.NoError(t, err)
	requireCode(t, e.PostSE(Event{Number: EventDTOCompletion}), InvalidParameter|InvalidArg2)
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: "a"}))
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: "b"}))
	requireCode(t, e.PostSE(Event{Number: EventSoftware}), QueueFull)
	for _, want := range []string{"a", "b"} {
		ev, err := e.Dequeue()
		require.NoError(t, err)
		require.Equal(t, want, ev.Software)
	}
	noSW, err := ia.CreateEVD(2, EVDDTOFlag)
	require.NoError(t, err)
	requireCode(t, noSW.PostSE(Event{Number: EventSoftware}), InvalidParameter|InvalidArg1)
}

// DequeueInto writes the event into the caller's Event, leaves it alone
// when there is none, and checks the handle before the event pointer.
func TestEVDDequeueInto(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(2, EVDSoftwareFlag)
	require.NoError(t, err)
	requireCode(t, e.DequeueInto(nil), InvalidParameter|InvalidArg2)
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: "a"}))
	var ev Event
	require.NoError(t, e.DequeueInto(&ev))
	assert.Equal(t, EventSoftware, ev.Number)
	assert.Equal(t, "a", ev.Software)
	assert.Equal(t, e, ev.EVD)
	require.Same(t, ErrQueueEmpty, e.DequeueInto(&ev))
	assert.Equal(t, "a", ev.Software, "an empty queue leaves the event as it was")
	require.NoError(t, e.Free())
	requireType(t, e.DequeueInto(nil), InvalidHandle)
}

// DequeueEvents takes what is queued, up to the room it is given, in
// order, leaves the rest of evs alone, and checks its arguments as
// DequeueInto does.
func TestEVDDequeueEvents(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(4, EVDSoftwareFlag)
	require.NoError(t, err)
	evs := make([]Event, 3)
	_, err = e.DequeueEvents(evs[:0])
	requireCode(t, err, InvalidParameter|InvalidArg2)
	for _, sw := range []string{"a", "b", "c"} {
		require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: sw}))
	}
	n, err := e.DequeueEvents(evs[:2])
	require.NoError(t, err)
	require.Equal(t, 2, n)
	assert.Equal(t, []any{"a", "b"}, []any{evs[0].Software, evs[1].Software})
	evs[1].Software, evs[2].Software = "kept", "kept"
	n, err = e.DequeueEvents(evs)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, "c", evs[0].Software)
	assert.Equal(t, e, evs[0].EVD)
	assert.Equal(t, []any{"kept", "kept"}, []any{evs[1].Software, evs[2].Software}, "evs[n:] as they were")
	n, err = e.DequeueEvents(evs)
	require.Same(t, ErrQueueEmpty, err)
	assert.Zero(t, n)
	assert.Equal(t, "c", evs[0].Software, "an empty queue leaves evs as they were")
	require.NoError(t, e.Free())
	_, err = e.DequeueEvents(evs[:0])
	requireType(t, err, InvalidHandle)
	_, err = (*EVD)(nil).DequeueEvents(evs)
	requireType(t, err, InvalidHandle)
}

// DequeueEvents takes the completions of a batch in posting order, the
// usual ones written straight into evs and, where the device has immediate
// data, one that is not (an RDMA write with immediate data) queued between
// them.
func TestEVDDequeueEventsCompletions(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	reqs := make([]Request, 6)
	for i := range reqs {
		reqs[i] = Request{Op: DTORDMAWrite, LocalIOV: []LMRTriplet{c.lmr.Triplet(64*i, 64)}, Cookie: uint64(i + 1),
			Remote: s.lmr.RMRTriplet(64*i, 64)}
	}
	if providerAttr(t, p.ia, "DAT_IB_IMMED_DATA") == "TRUE" {
		require.NoError(t, s.ep.PostRecv(nil, 77, CompletionDefault))
		reqs[3].Op, reqs[3].Immed = DTOIBRDMAWriteImmed, 0xfeed
	}
	n, err := c.ep.PostRequests(reqs)
	require.NoError(t, err)
	require.Equal(t, len(reqs), n)

	var got []Event
	evs := make([]Event, 4)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < len(reqs) && time.Now().Before(deadline) {
		n, err := c.req.DequeueEvents(evs)
		if err == ErrQueueEmpty {
			time.Sleep(time.Millisecond)
			continue
		}
		require.NoError(t, err)
		got = append(got, evs[:n]...)
	}
	require.Len(t, got, len(reqs))
	for i, ev := range got {
		require.Equal(t, reqs[i].Cookie, ev.DTO.Cookie, "event %d", i)
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.Equal(t, reqs[i].Op, ev.DTO.Op)
		require.Equal(t, c.ep, ev.DTO.EP)
		require.Equal(t, c.req, ev.EVD)
		want := EventDTOCompletion
		if reqs[i].Op == DTOIBRDMAWriteImmed {
			want = EventIBDTO
		}
		require.Equal(t, want, ev.Number)
	}
	_, err = c.req.DequeueEvents(evs)
	require.Same(t, ErrQueueEmpty, err)
}

// WaitInto writes the event into the caller's Event and leaves it alone
// when the wait fails; like C, it checks the event pointer after the handle
// and before the threshold.
func TestEVDWaitInto(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(2, EVDSoftwareFlag)
	require.NoError(t, err)
	_, err = e.WaitInto(0, 0, nil)
	requireCode(t, err, InvalidParameter|InvalidArg4)
	var ev Event
	_, err = e.WaitInto(0, 3, &ev)
	requireCode(t, err, InvalidParameter|InvalidArg3)
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: "a"}))
	require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: "b"}))
	n, err := e.WaitInto(waitUS, 2, &ev)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, EventSoftware, ev.Number)
	assert.Equal(t, "a", ev.Software)
	assert.Equal(t, e, ev.EVD)
	n, err = e.WaitInto(1000, 2, &ev)
	requireCode(t, err, TimeoutExpired)
	assert.Zero(t, n)
	assert.Equal(t, "a", ev.Software, "a failed wait leaves the event as it was")
	n, err = e.WaitInto(TimeoutInfinite, 1, &ev)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, "b", ev.Software)
	require.NoError(t, e.Free())
	_, err = e.WaitInto(0, 1, nil)
	requireType(t, err, InvalidHandle)
}

// A wait that finds its event queued, or polls with a zero timeout,
// allocates nothing: a loop of blocking waits on a busy EVD costs what a
// polling loop does.
func TestEVDWaitAllocatesNothing(t *testing.T) {
	p := newPair(t, pairOpts{})
	var ev Event
	round := sendRound(p, func(e *EVD) error {
		_, err := e.WaitInto(0, 1, &ev)
		return err
	})
	round()
	require.Zero(t, testing.AllocsPerRun(50, round), "allocations per post+wait round")
	require.Equal(t, uint64(1), ev.DTO.Cookie)
}

// DequeueEvents allocates nothing either.
func TestEVDDequeueEventsAllocatesNothing(t *testing.T) {
	p := newPair(t, pairOpts{})
	evs := make([]Event, 4)
	round := sendRound(p, func(e *EVD) error {
		_, err := e.DequeueEvents(evs)
		return err
	})
	round()
	require.Zero(t, testing.AllocsPerRun(50, round), "allocations per post+dequeue round")
}

// A wait that blocks allocates nothing either: a DTO EVD's blocks in its
// channel's thread wait, and a software event or an abort wakes it through
// the channel, not through a context made for the purpose; a connection
// EVD's, which has no channel, sleeps on a timer the EVD keeps. Each wait
// here polls (and arms), blocks until its deadline and polls again.
func TestEVDBlockingWaitAllocatesNothing(t *testing.T) {
	ia := openIA(t)
	for _, c := range []struct {
		name  string
		flags EVDFlags
	}{{"DTO", EVDDTOFlag}, {"connection", EVDConnectionFlag}} {
		t.Run(c.name, func(t *testing.T) {
			e, err := ia.CreateEVD(4, c.flags)
			require.NoError(t, err)
			defer e.Free()
			var ev Event
			wait := func() { _, err = e.WaitInto(100, 1, &ev) }
			wait()
			requireCode(t, err, TimeoutExpired)
			// Over 200 waits, so that an allocation of another goroutine
			// of the test binary while they block does not count as one
			// per wait.
			require.Zero(t, testing.AllocsPerRun(200, wait), "allocations per wait that blocks")
			requireCode(t, err, TimeoutExpired)
		})
	}
}

// dat_evd_create argument checks, dat_evd_query, dat_evd_resize.
func TestEVDCreateQueryResize(t *testing.T) {
	ia := openIA(t)
	for _, f := range []EVDFlags{0, EVDAsyncFlag, 0x1000} {
		_, err := ia.CreateEVD(4, f)
		requireCode(t, err, InvalidParameter|InvalidArg4, "flags %v", f)
	}
	_, err := ia.CreateEVD(0, EVDDTOFlag)
	requireCode(t, err, InvalidParameter|InvalidArg2)
	e, err := ia.CreateEVD(4, EVDSoftwareFlag|EVDDTOFlag)
	require.NoError(t, err)
	q, err := e.Query()
	require.NoError(t, err)
	require.Equal(t, 4, q.QLen)
	require.Equal(t, ia, q.IA)
	require.Equal(t, EVDSoftwareFlag|EVDDTOFlag, q.Flags)
	require.Equal(t, EVDStateEnabled|EVDStateWaitable, q.State)
	for i := 0; i < 3; i++ {
		require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: i}))
	}
	requireCode(t, e.Resize(2), InvalidState)
	require.NoError(t, e.Resize(16))
	for i := 3; i < 16; i++ {
		require.NoError(t, e.PostSE(Event{Number: EventSoftware, Software: i}))
	}
	for i := 0; i < 16; i++ {
		ev, err := e.Dequeue()
		require.NoError(t, err)
		require.Equal(t, i, ev.Software, "resize keeps the queued events in order")
	}
	q, err = e.Query()
	require.NoError(t, err)
	require.Equal(t, 16, q.QLen)
	require.NoError(t, e.Disable())
	q, _ = e.Query()
	require.Equal(t, EVDStateDisabled|EVDStateWaitable, q.State)
	require.NoError(t, e.Enable())
	require.NoError(t, e.Free())
	requireType(t, e.Free(), InvalidHandle)
	_, err = e.Dequeue()
	requireType(t, err, InvalidHandle)
	requireCode(t, ia.AsyncEVD().Free(), InvalidState|InvalidStateEVDAsync)
}

// dat_evd_set_unwaitable wakes a waiter with DAT_INVALID_STATE; events can
// still be dequeued.
func TestEVDUnwaitable(t *testing.T) {
	ia := openIA(t)
	e, err := ia.CreateEVD(4, EVDSoftwareFlag)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, _, err := e.Wait(waitUS, 1)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, e.SetUnwaitable())
	requireCode(t, <-done, InvalidState|InvalidStateEVDUnwaitable)
	require.NoError(t, e.PostSE(Event{Number: EventSoftware}))
	_, _, err = e.Wait(0, 1)
	requireCode(t, err, InvalidState|InvalidStateEVDUnwaitable)
	_, err = e.Dequeue()
	require.NoError(t, err)
	require.NoError(t, e.ClearUnwaitable())
	_, _, err = e.Wait(0, 1)
	requireCode(t, err, TimeoutExpired)
}

// EVDs given for a role must have that role's flag.
func TestEVDRoles(t *testing.T) {
	ia := openIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	dto, err := ia.CreateEVD(4, EVDDTOFlag)
	require.NoError(t, err)
	conn, err := ia.CreateEVD(4, EVDConnectionFlag)
	require.NoError(t, err)
	_, err = ia.CreateEP(pz, conn, dto, conn, nil)
	requireCode(t, err, InvalidHandle|InvalidHandleEVDRecv)
	_, err = ia.CreateEP(pz, dto, conn, conn, nil)
	requireCode(t, err, InvalidHandle|InvalidHandleEVDRequest)
	_, err = ia.CreateEP(pz, dto, dto, dto, nil)
	requireCode(t, err, InvalidHandle|InvalidHandleEVDConn)
	freed, err := ia.CreateEVD(4, EVDDTOFlag)
	require.NoError(t, err)
	require.NoError(t, freed.Free())
	_, err = ia.CreateEP(pz, freed, dto, conn, nil)
	requireCode(t, err, InvalidHandle|InvalidHandleEVDRecv)
	ep, err := ia.CreateEP(pz, dto, dto, conn, nil)
	require.NoError(t, err)
	requireCode(t, dto.Free(), InvalidState|InvalidStateEVDInUse)
	require.NoError(t, ep.Free())
	require.NoError(t, dto.Free())
}

// dat_ia_close with DAT_CLOSE_ABRUPT_FLAG frees everything; a goroutine
// waiting on one of its EVDs returns DAT_ABORT.
func TestIACloseAbruptAbortsWaiters(t *testing.T) {
	ia, err := OpenIA(deviceName(t), 8)
	require.NoError(t, err)
	p := newPairIn(t, ia, mustPZ(t, ia), pairOpts{})
	done := make(chan error, 2)
	go func() {
		_, _, err := p.client.req.Wait(TimeoutInfinite, 1)
		done <- err
	}()
	go func() {
		_, _, err := ia.AsyncEVD().Wait(TimeoutInfinite, 1)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	requireCode(t, ia.Close(CloseGracefulFlag), InvalidState|InvalidStateIAInUse)
	require.NoError(t, ia.Close(CloseAbruptFlag))
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			requireCode(t, err, Abort)
		case <-time.After(20 * time.Second):
			t.Fatal("waiter not aborted")
		}
	}
	requireType(t, p.client.ep.PostSend(nil, 1, 0), InvalidHandle)
	requireType(t, ia.Close(CloseAbruptFlag), InvalidHandle)
	_, err = ia.CreatePZ()
	requireType(t, err, InvalidHandle)
}

// A wait that blocks crosses into C four times: poll-arm-poll, the wait in
// the kernel, the read that gets the event (acked in the same call), and
// the poll that takes the completion. It was seven.
func TestBlockingWaitCgoCalls(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	const rounds = 4
	fewest := uint64(1 << 62)
	for i := range rounds {
		require.NoError(t, s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(0, 64)}, uint64(i), CompletionDefault))
		var ev Event
		var err error
		var waited time.Duration
		calls := cgoCallsOf(func() {
			go func() {
				time.Sleep(50 * time.Millisecond)
				c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 64)}, uint64(i), CompletionDefault)
			}()
			start := time.Now()
			ev, _, err = s.recv.WaitContext(context.Background(), 1)
			waited = time.Since(start)
		})
		require.NoError(t, err)
		require.Equal(t, uint64(i), ev.DTO.Cookie)
		require.Equal(t, DTOSuccess, ev.DTO.Status)
		require.Greater(t, waited, 25*time.Millisecond, "the wait did not block")
		fewest = min(fewest, calls-1) // the send's post is one
		require.Equal(t, uint64(i), waitDTO(t, c.req).Cookie)
	}
	t.Logf("cgo calls of a blocking wait: %d", fewest)
	require.LessOrEqual(t, fewest, uint64(4))
}

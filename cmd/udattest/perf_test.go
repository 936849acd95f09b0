package main

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// Every third operation asks for a completion, and so does the last.
func TestSignallerFlags(t *testing.T) {
	const d, s = udat.CompletionDefault, udat.CompletionSuppress
	f := newSignaller(3, 7)
	var got []udat.CompletionFlags
	for i := 1; i <= 7; i++ {
		got = append(got, f.next(i))
	}
	assert.Equal(t, []udat.CompletionFlags{s, s, d, s, s, d, d}, got)
}

// An operation stopAt names asks for a completion whatever the countdown
// says, once; the countdown starts again from it, and the last still asks.
func TestSignallerStopAt(t *testing.T) {
	const d, s = udat.CompletionDefault, udat.CompletionSuppress
	f := newSignaller(4, 12)
	var got []udat.CompletionFlags
	for i := 1; i <= 12; i++ {
		if i == 2 {
			f.stopAt(2)
		}
		got = append(got, f.next(i))
	}
	assert.Equal(t, []udat.CompletionFlags{s, d, s, s, s, d, s, s, s, d, s, d}, got)
}

// spinDeadline reads the clock only at every mask+1-th spin, starts the
// timeout at its first read and reports it passed after that.
func TestSpinDeadline(t *testing.T) {
	var d spinDeadline
	require.False(t, d.expired(1, 3, 0), "not a spin that reads the clock")
	require.True(t, d.at.IsZero())
	require.False(t, d.expired(4, 3, time.Millisecond), "the first read starts the timeout")
	require.False(t, d.at.IsZero())
	time.Sleep(2 * time.Millisecond)
	require.False(t, d.expired(5, 3, time.Millisecond))
	require.True(t, d.expired(8, 3, time.Millisecond))
}

// A polling ping-pong with one P yields every pingYieldEvery messages: a
// goroutine waiting for the P runs at the yield, not before. Blocking
// ping-pongs and several Ps never yield.
func TestPingYield(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	assert.False(t, newPingYield(true).on, "blocking waits")
	require.True(t, newPingYield(false).on)
	// Only a yield may let the other goroutine run: no collection, and a
	// fresh time slice. The runtime still preempts a goroutine that has run
	// 10 ms of wall time, which a busy host can make of a few microseconds
	// (in CI the goroutine once ran before the first yield): a trial so
	// disturbed is made again, up to 3 in all.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var early, ran bool
	var sent int
	for range 3 {
		if early, ran, sent = pingYieldTrial(); !early && ran && sent%pingYieldEvery == 0 {
			break
		}
	}
	assert.False(t, early, "yielded before its message")
	assert.True(t, ran, "did not yield in %d messages", sent)
	assert.Zero(t, sent%pingYieldEvery, "ran after message %d, not at a yield", sent)

	runtime.GOMAXPROCS(2)
	assert.False(t, newPingYield(false).on, "two Ps")
}

// pingYieldTrial starts a goroutine and counts messages until it has run:
// whether it ran before the first yield was due, whether it ran at all, and
// after how many messages.
func pingYieldTrial() (early, ran bool, sent int) {
	y := newPingYield(false)
	var done atomic.Bool
	runtime.Gosched()
	go done.Store(true)
	for range pingYieldEvery - 1 {
		y.sent()
	}
	early = done.Load()
	// The yield lets the waiting goroutine run, but one schedule in 61 takes
	// the global run queue first, where the yield put this goroutine: then
	// the waiting one runs at the next yield.
	sent = pingYieldEvery - 1
	for ; sent < 4*pingYieldEvery && !done.Load(); sent++ {
		y.sent()
	}
	return early, done.Load(), sent
}

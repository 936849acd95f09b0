package main

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBeatEvery(t *testing.T) {
	assert.Equal(t, time.Duration(0), beatEvery(0), "a peer that does not give its -timeout gets no msgProgress")
	assert.Equal(t, time.Duration(0), beatEvery(-time.Second))
	assert.Equal(t, 7500*time.Millisecond, beatEvery(30*time.Second))
	assert.Equal(t, 750*time.Millisecond, beatEvery(3*time.Second))
	assert.Equal(t, time.Millisecond, beatEvery(2*time.Millisecond), "at most one a millisecond")
	for _, d := range []time.Duration{time.Millisecond * 5, time.Second, time.Hour} {
		assert.Less(t, beatEvery(d), d, "several signs of life per -timeout %v", d)
	}
}

func TestPeerIdle(t *testing.T) {
	for _, tc := range []struct {
		op   opKind
		lat  bool
		idle bool
	}{
		{opWrite, false, true},
		{opRead, false, true},
		{opSend, false, false}, // the server receives every message
		{opWrite, true, false}, // ping-pong: the server answers each write
		{opSend, true, false},
		{opRead, true, true},
	} {
		assert.Equal(t, tc.idle, peerIdle(&config{op: tc.op, lat: tc.lat}), "%v lat=%v", tc.op, tc.lat)
	}
}

func TestHeartbeat(t *testing.T) {
	var none *heartbeat
	assert.False(t, none.take(), "a nil heartbeat is never due")
	none.stop()

	const every = 40 * time.Millisecond
	h := startHeartbeat(every)
	assert.False(t, h.take(), "not due before the first interval")
	for i := 0; i < 3; i++ {
		require.Eventually(t, h.take, 2*time.Second, time.Millisecond, "due again after an interval (beat %d)", i)
		assert.False(t, h.take(), "take lowers the flag")
	}
	h.stop()
	h.take()
	time.Sleep(3 * every)
	assert.False(t, h.take(), "no beat after stop")
}

func TestTimedOutSaysTheBound(t *testing.T) {
	err := (&conn{timeout: 3 * time.Second}).timedOut()
	assert.True(t, errors.Is(err, errTimeout))
	assert.EqualError(t, err, "timed out waiting for the peer: nothing happened for 3s (-timeout)")
}

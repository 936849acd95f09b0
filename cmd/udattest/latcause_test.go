package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyLatCauses(t *testing.T) {
	us := func(v int) time.Duration { return time.Duration(v) * time.Microsecond }
	// Sample j is message j+1's round trip: the client's note own[j+1],
	// the server's peer[j].
	samples := []time.Duration{us(10), us(50), us(10), us(60), us(70)}
	own := []uint8{causeYield, 0, causeYield, 0, causeInvolSw | causeOther, 0}
	peer := []uint8{0, causeGC, 0, 0, causeReap}
	slow := classify(samples, own, peer, func(s time.Duration) bool { return s > us(20) })
	assert.Equal(t, 3, slow.n)
	bit := func(c uint8) int {
		for i := range numCauses {
			if c == 1<<i {
				return i
			}
		}
		t.Fatalf("not a cause: %#x", c)
		return 0
	}
	assert.Equal(t, 1, slow.own[bit(causeYield)], "sample 1: the client's yield (own[2])")
	assert.Equal(t, 1, slow.peer[bit(causeGC)], "sample 1: the server's GC (peer[1])")
	assert.Equal(t, 0, slow.ownOnly[bit(causeYield)], "sample 1 had causes on both sides")
	assert.Equal(t, 1, slow.own[bit(causeInvolSw)], "sample 3: own[4]")
	assert.Equal(t, 1, slow.own[bit(causeOther)])
	assert.Equal(t, 0, slow.ownOnly[bit(causeInvolSw)], "sample 3 had two causes")
	assert.Equal(t, 1, slow.peerOnly[bit(causeReap)], "sample 4: peer[4] alone")
	assert.Equal(t, 0, slow.none)

	none := classify(samples, own, nil, func(time.Duration) bool { return true })
	assert.Equal(t, 5, none.n)
	assert.Equal(t, 3, none.none, "samples 0, 2 and 4 have no client cause, and no server notes")
}

func TestLatCausesOffByDefault(t *testing.T) {
	setLatCausesDir(t, "")
	var y yielder
	lc := newLatCauses(10, &y)
	require.Nil(t, lc)
	lc.note() // nil-safe
	require.NoError(t, lc.end(true, nil))
	assert.Nil(t, clientCauses)
}

func TestLatCausesReport(t *testing.T) {
	dir := t.TempDir()
	setLatCausesDir(t, dir)
	var y yielder
	srv := newLatCauses(4, &y)
	require.NotNil(t, srv)
	for range 4 {
		srv.note()
	}
	require.NoError(t, srv.end(false, nil))

	cl := newLatCauses(4, &y)
	for range 5 {
		cl.note()
	}
	y.last = time.Now() // a yield before the last note
	cl.note()
	require.NoError(t, cl.end(true, nil))
	require.Same(t, cl, clientCauses)
	clientCauses = nil
	peer := cl.takePeer(4)
	require.Len(t, peer, 4)
	assert.Nil(t, cl.takePeer(4), "taken once")

	var b bytes.Buffer
	cl.report(&b, []time.Duration{10 * time.Microsecond, 10 * time.Microsecond, 10 * time.Microsecond, 90 * time.Microsecond}, peer)
	out := b.String()
	assert.Contains(t, out, "lat-causes: 4 samples")
	assert.Contains(t, out, "0 allocations")
	assert.Contains(t, out, "server notes: true")
}

// setLatCausesDir sets -lat-causes for the test.
func setLatCausesDir(t *testing.T, dir string) {
	prev := latCausesDir
	latCausesDir = dir
	t.Cleanup(func() { latCausesDir = prev })
}

package udat

// Host tests of the watchdog's bookkeeping (watchdog.go); watchdog_test.go
// runs it on the device.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

func TestFIFORingAwaited(t *testing.T) {
	r := newFIFORing(8, 1, wrKindSend)
	watch, _ := r.awaited(true)
	require.False(t, watch, "nothing outstanding")

	r.reserve(1, 4096, DTORDMAWrite, false) // unsignalled
	watch, _ = r.awaited(true)
	require.False(t, watch, "no completion is coming for an unsignalled DTO alone")

	rd := r.reserve(2, 8192, DTORDMARead, true)
	r.reserve(3, 100, DTORDMAWrite, true)
	watch, bytes := r.awaited(true)
	require.True(t, watch)
	require.Equal(t, uint64(4096+8192), bytes, "the DTOs up to the first signalled one")

	require.True(t, r.complete(r.owner, rd, DTOSuccess, &cverbs.WC{}), "settles the unsignalled write too")
	watch, bytes = r.awaited(true)
	require.True(t, watch)
	require.Equal(t, uint64(100), bytes)

	for _, op := range []DTOOp{DTOSend, DTOIBRDMAWriteImmed} {
		q := newFIFORing(8, 1, wrKindSend)
		q.reserve(1, 8, DTORDMAWrite, false)
		q.reserve(2, 8, op, false)
		q.reserve(3, 8, DTORDMAWrite, true)
		watch, _ = q.awaited(true)
		require.False(t, watch, "%v before the next completion waits for the peer's receive", op)
		watch, _ = q.awaited(false)
		require.True(t, watch, "%v waits for no receive without RNR retry (iWARP)", op)

		q = newFIFORing(8, 1, wrKindSend)
		q.reserve(1, 8, DTORDMAWrite, true)
		q.reserve(2, 8, op, true)
		watch, _ = q.awaited(true)
		require.True(t, watch, "%v behind the next completion does not matter", op)
	}
}

// After the watchdog gives up, the first DTO the device flushes is reported
// as the transport error it is; the others stay flushed.
func TestFIFORingStalledReportsTransportError(t *testing.T) {
	r := newFIFORing(8, 1, wrKindSend)
	a := r.reserve(1, 8, DTORDMAWrite, true)
	b := r.reserve(2, 8, DTORDMAWrite, true)
	r.stalled = true
	require.True(t, r.complete(r.owner, a, DTOErrFlushed, &cverbs.WC{}))
	require.True(t, r.complete(r.owner, b, DTOErrFlushed, &cverbs.WC{}))
	require.Equal(t, DTOErrTransport, r.next().status)
	r.pop()
	require.Equal(t, DTOErrFlushed, r.next().status)
	r.pop()
	require.False(t, r.stalled)

	// A device that flushes nothing: the ring is drained.
	r.reserve(3, 8, DTORDMAWrite, true)
	r.reserve(4, 8, DTORDMAWrite, true)
	r.stalled = true
	left := r.drain()
	require.Len(t, left, 2)
	require.Equal(t, DTOErrTransport, left[0].status)
	require.Equal(t, DTOErrFlushed, left[1].status)
	require.False(t, r.stalled)
}

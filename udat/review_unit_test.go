package udat

// Host-only unit tests from the lifecycle review.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Sequence numbers wrap around after 2^32 DTOs. A ring whose size does not
// divide 2^32 (any size but a power of two) mapped the sequence numbers
// just before and after the wrap onto the same slot while both were
// pending, so one DTO's cookie overwrote another's.
func TestFIFORingWrapOddSize(t *testing.T) {
	for _, size := range []int{3, 5, 100} {
		r := newFIFORing(size, 1, wrKindSend)
		start := ^uint32(0) - uint32(size/2)
		r.head, r.tail = start, start
		seqs := make([]uint32, size)
		for i := range seqs {
			require.False(t, r.full())
			seqs[i] = r.reserve(uint64(i), 0, DTOSend, true, nil)
		}
		require.True(t, r.full(), "size %d", size)
		for i, seq := range seqs {
			slot, ok := r.complete(r.owner, seq)
			require.True(t, ok, "size %d, DTO %d", size, i)
			require.Equal(t, uint64(i), slot.cookie, "size %d: every DTO keeps its cookie", size)
		}
		require.Zero(t, r.outstanding())
	}
}

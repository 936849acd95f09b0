//go:build linux && cgo

package udat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
)

// A send that finds no receive posted is retried (RNR NAK) until one is
// posted. Our QPs advertise a 0.64 ms RNR timer, not rdma_cm's default of
// 655 ms, so the send completes soon after the receive appears.
func TestSendWaitsBrieflyForReceive(t *testing.T) {
	devtest.Require(t)
	p := newPair(t, pairOpts{})
	defer disconnectPair(t, p)

	require.NoError(t, p.client.ep.PostSend([]LMRTriplet{p.client.lmr.Triplet(0, 64)}, 1, CompletionDefault))
	time.Sleep(100 * time.Millisecond) // the first RNR NAK has come back by now
	posted := time.Now()
	postRecvs(t, p.server, 0, 64, 1, 7)
	assert.Equal(t, DTOSuccess, waitDTO(t, p.client.req).Status)
	// With a 655 ms timer the retry comes about 555 ms after this point.
	assert.Less(t, time.Since(posted), 400*time.Millisecond, "the sender waited a long RNR timer")
	assert.Equal(t, uint64(7), waitDTO(t, p.server.recv).Cookie)
}

//go:build linux && cgo

package udat

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// spareOf returns the EP's readied id (epid.go).
func spareOf(ep *EP) *cverbs.CMID {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.spare
}

// An RC EP on InfiniBand or RoCE comes with the rdma_cm id of its next
// active connection: Connect takes it, bound and with the EP's ACK
// timeout; the EP that accepts keeps its own; Reset readies new ones, and
// Free destroys the one left.
func TestReadiedID(t *testing.T) {
	ia := openIA(t)
	if !ia.ibTransport() {
		notApplicable(t, ia, "readied rdma_cm ids (an iWARP EP binds as it connects: epid.go)")
	}
	pz := mustPZ(t, ia)
	attr := DefaultEPAttr()
	attr.ACKTimeout = 16 // not rdma_cm's default: the readied id sets it
	p := &pair{ia: ia, pz: pz}
	p.client = newSide(t, ia, pz, pairOpts{}, &attr, nil)
	p.server = newSide(t, ia, pz, pairOpts{}, nil, nil)
	for round := range 2 {
		client, server := spareOf(p.client.ep), spareOf(p.server.ep)
		require.NotNil(t, client, "round %d: the client's readied id", round)
		require.NotNil(t, server, "round %d: the server's readied id", round)
		assert.Equal(t, ia.Address(), client.LocalAddr().Addr(), "bound to the IA's address")
		p.connect(t)
		ep := p.client.ep
		ep.mu.Lock()
		cmid, ready, left := ep.cmid, ep.cmidReady, ep.spare
		ep.mu.Unlock()
		assert.Same(t, client, cmid, "round %d: Connect took the readied id", round)
		assert.True(t, ready)
		assert.Nil(t, left)
		assert.Same(t, server, spareOf(p.server.ep), "round %d: the accepting EP keeps its own", round)
		rts, err := ep.qp.QueryRTS()
		require.NoError(t, err)
		assert.Equal(t, 16, rts.Timeout, "the connection's ACK timeout, set on the readied id")
		disconnectPair(t, p)
		require.NoError(t, p.client.ep.Reset())
		require.NoError(t, p.server.ep.Reset())
		assert.NotSame(t, client, spareOf(p.client.ep), "Reset readies a new id")
		assert.NotSame(t, server, spareOf(p.server.ep), "Reset readies a new id")
		assert.Equal(t, netip.AddrPort{}, server.LocalAddr(), "Reset destroyed the unused id")
	}
	last := spareOf(p.server.ep)
	require.NoError(t, p.server.ep.Free())
	assert.Equal(t, netip.AddrPort{}, last.LocalAddr(), "Free destroyed the unused id")
}

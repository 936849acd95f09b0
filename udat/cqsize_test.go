//go:build linux && cgo

package udat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A device that cannot resize a CQ (soft-iWARP) gets CQs with room for the
// EPs to come (fixedCQHeadroom); past that room an EP is refused with a
// reason, and an EVD created with a larger qlen takes it. Elsewhere the CQ
// grows.
func TestEVDCQGrowsOrHasRoom(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	require.Equal(t, !strings.HasPrefix(deviceName(t), "siw"), ia.cqResizable, "the probe's answer")
	const depth, n = 1024, 8
	attr := &EPAttr{MaxRequestDTOs: depth}
	evd, err := ia.CreateEVD(8, EVDDTOFlag)
	require.NoError(t, err)
	var eps []*EP
	for range n {
		ep, err := ia.CreateEP(pz, nil, evd, nil, attr)
		if err != nil {
			require.False(t, ia.cqResizable, "a CQ that can grow does: %v", err)
			requireCode(t, err, InsufficientResources|ResourceTEVD)
			require.ErrorContains(t, err, "larger qlen")
			break
		}
		eps = append(eps, ep)
	}
	if ia.cqResizable {
		require.Len(t, eps, n)
		require.GreaterOrEqual(t, evd.cq.CQE(), n*(depth+1))
	} else {
		require.GreaterOrEqual(t, evd.cq.CQE(), 8+fixedCQHeadroom)
		require.Len(t, eps, evd.cq.CQE()/(depth+1), "the EPs that fit")
		big, err := ia.CreateEVD(n*(depth+1), EVDDTOFlag)
		require.NoError(t, err)
		for range n {
			ep, err := ia.CreateEP(pz, nil, big, nil, attr)
			require.NoError(t, err, "an EVD of a larger qlen has room")
			eps = append(eps, ep)
		}
		defer func() { require.NoError(t, big.Free()) }()
	}
	for _, ep := range eps {
		require.NoError(t, ep.Free())
	}
	require.NoError(t, evd.Free())
}

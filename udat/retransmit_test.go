//go:build linux && cgo

package udat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestACKTimeoutDuration(t *testing.T) {
	assert.Equal(t, 67108864*time.Nanosecond, ACKTimeoutDuration(14))
	assert.Equal(t, 2147483648*time.Nanosecond, ACKTimeoutDuration(19))
	assert.Zero(t, ACKTimeoutDuration(0))
	assert.Zero(t, ACKTimeoutDuration(32))
	assert.Equal(t, 7*ACKTimeoutDuration(DefaultACKTimeout), EPAttr{}.DeadPeerTimeout())
	assert.Equal(t, 3*ACKTimeoutDuration(16), EPAttr{RetryCount: 2, ACKTimeout: 16}.DeadPeerTimeout())
}

func TestRetransmitDefaultsFromEnvironment(t *testing.T) {
	t.Setenv("DAPL_ACK_RETRY", "3")
	t.Setenv("DAPL_ACK_TIMER", "17")
	a := fillEPAttr(EPAttr{}, 0)
	assert.Equal(t, 3, a.RetryCount)
	assert.Equal(t, 17, a.ACKTimeout)
	a = fillEPAttr(EPAttr{RetryCount: 5, ACKTimeout: 12}, 0)
	assert.Equal(t, 5, a.RetryCount, "the EP's own value wins")
	assert.Equal(t, 12, a.ACKTimeout)
	t.Setenv("DAPL_ACK_RETRY", "9")
	t.Setenv("DAPL_ACK_TIMER", "x")
	a = fillEPAttr(EPAttr{}, 0)
	assert.Equal(t, DefaultRetryCount, a.RetryCount, "out of range: the default")
	assert.Equal(t, DefaultACKTimeout, a.ACKTimeout)
}

// The EP reports the retransmission settings it connects with, and refuses
// values out of range.
func TestEPRetransmitAttributes(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	evd, err := ia.CreateEVD(8, EVDDTOFlag)
	require.NoError(t, err)
	t.Cleanup(func() { evd.Free() })
	for _, tc := range []struct {
		in, want EPAttr
	}{
		{EPAttr{}, EPAttr{RetryCount: DefaultRetryCount, ACKTimeout: DefaultACKTimeout}},
		{EPAttr{RetryCount: 2, ACKTimeout: 18}, EPAttr{RetryCount: 2, ACKTimeout: 18}},
	} {
		ep, err := ia.CreateEP(pz, evd, evd, nil, &tc.in)
		require.NoError(t, err)
		p, err := ep.Query()
		require.NoError(t, err)
		assert.Equal(t, tc.want.RetryCount, p.Attr.RetryCount)
		assert.Equal(t, tc.want.ACKTimeout, p.Attr.ACKTimeout)
		require.NoError(t, ep.Free())
	}
	ep, err := ia.CreateEP(pz, evd, evd, nil, nil)
	require.NoError(t, err)
	p, err := ep.Query()
	require.NoError(t, err)
	assert.Equal(t, DefaultRetryCount, p.Attr.RetryCount, "CreateEP(nil) gets the defaults too")
	require.NoError(t, ep.Free())
	for _, bad := range []EPAttr{{RetryCount: 8}, {RetryCount: -1}, {ACKTimeout: 32}, {ACKTimeout: -1}} {
		ep, err := ia.CreateEP(pz, evd, evd, nil, &bad)
		requireType(t, err, InvalidParameter, "%+v", bad)
		assert.Nil(t, ep)
	}
}

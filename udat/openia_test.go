//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown IA name is DAT_PROVIDER_NOT_FOUND, on a machine with RDMA
// devices and on one without any.
func TestOpenIAUnknownName(t *testing.T) {
	t.Setenv(DatConfEnv, "../testdata/datconf/empty.conf")
	ia, err := OpenIA("no-such-ia0", 8)
	require.Error(t, err)
	assert.Nil(t, ia)
	assert.ErrorIs(t, err, ErrProviderNotFound)
}

// An asynchronous EVD larger than the device's largest CQ is an invalid
// parameter, not an out-of-memory crash (found by FuzzOpenIAName's author:
// OpenIA allocated the queue whole, 216 bytes an event).
func TestOpenIAAsyncEVDTooLarge(t *testing.T) {
	dev := deviceName(t)
	for _, n := range []int{1 << 24, 1 << 40, 1 << 62} {
		ia, err := OpenIA(dev, n)
		requireCode(t, err, InvalidParameter|InvalidArg2, "asyncEVDQLen %d", n)
		assert.Nil(t, ia)
	}
	ia, err := OpenIA(dev, 1024)
	require.NoError(t, err)
	require.NoError(t, ia.Close(CloseGracefulFlag))
}

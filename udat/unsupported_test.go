//go:build !linux || !cgo

package udat

// Host tests of the build without RDMA support (not Linux, or cgo
// disabled): CGO_ENABLED=0 go test ./udat/. Nil and zero-value handles are
// covered by TestNilHandles and TestZeroValueHandles, which run here too.

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OpenIA fails with DAT_MODEL_NOT_SUPPORTED, which is also
// errors.ErrUnsupported, whatever the name: a device, a network interface,
// a dat.conf provider or nothing known.
func TestOpenIAUnsupported(t *testing.T) {
	t.Setenv(DatConfEnv, "../testdata/datconf/rxe.conf")
	for _, name := range []string{"rxe0", "lo", "ofa-v2-cma-roe-eth0", "no-such-ia0", "192.0.2.1"} {
		ia, err := OpenIA(name, 8)
		require.Error(t, err, name)
		assert.Nil(t, ia, name)

		assert.ErrorIs(t, err, errors.ErrUnsupported, name)
		var de *Error
		require.ErrorAs(t, err, &de, name)
		assert.Equal(t, ClassError|ModelNotSupported, de.Code, name)
		assert.Equal(t, ModelNotSupported, de.Code.Type(), name)
		assert.Equal(t, NoSubtype, de.Code.Subtype(), name)
		assert.Equal(t, "dat_ia_open", de.Op, name)
		assert.Equal(t, ClassError|ModelNotSupported, CodeOf(err), name)

		// The package's comparisons by DAT type still hold.
		assert.ErrorIs(t, err, ErrModelNotSupported, name)
		assert.NotErrorIs(t, err, ErrProviderNotFound, name)
		assert.NotErrorIs(t, err, ErrInternalError, name)
		assert.Contains(t, err.Error(), "DAT_MODEL_NOT_SUPPORTED", name)
	}
}

// Bad arguments still get their own DAT errors first.
func TestOpenIAUnsupportedBadArguments(t *testing.T) {
	_, err := OpenIA("", 8)
	requireCode(t, err, InvalidParameter|InvalidArg1)
	assert.NotErrorIs(t, err, errors.ErrUnsupported)
	_, err = OpenIA("rxe0", -1)
	requireCode(t, err, InvalidParameter|InvalidArg2)
}

// The registry side needs no device: dat.conf is read as on Linux.
func TestProvidersUnsupported(t *testing.T) {
	t.Setenv(DatConfEnv, "../testdata/datconf/rxe.conf")
	ps, err := Providers()
	require.NoError(t, err)
	require.NotEmpty(t, ps)
	assert.Equal(t, "ofa-v2-cma-roe-eth0", ps[0].Name)
	assert.Equal(t, "eth0", ps[0].NetDev())
}

// dat_ib_open_query fails as dat_ia_open does, and a nil handle closes as
// an invalid one.
func TestOpenQueryUnsupported(t *testing.T) {
	q, _, _, err := OpenQuery("rxe0")
	require.Nil(t, q)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	requireCode(t, err, ModelNotSupported)
	requireCode(t, (*IAQuery)(nil).Close(), InvalidHandle|InvalidHandleIA)
}

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

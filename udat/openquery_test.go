//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// dat_ib_open_query gives the attributes dat_ia_query gives on an IA of the
// same device, and its handle closes once.
func TestOpenQuery(t *testing.T) {
	ia := openIA(t)
	wantA, wantP, err := ia.Query()
	require.NoError(t, err)

	q, a, p, err := OpenQuery(ia.dev)
	require.NoError(t, err)
	require.Equal(t, wantA, a)
	require.Equal(t, wantP, p)
	require.NoError(t, q.Close())
	requireCode(t, q.Close(), InvalidHandle|InvalidHandleIA, "closed twice")
	requireCode(t, (*IAQuery)(nil).Close(), InvalidHandle|InvalidHandleIA)
	requireCode(t, (&IAQuery{}).Close(), InvalidHandle|InvalidHandleIA)

	_, _, _, err = OpenQuery("")
	requireCode(t, err, InvalidParameter|InvalidArg1)
	_, openErr := OpenIA("no-such-ia0", 8)
	_, _, _, err = OpenQuery("no-such-ia0")
	require.Equal(t, CodeOf(openErr), CodeOf(err), "a bad name fails as in OpenIA")
}

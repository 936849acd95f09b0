//go:build linux && cgo

package udat

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/datpeer"
	"github.com/udapl-go/udapl/internal/devtest"
)

// The C datpeer (testdata/datpeer), for the tests that compare udat with
// the C reference: TestIAQueryIBAttributesMatchC here, the interop tests in
// package udat_test (which alone can import the Go peer, as it imports
// udat).

const dpRunLimit = datpeer.RunLimit

// BuildDatPeer is buildDatPeer for package udat_test.
var BuildDatPeer = buildDatPeer

// buildDatPeer compiles the C datpeer. A missing compiler or libdat2 fails
// the test: it is a device test, and must not pass by skipping.
func buildDatPeer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "datpeer")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, datpeer.Build(ctx, bin), "only a host-only run (%s=1) skips this test", devtest.HostOnlyEnv)
	return bin
}

package devtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
)

// TestDevicePresent proves that device tests run where the device is: it
// fails (never skips, unless the run is host-only) when rxe0 is missing or its
// port is not ACTIVE.
func TestDevicePresent(t *testing.T) {
	dev := devtest.Require(t)
	state, err := os.ReadFile(filepath.Join("/sys/class/infiniband", dev, "ports/1/state"))
	require.NoError(t, err, "RDMA device %s not found: run device tests inside the VM (make test)", dev)
	assert.Contains(t, strings.TrimSpace(string(state)), "ACTIVE")
}

func TestDeviceDefault(t *testing.T) {
	t.Setenv(devtest.DeviceEnv, "")
	assert.Equal(t, "rxe0", devtest.Device())
	t.Setenv(devtest.DeviceEnv, "siw0")
	assert.Equal(t, "siw0", devtest.Device())
}

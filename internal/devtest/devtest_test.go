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
// fails (never skips, unless the run is host-only) when the device (rxe0, or
// siw0 with UDAPL_RDMA=siw) is missing or its port is not ACTIVE.
func TestDevicePresent(t *testing.T) {
	dev := devtest.Require(t)
	state, err := os.ReadFile(filepath.Join("/sys/class/infiniband", dev, "ports/1/state"))
	require.NoError(t, err, "RDMA device %s not found: run device tests inside the VM (make test)", dev)
	assert.Contains(t, strings.TrimSpace(string(state)), "ACTIVE")
}

func TestDeviceDefault(t *testing.T) {
	t.Setenv(devtest.DeviceEnv, "")
	t.Setenv(devtest.RDMAEnv, "")
	assert.Equal(t, "rxe0", devtest.Device())
	t.Setenv(devtest.RDMAEnv, "rxe")
	assert.Equal(t, "rxe0", devtest.Device())
	t.Setenv(devtest.RDMAEnv, "siw")
	assert.Equal(t, "siw0", devtest.Device())
	t.Setenv(devtest.DeviceEnv, "rxe1")
	assert.Equal(t, "rxe1", devtest.Device(), "%s wins over %s", devtest.DeviceEnv, devtest.RDMAEnv)
	t.Setenv(devtest.RDMAEnv, "")
	t.Setenv(devtest.DeviceEnv, "siw0")
	assert.Equal(t, "siw0", devtest.Device())
}

// Package devtest decides what a test does when it needs an RDMA device.
//
// Device tests run inside the Soft-RoCE VM (scripts/vmexec), or with
// UDAPL_RDMA=siw in the same VM on soft-iWARP (siw0). A test that finds
// no device fails, so that a device test never passes by skipping; only a run
// that is explicitly host-only (UDAPL_HOST_ONLY=1, set by `make test-host`)
// skips them.
package devtest

import (
	"os"
	"testing"
)

// HostOnlyEnv is the environment variable that marks a host-only test run.
const HostOnlyEnv = "UDAPL_HOST_ONLY"

// DeviceEnv names the RDMA device the tests use; when unset, the device the
// VM creates for RDMAEnv.
const DeviceEnv = "UDAPL_DEVICE"

// RDMAEnv is the kind of device the test VM creates (scripts/vmtest.sh):
// rxe (the default, device rxe0) or siw (device siw0).
const RDMAEnv = "UDAPL_RDMA"

// HostOnly reports whether this run skips device tests on purpose.
func HostOnly() bool { return os.Getenv(HostOnlyEnv) == "1" }

// Device returns the device name the tests should open.
func Device() string {
	if d := os.Getenv(DeviceEnv); d != "" {
		return d
	}
	if os.Getenv(RDMAEnv) == "siw" {
		return "siw0"
	}
	return "rxe0"
}

// Require marks t as a device test. In a host-only run it skips t; otherwise
// it returns and the test must fail if the device cannot be opened.
func Require(t testing.TB) string {
	t.Helper()
	if HostOnly() {
		t.Skipf("device test skipped: %s=1 (host-only run)", HostOnlyEnv)
	}
	return Device()
}

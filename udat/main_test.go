package udat

import (
	"flag"
	"os"
	"testing"

	"github.com/udapl-go/udapl/internal/devtest"
)

// deviceExamples matches the examples, which all open the RDMA device.
// Tests skip themselves in a host-only run (devtest.Require); examples
// cannot, so a host-only run skips them by name. In the VM they all run.
const deviceExamples = `^Example`

func TestMain(m *testing.M) {
	flag.Parse()
	if devtest.HostOnly() {
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
			f.Value.Set(deviceExamples)
		}
	}
	os.Exit(m.Run())
}

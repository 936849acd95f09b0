package udat

import (
	"flag"
	"os"
	"testing"

	"github.com/udapl-go/udapl/internal/devtest"
)

// deviceExamples are the examples that open the RDMA device. Tests skip
// themselves in a host-only run (devtest.Require); examples cannot, so a
// host-only run skips these by name. In the VM they all run.
const deviceExamples = `^(Example_sendReceive|ExampleEP_PostRDMARead|ExampleEP_PostSend_errors|ExampleSRQ_PostRecv|ExampleEVD_PostSE|ExampleEP_PostRequests)$`

func TestMain(m *testing.M) {
	flag.Parse()
	if devtest.HostOnly() {
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
			f.Value.Set(deviceExamples)
		}
	}
	os.Exit(m.Run())
}

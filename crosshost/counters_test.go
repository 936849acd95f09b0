package crosshost

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/udapl-go/udapl/internal/devtest"
)

// deviceCounters reads the hardware counters of this host's RDMA device
// (on rxe: retries, sequence NAKs, retries exceeded, duplicate requests...),
// which tell why a connection broke or slowed down. Counters that cannot be
// read are left out.
func deviceCounters() map[string]int64 {
	files, _ := filepath.Glob("/sys/class/infiniband/" + devtest.Device() + "/ports/1/hw_counters/*")
	c := make(map[string]int64, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			c[filepath.Base(f)] = v
		}
	}
	return c
}

// logCountersAtEnd logs, when t ends (passed or failed), the device
// counters that changed during t.
func logCountersAtEnd(t *testing.T) {
	before := deviceCounters()
	t.Cleanup(func() {
		after := deviceCounters()
		var changed []string
		for k, v := range after {
			if d := v - before[k]; d != 0 {
				changed = append(changed, k+"="+strconv.FormatInt(d, 10))
			}
		}
		sort.Strings(changed)
		t.Logf("device counters on A during the test: %s", strings.Join(changed, " "))
	})
}

package udat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// The provider-specific attributes that say what the device can do follow
// its transport and atomic_cap: all four, TRUE or FALSE, in C's order and
// last but DAT_COUNTERS, as on rxe. A unit test: it needs no device.
func TestIACapabilityAttrsFollowTransport(t *testing.T) {
	const atomicHCA = 1 // IBV_ATOMIC_HCA
	for _, c := range []struct {
		name      string
		transport cverbs.Transport
		atomicCap int
		ext       Extension
		want      [4]string // capabilityAttrs' values
	}{
		{"RoCE", cverbs.TransportIB, atomicHCA, ExtensionIB, [4]string{"TRUE", "TRUE", "TRUE", "TRUE"}},
		{"RoCE without atomics", cverbs.TransportIB, atomicNone, ExtensionIB, [4]string{"TRUE", "FALSE", "FALSE", "TRUE"}},
		// C's cma provider on siw0: extension_supported 0, all four FALSE.
		{"iWARP", cverbs.TransportIWARP, atomicNone, ExtensionNone, [4]string{"FALSE", "FALSE", "FALSE", "FALSE"}},
		{"iWARP claiming atomics", cverbs.TransportIWARP, atomicHCA, ExtensionNone, [4]string{"FALSE", "FALSE", "FALSE", "FALSE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ia := &IA{dev: "dev0", transport: c.transport}
			ia.devAttr.AtomicCap = c.atomicCap
			attrs := ia.providerSpecificAttrs()
			require.Greater(t, len(attrs), len(capabilityAttrs)+1)
			// Last, where a C library built with counters lists it.
			require.Equal(t, NamedAttr{countersAttr, "TRUE"}, attrs[len(attrs)-1])
			attrs = attrs[:len(attrs)-1]
			var want []NamedAttr
			for i, name := range capabilityAttrs {
				want = append(want, NamedAttr{name, c.want[i]})
			}
			tail := len(attrs) - len(capabilityAttrs)
			assert.Equal(t, want, attrs[tail:])
			assert.Equal(t, "DAT_IB_PORT_NUMBER", attrs[tail-1].Name)
			for _, a := range attrs[:tail] {
				assert.NotContains(t, capabilityAttrs, a.Name, "listed twice")
			}
			assert.Equal(t, c.ext, ia.extension())
			ib := c.transport == cverbs.TransportIB
			assert.Equal(t, ib, ia.hasUD())
			assert.Equal(t, ib, ia.hasImmediate())
			assert.Equal(t, ib && c.atomicCap != atomicNone, ia.hasAtomics())
		})
	}
}

//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// On whatever device the tests use, the IA has the IPv4 address of the
// device's network interface (on iWARP, found by the MAC address in GID 0),
// reports the extensions of its transport, and a PSP listens for UD
// connection requests only where the device has UD.
func TestIAOnItsTransport(t *testing.T) {
	ia := openIA(t)
	a, p, err := ia.Query()
	require.NoError(t, err)
	require.NotEmpty(t, a.NetDev)
	assert.Equal(t, ipv4Of(a.NetDev), ia.Address())
	assert.Equal(t, ia.Address(), a.Address)
	iwarp := ia.vctx.Transport() == cverbs.TransportIWARP
	t.Logf("%s (%v) on %s, %v", a.AdapterName, ia.vctx.Transport(), a.NetDev, a.Address)
	attr := map[string]string{}
	for _, na := range p.ProviderSpecificAttr {
		attr[na.Name] = na.Value
	}
	assert.Equal(t, IBExtensionVersion, a.ExtensionVersion) // even where none, as C says
	if iwarp {
		assert.Equal(t, ExtensionNone, a.ExtensionSupported)
		for _, name := range capabilityAttrs {
			assert.Equal(t, "FALSE", attr[name], name)
		}
	} else {
		assert.Equal(t, ExtensionIB, a.ExtensionSupported)
		assert.Equal(t, "TRUE", attr["DAT_EXTENSION_INTERFACE"])
		assert.Equal(t, "TRUE", attr["DAT_IB_IMMED_DATA"])
	}

	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	q := nextConnQual()
	psp, err := ia.CreatePSP(q, crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	assert.Equal(t, !iwarp, psp.udID != nil, "a UD listener")
	_, err = ia.CreatePSP(q, crEVD, PSPConsumerFlag)
	requireCode(t, err, ConnQualInUse)
	require.NoError(t, psp.Free())
	// Freed, the connection qualifier is free again.
	psp, err = ia.CreatePSP(q, crEVD, PSPConsumerFlag)
	require.NoError(t, err)
	require.NoError(t, psp.Free())
	require.NoError(t, crEVD.Free())
}

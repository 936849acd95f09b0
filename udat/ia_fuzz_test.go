package udat

// FuzzOpenIAName feeds IA names to OpenIA of ia.go: in the VM some of them
// open rxe0; in a build without RDMA support every name but "" fails with
// DAT_MODEL_NOT_SUPPORTED. It has no build constraint: it builds and runs
// on every platform, its seeds (f.Add) in every go test; make fuzz runs it
// on the host.

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
	"github.com/udapl-go/udapl/internal/devtest"
)

// fuzzIAConf is the dat.conf FuzzOpenIAName points DAT_OVERRIDE at: entries
// that name the VM's device, netdev and address, and odd ones.
var fuzzIAConf = strings.Join([]string{
	`fz-dev u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "rxe0 1" ""`,
	`fz-dev u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "no-such-dev 1" ""`,
	`fz-netdev u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "d0 0" ""`,
	`fz-ip u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "192.0.2.1 0" ""`,
	`fz-ip6 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "::1 0" ""`,
	`fz-ipzone u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fe80::1%d0 0" ""`,
	`fz-lo u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "lo 0" ""`,
	`fz-empty u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "" ""`,
	`fz-blank u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "  " ""`,
	`fz-unquoted u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 rxe0 ""`,
	"fz-nul u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"rxe0\x00 1\" \"\"",
	"fz-uni u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"\u00fc0 0\" \"\"",
	`fz-long u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "` + strings.Repeat("n", 300) + ` 0" ""`,
	`fz-self u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fz-self 0" ""`,
	`fz-chain u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fz-dev 0" ""`,
	`bad line`,
}, "\n") + "\n"

func FuzzOpenIAName(f *testing.F) {
	conf := filepath.Join(f.TempDir(), "dat.conf")
	require.NoError(f, os.WriteFile(conf, []byte(fuzzIAConf), 0o600))
	f.Setenv(DatConfEnv, conf)
	providers, _ := Providers()
	// Without RDMA support (not Linux, or no cgo) nothing opens.
	_, devErr := cverbs.Devices()
	rdma := !errors.Is(devErr, cverbs.ErrUnsupported)
	for _, s := range []string{
		"", "rxe0", "rxe1", "d0", "lo", "eth0", "192.0.2.1", "::ffff:192.0.2.1", "127.0.0.1", "::1",
		"0.0.0.0", "fe80::1%d0", "192.0.2.1:4791", "[::1]", "192.0.2.256",
		"fz-dev", "fz-netdev", "fz-ip", "fz-ip6", "fz-ipzone", "fz-lo", "fz-empty", "fz-blank",
		"fz-unquoted", "fz-nul", "fz-uni", "fz-long", "fz-self", "fz-chain", "ofa-v2-ib0",
		"rxe0\x00", "\x00", "rxe0 ", " rxe0", "RXE0", "\u00fc0", "\xff\xfe", "../rxe0", "rxe0/1",
		strings.Repeat("a", 5000), strings.Repeat("rxe0", 64),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ia, err := OpenIA(name, 8)
		if err != nil {
			require.Nil(t, ia)
			var de *Error
			require.ErrorAs(t, err, &de, "OpenIA(%q) returns a *udat.Error", name)
			require.True(t, de.Code.IsError(), "%v", err)
			if name == "" {
				require.ErrorIs(t, err, ErrInvalidParameter)
				return
			}
			if !rdma {
				require.ErrorIs(t, err, ErrModelNotSupported, "OpenIA(%q)", name)
				return
			}
			// Every name that opens nothing is an unknown provider.
			require.ErrorIs(t, err, ErrProviderNotFound, "OpenIA(%q)", name)
			return
		}
		require.True(t, rdma, "OpenIA(%q) opened an IA without RDMA support", name)
		require.NotNil(t, ia)
		defer func() { require.NoError(t, ia.Close(CloseAbruptFlag)) }()
		// Only a name that means something opens an IA: a device, a network
		// interface, an address or a provider of the dat.conf file.
		known := name == devtest.Device()
		if _, err := net.InterfaceByName(name); err == nil {
			known = true
		}
		if _, err := netip.ParseAddr(name); err == nil {
			known = true
		}
		for _, p := range providers {
			known = known || p.Name == name
		}
		require.True(t, known, "OpenIA(%q) opened an IA", name)
		a, _, err := ia.Query()
		require.NoError(t, err)
		require.NotEmpty(t, a.AdapterName)
		require.NotNil(t, ia.AsyncEVD())
	})
}

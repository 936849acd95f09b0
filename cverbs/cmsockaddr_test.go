//go:build linux && cgo

package cverbs

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// sockaddr writes, in Go, the bytes cverbs_sockaddr writes in C.
func TestSockaddrMatchesC(t *testing.T) {
	for _, s := range []string{
		"192.0.2.1:4791", "0.0.0.0:0", "255.255.255.255:65535", "[::ffff:192.0.2.7]:1",
		"[2001:db8::1]:18515", "[fe80::1%1]:7", "[::1]:65535",
	} {
		ap := netip.MustParseAddrPort(s)
		g, c, ok := sockaddrC(ap)
		require.True(t, ok, s)
		require.Equal(t, c, g, s)
	}
	_, _, ok := sockaddrC(netip.AddrPort{})
	require.False(t, ok)
}

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The kernel release decides whether Soft-RoCE runs its requester inside
// the post (before Linux 6.10).
func TestReleaseAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"6.1.0-56-amd64\n", false},
		{"6.9.12", false},
		{"6.10.0", true},
		{"6.12.117+deb12-amd64\n", true},
		{"5.19.0-rc1", false},
		{"7.0.1", true},
		{"", false},
		{"garbage", false},
	} {
		assert.Equal(t, c.want, releaseAtLeast(c.release, 6, 10), "%q", c.release)
	}
}

// A one-CPU client takes a second P where its posts are long system calls
// and nothing else needs the CPU: Soft-RoCE's RDMA before Linux 6.10,
// soft-iWARP's sends.
func TestSecondP(t *testing.T) {
	const otherVendor = 0x02c9 // a hardware adapter's
	for _, c := range []struct {
		vendor   uint32
		op       opKind
		since610 bool
		want     bool
	}{
		{softRoCEVendorID, opWrite, false, true},
		{softRoCEVendorID, opRead, false, true},
		{softRoCEVendorID, opSend, false, false},
		{softRoCEVendorID, opWrite, true, false},
		{softRoCEVendorID, opSend, true, false},
		{softIWARPVendorID, opSend, false, true},
		{softIWARPVendorID, opSend, true, true},
		{softIWARPVendorID, opWrite, false, false},
		{softIWARPVendorID, opRead, true, false},
		{otherVendor, opSend, false, false},
		{otherVendor, opWrite, false, false},
	} {
		assert.Equal(t, c.want, secondP(c.vendor, c.op, c.since610), "vendor %#x, %v, since 6.10 %v", c.vendor, c.op, c.since610)
	}
}

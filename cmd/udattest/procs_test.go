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

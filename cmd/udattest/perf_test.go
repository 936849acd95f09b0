package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/udapl-go/udapl/udat"
)

// Every third operation asks for a completion, and so does the last.
func TestSignallerFlags(t *testing.T) {
	const d, s = udat.CompletionDefault, udat.CompletionSuppress
	f := signaller{every: 3, left: 3, n: 7}
	var got []udat.CompletionFlags
	for i := 1; i <= 7; i++ {
		got = append(got, f.next(i))
	}
	assert.Equal(t, []udat.CompletionFlags{s, s, d, s, s, d, d}, got)
}

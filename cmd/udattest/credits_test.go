package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreditWord(t *testing.T) {
	for _, n := range []int{0, 1, 512, 1<<32 - 1, 1 << 32, 1<<32 + 5} {
		c, ok := unpackCredit(packCredit(n))
		require.True(t, ok, "count %d", n)
		assert.Equal(t, uint32(n), c)
	}
	_, ok := unpackCredit(0)
	assert.False(t, ok, "the word before the first write")
	// A word that holds some bytes of the old count and some of the new.
	old, next := packCredit(0x1ff), packCredit(0x200)
	torn := old&^0xff | next&0xff
	_, ok = unpackCredit(torn)
	assert.False(t, ok, "a torn word")
}

func TestSendCreditsCovers(t *testing.T) {
	var word uint64
	cr := sendCredits{word: &word}
	assert.False(t, cr.covers(1), "no credit before the server's first write")
	word = packCredit(512)
	assert.True(t, cr.covers(1))
	assert.True(t, cr.covers(512))
	assert.False(t, cr.covers(513))
	assert.Equal(t, 512, cr.known)
	word = packCredit(0x1ff) &^ 0xff // torn
	assert.False(t, cr.covers(513))
	assert.Equal(t, 512, cr.known, "a torn word leaves the count")
	// The count goes on past 32 bits.
	cr.known = 1<<32 - 100
	word = packCredit(1<<32 + 400)
	assert.True(t, cr.covers(1<<32+400))
	assert.Equal(t, 1<<32+400, cr.known)

	off := noCredits()
	assert.True(t, off.covers(math.MaxInt), "without credits every send is covered, the word never read")
}

//go:build race

package cverbs

// The race detector adds allocations of its own, so allocation counts are
// only checked without it.
const raceEnabled = true

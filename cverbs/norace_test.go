//go:build !race

package cverbs

const raceEnabled = false

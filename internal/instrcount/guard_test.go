package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guardProfile is a profile of the guard test run with rounds rounds: the
// Write row's post costs 90 per round and its dequeue 30, plus a start-up
// cost of 1000 each that the pair of runs cancels out. The post calls
// into a function of its own (inclusive cost).
func guardProfile(t *testing.T, rounds int64) *Profile {
	const rig = "github.com/udapl-go/udapl/udat.(*guardRig)."
	text := fmt.Sprintf(`version: 1
cmd: udat.test
events: Ir
ob=udat.test
fl=guard.go
fn=%[1]scountWritePost
0 %[2]d
cfn=github.com/udapl-go/udapl/udat.(*EP).PostRDMAWrite
calls=%[3]d 0
0 %[4]d
fn=%[1]scountWriteDequeue
0 %[5]d
fn=%[1]scountWrite16Post-fm
0 7
`, rig, 1000+10*rounds, rounds, 80*rounds, 1000+30*rounds)
	p, err := parseProfile(strings.NewReader(text))
	require.NoError(t, err)
	return p
}

func TestGuard(t *testing.T) {
	p1, p2 := guardProfile(t, 10), guardProfile(t, 50)

	rows, err := readBudget(strings.NewReader("# row DTOs budget\nWrite 1 120 # measured 120\n\nWrite 4 29\n"))
	require.NoError(t, err)
	res, err := measureGuard(rows, 10, p1, 50, p2)
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, 120.0, res[0].PerDTO)
	assert.Equal(t, 30.0, res[1].PerDTO)
	var out bytes.Buffer
	assert.False(t, writeGuard(&out, res), "30 per DTO is over a budget of 29")
	assert.Contains(t, out.String(), "OVER BUDGET")
	assert.True(t, writeGuard(&out, res[:1]), "120 is within 120")

	// A row must measure both of its methods: a wrapper (-fm) is not one.
	_, err = measureGuard([]guardRow{{"Write16", 16, 100}}, 10, p1, 50, p2)
	assert.ErrorContains(t, err, "countWrite16Post")
	_, err = measureGuard([]guardRow{{"Read", 1, 100}}, 10, p1, 50, p2)
	assert.Error(t, err)

	for _, bad := range []string{"", "# only a comment\n", "Write 1\n", "Write x 10\n", "Write 1 0\n"} {
		_, err := readBudget(strings.NewReader(bad))
		assert.Error(t, err, "%q", bad)
	}
}

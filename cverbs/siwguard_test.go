//go:build linux && cgo

package cverbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestManySmallQPsOnOneCQ: a large CQ and many small QPs on it, the shape of
// a server with one EVD for its connections. Without the guard of
// siwguard.go, soft-iWARP refuses the 40th QP (EIO), in C as in Go.
func TestManySmallQPsOnOneCQ(t *testing.T) {
	r := newRig(t)
	cq, err := r.ctx.NewCQ(8192, nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, cq.Close()) }()
	const n = 200
	for i := range n {
		qp, err := r.pd.NewQP(QPInitAttr{SendCQ: cq, RecvCQ: cq, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1})
		require.NoError(t, err, "QP %d of %d", i+1, n)
		defer func() { assert.NoError(t, qp.Close()) }()
	}
}

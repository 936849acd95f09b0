//go:build linux && cgo

package cverbs

// Allocation checks and benchmarks for the data path.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeBatch builds n RDMA writes of size bytes from a to b; only the last
// is signalled.
func writeBatch(a, b *end, n, size int) []SendWR {
	wrs := make([]SendWR, n)
	for i := range wrs {
		wrs[i] = SendWR{ID: uint64(i), Op: OpRDMAWrite, SGL: []SGE{a.buf.sge(i*size, size)},
			RemoteAddr: b.buf.addr(i * size), RKey: b.buf.mr.RKey}
	}
	wrs[n-1].Flags = SendSignaled
	return wrs
}

// postAndReap posts wrs and polls until the one signalled completion
// arrives. It does not allocate, so it reports failures through the return
// value rather than testing helpers.
func postAndReap(qp *QP, cq *CQ, wrs []SendWR, wc []WC) error {
	if _, err := qp.PostSend(wrs); err != nil {
		return err
	}
	for spins := 0; ; spins++ {
		n, err := cq.Poll(wc)
		if err != nil {
			return err
		}
		if n > 0 {
			if n != 1 || wc[0].Status != WCSuccess {
				return errBadCompletion
			}
			return nil
		}
		if spins > 1<<26 {
			return errNoCompletion
		}
	}
}

var (
	errBadCompletion = fmt.Errorf("unexpected completion")
	errNoCompletion  = fmt.Errorf("no completion")
)

func TestPostPollAllocs(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	wrs := writeBatch(a, b, 16, 64)
	wc := make([]WC, 8)
	var failed error
	allocs := testing.AllocsPerRun(50, func() {
		if err := postAndReap(a.qp, a.scq, wrs, wc); err != nil && failed == nil {
			failed = err
		}
	})
	require.NoError(t, failed)

	// Receives: 4 per run, within the receive queue depth.
	recvs := make([]RecvWR, 4)
	for i := range recvs {
		recvs[i] = RecvWR{ID: uint64(i), SGL: []SGE{b.buf.sge(i*64, 64), b.buf.sge(4096+i*64, 64)}}
	}
	recvAllocs := testing.AllocsPerRun(40, func() {
		if _, err := b.qp.PostRecv(recvs); err != nil && failed == nil {
			failed = err
		}
	})
	require.NoError(t, failed)

	// Polling an empty CQ.
	pollAllocs := testing.AllocsPerRun(100, func() {
		if _, err := b.rcq.Poll(wc); err != nil && failed == nil {
			failed = err
		}
	})
	require.NoError(t, failed)

	t.Logf("allocs per run: post+poll %v, post recv %v, poll %v (race detector: %v)", allocs, recvAllocs, pollAllocs, raceEnabled)
	if !raceEnabled {
		require.Zero(t, allocs, "PostSend + Poll")
		require.Zero(t, recvAllocs, "PostRecv")
		require.Zero(t, pollAllocs, "Poll")
	}
}

func BenchmarkPostSend(b *testing.B) {
	r := newRig(b)
	qa, qb := r.newPair(b, endOpts{}, endOpts{})
	wc := make([]WC, 8)
	for _, n := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			wrs := writeBatch(qa, qb, n, 64)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if err := postAndReap(qa.qp, qa.scq, wrs, wc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "WRs/s")
		})
	}
}

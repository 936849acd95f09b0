//go:build linux && cgo

package udat

// Posting is safe from many goroutines at once on one EP or SRQ (the C
// reference is not). Run with -race.

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

func TestConcurrentPosting(t *testing.T) {
	const (
		workers = 8
		perW    = 40
		total   = workers * perW
	)
	p := newPairForTraffic(t, 64, total)
	c, s := p.client, p.server

	// Receives posted concurrently.
	var g errgroup.Group
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			for i := 0; i < perW; i++ {
				k := w*perW + i
				if err := s.ep.PostRecv([]LMRTriplet{s.lmr.Triplet(k*64, 64)}, uint64(k), 0); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())

	// Sends posted concurrently while another goroutine reaps the send
	// completions, and one waits for the receive completions.
	sendCompletions := reapSendsInBackground(t, c.req, total)
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			for i := 0; i < perW; i++ {
				k := uint64(w*perW + i)
				for {
					err := c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(int(k%64)*8, 8)}, k, 0)
					if err == nil {
						break
					}
					if CodeOf(err).Type() != InsufficientResources {
						return err
					}
					time.Sleep(time.Millisecond) // the queue is full: let the reaper catch up
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	got := map[uint64]int{}
	for i := 0; i < total; i++ {
		d := waitDTO(t, s.recv)
		require.Equal(t, DTOSuccess, d.Status)
		got[d.Cookie]++
	}
	sent := sendCompletions()
	require.Len(t, got, total, "every receive cookie exactly once")
	require.Len(t, sent, total, "every send cookie exactly once")
	for _, n := range sent {
		require.Equal(t, 1, n)
	}
	requireEmpty(t, s.recv)
	requireEmpty(t, c.req)
}

// Concurrent RDMA reads and writes on one EP, with concurrent Dequeue calls
// reaping them.
func TestConcurrentRDMAAndDequeue(t *testing.T) {
	p := newPair(t, pairOpts{evdQLen: 256})
	c, s := p.client, p.server
	const n = 64
	var g errgroup.Group
	for w := 0; w < 4; w++ {
		g.Go(func() error {
			for i := 0; i < n/4; i++ {
				k := w*(n/4) + i
				var err error
				for {
					if k%2 == 0 {
						err = c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(k*16, 16)}, uint64(k), s.lmr.RMRTriplet(k*16, 16), 0)
					} else {
						err = c.ep.PostRDMARead([]LMRTriplet{c.lmr.Triplet(k*16, 16)}, uint64(k), s.lmr.RMRTriplet(k*16, 16), 0)
					}
					if err == nil || CodeOf(err).Type() != InsufficientResources {
						break
					}
					time.Sleep(time.Millisecond)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var r errgroup.Group
	deadline := time.Now().Add(30 * time.Second)
	for w := 0; w < 3; w++ {
		r.Go(func() error {
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) == n
				mu.Unlock()
				if done {
					return nil
				}
				ev, err := c.req.Dequeue()
				if err != nil {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				mu.Lock()
				if seen[ev.DTO.Cookie] || ev.DTO.Status != DTOSuccess {
					mu.Unlock()
					t.Errorf("duplicate or failed completion %+v", ev.DTO)
					return nil
				}
				seen[ev.DTO.Cookie] = true
				mu.Unlock()
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	require.NoError(t, r.Wait())
	require.Len(t, seen, n)
}

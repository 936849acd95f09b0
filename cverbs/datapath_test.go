//go:build linux && cgo

package cverbs

// Data-path device tests, run over a hand-connected QP pair and over an
// rdma_cm connection.

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

func TestManualPair(t *testing.T) {
	r := newRig(t)
	r.skipIfIWARP(t, "QPs reach RTS only through rdma_cm, never by hand (TestCMPair runs the same data path)")
	a, b := r.newPair(t, endOpts{}, endOpts{})
	runDataPath(t, r, a, b)
}

func TestCMPair(t *testing.T) {
	r := newRig(t)
	p := r.newCMPair(t, 7471, 7472)
	runDataPath(t, r, p.a, p.b)
	p.disconnect(t)
	if r.iwarp && !r.noQPState {
		// Soft-iWARP (which reports QP states from Linux 6.12 on) closes
		// gracefully: CLOSING, which it reports as SQD, then IDLE (INIT).
		st, err := p.a.qp.State()
		require.NoError(t, err)
		require.Contains(t, []QPState{QPSQD, QPInit, QPErr}, st)
		return
	}
	// rdma_disconnect moved the rdma_cm QPs to ERR.
	r.requireQPState(t, p.a.qp, QPErr)
}

// exchange runs recv on b's side and send on a's side concurrently: recv
// posts and polls receives, send posts and polls sends.
func exchange(t *testing.T, recv, send func() error) {
	t.Helper()
	var g errgroup.Group
	ready := make(chan struct{})
	g.Go(func() error {
		return recv()
	})
	g.Go(func() error {
		<-ready
		return send()
	})
	close(ready)
	require.NoError(t, g.Wait())
}

func runDataPath(t *testing.T, r *rig, a, b *end) {
	t.Run("SendRecv", func(t *testing.T) {
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:1000], 1)
		_, err := b.qp.PostRecv([]RecvWR{{ID: 100, SGL: []SGE{b.buf.sge(0, 4096)}}})
		require.NoError(t, err)
		var g errgroup.Group
		g.Go(func() error {
			wcs, err := pollOK(b.rcq, 1, WCRecv)
			if err != nil {
				return err
			}
			w := wcs[0]
			if w.WRID != 100 || w.ByteLen != 1000 || w.QPNum != b.qp.Num() || w.Flags&WCFlagWithImm != 0 {
				return fmt.Errorf("recv wc %+v", w)
			}
			return sameBytes("received", b.buf.b[:1000], a.buf.b[:1000])
		})
		g.Go(func() error {
			n, err := a.qp.PostSend([]SendWR{{ID: 1, Op: OpSend, Flags: SendSignaled, SGL: []SGE{a.buf.sge(0, 1000)}}})
			if err != nil || n != 1 {
				return fmt.Errorf("post send: n=%d err=%v", n, err)
			}
			wcs, err := pollOK(a.scq, 1, WCSend)
			if err == nil && wcs[0].WRID != 1 {
				err = fmt.Errorf("send wc %+v", wcs[0])
			}
			return err
		})
		require.NoError(t, g.Wait())
		// The rest of the receive buffer is untouched.
		require.NoError(t, sameBytes("tail", b.buf.b[1000:4096], make([]byte, 3096)))
	})

	t.Run("SendImm", func(t *testing.T) {
		r.skipIfIWARP(t, "no immediate data")
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:64], 2)
		_, err := b.qp.PostRecv([]RecvWR{{ID: 101, SGL: []SGE{b.buf.sge(0, 64)}}})
		require.NoError(t, err)
		_, err = a.qp.PostSend([]SendWR{{ID: 2, Op: OpSendImm, Flags: SendSignaled | SendSolicited,
			SGL: []SGE{a.buf.sge(0, 64)}, Imm: 0xdeadbeef}})
		require.NoError(t, err)
		mustPollOK(t, a.scq, 1, WCSend)
		wcs := mustPollOK(t, b.rcq, 1, WCRecv)
		require.NotZero(t, wcs[0].Flags&WCFlagWithImm)
		require.Equal(t, uint32(0xdeadbeef), wcs[0].Imm)
		require.NoError(t, sameBytes("received", b.buf.b[:64], a.buf.b[:64]))
	})

	t.Run("SendInline", func(t *testing.T) {
		if a.qp.Cap().MaxInline < 32 {
			t.Logf("device grants max_inline_data %d; inline send not exercised", a.qp.Cap().MaxInline)
			return
		}
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:32], 3)
		_, err := b.qp.PostRecv([]RecvWR{{ID: 102, SGL: []SGE{b.buf.sge(0, 64)}}})
		require.NoError(t, err)
		_, err = a.qp.PostSend([]SendWR{{ID: 3, Flags: SendSignaled | SendInline, SGL: []SGE{a.buf.sge(0, 32)}}})
		require.NoError(t, err)
		// Inline data is copied at post time: scribbling now changes nothing.
		clear(a.buf.b[:32])
		mustPollOK(t, a.scq, 1, WCSend)
		wcs := mustPollOK(t, b.rcq, 1, WCRecv)
		require.Equal(t, uint32(32), wcs[0].ByteLen)
		want := make([]byte, 32)
		fill(want, 3)
		require.NoError(t, sameBytes("received", b.buf.b[:32], want))
	})

	t.Run("RDMAWrite", func(t *testing.T) {
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:8192], 4)
		_, err := a.qp.PostSend([]SendWR{{ID: 4, Op: OpRDMAWrite, Flags: SendSignaled,
			SGL: []SGE{a.buf.sge(0, 8192)}, RemoteAddr: b.buf.addr(1024), RKey: b.buf.mr.RKey}})
		require.NoError(t, err)
		wcs := mustPollOK(t, a.scq, 1, WCRDMAWrite)
		require.Equal(t, uint64(4), wcs[0].WRID)
		requireWritten(t, b.buf.b[1024:1024+8192], a.buf.b[:8192])
		require.NoError(t, sameBytes("before", b.buf.b[:1024], make([]byte, 1024)))
	})

	t.Run("RDMAWriteImm", func(t *testing.T) {
		r.skipIfIWARP(t, "no immediate data")
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:300], 5)
		_, err := b.qp.PostRecv([]RecvWR{{ID: 103}}) // no SGE: the data goes by RDMA
		require.NoError(t, err)
		_, err = a.qp.PostSend([]SendWR{{ID: 5, Op: OpRDMAWriteImm, Flags: SendSignaled,
			SGL: []SGE{a.buf.sge(0, 300)}, RemoteAddr: b.buf.addr(0), RKey: b.buf.mr.RKey, Imm: 0x01020304}})
		require.NoError(t, err)
		mustPollOK(t, a.scq, 1, WCRDMAWrite)
		wcs := mustPollOK(t, b.rcq, 1, WCRecvRDMAWithImm)
		require.Equal(t, uint64(103), wcs[0].WRID)
		require.Equal(t, uint32(0x01020304), wcs[0].Imm)
		require.Equal(t, uint32(300), wcs[0].ByteLen)
		require.NoError(t, sameBytes("written", b.buf.b[:300], a.buf.b[:300]))
	})

	t.Run("RDMARead", func(t *testing.T) {
		a.buf.clear()
		b.buf.clear()
		fill(b.buf.b[4096:4096+5000], 6)
		_, err := a.qp.PostSend([]SendWR{{ID: 6, Op: OpRDMARead, Flags: SendSignaled,
			SGL: []SGE{a.buf.sge(100, 5000)}, RemoteAddr: b.buf.addr(4096), RKey: b.buf.mr.RKey}})
		require.NoError(t, err)
		wcs := mustPollOK(t, a.scq, 1, WCRDMARead)
		require.Equal(t, uint32(5000), wcs[0].ByteLen)
		require.NoError(t, sameBytes("read", a.buf.b[100:5100], b.buf.b[4096:4096+5000]))
	})

	t.Run("Atomics", func(t *testing.T) {
		r.skipIfIWARP(t, "no atomics")
		a.buf.clear()
		b.buf.clear()
		binary.NativeEndian.PutUint64(b.buf.b[8:], 40)
		_, err := a.qp.PostSend([]SendWR{
			{ID: 7, Op: OpAtomicFetchAdd, Flags: SendSignaled, SGL: []SGE{a.buf.sge(0, 8)},
				RemoteAddr: b.buf.addr(8), RKey: b.buf.mr.RKey, CompareAdd: 2},
			{ID: 8, Op: OpAtomicCmpSwap, Flags: SendSignaled | SendFence, SGL: []SGE{a.buf.sge(8, 8)},
				RemoteAddr: b.buf.addr(8), RKey: b.buf.mr.RKey, CompareAdd: 42, Swap: 7},
		})
		require.NoError(t, err)
		wcs, err := pollN(a.scq, 2, waitTimeout)
		require.NoError(t, err)
		for _, w := range wcs {
			require.Equal(t, WCSuccess, w.Status, "%+v", w)
		}
		assert.Equal(t, WCFetchAdd, wcs[0].Opcode)
		assert.Equal(t, WCCompSwap, wcs[1].Opcode)
		assert.Equal(t, uint64(40), binary.NativeEndian.Uint64(a.buf.b[0:]), "fetch-add old value")
		assert.Equal(t, uint64(42), binary.NativeEndian.Uint64(a.buf.b[8:]), "cmp-swap old value")
		assert.Equal(t, uint64(7), binary.NativeEndian.Uint64(b.buf.b[8:]), "remote after swap")
	})

	for _, n := range []int{1, 16, 128} {
		t.Run(fmt.Sprintf("Batch%d", n), func(t *testing.T) { testBatch(t, a, b, n) })
	}

	t.Run("MultiSGE", func(t *testing.T) {
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b, 9)
		gather := []SGE{a.buf.sge(0, 100), a.buf.sge(1000, 50), a.buf.sge(3000, 200)}
		scatter := []SGE{b.buf.sge(10000, 10), b.buf.sge(20000, 40), b.buf.sge(30000, 300)}
		_, err := b.qp.PostRecv([]RecvWR{{ID: 104, SGL: scatter}})
		require.NoError(t, err)
		_, err = a.qp.PostSend([]SendWR{{ID: 9, Flags: SendSignaled, SGL: gather}})
		require.NoError(t, err)
		mustPollOK(t, a.scq, 1, WCSend)
		wcs := mustPollOK(t, b.rcq, 1, WCRecv)
		require.Equal(t, uint32(350), wcs[0].ByteLen)

		var sent []byte
		for _, s := range gather {
			off := int(s.Addr - a.buf.addr(0))
			sent = append(sent, a.buf.b[off:off+int(s.Length)]...)
		}
		var got []byte
		for _, s := range scatter {
			off := int(s.Addr - b.buf.addr(0))
			got = append(got, b.buf.b[off:off+int(s.Length)]...)
		}
		require.NoError(t, sameBytes("scattered", got[:350], sent))
		require.NoError(t, sameBytes("beyond", got[350:], make([]byte, len(got)-350)))

		// Too many SGEs for the queue: EINVAL, nothing posted.
		many := make([]SGE, a.qp.Cap().MaxSendSGE+1)
		n, err := a.qp.PostSend([]SendWR{{ID: 10, Flags: SendSignaled}, {ID: 11, SGL: many}})
		requireOpErr(t, err, syscall.EINVAL)
		require.Zero(t, n)
		requireQuiet(t, a.scq, 50*time.Millisecond)
	})

	t.Run("Unsignalled", func(t *testing.T) {
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:16*256], 10)
		wrs := make([]SendWR, 16)
		for i := range wrs {
			wrs[i] = SendWR{ID: uint64(200 + i), Op: OpRDMAWrite, SGL: []SGE{a.buf.sge(i*256, 256)},
				RemoteAddr: b.buf.addr(i * 256), RKey: b.buf.mr.RKey}
		}
		wrs[15].Flags = SendSignaled
		n, err := a.qp.PostSend(wrs)
		require.NoError(t, err)
		require.Equal(t, 16, n)
		wcs := mustPollOK(t, a.scq, 1, WCRDMAWrite)
		require.Equal(t, uint64(215), wcs[0].WRID)
		requireQuiet(t, a.scq, 200*time.Millisecond)
		requireWritten(t, b.buf.b[:16*256], a.buf.b[:16*256])
	})

	t.Run("Concurrent", func(t *testing.T) {
		// Several goroutines post to one send queue; every WR completes once.
		const workers, perWorker, batch = 4, 32, 8
		a.buf.clear()
		b.buf.clear()
		fill(a.buf.b[:workers*perWorker*64], 11)
		var g errgroup.Group
		for w := range workers {
			g.Go(func() error {
				for i := 0; i < perWorker; i += batch {
					wrs := make([]SendWR, batch)
					for j := range wrs {
						k := w*perWorker + i + j
						wrs[j] = SendWR{ID: uint64(k), Op: OpRDMAWrite, Flags: SendSignaled,
							SGL: []SGE{a.buf.sge(k*64, 64)}, RemoteAddr: b.buf.addr(k * 64), RKey: b.buf.mr.RKey}
					}
					if _, err := a.qp.PostSend(wrs); err != nil {
						return err
					}
				}
				return nil
			})
		}
		var wcs []WC
		g.Go(func() error {
			var err error
			wcs, err = pollOK(a.scq, workers*perWorker, WCRDMAWrite)
			return err
		})
		require.NoError(t, g.Wait())
		seen := make(map[uint64]bool)
		for _, w := range wcs {
			require.False(t, seen[w.WRID], "duplicate completion %d", w.WRID)
			seen[w.WRID] = true
		}
		require.Len(t, seen, workers*perWorker)
		requireWritten(t, b.buf.b[:workers*perWorker*64], a.buf.b[:workers*perWorker*64])
	})
}

// testBatch sends n messages posted as one batch on each side.
func testBatch(t *testing.T, a, b *end, n int) {
	const size = 64
	a.buf.clear()
	b.buf.clear()
	fill(a.buf.b[:n*size], byte(n))
	recvs := make([]RecvWR, n)
	sends := make([]SendWR, n)
	for i := range n {
		recvs[i] = RecvWR{ID: uint64(1000 + i), SGL: []SGE{b.buf.sge(i*size, size)}}
		sends[i] = SendWR{ID: uint64(2000 + i), Flags: SendSignaled, SGL: []SGE{a.buf.sge(i*size, size)}}
	}
	k, err := b.qp.PostRecv(recvs)
	require.NoError(t, err)
	require.Equal(t, n, k)
	exchange(t, func() error {
		wcs, err := pollOK(b.rcq, n, WCRecv)
		if err != nil {
			return err
		}
		for i, w := range wcs {
			if w.WRID != uint64(1000+i) || w.ByteLen != size {
				return fmt.Errorf("recv %d: %+v", i, w)
			}
		}
		return sameBytes("received", b.buf.b[:n*size], a.buf.b[:n*size])
	}, func() error {
		k, err := a.qp.PostSend(sends)
		if err != nil || k != n {
			return fmt.Errorf("post: %d of %d: %v", k, n, err)
		}
		wcs, err := pollOK(a.scq, n, WCSend)
		if err != nil {
			return err
		}
		for i, w := range wcs {
			if w.WRID != uint64(2000+i) {
				return fmt.Errorf("send %d: %+v", i, w)
			}
		}
		return nil
	})
}

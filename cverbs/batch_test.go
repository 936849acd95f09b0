//go:build linux && cgo

package cverbs

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendBatchInPlace builds RDMA writes in place, their segments written
// straight into the batch's C memory, and checks every byte arrives; a
// segment list from elsewhere is copied in.
func TestSendBatchInPlace(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	const n, size = 3, 96
	fill(a.buf.b[:n*size], 7)
	b.buf.clear()

	batch, err := a.qp.BeginSend()
	require.NoError(t, err)
	require.GreaterOrEqual(t, batch.Cap(), n)
	for i := range n {
		var sgl []SGE
		if i < 2 { // in place, in two halves
			room := batch.SGL(i)
			require.GreaterOrEqual(t, len(room), 2)
			room[0], room[1] = a.buf.sge(i*size, size/2), a.buf.sge(i*size+size/2, size/2)
			sgl = room[:2]
		} else { // copied in
			sgl = []SGE{a.buf.sge(i*size, size)}
		}
		wr := SendWR{ID: uint64(i), Op: OpRDMAWrite, SGL: sgl, RemoteAddr: b.buf.addr(i * size), RKey: b.buf.mr.RKey}
		if i == n-1 {
			wr.Flags = SendSignaled
		}
		require.NoError(t, batch.Set(i, &wr))
	}
	posted, err := batch.Post(n)
	require.NoError(t, err)
	require.Equal(t, n, posted)
	wcs := mustPoll(t, a.scq, 1)
	require.Equal(t, WCSuccess, wcs[0].Status)
	require.Equal(t, uint64(n-1), wcs[0].WRID)
	requireWritten(t, b.buf.b[:n*size], a.buf.b[:n*size])
}

// TestSendBatchSetSGE posts RDMA writes and an RDMA read of one segment
// each, made with SetSGE over entries that held other requests before, and
// checks every byte and completion.
func TestSendBatchSetSGE(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	const n, size = 3, 64
	fill(a.buf.b[:n*size], 9)
	fill(b.buf.b[n*size:(n+1)*size], 4)
	batch, err := a.qp.BeginSend()
	require.NoError(t, err)
	require.GreaterOrEqual(t, batch.Cap(), n+1)
	// Leftovers a request of SetSGE must not carry: two segments, data.
	for i := range n + 1 {
		room := batch.SGL(i)
		require.GreaterOrEqual(t, len(room), 2)
		room[0], room[1] = a.buf.sge(0, 1), a.buf.sge(1, 1)
		wr := SendWR{Op: OpRDMAWriteImm, SGL: room[:2], Imm: 5, RemoteAddr: b.buf.addr(0), RKey: b.buf.mr.RKey}
		require.NoError(t, batch.Set(i, &wr))
	}
	for i := range n {
		require.NoError(t, batch.SetSGE(i, uint64(i), OpRDMAWrite, 0, a.buf.sge(i*size, size), b.buf.addr(i*size), b.buf.mr.RKey))
	}
	require.NoError(t, batch.SetSGE(n, 77, OpRDMARead, SendSignaled, a.buf.sge(n*size, size), b.buf.addr(n*size), b.buf.mr.RKey))
	posted, err := batch.Post(n + 1)
	require.NoError(t, err)
	require.Equal(t, n+1, posted)
	wcs := mustPoll(t, a.scq, 1)
	require.Equal(t, WCSuccess, wcs[0].Status)
	require.Equal(t, uint64(77), wcs[0].WRID)
	require.Equal(t, WCRDMARead, wcs[0].Opcode)
	require.Equal(t, uint32(size), wcs[0].ByteLen)
	require.NoError(t, sameBytes("written", b.buf.b[:n*size], a.buf.b[:n*size]))
	require.NoError(t, sameBytes("read", a.buf.b[n*size:(n+1)*size], b.buf.b[n*size:(n+1)*size]))
	requireQuiet(t, b.rcq, 50*time.Millisecond) // no immediate data arrived
}

// TestSendBatchRefuses checks that a bad work request is refused before
// anything is posted and that Cancel gives the queue back.
func TestSendBatchRefuses(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	batch, err := a.qp.BeginSend()
	require.NoError(t, err)
	wr := SendWR{Op: OpRDMAWrite, RemoteAddr: b.buf.addr(0), RKey: b.buf.mr.RKey}
	einval := func(err error) bool { return errors.Is(err, syscall.EINVAL) }
	require.True(t, einval(batch.Set(batch.Cap(), &wr)), "an index beyond Cap")
	require.True(t, einval(batch.Set(-1, &wr)), "a negative index")
	wr.SGL = make([]SGE, len(batch.SGL(0))+1)
	require.True(t, einval(batch.Set(0, &wr)), "more segments than MaxSendSGE")
	wr.SGL, wr.Op = nil, SendOp(200)
	require.True(t, einval(batch.Set(0, &wr)), "an unknown operation")
	for _, op := range []SendOp{SendOp(200), OpAtomicCmpSwap, OpAtomicFetchAdd} {
		require.True(t, einval(batch.SetOne(0, 1, op, 0, nil, 0, 0, 0)), "SetOne of op %d", op)
	}
	require.True(t, einval(batch.SetOne(batch.Cap(), 1, OpRDMAWrite, 0, nil, 0, 0, 0)), "SetOne beyond Cap")
	require.True(t, einval(batch.SetOne(0, 1, OpRDMAWrite, 0, make([]SGE, len(batch.SGL(0))+1), 0, 0, 0)),
		"SetOne with more segments than MaxSendSGE")
	for _, op := range []SendOp{SendOp(200), OpAtomicCmpSwap, OpAtomicFetchAdd, OpRDMAWriteImm, OpSendImm} {
		require.True(t, einval(batch.SetSGE(0, 1, op, 0, SGE{}, 0, 0)), "SetSGE of op %d", op)
	}
	require.True(t, einval(batch.SetSGE(batch.Cap(), 1, OpRDMAWrite, 0, SGE{}, 0, 0)), "SetSGE beyond Cap")
	require.True(t, einval(batch.SetSGE(-1, 1, OpRDMAWrite, 0, SGE{}, 0, 0)), "SetSGE at a negative index")
	batch.Cancel()

	// The queue is free again, and too long a batch is ENOMEM.
	batch, err = a.qp.BeginSend()
	require.NoError(t, err)
	_, err = batch.Post(batch.Cap() + 1)
	require.ErrorIs(t, err, syscall.ENOMEM)
	_, err = a.qp.PostSend(make([]SendWR, a.qp.sq.depth+1))
	require.ErrorIs(t, err, syscall.ENOMEM)
	requireQuiet(t, a.scq, 50*time.Millisecond)
}

// TestRecvBatchInPlace posts receives built in place and checks that sends
// land in their segments.
func TestRecvBatchInPlace(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	const size = 64
	b.buf.clear()
	rb, err := b.qp.BeginRecv()
	require.NoError(t, err)
	for i := range 2 {
		room := rb.SGL(i)
		room[0] = b.buf.sge(i*size, size)
		require.NoError(t, rb.Set(i, &RecvWR{ID: uint64(100 + i), SGL: room[:1]}))
	}
	posted, err := rb.Post(2)
	require.NoError(t, err)
	require.Equal(t, 2, posted)

	fill(a.buf.b[:2*size], 3)
	_, err = a.qp.PostSend([]SendWR{
		{ID: 1, Op: OpSend, SGL: []SGE{a.buf.sge(0, size)}},
		{ID: 2, Op: OpSend, SGL: []SGE{a.buf.sge(size, size)}, Flags: SendSignaled},
	})
	require.NoError(t, err)
	mustPoll(t, a.scq, 1)
	wcs := mustPoll(t, b.rcq, 2)
	for i, wc := range wcs {
		require.Equal(t, WCSuccess, wc.Status)
		require.Equal(t, uint64(100+i), wc.WRID)
	}
	require.NoError(t, sameBytes("received", b.buf.b[:2*size], a.buf.b[:2*size]))
}

// PostSendOne posts the usual work request alone: an RDMA write lands and
// completes with its id; other operations are refused before anything is
// posted, and a closed QP is ErrClosed.
func TestPostSendOne(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	fill(a.buf.b[:64], 0x3c)
	require.NoError(t, a.qp.PostSendOne(7, OpRDMAWrite, SendSignaled, a.buf.sge(0, 64), b.buf.addr(128), b.buf.mr.RKey))
	wcs := mustPollOK(t, a.scq, 1, WCRDMAWrite)
	require.Equal(t, uint64(7), wcs[0].WRID)
	requireWritten(t, b.buf.b[128:192], a.buf.b[:64])
	for _, op := range []SendOp{OpSendImm, OpRDMAWriteImm, OpAtomicCmpSwap, OpAtomicFetchAdd, SendOp(200)} {
		require.ErrorIs(t, a.qp.PostSendOne(8, op, SendSignaled, a.buf.sge(0, 8), 0, 0), syscall.EINVAL, "op %d", op)
	}
	if !r.iwarp { // iWARP has no UD QPs
		u := r.newUDEnd(t)
		require.ErrorIs(t, u.qp.PostSendOne(10, OpSend, SendSignaled, a.buf.sge(0, 8), 0, 0), syscall.EINVAL, "a UD send needs an address handle")
	}
	requireQuiet(t, a.scq, 50*time.Millisecond)
	c := r.newQPEnd(t, endOpts{})
	require.NoError(t, c.qp.Close())
	require.ErrorIs(t, c.qp.PostSendOne(9, OpSend, SendSignaled, a.buf.sge(0, 8), 0, 0), ErrClosed)
}

// PostRecvOne posts the usual receive alone: a send lands in it and it
// completes with its id and length; a QP attached to an SRQ is refused
// before anything is posted, and a closed QP is ErrClosed.
func TestPostRecvOne(t *testing.T) {
	r := newRig(t)
	a, b := r.newPair(t, endOpts{}, endOpts{})
	fill(a.buf.b[:48], 0x5a)
	require.NoError(t, b.qp.PostRecvOne(11, b.buf.sge(256, 64)))
	require.NoError(t, a.qp.PostSendOne(12, OpSend, SendSignaled, a.buf.sge(0, 48), 0, 0))
	wcs := mustPollOK(t, b.rcq, 1, WCRecv)
	require.Equal(t, uint64(11), wcs[0].WRID)
	require.Equal(t, uint32(48), wcs[0].ByteLen)
	require.NoError(t, sameBytes("received", b.buf.b[256:256+48], a.buf.b[:48]))
	mustPollOK(t, a.scq, 1, WCSend)

	srq, err := r.pd.NewSRQ(SRQInitAttr{MaxWR: 4, MaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srq.Close()) }) // after the QP's
	s := r.newQPEnd(t, endOpts{srq: srq})
	require.ErrorIs(t, s.qp.PostRecvOne(13, s.buf.sge(0, 8)), syscall.EINVAL, "a QP of an SRQ has no receive queue")
	requireQuiet(t, b.rcq, 50*time.Millisecond)
	c := r.newQPEnd(t, endOpts{})
	require.NoError(t, c.qp.Close())
	require.ErrorIs(t, c.qp.PostRecvOne(14, c.buf.sge(0, 8)), ErrClosed)
}

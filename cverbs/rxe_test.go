//go:build linux && cgo

package cverbs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onRXE reports whether the rig's device is Soft-RoCE, where every RC QP,
// SRQ and CQ must take the direct path of rxe.go.
func onRXE(r *rig) bool { return strings.HasPrefix(r.ctx.Name(), "rxe") && rxeDirect }

// The direct path knows the rdma-core release in use, from the file name
// of the libibverbs the package is linked with.
func TestRDMACoreRelease(t *testing.T) {
	assert.Positive(t, rdmaCoreRelease, "the release of libibverbs.so.1.14.NN.0")
	assert.False(t, rxeRelease(43))
	assert.True(t, rxeRelease(44))
	assert.True(t, rxeRelease(64))
	assert.False(t, rxeRelease(65))
}

// TestRXEDirectFound: on rxe the direct path is taken for RC QPs (made by
// hand and by rdma_cm), SRQs and CQs, resized ones included, and never for
// UD QPs; elsewhere never.
func TestRXEDirectFound(t *testing.T) {
	r := newRig(t)
	want := onRXE(r)
	e := r.newQPEnd(t, endOpts{})
	assert.Equal(t, want, e.qp.sq.rxe.buf != nil, "RC send queue")
	assert.Equal(t, want, e.qp.rq.rxe.buf != nil, "RC receive queue")
	assert.Equal(t, want, e.scq.rxe.buf != nil, "CQ")
	require.NoError(t, e.scq.Resize(4*queueDepth))
	assert.Equal(t, want, e.scq.rxe.buf != nil, "resized CQ")

	srq, err := r.pd.NewSRQ(SRQInitAttr{MaxWR: 16, MaxSGE: 2})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srq.Close()) }) // after its QP's
	assert.Equal(t, want, srq.rq.rxe.buf != nil, "SRQ")
	if err := srq.Resize(64); err == nil {
		assert.Equal(t, want, srq.rq.rxe.buf != nil, "resized SRQ")
	}
	s := r.newQPEnd(t, endOpts{srq: srq})
	assert.Equal(t, want, s.qp.sq.rxe.buf != nil, "send queue of a QP on an SRQ")
	assert.Nil(t, s.qp.rq.rxe.buf, "a QP on an SRQ has no receive queue")

	if !r.iwarp {
		ud, err := r.pd.NewUDQP(e.initAttr(nil))
		require.NoError(t, err)
		defer func() { assert.NoError(t, ud.Close()) }()
		assert.Nil(t, ud.sq.rxe.buf, "UD send queue")
		assert.Nil(t, ud.rq.rxe.buf, "UD receive queue")
	}
	p := r.newCMPair(t, 7481, 7482)
	assert.Equal(t, want, p.a.qp.sq.rxe.buf != nil, "rdma_cm QP's send queue")
	assert.Equal(t, want, p.a.qp.rq.rxe.buf != nil, "rdma_cm QP's receive queue")
	p.disconnect(t)
}

// sameQueues compares the first n elements of two queues byte for byte.
func sameQueues(what string, a, b *rxeQueue, n uint32) error {
	if a.shift != b.shift || a.mask != b.mask {
		return fmt.Errorf("%s: queues of %d x 2^%d and %d x 2^%d bytes", what, a.mask+1, a.shift, b.mask+1, b.shift)
	}
	for i := range n {
		ea := unsafe.Slice((*byte)(a.slot(i)), 1<<a.shift)
		eb := unsafe.Slice((*byte)(b.slot(i)), 1<<b.shift)
		if err := sameBytes(fmt.Sprintf("%s element %d", what, i), eb, ea); err != nil {
			return err
		}
	}
	if pa, pb := *a.producer(), *b.producer(); pa != pb {
		return fmt.Errorf("%s: producer index %d through the verbs, %d direct", what, pa, pb)
	}
	return nil
}

// TestRXEDirectWQEsMatchLibrxe posts every operation, flag and segment count
// through librxe to one QP and through the direct path to another, both in
// INIT so that the kernel leaves their queues alone, and compares what each
// call returned and every queue element byte for byte. The cases librxe
// refuses (inline data beyond the limit, a misaligned or short atomic, a
// full queue) must be refused alike, at the same work request.
func TestRXEDirectWQEsMatchLibrxe(t *testing.T) {
	r := newRig(t)
	if !onRXE(r) {
		t.Skipf("not applicable: no direct path on %s (Soft-RoCE only; rdma-core %d; UDAPL_RXE_DIRECT=%q)",
			r.ctx.Name(), rdmaCoreRelease, os.Getenv("UDAPL_RXE_DIRECT"))
	}
	verbs, direct := r.newQPEnd(t, endOpts{}), r.newQPEnd(t, endOpts{})
	for _, e := range []*end{verbs, direct} {
		require.NoError(t, e.qp.ToInit(r.port, allAccess))
	}
	// The verbs QP posts through librxe; its queues are kept to read.
	vsq, vrq := verbs.qp.sq.rxe, verbs.qp.rq.rxe
	verbs.qp.sq.rxe, verbs.qp.rq.rxe = rxeSend{}, rxeRecv{}
	defer func() { verbs.qp.sq.rxe, verbs.qp.rq.rxe = vsq, vrq }()
	dsq, drq := &direct.qp.sq.rxe, &direct.qp.rq.rxe

	b := verbs.buf
	fill(b.b, 7)
	seg := func(n, size int) []SGE {
		sgl := make([]SGE, n)
		for i := range sgl {
			sgl[i] = b.sge(100*i+i, size)
		}
		return sgl
	}
	var wrs []SendWR
	ops := []SendOp{OpSend, OpSendImm, OpRDMAWrite, OpRDMAWriteImm, OpRDMARead, OpAtomicCmpSwap, OpAtomicFetchAdd}
	flagSets := []SendFlags{0, SendSignaled, SendFence | SendSolicited | SendSignaled, SendInline, SendInline | SendSignaled}
	for _, op := range ops {
		atomicOp := op == OpAtomicCmpSwap || op == OpAtomicFetchAdd
		for _, f := range flagSets {
			for _, n := range []int{0, 1, 2, 4} {
				if atomicOp && (n != 1 || f&SendInline != 0) {
					continue
				}
				size := 8 + 3*n
				if atomicOp {
					size = 8
				}
				wrs = append(wrs, SendWR{ID: uint64(len(wrs))<<32 | 0xabc, Op: op, Flags: f, SGL: seg(n, size),
					RemoteAddr: b.addr(512 + 8*len(wrs)), RKey: b.mr.RKey, Imm: 0x01020304 + uint32(len(wrs)),
					CompareAdd: 0x1111 * uint64(len(wrs)), Swap: ^uint64(len(wrs))})
			}
		}
	}
	both := func(what string, post func(qp *QP) (int, error)) {
		t.Helper()
		nv, ev := post(verbs.qp)
		nd, ed := post(direct.qp)
		assert.Equal(t, nv, nd, "%s: work requests posted", what)
		var errnoV, errnoD syscall.Errno
		errors.As(ev, &errnoV)
		errors.As(ed, &errnoD)
		assert.Equal(t, errnoV, errnoD, "%s: errors %v (verbs) and %v (direct)", what, ev, ed)
	}
	for i := 0; i < len(wrs); i += 7 {
		chunk := wrs[i:min(i+7, len(wrs))]
		both(fmt.Sprintf("batch at %d", i), func(qp *QP) (int, error) { return qp.PostSend(chunk) })
	}
	both("PostSendOne", func(qp *QP) (int, error) {
		return 1, qp.PostSendOne(99, OpRDMAWrite, SendSignaled|SendInline, b.sge(3, 40), b.addr(64), b.mr.RKey)
	})
	bad := []struct {
		what string
		wr   SendWR
	}{
		{"inline beyond the limit", SendWR{Op: OpSend, Flags: SendInline, SGL: []SGE{b.sge(0, direct.qp.Cap().MaxInline+1)}}},
		{"misaligned atomic", SendWR{Op: OpAtomicFetchAdd, SGL: []SGE{b.sge(0, 8)}, RemoteAddr: b.addr(4), RKey: b.mr.RKey}},
		{"short atomic", SendWR{Op: OpAtomicCmpSwap, SGL: []SGE{b.sge(0, 4)}, RemoteAddr: b.addr(8), RKey: b.mr.RKey}},
	}
	for _, c := range bad {
		both(c.what, func(qp *QP) (int, error) {
			return qp.PostSend([]SendWR{{Op: OpRDMAWrite, SGL: seg(1, 16), RemoteAddr: b.addr(0), RKey: b.mr.RKey}, c.wr})
		})
	}
	// Fill both queues to the brim: the post that finds no room fails alike.
	fillers := make([]SendWR, verbs.qp.Cap().MaxSendWR)
	for i := range fillers {
		fillers[i] = SendWR{ID: uint64(i), Op: OpSend, SGL: seg(1, 8)}
	}
	for i := 0; i <= int(vsq.mask)/len(fillers)+1; i++ {
		both(fmt.Sprintf("filler batch %d", i), func(qp *QP) (int, error) { return qp.PostSend(fillers) })
	}
	assert.True(t, vsq.full(*vsq.producer()), "the send queue is full")
	assert.NoError(t, sameQueues("send queue", &vsq.rxeQueue, &dsq.rxeQueue, vsq.mask+1))

	var recvs []RecvWR
	for i := range 40 {
		recvs = append(recvs, RecvWR{ID: uint64(i) * 0x10001, SGL: seg(i%5, 16+i)})
	}
	both("receives", func(qp *QP) (int, error) { return qp.PostRecv(recvs) })
	both("too many segments", func(qp *QP) (int, error) {
		return qp.PostRecv([]RecvWR{{SGL: seg(1, 8)}, {SGL: seg(direct.qp.Cap().MaxRecvSGE+1, 8)}})
	})
	for i := 0; i <= int(vrq.mask)/len(recvs)+1; i++ {
		both(fmt.Sprintf("receive batch %d", i), func(qp *QP) (int, error) { return qp.PostRecv(recvs) })
	}
	assert.NoError(t, sameQueues("receive queue", &vrq.rxeQueue, &drq.rxeQueue, vrq.mask+1))
}

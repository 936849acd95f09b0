//go:build linux && cgo

package cverbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
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

// copyInline copies exactly the bytes asked for, at every length around
// its fixed-size moves, and nothing beyond them.
func TestCopyInline(t *testing.T) {
	src := make([]byte, 80)
	for i := range src {
		src[i] = byte(i + 1)
	}
	for n := range uint32(len(src)) {
		dst := make([]byte, len(src)+8)
		copyInline(unsafe.Pointer(&dst[0]), uint64(uintptr(unsafe.Pointer(&src[0]))), n)
		require.Equal(t, src[:n], dst[:n], "%d bytes", n)
		require.Equal(t, make([]byte, len(dst)-int(n)), dst[n:], "beyond %d bytes", n)
	}
}

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
	if err := e.scq.Resize(4 * queueDepth); err == nil || want { // siw cannot resize a CQ
		require.NoError(t, err)
		assert.Equal(t, want, e.scq.rxe.buf != nil, "resized CQ")
	}

	srq, err := r.pd.NewSRQ(SRQInitAttr{MaxWR: 16, MaxSGE: 2})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srq.Close()) }) // after its QP's
	assert.Equal(t, want, srq.rq.rxe.buf != nil, "SRQ")
	if err := srq.Resize(64); err == nil || want { // nor an SRQ
		require.NoError(t, err)
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
	if a.size != b.size || a.mask != b.mask {
		return fmt.Errorf("%s: queues of %d x %d and %d x %d bytes", what, a.mask+1, a.size, b.mask+1, b.size)
	}
	for i := range n {
		ea := unsafe.Slice((*byte)(a.slot(i)), a.size)
		eb := unsafe.Slice((*byte)(b.slot(i)), b.size)
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
	for i, op := range []SendOp{OpSend, OpRDMAWrite, OpRDMARead} {
		for j, f := range []SendFlags{0, SendSignaled | SendInline, SendInline} {
			both(fmt.Sprintf("PostSendOne %v %#x", op, f), func(qp *QP) (int, error) {
				return 1, qp.PostSendOne(uint64(99+i*3+j), op, f, b.sge(3+i, 40+j), b.addr(64*i), b.mr.RKey)
			})
		}
	}
	// SetSGE's batches, one of them set out of order (udat's fence write
	// goes in at 0 after the read at 1).
	usual := func(order ...int) func(qp *QP) (int, error) {
		return func(qp *QP) (int, error) {
			sb, err := qp.BeginSend()
			if err != nil {
				return 0, err
			}
			for _, k := range order {
				op := []SendOp{OpSend, OpRDMAWrite, OpRDMARead}[k%3]
				f := []SendFlags{0, SendSignaled | SendInline, SendInline, SendSignaled}[k%4]
				if err := sb.SetSGE(k, uint64(200+k), op, f, b.sge(5+k, 24+k), b.addr(32*k), b.mr.RKey); err != nil {
					sb.Cancel()
					return 0, err
				}
			}
			return sb.Post(len(order))
		}
	}
	both("SetSGE batch", usual(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
	both("SetSGE batch out of order", usual(1, 0))
	both("PostSendOne, inline beyond the limit", func(qp *QP) (int, error) {
		return 1, qp.PostSendOne(1, OpSend, SendInline, b.sge(0, direct.qp.Cap().MaxInline+1), 0, 0)
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
	both("SetSGE batch on a full queue", usual(0, 1))
	both("PostSendOne on a full queue", func(qp *QP) (int, error) {
		return 1, qp.PostSendOne(7, OpRDMAWrite, SendSignaled, b.sge(0, 8), b.addr(0), b.mr.RKey)
	})
	assert.NoError(t, sameQueues("send queue", &vsq.rxeQueue, &dsq.rxeQueue, vsq.mask+1))

	var recvs []RecvWR
	for i := range 40 {
		recvs = append(recvs, RecvWR{ID: uint64(i) * 0x10001, SGL: seg(i%5, 16+i)})
	}
	both("receives", func(qp *QP) (int, error) { return qp.PostRecv(recvs) })
	both("too many segments", func(qp *QP) (int, error) {
		return qp.PostRecv([]RecvWR{{SGL: seg(1, 8)}, {SGL: seg(direct.qp.Cap().MaxRecvSGE+1, 8)}})
	})
	recvOne := func(qp *QP) (int, error) { return 1, qp.PostRecvOne(0x77, b.sge(8, 24)) }
	both("PostRecvOne", recvOne)
	for i := 0; i <= int(vrq.mask)/len(recvs)+1; i++ {
		both(fmt.Sprintf("receive batch %d", i), func(qp *QP) (int, error) { return qp.PostRecv(recvs) })
	}
	both("PostRecvOne on a full queue", recvOne)
	assert.NoError(t, sameQueues("receive queue", &vrq.rxeQueue, &drq.rxeQueue, vrq.mask+1))
}

// The kernel's layout of an rxe queue (rdma_user_rxe.h), written out here
// so that the host tests below check the offsets the direct path takes
// from the C headers against the ABI: a 384-byte header with the producer
// index at 128 and the consumer index at 256, then the slots.
const (
	fakeHead     = 384
	fakeProducer = 128
	fakeConsumer = 256
)

// fakeQueue is an rxe queue of slots elements of 1<<shift bytes in Go
// memory, for the tests that need no device.
func fakeQueue(slots int, shift uint32) (rxeQueue, []byte) {
	mem := make([]byte, fakeHead+slots<<shift)
	return rxeQueue{buf: unsafe.Pointer(&mem[0]), mask: uint32(slots - 1), size: 1 << shift}, mem
}

func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// TestRXEDirectOnFakeQueues runs the direct path's post and poll over
// queues in Go memory, the doorbell a pipe: the WQEs land at the ABI's
// offsets, the indexes move, a full queue stops the batch at the right
// request, and a poll wraps around the ring.
func TestRXEDirectOnFakeQueues(t *testing.T) {
	var pipe [2]int
	require.NoError(t, syscall.Pipe2(pipe[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK))
	defer syscall.Close(pipe[0])
	defer syscall.Close(pipe[1])

	qp := &QP{}
	require.True(t, qp.sq.alloc(4, 2))
	defer func() { qp.sq.rxe = rxeSend{}; qp.sq.free() }() // the fake's memory is Go's
	sq, mem := fakeQueue(8, 8)
	var ssn uint32
	doorbell := make([]byte, 64)
	qp.sq.rxe = rxeSend{rxeQueue: sq, ssn: &ssn, doorbell: unsafe.Pointer(&doorbell[0]),
		fd: uintptr(pipe[1]), maxSGE: 2, maxInline: 64}

	payload := []byte("inline payload!!")
	// begin is BeginSend for the fake, which has no ibv_qp.
	begin := func() SendBatch {
		qp.sq.mu.Lock()
		qp.sq.rxe.start()
		return SendBatch{qp}
	}
	post := func(wrs ...SendWR) (int, error) {
		b := begin()
		for i := range wrs {
			require.NoError(t, b.Set(i, &wrs[i]))
		}
		return b.Post(len(wrs))
	}
	n, err := post(
		SendWR{ID: 0x1111, Op: OpRDMAWriteImm, Flags: SendSignaled, Imm: 0x01020304, RemoteAddr: 0xa000, RKey: 0x77,
			SGL: []SGE{{Addr: 0x5000, Length: 10, LKey: 9}, {Addr: 0x6000, Length: 6, LKey: 8}}},
		SendWR{ID: 0x2222, Op: OpAtomicFetchAdd, RemoteAddr: 0xb008, RKey: 0x66, CompareAdd: 5, Swap: 6,
			SGL: []SGE{{Addr: 0x7000, Length: 8, LKey: 7}}},
		SendWR{ID: 0x3333, Op: OpSend, Flags: SendInline,
			SGL: []SGE{{Addr: uint64(uintptr(unsafe.Pointer(&payload[0]))), Length: uint32(len(payload))}}},
	)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	assert.Equal(t, uint32(3), le32(mem, fakeProducer))
	assert.Equal(t, uint32(3), ssn)

	w := mem[fakeHead:]
	assert.Equal(t, uint64(0x1111), le64(w, 0), "wr_id")
	assert.Equal(t, uint32(sendOpcodes[OpRDMAWriteImm]), le32(w, 12), "opcode")
	assert.Equal(t, uint32(SendSignaled), le32(w, 16), "send_flags")
	assert.Equal(t, []byte{1, 2, 3, 4}, w[20:24], "immediate data, in network order")
	assert.Equal(t, uint64(0xa000), le64(w, 24), "wr.rdma.remote_addr")
	assert.Equal(t, uint32(0x77), le32(w, 32), "wr.rdma.rkey")
	assert.Equal(t, uint64(0xa000), le64(w, 152), "iova")
	assert.Equal(t, []uint32{16, 16, 0, 2, 0}, []uint32{le32(w, 184), le32(w, 188), le32(w, 192), le32(w, 196), le32(w, 200)},
		"dma length, resid, cur_sge, num_sge, sge_offset")
	assert.Equal(t, []uint64{0x5000, 10 | 9<<32, 0x6000, 6 | 8<<32}, []uint64{le64(w, 208), le64(w, 216), le64(w, 224), le64(w, 232)}, "segments")
	assert.Equal(t, uint32(0), le32(w, 176), "ssn")

	w = mem[fakeHead+256:]
	assert.Equal(t, uint64(0xb008), le64(w, 24), "wr.atomic.remote_addr")
	assert.Equal(t, []uint64{5, 6}, []uint64{le64(w, 32), le64(w, 40)}, "compare_add, swap")
	assert.Equal(t, uint32(0x66), le32(w, 48), "wr.atomic.rkey")
	assert.Equal(t, uint32(1), le32(w, 176), "ssn")

	w = mem[fakeHead+512:]
	assert.Equal(t, payload, w[208:208+len(payload)], "inline data")
	assert.Equal(t, uint32(len(payload)), le32(w, 184))

	got := make([]byte, 128)
	nr, err := syscall.Read(pipe[0], got)
	require.NoError(t, err)
	assert.Equal(t, 32, nr, "one doorbell for the batch, as long as librxe's")

	// 8 slots hold 7: four more fill the ring, and the next finds no room.
	filler := SendWR{Op: OpSend, SGL: []SGE{{Addr: 0x5000, Length: 1}}}
	n, err = post(filler, filler, filler, filler)
	assert.Equal(t, 4, n)
	assert.NoError(t, err)
	n, err = post(filler)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, syscall.ENOMEM)
	assert.Equal(t, uint32(7), le32(mem, fakeProducer))
	binary.LittleEndian.PutUint32(mem[fakeConsumer:], 7) // the kernel took them all

	// Inline data beyond the limit stops the batch where librxe would.
	n, err = post(filler, SendWR{Op: OpSend, Flags: SendInline, SGL: []SGE{{Addr: 0x5000, Length: 65}}})
	assert.Equal(t, 1, n)
	assert.ErrorIs(t, err, syscall.EINVAL)

	// A doorbell that fails reports nothing posted, as librxe does.
	qp.sq.rxe.fd = ^uintptr(0)
	n, err = post(filler)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, syscall.EBADF)

	// SetSGE writes the usual request straight into its slot, in any
	// order; a slot the kernel still owns is not touched, and the batch
	// stops there.
	qp.sq.rxe.fd = uintptr(pipe[1])
	binary.LittleEndian.PutUint32(mem[fakeConsumer:], 1) // the kernel took all but one
	prod := le32(mem, fakeProducer)
	b := begin()
	require.NoError(t, b.SetSGE(1, 0x6666, OpRDMARead, SendSignaled, SGE{Addr: 0x9000, Length: 24, LKey: 5}, 0xc000, 0x55))
	require.NoError(t, b.SetSGE(0, 0x5555, OpRDMAWrite, 0, SGE{Addr: 0x8000, Length: 16, LKey: 4}, 0xd000, 0x44))
	n, err = b.Post(2)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	assert.Equal(t, (prod+2)&7, le32(mem, fakeProducer))
	w = mem[fakeHead+int(prod)*256:]
	assert.Equal(t, []uint64{0x5555, 0xd000, 0x8000, 16 | 4<<32}, []uint64{le64(w, 0), le64(w, 24), le64(w, 208), le64(w, 216)})
	w = mem[fakeHead+int((prod+1)&7)*256:]
	assert.Equal(t, []uint64{0x6666, 0xc000, 0x9000, 24 | 5<<32}, []uint64{le64(w, 0), le64(w, 24), le64(w, 208), le64(w, 216)})
	assert.Equal(t, uint32(0x55), le32(w, 32), "rkey")
	// Four more leave one slot free; the next can be written but not
	// published; the consumer's is the kernel's.
	n, err = post(filler, filler, filler, filler)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	_, err = syscall.Read(pipe[0], got)
	require.NoError(t, err)
	prod = le32(mem, fakeProducer)
	require.Equal(t, (prod+2)&7, le32(mem, fakeConsumer))
	owned := mem[fakeHead+int((prod+2)&7)*256:][:256]
	before := slices.Clone(owned)
	b = begin()
	for i := range 3 {
		require.NoError(t, b.SetSGE(i, uint64(i), OpSend, 0, SGE{Addr: 0x8000, Length: 8}, 0, 0))
	}
	n, err = b.Post(3)
	assert.Equal(t, 1, n)
	assert.ErrorIs(t, err, syscall.ENOMEM)
	assert.Equal(t, (prod+1)&7, le32(mem, fakeProducer))
	assert.Equal(t, uint64(1), le64(mem[fakeHead+int((prod+1)&7)*256:], 0), "the slot found full is written, as librxe does")
	assert.Equal(t, before, owned, "a slot the kernel owns is left alone")

	// Completions: two at the end of a four-slot ring and one after it.
	cq, cmem := fakeQueue(4, 6)
	for i, slot := range []int{3, 0, 1} {
		binary.LittleEndian.PutUint64(cmem[fakeHead+slot<<6:], uint64(100+i))
	}
	binary.LittleEndian.PutUint32(cmem[fakeConsumer:], 3)
	binary.LittleEndian.PutUint32(cmem[fakeProducer:], 2)
	wc := make([]WC, 2)
	serial := &CQ{cgoCQ: cgoCQ{rxe: cq}} // PollSerial takes the direct path, as Poll does
	polled, err := serial.PollSerial(wc)
	require.NoError(t, err)
	require.Equal(t, 2, polled)
	assert.Equal(t, []uint64{100, 101}, []uint64{wc[0].WRID, wc[1].WRID})
	assert.Equal(t, uint32(1), le32(cmem, fakeConsumer))
	polled, err = serial.PollSerial(wc)
	require.NoError(t, err)
	require.Equal(t, 1, polled)
	assert.Equal(t, uint64(102), wc[0].WRID)
	polled, err = serial.PollSerial(wc)
	assert.NoError(t, err)
	assert.Equal(t, 0, polled, "empty")

	// Receives: the WQE at the ABI's offsets, and a full queue.
	rq, rmem := fakeQueue(2, 7)
	var q recvQueue
	require.True(t, q.alloc(2, 2))
	defer q.free()
	q.wrs[0].wr_id, q.wrs[0].num_sge = 0x4444, 2
	q.sges[0], q.sges[1] = SGE{Addr: 0x8000, Length: 32, LKey: 1}, SGE{Addr: 0x9000, Length: 16, LKey: 2}
	r := rxeRecv{rxeQueue: rq, maxSGE: 2}
	n2, e := r.post(&q, 2)
	assert.Equal(t, 1, n2, "a two-slot ring holds one")
	assert.Equal(t, syscall.ENOMEM, e)
	w = rmem[fakeHead:]
	assert.Equal(t, uint64(0x4444), le64(w, 0))
	assert.Equal(t, []uint32{48, 48, 0, 2, 0}, []uint32{le32(w, 16), le32(w, 20), le32(w, 24), le32(w, 28), le32(w, 32)})
	assert.Equal(t, []uint64{0x8000, 32 | 1<<32, 0x9000, 16 | 2<<32}, []uint64{le64(w, 40), le64(w, 48), le64(w, 56), le64(w, 64)})
}

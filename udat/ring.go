package udat

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/udapl-go/udapl/cverbs"
)

// Work request ids. Every work request the library posts carries a 64-bit
// wr_id that names the ring slot holding the Consumer's cookie:
//
//	bits 63..40  owner: the id of the ring (changes when an EP is reset)
//	bits 39..32  kind:  send queue, receive queue or SRQ
//	bits 31..0   seq:   sequence number (FIFO rings) or slot index (SRQ)
//
// A completion whose owner does not match the ring it names is stale (it
// belongs to an earlier incarnation of the queue) and is dropped.
const (
	wrKindSend = 1
	wrKindRecv = 2
	wrKindSRQ  = 3

	ownerBits = 24
	ownerMask = 1<<ownerBits - 1
)

var ownerSeq atomic.Uint32

// newOwner returns a fresh ring owner id (never 0).
func newOwner() uint32 {
	for {
		v := ownerSeq.Add(1) & ownerMask
		if v != 0 {
			return v
		}
	}
}

func makeWRID(owner uint32, kind uint8, seq uint32) uint64 {
	return uint64(owner&ownerMask)<<40 | uint64(kind)<<32 | uint64(seq)
}

func splitWRID(id uint64) (owner uint32, kind uint8, seq uint32) {
	return uint32(id>>40) & ownerMask, uint8(id >> 32), uint32(id)
}

// dtoSlot remembers one posted DTO until its completion is reported.
type dtoSlot struct {
	cookie   uint64
	length   uint64 // bytes posted (reported for sends and RDMA writes)
	op       DTOOp
	signaled bool // the hardware will produce a completion for it
	// quiet: signalled to the device only so that the library learns when
	// it is done (IA.completesInOrder); its success reports nothing, as
	// the Consumer's suppressed or unsignalled flag asked.
	quiet bool
	busy  bool // posted and not yet completed
	slotProgress
	rmr *RMR // for memory window binds
	ah  *AH  // the address handle of a UD send
}

// slotProgress is what becomes of a slot's DTO, zero when it is posted: one
// field of dtoSlot without pointers, so that reserve clears it in one
// assignment without write barriers.
type slotProgress struct {
	done bool // completed, waiting for older slots (FIFO rings)
	// report: its completion is to be reported (status, xfer) when every
	// older slot has been. False for an unsignalled DTO that succeeded.
	report bool
	// flushed: completed as flushed when it was posted (the EP was
	// DISCONNECTED); reported as soon as every older slot has been.
	flushed bool
	status  DTOStatus
	xfer    uint64 // bytes received or read (from the work completion)
	immed   uint32 // immediate data received (op DTOIBRecvImmed, DTOIBRecvMsgImmed)
	srcQP   uint32 // the sender of a UD receive
}

// isReceive reports whether the slot is a receive, plain, with immediate
// data or of a datagram: it reports xfer as its transferred length.
func (s *dtoSlot) isReceive() bool {
	switch s.op {
	case DTOReceive, DTOIBRecvImmed, DTOIBRecvMsgImmed, DTOIBRecvUD, DTOIBRecvUDImmed:
		return true
	}
	return false
}

// record keeps what the work completion of the slot's DTO says: its status,
// the bytes it moved, and for a receive the immediate data it brought,
// which make it an extended receive (ext_ib.go). A completion in error
// says nothing else.
func (s *dtoSlot) record(status DTOStatus, wc *cverbs.WC) {
	s.status, s.xfer = status, uint64(wc.ByteLen)
	if s.isReceive() && status == DTOSuccess {
		if s.op == DTOIBRecvUD {
			s.srcQP = wc.SrcQP
			if wc.Flags&cverbs.WCFlagWithImm != 0 {
				s.op, s.immed = DTOIBRecvUDImmed, daplImmed(wc.Imm)
			}
			return
		}
		s.op, s.immed = recvOpOf(wc), daplImmed(wc.Imm)
	}
}

// fifoRing tracks the DTOs of a queue that completes in posting order: an EP's
// send queue or its own receive queue (RC). Posting holds mu across the
// ibv_post_* call, so slot order is the hardware queue order and a completion
// for slot n proves that every earlier unsignalled slot has completed too.
type fifoRing struct {
	mu    sync.Mutex
	slots []dtoSlot // a power of two: seq % len(slots) survives seq wrapping
	limit int       // at most this many DTOs outstanding
	mask  uint32    // len(slots)-1: a sequence number's slot is seq&mask
	head  uint32    // oldest slot not yet released
	tail  uint32    // next slot to use
	owner uint32
	kind  uint8
	// id is the wr_id of sequence number 0, owner and kind (makeWRID):
	// wrid is one OR, and the usual completion is the one whose wr_id is
	// wrid(head).
	id uint64
	// flushing: the QP is in the error state (EP.setFlushing), so a new
	// DTO completes as flushed at post, whatever the EP's state.
	flushing bool
	// stalled: the watchdog gave up on the queue (watchdog.go), so the
	// first DTO the device flushes is the one that failed.
	stalled bool
	// settled counts the slots in [head, tail) that are settled (done or
	// flushed): while it is 0, usualHead checks no slot's progress.
	settled int
	// posted and received count the queue's DTOs for the EP's counters
	// (counters.go); they survive a Reset (inherit).
	posted, received dtoCounts
	scratch
}

// maxBatch bounds the work requests one provider call posts (and the
// scratch space a ring keeps for them); longer batches take several calls.
const maxBatch = 128

// scratch is where a ring checks up to batch work requests, maxIOV SGEs
// each, that one provider call posts; used under the ring's lock. Send
// queues build their work requests in the QP's own C arrays instead
// (cverbs.SendBatch) and use sge only when nothing will be posted.
type scratch struct {
	batch int
	perWR int // SGEs per work request
	sge   []cverbs.SGE
	rwr   []cverbs.RecvWR // receive queues and SRQs
	lmrv  []*LMR          // the LMRs of the request being checked
}

func newScratch(size, maxIOV int, send bool) scratch {
	s := scratch{batch: min(size, maxBatch), perWR: maxIOV, lmrv: make([]*LMR, 0, maxIOV)}
	s.sge = make([]cverbs.SGE, s.batch*maxIOV)
	if !send {
		s.rwr = make([]cverbs.RecvWR, s.batch)
	}
	return s
}

// sgeSlot returns the SGEs of the i-th work request of a batch.
func (s *scratch) sgeSlot(i int) []cverbs.SGE {
	return s.sge[i*s.perWR : (i+1)*s.perWR]
}

func newFIFORing(size, maxIOV int, kind uint8) *fifoRing {
	if size < 1 {
		size = 1
	}
	if maxIOV < 1 {
		maxIOV = 1
	}
	n := 1
	for n <= size { // one spare slot for a flush marker
		n <<= 1
	}
	r := &fifoRing{
		slots:   make([]dtoSlot, n),
		mask:    uint32(n - 1),
		limit:   size,
		kind:    kind,
		scratch: newScratch(size, maxIOV, kind != wrKindRecv),
	}
	r.setOwner(newOwner())
	return r
}

// setOwner makes owner the ring's id: its work requests' wr_ids name it.
func (r *fifoRing) setOwner(owner uint32) {
	r.owner, r.id = owner, makeWRID(owner, r.kind, 0)
}

// wrid is the wr_id of the work request of slot seq.
func (r *fifoRing) wrid(seq uint32) uint64 { return r.id | uint64(seq) }

// at returns the slot of sequence number seq. The mask keeps its index
// inside slots, whose length is mask+1 from newFifoRing on (neither ever
// changes), so the slot is found without a bounds check: a post and a
// usual completion each look one up.
func (r *fifoRing) at(seq uint32) *dtoSlot {
	return (*dtoSlot)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.slots)), uintptr(seq&r.mask)*unsafe.Sizeof(dtoSlot{})))
}

// outstanding returns how many slots are in use. Caller holds mu.
func (r *fifoRing) outstanding() int { return int(r.tail - r.head) }

// full reports whether no slot is free. Caller holds mu.
func (r *fifoRing) full() bool { return r.outstanding() >= r.limit }

// hasSpare reports whether a slot beyond the limit is free: the one a
// flush marker takes. Caller holds mu.
func (r *fifoRing) hasSpare() bool { return r.outstanding() < len(r.slots) }

// ringMark is how far a queue has come: its incarnation and its oldest
// outstanding DTO. It changes whenever a DTO completes or the queue is reset.
type ringMark struct{ owner, head uint32 }

// mark returns where the queue is now. Caller holds mu.
func (r *fifoRing) mark() ringMark { return ringMark{r.owner, r.head} }

// inProgress counts the DTOs the device still holds and the bytes they
// name: posted, neither completed nor flushed. Caller holds mu.
func (r *fifoRing) inProgress() (n int, bytes uint64) {
	for q := r.head; q != r.tail; q++ {
		s := r.at(q)
		if s.busy && !s.done && !s.flushed {
			n++
			bytes += s.length
		}
	}
	return n, bytes
}

// dtoMarker is the operation of a flush marker (see EP.postFlushMarker): a
// work request of the library's own that reports no event.
const dtoMarker DTOOp = 1<<32 - 1

// idle reports whether no DTO of the queue is outstanding: none posted and
// not yet completed, including unsignalled ones whose fate is not known yet
// and DTOs whose completion is still to be reported. Caller holds mu.
func (r *fifoRing) idle() bool { return r.head == r.tail }

// pending counts the slots still to be reported or waited for: those that
// expect a completion from the hardware (flush markers included, which
// settle the unsignalled DTOs before them) and those flushed at post time.
// Caller holds mu.
func (r *fifoRing) pending() int {
	n := 0
	for q := r.head; q != r.tail; q++ {
		s := r.at(q)
		if s.busy && (s.flushed || s.report || !s.done && s.signaled) {
			n++
		}
	}
	return n
}

// holdsMarker reports whether a flush marker has not completed yet.
func (r *fifoRing) holdsMarker() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for q := r.head; q != r.tail; q++ {
		if s := r.at(q); s.busy && s.op == dtoMarker {
			return true
		}
	}
	return false
}

// unsettled reports whether some unsignalled slot has not completed, with no
// flush marker posted after it: only a later completion on the queue can
// tell whether it succeeded. Caller holds mu.
func (r *fifoRing) unsettled() bool {
	if r.head != r.tail && r.at(r.tail-1).op == dtoMarker {
		return false
	}
	for q := r.head; q != r.tail; q++ {
		s := r.at(q)
		if s.busy && !s.done && !s.signaled {
			return true
		}
	}
	return false
}

// readsBefore reports whether an RDMA read or atomic posted before seq may
// still be in progress: what a barrier fence on seq waits for. Without one
// the fence is left off the work request, which spares Soft-RoCE's fence
// check, a stall now and then on Linux 6.1 (README, on
// DAT_COMPLETION_BARRIER_FENCE_FLAG). Caller holds mu.
func (r *fifoRing) readsBefore(seq uint32) bool {
	for q := r.head; q != seq; q++ {
		s := r.at(q)
		if s.busy && !s.done && !s.flushed && s.op.waitedByFence() {
			return true
		}
	}
	return false
}

// waitedByFence reports whether a barrier fence waits for DTOs of op: RDMA
// reads and atomics, whose results come back from the peer.
func (op DTOOp) waitedByFence() bool {
	switch op {
	case DTORDMARead, DTOIBFetchAdd, DTOIBCmpSwap:
		return true
	}
	return false
}

// reserve takes the next slot and returns its sequence number. Caller holds
// mu and has checked full(). Every field but the pointers is set, one by
// one: release left the pointers nil, and a whole dtoSlot value, which
// holds pointers, would be written with write barriers (40 instructions).
func (r *fifoRing) reserve(cookie, length uint64, op DTOOp, signaled bool) uint32 {
	seq := r.tail
	s := r.at(seq)
	s.cookie, s.length, s.op, s.signaled, s.busy, s.quiet = cookie, length, op, signaled, true, false
	s.slotProgress = slotProgress{}
	r.tail++
	r.posted.add(op, length)
	return seq
}

// reserveFlushed queues a DTO of length bytes posted on a DISCONNECTED EP
// behind the DTOs still outstanding, so that its flush is reported after
// theirs. It uses no memory and holds no LMR. Caller holds mu and has
// checked full().
func (r *fifoRing) reserveFlushed(cookie, length uint64, op DTOOp) {
	seq := r.reserve(cookie, length, op, true)
	s := r.at(seq)
	s.flushed, s.status = true, DTOErrFlushed
	r.settled++
}

// unreserve gives back the newest slot after a failed post. Caller holds mu.
func (r *fifoRing) unreserve() {
	r.tail--
	s := r.at(r.tail)
	r.posted.sub(s.op, s.length)
	r.release(r.tail)
}

// inherit carries the counts of old, the ring this one replaces, over.
func (r *fifoRing) inherit(old *fifoRing) *fifoRing {
	if old != nil {
		old.mu.Lock()
		r.posted, r.received = old.posted, old.received
		old.mu.Unlock()
	}
	return r
}

// release frees slot seq, and the address handle of a UD send. Only busy
// and the pointers are cleared: reserve sets every other field, and no one
// reads a slot outside [head, tail).
func (r *fifoRing) release(seq uint32) {
	r.dropAH(seq)
	s := r.at(seq)
	if s.settled() {
		r.settled--
	}
	s.busy, s.rmr = false, nil
}

// complete records the work completion of slot seq: its status and the
// bytes it moved. The address handles of the slot and of every older
// unsignalled slot (RC completes in order, so they are done too) are
// released at once;
// the completions are reported in posting order by next. It returns false
// if seq names no pending slot (a stale completion).
func (r *fifoRing) complete(owner, seq uint32, status DTOStatus, wc *cverbs.WC) bool {
	if owner != r.owner || seq-r.head >= r.tail-r.head {
		return false
	}
	s := r.at(seq)
	if !s.busy || s.done || s.flushed {
		return false
	}
	if status == DTOErrFlushed && r.stalled {
		status, r.stalled = DTOErrTransport, false
	}
	s.done, s.report = true, s.op != dtoMarker && !(s.quiet && status == DTOSuccess)
	r.settled++
	s.record(status, wc)
	if status == DTOSuccess && s.isReceive() {
		r.received.add(s.op, s.xfer)
	}
	r.dropAH(seq)
	for q := r.head; q != seq; q++ {
		o := r.at(q)
		if o.busy && !o.done && !o.signaled {
			o.done = true
			r.settled++
			r.dropAH(q)
		}
	}
	return true
}

// usualHead reports whether s, the head slot, is one whose successful
// completion (of wr_id wrid(head)) is the usual one (EVD.takeUsual): of a
// send, RDMA write, RDMA read or receive, while no slot of the queue is
// settled (so neither it nor a DTO flushed at post time behind it). A slot
// in [head, tail) is busy. Caller holds mu.
func (r *fifoRing) usualHead(s *dtoSlot) bool {
	return r.head != r.tail && r.settled == 0 && s.op <= DTOReceive && !s.quiet
}

// popUsual frees the head slot s, which usualHead took: it holds no RMR
// and no address handle, so release has nothing else to clear.
func (r *fifoRing) popUsual(s *dtoSlot) {
	s.busy = false
	r.head++
}

// dropAH releases the address handle of slot seq, whose UD send the
// hardware is done with.
func (r *fifoRing) dropAH(seq uint32) {
	s := r.at(seq)
	if s.ah != nil {
		s.ah.release()
		s.ah = nil
	}
}

// holdAH records that the UD send of slot seq goes through a, which is
// not destroyed until the send is done. It reports false if a is freed.
// Caller holds mu.
func (r *fifoRing) holdAH(seq uint32, a *AH) bool {
	if !a.hold() {
		return false
	}
	r.at(seq).ah = a
	return true
}

// setRMR records that slot seq binds m, which learns the outcome when the
// bind completes. Caller holds mu.
func (r *fifoRing) setRMR(seq uint32, m *RMR) { r.at(seq).rmr = m }

// settled reports whether the slot's DTO is over: completed, or flushed
// when it was posted.
func (s *dtoSlot) settled() bool { return s.done || s.flushed }

// next frees the completed slots at the head of the ring that report
// nothing, in posting order, and returns the head slot if its completion is
// to be reported now: one the hardware completed, or one flushed at post
// time. It returns nil when the head slot is still outstanding (or the ring
// is empty). The caller reports the slot where it lies, then pops it.
func (r *fifoRing) next() *dtoSlot {
	for r.head != r.tail {
		s := r.at(r.head)
		if !s.settled() {
			return nil
		}
		if s.report || s.flushed {
			return s
		}
		r.pop()
	}
	return nil
}

// pop frees the head slot, which next returned.
func (r *fifoRing) pop() {
	r.release(r.head)
	r.head++
}

// drain empties the ring (the queue was reset or destroyed) and returns, in
// posting order, the slots whose completion was still to be reported: those
// completed or flushed at post time keep their status, and those the
// hardware never completed are flushed. Unsignalled slots are taken as
// completed successfully. A new owner id makes late completions stale.
func (r *fifoRing) drain() []dtoSlot {
	var left []dtoSlot
	for ; r.head != r.tail; r.head++ {
		s := r.at(r.head)
		switch {
		case s.report || s.flushed:
			left = append(left, *s)
		case s.busy && !s.done && s.signaled && s.op != dtoMarker:
			out := *s
			out.status = DTOErrFlushed
			if r.stalled {
				out.status, r.stalled = DTOErrTransport, false
			}
			left = append(left, out)
		}
		r.release(r.head)
	}
	r.setOwner(newOwner())
	r.stalled = false
	return left
}

// poolRing tracks the receives posted to an SRQ. They complete in any order
// (each EP that uses the SRQ consumes buffers), so free slots are kept on a
// stack rather than in posting order.
type poolRing struct {
	mu    sync.Mutex
	slots []dtoSlot
	free  []uint32 // stack of free slot indexes
	limit int      // at most this many pending receives (dat_srq_resize)
	owner uint32
	scratch
}

func newPoolRing(size, maxIOV int) *poolRing {
	if size < 1 {
		size = 1
	}
	if maxIOV < 1 {
		maxIOV = 1
	}
	r := &poolRing{
		slots:   make([]dtoSlot, size),
		free:    make([]uint32, size),
		limit:   size,
		owner:   newOwner(),
		scratch: newScratch(size, maxIOV, false),
	}
	for i := range r.free {
		r.free[i] = uint32(size - 1 - i)
	}
	return r
}

func (r *poolRing) outstanding() int { return len(r.slots) - len(r.free) }

func (r *poolRing) full() bool { return len(r.free) == 0 || r.outstanding() >= r.limit }

func (r *poolRing) reserve(cookie, length uint64) uint32 {
	i := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	r.slots[i] = dtoSlot{cookie: cookie, length: length, op: DTOReceive, signaled: true, busy: true}
	return i
}

func (r *poolRing) release(i uint32) {
	r.slots[i] = dtoSlot{}
	r.free = append(r.free, i)
}

func (r *poolRing) complete(owner, i uint32) (dtoSlot, bool) {
	if owner != r.owner || int(i) >= len(r.slots) || !r.slots[i].busy {
		return dtoSlot{}, false
	}
	out := r.slots[i]
	r.release(i)
	return out, true
}

// releaseAll frees every slot (the SRQ is destroyed). Caller holds mu.
func (r *poolRing) releaseAll() {
	for i := range r.slots {
		if r.slots[i].busy {
			r.release(uint32(i))
		}
	}
}

// resize sets the number of receives the ring accepts, keeping the pending
// ones (dat_srq_resize). Slots are never taken away: a smaller size only
// lowers the limit.
func (r *poolRing) resize(size int) {
	r.limit = size
	if size <= len(r.slots) {
		return
	}
	old := len(r.slots)
	slots := make([]dtoSlot, size)
	copy(slots, r.slots)
	free := make([]uint32, len(r.free), size)
	copy(free, r.free)
	for i := size - 1; i >= old; i-- {
		free = append(free, uint32(i))
	}
	r.slots, r.free = slots, free
}

// awaited reports whether the queue's next completion is one the watchdog
// may wait for, and how many bytes the device must move before it: the
// DTOs up to the oldest signalled one still in progress (unsignalled ones
// before it complete with it). It is not when nothing is in progress, or,
// with rnr (IA.hasRNRRetry), when one of those DTOs needs a receive from
// the peer, which may rightly hold it back for ever (RNR retry count 7).
// Caller holds mu.
func (r *fifoRing) awaited(rnr bool) (watch bool, bytes uint64) {
	for q := r.head; q != r.tail; q++ {
		s := r.at(q)
		if !s.busy || s.done || s.flushed {
			continue
		}
		if rnr && s.op.usesPeerReceive() {
			return false, 0
		}
		bytes += s.length
		if s.signaled {
			return true, bytes
		}
	}
	return false, 0
}

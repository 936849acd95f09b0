//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
// Their out-parameters stay on the caller's stack (it takes both): a wait
// allocates nothing.
#cgo noescape cverbs_get_ack_cq_event
#cgo nocallback cverbs_get_ack_cq_event
#cgo noescape cverbs_poll_arm
#cgo nocallback cverbs_poll_arm
*/
import "C"

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// cgoCompChannel is the state of a CompChannel in the cgo build.
type cgoCompChannel struct {
	mu     sync.RWMutex // shared by Wait and NewCQ, exclusive in Close
	ch     *C.struct_ibv_comp_channel
	ctx    *Context
	wmu    sync.Mutex    // orders w's registration with Close
	w      *fdWaiter     // Wait: the netpoller, from the first Wait on
	tw     *threadWaiter // WaitBlocking: the calling thread
	closed atomic.Bool
}

// NewCompChannel creates a completion channel. Its file descriptor is made
// non-blocking, so that both ways of waiting read events without blocking
// in the library.
func (c *Context) NewCompChannel() (*CompChannel, error) {
	const op = "ibv_create_comp_channel"
	ctx, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	ch, err := C.ibv_create_comp_channel(ctx)
	if ch == nil {
		return nil, errnoErr(op, err)
	}
	if rc, err := C.cverbs_set_nonblock(ch.fd); rc < 0 {
		C.ibv_destroy_comp_channel(ch)
		return nil, errnoErr(op, err)
	}
	tw, err := newThreadWaiter(op)
	if err != nil {
		C.ibv_destroy_comp_channel(ch)
		return nil, err
	}
	return &CompChannel{cgoCompChannel{ch: ch, ctx: c, tw: tw}}, nil
}

// netpoller returns the waiter of Wait, registering a duplicate of the
// channel's descriptor with the netpoller on first use. Registration waits
// for a Wait that needs it: from then on every completion event wakes the
// netpoller's thread, whether or not a goroutine waits there, and a
// channel only waited on with WaitBlocking is better off without (2-vCPU
// VM, blocking 4 KiB send ping-pong, p50 206-220 us registered, 175-187 us
// not). Caller holds mu.
func (ch *CompChannel) netpoller(op string) (*fdWaiter, error) {
	ch.wmu.Lock()
	defer ch.wmu.Unlock()
	if ch.closed.Load() {
		return nil, closedErr(op)
	}
	if ch.w == nil {
		w, err := newFDWaiter(op, ch.ch.fd, ch.ctx.name+"-comp")
		if err != nil {
			return nil, err
		}
		ch.w = w
	}
	return ch.w, nil
}

// Close destroys the channel, waking any Wait with ErrClosed. It fails with
// EBUSY while CQs still use the channel.
func (ch *CompChannel) Close() error {
	if ch == nil {
		return nil
	}
	// Refuse while CQs use the channel, before anything is torn down, so a
	// failed Close leaves the channel working.
	ch.mu.RLock()
	busy := ch.ch != nil && ch.ch.refcnt != 0
	ch.mu.RUnlock()
	if busy {
		return opErr("ibv_destroy_comp_channel", int(syscall.EBUSY))
	}
	if !ch.closed.Swap(true) {
		// Close the dup first: it wakes waiters, which release ch.mu, and
		// must not outlive the channel's own descriptor. A Wait that
		// registers from now on finds the channel closed.
		ch.wmu.Lock()
		w := ch.w
		ch.wmu.Unlock()
		w.close()
		ch.tw.close()
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.ch == nil {
		return nil
	}
	if rc := C.ibv_destroy_comp_channel(ch.ch); rc != 0 {
		return opErr("ibv_destroy_comp_channel", int(rc))
	}
	ch.ch = nil
	ch.tw.free()
	return nil
}

// Wait waits through the netpoller for a completion event, acknowledges it
// and returns its CQ. Call CQ.ReqNotify again to get the next event. It
// returns ctx.Err() when ctx ends first. A waiting goroutine holds no
// thread.
func (ch *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	return ch.wait(ctx, false, time.Time{})
}

// WaitBlocking is Wait for a waiter to which the wake-up's latency matters:
// it blocks the calling goroutine's thread in the kernel, as a C program's
// ibv_get_cq_event does, so that an event wakes that thread directly
// instead of going through the netpoller and the scheduler. Each waiting
// call holds a thread.
func (ch *CompChannel) WaitBlocking(ctx context.Context) (*CQ, error) {
	return ch.wait(ctx, true, time.Time{})
}

// WaitBlockingUntil is WaitBlocking that also ends at deadline (the zero
// time: never) with context.DeadlineExceeded. The blocked thread's own
// timeout ends it: no runtime timer is set up, as one from
// context.WithDeadline would be, and then woken for and torn down.
// WaitBlocking and WaitBlockingUntil allocate nothing when ctx cannot end.
func (ch *CompChannel) WaitBlockingUntil(ctx context.Context, deadline time.Time) (*CQ, error) {
	return ch.wait(ctx, true, deadline)
}

// Interrupt ends the WaitBlocking or WaitBlockingUntil in progress, or the
// next one if none is, with a nil CQ and a nil error: the waiter is to look
// again at what it waits for. Unlike a context cancelled for the purpose,
// it allocates nothing. It does not end a Wait.
func (ch *CompChannel) Interrupt() {
	if ch == nil {
		return
	}
	ch.mu.RLock() // the eventfd lives as long as the channel
	defer ch.mu.RUnlock()
	if ch.ch != nil {
		ch.tw.interrupt()
	}
}

func (ch *CompChannel) wait(ctx context.Context, blocking bool, deadline time.Time) (*CQ, error) {
	const op = "ibv_get_cq_event"
	if ch == nil {
		return nil, closedErr(op)
	}
	ch.mu.RLock()
	defer ch.mu.RUnlock()
	if ch.ch == nil || ch.closed.Load() {
		return nil, closedErr(op)
	}
	if blocking {
		return ch.waitThread(ctx, op, deadline)
	}
	w, err := ch.netpoller(op)
	if err != nil {
		return nil, err
	}
	var cq *CQ
	var evErr error
	err = w.wait(ctx, op, func() (done bool) {
		cq, done, evErr = ch.takeEvent(op)
		return done
	})
	if err != nil {
		return nil, err
	}
	return cq, evErr
}

// waitThread is wait in the calling thread. It has a function of its own
// so that its closure and results stay on the stack (the netpoller's
// waiter keeps its closure). Caller holds mu, which keeps the channel's
// descriptor open until the wait ends.
func (ch *CompChannel) waitThread(ctx context.Context, op string, deadline time.Time) (*CQ, error) {
	var cq *CQ
	var evErr error
	err := ch.tw.wait(ctx, op, ch.ch.fd, deadline, func() (done bool) {
		cq, done, evErr = ch.takeEvent(op)
		return done
	})
	if err == errWoken {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cq, evErr
}

// takeEvent reads the channel's next event and acknowledges it; done is
// false when there is none yet (EAGAIN). Caller holds mu.
func (ch *CompChannel) takeEvent(op string) (cq *CQ, done bool, err error) {
	var ccq *C.struct_ibv_cq
	var id C.uintptr_t
	rc := C.cverbs_get_ack_cq_event(ch.ch, &ccq, &id)
	if rc == C.EAGAIN {
		return nil, false, nil
	}
	if rc != 0 {
		return nil, true, opErr(op, int(rc))
	}
	// Acked already, so the CQ may be gone and its address reused: the id
	// tells a new CQ from the one the event was for.
	if cq = cqRegistry.get(unsafe.Pointer(ccq)); cq == nil || cq.id != uintptr(id) {
		return nil, true, opErr(op, int(syscall.ENOENT))
	}
	return cq, true, nil
}

// cgoCQ is the state of a CQ in the cgo build.
type cgoCQ struct {
	mu  sync.Mutex // keeps Close away from Poll and Resize
	cq  *C.struct_ibv_cq
	ctx *Context
	ch  *CompChannel
	cqe int
	id  uintptr  // the C CQ's context: tells this CQ from a later one at its address
	rxe rxeQueue // the queue itself on Soft-RoCE (rxe.go), polled without the verbs
}

// cqIDs numbers the CQs.
var cqIDs atomic.Uintptr

// NewCQ creates a completion queue of at least cqe entries. ch may be nil
// when completion events are not needed.
func (c *Context) NewCQ(cqe int, ch *CompChannel) (*CQ, error) {
	const op = "ibv_create_cq"
	if cqe <= 0 || cqe > 1<<30 {
		return nil, opErr(op, int(syscall.EINVAL))
	}
	ctx, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		ch.mu.RLock()
		defer ch.mu.RUnlock()
		if ch.ch == nil {
			return nil, closedErr(op)
		}
		cch = ch.ch
	}
	id := cqIDs.Add(1)
	ccq, err := C.cverbs_create_cq(ctx, C.int(cqe), cch, C.uintptr_t(id))
	if ccq == nil {
		return nil, errnoErr(op, err)
	}
	cq := &CQ{cgoCQ{cq: ccq, ctx: c, ch: ch, cqe: int(ccq.cqe), id: id, rxe: findRXECQ(ccq)}}
	cqRegistry.add(unsafe.Pointer(ccq), cq)
	return cq, nil
}

// CQE returns the number of entries the CQ actually has.
func (cq *CQ) CQE() int {
	if cq == nil {
		return 0
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.cqe
}

// Close destroys the CQ. It fails with EBUSY while QPs still use it.
func (cq *CQ) Close() error {
	if cq == nil {
		return nil
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.cq == nil {
		return nil
	}
	ccq := cq.cq
	if rc := C.ibv_destroy_cq(ccq); rc != 0 {
		return opErr("ibv_destroy_cq", int(rc))
	}
	cq.cq, cq.rxe = nil, rxeQueue{}
	cqRegistry.del(unsafe.Pointer(ccq), cq)
	return nil
}

// Resize changes the number of CQ entries (ibv_resize_cq).
func (cq *CQ) Resize(cqe int) error {
	const op = "ibv_resize_cq"
	if cqe <= 0 || cqe > 1<<30 {
		return opErr(op, int(syscall.EINVAL))
	}
	if cq == nil {
		return closedErr(op)
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.cq == nil {
		return closedErr(op)
	}
	// librxe maps the resized queue anew.
	rc := C.ibv_resize_cq(cq.cq, C.int(cqe))
	cq.rxe = findRXECQ(cq.cq)
	if rc != 0 {
		return opErr(op, int(rc))
	}
	cq.cqe = int(cq.cq.cqe)
	return nil
}

// ReqNotify arms the CQ to report a completion event to its channel on the
// next completion (or next solicited completion).
func (cq *CQ) ReqNotify(solicitedOnly bool) error {
	const op = "ibv_req_notify_cq"
	if cq == nil {
		return closedErr(op)
	}
	so := C.int(0)
	if solicitedOnly {
		so = 1
	}
	cq.mu.Lock()
	if cq.cq == nil {
		cq.mu.Unlock()
		return closedErr(op)
	}
	rc := C.cverbs_req_notify_cq(C.uintptr_t(uintptr(unsafe.Pointer(cq.cq))), so)
	cq.mu.Unlock()
	return opErr(op, int(rc))
}

// Poll fetches up to len(wc) completions into wc and returns how many it
// got: one cgo call, in which the provider writes them straight into wc
// (WC is struct ibv_wc), so nothing is copied or allocated.
func (cq *CQ) Poll(wc []WC) (int, error) {
	if cq == nil {
		return 0, closedErr("ibv_poll_cq")
	}
	if len(wc) == 0 {
		return 0, nil
	}
	// No defer: this is the hot path of every completion and empty poll.
	cq.mu.Lock()
	if cq.cq == nil {
		cq.mu.Unlock()
		return 0, closedErr("ibv_poll_cq")
	}
	if cq.rxe.buf != nil {
		n, _ := cq.pollDirect(wc[:min(len(wc), maxPoll)])
		cq.mu.Unlock()
		return n, nil
	}
	// wc is Go memory without pointers, which C may write during the call
	// (the cgo rules); as a uintptr it costs no pointer check.
	n := int(C.cverbs_poll_cq(C.uintptr_t(uintptr(unsafe.Pointer(cq.cq))), C.int(min(len(wc), maxPoll)),
		C.uintptr_t(uintptr(unsafe.Pointer(&wc[0])))))
	cq.mu.Unlock()
	if n < 0 {
		// ibv_poll_cq returns a negative value, not an errno.
		return 0, opErr("ibv_poll_cq", int(syscall.EIO))
	}
	immToHost(wc[:n])
	return n, nil
}

// PollSerial is Poll for a caller that serializes the CQ's use itself: on
// the direct path it takes no lock, so the caller must keep every other
// Poll, PollArm, Resize and Close of the CQ from running meanwhile (udat's
// EVD does all of them under its own lock, and unsets its CQ under that
// lock before it closes it).
func (cq *CQ) PollSerial(wc []WC) (int, error) { return cq.pollDirect(wc) }

// maxPoll bounds what one ibv_poll_cq is asked for (its count is an int).
const maxPoll = 1 << 30

// PollArm is Poll for a waiter about to block on the channel, in one cgo
// call: it polls up to len(wc) completions and, when fewer than need
// arrive, arms the CQ as ReqNotify does and polls again for the rest, so
// that a completion that comes after the first poll is either returned or
// reported on the channel. armed says whether the CQ was armed. An empty wc
// is EINVAL.
func (cq *CQ) PollArm(wc []WC, need int, solicitedOnly bool) (got int, armed bool, err error) {
	const op = "ibv_poll_cq"
	if cq == nil {
		return 0, false, closedErr(op)
	}
	if len(wc) == 0 {
		return 0, false, opErr(op, int(syscall.EINVAL))
	}
	cq.mu.Lock()
	if cq.cq == nil {
		cq.mu.Unlock()
		return 0, false, closedErr(op)
	}
	wc = wc[:min(len(wc), maxPoll)]
	first := 0
	if cq.rxe.buf != nil {
		// Polled here; the crossing below only when the CQ must be armed.
		if first, _ = cq.pollDirect(wc); first >= need || first == len(wc) {
			cq.mu.Unlock()
			return first, false, nil
		}
	}
	so := C.int(0)
	if solicitedOnly {
		so = 1
	}
	var carmed, notifyRC C.int
	n := int(C.cverbs_poll_arm(C.uintptr_t(uintptr(unsafe.Pointer(cq.cq))), C.int(len(wc)-first),
		C.uintptr_t(uintptr(unsafe.Pointer(&wc[first]))), C.int(need-first), so, &carmed, &notifyRC))
	cq.mu.Unlock()
	if n < 0 {
		n = 0
		if first == 0 {
			return 0, carmed != 0, opErr(op, int(syscall.EIO))
		}
	}
	immToHost(wc[first : first+n])
	n += first
	if notifyRC != 0 {
		err = opErr("ibv_req_notify_cq", int(notifyRC))
	}
	return n, carmed != 0, err
}

// immToHost puts the immediate data of the completions that carry it in
// host byte order: ibv_wc holds it as it came on the wire. (The invalidated
// rkey that shares its place is in host order already.)
func immToHost(wc []WC) {
	for i := range wc {
		if w := &wc[i]; w.Flags&WCFlagWithImm != 0 {
			w.Imm = bits.ReverseBytes32(w.Imm)
		}
	}
}

// WC and struct ibv_wc are one layout (a size or an offset that differs
// stops the build).
var (
	_ = [1]struct{}{}[unsafe.Sizeof(WC{})-C.sizeof_struct_ibv_wc]
	_ = [1]struct{}{}[unsafe.Offsetof(WC{}.Imm)-unsafe.Offsetof(C.struct_ibv_wc{}.anon0)]
	_ = [1]struct{}{}[unsafe.Offsetof(WC{}.QPNum)-unsafe.Offsetof(C.struct_ibv_wc{}.qp_num)]
	_ = [1]struct{}{}[unsafe.Offsetof(WC{}.Flags)-unsafe.Offsetof(C.struct_ibv_wc{}.wc_flags)]
	_ = [1]struct{}{}[unsafe.Offsetof(WC{}.PKeyIndex)-unsafe.Offsetof(C.struct_ibv_wc{}.pkey_index)]
	_ = [1]struct{}{}[unsafe.Offsetof(WC{}.DLIDPathBits)-unsafe.Offsetof(C.struct_ibv_wc{}.dlid_path_bits)]
)

// cptr returns the C CQ, or nil if cq is nil or closed.
func (cq *CQ) cptr() *C.struct_ibv_cq {
	if cq == nil {
		return nil
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.cq
}

//go:build linux && cgo

package cverbs

/*
#define _GNU_SOURCE // ppoll
#include "cverbs.h"
#include <poll.h>
#include <sys/eventfd.h>

// cverbs_wait_in blocks until fd is readable (1) or wakefd is signalled (2,
// and the signal is consumed), at most timeout_ns when that is not negative
// (0: timed out). A signal interrupting the wait counts as a wake-up.
static int cverbs_wait_in(int fd, int wakefd, int64_t timeout_ns)
{
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = wakefd, .events = POLLIN}};
	struct timespec ts, *tp = NULL;
	uint64_t v;
	int rc;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tp = &ts;
	}
	rc = ppoll(p, 2, tp, NULL);
	if (rc < 0)
		return errno == EINTR ? 2 : -errno;
	if (rc == 0)
		return 0;
	if (p[1].revents) {
		if (read(wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		return 2;
	}
	return 1;
}
*/
import "C"

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"time"
)

// threadWaiter waits for a descriptor the way a C program does: the
// waiting goroutine's thread blocks in ppoll(2), and the kernel wakes that
// thread when the descriptor becomes readable. Through the netpoller the
// same wake-up takes the netpoller's thread, a hand-off to the scheduler
// and often a second thread woken to spin (measured on two emulated CPUs,
// side by side: a blocking 4 KiB send ping-pong's p50 was 328 us that way
// and 235 us this way, perftest's 125-129 us). The price is a thread per
// waiting call. An eventfd ends a wait early: an interrupt, a context's
// end, or close.
type threadWaiter struct {
	wake        C.int
	turn        chan struct{} // one waiter at a time: the eventfd is shared
	closed      atomic.Bool
	interrupted atomic.Bool // the current or next wait returns errWoken
}

// errWoken ends a wait that interrupt woke.
var errWoken = errors.New("woken")

func newThreadWaiter(op string) (*threadWaiter, error) {
	fd, err := C.eventfd(0, C.EFD_NONBLOCK|C.EFD_CLOEXEC)
	if fd < 0 {
		return nil, errnoErr(op, err)
	}
	return &threadWaiter{wake: fd, turn: make(chan struct{}, 1)}, nil
}

// kick makes the current wait, if any, look at its state again.
func (w *threadWaiter) kick() {
	one := [8]byte{1}
	syscall.Write(int(w.wake), one[:])
}

// interrupt makes the current wait, or the next if none is in progress,
// return errWoken.
func (w *threadWaiter) interrupt() {
	w.interrupted.Store(true)
	w.kick()
}

// close makes every wait, current or later, return ErrClosed.
func (w *threadWaiter) close() {
	if w != nil && !w.closed.Swap(true) {
		w.kick()
	}
}

// free releases the eventfd; no wait may be running or start.
func (w *threadWaiter) free() {
	if w != nil && w.wake >= 0 {
		syscall.Close(int(w.wake))
		w.wake = -1
	}
}

// wait calls try until it reports done, blocking on fd whenever it returns
// false (the non-blocking verb said EAGAIN). It returns ctx.Err() if ctx
// ends first, context.DeadlineExceeded at deadline (unless it is zero),
// errWoken when interrupted and ErrClosed once the waiter is closed. fd
// must stay open until wait returns. It allocates nothing unless ctx can
// end.
func (w *threadWaiter) wait(ctx context.Context, op string, fd C.int, deadline time.Time, try func() bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := takeTurn(ctx, w.turn); err != nil {
		return err
	}
	defer func() { <-w.turn }()
	if ctx.Done() != nil {
		defer whenDone(ctx, w.kick)()
	}
	// ppoll reports a descriptor that is readable already (unlike the
	// netpoller, which reports changes), so the wait comes first and try
	// runs once the descriptor is readable, or after a wake-up.
	dl, hasDL := ctx.Deadline()
	if !deadline.IsZero() && (!hasDL || deadline.Before(dl)) {
		dl, hasDL = deadline, true
	}
	for {
		if w.closed.Load() {
			return &OpError{Op: op, Err: ErrClosed}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.interrupted.Swap(false) {
			return errWoken
		}
		timeout := int64(-1)
		if hasDL {
			if timeout = int64(time.Until(dl)); timeout <= 0 {
				return context.DeadlineExceeded
			}
		}
		rc := C.cverbs_wait_in(fd, w.wake, C.int64_t(timeout))
		if rc < 0 {
			return opErr(op, int(-rc))
		}
		if rc == 1 && try() {
			return nil
		}
	}
}

//go:build linux && cgo

package cverbs

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo LDFLAGS: -libverbs -lrdmacm
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// fdWaiter waits for a verbs or rdma_cm file descriptor to become readable
// through Go's netpoller, so a waiting goroutine does not hold an OS thread.
// It owns a non-blocking duplicate of the descriptor; the verbs library keeps
// using the original, and both share one file description (and readiness).
type fdWaiter struct {
	f  *os.File
	rc syscall.RawConn
	// turn serialises waiters: the read deadline belongs to the file, so
	// only one waiter at a time may use it for its context.
	turn   chan struct{}
	closed atomic.Bool
}

// longAgo is a read deadline that has already passed; setting it wakes the
// current waiter.
var longAgo = time.Unix(1, 0)

func newFDWaiter(op string, fd C.int, name string) (*fdWaiter, error) {
	nfd, err := C.cverbs_dup_nonblock(fd)
	if nfd < 0 {
		return nil, errnoErr(op, err)
	}
	f := os.NewFile(uintptr(nfd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, &OpError{Op: op, Err: err}
	}
	return &fdWaiter{f: f, rc: rc, turn: make(chan struct{}, 1)}, nil
}

// close closes the duplicate, which wakes any waiter with ErrClosed. The
// caller destroys the verbs object afterwards.
func (w *fdWaiter) close() {
	if w != nil {
		w.closed.Store(true)
		w.f.Close()
	}
}

// wait calls try until it reports done, parking on the netpoller whenever it
// returns false (the non-blocking verb said EAGAIN). It returns ctx.Err() if
// the context ends first and ErrClosed if the waiter is closed.
func (w *fdWaiter) wait(ctx context.Context, op string, try func() bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	release, err := w.begin(ctx, op)
	if err != nil {
		return err
	}
	err = w.rc.Read(func(uintptr) bool { return try() })
	w.end(release)
	if err != nil {
		return w.mapErr(ctx, op, err)
	}
	return nil
}

// begin takes the waiter's turn and sets its read deadline from ctx (one
// in the past once ctx is cancelled); end, given release, undoes both.
func (w *fdWaiter) begin(ctx context.Context, op string) (release func(), err error) {
	if err := takeTurn(ctx, w.turn); err != nil {
		return nil, err
	}
	dl, _ := ctx.Deadline() // zero time when there is none
	if err := w.f.SetReadDeadline(dl); err != nil {
		<-w.turn
		return nil, w.mapErr(ctx, op, err)
	}
	// Cancellation without a deadline moves the deadline into the past.
	return whenDone(ctx, func() { w.f.SetReadDeadline(longAgo) }), nil
}

func (w *fdWaiter) end(release func()) {
	release()
	<-w.turn
}

// takeTurn waits until the caller has turn, a waiter's exclusive use of
// what its wait changes (a deadline, an eventfd), or until ctx ends. The
// caller gives the turn back with <-turn.
func takeTurn(ctx context.Context, turn chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// whenDone has wake called once ctx ends (from an AfterFunc, which needs no
// goroutine until then). release stops that and, if wake ran or is running,
// waits for it to finish, so that it cannot reach the next waiter.
func whenDone(ctx context.Context, wake func()) (release func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		wake()
		close(fired)
	})
	return func() {
		if !stop() {
			<-fired
		}
	}
}

func (w *fdWaiter) mapErr(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	switch {
	case w.closed.Load() || errors.Is(err, os.ErrClosed):
		// RawConn.Read reports a close as internal/poll's ErrFileClosing.
		return &OpError{Op: op, Err: ErrClosed}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The file deadline fired at ctx's deadline, a moment before ctx's
		// own timer marked it done.
		return context.DeadlineExceeded
	}
	return &OpError{Op: op, Err: err}
}

// newFDWaiterInt is newFDWaiter for callers without cgo types (tests).
func newFDWaiterInt(op string, fd int, name string) (*fdWaiter, error) {
	return newFDWaiter(op, C.int(fd), name)
}

package cverbs

import (
	"errors"
	"fmt"
	"syscall"
)

// OpError reports a failed verb: Op names the libibverbs or librdmacm call
// and Err is the error it returned, usually a syscall.Errno.
type OpError struct {
	Op  string
	Err error
}

// Error returns "op: err".
func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error so errors.Is(err, syscall.EINVAL) works.
func (e *OpError) Unwrap() error { return e.Err }

// ErrClosed is returned when an object is used after it was destroyed.
var ErrClosed = errors.New("cverbs: object is closed")

// ErrUnsupported is the error of every verb in a build without RDMA support
// (not Linux, or cgo disabled): nothing can be opened or created there. It
// wraps errors.ErrUnsupported, and comes wrapped in an *OpError that names
// the verb.
var ErrUnsupported = fmt.Errorf("cverbs: RDMA needs Linux and cgo: %w", errors.ErrUnsupported)

// opErr wraps a verb's return value. Verbs return either 0, a positive errno
// (ibv_post_*, ibv_modify_qp, ...) or -1 with errno set (ibv_reg_mr returning
// NULL, rdma_* calls); callers pass whichever errno applies.
func opErr(op string, errno int) error {
	if errno == 0 {
		return nil
	}
	if errno < 0 {
		errno = -errno
	}
	return &OpError{Op: op, Err: syscall.Errno(errno)}
}

// errnoErr converts the err returned by a cgo call (errno captured by cgo)
// into an OpError, falling back to EIO when errno was not set.
func errnoErr(op string, err error) error {
	var en syscall.Errno
	if errors.As(err, &en) {
		if en == 0 {
			return &OpError{Op: op, Err: syscall.EIO}
		}
		return &OpError{Op: op, Err: en}
	}
	if err != nil {
		return &OpError{Op: op, Err: err}
	}
	return &OpError{Op: op, Err: syscall.EIO}
}

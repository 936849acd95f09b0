//go:build linux && cgo

package cverbs

import (
	"sync"
	"unsafe"
)

// registry maps C object addresses back to their Go wrappers. C memory never
// holds Go pointers, so events that name a C object (a CQ event, an async
// event, an rdma_cm event) are resolved here. Entries are removed only after
// the C object is destroyed, and the verbs library does not destroy an object
// while one of its events is unacknowledged, so a lookup made before the ack
// always finds the right wrapper.
type registry[T any] struct {
	mu sync.Mutex
	m  map[uintptr]*T
}

func (r *registry[T]) add(p unsafe.Pointer, v *T) {
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[uintptr]*T)
	}
	r.m[uintptr(p)] = v
	r.mu.Unlock()
}

// del removes p only if it still maps to v, so a stale delete cannot drop a
// newer object that reuses the address.
func (r *registry[T]) del(p unsafe.Pointer, v *T) {
	r.mu.Lock()
	if r.m[uintptr(p)] == v {
		delete(r.m, uintptr(p))
	}
	r.mu.Unlock()
}

func (r *registry[T]) get(p unsafe.Pointer) *T {
	if p == nil {
		return nil
	}
	r.mu.Lock()
	v := r.m[uintptr(p)]
	r.mu.Unlock()
	return v
}

var (
	cqRegistry   registry[CQ]
	qpRegistry   registry[QP]
	srqRegistry  registry[SRQ]
	cmidRegistry registry[CMID]
)

// closedErr is the error for a nil or destroyed object.
func closedErr(op string) error { return &OpError{Op: op, Err: ErrClosed} }

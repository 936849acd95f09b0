//go:build linux && cgo

package cverbs

import (
	"sync"
	"unsafe"
)

// Soft-iWARP's user ABI marks a queue it could not map with the mmap
// offset 0x90000 (SIW_INVAL_UOBJ_KEY), yet the kernel hands out offsets
// from 0, lowest free range first, so 0x90000 is also a valid one: the CQ,
// QP or SRQ whose queue is mapped there is refused by libsiw (a context
// with one large CQ and small QPs runs into it at its 40th QP:
// ibv_create_qp fails with EIO, in C DAPL too). A siw context therefore
// gets, at its first Open, a CQ of its own whose mapping covers that
// offset, so that no queue can start there. It costs the kernel 1 MiB per
// device and process.

// siwVendorID is soft-iWARP's vendor_id ("bmt").
const siwVendorID = 0x626d74

// siwBadKey is SIW_INVAL_UOBJ_KEY, a byte offset.
const siwBadKey = 0x90000

// siwCQESize is sizeof(struct siw_cqe), the size of a CQ entry in the
// mapping.
const siwCQESize = 32

// siwGuards holds the guard CQ of each siw context librdmacm shares,
// which stays open for the life of the process, as they do.
var siwGuards struct {
	sync.Mutex
	cqs map[uintptr]*CQ
}

// guardSIW gives c, if it is a siw device, the CQ that keeps queues off
// offset siwBadKey. A shared (librdmacm) context gets one CQ per process;
// one of its own keeps it until Close. Nothing is done if the CQ cannot be
// made: the context works as before, with siw's limit.
func (c *Context) guardSIW() {
	if a, err := c.QueryDevice(); err != nil || a.VendorID != siwVendorID {
		return
	}
	// siw rounds the count up to a power of two: a 1 MiB mapping, which
	// covers the offset from any start below it.
	const cqe = siwBadKey/siwCQESize + 1
	if !c.fromCM {
		c.siwGuard, _ = c.NewCQ(cqe, nil)
		return
	}
	siwGuards.Lock()
	defer siwGuards.Unlock()
	key := uintptr(unsafe.Pointer(c.ctx))
	if siwGuards.cqs[key] != nil {
		return
	}
	if cq, err := c.NewCQ(cqe, nil); err == nil {
		if siwGuards.cqs == nil {
			siwGuards.cqs = make(map[uintptr]*CQ)
		}
		siwGuards.cqs[key] = cq
	}
}

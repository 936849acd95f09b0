package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/udapl-go/udapl/udat"
)

// Vendor ids (vendor_id) of the software devices: rdma_rxe's
// RXE_VENDOR_ID and siw's SIW_VENDOR_ID ("bmt").
const (
	softRoCEVendorID  = 0xffffff
	softIWARPVendorID = 0x626d74
)

// procsFor gives the runtime a second P on a one-CPU machine for the
// client's operations whose posts are long system calls, unless
// GOMAXPROCS is set (secondP says which). With a single P the runtime's
// monitor takes the P from the goroutine in such a call, and the call's
// return waits for a P to be handed back; with a second, idle P the
// monitor leaves the call alone. Where a kernel thread does the work
// instead, the second P's thread only takes the one CPU from it. The
// server keeps one P (runServer does not call this): in a send test it
// has a receive to take for every message, and a second P's wake-ups take
// the CPU from that (siw0, Linux 6.1, 64 B sends: one P on the server
// 24.0k msg/s, two 18.0k). On two or more CPUs GOMAXPROCS is at least two
// anyway.
func procsFor(ia *udat.IA, op opKind) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) >= 2 {
		return
	}
	attr, _, err := ia.Query()
	if err == nil && secondP(attr.VendorID, op, kernelAtLeast(6, 10)) {
		runtime.GOMAXPROCS(2)
	}
}

// secondP reports whether a one-CPU client of op on the device of vendor
// takes a second P, with since610 whether the kernel is Linux 6.10 or
// later. Measured in the deterministic (one-vCPU) VM, msg/s with two Ps
// and with one, the server with one:
//
//   - Soft-RoCE ran its requester inside ibv_post_send's write(2) until
//     Linux 6.10, so its writes and reads take two Ps. rxe0, 6.1, 64 B at
//     depth 64: writes 67.2k/67.4k, reads 56.5k/50.8k. From 6.10 on the
//     post only schedules the requester: rxe0, 6.12, writes 26.7k/29.7k,
//     reads 26.4k/29.3k, posts of 16 49.4k/57.3k.
//   - Its sends keep one P on either kernel: a send test's server has a
//     receive to take for every message, and on rxe a second P's wake-ups
//     take the one CPU from it. rxe0, 64 B: 6.1 two Ps each 29.3k-30.3k,
//     one P on the server 31.1k-33.5k, one each 34.0k (perftest 33.9k);
//     6.12 14.1k/14.4k, 4 KiB 6.2k/6.6k.
//   - soft-iWARP transmits a send inside the post when its send queue is
//     idle (siw_post_send), and udattest's sends there run with credits
//     (credits.go): while the client waits for the server's reposts its
//     queue drains, so the next post, we infer, transmits. Its sends take
//     two Ps. siw0, 6.1: 64 B 32.2k/24.0k and 32.2k/20.7k, 4 KiB
//     22.8k/15.0k and 21.7k/15.0k (perftest 25.0k-26.6k and 18.6k); 6.12:
//     64 B 24.3k/23.2k, 4 KiB 23.9k/22.1k. Its RDMA streams keep the queue
//     busy, and a second P's thread takes the CPU from siw's threads:
//     6.1, 64 B writes 44.3k/52.5k, reads 16.4k/26.0k, 4 KiB writes
//     31.2k/36.3k, reads 8.5k/12.0k, posts of 16 52.2k/53.4k.
func secondP(vendor uint32, op opKind, since610 bool) bool {
	switch vendor {
	case softRoCEVendorID:
		return op != opSend && !since610
	case softIWARPVendorID:
		return op == opSend
	}
	return false
}

// kernelAtLeast reports whether the running kernel's version is at least
// major.minor (false if it cannot tell: not Linux).
func kernelAtLeast(major, minor int) bool {
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	return err == nil && releaseAtLeast(string(release), major, minor)
}

// releaseAtLeast reports whether a kernel release string ("6.12.117+deb12-
// amd64") names version major.minor or later.
func releaseAtLeast(release string, major, minor int) bool {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

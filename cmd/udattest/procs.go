package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/udapl-go/udapl/udat"
)

// softRoCEVendorID is Soft-RoCE's vendor_id (rdma_rxe's RXE_VENDOR_ID).
const softRoCEVendorID = 0xffffff

// procsFor gives the runtime a second P on a one-CPU machine for a
// client's RDMA writes and reads when the device does its work inside the
// post's system call, unless GOMAXPROCS is set. Soft-RoCE ran its
// requester inside ibv_post_send's write(2) until Linux 6.10: with a
// single P the runtime's monitor then takes the P from the goroutine in
// that long call, and the call's return waits for a P to be handed back;
// with a second, idle P the monitor leaves the call alone. Where a kernel
// thread does the device's work (Soft-RoCE from 6.10 on, soft-iWARP
// always) the post returns at once, and the second P's thread only takes
// the one CPU from that kernel thread. Measured in the deterministic
// (one-vCPU) VM, 64 B operations at depth 64, msg/s with two Ps and with
// one:
//
//	rxe0, Linux 6.1 (the server with one P): writes 67.2k/67.4k, reads 56.5k/50.8k
//	rxe0, Linux 6.12: writes 26.7k/29.7k, reads 26.4k/29.3k, posts of 16 49.4k/57.3k
//	siw0, Linux 6.1:  writes 44.3k/52.5k, reads 16.4k/26.0k
//
// Sends keep one P, and so does the server (runServer does not call
// this): in a send test the server has a receive to take for every
// message, and the wake-ups of a second P's thread, on either side, take
// the one CPU from it. rxe0 under 6.1, 64 B sends, server and client:
// two Ps each 29.3k-30.3k, one P on the server 31.1k-33.5k, one each
// 34.0k (perftest 33.9k). On two or more CPUs GOMAXPROCS is at least two
// anyway.
func procsFor(ia *udat.IA, op opKind) {
	if op == opSend || os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) >= 2 {
		return
	}
	attr, _, err := ia.Query()
	if err == nil && attr.VendorID == softRoCEVendorID && !kernelAtLeast(6, 10) {
		runtime.GOMAXPROCS(2)
	}
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

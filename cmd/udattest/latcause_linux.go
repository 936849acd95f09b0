package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadCounters returns the calling thread's id, its voluntary and
// involuntary context switches so far, and the voluntary ones of the whole
// process. The calls are raw: a call the scheduler is told of (entersyscall)
// could have the runtime's monitor hand the P to another thread, which the
// notes would then count.
func threadCounters() (tid int, nvcsw, nivcsw, procVcsw int64, ok bool) {
	var ru, self unix.Rusage
	if _, _, e := unix.RawSyscall(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_THREAD), uintptr(unsafe.Pointer(&ru)), 0); e != 0 {
		return 0, 0, 0, 0, false
	}
	if _, _, e := unix.RawSyscall(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_SELF), uintptr(unsafe.Pointer(&self)), 0); e != 0 {
		return 0, 0, 0, 0, false
	}
	return unix.Gettid(), ru.Nvcsw, ru.Nivcsw, self.Nvcsw, true
}

//go:build unix

package udat

import "syscall"

// mapPages returns n bytes of page-aligned memory outside the Go heap, for
// AllocLMR.
func mapPages(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

// unmapPages returns memory from mapPages.
func unmapPages(b []byte) { syscall.Munmap(b) }

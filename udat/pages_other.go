//go:build !unix

package udat

import "errors"

// mapPages has no anonymous mmap here; AllocLMR cannot get this far
// anyway: without RDMA support no IA opens.
func mapPages(n int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapPages(b []byte) {}

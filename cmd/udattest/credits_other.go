//go:build !linux

package main

import "runtime"

// osYield yields to the Go scheduler only: outside Linux udat opens no
// device, and no run waits for credit.
func osYield() { runtime.Gosched() }

//go:build !linux

package main

import "os"

// isTerminal reports false: the progress line is on only when asked for
// (-progress on) outside Linux.
func isTerminal(f *os.File) bool { return false }

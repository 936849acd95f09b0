//go:build !cgo

package cdat

// HeadersPresent is false without cgo: the C headers cannot be read.
var HeadersPresent = false

// Values returns nothing without cgo.
func Values() map[string]int64 { return nil }

// CgoEnabled reports whether the package was built with cgo.
const CgoEnabled = false

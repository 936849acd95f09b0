//go:build !cgo

package cdat

import "errors"

// HeadersPresent is false without cgo: the C headers cannot be read.
var HeadersPresent = false

// Values returns nothing without cgo.
func Values() map[string]int64 { return nil }

// CgoEnabled reports whether the package was built with cgo.
const CgoEnabled = false

// Strerror always fails without cgo.
func Strerror(code uint32) (major, minor string, ret uint32, err error) {
	return "", "", 0, errors.New("cdat: built without cgo")
}

//go:build cgo

package cdat

// CgoEnabled reports whether the package was built with cgo.
const CgoEnabled = true

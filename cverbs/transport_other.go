//go:build !linux || !cgo

package cverbs

// The stub of Context.Transport (device.go) in the build without verbs; it
// belongs with the others in cverbs_other.go.

func (c *Context) Transport() Transport { return TransportUnknown }

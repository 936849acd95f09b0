//go:build linux && cgo

package cverbs

import _ "embed" // for go:embed

// cHeader embeds the C helpers the shims call. Go's build cache hashes only
// the headers in a package's own directory, not those under include/; an
// embedded file is hashed, so editing include/cverbs.h rebuilds cverbs.
//
//go:embed include/cverbs.h
var cHeader string

//go:embed include/cverbs_rxe.h
var cHeaderRXE string

package cverbs

// SRQInitAttr describes a shared receive queue to create. Limit, when
// non-zero, arms EventSRQLimitReached.
type SRQInitAttr struct {
	MaxWR  int
	MaxSGE int
	Limit  int
}

// SRQAttr are an SRQ's current attributes.
type SRQAttr struct {
	MaxWR  int
	MaxSGE int
	Limit  int
}

// SRQ is a shared receive queue.
type SRQ struct{ cgoSRQ }

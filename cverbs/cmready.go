package cverbs

// Operation names of CMID.ReadyQP's steps, in the Op of the error of the
// step that failed (ModifyQP's steps have ModifyQP's names).
const (
	OpSetACKTimeout = "rdma_set_option(ACK_TIMEOUT)"
	OpEstablish     = "rdma_establish"
	OpAccept        = "rdma_accept"
)

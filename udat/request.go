package udat

import "github.com/udapl-go/udapl/cverbs"

// Request is one send, RDMA write, RDMA read or IB extension DTO of a batch
// that EP.PostRequests posts. Its fields are the arguments of the call that
// posts it alone (dat_ep_post_send, dat_ep_post_rdma_write,
// dat_ep_post_rdma_read, and the extensions of ext_ib.go).
type Request struct {
	// Op is DTOSend, DTORDMAWrite, DTORDMARead, DTOIBRDMAWriteImmed,
	// DTOIBFetchAdd, DTOIBCmpSwap or, on a UD EP, DTOIBSendUD.
	Op       DTOOp
	LocalIOV []LMRTriplet
	Cookie   uint64
	Remote   RMRTriplet // RDMA and atomics
	Flags    CompletionFlags
	// Immed is the immediate data of DTOIBRDMAWriteImmed, and of a DTOSend
	// when WithImmed is set (PostSendImmed).
	Immed     uint32
	WithImmed bool
	AH        *IBAddrHandle // DTOIBSendUD: the peer (ud.go)
	Add       uint64        // DTOIBFetchAdd: the value added
	Compare   uint64        // DTOIBCmpSwap: the value compared
	Swap      uint64        // DTOIBCmpSwap: the value swapped in
}

// Recv is one receive of a batch that EP.PostRecvs posts: the arguments of
// dat_ep_post_recv.
type Recv struct {
	LocalIOV []LMRTriplet
	Cookie   uint64
	Flags    CompletionFlags
}

// requestOp describes one kind of request, one column per fact that its
// checks and its work request depend on.
type requestOp struct {
	op   DTOOp         // the operation it describes: its index in requestOps
	name string        // the DAT call that posts it
	verb cverbs.SendOp // the work request's operation
	// The DAT_INVALID_ARG subtypes of its flags argument, of the argument
	// that sets its size and of its remote buffer.
	flagArg, iovArg, remoteArg Return
	need                       MemPriv // what its local segments allow
	// solicited: it may carry CompletionSolicitedWait; it reaches the
	// peer's receive queue.
	solicited bool
	// inline: its local bytes may be copied into the work request.
	inline bool
	remote remoteRule // how its local and remote lengths must agree
	// plain: its work request is a verb, segments and a remote buffer
	// (cverbs.SendBatch.SetOne); otherwise it has atomic operands or a
	// datagram's address too.
	plain bool
}

// remoteRule is how a request's local and remote buffers must agree.
type remoteRule uint8

const (
	remoteNone   remoteRule = iota // sends, atomics: checked elsewhere or no remote
	remoteCovers                   // RDMA writes: the remote buffer holds the local one
	remoteFilled                   // RDMA reads: the local buffer holds the remote one
)

var requestOps = [...]requestOp{
	DTOSend: {op: DTOSend, name: "dat_ep_post_send", verb: cverbs.OpSend,
		flagArg: InvalidArg5, iovArg: InvalidArg3, need: MemPrivLocalRead,
		solicited: true, inline: true, plain: true},
	DTORDMAWrite: {op: DTORDMAWrite, name: "dat_ep_post_rdma_write", verb: cverbs.OpRDMAWrite,
		flagArg: InvalidArg6, iovArg: InvalidArg3, remoteArg: InvalidArg5, need: MemPrivLocalRead,
		solicited: true, inline: true, remote: remoteCovers, plain: true},
	DTORDMARead: {op: DTORDMARead, name: "dat_ep_post_rdma_read", verb: cverbs.OpRDMARead,
		flagArg: InvalidArg6, iovArg: InvalidArg5, remoteArg: InvalidArg5, need: MemPrivLocalWrite,
		remote: remoteFilled, plain: true},
	DTOIBRDMAWriteImmed: {op: DTOIBRDMAWriteImmed, name: "dat_ib_post_rdma_write_immed", verb: cverbs.OpRDMAWriteImm,
		flagArg: InvalidArg7, iovArg: InvalidArg3, remoteArg: InvalidArg5, need: MemPrivLocalRead,
		solicited: true, inline: true, remote: remoteCovers, plain: true},
	DTOIBFetchAdd: {op: DTOIBFetchAdd, name: "dat_ib_post_fetch_and_add", verb: cverbs.OpAtomicFetchAdd,
		flagArg: InvalidArg6, iovArg: InvalidArg3, remoteArg: InvalidArg5, need: MemPrivLocalWrite},
	DTOIBCmpSwap: {op: DTOIBCmpSwap, name: "dat_ib_post_cmp_and_swap", verb: cverbs.OpAtomicCmpSwap,
		flagArg: InvalidArg7, iovArg: InvalidArg4, remoteArg: InvalidArg6, need: MemPrivLocalWrite},
	DTOIBSendUD: {op: DTOIBSendUD, name: "dat_ib_post_send_ud", verb: cverbs.OpSend,
		flagArg: InvalidArg6, iovArg: InvalidArg3, remoteArg: InvalidArg4, need: MemPrivLocalRead,
		solicited: true, inline: true},
}

// requestOpOf returns the description of requests of kind op, or nil if
// op is not one that PostRequests posts.
func requestOpOf(op DTOOp) *requestOp {
	if op < DTOOp(len(requestOps)) && requestOps[op].name != "" {
		return &requestOps[op]
	}
	return nil
}

// requestName is the DAT call that posts a request of kind op.
func requestName(op DTOOp) string {
	if o := requestOpOf(op); o != nil {
		return o.name
	}
	return "dat_ep_post_send"
}

// verb is the work request operation that carries req.
func (req *Request) verb(o *requestOp) cverbs.SendOp {
	if req.WithImmed && req.Op == DTOSend {
		return cverbs.OpSendImm
	}
	return o.verb
}

const recvOp = "dat_ep_post_recv"

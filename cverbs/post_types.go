package cverbs

// SGE is a scatter/gather element. Its layout is that of struct ibv_sge (and
// of the DAT 2.0 LMR triplet), so SGLs are copied to C with one memmove.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendOp is the operation of a send work request.
type SendOp uint8

// Send operations. The zero value is OpSend.
const (
	OpSend SendOp = iota
	OpSendImm
	OpRDMAWrite
	OpRDMAWriteImm
	OpRDMARead
	OpAtomicCmpSwap  // compare CompareAdd with 8 bytes at RemoteAddr, swap in Swap
	OpAtomicFetchAdd // add CompareAdd to 8 bytes at RemoteAddr
)

var sendOpNames = [...]string{
	OpSend:           "SEND",
	OpSendImm:        "SEND_WITH_IMM",
	OpRDMAWrite:      "RDMA_WRITE",
	OpRDMAWriteImm:   "RDMA_WRITE_WITH_IMM",
	OpRDMARead:       "RDMA_READ",
	OpAtomicCmpSwap:  "ATOMIC_CMP_AND_SWP",
	OpAtomicFetchAdd: "ATOMIC_FETCH_AND_ADD",
}

// String returns the operation's name.
func (o SendOp) String() string {
	if int(o) < len(sendOpNames) {
		return sendOpNames[o]
	}
	return "SendOp(invalid)"
}

// SendFlags are send work request flags (IBV_SEND_* values).
type SendFlags uint32

// Send flags.
const (
	SendFence     SendFlags = 1
	SendSignaled  SendFlags = 2
	SendSolicited SendFlags = 4
	SendInline    SendFlags = 8
)

// SendWR is a send work request. RemoteAddr and RKey apply to RDMA and atomic
// operations, Imm (host byte order) to the *Imm operations, CompareAdd and
// Swap to atomics.
type SendWR struct {
	ID         uint64
	Op         SendOp
	Flags      SendFlags
	SGL        []SGE
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32
	CompareAdd uint64
	Swap       uint64
	// AH, RemoteQPN and RemoteQKey address a send on a UD QP (ud.go):
	// the datagram goes to QP RemoteQPN behind AH.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
}

// RecvWR is a receive work request.
type RecvWR struct {
	ID  uint64
	SGL []SGE
}

// SendBatch builds send work requests in place, in the C memory a QP posts
// from, and posts them with one call: QP.PostSend without building the WRs
// twice. QP.BeginSend returns one that holds the QP's send queue until Post
// or Cancel, exactly one of which must follow.
type SendBatch struct {
	qp *QP
}

// RecvBatch is SendBatch for receives, to a QP's receive queue
// (QP.BeginRecv) or to an SRQ (SRQ.BeginRecv).
type RecvBatch struct {
	qp  *QP
	srq *SRQ
}

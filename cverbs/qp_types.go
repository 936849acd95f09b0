package cverbs

import "strconv"

// QPInitAttr describes an RC queue pair to create. RecvCQ defaults to
// SendCQ. With SRQ set, receives go to the SRQ and MaxRecvWR/MaxRecvSGE are
// ignored.
type QPInitAttr struct {
	SendCQ     *CQ
	RecvCQ     *CQ
	SRQ        *SRQ
	MaxSendWR  int
	MaxRecvWR  int
	MaxSendSGE int
	MaxRecvSGE int
	MaxInline  int
}

// QPCap is what a QP was actually created with (at least what was asked).
type QPCap struct {
	MaxSendWR  int
	MaxRecvWR  int
	MaxSendSGE int
	MaxRecvSGE int
	MaxInline  int
}

// QPState is a queue pair state (enum ibv_qp_state values).
type QPState int

// QP states.
const (
	QPReset   QPState = 0
	QPInit    QPState = 1
	QPRTR     QPState = 2
	QPRTS     QPState = 3
	QPSQD     QPState = 4
	QPSQE     QPState = 5
	QPErr     QPState = 6
	QPUnknown QPState = 7
)

var qpStateNames = [...]string{
	QPReset: "RESET", QPInit: "INIT", QPRTR: "RTR", QPRTS: "RTS",
	QPSQD: "SQD", QPSQE: "SQE", QPErr: "ERR", QPUnknown: "UNKNOWN",
}

// String returns the state's name.
func (s QPState) String() string {
	if s >= 0 && int(s) < len(qpStateNames) {
		return qpStateNames[s]
	}
	return "QPState(" + strconv.Itoa(int(s)) + ")"
}

// RTRAttr are the attributes for INIT -> RTR. With a non-zero DGID the
// address vector is global (GRH, as RoCE needs) using SGIDIndex; otherwise
// DLID addresses an InfiniBand port. MTU is in bytes (256 ... 4096).
// MinRNRTimer and MaxDestRdAtomic are taken as given (0 is a valid value).
type RTRAttr struct {
	Port            uint8
	DestQPNum       uint32
	RQPSN           uint32
	MTU             int
	DGID            [16]byte
	SGIDIndex       int
	MaxDestRdAtomic int
	MinRNRTimer     int
	DLID            uint16 // InfiniBand only
	SL              uint8
	HopLimit        uint8 // default 64 when 0
}

// RTSAttr are the attributes for RTR -> RTS. Timeout is the IB exponent
// (4.096 us * 2^Timeout, 0 = infinite); RetryCnt and RNRRetry are 0..7 (7 =
// infinite RNR retries).
type RTSAttr struct {
	SQPSN       uint32
	Timeout     int
	RetryCnt    int
	RNRRetry    int
	MaxRdAtomic int
}

// QP is an RC queue pair. Requests are signalled only when they carry
// SendSignaled (sq_sig_all = 0).
type QP struct{ cgoQP }

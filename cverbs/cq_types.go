package cverbs

import "strconv"

// WCStatus is a completion status (enum ibv_wc_status values).
type WCStatus uint32

// Completion statuses.
const (
	WCSuccess          WCStatus = 0
	WCLocLenErr        WCStatus = 1
	WCLocQPOpErr       WCStatus = 2
	WCLocEECOpErr      WCStatus = 3
	WCLocProtErr       WCStatus = 4
	WCWRFlushErr       WCStatus = 5
	WCMWBindErr        WCStatus = 6
	WCBadRespErr       WCStatus = 7
	WCLocAccessErr     WCStatus = 8
	WCRemInvReqErr     WCStatus = 9
	WCRemAccessErr     WCStatus = 10
	WCRemOpErr         WCStatus = 11
	WCRetryExcErr      WCStatus = 12
	WCRNRRetryExcErr   WCStatus = 13
	WCLocRDDViolErr    WCStatus = 14
	WCRemInvRDReqErr   WCStatus = 15
	WCRemAbortErr      WCStatus = 16
	WCInvEECNErr       WCStatus = 17
	WCInvEECStateErr   WCStatus = 18
	WCFatalErr         WCStatus = 19
	WCRespTimeoutErr   WCStatus = 20
	WCGeneralErr       WCStatus = 21
	WCTMErr            WCStatus = 22
	WCTMRndvIncomplete WCStatus = 23
)

var wcStatusNames = [...]string{
	WCSuccess:          "success",
	WCLocLenErr:        "local length error",
	WCLocQPOpErr:       "local QP operation error",
	WCLocEECOpErr:      "local EE context operation error",
	WCLocProtErr:       "local protection error",
	WCWRFlushErr:       "Work Request Flushed Error",
	WCMWBindErr:        "memory management operation error",
	WCBadRespErr:       "bad response error",
	WCLocAccessErr:     "local access error",
	WCRemInvReqErr:     "remote invalid request error",
	WCRemAccessErr:     "remote access error",
	WCRemOpErr:         "remote operation error",
	WCRetryExcErr:      "transport retry counter exceeded",
	WCRNRRetryExcErr:   "RNR retry counter exceeded",
	WCLocRDDViolErr:    "local RDD violation error",
	WCRemInvRDReqErr:   "remote invalid RD request",
	WCRemAbortErr:      "aborted error",
	WCInvEECNErr:       "invalid EE context number",
	WCInvEECStateErr:   "invalid EE context state",
	WCFatalErr:         "fatal error",
	WCRespTimeoutErr:   "response timeout error",
	WCGeneralErr:       "general error",
	WCTMErr:            "TM error",
	WCTMRndvIncomplete: "TM software rendezvous",
}

// String returns the libibverbs description of the status
// (ibv_wc_status_str).
func (s WCStatus) String() string { return enumString(wcStatusNames[:], int(s), "unknown") }

// WCOpcode is the operation of a completion (enum ibv_wc_opcode values).
// It is not defined for completions with an error status.
type WCOpcode uint32

// Completion opcodes.
const (
	WCSend            WCOpcode = 0
	WCRDMAWrite       WCOpcode = 1
	WCRDMARead        WCOpcode = 2
	WCCompSwap        WCOpcode = 3
	WCFetchAdd        WCOpcode = 4
	WCBindMW          WCOpcode = 5
	WCLocalInv        WCOpcode = 6
	WCRecv            WCOpcode = 128
	WCRecvRDMAWithImm WCOpcode = 129
)

var wcOpcodeNames = map[WCOpcode]string{
	WCSend:            "SEND",
	WCRDMAWrite:       "RDMA_WRITE",
	WCRDMARead:        "RDMA_READ",
	WCCompSwap:        "COMP_SWAP",
	WCFetchAdd:        "FETCH_ADD",
	WCBindMW:          "BIND_MW",
	WCLocalInv:        "LOCAL_INV",
	WCRecv:            "RECV",
	WCRecvRDMAWithImm: "RECV_RDMA_WITH_IMM",
}

// String returns the opcode's name.
func (o WCOpcode) String() string {
	if s, ok := wcOpcodeNames[o]; ok {
		return s
	}
	return "WCOpcode(" + strconv.Itoa(int(o)) + ")"
}

// Completion flags (IBV_WC_* bits) found in WC.Flags.
const (
	WCFlagGRH     = 1
	WCFlagWithImm = 2
	WCFlagIPCsum  = 4
	WCFlagWithInv = 8
)

// WC is a work completion: struct ibv_wc, field for field, so that CQ.Poll
// has the provider write straight into the caller's slice. Imm is in host
// byte order: the immediate data when Flags has WCFlagWithImm, the
// invalidated rkey when it has WCFlagWithInv.
type WC struct {
	WRID         uint64
	Status       WCStatus
	Opcode       WCOpcode
	VendorErr    uint32
	ByteLen      uint32
	Imm          uint32
	QPNum        uint32
	SrcQP        uint32
	Flags        uint32
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
}

// CompChannel is a completion event channel: CQs created with it report
// completion events that Wait returns.
type CompChannel struct{ cgoCompChannel }

// CQ is a completion queue.
type CQ struct{ cgoCQ }

package udat

import (
	"fmt"
	"strings"
)

// The C names of the DAT constants, one table per type with a String
// method, wherever its constants are declared (consts.go, ext_ib.go,
// ud.go); Return's two tables are in return.go. A value that several
// constants share (an alias, or an extension's first value) has one name:
// the IB extension's where it has one, since this provider implements it.
//
// TestCHeaderNames (cheaders_test.go) checks that every exported constant
// of these types prints the C name of a constant of its own type with its
// value, and that every name here is that of such a constant, with the
// value the C headers give it: a constant added without its name, or with
// a wrong one, fails it.

var completionFlagNames = []flagName[CompletionFlags]{
	{CompletionDefault, "DAT_COMPLETION_DEFAULT_FLAG"},
	{CompletionSuppress, "DAT_COMPLETION_SUPPRESS_FLAG"},
	{CompletionSolicitedWait, "DAT_COMPLETION_SOLICITED_WAIT_FLAG"},
	{CompletionUnsignalled, "DAT_COMPLETION_UNSIGNALLED_FLAG"},
	{CompletionBarrierFence, "DAT_COMPLETION_BARRIER_FENCE_FLAG"},
	{CompletionEVDThreshold, "DAT_COMPLETION_EVD_THRESHOLD_FLAG"},
	{CompletionLMRInvalidateFence, "DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG"},
}

// String returns the C names of the flags joined by "|", or
// "DAT_COMPLETION_DEFAULT_FLAG" for no flag.
func (f CompletionFlags) String() string { return flagsString(f, completionFlagNames) }

var dtoOpNames = map[DTOOp]string{
	DTOSend:                  "DAT_DTO_SEND",
	DTORDMAWrite:             "DAT_DTO_RDMA_WRITE",
	DTORDMARead:              "DAT_DTO_RDMA_READ",
	DTOReceive:               "DAT_DTO_RECEIVE",
	DTOReceiveWithInvalidate: "DAT_DTO_RECEIVE_WITH_INVALIDATE",
	DTOBindMW:                "DAT_DTO_BIND_MW",
	DTOLMRFMR:                "DAT_DTO_LMR_FMR",
	DTOLMRInvalidate:         "DAT_DTO_LMR_INVALIDATE",
	DTOIBRDMAWriteImmed:      "DAT_IB_DTO_RDMA_WRITE_IMMED", // DTOExtensionBase
	DTOIBRecvImmed:           "DAT_IB_DTO_RECV_IMMED",
	DTOIBFetchAdd:            "DAT_IB_DTO_FETCH_ADD",
	DTOIBCmpSwap:             "DAT_IB_DTO_CMP_SWAP",
	DTOIBRecvMsgImmed:        "DAT_IB_DTO_RECV_MSG_IMMED",
	DTOIBSendUD:              "DAT_IB_DTO_SEND_UD",
	DTOIBRecvUD:              "DAT_IB_DTO_RECV_UD",
	DTOIBRecvUDImmed:         "DAT_IB_DTO_RECV_UD_IMMED",
}

// String returns the C name of op, e.g. "DAT_DTO_RDMA_WRITE".
func (op DTOOp) String() string { return enumString(op, dtoOpNames, "DAT_DTOS") }

var closeFlagNames = map[CloseFlags]string{
	CloseAbruptFlag:   "DAT_CLOSE_ABRUPT_FLAG", // CloseDefault
	CloseGracefulFlag: "DAT_CLOSE_GRACEFUL_FLAG",
}

// String returns the C name of f, e.g. "DAT_CLOSE_GRACEFUL_FLAG".
func (f CloseFlags) String() string { return enumString(f, closeFlagNames, "DAT_CLOSE_FLAGS") }

// evdFlagNames has no name for no flag (C has none) and none for
// EVDDefaultFlag, which prints as the flags it is made of.
var evdFlagNames = []flagName[EVDFlags]{
	{EVDSoftwareFlag, "DAT_EVD_SOFTWARE_FLAG"},
	{EVDCRFlag, "DAT_EVD_CR_FLAG"},
	{EVDDTOFlag, "DAT_EVD_DTO_FLAG"},
	{EVDConnectionFlag, "DAT_EVD_CONNECTION_FLAG"},
	{EVDRMRBindFlag, "DAT_EVD_RMR_BIND_FLAG"},
	{EVDAsyncFlag, "DAT_EVD_ASYNC_FLAG"},
	{EVDExtensionBase, "DAT_EVD_EXTENSION_BASE"},
}

// String returns the C names of the flags joined by "|", or "0".
func (f EVDFlags) String() string { return flagsString(f, evdFlagNames) }

// memPrivNames has no name for MemPrivAll, MemPrivRead and MemPrivWrite,
// which print as the privileges they are made of.
var memPrivNames = []flagName[MemPriv]{
	{MemPrivNone, "DAT_MEM_PRIV_NONE_FLAG"},
	{MemPrivLocalRead, "DAT_MEM_PRIV_LOCAL_READ_FLAG"},
	{MemPrivRemoteRead, "DAT_MEM_PRIV_REMOTE_READ_FLAG"},
	{MemPrivLocalWrite, "DAT_MEM_PRIV_LOCAL_WRITE_FLAG"},
	{MemPrivRemoteWrite, "DAT_MEM_PRIV_REMOTE_WRITE_FLAG"},
	{MemPrivIBRemoteAtomic, "DAT_IB_MEM_PRIV_REMOTE_ATOMIC"}, // MemPrivExtensionBase
}

// String returns the C names of the privileges joined by "|", or
// "DAT_MEM_PRIV_NONE_FLAG".
func (p MemPriv) String() string { return flagsString(p, memPrivNames) }

var epStateNames = map[EPState]string{
	EPStateUnconnected:                "DAT_EP_STATE_UNCONNECTED",
	EPStateUnconfiguredUnconnected:    "DAT_EP_STATE_UNCONFIGURED_UNCONNECTED",
	EPStateReserved:                   "DAT_EP_STATE_RESERVED",
	EPStateUnconfiguredReserved:       "DAT_EP_STATE_UNCONFIGURED_RESERVED",
	EPStatePassiveConnectionPending:   "DAT_EP_STATE_PASSIVE_CONNECTION_PENDING",
	EPStateUnconfiguredPassive:        "DAT_EP_STATE_UNCONFIGURED_PASSIVE",
	EPStateActiveConnectionPending:    "DAT_EP_STATE_ACTIVE_CONNECTION_PENDING",
	EPStateTentativeConnectionPending: "DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING",
	EPStateUnconfiguredTentative:      "DAT_EP_STATE_UNCONFIGURED_TENTATIVE",
	EPStateConnected:                  "DAT_EP_STATE_CONNECTED",
	EPStateDisconnectPending:          "DAT_EP_STATE_DISCONNECT_PENDING",
	EPStateDisconnected:               "DAT_EP_STATE_DISCONNECTED", // EPStateError
	EPStateCompletionPending:          "DAT_EP_STATE_COMPLETION_PENDING",
	EPStateConnectedSinglePath:        "DAT_EP_STATE_CONNECTED_SINGLE_PATH",
	EPStateConnectedMultiPath:         "DAT_EP_STATE_CONNECTED_MULTI_PATH",
}

// String returns the C name of s, e.g. "DAT_EP_STATE_CONNECTED".
func (s EPState) String() string { return enumString(s, epStateNames, "DAT_EP_STATE") }

var dtoStatusNames = map[DTOStatus]string{
	DTOSuccess:               "DAT_DTO_SUCCESS",     // RMRBindSuccess
	DTOErrFlushed:            "DAT_DTO_ERR_FLUSHED", // DTOFailure, RMRBindFailure
	DTOErrLocalLength:        "DAT_DTO_ERR_LOCAL_LENGTH",
	DTOErrLocalEP:            "DAT_DTO_ERR_LOCAL_EP",
	DTOErrLocalProtection:    "DAT_DTO_ERR_LOCAL_PROTECTION",
	DTOErrBadResponse:        "DAT_DTO_ERR_BAD_RESPONSE",
	DTOErrRemoteAccess:       "DAT_DTO_ERR_REMOTE_ACCESS",
	DTOErrRemoteResponder:    "DAT_DTO_ERR_REMOTE_RESPONDER",
	DTOErrTransport:          "DAT_DTO_ERR_TRANSPORT",
	DTOErrReceiverNotReady:   "DAT_DTO_ERR_RECEIVER_NOT_READY",
	DTOErrPartialPacket:      "DAT_DTO_ERR_PARTIAL_PACKET",
	DTOErrRMROperationFailed: "DAT_RMR_OPERATION_FAILED",
	DTOErrLocalMMError:       "DAT_DTO_ERR_LOCAL_MM_ERROR",
}

// String returns the C name of s, e.g. "DAT_DTO_ERR_FLUSHED".
func (s DTOStatus) String() string {
	return enumString(s, dtoStatusNames, "DAT_DTO_COMPLETION_STATUS")
}

var eventNumberNames = map[EventNumber]string{
	EventDTOCompletion:                   "DAT_DTO_COMPLETION_EVENT",
	EventRMRBindCompletion:               "DAT_RMR_BIND_COMPLETION_EVENT",
	EventConnectionRequest:               "DAT_CONNECTION_REQUEST_EVENT",
	EventConnectionEstablished:           "DAT_CONNECTION_EVENT_ESTABLISHED",
	EventConnectionPeerRejected:          "DAT_CONNECTION_EVENT_PEER_REJECTED",
	EventConnectionNonPeerRejected:       "DAT_CONNECTION_EVENT_NON_PEER_REJECTED",
	EventConnectionAcceptCompletionError: "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR",
	EventConnectionDisconnected:          "DAT_CONNECTION_EVENT_DISCONNECTED",
	EventConnectionBroken:                "DAT_CONNECTION_EVENT_BROKEN",
	EventConnectionTimedOut:              "DAT_CONNECTION_EVENT_TIMED_OUT",
	EventConnectionUnreachable:           "DAT_CONNECTION_EVENT_UNREACHABLE",
	EventAsyncErrorEVDOverflow:           "DAT_ASYNC_ERROR_EVD_OVERFLOW",
	EventAsyncErrorIACatastrophic:        "DAT_ASYNC_ERROR_IA_CATASTROPHIC",
	EventAsyncErrorEPBroken:              "DAT_ASYNC_ERROR_EP_BROKEN",
	EventAsyncErrorTimedOut:              "DAT_ASYNC_ERROR_TIMED_OUT",
	EventAsyncErrorProviderInternalError: "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR", // EventSRQLowWatermark
	EventHADownTo1:                       "DAT_HA_DOWN_TO_1",
	EventHAUpToMultiPath:                 "DAT_HA_UP_TO_MULTI_PATH",
	EventSoftware:                        "DAT_SOFTWARE_EVENT",
	EventExtension:                       "DAT_EXTENSION_EVENT",
	EventIBDTO:                           "DAT_IB_DTO_EVENT", // EventIBExtensionRangeBase
	EventIBUDConnectionRequest:           "DAT_IB_UD_CONNECTION_REQUEST_EVENT",
	EventIBUDConnectionEstablished:       "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED",
	EventIBUDConnectionReject:            "DAT_IB_UD_CONNECTION_REJECT_EVENT",
	EventIBUDConnectionError:             "DAT_IB_UD_CONNECTION_ERROR_EVENT",
	EventIWExtensionRangeBase:            "DAT_IW_EXTENSION_RANGE_BASE",
}

// String returns the C name of n, e.g. "DAT_CONNECTION_EVENT_ESTABLISHED".
func (n EventNumber) String() string {
	return enumString(n, eventNumberNames, "DAT_EVENT_NUMBER")
}

var handleTypeNames = map[HandleType]string{
	HandleTypeCR:            "DAT_HANDLE_TYPE_CR",
	HandleTypeEP:            "DAT_HANDLE_TYPE_EP",
	HandleTypeEVD:           "DAT_HANDLE_TYPE_EVD",
	HandleTypeIA:            "DAT_HANDLE_TYPE_IA",
	HandleTypeLMR:           "DAT_HANDLE_TYPE_LMR",
	HandleTypePSP:           "DAT_HANDLE_TYPE_PSP",
	HandleTypePZ:            "DAT_HANDLE_TYPE_PZ",
	HandleTypeRMR:           "DAT_HANDLE_TYPE_RMR",
	HandleTypeRSP:           "DAT_HANDLE_TYPE_RSP",
	HandleTypeCNO:           "DAT_HANDLE_TYPE_CNO",
	HandleTypeSRQ:           "DAT_HANDLE_TYPE_SRQ",
	HandleTypeCSP:           "DAT_HANDLE_TYPE_CSP",
	HandleTypeExtensionBase: "DAT_HANDLE_TYPE_EXTENSION_BASE",
}

// String returns the C name of t, e.g. "DAT_HANDLE_TYPE_EP".
func (t HandleType) String() string {
	return enumString(t, handleTypeNames, "DAT_HANDLE_TYPE")
}

var ibExtTypeNames = map[IBExtType]string{
	IBFetchAndAdd:        "DAT_IB_FETCH_AND_ADD",
	IBCmpAndSwap:         "DAT_IB_CMP_AND_SWAP",
	IBRDMAWriteImmed:     "DAT_IB_RDMA_WRITE_IMMED",
	IBRDMAWriteImmedData: "DAT_IB_RDMA_WRITE_IMMED_DATA",
	IBRecvImmedData:      "DAT_IB_RECV_IMMED_DATA",
	IBUDConnectRequest:   "DAT_IB_UD_CONNECT_REQUEST",
	IBUDRemoteAH:         "DAT_IB_UD_REMOTE_AH",
	IBUDPassiveRemoteAH:  "DAT_IB_UD_PASSIVE_REMOTE_AH",
	IBUDSend:             "DAT_IB_UD_SEND",
	IBUDRecv:             "DAT_IB_UD_RECV",
	IBUDConnectReject:    "DAT_IB_UD_CONNECT_REJECT",
	IBUDConnectError:     "DAT_IB_UD_CONNECT_ERROR",
}

// String returns the C name of t, e.g. "DAT_IB_UD_REMOTE_AH".
func (t IBExtType) String() string { return enumString(t, ibExtTypeNames, "DAT_IB_EXT_TYPE") }

// The counters of counters.go. Each kind's All counter has its C name too:
// the size of the array C fills.
var iaCounterNames = map[IACounter]string{
	IACounterPZCreate:            "DCNT_IA_PZ_CREATE",
	IACounterPZFree:              "DCNT_IA_PZ_FREE",
	IACounterLMRCreate:           "DCNT_IA_LMR_CREATE",
	IACounterLMRFree:             "DCNT_IA_LMR_FREE",
	IACounterRMRCreate:           "DCNT_IA_RMR_CREATE",
	IACounterRMRFree:             "DCNT_IA_RMR_FREE",
	IACounterPSPCreate:           "DCNT_IA_PSP_CREATE",
	IACounterPSPCreateAny:        "DCNT_IA_PSP_CREATE_ANY",
	IACounterPSPFree:             "DCNT_IA_PSP_FREE",
	IACounterRSPCreate:           "DCNT_IA_RSP_CREATE",
	IACounterRSPFree:             "DCNT_IA_RSP_FREE",
	IACounterEVDCreate:           "DCNT_IA_EVD_CREATE",
	IACounterEVDFree:             "DCNT_IA_EVD_FREE",
	IACounterEPCreate:            "DCNT_IA_EP_CREATE",
	IACounterEPFree:              "DCNT_IA_EP_FREE",
	IACounterSRQCreate:           "DCNT_IA_SRQ_CREATE",
	IACounterSRQFree:             "DCNT_IA_SRQ_FREE",
	IACounterSPCR:                "DCNT_IA_SP_CR",
	IACounterSPCRAccepted:        "DCNT_IA_SP_CR_ACCEPTED",
	IACounterSPCRRejected:        "DCNT_IA_SP_CR_REJECTED",
	IACounterMemAlloc:            "DCNT_IA_MEM_ALLOC",
	IACounterMemAllocData:        "DCNT_IA_MEM_ALLOC_DATA",
	IACounterMemFree:             "DCNT_IA_MEM_FREE",
	IACounterAsyncError:          "DCNT_IA_ASYNC_ERROR",
	IACounterAsyncQPError:        "DCNT_IA_ASYNC_QP_ERROR",
	IACounterAsyncCQError:        "DCNT_IA_ASYNC_CQ_ERROR",
	IACounterCMListen:            "DCNT_IA_CM_LISTEN",
	IACounterCMREQTX:             "DCNT_IA_CM_REQ_TX",
	IACounterCMREQRX:             "DCNT_IA_CM_REQ_RX",
	IACounterCMREPTX:             "DCNT_IA_CM_REP_TX",
	IACounterCMREPRX:             "DCNT_IA_CM_REP_RX",
	IACounterCMRTUTX:             "DCNT_IA_CM_RTU_TX",
	IACounterCMRTURX:             "DCNT_IA_CM_RTU_RX",
	IACounterCMUserREJTX:         "DCNT_IA_CM_USER_REJ_TX",
	IACounterCMUserREJRX:         "DCNT_IA_CM_USER_REJ_RX",
	IACounterCMActiveEst:         "DCNT_IA_CM_ACTIVE_EST",
	IACounterCMPassiveEst:        "DCNT_IA_CM_PASSIVE_EST",
	IACounterCMAHREQTX:           "DCNT_IA_CM_AH_REQ_TX",
	IACounterCMAHREQRX:           "DCNT_IA_CM_AH_REQ_RX",
	IACounterCMAHResolved:        "DCNT_IA_CM_AH_RESOLVED",
	IACounterCMDREQTX:            "DCNT_IA_CM_DREQ_TX",
	IACounterCMDREQRX:            "DCNT_IA_CM_DREQ_RX",
	IACounterCMDREPTX:            "DCNT_IA_CM_DREP_TX",
	IACounterCMDREPRX:            "DCNT_IA_CM_DREP_RX",
	IACounterCMMRATX:             "DCNT_IA_CM_MRA_TX",
	IACounterCMMRARX:             "DCNT_IA_CM_MRA_RX",
	IACounterCMREQFullQPoll:      "DCNT_IA_CM_REQ_FULLQ_POLL",
	IACounterCMErr:               "DCNT_IA_CM_ERR",
	IACounterCMErrREQFullQ:       "DCNT_IA_CM_ERR_REQ_FULLQ",
	IACounterCMErrREQDup:         "DCNT_IA_CM_ERR_REQ_DUP",
	IACounterCMErrREQRetry:       "DCNT_IA_CM_ERR_REQ_RETRY",
	IACounterCMErrREPDup:         "DCNT_IA_CM_ERR_REP_DUP",
	IACounterCMErrREPRetry:       "DCNT_IA_CM_ERR_REP_RETRY",
	IACounterCMErrRTUDup:         "DCNT_IA_CM_ERR_RTU_DUP",
	IACounterCMErrRTURetry:       "DCNT_IA_CM_ERR_RTU_RETRY",
	IACounterCMErrRefused:        "DCNT_IA_CM_ERR_REFUSED",
	IACounterCMErrReset:          "DCNT_IA_CM_ERR_RESET",
	IACounterCMErrTimeout:        "DCNT_IA_CM_ERR_TIMEOUT",
	IACounterCMErrREJTX:          "DCNT_IA_CM_ERR_REJ_TX",
	IACounterCMErrREJRX:          "DCNT_IA_CM_ERR_REJ_RX",
	IACounterCMErrDREQDup:        "DCNT_IA_CM_ERR_DREQ_DUP",
	IACounterCMErrDREQRetry:      "DCNT_IA_CM_ERR_DREQ_RETRY",
	IACounterCMErrDREPDup:        "DCNT_IA_CM_ERR_DREP_DUP",
	IACounterCMErrDREPRetry:      "DCNT_IA_CM_ERR_DREP_RETRY",
	IACounterCMErrMRADup:         "DCNT_IA_CM_ERR_MRA_DUP",
	IACounterCMErrMRARetry:       "DCNT_IA_CM_ERR_MRA_RETRY",
	IACounterCMErrUnexpected:     "DCNT_IA_CM_ERR_UNEXPECTED",
	IACounterLnkErrRcv:           "DCNT_IA_LNK_ERR_RCV",
	IACounterLnkErrRcvRemPhys:    "DCNT_IA_LNK_ERR_RCV_REM_PHYS",
	IACounterLnkErrRcvConstraint: "DCNT_IA_LNK_ERR_RCV_CONSTRAINT",
	IACounterLnkErrXmtDiscards:   "DCNT_IA_LNK_ERR_XMT_DISCARDS",
	IACounterLnkErrXmtContraint:  "DCNT_IA_LNK_ERR_XMT_CONTRAINT",
	IACounterLnkErrIntegrity:     "DCNT_IA_LNK_ERR_INTEGRITY",
	IACounterLnkErrExcBufOverrun: "DCNT_IA_LNK_ERR_EXC_BUF_OVERRUN",
	IACounterLnkWarnRcvSwRelay:   "DCNT_IA_LNK_WARN_RCV_SW_RELAY",
	IACounterLnkWarnXmtWait:      "DCNT_IA_LNK_WARN_XMT_WAIT",
	IACounterDiagErrRQRAE:        "DCNT_IA_DIAG_ERR_RQ_RAE",
	IACounterDiagErrRQOOS:        "DCNT_IA_DIAG_ERR_RQ_OOS",
	IACounterDiagErrRQRIRE:       "DCNT_IA_DIAG_ERR_RQ_RIRE",
	IACounterDiagErrRQUDSDPRD:    "DCNT_IA_DIAG_ERR_RQ_UDSDPRD",
	IACounterDiagErrSQRAE:        "DCNT_IA_DIAG_ERR_SQ_RAE",
	IACounterDiagErrSQOOS:        "DCNT_IA_DIAG_ERR_SQ_OOS",
	IACounterDiagErrSQRIRE:       "DCNT_IA_DIAG_ERR_SQ_RIRE",
	IACounterDiagErrSQRREE:       "DCNT_IA_DIAG_ERR_SQ_RREE",
	IACounterDiagErrSQTREE:       "DCNT_IA_DIAG_ERR_SQ_TREE",
	IACounterAll:                 "DCNT_IA_ALL_COUNTERS",
}

var epCounterNames = map[EPCounter]string{
	EPCounterConnect:          "DCNT_EP_CONNECT",
	EPCounterDisconnect:       "DCNT_EP_DISCONNECT",
	EPCounterPostSend:         "DCNT_EP_POST_SEND",
	EPCounterPostSendData:     "DCNT_EP_POST_SEND_DATA",
	EPCounterPostSendUD:       "DCNT_EP_POST_SEND_UD",
	EPCounterPostSendUDData:   "DCNT_EP_POST_SEND_UD_DATA",
	EPCounterPostRecv:         "DCNT_EP_POST_RECV",
	EPCounterPostRecvData:     "DCNT_EP_POST_RECV_DATA",
	EPCounterPostWrite:        "DCNT_EP_POST_WRITE",
	EPCounterPostWriteData:    "DCNT_EP_POST_WRITE_DATA",
	EPCounterPostWriteImm:     "DCNT_EP_POST_WRITE_IMM",
	EPCounterPostWriteImmData: "DCNT_EP_POST_WRITE_IMM_DATA",
	EPCounterPostRead:         "DCNT_EP_POST_READ",
	EPCounterPostReadData:     "DCNT_EP_POST_READ_DATA",
	EPCounterPostCmpSwap:      "DCNT_EP_POST_CMP_SWAP",
	EPCounterPostFetchAdd:     "DCNT_EP_POST_FETCH_ADD",
	EPCounterRecv:             "DCNT_EP_RECV",
	EPCounterRecvData:         "DCNT_EP_RECV_DATA",
	EPCounterRecvUD:           "DCNT_EP_RECV_UD",
	EPCounterRecvUDData:       "DCNT_EP_RECV_UD_DATA",
	EPCounterRecvImm:          "DCNT_EP_RECV_IMM",
	EPCounterRecvImmData:      "DCNT_EP_RECV_IMM_DATA",
	EPCounterRecvRDMAImm:      "DCNT_EP_RECV_RDMA_IMM",
	EPCounterRecvRDMAImmData:  "DCNT_EP_RECV_RDMA_IMM_DATA",
	EPCounterAll:              "DCNT_EP_ALL_COUNTERS",
}

var evdCounterNames = map[EVDCounter]string{
	EVDCounterWait:             "DCNT_EVD_WAIT",
	EVDCounterWaitBlocked:      "DCNT_EVD_WAIT_BLOCKED",
	EVDCounterWaitNotify:       "DCNT_EVD_WAIT_NOTIFY",
	EVDCounterDequeue:          "DCNT_EVD_DEQUEUE",
	EVDCounterDequeueFound:     "DCNT_EVD_DEQUEUE_FOUND",
	EVDCounterDequeueNotFound:  "DCNT_EVD_DEQUEUE_NOT_FOUND",
	EVDCounterDequeuePoll:      "DCNT_EVD_DEQUEUE_POLL",
	EVDCounterDequeuePollFound: "DCNT_EVD_DEQUEUE_POLL_FOUND",
	EVDCounterConnCallback:     "DCNT_EVD_CONN_CALLBACK",
	EVDCounterDTOCallback:      "DCNT_EVD_DTO_CALLBACK",
	EVDCounterAll:              "DCNT_EVD_ALL_COUNTERS",
}

var ibStatusNames = map[IBStatus]string{
	IBOpSuccess: "DAT_OP_SUCCESS",
	IBOpErr:     "DAT_IB_OP_ERR",
}

// String returns the C name of s, e.g. "DAT_IB_OP_ERR".
func (s IBStatus) String() string { return enumString(s, ibStatusNames, "DAT_IB_STATUS") }

// flagName names one bit (or group of bits) of a flag set; bits 0 names
// the empty set.
type flagName[T ~uint32] struct {
	bits T
	name string
}

// flagsString names the bits of v from names, joined by "|". Bits without
// a name are printed in hexadecimal; the empty set gets the name of bits
// 0, or "0" when names has none.
func flagsString[T ~uint32](v T, names []flagName[T]) string {
	if v == 0 {
		for _, n := range names {
			if n.bits == 0 {
				return n.name
			}
		}
		return "0"
	}
	var parts []string
	for _, n := range names {
		if n.bits != 0 && v&n.bits == n.bits {
			parts = append(parts, n.name)
			v &^= n.bits
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(v)))
	}
	return strings.Join(parts, "|")
}

// enumString returns names[v], or typ(v) for a value without a name.
func enumString[T ~uint32](v T, names map[T]string, typ string) string {
	if s, ok := names[v]; ok {
		return s
	}
	return fmt.Sprintf("%s(%d)", typ, uint32(v))
}

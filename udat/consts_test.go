package udat

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConstEPStateString(t *testing.T) {
	assert.Equal(t, "DAT_EP_STATE_CONNECTED", EPStateConnected.String())
	assert.Equal(t, "DAT_EP_STATE_UNCONNECTED", EPStateUnconnected.String())
	assert.Equal(t, "DAT_EP_STATE_DISCONNECTED", EPStateError.String())
	assert.Equal(t, "DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING", EPStateTentativeConnectionPending.String())
	assert.Equal(t, "DAT_EP_STATE(99)", EPState(99).String())
	for s := EPStateUnconnected; s <= EPStateConnectedMultiPath; s++ {
		assert.Regexp(t, `^DAT_EP_STATE_[A-Z_]+$`, s.String())
	}
}

func TestConstDTOStatusString(t *testing.T) {
	assert.Equal(t, "DAT_DTO_SUCCESS", DTOSuccess.String())
	assert.Equal(t, "DAT_DTO_ERR_FLUSHED", DTOErrFlushed.String())
	assert.Equal(t, "DAT_DTO_ERR_LOCAL_LENGTH", DTOLengthError.String())
	assert.Equal(t, "DAT_RMR_OPERATION_FAILED", DTOErrRMROperationFailed.String())
	assert.Equal(t, "DAT_DTO_COMPLETION_STATUS(42)", DTOStatus(42).String())
	for s := DTOSuccess; s <= DTOErrLocalMMError; s++ {
		assert.Regexp(t, `^DAT_(DTO|RMR)_[A-Z_]+$`, s.String())
	}
}

func TestConstEventNumberString(t *testing.T) {
	assert.Equal(t, "DAT_DTO_COMPLETION_EVENT", EventDTOCompletion.String())
	assert.Equal(t, "DAT_CONNECTION_EVENT_ESTABLISHED", EventConnectionEstablished.String())
	assert.Equal(t, "DAT_ASYNC_ERROR_EVD_OVERFLOW", EventAsyncErrorEVDOverflow.String())
	assert.Equal(t, "DAT_SOFTWARE_EVENT", EventSoftware.String())
	assert.Equal(t, "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR", EventSRQLowWatermark.String())
	assert.Equal(t, "DAT_IB_DTO_EVENT", EventIBDTO.String())
	assert.Equal(t, "DAT_IB_DTO_EVENT", EventIBExtensionRangeBase.String())
	assert.Equal(t, "DAT_IB_UD_CONNECTION_REQUEST_EVENT", EventIBUDConnectionRequest.String())
	assert.Equal(t, "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED", EventIBUDConnectionEstablished.String())
	assert.Equal(t, "DAT_IB_UD_CONNECTION_REJECT_EVENT", EventIBUDConnectionReject.String())
	assert.Equal(t, "DAT_IB_UD_CONNECTION_ERROR_EVENT", EventIBUDConnectionError.String())
	assert.Equal(t, "DAT_EVENT_NUMBER(7)", EventNumber(7).String())
}

func TestConstDTOOpString(t *testing.T) {
	assert.Equal(t, "DAT_DTO_SEND", DTOSend.String())
	assert.Equal(t, "DAT_DTO_RDMA_WRITE", DTORDMAWrite.String())
	assert.Equal(t, "DAT_DTO_RDMA_READ", DTORDMARead.String())
	assert.Equal(t, "DAT_DTO_RECEIVE", DTOReceive.String())
	assert.Equal(t, "DAT_DTO_BIND_MW", DTOBindMW.String())
	assert.Equal(t, "DAT_IB_DTO_RDMA_WRITE_IMMED", DTOExtensionBase.String())
	assert.Equal(t, "DAT_IB_DTO_RECV_MSG_IMMED", DTOIBRecvMsgImmed.String())
	assert.Equal(t, "DAT_IB_DTO_SEND_UD", DTOIBSendUD.String())
	assert.Equal(t, "DAT_IB_DTO_RECV_UD", DTOIBRecvUD.String())
	assert.Equal(t, "DAT_IB_DTO_RECV_UD_IMMED", DTOIBRecvUDImmed.String())
	assert.Equal(t, "DAT_DTOS(100)", DTOOp(100).String())
}

func TestConstIBExtensionString(t *testing.T) {
	assert.Equal(t, "DAT_IB_FETCH_AND_ADD", IBFetchAndAdd.String())
	assert.Equal(t, "DAT_IB_RECV_IMMED_DATA", IBRecvImmedData.String())
	assert.Equal(t, "DAT_IB_UD_PASSIVE_REMOTE_AH", IBUDPassiveRemoteAH.String())
	assert.Equal(t, "DAT_IB_UD_CONNECT_ERROR", IBUDConnectError.String())
	assert.Equal(t, "DAT_IB_EXT_TYPE(12)", IBExtType(12).String())
	assert.Equal(t, "DAT_OP_SUCCESS", IBOpSuccess.String())
	assert.Equal(t, "DAT_IB_OP_ERR", IBOpErr.String())
	assert.Equal(t, "DAT_IB_STATUS(2)", IBStatus(2).String())
}

// TestConstEventPrint prints the events of a UD EP as a Consumer would
// log them: every DAT constant in them by its C name.
func TestConstEventPrint(t *testing.T) {
	for _, ev := range []Event{
		{Number: EventIBDTO, DTO: DTOCompletionData{Op: DTOIBSendUD}, IB: IBExtensionData{Type: IBUDSend}},
		{Number: EventIBDTO, DTO: DTOCompletionData{Op: DTOIBRecvUD, Status: DTOErrFlushed},
			IB: IBExtensionData{Type: IBUDRecv, Status: IBOpErr}},
		{Number: EventIBDTO, DTO: DTOCompletionData{Op: DTOIBRecvUDImmed}, IB: IBExtensionData{Type: IBUDRecv}},
		{Number: EventIBUDConnectionRequest, IB: IBExtensionData{Type: IBUDConnectRequest}},
		{Number: EventIBUDConnectionEstablished, IB: IBExtensionData{Type: IBUDRemoteAH}},
		{Number: EventIBUDConnectionReject, IB: IBExtensionData{Type: IBUDConnectReject}},
		{Number: EventIBUDConnectionError, IB: IBExtensionData{Type: IBUDConnectError}},
	} {
		s := fmt.Sprintf("%+v", ev)
		assert.Contains(t, s, "Number:"+ev.Number.String())
		assert.Contains(t, s, "Op:"+ev.DTO.Op.String())
		assert.Contains(t, s, "Status:"+ev.DTO.Status.String())
		assert.Contains(t, s, "Type:"+ev.IB.Type.String())
		assert.Contains(t, s, "Status:"+ev.IB.Status.String())
		assert.NotRegexp(t, `DAT_[A-Z_]+\(`, s, "a constant without a name")
	}
	assert.Equal(t, "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED/DAT_IB_DTO_RECV_UD/DAT_IB_UD_RECV",
		fmt.Sprintf("%v/%v/%v", EventIBUDConnectionEstablished, DTOIBRecvUD, IBUDRecv))
}

func TestConstHandleTypeString(t *testing.T) {
	assert.Equal(t, "DAT_HANDLE_TYPE_CR", HandleTypeCR.String())
	assert.Equal(t, "DAT_HANDLE_TYPE_EP", HandleTypeEP.String())
	assert.Equal(t, "DAT_HANDLE_TYPE_SRQ", HandleTypeSRQ.String())
	assert.Equal(t, "DAT_HANDLE_TYPE_CSP", HandleTypeCSP.String())
	assert.Equal(t, "DAT_HANDLE_TYPE(77)", HandleType(77).String())
}

func TestConstFlagsString(t *testing.T) {
	assert.Equal(t, "DAT_COMPLETION_DEFAULT_FLAG", CompletionDefault.String())
	assert.Equal(t, "DAT_COMPLETION_SUPPRESS_FLAG|DAT_COMPLETION_BARRIER_FENCE_FLAG",
		(CompletionSuppress | CompletionBarrierFence).String())
	assert.Equal(t, "DAT_COMPLETION_EVD_THRESHOLD_FLAG|0x100", (CompletionEVDThreshold | 0x100).String())

	assert.Equal(t, "DAT_MEM_PRIV_NONE_FLAG", MemPrivNone.String())
	assert.Equal(t, "DAT_MEM_PRIV_LOCAL_READ_FLAG|DAT_MEM_PRIV_REMOTE_WRITE_FLAG",
		(MemPrivLocalRead | MemPrivRemoteWrite).String())
	assert.Equal(t, "DAT_MEM_PRIV_LOCAL_READ_FLAG|DAT_MEM_PRIV_REMOTE_READ_FLAG|"+
		"DAT_MEM_PRIV_LOCAL_WRITE_FLAG|DAT_MEM_PRIV_REMOTE_WRITE_FLAG", MemPrivAll.String())
	assert.Equal(t, "DAT_MEM_PRIV_REMOTE_WRITE_FLAG|DAT_IB_MEM_PRIV_REMOTE_ATOMIC",
		(MemPrivRemoteWrite | MemPrivIBRemoteAtomic).String())
	assert.Equal(t, "DAT_MEM_PRIV_LOCAL_READ_FLAG|0x80", (MemPrivLocalRead | 0x80).String())

	assert.Equal(t, "0", EVDFlags(0).String())
	assert.Equal(t, "DAT_EVD_SOFTWARE_FLAG|DAT_EVD_EXTENSION_BASE", (EVDSoftwareFlag | EVDExtensionBase).String())
	assert.Equal(t, "DAT_EVD_DTO_FLAG", EVDDTOFlag.String())
	assert.Equal(t, "DAT_EVD_CR_FLAG|DAT_EVD_DTO_FLAG|DAT_EVD_CONNECTION_FLAG|"+
		"DAT_EVD_RMR_BIND_FLAG|DAT_EVD_ASYNC_FLAG", EVDDefaultFlag.String())

	assert.Equal(t, "DAT_CLOSE_ABRUPT_FLAG", CloseDefault.String())
	assert.Equal(t, "DAT_CLOSE_GRACEFUL_FLAG", CloseGracefulFlag.String())
}

func TestConstRelations(t *testing.T) {
	assert.Equal(t, Timeout(math.MaxUint32), TimeoutInfinite)
	assert.Equal(t, MemPrivLocalRead|MemPrivRemoteRead|MemPrivLocalWrite|MemPrivRemoteWrite, MemPrivAll)
	assert.Equal(t, MemPrivAll, MemPrivRead|MemPrivWrite)
	assert.Equal(t, EVDCRFlag|EVDDTOFlag|EVDConnectionFlag|EVDRMRBindFlag|EVDAsyncFlag, EVDDefaultFlag)
	assert.Equal(t, EVDFlags(0), EVDDefaultFlag&EVDSoftwareFlag, "software events are not in the default set")
	assert.Equal(t, CloseAbruptFlag, CloseDefault)
	assert.Equal(t, EPStateDisconnected, EPStateError)
	assert.Equal(t, DTOErrFlushed, DTOFailure)
	assert.Equal(t, int32(-1), WatermarkInfinite)
	assert.Equal(t, int32(-2), ValueUnknown)
	assert.Equal(t, ProviderNotFound, NameNotFound)

	// The completion flags are distinct single bits.
	flags := []CompletionFlags{CompletionSuppress, CompletionSolicitedWait, CompletionUnsignalled,
		CompletionBarrierFence, CompletionEVDThreshold, CompletionLMRInvalidateFence}
	var all CompletionFlags
	for _, f := range flags {
		assert.Equal(t, 1, popcount(uint32(f)), "%v", f)
		assert.Zero(t, all&f, "%v", f)
		all |= f
	}
}

func popcount(v uint32) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

//go:build linux && cgo

package udat

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat/internal/cdat"
)

// cConst pairs a Go constant with the C constant (or C expression) of the
// DAT 2.0 headers it mirrors. value is the constant itself, of its Go
// type, so that TestCHeaderNames can print it.
type cConst struct {
	goName string
	value  any
	cName  string
}

// cConsts lists every exported constant of the package, one entry each,
// but those of goOnlyConsts. TestCHeadersCoverAllConstants keeps it
// complete.
var cConsts = []cConst{
	{"Success", Success, "DAT_SUCCESS"},
	{"ClassSuccess", ClassSuccess, "DAT_CLASS_SUCCESS"},
	{"ClassError", ClassError, "DAT_CLASS_ERROR"},
	{"ClassWarning", ClassWarning, "DAT_CLASS_WARNING"},
	{"ClassMask", ClassMask, "(DAT_CLASS_ERROR|DAT_CLASS_WARNING)"},
	{"TypeMask", TypeMask, "DAT_TYPE_MASK"},
	{"SubtypeMask", SubtypeMask, "DAT_SUBTYPE_MASK"},
	{"Abort", Abort, "DAT_ABORT"},
	{"ConnQualInUse", ConnQualInUse, "DAT_CONN_QUAL_IN_USE"},
	{"InsufficientResources", InsufficientResources, "DAT_INSUFFICIENT_RESOURCES"},
	{"InternalError", InternalError, "DAT_INTERNAL_ERROR"},
	{"InvalidHandle", InvalidHandle, "DAT_INVALID_HANDLE"},
	{"InvalidParameter", InvalidParameter, "DAT_INVALID_PARAMETER"},
	{"InvalidState", InvalidState, "DAT_INVALID_STATE"},
	{"LengthError", LengthError, "DAT_LENGTH_ERROR"},
	{"ModelNotSupported", ModelNotSupported, "DAT_MODEL_NOT_SUPPORTED"},
	{"ProviderNotFound", ProviderNotFound, "DAT_PROVIDER_NOT_FOUND"},
	{"PrivilegesViolation", PrivilegesViolation, "DAT_PRIVILEGES_VIOLATION"},
	{"ProtectionViolation", ProtectionViolation, "DAT_PROTECTION_VIOLATION"},
	{"QueueEmpty", QueueEmpty, "DAT_QUEUE_EMPTY"},
	{"QueueFull", QueueFull, "DAT_QUEUE_FULL"},
	{"TimeoutExpired", TimeoutExpired, "DAT_TIMEOUT_EXPIRED"},
	{"ProviderAlreadyRegistered", ProviderAlreadyRegistered, "DAT_PROVIDER_ALREADY_REGISTERED"},
	{"ProviderInUse", ProviderInUse, "DAT_PROVIDER_IN_USE"},
	{"InvalidAddress", InvalidAddress, "DAT_INVALID_ADDRESS"},
	{"InterruptedCall", InterruptedCall, "DAT_INTERRUPTED_CALL"},
	{"ConnQualUnavailable", ConnQualUnavailable, "DAT_CONN_QUAL_UNAVAILABLE"},
	{"ReservedLMR", ReservedLMR, "DAT_RESERVED_LMR"},
	{"PortInUse", PortInUse, "DAT_PORT_IN_USE"},
	{"CommNotSupported", CommNotSupported, "DAT_COMM_NOT_SUPPORTED"},
	{"ExtensionBase", ExtensionBase, "DAT_EXTENSION_BASE"},
	{"NotImplemented", NotImplemented, "DAT_NOT_IMPLEMENTED"},
	{"NameNotFound", NameNotFound, "DAT_NAME_NOT_FOUND"},
	{"NoSubtype", NoSubtype, "DAT_NO_SUBTYPE"},
	{"SubInterrupted", SubInterrupted, "DAT_SUB_INTERRUPTED"},
	{"ResourceMemory", ResourceMemory, "DAT_RESOURCE_MEMORY"},
	{"ResourceDevice", ResourceDevice, "DAT_RESOURCE_DEVICE"},
	{"ResourceTEP", ResourceTEP, "DAT_RESOURCE_TEP"},
	{"ResourceTEVD", ResourceTEVD, "DAT_RESOURCE_TEVD"},
	{"ResourceProtectionDomain", ResourceProtectionDomain, "DAT_RESOURCE_PROTECTION_DOMAIN"},
	{"ResourceMemoryRegion", ResourceMemoryRegion, "DAT_RESOURCE_MEMORY_REGION"},
	{"ResourceErrorHandler", ResourceErrorHandler, "DAT_RESOURCE_ERROR_HANDLER"},
	{"ResourceCredits", ResourceCredits, "DAT_RESOURCE_CREDITS"},
	{"ResourceSRQ", ResourceSRQ, "DAT_RESOURCE_SRQ"},
	{"InvalidHandleIA", InvalidHandleIA, "DAT_INVALID_HANDLE_IA"},
	{"InvalidHandleEP", InvalidHandleEP, "DAT_INVALID_HANDLE_EP"},
	{"InvalidHandleLMR", InvalidHandleLMR, "DAT_INVALID_HANDLE_LMR"},
	{"InvalidHandleRMR", InvalidHandleRMR, "DAT_INVALID_HANDLE_RMR"},
	{"InvalidHandlePZ", InvalidHandlePZ, "DAT_INVALID_HANDLE_PZ"},
	{"InvalidHandlePSP", InvalidHandlePSP, "DAT_INVALID_HANDLE_PSP"},
	{"InvalidHandleRSP", InvalidHandleRSP, "DAT_INVALID_HANDLE_RSP"},
	{"InvalidHandleCR", InvalidHandleCR, "DAT_INVALID_HANDLE_CR"},
	{"InvalidHandleCNO", InvalidHandleCNO, "DAT_INVALID_HANDLE_CNO"},
	{"InvalidHandleEVDCR", InvalidHandleEVDCR, "DAT_INVALID_HANDLE_EVD_CR"},
	{"InvalidHandleEVDRequest", InvalidHandleEVDRequest, "DAT_INVALID_HANDLE_EVD_REQUEST"},
	{"InvalidHandleEVDRecv", InvalidHandleEVDRecv, "DAT_INVALID_HANDLE_EVD_RECV"},
	{"InvalidHandleEVDConn", InvalidHandleEVDConn, "DAT_INVALID_HANDLE_EVD_CONN"},
	{"InvalidHandleEVDAsync", InvalidHandleEVDAsync, "DAT_INVALID_HANDLE_EVD_ASYNC"},
	{"InvalidHandleSRQ", InvalidHandleSRQ, "DAT_INVALID_HANDLE_SRQ"},
	{"InvalidHandleCSP", InvalidHandleCSP, "DAT_INVALID_HANDLE_CSP"},
	{"InvalidHandle1", InvalidHandle1, "DAT_INVALID_HANDLE1"},
	{"InvalidHandle2", InvalidHandle2, "DAT_INVALID_HANDLE2"},
	{"InvalidHandle3", InvalidHandle3, "DAT_INVALID_HANDLE3"},
	{"InvalidHandle4", InvalidHandle4, "DAT_INVALID_HANDLE4"},
	{"InvalidHandle5", InvalidHandle5, "DAT_INVALID_HANDLE5"},
	{"InvalidHandle6", InvalidHandle6, "DAT_INVALID_HANDLE6"},
	{"InvalidHandle7", InvalidHandle7, "DAT_INVALID_HANDLE7"},
	{"InvalidHandle8", InvalidHandle8, "DAT_INVALID_HANDLE8"},
	{"InvalidHandle9", InvalidHandle9, "DAT_INVALID_HANDLE9"},
	{"InvalidHandle10", InvalidHandle10, "DAT_INVALID_HANDLE10"},
	{"InvalidArg1", InvalidArg1, "DAT_INVALID_ARG1"},
	{"InvalidArg2", InvalidArg2, "DAT_INVALID_ARG2"},
	{"InvalidArg3", InvalidArg3, "DAT_INVALID_ARG3"},
	{"InvalidArg4", InvalidArg4, "DAT_INVALID_ARG4"},
	{"InvalidArg5", InvalidArg5, "DAT_INVALID_ARG5"},
	{"InvalidArg6", InvalidArg6, "DAT_INVALID_ARG6"},
	{"InvalidArg7", InvalidArg7, "DAT_INVALID_ARG7"},
	{"InvalidArg8", InvalidArg8, "DAT_INVALID_ARG8"},
	{"InvalidArg9", InvalidArg9, "DAT_INVALID_ARG9"},
	{"InvalidArg10", InvalidArg10, "DAT_INVALID_ARG10"},
	{"InvalidStateEPUnconnected", InvalidStateEPUnconnected, "DAT_INVALID_STATE_EP_UNCONNECTED"},
	{"InvalidStateEPActConnPending", InvalidStateEPActConnPending, "DAT_INVALID_STATE_EP_ACTCONNPENDING"},
	{"InvalidStateEPPassConnPending", InvalidStateEPPassConnPending, "DAT_INVALID_STATE_EP_PASSCONNPENDING"},
	{"InvalidStateEPTentConnPending", InvalidStateEPTentConnPending, "DAT_INVALID_STATE_EP_TENTCONNPENDING"},
	{"InvalidStateEPConnected", InvalidStateEPConnected, "DAT_INVALID_STATE_EP_CONNECTED"},
	{"InvalidStateEPDisconnected", InvalidStateEPDisconnected, "DAT_INVALID_STATE_EP_DISCONNECTED"},
	{"InvalidStateEPReserved", InvalidStateEPReserved, "DAT_INVALID_STATE_EP_RESERVED"},
	{"InvalidStateEPComplPending", InvalidStateEPComplPending, "DAT_INVALID_STATE_EP_COMPLPENDING"},
	{"InvalidStateEPDiscPending", InvalidStateEPDiscPending, "DAT_INVALID_STATE_EP_DISCPENDING"},
	{"InvalidStateEPProviderControl", InvalidStateEPProviderControl, "DAT_INVALID_STATE_EP_PROVIDERCONTROL"},
	{"InvalidStateEPNotReady", InvalidStateEPNotReady, "DAT_INVALID_STATE_EP_NOTREADY"},
	{"InvalidStateEPRecvWatermark", InvalidStateEPRecvWatermark, "DAT_INVALID_STATE_EP_RECV_WATERMARK"},
	{"InvalidStateEPPZ", InvalidStateEPPZ, "DAT_INVALID_STATE_EP_PZ"},
	{"InvalidStateEPEVDRequest", InvalidStateEPEVDRequest, "DAT_INVALID_STATE_EP_EVD_REQUEST"},
	{"InvalidStateEPEVDRecv", InvalidStateEPEVDRecv, "DAT_INVALID_STATE_EP_EVD_RECV"},
	{"InvalidStateEPEVDConnect", InvalidStateEPEVDConnect, "DAT_INVALID_STATE_EP_EVD_CONNECT"},
	{"InvalidStateEPUnconfigured", InvalidStateEPUnconfigured, "DAT_INVALID_STATE_EP_UNCONFIGURED"},
	{"InvalidStateEPUnconfReserved", InvalidStateEPUnconfReserved, "DAT_INVALID_STATE_EP_UNCONFRESERVED"},
	{"InvalidStateEPUnconfPassive", InvalidStateEPUnconfPassive, "DAT_INVALID_STATE_EP_UNCONFPASSIVE"},
	{"InvalidStateEPUnconfTentative", InvalidStateEPUnconfTentative, "DAT_INVALID_STATE_EP_UNCONFTENTATIVE"},
	{"InvalidStateCNOInUse", InvalidStateCNOInUse, "DAT_INVALID_STATE_CNO_IN_USE"},
	{"InvalidStateCNODead", InvalidStateCNODead, "DAT_INVALID_STATE_CNO_DEAD"},
	{"InvalidStateEVDOpen", InvalidStateEVDOpen, "DAT_INVALID_STATE_EVD_OPEN"},
	{"InvalidStateEVDEnabled", InvalidStateEVDEnabled, "DAT_INVALID_STATE_EVD_ENABLED"},
	{"InvalidStateEVDDisabled", InvalidStateEVDDisabled, "DAT_INVALID_STATE_EVD_DISABLED"},
	{"InvalidStateEVDWaitable", InvalidStateEVDWaitable, "DAT_INVALID_STATE_EVD_WAITABLE"},
	{"InvalidStateEVDUnwaitable", InvalidStateEVDUnwaitable, "DAT_INVALID_STATE_EVD_UNWAITABLE"},
	{"InvalidStateEVDInUse", InvalidStateEVDInUse, "DAT_INVALID_STATE_EVD_IN_USE"},
	{"InvalidStateEVDConfigNotify", InvalidStateEVDConfigNotify, "DAT_INVALID_STATE_EVD_CONFIG_NOTIFY"},
	{"InvalidStateEVDConfigSolicited", InvalidStateEVDConfigSolicited, "DAT_INVALID_STATE_EVD_CONFIG_SOLICITED"},
	{"InvalidStateEVDConfigThreshold", InvalidStateEVDConfigThreshold, "DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD"},
	{"InvalidStateEVDWaiter", InvalidStateEVDWaiter, "DAT_INVALID_STATE_EVD_WAITER"},
	{"InvalidStateEVDAsync", InvalidStateEVDAsync, "DAT_INVALID_STATE_EVD_ASYNC"},
	{"InvalidStateIAInUse", InvalidStateIAInUse, "DAT_INVALID_STATE_IA_IN_USE"},
	{"InvalidStateLMRInUse", InvalidStateLMRInUse, "DAT_INVALID_STATE_LMR_IN_USE"},
	{"InvalidStateLMRFree", InvalidStateLMRFree, "DAT_INVALID_STATE_LMR_FREE"},
	{"InvalidStatePZInUse", InvalidStatePZInUse, "DAT_INVALID_STATE_PZ_IN_USE"},
	{"InvalidStatePZFree", InvalidStatePZFree, "DAT_INVALID_STATE_PZ_FREE"},
	{"InvalidStateSRQOperational", InvalidStateSRQOperational, "DAT_INVALID_STATE_SRQ_OPERATIONAL"},
	{"InvalidStateSRQError", InvalidStateSRQError, "DAT_INVALID_STATE_SRQ_ERROR"},
	{"InvalidStateSRQInUse", InvalidStateSRQInUse, "DAT_INVALID_STATE_SRQ_IN_USE"},
	{"InvalidStateSRQShutdown", InvalidStateSRQShutdown, "DAT_INVALID_STATE_SRQ_SHUTDOWN"},
	{"PrivilegesRead", PrivilegesRead, "DAT_PRIVILEGES_READ"},
	{"PrivilegesWrite", PrivilegesWrite, "DAT_PRIVILEGES_WRITE"},
	{"PrivilegesRDMARead", PrivilegesRDMARead, "DAT_PRIVILEGES_RDMA_READ"},
	{"PrivilegesRDMAWrite", PrivilegesRDMAWrite, "DAT_PRIVILEGES_RDMA_WRITE"},
	{"ProtectionRead", ProtectionRead, "DAT_PROTECTION_READ"},
	{"ProtectionWrite", ProtectionWrite, "DAT_PROTECTION_WRITE"},
	{"ProtectionRDMARead", ProtectionRDMARead, "DAT_PROTECTION_RDMA_READ"},
	{"ProtectionRDMAWrite", ProtectionRDMAWrite, "DAT_PROTECTION_RDMA_WRITE"},
	{"InvalidAddressUnsupported", InvalidAddressUnsupported, "DAT_INVALID_ADDRESS_UNSUPPORTED"},
	{"InvalidAddressUnreachable", InvalidAddressUnreachable, "DAT_INVALID_ADDRESS_UNREACHABLE"},
	{"InvalidAddressMalformed", InvalidAddressMalformed, "DAT_INVALID_ADDRESS_MALFORMED"},
	{"NameNotRegistered", NameNotRegistered, "DAT_NAME_NOT_REGISTERED"},
	{"MajorNotFound", MajorNotFound, "DAT_MAJOR_NOT_FOUND"},
	{"MinorNotFound", MinorNotFound, "DAT_MINOR_NOT_FOUND"},
	{"ThreadSafetyNotFound", ThreadSafetyNotFound, "DAT_THREAD_SAFETY_NOT_FOUND"},
	{"VersionMajor", VersionMajor, "DAT_VERSION_MAJOR"},
	{"VersionMinor", VersionMinor, "DAT_VERSION_MINOR"},
	{"NameMaxLength", NameMaxLength, "DAT_NAME_MAX_LENGTH"},
	{"OptimalAlignment", OptimalAlignment, "DAT_OPTIMAL_ALIGNMENT"},
	{"LMRCookieSize", LMRCookieSize, "DAT_LMR_COOKIE_SIZE"},
	{"WatermarkInfinite", WatermarkInfinite, "DAT_WATERMARK_INFINITE"},
	{"HWDefault", HWDefault, "DAT_HW_DEFAULT"},
	{"SRQLWDefault", SRQLWDefault, "DAT_SRQ_LW_DEFAULT"},
	{"ValueUnknown", ValueUnknown, "DAT_VALUE_UNKNOWN"},
	{"TimeoutInfinite", TimeoutInfinite, "DAT_TIMEOUT_INFINITE"},
	{"CompletionDefault", CompletionDefault, "DAT_COMPLETION_DEFAULT_FLAG"},
	{"CompletionSuppress", CompletionSuppress, "DAT_COMPLETION_SUPPRESS_FLAG"},
	{"CompletionSolicitedWait", CompletionSolicitedWait, "DAT_COMPLETION_SOLICITED_WAIT_FLAG"},
	{"CompletionUnsignalled", CompletionUnsignalled, "DAT_COMPLETION_UNSIGNALLED_FLAG"},
	{"CompletionBarrierFence", CompletionBarrierFence, "DAT_COMPLETION_BARRIER_FENCE_FLAG"},
	{"CompletionEVDThreshold", CompletionEVDThreshold, "DAT_COMPLETION_EVD_THRESHOLD_FLAG"},
	{"CompletionLMRInvalidateFence", CompletionLMRInvalidateFence, "DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG"},
	{"DTOSend", DTOSend, "DAT_DTO_SEND"},
	{"DTORDMAWrite", DTORDMAWrite, "DAT_DTO_RDMA_WRITE"},
	{"DTORDMARead", DTORDMARead, "DAT_DTO_RDMA_READ"},
	{"DTOReceive", DTOReceive, "DAT_DTO_RECEIVE"},
	{"DTOReceiveWithInvalidate", DTOReceiveWithInvalidate, "DAT_DTO_RECEIVE_WITH_INVALIDATE"},
	{"DTOBindMW", DTOBindMW, "DAT_DTO_BIND_MW"},
	{"DTOLMRFMR", DTOLMRFMR, "DAT_DTO_LMR_FMR"},
	{"DTOLMRInvalidate", DTOLMRInvalidate, "DAT_DTO_LMR_INVALIDATE"},
	{"DTOExtensionBase", DTOExtensionBase, "DAT_DTO_EXTENSION_BASE"},
	{"QoSBestEffort", QoSBestEffort, "DAT_QOS_BEST_EFFORT"},
	{"QoSHighThroughput", QoSHighThroughput, "DAT_QOS_HIGH_THROUGHPUT"},
	{"QoSLowLatency", QoSLowLatency, "DAT_QOS_LOW_LATENCY"},
	{"QoSEconomy", QoSEconomy, "DAT_QOS_ECONOMY"},
	{"QoSPremium", QoSPremium, "DAT_QOS_PREMIUM"},
	{"ConnectDefault", ConnectDefault, "DAT_CONNECT_DEFAULT_FLAG"},
	{"ConnectMultipathRequested", ConnectMultipathRequested, "DAT_CONNECT_MULTIPATH_REQUESTED_FLAG"},
	{"ConnectMultipathRequired", ConnectMultipathRequired, "DAT_CONNECT_MULTIPATH_REQUIRED_FLAG"},
	{"CloseAbruptFlag", CloseAbruptFlag, "DAT_CLOSE_ABRUPT_FLAG"},
	{"CloseGracefulFlag", CloseGracefulFlag, "DAT_CLOSE_GRACEFUL_FLAG"},
	{"CloseDefault", CloseDefault, "DAT_CLOSE_DEFAULT"},
	{"EVDSoftwareFlag", EVDSoftwareFlag, "DAT_EVD_SOFTWARE_FLAG"},
	{"EVDCRFlag", EVDCRFlag, "DAT_EVD_CR_FLAG"},
	{"EVDDTOFlag", EVDDTOFlag, "DAT_EVD_DTO_FLAG"},
	{"EVDConnectionFlag", EVDConnectionFlag, "DAT_EVD_CONNECTION_FLAG"},
	{"EVDRMRBindFlag", EVDRMRBindFlag, "DAT_EVD_RMR_BIND_FLAG"},
	{"EVDAsyncFlag", EVDAsyncFlag, "DAT_EVD_ASYNC_FLAG"},
	{"EVDDefaultFlag", EVDDefaultFlag, "DAT_EVD_DEFAULT_FLAG"},
	{"EVDExtensionBase", EVDExtensionBase, "DAT_EVD_EXTENSION_BASE"},
	{"PSPConsumerFlag", PSPConsumerFlag, "DAT_PSP_CONSUMER_FLAG"},
	{"PSPProviderFlag", PSPProviderFlag, "DAT_PSP_PROVIDER_FLAG"},
	{"MemPrivNone", MemPrivNone, "DAT_MEM_PRIV_NONE_FLAG"},
	{"MemPrivLocalRead", MemPrivLocalRead, "DAT_MEM_PRIV_LOCAL_READ_FLAG"},
	{"MemPrivRemoteRead", MemPrivRemoteRead, "DAT_MEM_PRIV_REMOTE_READ_FLAG"},
	{"MemPrivLocalWrite", MemPrivLocalWrite, "DAT_MEM_PRIV_LOCAL_WRITE_FLAG"},
	{"MemPrivRemoteWrite", MemPrivRemoteWrite, "DAT_MEM_PRIV_REMOTE_WRITE_FLAG"},
	{"MemPrivAll", MemPrivAll, "DAT_MEM_PRIV_ALL_FLAG"},
	{"MemPrivExtensionBase", MemPrivExtensionBase, "DAT_MEM_PRIV_EXTENSION_BASE"},
	{"MemPrivRead", MemPrivRead, "DAT_MEM_PRIV_READ_FLAG"},
	{"MemPrivWrite", MemPrivWrite, "DAT_MEM_PRIV_WRITE_FLAG"},
	{"VATypeVA", VATypeVA, "DAT_VA_TYPE_VA"},
	{"VATypeZB", VATypeZB, "DAT_VA_TYPE_ZB"},
	{"RMRScopeEP", RMRScopeEP, "DAT_RMR_SCOPE_EP"},
	{"RMRScopePZ", RMRScopePZ, "DAT_RMR_SCOPE_PZ"},
	{"RMRScopeAny", RMRScopeAny, "DAT_RMR_SCOPE_ANY"},
	{"MemTypeVirtual", MemTypeVirtual, "DAT_MEM_TYPE_VIRTUAL"},
	{"MemTypeLMR", MemTypeLMR, "DAT_MEM_TYPE_LMR"},
	{"MemTypeSharedVirtual", MemTypeSharedVirtual, "DAT_MEM_TYPE_SHARED_VIRTUAL"},
	{"IOVConsumer", IOVConsumer, "DAT_IOV_CONSUMER"},
	{"IOVProviderNoMod", IOVProviderNoMod, "DAT_IOV_PROVIDER_NOMOD"},
	{"IOVProviderMod", IOVProviderMod, "DAT_IOV_PROVIDER_MOD"},
	{"PSPCreatesEPNever", PSPCreatesEPNever, "DAT_PSP_CREATES_EP_NEVER"},
	{"PSPCreatesEPIfAsked", PSPCreatesEPIfAsked, "DAT_PSP_CREATES_EP_IFASKED"},
	{"PSPCreatesEPAlways", PSPCreatesEPAlways, "DAT_PSP_CREATES_EP_ALWAYS"},
	{"PZUnique", PZUnique, "DAT_PZ_UNIQUE"},
	{"PZShareable", PZShareable, "DAT_PZ_SHAREABLE"},
	{"ExtensionNone", ExtensionNone, "DAT_EXTENSION_NONE"},
	{"ExtensionIB", ExtensionIB, "DAT_EXTENSION_IB"},
	{"ExtensionIW", ExtensionIW, "DAT_EXTENSION_IW"},
	{"ServiceTypeRC", ServiceTypeRC, "DAT_SERVICE_TYPE_RC"},
	{"ServiceTypeExtensionBase", ServiceTypeExtensionBase, "DAT_SERVICE_TYPE_EXTENSION_BASE"},
	{"EPStateUnconnected", EPStateUnconnected, "DAT_EP_STATE_UNCONNECTED"},
	{"EPStateUnconfiguredUnconnected", EPStateUnconfiguredUnconnected, "DAT_EP_STATE_UNCONFIGURED_UNCONNECTED"},
	{"EPStateReserved", EPStateReserved, "DAT_EP_STATE_RESERVED"},
	{"EPStateUnconfiguredReserved", EPStateUnconfiguredReserved, "DAT_EP_STATE_UNCONFIGURED_RESERVED"},
	{"EPStatePassiveConnectionPending", EPStatePassiveConnectionPending, "DAT_EP_STATE_PASSIVE_CONNECTION_PENDING"},
	{"EPStateUnconfiguredPassive", EPStateUnconfiguredPassive, "DAT_EP_STATE_UNCONFIGURED_PASSIVE"},
	{"EPStateActiveConnectionPending", EPStateActiveConnectionPending, "DAT_EP_STATE_ACTIVE_CONNECTION_PENDING"},
	{"EPStateTentativeConnectionPending", EPStateTentativeConnectionPending, "DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING"},
	{"EPStateUnconfiguredTentative", EPStateUnconfiguredTentative, "DAT_EP_STATE_UNCONFIGURED_TENTATIVE"},
	{"EPStateConnected", EPStateConnected, "DAT_EP_STATE_CONNECTED"},
	{"EPStateDisconnectPending", EPStateDisconnectPending, "DAT_EP_STATE_DISCONNECT_PENDING"},
	{"EPStateDisconnected", EPStateDisconnected, "DAT_EP_STATE_DISCONNECTED"},
	{"EPStateCompletionPending", EPStateCompletionPending, "DAT_EP_STATE_COMPLETION_PENDING"},
	{"EPStateConnectedSinglePath", EPStateConnectedSinglePath, "DAT_EP_STATE_CONNECTED_SINGLE_PATH"},
	{"EPStateConnectedMultiPath", EPStateConnectedMultiPath, "DAT_EP_STATE_CONNECTED_MULTI_PATH"},
	{"EPStateError", EPStateError, "DAT_EP_STATE_ERROR"},
	{"SRQStateError", SRQStateError, "DAT_SRQ_STATE_ERROR"},
	{"SRQStateOperational", SRQStateOperational, "DAT_SRQ_STATE_OPERATIONAL"},
	{"SRQStateShutdown", SRQStateShutdown, "DAT_SRQ_STATE_SHUTDOWN"},
	{"EVDStateEnabled", EVDStateEnabled, "DAT_EVD_STATE_ENABLED"},
	{"EVDStateDisabled", EVDStateDisabled, "DAT_EVD_STATE_DISABLED"},
	{"EVDStateWaitable", EVDStateWaitable, "DAT_EVD_STATE_WAITABLE"},
	{"EVDStateUnwaitable", EVDStateUnwaitable, "DAT_EVD_STATE_UNWAITABLE"},
	{"EVDStateConfigNotify", EVDStateConfigNotify, "DAT_EVD_STATE_CONFIG_NOTIFY"},
	{"EVDStateConfigSolicited", EVDStateConfigSolicited, "DAT_EVD_STATE_CONFIG_SOLICITED"},
	{"EVDStateConfigThreshold", EVDStateConfigThreshold, "DAT_EVD_STATE_CONFIG_THRESHOLD"},
	{"ProxyTypeNone", ProxyTypeNone, "DAT_PROXY_TYPE_NONE"},
	{"ProxyTypeAgent", ProxyTypeAgent, "DAT_PROXY_TYPE_AGENT"},
	{"ProxyTypeFD", ProxyTypeFD, "DAT_PROXY_TYPE_FD"},
	{"DTOSuccess", DTOSuccess, "DAT_DTO_SUCCESS"},
	{"DTOErrFlushed", DTOErrFlushed, "DAT_DTO_ERR_FLUSHED"},
	{"DTOErrLocalLength", DTOErrLocalLength, "DAT_DTO_ERR_LOCAL_LENGTH"},
	{"DTOErrLocalEP", DTOErrLocalEP, "DAT_DTO_ERR_LOCAL_EP"},
	{"DTOErrLocalProtection", DTOErrLocalProtection, "DAT_DTO_ERR_LOCAL_PROTECTION"},
	{"DTOErrBadResponse", DTOErrBadResponse, "DAT_DTO_ERR_BAD_RESPONSE"},
	{"DTOErrRemoteAccess", DTOErrRemoteAccess, "DAT_DTO_ERR_REMOTE_ACCESS"},
	{"DTOErrRemoteResponder", DTOErrRemoteResponder, "DAT_DTO_ERR_REMOTE_RESPONDER"},
	{"DTOErrTransport", DTOErrTransport, "DAT_DTO_ERR_TRANSPORT"},
	{"DTOErrReceiverNotReady", DTOErrReceiverNotReady, "DAT_DTO_ERR_RECEIVER_NOT_READY"},
	{"DTOErrPartialPacket", DTOErrPartialPacket, "DAT_DTO_ERR_PARTIAL_PACKET"},
	{"DTOErrRMROperationFailed", DTOErrRMROperationFailed, "DAT_RMR_OPERATION_FAILED"},
	{"DTOErrLocalMMError", DTOErrLocalMMError, "DAT_DTO_ERR_LOCAL_MM_ERROR"},
	{"DTOLengthError", DTOLengthError, "DAT_DTO_LENGTH_ERROR"},
	{"DTOFailure", DTOFailure, "DAT_DTO_FAILURE"},
	{"RMRBindSuccess", RMRBindSuccess, "DAT_RMR_BIND_SUCCESS"},
	{"RMRBindFailure", RMRBindFailure, "DAT_RMR_BIND_FAILURE"},
	{"EventDTOCompletion", EventDTOCompletion, "DAT_DTO_COMPLETION_EVENT"},
	{"EventRMRBindCompletion", EventRMRBindCompletion, "DAT_RMR_BIND_COMPLETION_EVENT"},
	{"EventConnectionRequest", EventConnectionRequest, "DAT_CONNECTION_REQUEST_EVENT"},
	{"EventConnectionEstablished", EventConnectionEstablished, "DAT_CONNECTION_EVENT_ESTABLISHED"},
	{"EventConnectionPeerRejected", EventConnectionPeerRejected, "DAT_CONNECTION_EVENT_PEER_REJECTED"},
	{"EventConnectionNonPeerRejected", EventConnectionNonPeerRejected, "DAT_CONNECTION_EVENT_NON_PEER_REJECTED"},
	{"EventConnectionAcceptCompletionError", EventConnectionAcceptCompletionError, "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR"},
	{"EventConnectionDisconnected", EventConnectionDisconnected, "DAT_CONNECTION_EVENT_DISCONNECTED"},
	{"EventConnectionBroken", EventConnectionBroken, "DAT_CONNECTION_EVENT_BROKEN"},
	{"EventConnectionTimedOut", EventConnectionTimedOut, "DAT_CONNECTION_EVENT_TIMED_OUT"},
	{"EventConnectionUnreachable", EventConnectionUnreachable, "DAT_CONNECTION_EVENT_UNREACHABLE"},
	{"EventAsyncErrorEVDOverflow", EventAsyncErrorEVDOverflow, "DAT_ASYNC_ERROR_EVD_OVERFLOW"},
	{"EventAsyncErrorIACatastrophic", EventAsyncErrorIACatastrophic, "DAT_ASYNC_ERROR_IA_CATASTROPHIC"},
	{"EventAsyncErrorEPBroken", EventAsyncErrorEPBroken, "DAT_ASYNC_ERROR_EP_BROKEN"},
	{"EventAsyncErrorTimedOut", EventAsyncErrorTimedOut, "DAT_ASYNC_ERROR_TIMED_OUT"},
	{"EventAsyncErrorProviderInternalError", EventAsyncErrorProviderInternalError, "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR"},
	{"EventHADownTo1", EventHADownTo1, "DAT_HA_DOWN_TO_1"},
	{"EventHAUpToMultiPath", EventHAUpToMultiPath, "DAT_HA_UP_TO_MULTI_PATH"},
	{"EventSoftware", EventSoftware, "DAT_SOFTWARE_EVENT"},
	{"EventExtension", EventExtension, "DAT_EXTENSION_EVENT"},
	{"EventIBExtensionRangeBase", EventIBExtensionRangeBase, "DAT_IB_EXTENSION_RANGE_BASE"},
	{"EventIWExtensionRangeBase", EventIWExtensionRangeBase, "DAT_IW_EXTENSION_RANGE_BASE"},
	{"IACatastrophicError", IACatastrophicError, "DAT_IA_CATASTROPHIC_ERROR"},
	{"IAOtherError", IAOtherError, "DAT_IA_OTHER_ERROR"},
	{"EPTransferToError", EPTransferToError, "DAT_EP_TRANSFER_TO_ERROR"},
	{"EPOtherError", EPOtherError, "DAT_EP_OTHER_ERROR"},
	{"SRQSoftHighWatermarkEvent", SRQSoftHighWatermarkEvent, "DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT"},
	{"EVDOverflowError", EVDOverflowError, "DAT_EVD_OVERFLOW_ERROR"},
	{"EVDOtherError", EVDOtherError, "DAT_EVD_OTHER_ERROR"},
	{"SRQTransferToError", SRQTransferToError, "DAT_SRQ_TRANSFER_TO_ERROR"},
	{"SRQOtherError", SRQOtherError, "DAT_SRQ_OTHER_ERROR"},
	{"SRQLowWatermarkEvent", SRQLowWatermarkEvent, "DAT_SRQ_LOW_WATERMARK_EVENT"},
	{"LMROtherError", LMROtherError, "DAT_LMR_OTHER_ERROR"},
	{"RMROtherError", RMROtherError, "DAT_RMR_OTHER_ERROR"},
	{"PZOtherError", PZOtherError, "DAT_PZ_OTHER_ERROR"},
	{"HandleTypeCR", HandleTypeCR, "DAT_HANDLE_TYPE_CR"},
	{"HandleTypeEP", HandleTypeEP, "DAT_HANDLE_TYPE_EP"},
	{"HandleTypeEVD", HandleTypeEVD, "DAT_HANDLE_TYPE_EVD"},
	{"HandleTypeIA", HandleTypeIA, "DAT_HANDLE_TYPE_IA"},
	{"HandleTypeLMR", HandleTypeLMR, "DAT_HANDLE_TYPE_LMR"},
	{"HandleTypePSP", HandleTypePSP, "DAT_HANDLE_TYPE_PSP"},
	{"HandleTypePZ", HandleTypePZ, "DAT_HANDLE_TYPE_PZ"},
	{"HandleTypeRMR", HandleTypeRMR, "DAT_HANDLE_TYPE_RMR"},
	{"HandleTypeRSP", HandleTypeRSP, "DAT_HANDLE_TYPE_RSP"},
	{"HandleTypeCNO", HandleTypeCNO, "DAT_HANDLE_TYPE_CNO"},
	{"HandleTypeSRQ", HandleTypeSRQ, "DAT_HANDLE_TYPE_SRQ"},
	{"HandleTypeCSP", HandleTypeCSP, "DAT_HANDLE_TYPE_CSP"},
	{"HandleTypeExtensionBase", HandleTypeExtensionBase, "DAT_HANDLE_TYPE_EXTENSION_BASE"},
	// ext_ib.go
	{"IBExtensionVersion", IBExtensionVersion, "DAT_IB_EXTENSION_VERSION"},
	{"EventIBDTO", EventIBDTO, "DAT_IB_DTO_EVENT"},
	{"DTOIBRDMAWriteImmed", DTOIBRDMAWriteImmed, "DAT_IB_DTO_RDMA_WRITE_IMMED"},
	{"DTOIBRecvImmed", DTOIBRecvImmed, "DAT_IB_DTO_RECV_IMMED"},
	{"DTOIBFetchAdd", DTOIBFetchAdd, "DAT_IB_DTO_FETCH_ADD"},
	{"DTOIBCmpSwap", DTOIBCmpSwap, "DAT_IB_DTO_CMP_SWAP"},
	{"DTOIBRecvMsgImmed", DTOIBRecvMsgImmed, "DAT_IB_DTO_RECV_MSG_IMMED"},
	{"MemPrivIBRemoteAtomic", MemPrivIBRemoteAtomic, "DAT_IB_MEM_PRIV_REMOTE_ATOMIC"},
	{"IBFetchAndAdd", IBFetchAndAdd, "DAT_IB_FETCH_AND_ADD"},
	{"IBCmpAndSwap", IBCmpAndSwap, "DAT_IB_CMP_AND_SWAP"},
	{"IBRDMAWriteImmed", IBRDMAWriteImmed, "DAT_IB_RDMA_WRITE_IMMED"},
	{"IBRDMAWriteImmedData", IBRDMAWriteImmedData, "DAT_IB_RDMA_WRITE_IMMED_DATA"},
	{"IBRecvImmedData", IBRecvImmedData, "DAT_IB_RECV_IMMED_DATA"},
	{"IBOpSuccess", IBOpSuccess, "DAT_OP_SUCCESS"},
	{"IBOpErr", IBOpErr, "DAT_IB_OP_ERR"},
	{"EPFieldIAHandle", EPFieldIAHandle, "DAT_EP_FIELD_IA_HANDLE"},
	{"EPFieldEPState", EPFieldEPState, "DAT_EP_FIELD_EP_STATE"},
	{"EPFieldComm", EPFieldComm, "DAT_EP_FIELD_COMM"},
	{"EPFieldLocalIAAddress", EPFieldLocalIAAddress, "DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR"},
	{"EPFieldLocalPortQual", EPFieldLocalPortQual, "DAT_EP_FIELD_LOCAL_PORT_QUAL"},
	{"EPFieldRemoteIAAddress", EPFieldRemoteIAAddress, "DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR"},
	{"EPFieldRemotePortQual", EPFieldRemotePortQual, "DAT_EP_FIELD_REMOTE_PORT_QUAL"},
	{"EPFieldPZ", EPFieldPZ, "DAT_EP_FIELD_PZ_HANDLE"},
	{"EPFieldRecvEVD", EPFieldRecvEVD, "DAT_EP_FIELD_RECV_EVD_HANDLE"},
	{"EPFieldRequestEVD", EPFieldRequestEVD, "DAT_EP_FIELD_REQUEST_EVD_HANDLE"},
	{"EPFieldConnectEVD", EPFieldConnectEVD, "DAT_EP_FIELD_CONNECT_EVD_HANDLE"},
	{"EPFieldSRQ", EPFieldSRQ, "DAT_EP_FIELD_SRQ_HANDLE"},
	{"EPFieldServiceType", EPFieldServiceType, "DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE"},
	{"EPFieldMaxMessageSize", EPFieldMaxMessageSize, "DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE"},
	{"EPFieldMaxRDMASize", EPFieldMaxRDMASize, "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE"},
	{"EPFieldQoS", EPFieldQoS, "DAT_EP_FIELD_EP_ATTR_QOS"},
	{"EPFieldRecvCompletionFlags", EPFieldRecvCompletionFlags, "DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS"},
	{"EPFieldRequestCompletionFlag", EPFieldRequestCompletionFlag, "DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS"},
	{"EPFieldMaxRecvDTOs", EPFieldMaxRecvDTOs, "DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS"},
	{"EPFieldMaxRequestDTOs", EPFieldMaxRequestDTOs, "DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS"},
	{"EPFieldMaxRecvIOV", EPFieldMaxRecvIOV, "DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV"},
	{"EPFieldMaxRequestIOV", EPFieldMaxRequestIOV, "DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV"},
	{"EPFieldMaxRDMAReadIn", EPFieldMaxRDMAReadIn, "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN"},
	{"EPFieldMaxRDMAReadOut", EPFieldMaxRDMAReadOut, "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT"},
	{"EPFieldSRQSoftHW", EPFieldSRQSoftHW, "DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW"},
	{"EPFieldMaxRDMAReadIOV", EPFieldMaxRDMAReadIOV, "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV"},
	{"EPFieldMaxRDMAWriteIOV", EPFieldMaxRDMAWriteIOV, "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV"},
	{"EPFieldNumTransportAttr", EPFieldNumTransportAttr, "DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR"},
	{"EPFieldTransportSpecificAttr", EPFieldTransportSpecificAttr, "DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR"},
	{"EPFieldNumProviderAttr", EPFieldNumProviderAttr, "DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR"},
	{"EPFieldProviderSpecificAttr", EPFieldProviderSpecificAttr, "DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR"},
	{"EPFieldEPAttrAll", EPFieldEPAttrAll, "DAT_EP_FIELD_EP_ATTR_ALL"},
	{"EPFieldAll", EPFieldAll, "DAT_EP_FIELD_ALL"},
	// ud.go
	{"ServiceTypeIBUD", ServiceTypeIBUD, "DAT_IB_SERVICE_TYPE_UD"},
	{"EventIBUDConnectionRequest", EventIBUDConnectionRequest, "DAT_IB_UD_CONNECTION_REQUEST_EVENT"},
	{"EventIBUDConnectionEstablished", EventIBUDConnectionEstablished, "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED"},
	{"EventIBUDConnectionReject", EventIBUDConnectionReject, "DAT_IB_UD_CONNECTION_REJECT_EVENT"},
	{"EventIBUDConnectionError", EventIBUDConnectionError, "DAT_IB_UD_CONNECTION_ERROR_EVENT"},
	{"DTOIBSendUD", DTOIBSendUD, "DAT_IB_DTO_SEND_UD"},
	{"DTOIBRecvUD", DTOIBRecvUD, "DAT_IB_DTO_RECV_UD"},
	{"DTOIBRecvUDImmed", DTOIBRecvUDImmed, "DAT_IB_DTO_RECV_UD_IMMED"},
	{"IBUDConnectRequest", IBUDConnectRequest, "DAT_IB_UD_CONNECT_REQUEST"},
	{"IBUDRemoteAH", IBUDRemoteAH, "DAT_IB_UD_REMOTE_AH"},
	{"IBUDPassiveRemoteAH", IBUDPassiveRemoteAH, "DAT_IB_UD_PASSIVE_REMOTE_AH"},
	{"IBUDSend", IBUDSend, "DAT_IB_UD_SEND"},
	{"IBUDRecv", IBUDRecv, "DAT_IB_UD_RECV"},
	{"IBUDConnectReject", IBUDConnectReject, "DAT_IB_UD_CONNECT_REJECT"},
	{"IBUDConnectError", IBUDConnectError, "DAT_IB_UD_CONNECT_ERROR"},
	{"GRHSize", GRHSize, "sizeof(struct ibv_grh)"},
	// srq.go
	{"EventSRQLowWatermark", EventSRQLowWatermark, "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR"},
	// counters.go
	{"IACounterPZCreate", IACounterPZCreate, "DCNT_IA_PZ_CREATE"},
	{"IACounterPZFree", IACounterPZFree, "DCNT_IA_PZ_FREE"},
	{"IACounterLMRCreate", IACounterLMRCreate, "DCNT_IA_LMR_CREATE"},
	{"IACounterLMRFree", IACounterLMRFree, "DCNT_IA_LMR_FREE"},
	{"IACounterRMRCreate", IACounterRMRCreate, "DCNT_IA_RMR_CREATE"},
	{"IACounterRMRFree", IACounterRMRFree, "DCNT_IA_RMR_FREE"},
	{"IACounterPSPCreate", IACounterPSPCreate, "DCNT_IA_PSP_CREATE"},
	{"IACounterPSPCreateAny", IACounterPSPCreateAny, "DCNT_IA_PSP_CREATE_ANY"},
	{"IACounterPSPFree", IACounterPSPFree, "DCNT_IA_PSP_FREE"},
	{"IACounterRSPCreate", IACounterRSPCreate, "DCNT_IA_RSP_CREATE"},
	{"IACounterRSPFree", IACounterRSPFree, "DCNT_IA_RSP_FREE"},
	{"IACounterEVDCreate", IACounterEVDCreate, "DCNT_IA_EVD_CREATE"},
	{"IACounterEVDFree", IACounterEVDFree, "DCNT_IA_EVD_FREE"},
	{"IACounterEPCreate", IACounterEPCreate, "DCNT_IA_EP_CREATE"},
	{"IACounterEPFree", IACounterEPFree, "DCNT_IA_EP_FREE"},
	{"IACounterSRQCreate", IACounterSRQCreate, "DCNT_IA_SRQ_CREATE"},
	{"IACounterSRQFree", IACounterSRQFree, "DCNT_IA_SRQ_FREE"},
	{"IACounterSPCR", IACounterSPCR, "DCNT_IA_SP_CR"},
	{"IACounterSPCRAccepted", IACounterSPCRAccepted, "DCNT_IA_SP_CR_ACCEPTED"},
	{"IACounterSPCRRejected", IACounterSPCRRejected, "DCNT_IA_SP_CR_REJECTED"},
	{"IACounterMemAlloc", IACounterMemAlloc, "DCNT_IA_MEM_ALLOC"},
	{"IACounterMemAllocData", IACounterMemAllocData, "DCNT_IA_MEM_ALLOC_DATA"},
	{"IACounterMemFree", IACounterMemFree, "DCNT_IA_MEM_FREE"},
	{"IACounterAsyncError", IACounterAsyncError, "DCNT_IA_ASYNC_ERROR"},
	{"IACounterAsyncQPError", IACounterAsyncQPError, "DCNT_IA_ASYNC_QP_ERROR"},
	{"IACounterAsyncCQError", IACounterAsyncCQError, "DCNT_IA_ASYNC_CQ_ERROR"},
	{"IACounterCMListen", IACounterCMListen, "DCNT_IA_CM_LISTEN"},
	{"IACounterCMREQTX", IACounterCMREQTX, "DCNT_IA_CM_REQ_TX"},
	{"IACounterCMREQRX", IACounterCMREQRX, "DCNT_IA_CM_REQ_RX"},
	{"IACounterCMREPTX", IACounterCMREPTX, "DCNT_IA_CM_REP_TX"},
	{"IACounterCMREPRX", IACounterCMREPRX, "DCNT_IA_CM_REP_RX"},
	{"IACounterCMRTUTX", IACounterCMRTUTX, "DCNT_IA_CM_RTU_TX"},
	{"IACounterCMRTURX", IACounterCMRTURX, "DCNT_IA_CM_RTU_RX"},
	{"IACounterCMUserREJTX", IACounterCMUserREJTX, "DCNT_IA_CM_USER_REJ_TX"},
	{"IACounterCMUserREJRX", IACounterCMUserREJRX, "DCNT_IA_CM_USER_REJ_RX"},
	{"IACounterCMActiveEst", IACounterCMActiveEst, "DCNT_IA_CM_ACTIVE_EST"},
	{"IACounterCMPassiveEst", IACounterCMPassiveEst, "DCNT_IA_CM_PASSIVE_EST"},
	{"IACounterCMAHREQTX", IACounterCMAHREQTX, "DCNT_IA_CM_AH_REQ_TX"},
	{"IACounterCMAHREQRX", IACounterCMAHREQRX, "DCNT_IA_CM_AH_REQ_RX"},
	{"IACounterCMAHResolved", IACounterCMAHResolved, "DCNT_IA_CM_AH_RESOLVED"},
	{"IACounterCMDREQTX", IACounterCMDREQTX, "DCNT_IA_CM_DREQ_TX"},
	{"IACounterCMDREQRX", IACounterCMDREQRX, "DCNT_IA_CM_DREQ_RX"},
	{"IACounterCMDREPTX", IACounterCMDREPTX, "DCNT_IA_CM_DREP_TX"},
	{"IACounterCMDREPRX", IACounterCMDREPRX, "DCNT_IA_CM_DREP_RX"},
	{"IACounterCMMRATX", IACounterCMMRATX, "DCNT_IA_CM_MRA_TX"},
	{"IACounterCMMRARX", IACounterCMMRARX, "DCNT_IA_CM_MRA_RX"},
	{"IACounterCMREQFullQPoll", IACounterCMREQFullQPoll, "DCNT_IA_CM_REQ_FULLQ_POLL"},
	{"IACounterCMErr", IACounterCMErr, "DCNT_IA_CM_ERR"},
	{"IACounterCMErrREQFullQ", IACounterCMErrREQFullQ, "DCNT_IA_CM_ERR_REQ_FULLQ"},
	{"IACounterCMErrREQDup", IACounterCMErrREQDup, "DCNT_IA_CM_ERR_REQ_DUP"},
	{"IACounterCMErrREQRetry", IACounterCMErrREQRetry, "DCNT_IA_CM_ERR_REQ_RETRY"},
	{"IACounterCMErrREPDup", IACounterCMErrREPDup, "DCNT_IA_CM_ERR_REP_DUP"},
	{"IACounterCMErrREPRetry", IACounterCMErrREPRetry, "DCNT_IA_CM_ERR_REP_RETRY"},
	{"IACounterCMErrRTUDup", IACounterCMErrRTUDup, "DCNT_IA_CM_ERR_RTU_DUP"},
	{"IACounterCMErrRTURetry", IACounterCMErrRTURetry, "DCNT_IA_CM_ERR_RTU_RETRY"},
	{"IACounterCMErrRefused", IACounterCMErrRefused, "DCNT_IA_CM_ERR_REFUSED"},
	{"IACounterCMErrReset", IACounterCMErrReset, "DCNT_IA_CM_ERR_RESET"},
	{"IACounterCMErrTimeout", IACounterCMErrTimeout, "DCNT_IA_CM_ERR_TIMEOUT"},
	{"IACounterCMErrREJTX", IACounterCMErrREJTX, "DCNT_IA_CM_ERR_REJ_TX"},
	{"IACounterCMErrREJRX", IACounterCMErrREJRX, "DCNT_IA_CM_ERR_REJ_RX"},
	{"IACounterCMErrDREQDup", IACounterCMErrDREQDup, "DCNT_IA_CM_ERR_DREQ_DUP"},
	{"IACounterCMErrDREQRetry", IACounterCMErrDREQRetry, "DCNT_IA_CM_ERR_DREQ_RETRY"},
	{"IACounterCMErrDREPDup", IACounterCMErrDREPDup, "DCNT_IA_CM_ERR_DREP_DUP"},
	{"IACounterCMErrDREPRetry", IACounterCMErrDREPRetry, "DCNT_IA_CM_ERR_DREP_RETRY"},
	{"IACounterCMErrMRADup", IACounterCMErrMRADup, "DCNT_IA_CM_ERR_MRA_DUP"},
	{"IACounterCMErrMRARetry", IACounterCMErrMRARetry, "DCNT_IA_CM_ERR_MRA_RETRY"},
	{"IACounterCMErrUnexpected", IACounterCMErrUnexpected, "DCNT_IA_CM_ERR_UNEXPECTED"},
	{"IACounterLnkErrRcv", IACounterLnkErrRcv, "DCNT_IA_LNK_ERR_RCV"},
	{"IACounterLnkErrRcvRemPhys", IACounterLnkErrRcvRemPhys, "DCNT_IA_LNK_ERR_RCV_REM_PHYS"},
	{"IACounterLnkErrRcvConstraint", IACounterLnkErrRcvConstraint, "DCNT_IA_LNK_ERR_RCV_CONSTRAINT"},
	{"IACounterLnkErrXmtDiscards", IACounterLnkErrXmtDiscards, "DCNT_IA_LNK_ERR_XMT_DISCARDS"},
	{"IACounterLnkErrXmtContraint", IACounterLnkErrXmtContraint, "DCNT_IA_LNK_ERR_XMT_CONTRAINT"},
	{"IACounterLnkErrIntegrity", IACounterLnkErrIntegrity, "DCNT_IA_LNK_ERR_INTEGRITY"},
	{"IACounterLnkErrExcBufOverrun", IACounterLnkErrExcBufOverrun, "DCNT_IA_LNK_ERR_EXC_BUF_OVERRUN"},
	{"IACounterLnkWarnRcvSwRelay", IACounterLnkWarnRcvSwRelay, "DCNT_IA_LNK_WARN_RCV_SW_RELAY"},
	{"IACounterLnkWarnXmtWait", IACounterLnkWarnXmtWait, "DCNT_IA_LNK_WARN_XMT_WAIT"},
	{"IACounterDiagErrRQRAE", IACounterDiagErrRQRAE, "DCNT_IA_DIAG_ERR_RQ_RAE"},
	{"IACounterDiagErrRQOOS", IACounterDiagErrRQOOS, "DCNT_IA_DIAG_ERR_RQ_OOS"},
	{"IACounterDiagErrRQRIRE", IACounterDiagErrRQRIRE, "DCNT_IA_DIAG_ERR_RQ_RIRE"},
	{"IACounterDiagErrRQUDSDPRD", IACounterDiagErrRQUDSDPRD, "DCNT_IA_DIAG_ERR_RQ_UDSDPRD"},
	{"IACounterDiagErrSQRAE", IACounterDiagErrSQRAE, "DCNT_IA_DIAG_ERR_SQ_RAE"},
	{"IACounterDiagErrSQOOS", IACounterDiagErrSQOOS, "DCNT_IA_DIAG_ERR_SQ_OOS"},
	{"IACounterDiagErrSQRIRE", IACounterDiagErrSQRIRE, "DCNT_IA_DIAG_ERR_SQ_RIRE"},
	{"IACounterDiagErrSQRREE", IACounterDiagErrSQRREE, "DCNT_IA_DIAG_ERR_SQ_RREE"},
	{"IACounterDiagErrSQTREE", IACounterDiagErrSQTREE, "DCNT_IA_DIAG_ERR_SQ_TREE"},
	{"IACounterAll", IACounterAll, "DCNT_IA_ALL_COUNTERS"},
	{"EPCounterConnect", EPCounterConnect, "DCNT_EP_CONNECT"},
	{"EPCounterDisconnect", EPCounterDisconnect, "DCNT_EP_DISCONNECT"},
	{"EPCounterPostSend", EPCounterPostSend, "DCNT_EP_POST_SEND"},
	{"EPCounterPostSendData", EPCounterPostSendData, "DCNT_EP_POST_SEND_DATA"},
	{"EPCounterPostSendUD", EPCounterPostSendUD, "DCNT_EP_POST_SEND_UD"},
	{"EPCounterPostSendUDData", EPCounterPostSendUDData, "DCNT_EP_POST_SEND_UD_DATA"},
	{"EPCounterPostRecv", EPCounterPostRecv, "DCNT_EP_POST_RECV"},
	{"EPCounterPostRecvData", EPCounterPostRecvData, "DCNT_EP_POST_RECV_DATA"},
	{"EPCounterPostWrite", EPCounterPostWrite, "DCNT_EP_POST_WRITE"},
	{"EPCounterPostWriteData", EPCounterPostWriteData, "DCNT_EP_POST_WRITE_DATA"},
	{"EPCounterPostWriteImm", EPCounterPostWriteImm, "DCNT_EP_POST_WRITE_IMM"},
	{"EPCounterPostWriteImmData", EPCounterPostWriteImmData, "DCNT_EP_POST_WRITE_IMM_DATA"},
	{"EPCounterPostRead", EPCounterPostRead, "DCNT_EP_POST_READ"},
	{"EPCounterPostReadData", EPCounterPostReadData, "DCNT_EP_POST_READ_DATA"},
	{"EPCounterPostCmpSwap", EPCounterPostCmpSwap, "DCNT_EP_POST_CMP_SWAP"},
	{"EPCounterPostFetchAdd", EPCounterPostFetchAdd, "DCNT_EP_POST_FETCH_ADD"},
	{"EPCounterRecv", EPCounterRecv, "DCNT_EP_RECV"},
	{"EPCounterRecvData", EPCounterRecvData, "DCNT_EP_RECV_DATA"},
	{"EPCounterRecvUD", EPCounterRecvUD, "DCNT_EP_RECV_UD"},
	{"EPCounterRecvUDData", EPCounterRecvUDData, "DCNT_EP_RECV_UD_DATA"},
	{"EPCounterRecvImm", EPCounterRecvImm, "DCNT_EP_RECV_IMM"},
	{"EPCounterRecvImmData", EPCounterRecvImmData, "DCNT_EP_RECV_IMM_DATA"},
	{"EPCounterRecvRDMAImm", EPCounterRecvRDMAImm, "DCNT_EP_RECV_RDMA_IMM"},
	{"EPCounterRecvRDMAImmData", EPCounterRecvRDMAImmData, "DCNT_EP_RECV_RDMA_IMM_DATA"},
	{"EPCounterAll", EPCounterAll, "DCNT_EP_ALL_COUNTERS"},
	{"EVDCounterWait", EVDCounterWait, "DCNT_EVD_WAIT"},
	{"EVDCounterWaitBlocked", EVDCounterWaitBlocked, "DCNT_EVD_WAIT_BLOCKED"},
	{"EVDCounterWaitNotify", EVDCounterWaitNotify, "DCNT_EVD_WAIT_NOTIFY"},
	{"EVDCounterDequeue", EVDCounterDequeue, "DCNT_EVD_DEQUEUE"},
	{"EVDCounterDequeueFound", EVDCounterDequeueFound, "DCNT_EVD_DEQUEUE_FOUND"},
	{"EVDCounterDequeueNotFound", EVDCounterDequeueNotFound, "DCNT_EVD_DEQUEUE_NOT_FOUND"},
	{"EVDCounterDequeuePoll", EVDCounterDequeuePoll, "DCNT_EVD_DEQUEUE_POLL"},
	{"EVDCounterDequeuePollFound", EVDCounterDequeuePollFound, "DCNT_EVD_DEQUEUE_POLL_FOUND"},
	{"EVDCounterConnCallback", EVDCounterConnCallback, "DCNT_EVD_CONN_CALLBACK"},
	{"EVDCounterDTOCallback", EVDCounterDTOCallback, "DCNT_EVD_DTO_CALLBACK"},
	{"EVDCounterAll", EVDCounterAll, "DCNT_EVD_ALL_COUNTERS"},
}

// goOnlyConsts are the exported constants that mirror nothing of the C
// headers. None has a type with a String method.
var goOnlyConsts = map[string]any{
	"DefaultDatConf":    DefaultDatConf,
	"DatConfEnv":        DatConfEnv,
	"DefaultRetryCount": DefaultRetryCount,
	"DefaultACKTimeout": DefaultACKTimeout,
}

// constInt64 returns the value of a constant of any integer type.
func constInt64(t *testing.T, v any) int64 {
	t.Helper()
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return rv.Int()
	case rv.CanUint():
		return int64(rv.Uint())
	}
	require.Failf(t, "not an integer constant", "%T %v", v, v)
	return 0
}

// requireCHeaders fails the test when the DAT 2.0 headers were not
// available when udat/internal/cdat was built.
func requireCHeaders(t *testing.T) map[string]int64 {
	t.Helper()
	if !cdat.CgoEnabled {
		t.Fatal("udat/internal/cdat was built without cgo: the DAT constants " +
			"cannot be checked against the C headers; build with CGO_ENABLED=1 and a C compiler")
	}
	if !cdat.HeadersPresent {
		t.Fatal("DAT 2.0 C headers <dat2/udat.h> not found: install libdapl-dev " +
			"(apt-get install libdapl-dev, or `make deps`), then run the tests again")
	}
	v := cdat.Values()
	require.NotEmpty(t, v, "cdat.Values() returned no C constants")
	return v
}

// TestCHeaderValues checks every Go constant against its C value.
func TestCHeaderValues(t *testing.T) {
	cvals := requireCHeaders(t)
	for _, c := range cConsts {
		t.Run(c.goName, func(t *testing.T) {
			cv, ok := cvals[c.cName]
			require.Truef(t, ok, "C constant %s is not listed in udat/internal/cdat/cdat.go", c.cName)
			v := constInt64(t, c.value)
			assert.Equalf(t, cv, v, "%s = %#x, but C %s = %#x", c.goName, v, c.cName, cv)
		})
	}
}

// TestCHeadersCoverAllConstants checks that cConsts has one entry for each
// exported constant of the package but those of goOnlyConsts, and that
// each entry's value is the constant it names, so a constant cannot be
// added without being checked against C, nor, if its type has a String
// method, without its name (TestCHeaderNames).
func TestCHeadersCoverAllConstants(t *testing.T) {
	listed := make(map[string]bool, len(cConsts))
	for _, c := range cConsts {
		assert.Falsef(t, listed[c.goName], "%s listed twice in cConsts", c.goName)
		listed[c.goName] = true
	}
	for name, v := range goOnlyConsts {
		assert.Falsef(t, listed[name], "%s is listed in cConsts and goOnlyConsts", name)
		_, named := v.(fmt.Stringer)
		assert.Falsef(t, named, "%s is a %T, whose constants have C names: list it in cConsts", name, v)
	}
	declared := map[string]bool{}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() {
						declared[n.Name] = true
						_, goOnly := goOnlyConsts[n.Name]
						assert.Truef(t, listed[n.Name] || goOnly, "%s (%s) has no entry in cConsts", n.Name, file)
					}
				}
			}
		}
	}
	for name := range listed {
		assert.Truef(t, declared[name], "cConsts lists %s, which the package does not declare", name)
	}
	for name := range goOnlyConsts {
		assert.Truef(t, declared[name], "goOnlyConsts lists %s, which the package does not declare", name)
	}

	// Each entry is {"Name", Name, "C_NAME"}.
	f, err := parser.ParseFile(fset, "cheaders_test.go", nil, 0)
	require.NoError(t, err)
	entries := 0
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "cConsts" {
			return true
		}
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			entries++
			fields := e.(*ast.CompositeLit).Elts
			require.Lenf(t, fields, 3, "cConsts entry at %v", fset.Position(e.Pos()))
			lit, ok1 := fields[0].(*ast.BasicLit)
			id, ok2 := fields[1].(*ast.Ident)
			if !assert.Truef(t, ok1 && ok2, "cConsts entry at %v is not {\"Name\", Name, ...}", fset.Position(e.Pos())) {
				continue
			}
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			assert.Equalf(t, name, id.Name, "cConsts entry at %v", fset.Position(e.Pos()))
		}
		return false
	})
	assert.Equal(t, len(cConsts), entries, "cConsts entries read from cheaders_test.go")
}

// returnNotCodes are the Return constants that are not a type or a subtype
// of a code, and so have no name of their own in the tables of return.go:
// String prints a class only as the prefix "DAT_CLASS_WARNING ".
var returnNotCodes = map[string]bool{
	"ClassError": true, "ClassWarning": true, "ClassMask": true, "SubtypeMask": true,
}

// tableName is one name of a table of names.go or return.go, with its
// value of its Go type.
type tableName struct {
	value any
	name  string
}

func enumTable[T ~uint32](names map[T]string) []tableName {
	var s []tableName
	for v, name := range names {
		s = append(s, tableName{v, name})
	}
	return s
}

func flagTable[T ~uint32](names []flagName[T]) []tableName {
	var s []tableName
	for _, n := range names {
		s = append(s, tableName{n.bits, n.name})
	}
	return s
}

// TestCHeaderNames checks the names that the String methods print against
// the C headers. Every constant of cConsts whose type has a String method
// prints the C name of a constant of its own type with its value (a flag
// set: the names of flags of its type that make up its value; a Return:
// Strerror's name of its type or subtype), and every name of the tables
// of names.go and return.go is that of such a constant. Each name is
// looked up in the C headers, and its C value must be the Go value.
func TestCHeaderNames(t *testing.T) {
	cvals := requireCHeaders(t)
	type typedName struct {
		typ  reflect.Type
		name string
	}
	goNamed := make(map[typedName]bool, len(cConsts))
	for _, c := range cConsts {
		goNamed[typedName{reflect.TypeOf(c.value), c.cName}] = true
	}
	// checkName checks that name, printed for a value of type typ, is
	// the C name of a constant of typ, and returns its C value.
	checkName := func(t *testing.T, typ reflect.Type, name string) int64 {
		t.Helper()
		cv, ok := cvals[name]
		assert.Truef(t, ok, "%q is not a C constant listed in udat/internal/cdat/cdat.go", name)
		assert.Truef(t, goNamed[typedName{typ, name}], "%q is the C name of no %v constant of cConsts", name, typ)
		return cv
	}

	for _, c := range cConsts {
		s, ok := c.value.(fmt.Stringer)
		if !ok {
			continue
		}
		t.Run(c.goName, func(t *testing.T) {
			typ, v := reflect.TypeOf(c.value), constInt64(t, c.value)
			if r, ok := c.value.(Return); ok {
				if returnNotCodes[c.goName] {
					return
				}
				major, minor := Strerror(r)
				name := major
				if r.Subtype() == NoSubtype {
					assert.Equalf(t, returnTypeNames[r], name, "%s has no name in returnTypeNames", c.goName)
				} else {
					require.Zerof(t, r&^SubtypeMask, "%s = %#x is neither a type nor a subtype", c.goName, uint32(r))
					name = minor
					assert.Equalf(t, subtypeNames[r], name, "%s has no name in subtypeNames", c.goName)
				}
				assert.Equalf(t, v, checkName(t, typ, name), "%s = %#x prints as %s", c.goName, v, name)
				return
			}
			str := s.String()
			var or int64
			for _, name := range strings.Split(str, "|") {
				or |= checkName(t, typ, name)
			}
			assert.Equalf(t, v, or, "%s = %#x prints as %s", c.goName, v, str)
		})
	}

	tables := map[string][]tableName{
		"completionFlagNames": flagTable(completionFlagNames),
		"dtoOpNames":          enumTable(dtoOpNames),
		"closeFlagNames":      enumTable(closeFlagNames),
		"evdFlagNames":        flagTable(evdFlagNames),
		"memPrivNames":        flagTable(memPrivNames),
		"epStateNames":        enumTable(epStateNames),
		"dtoStatusNames":      enumTable(dtoStatusNames),
		"eventNumberNames":    enumTable(eventNumberNames),
		"handleTypeNames":     enumTable(handleTypeNames),
		"ibExtTypeNames":      enumTable(ibExtTypeNames),
		"ibStatusNames":       enumTable(ibStatusNames),
		"iaCounterNames":      enumTable(iaCounterNames),
		"epCounterNames":      enumTable(epCounterNames),
		"evdCounterNames":     enumTable(evdCounterNames),
		"returnTypeNames":     enumTable(returnTypeNames),
		"subtypeNames":        enumTable(subtypeNames),
	}
	for table, names := range tables {
		t.Run(table, func(t *testing.T) {
			seen := map[string]bool{}
			for _, n := range names {
				if table == "subtypeNames" && n.value == NoSubtype {
					assert.Empty(t, n.name, "a code without subtype has no minor message")
					continue
				}
				assert.Falsef(t, seen[n.name], "%s twice in %s", n.name, table)
				seen[n.name] = true
				v := constInt64(t, n.value)
				assert.Equalf(t, v, checkName(t, reflect.TypeOf(n.value), n.name), "%s names %#x", n.name, v)
			}
		})
	}
}

// cStrerrorSpelling lists the minor messages that the C dat_strerror
// (DAPL 2.1) spells differently from the dat_error.h name. Strerror uses
// the header name.
var cStrerrorSpelling = map[Return]string{
	InvalidStateEPEVDRecv: "DAT_INVALID_STATE_EP_EVD_RCV",
}

// Types and subtypes of dat_error.h that the C dat_strerror (DAPL 2.1) has
// no message for; it fails with DAT_INVALID_PARAMETER on them.
var (
	cStrerrorUnknownTypes = map[Return]bool{
		ConnQualUnavailable: true, ReservedLMR: true, PortInUse: true,
		CommNotSupported: true, ExtensionBase: true,
	}
	cStrerrorUnknownSubtypes = map[Return]bool{
		InvalidStateSRQOperational: true, InvalidStateSRQError: true,
		InvalidStateSRQInUse: true, InvalidStateSRQShutdown: true,
	}
)

// TestCHeaderStrerror compares Strerror with dat_strerror of the C
// reference library for every type combined with every subtype, with and
// without the error class. Codes the C library has no message for are not
// compared, and the list of those must stay as recorded above.
func TestCHeaderStrerror(t *testing.T) {
	requireCHeaders(t)
	if _, _, _, err := cdat.Strerror(0); err != nil {
		t.Skipf("cannot compare with the C dat_strerror: %v", err)
	}
	typesSeen := map[Return]bool{}
	subtypesSeen := map[Return]bool{}
	compared := 0
	for typ := range returnTypeNames {
		for st := range subtypeNames {
			for _, class := range []Return{ClassSuccess, ClassError} {
				code := class | typ | st
				cmajor, cminor, cret, err := cdat.Strerror(uint32(code))
				require.NoError(t, err)
				if cret != uint32(Success) {
					continue
				}
				if alt, ok := cStrerrorSpelling[st]; ok {
					assert.Equal(t, alt, cminor)
					cminor = subtypeNames[st]
				}
				major, minor := Strerror(code)
				assert.Equalf(t, cmajor, major, "major message of %#08x", uint32(code))
				assert.Equalf(t, cminor, minor, "minor message of %#08x", uint32(code))
				typesSeen[typ] = true
				subtypesSeen[st] = true
				compared++
			}
		}
	}
	t.Logf("%d codes compared with the C dat_strerror", compared)
	for typ, name := range returnTypeNames {
		assert.Equalf(t, !cStrerrorUnknownTypes[typ], typesSeen[typ], "C dat_strerror on type %s", name)
	}
	for st, name := range subtypeNames {
		assert.Equalf(t, !cStrerrorUnknownSubtypes[st], subtypesSeen[st], "C dat_strerror on subtype %q (%d)", name, uint32(st))
	}
}

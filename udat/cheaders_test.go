//go:build linux && cgo

package udat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat/internal/cdat"
)

// cConst pairs a Go constant with the C constant (or C expression) of the
// DAT 2.0 headers it mirrors.
type cConst struct {
	goName string
	value  int64
	cName  string
}

// cConsts lists every exported constant of return.go, consts.go and
// epmodify.go, one entry each. TestCHeadersCoverAllConstants keeps it complete.
var cConsts = []cConst{
	{"Success", int64(Success), "DAT_SUCCESS"},
	{"ClassSuccess", int64(ClassSuccess), "DAT_CLASS_SUCCESS"},
	{"ClassError", int64(ClassError), "DAT_CLASS_ERROR"},
	{"ClassWarning", int64(ClassWarning), "DAT_CLASS_WARNING"},
	{"ClassMask", int64(ClassMask), "(DAT_CLASS_ERROR|DAT_CLASS_WARNING)"},
	{"TypeMask", int64(TypeMask), "DAT_TYPE_MASK"},
	{"SubtypeMask", int64(SubtypeMask), "DAT_SUBTYPE_MASK"},
	{"Abort", int64(Abort), "DAT_ABORT"},
	{"ConnQualInUse", int64(ConnQualInUse), "DAT_CONN_QUAL_IN_USE"},
	{"InsufficientResources", int64(InsufficientResources), "DAT_INSUFFICIENT_RESOURCES"},
	{"InternalError", int64(InternalError), "DAT_INTERNAL_ERROR"},
	{"InvalidHandle", int64(InvalidHandle), "DAT_INVALID_HANDLE"},
	{"InvalidParameter", int64(InvalidParameter), "DAT_INVALID_PARAMETER"},
	{"InvalidState", int64(InvalidState), "DAT_INVALID_STATE"},
	{"LengthError", int64(LengthError), "DAT_LENGTH_ERROR"},
	{"ModelNotSupported", int64(ModelNotSupported), "DAT_MODEL_NOT_SUPPORTED"},
	{"ProviderNotFound", int64(ProviderNotFound), "DAT_PROVIDER_NOT_FOUND"},
	{"PrivilegesViolation", int64(PrivilegesViolation), "DAT_PRIVILEGES_VIOLATION"},
	{"ProtectionViolation", int64(ProtectionViolation), "DAT_PROTECTION_VIOLATION"},
	{"QueueEmpty", int64(QueueEmpty), "DAT_QUEUE_EMPTY"},
	{"QueueFull", int64(QueueFull), "DAT_QUEUE_FULL"},
	{"TimeoutExpired", int64(TimeoutExpired), "DAT_TIMEOUT_EXPIRED"},
	{"ProviderAlreadyRegistered", int64(ProviderAlreadyRegistered), "DAT_PROVIDER_ALREADY_REGISTERED"},
	{"ProviderInUse", int64(ProviderInUse), "DAT_PROVIDER_IN_USE"},
	{"InvalidAddress", int64(InvalidAddress), "DAT_INVALID_ADDRESS"},
	{"InterruptedCall", int64(InterruptedCall), "DAT_INTERRUPTED_CALL"},
	{"ConnQualUnavailable", int64(ConnQualUnavailable), "DAT_CONN_QUAL_UNAVAILABLE"},
	{"ReservedLMR", int64(ReservedLMR), "DAT_RESERVED_LMR"},
	{"PortInUse", int64(PortInUse), "DAT_PORT_IN_USE"},
	{"CommNotSupported", int64(CommNotSupported), "DAT_COMM_NOT_SUPPORTED"},
	{"ExtensionBase", int64(ExtensionBase), "DAT_EXTENSION_BASE"},
	{"NotImplemented", int64(NotImplemented), "DAT_NOT_IMPLEMENTED"},
	{"NameNotFound", int64(NameNotFound), "DAT_NAME_NOT_FOUND"},
	{"NoSubtype", int64(NoSubtype), "DAT_NO_SUBTYPE"},
	{"SubInterrupted", int64(SubInterrupted), "DAT_SUB_INTERRUPTED"},
	{"ResourceMemory", int64(ResourceMemory), "DAT_RESOURCE_MEMORY"},
	{"ResourceDevice", int64(ResourceDevice), "DAT_RESOURCE_DEVICE"},
	{"ResourceTEP", int64(ResourceTEP), "DAT_RESOURCE_TEP"},
	{"ResourceTEVD", int64(ResourceTEVD), "DAT_RESOURCE_TEVD"},
	{"ResourceProtectionDomain", int64(ResourceProtectionDomain), "DAT_RESOURCE_PROTECTION_DOMAIN"},
	{"ResourceMemoryRegion", int64(ResourceMemoryRegion), "DAT_RESOURCE_MEMORY_REGION"},
	{"ResourceErrorHandler", int64(ResourceErrorHandler), "DAT_RESOURCE_ERROR_HANDLER"},
	{"ResourceCredits", int64(ResourceCredits), "DAT_RESOURCE_CREDITS"},
	{"ResourceSRQ", int64(ResourceSRQ), "DAT_RESOURCE_SRQ"},
	{"InvalidHandleIA", int64(InvalidHandleIA), "DAT_INVALID_HANDLE_IA"},
	{"InvalidHandleEP", int64(InvalidHandleEP), "DAT_INVALID_HANDLE_EP"},
	{"InvalidHandleLMR", int64(InvalidHandleLMR), "DAT_INVALID_HANDLE_LMR"},
	{"InvalidHandleRMR", int64(InvalidHandleRMR), "DAT_INVALID_HANDLE_RMR"},
	{"InvalidHandlePZ", int64(InvalidHandlePZ), "DAT_INVALID_HANDLE_PZ"},
	{"InvalidHandlePSP", int64(InvalidHandlePSP), "DAT_INVALID_HANDLE_PSP"},
	{"InvalidHandleRSP", int64(InvalidHandleRSP), "DAT_INVALID_HANDLE_RSP"},
	{"InvalidHandleCR", int64(InvalidHandleCR), "DAT_INVALID_HANDLE_CR"},
	{"InvalidHandleCNO", int64(InvalidHandleCNO), "DAT_INVALID_HANDLE_CNO"},
	{"InvalidHandleEVDCR", int64(InvalidHandleEVDCR), "DAT_INVALID_HANDLE_EVD_CR"},
	{"InvalidHandleEVDRequest", int64(InvalidHandleEVDRequest), "DAT_INVALID_HANDLE_EVD_REQUEST"},
	{"InvalidHandleEVDRecv", int64(InvalidHandleEVDRecv), "DAT_INVALID_HANDLE_EVD_RECV"},
	{"InvalidHandleEVDConn", int64(InvalidHandleEVDConn), "DAT_INVALID_HANDLE_EVD_CONN"},
	{"InvalidHandleEVDAsync", int64(InvalidHandleEVDAsync), "DAT_INVALID_HANDLE_EVD_ASYNC"},
	{"InvalidHandleSRQ", int64(InvalidHandleSRQ), "DAT_INVALID_HANDLE_SRQ"},
	{"InvalidHandleCSP", int64(InvalidHandleCSP), "DAT_INVALID_HANDLE_CSP"},
	{"InvalidHandle1", int64(InvalidHandle1), "DAT_INVALID_HANDLE1"},
	{"InvalidHandle2", int64(InvalidHandle2), "DAT_INVALID_HANDLE2"},
	{"InvalidHandle3", int64(InvalidHandle3), "DAT_INVALID_HANDLE3"},
	{"InvalidHandle4", int64(InvalidHandle4), "DAT_INVALID_HANDLE4"},
	{"InvalidHandle5", int64(InvalidHandle5), "DAT_INVALID_HANDLE5"},
	{"InvalidHandle6", int64(InvalidHandle6), "DAT_INVALID_HANDLE6"},
	{"InvalidHandle7", int64(InvalidHandle7), "DAT_INVALID_HANDLE7"},
	{"InvalidHandle8", int64(InvalidHandle8), "DAT_INVALID_HANDLE8"},
	{"InvalidHandle9", int64(InvalidHandle9), "DAT_INVALID_HANDLE9"},
	{"InvalidHandle10", int64(InvalidHandle10), "DAT_INVALID_HANDLE10"},
	{"InvalidArg1", int64(InvalidArg1), "DAT_INVALID_ARG1"},
	{"InvalidArg2", int64(InvalidArg2), "DAT_INVALID_ARG2"},
	{"InvalidArg3", int64(InvalidArg3), "DAT_INVALID_ARG3"},
	{"InvalidArg4", int64(InvalidArg4), "DAT_INVALID_ARG4"},
	{"InvalidArg5", int64(InvalidArg5), "DAT_INVALID_ARG5"},
	{"InvalidArg6", int64(InvalidArg6), "DAT_INVALID_ARG6"},
	{"InvalidArg7", int64(InvalidArg7), "DAT_INVALID_ARG7"},
	{"InvalidArg8", int64(InvalidArg8), "DAT_INVALID_ARG8"},
	{"InvalidArg9", int64(InvalidArg9), "DAT_INVALID_ARG9"},
	{"InvalidArg10", int64(InvalidArg10), "DAT_INVALID_ARG10"},
	{"InvalidStateEPUnconnected", int64(InvalidStateEPUnconnected), "DAT_INVALID_STATE_EP_UNCONNECTED"},
	{"InvalidStateEPActConnPending", int64(InvalidStateEPActConnPending), "DAT_INVALID_STATE_EP_ACTCONNPENDING"},
	{"InvalidStateEPPassConnPending", int64(InvalidStateEPPassConnPending), "DAT_INVALID_STATE_EP_PASSCONNPENDING"},
	{"InvalidStateEPTentConnPending", int64(InvalidStateEPTentConnPending), "DAT_INVALID_STATE_EP_TENTCONNPENDING"},
	{"InvalidStateEPConnected", int64(InvalidStateEPConnected), "DAT_INVALID_STATE_EP_CONNECTED"},
	{"InvalidStateEPDisconnected", int64(InvalidStateEPDisconnected), "DAT_INVALID_STATE_EP_DISCONNECTED"},
	{"InvalidStateEPReserved", int64(InvalidStateEPReserved), "DAT_INVALID_STATE_EP_RESERVED"},
	{"InvalidStateEPComplPending", int64(InvalidStateEPComplPending), "DAT_INVALID_STATE_EP_COMPLPENDING"},
	{"InvalidStateEPDiscPending", int64(InvalidStateEPDiscPending), "DAT_INVALID_STATE_EP_DISCPENDING"},
	{"InvalidStateEPProviderControl", int64(InvalidStateEPProviderControl), "DAT_INVALID_STATE_EP_PROVIDERCONTROL"},
	{"InvalidStateEPNotReady", int64(InvalidStateEPNotReady), "DAT_INVALID_STATE_EP_NOTREADY"},
	{"InvalidStateEPRecvWatermark", int64(InvalidStateEPRecvWatermark), "DAT_INVALID_STATE_EP_RECV_WATERMARK"},
	{"InvalidStateEPPZ", int64(InvalidStateEPPZ), "DAT_INVALID_STATE_EP_PZ"},
	{"InvalidStateEPEVDRequest", int64(InvalidStateEPEVDRequest), "DAT_INVALID_STATE_EP_EVD_REQUEST"},
	{"InvalidStateEPEVDRecv", int64(InvalidStateEPEVDRecv), "DAT_INVALID_STATE_EP_EVD_RECV"},
	{"InvalidStateEPEVDConnect", int64(InvalidStateEPEVDConnect), "DAT_INVALID_STATE_EP_EVD_CONNECT"},
	{"InvalidStateEPUnconfigured", int64(InvalidStateEPUnconfigured), "DAT_INVALID_STATE_EP_UNCONFIGURED"},
	{"InvalidStateEPUnconfReserved", int64(InvalidStateEPUnconfReserved), "DAT_INVALID_STATE_EP_UNCONFRESERVED"},
	{"InvalidStateEPUnconfPassive", int64(InvalidStateEPUnconfPassive), "DAT_INVALID_STATE_EP_UNCONFPASSIVE"},
	{"InvalidStateEPUnconfTentative", int64(InvalidStateEPUnconfTentative), "DAT_INVALID_STATE_EP_UNCONFTENTATIVE"},
	{"InvalidStateCNOInUse", int64(InvalidStateCNOInUse), "DAT_INVALID_STATE_CNO_IN_USE"},
	{"InvalidStateCNODead", int64(InvalidStateCNODead), "DAT_INVALID_STATE_CNO_DEAD"},
	{"InvalidStateEVDOpen", int64(InvalidStateEVDOpen), "DAT_INVALID_STATE_EVD_OPEN"},
	{"InvalidStateEVDEnabled", int64(InvalidStateEVDEnabled), "DAT_INVALID_STATE_EVD_ENABLED"},
	{"InvalidStateEVDDisabled", int64(InvalidStateEVDDisabled), "DAT_INVALID_STATE_EVD_DISABLED"},
	{"InvalidStateEVDWaitable", int64(InvalidStateEVDWaitable), "DAT_INVALID_STATE_EVD_WAITABLE"},
	{"InvalidStateEVDUnwaitable", int64(InvalidStateEVDUnwaitable), "DAT_INVALID_STATE_EVD_UNWAITABLE"},
	{"InvalidStateEVDInUse", int64(InvalidStateEVDInUse), "DAT_INVALID_STATE_EVD_IN_USE"},
	{"InvalidStateEVDConfigNotify", int64(InvalidStateEVDConfigNotify), "DAT_INVALID_STATE_EVD_CONFIG_NOTIFY"},
	{"InvalidStateEVDConfigSolicited", int64(InvalidStateEVDConfigSolicited), "DAT_INVALID_STATE_EVD_CONFIG_SOLICITED"},
	{"InvalidStateEVDConfigThreshold", int64(InvalidStateEVDConfigThreshold), "DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD"},
	{"InvalidStateEVDWaiter", int64(InvalidStateEVDWaiter), "DAT_INVALID_STATE_EVD_WAITER"},
	{"InvalidStateEVDAsync", int64(InvalidStateEVDAsync), "DAT_INVALID_STATE_EVD_ASYNC"},
	{"InvalidStateIAInUse", int64(InvalidStateIAInUse), "DAT_INVALID_STATE_IA_IN_USE"},
	{"InvalidStateLMRInUse", int64(InvalidStateLMRInUse), "DAT_INVALID_STATE_LMR_IN_USE"},
	{"InvalidStateLMRFree", int64(InvalidStateLMRFree), "DAT_INVALID_STATE_LMR_FREE"},
	{"InvalidStatePZInUse", int64(InvalidStatePZInUse), "DAT_INVALID_STATE_PZ_IN_USE"},
	{"InvalidStatePZFree", int64(InvalidStatePZFree), "DAT_INVALID_STATE_PZ_FREE"},
	{"InvalidStateSRQOperational", int64(InvalidStateSRQOperational), "DAT_INVALID_STATE_SRQ_OPERATIONAL"},
	{"InvalidStateSRQError", int64(InvalidStateSRQError), "DAT_INVALID_STATE_SRQ_ERROR"},
	{"InvalidStateSRQInUse", int64(InvalidStateSRQInUse), "DAT_INVALID_STATE_SRQ_IN_USE"},
	{"InvalidStateSRQShutdown", int64(InvalidStateSRQShutdown), "DAT_INVALID_STATE_SRQ_SHUTDOWN"},
	{"PrivilegesRead", int64(PrivilegesRead), "DAT_PRIVILEGES_READ"},
	{"PrivilegesWrite", int64(PrivilegesWrite), "DAT_PRIVILEGES_WRITE"},
	{"PrivilegesRDMARead", int64(PrivilegesRDMARead), "DAT_PRIVILEGES_RDMA_READ"},
	{"PrivilegesRDMAWrite", int64(PrivilegesRDMAWrite), "DAT_PRIVILEGES_RDMA_WRITE"},
	{"ProtectionRead", int64(ProtectionRead), "DAT_PROTECTION_READ"},
	{"ProtectionWrite", int64(ProtectionWrite), "DAT_PROTECTION_WRITE"},
	{"ProtectionRDMARead", int64(ProtectionRDMARead), "DAT_PROTECTION_RDMA_READ"},
	{"ProtectionRDMAWrite", int64(ProtectionRDMAWrite), "DAT_PROTECTION_RDMA_WRITE"},
	{"InvalidAddressUnsupported", int64(InvalidAddressUnsupported), "DAT_INVALID_ADDRESS_UNSUPPORTED"},
	{"InvalidAddressUnreachable", int64(InvalidAddressUnreachable), "DAT_INVALID_ADDRESS_UNREACHABLE"},
	{"InvalidAddressMalformed", int64(InvalidAddressMalformed), "DAT_INVALID_ADDRESS_MALFORMED"},
	{"NameNotRegistered", int64(NameNotRegistered), "DAT_NAME_NOT_REGISTERED"},
	{"MajorNotFound", int64(MajorNotFound), "DAT_MAJOR_NOT_FOUND"},
	{"MinorNotFound", int64(MinorNotFound), "DAT_MINOR_NOT_FOUND"},
	{"ThreadSafetyNotFound", int64(ThreadSafetyNotFound), "DAT_THREAD_SAFETY_NOT_FOUND"},
	{"VersionMajor", int64(VersionMajor), "DAT_VERSION_MAJOR"},
	{"VersionMinor", int64(VersionMinor), "DAT_VERSION_MINOR"},
	{"NameMaxLength", int64(NameMaxLength), "DAT_NAME_MAX_LENGTH"},
	{"OptimalAlignment", int64(OptimalAlignment), "DAT_OPTIMAL_ALIGNMENT"},
	{"LMRCookieSize", int64(LMRCookieSize), "DAT_LMR_COOKIE_SIZE"},
	{"WatermarkInfinite", int64(WatermarkInfinite), "DAT_WATERMARK_INFINITE"},
	{"HWDefault", int64(HWDefault), "DAT_HW_DEFAULT"},
	{"SRQLWDefault", int64(SRQLWDefault), "DAT_SRQ_LW_DEFAULT"},
	{"ValueUnknown", int64(ValueUnknown), "DAT_VALUE_UNKNOWN"},
	{"TimeoutInfinite", int64(TimeoutInfinite), "DAT_TIMEOUT_INFINITE"},
	{"CompletionDefault", int64(CompletionDefault), "DAT_COMPLETION_DEFAULT_FLAG"},
	{"CompletionSuppress", int64(CompletionSuppress), "DAT_COMPLETION_SUPPRESS_FLAG"},
	{"CompletionSolicitedWait", int64(CompletionSolicitedWait), "DAT_COMPLETION_SOLICITED_WAIT_FLAG"},
	{"CompletionUnsignalled", int64(CompletionUnsignalled), "DAT_COMPLETION_UNSIGNALLED_FLAG"},
	{"CompletionBarrierFence", int64(CompletionBarrierFence), "DAT_COMPLETION_BARRIER_FENCE_FLAG"},
	{"CompletionEVDThreshold", int64(CompletionEVDThreshold), "DAT_COMPLETION_EVD_THRESHOLD_FLAG"},
	{"CompletionLMRInvalidateFence", int64(CompletionLMRInvalidateFence), "DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG"},
	{"DTOSend", int64(DTOSend), "DAT_DTO_SEND"},
	{"DTORDMAWrite", int64(DTORDMAWrite), "DAT_DTO_RDMA_WRITE"},
	{"DTORDMARead", int64(DTORDMARead), "DAT_DTO_RDMA_READ"},
	{"DTOReceive", int64(DTOReceive), "DAT_DTO_RECEIVE"},
	{"DTOReceiveWithInvalidate", int64(DTOReceiveWithInvalidate), "DAT_DTO_RECEIVE_WITH_INVALIDATE"},
	{"DTOBindMW", int64(DTOBindMW), "DAT_DTO_BIND_MW"},
	{"DTOLMRFMR", int64(DTOLMRFMR), "DAT_DTO_LMR_FMR"},
	{"DTOLMRInvalidate", int64(DTOLMRInvalidate), "DAT_DTO_LMR_INVALIDATE"},
	{"DTOExtensionBase", int64(DTOExtensionBase), "DAT_DTO_EXTENSION_BASE"},
	{"QoSBestEffort", int64(QoSBestEffort), "DAT_QOS_BEST_EFFORT"},
	{"QoSHighThroughput", int64(QoSHighThroughput), "DAT_QOS_HIGH_THROUGHPUT"},
	{"QoSLowLatency", int64(QoSLowLatency), "DAT_QOS_LOW_LATENCY"},
	{"QoSEconomy", int64(QoSEconomy), "DAT_QOS_ECONOMY"},
	{"QoSPremium", int64(QoSPremium), "DAT_QOS_PREMIUM"},
	{"ConnectDefault", int64(ConnectDefault), "DAT_CONNECT_DEFAULT_FLAG"},
	{"ConnectMultipathRequested", int64(ConnectMultipathRequested), "DAT_CONNECT_MULTIPATH_REQUESTED_FLAG"},
	{"ConnectMultipathRequired", int64(ConnectMultipathRequired), "DAT_CONNECT_MULTIPATH_REQUIRED_FLAG"},
	{"CloseAbruptFlag", int64(CloseAbruptFlag), "DAT_CLOSE_ABRUPT_FLAG"},
	{"CloseGracefulFlag", int64(CloseGracefulFlag), "DAT_CLOSE_GRACEFUL_FLAG"},
	{"CloseDefault", int64(CloseDefault), "DAT_CLOSE_DEFAULT"},
	{"EVDSoftwareFlag", int64(EVDSoftwareFlag), "DAT_EVD_SOFTWARE_FLAG"},
	{"EVDCRFlag", int64(EVDCRFlag), "DAT_EVD_CR_FLAG"},
	{"EVDDTOFlag", int64(EVDDTOFlag), "DAT_EVD_DTO_FLAG"},
	{"EVDConnectionFlag", int64(EVDConnectionFlag), "DAT_EVD_CONNECTION_FLAG"},
	{"EVDRMRBindFlag", int64(EVDRMRBindFlag), "DAT_EVD_RMR_BIND_FLAG"},
	{"EVDAsyncFlag", int64(EVDAsyncFlag), "DAT_EVD_ASYNC_FLAG"},
	{"EVDDefaultFlag", int64(EVDDefaultFlag), "DAT_EVD_DEFAULT_FLAG"},
	{"EVDExtensionBase", int64(EVDExtensionBase), "DAT_EVD_EXTENSION_BASE"},
	{"PSPConsumerFlag", int64(PSPConsumerFlag), "DAT_PSP_CONSUMER_FLAG"},
	{"PSPProviderFlag", int64(PSPProviderFlag), "DAT_PSP_PROVIDER_FLAG"},
	{"MemPrivNone", int64(MemPrivNone), "DAT_MEM_PRIV_NONE_FLAG"},
	{"MemPrivLocalRead", int64(MemPrivLocalRead), "DAT_MEM_PRIV_LOCAL_READ_FLAG"},
	{"MemPrivRemoteRead", int64(MemPrivRemoteRead), "DAT_MEM_PRIV_REMOTE_READ_FLAG"},
	{"MemPrivLocalWrite", int64(MemPrivLocalWrite), "DAT_MEM_PRIV_LOCAL_WRITE_FLAG"},
	{"MemPrivRemoteWrite", int64(MemPrivRemoteWrite), "DAT_MEM_PRIV_REMOTE_WRITE_FLAG"},
	{"MemPrivAll", int64(MemPrivAll), "DAT_MEM_PRIV_ALL_FLAG"},
	{"MemPrivExtensionBase", int64(MemPrivExtensionBase), "DAT_MEM_PRIV_EXTENSION_BASE"},
	{"MemPrivRead", int64(MemPrivRead), "DAT_MEM_PRIV_READ_FLAG"},
	{"MemPrivWrite", int64(MemPrivWrite), "DAT_MEM_PRIV_WRITE_FLAG"},
	{"VATypeVA", int64(VATypeVA), "DAT_VA_TYPE_VA"},
	{"VATypeZB", int64(VATypeZB), "DAT_VA_TYPE_ZB"},
	{"RMRScopeEP", int64(RMRScopeEP), "DAT_RMR_SCOPE_EP"},
	{"RMRScopePZ", int64(RMRScopePZ), "DAT_RMR_SCOPE_PZ"},
	{"RMRScopeAny", int64(RMRScopeAny), "DAT_RMR_SCOPE_ANY"},
	{"MemTypeVirtual", int64(MemTypeVirtual), "DAT_MEM_TYPE_VIRTUAL"},
	{"MemTypeLMR", int64(MemTypeLMR), "DAT_MEM_TYPE_LMR"},
	{"MemTypeSharedVirtual", int64(MemTypeSharedVirtual), "DAT_MEM_TYPE_SHARED_VIRTUAL"},
	{"IOVConsumer", int64(IOVConsumer), "DAT_IOV_CONSUMER"},
	{"IOVProviderNoMod", int64(IOVProviderNoMod), "DAT_IOV_PROVIDER_NOMOD"},
	{"IOVProviderMod", int64(IOVProviderMod), "DAT_IOV_PROVIDER_MOD"},
	{"PSPCreatesEPNever", int64(PSPCreatesEPNever), "DAT_PSP_CREATES_EP_NEVER"},
	{"PSPCreatesEPIfAsked", int64(PSPCreatesEPIfAsked), "DAT_PSP_CREATES_EP_IFASKED"},
	{"PSPCreatesEPAlways", int64(PSPCreatesEPAlways), "DAT_PSP_CREATES_EP_ALWAYS"},
	{"PZUnique", int64(PZUnique), "DAT_PZ_UNIQUE"},
	{"PZShareable", int64(PZShareable), "DAT_PZ_SHAREABLE"},
	{"ExtensionNone", int64(ExtensionNone), "DAT_EXTENSION_NONE"},
	{"ExtensionIB", int64(ExtensionIB), "DAT_EXTENSION_IB"},
	{"ExtensionIW", int64(ExtensionIW), "DAT_EXTENSION_IW"},
	{"ServiceTypeRC", int64(ServiceTypeRC), "DAT_SERVICE_TYPE_RC"},
	{"ServiceTypeExtensionBase", int64(ServiceTypeExtensionBase), "DAT_SERVICE_TYPE_EXTENSION_BASE"},
	{"EPStateUnconnected", int64(EPStateUnconnected), "DAT_EP_STATE_UNCONNECTED"},
	{"EPStateUnconfiguredUnconnected", int64(EPStateUnconfiguredUnconnected), "DAT_EP_STATE_UNCONFIGURED_UNCONNECTED"},
	{"EPStateReserved", int64(EPStateReserved), "DAT_EP_STATE_RESERVED"},
	{"EPStateUnconfiguredReserved", int64(EPStateUnconfiguredReserved), "DAT_EP_STATE_UNCONFIGURED_RESERVED"},
	{"EPStatePassiveConnectionPending", int64(EPStatePassiveConnectionPending), "DAT_EP_STATE_PASSIVE_CONNECTION_PENDING"},
	{"EPStateUnconfiguredPassive", int64(EPStateUnconfiguredPassive), "DAT_EP_STATE_UNCONFIGURED_PASSIVE"},
	{"EPStateActiveConnectionPending", int64(EPStateActiveConnectionPending), "DAT_EP_STATE_ACTIVE_CONNECTION_PENDING"},
	{"EPStateTentativeConnectionPending", int64(EPStateTentativeConnectionPending), "DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING"},
	{"EPStateUnconfiguredTentative", int64(EPStateUnconfiguredTentative), "DAT_EP_STATE_UNCONFIGURED_TENTATIVE"},
	{"EPStateConnected", int64(EPStateConnected), "DAT_EP_STATE_CONNECTED"},
	{"EPStateDisconnectPending", int64(EPStateDisconnectPending), "DAT_EP_STATE_DISCONNECT_PENDING"},
	{"EPStateDisconnected", int64(EPStateDisconnected), "DAT_EP_STATE_DISCONNECTED"},
	{"EPStateCompletionPending", int64(EPStateCompletionPending), "DAT_EP_STATE_COMPLETION_PENDING"},
	{"EPStateConnectedSinglePath", int64(EPStateConnectedSinglePath), "DAT_EP_STATE_CONNECTED_SINGLE_PATH"},
	{"EPStateConnectedMultiPath", int64(EPStateConnectedMultiPath), "DAT_EP_STATE_CONNECTED_MULTI_PATH"},
	{"EPStateError", int64(EPStateError), "DAT_EP_STATE_ERROR"},
	{"SRQStateError", int64(SRQStateError), "DAT_SRQ_STATE_ERROR"},
	{"SRQStateOperational", int64(SRQStateOperational), "DAT_SRQ_STATE_OPERATIONAL"},
	{"SRQStateShutdown", int64(SRQStateShutdown), "DAT_SRQ_STATE_SHUTDOWN"},
	{"EVDStateEnabled", int64(EVDStateEnabled), "DAT_EVD_STATE_ENABLED"},
	{"EVDStateDisabled", int64(EVDStateDisabled), "DAT_EVD_STATE_DISABLED"},
	{"EVDStateWaitable", int64(EVDStateWaitable), "DAT_EVD_STATE_WAITABLE"},
	{"EVDStateUnwaitable", int64(EVDStateUnwaitable), "DAT_EVD_STATE_UNWAITABLE"},
	{"EVDStateConfigNotify", int64(EVDStateConfigNotify), "DAT_EVD_STATE_CONFIG_NOTIFY"},
	{"EVDStateConfigSolicited", int64(EVDStateConfigSolicited), "DAT_EVD_STATE_CONFIG_SOLICITED"},
	{"EVDStateConfigThreshold", int64(EVDStateConfigThreshold), "DAT_EVD_STATE_CONFIG_THRESHOLD"},
	{"ProxyTypeNone", int64(ProxyTypeNone), "DAT_PROXY_TYPE_NONE"},
	{"ProxyTypeAgent", int64(ProxyTypeAgent), "DAT_PROXY_TYPE_AGENT"},
	{"ProxyTypeFD", int64(ProxyTypeFD), "DAT_PROXY_TYPE_FD"},
	{"DTOSuccess", int64(DTOSuccess), "DAT_DTO_SUCCESS"},
	{"DTOErrFlushed", int64(DTOErrFlushed), "DAT_DTO_ERR_FLUSHED"},
	{"DTOErrLocalLength", int64(DTOErrLocalLength), "DAT_DTO_ERR_LOCAL_LENGTH"},
	{"DTOErrLocalEP", int64(DTOErrLocalEP), "DAT_DTO_ERR_LOCAL_EP"},
	{"DTOErrLocalProtection", int64(DTOErrLocalProtection), "DAT_DTO_ERR_LOCAL_PROTECTION"},
	{"DTOErrBadResponse", int64(DTOErrBadResponse), "DAT_DTO_ERR_BAD_RESPONSE"},
	{"DTOErrRemoteAccess", int64(DTOErrRemoteAccess), "DAT_DTO_ERR_REMOTE_ACCESS"},
	{"DTOErrRemoteResponder", int64(DTOErrRemoteResponder), "DAT_DTO_ERR_REMOTE_RESPONDER"},
	{"DTOErrTransport", int64(DTOErrTransport), "DAT_DTO_ERR_TRANSPORT"},
	{"DTOErrReceiverNotReady", int64(DTOErrReceiverNotReady), "DAT_DTO_ERR_RECEIVER_NOT_READY"},
	{"DTOErrPartialPacket", int64(DTOErrPartialPacket), "DAT_DTO_ERR_PARTIAL_PACKET"},
	{"DTOErrRMROperationFailed", int64(DTOErrRMROperationFailed), "DAT_RMR_OPERATION_FAILED"},
	{"DTOErrLocalMMError", int64(DTOErrLocalMMError), "DAT_DTO_ERR_LOCAL_MM_ERROR"},
	{"DTOLengthError", int64(DTOLengthError), "DAT_DTO_LENGTH_ERROR"},
	{"DTOFailure", int64(DTOFailure), "DAT_DTO_FAILURE"},
	{"RMRBindSuccess", int64(RMRBindSuccess), "DAT_RMR_BIND_SUCCESS"},
	{"RMRBindFailure", int64(RMRBindFailure), "DAT_RMR_BIND_FAILURE"},
	{"EventDTOCompletion", int64(EventDTOCompletion), "DAT_DTO_COMPLETION_EVENT"},
	{"EventRMRBindCompletion", int64(EventRMRBindCompletion), "DAT_RMR_BIND_COMPLETION_EVENT"},
	{"EventConnectionRequest", int64(EventConnectionRequest), "DAT_CONNECTION_REQUEST_EVENT"},
	{"EventConnectionEstablished", int64(EventConnectionEstablished), "DAT_CONNECTION_EVENT_ESTABLISHED"},
	{"EventConnectionPeerRejected", int64(EventConnectionPeerRejected), "DAT_CONNECTION_EVENT_PEER_REJECTED"},
	{"EventConnectionNonPeerRejected", int64(EventConnectionNonPeerRejected), "DAT_CONNECTION_EVENT_NON_PEER_REJECTED"},
	{"EventConnectionAcceptCompletionError", int64(EventConnectionAcceptCompletionError), "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR"},
	{"EventConnectionDisconnected", int64(EventConnectionDisconnected), "DAT_CONNECTION_EVENT_DISCONNECTED"},
	{"EventConnectionBroken", int64(EventConnectionBroken), "DAT_CONNECTION_EVENT_BROKEN"},
	{"EventConnectionTimedOut", int64(EventConnectionTimedOut), "DAT_CONNECTION_EVENT_TIMED_OUT"},
	{"EventConnectionUnreachable", int64(EventConnectionUnreachable), "DAT_CONNECTION_EVENT_UNREACHABLE"},
	{"EventAsyncErrorEVDOverflow", int64(EventAsyncErrorEVDOverflow), "DAT_ASYNC_ERROR_EVD_OVERFLOW"},
	{"EventAsyncErrorIACatastrophic", int64(EventAsyncErrorIACatastrophic), "DAT_ASYNC_ERROR_IA_CATASTROPHIC"},
	{"EventAsyncErrorEPBroken", int64(EventAsyncErrorEPBroken), "DAT_ASYNC_ERROR_EP_BROKEN"},
	{"EventAsyncErrorTimedOut", int64(EventAsyncErrorTimedOut), "DAT_ASYNC_ERROR_TIMED_OUT"},
	{"EventAsyncErrorProviderInternalError", int64(EventAsyncErrorProviderInternalError), "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR"},
	{"EventHADownTo1", int64(EventHADownTo1), "DAT_HA_DOWN_TO_1"},
	{"EventHAUpToMultiPath", int64(EventHAUpToMultiPath), "DAT_HA_UP_TO_MULTI_PATH"},
	{"EventSoftware", int64(EventSoftware), "DAT_SOFTWARE_EVENT"},
	{"EventExtension", int64(EventExtension), "DAT_EXTENSION_EVENT"},
	{"EventIBExtensionRangeBase", int64(EventIBExtensionRangeBase), "DAT_IB_EXTENSION_RANGE_BASE"},
	{"EventIWExtensionRangeBase", int64(EventIWExtensionRangeBase), "DAT_IW_EXTENSION_RANGE_BASE"},
	{"IACatastrophicError", int64(IACatastrophicError), "DAT_IA_CATASTROPHIC_ERROR"},
	{"IAOtherError", int64(IAOtherError), "DAT_IA_OTHER_ERROR"},
	{"EPTransferToError", int64(EPTransferToError), "DAT_EP_TRANSFER_TO_ERROR"},
	{"EPOtherError", int64(EPOtherError), "DAT_EP_OTHER_ERROR"},
	{"SRQSoftHighWatermarkEvent", int64(SRQSoftHighWatermarkEvent), "DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT"},
	{"EVDOverflowError", int64(EVDOverflowError), "DAT_EVD_OVERFLOW_ERROR"},
	{"EVDOtherError", int64(EVDOtherError), "DAT_EVD_OTHER_ERROR"},
	{"SRQTransferToError", int64(SRQTransferToError), "DAT_SRQ_TRANSFER_TO_ERROR"},
	{"SRQOtherError", int64(SRQOtherError), "DAT_SRQ_OTHER_ERROR"},
	{"SRQLowWatermarkEvent", int64(SRQLowWatermarkEvent), "DAT_SRQ_LOW_WATERMARK_EVENT"},
	{"LMROtherError", int64(LMROtherError), "DAT_LMR_OTHER_ERROR"},
	{"RMROtherError", int64(RMROtherError), "DAT_RMR_OTHER_ERROR"},
	{"PZOtherError", int64(PZOtherError), "DAT_PZ_OTHER_ERROR"},
	{"HandleTypeCR", int64(HandleTypeCR), "DAT_HANDLE_TYPE_CR"},
	{"HandleTypeEP", int64(HandleTypeEP), "DAT_HANDLE_TYPE_EP"},
	{"HandleTypeEVD", int64(HandleTypeEVD), "DAT_HANDLE_TYPE_EVD"},
	{"HandleTypeIA", int64(HandleTypeIA), "DAT_HANDLE_TYPE_IA"},
	{"HandleTypeLMR", int64(HandleTypeLMR), "DAT_HANDLE_TYPE_LMR"},
	{"HandleTypePSP", int64(HandleTypePSP), "DAT_HANDLE_TYPE_PSP"},
	{"HandleTypePZ", int64(HandleTypePZ), "DAT_HANDLE_TYPE_PZ"},
	{"HandleTypeRMR", int64(HandleTypeRMR), "DAT_HANDLE_TYPE_RMR"},
	{"HandleTypeRSP", int64(HandleTypeRSP), "DAT_HANDLE_TYPE_RSP"},
	{"HandleTypeCNO", int64(HandleTypeCNO), "DAT_HANDLE_TYPE_CNO"},
	{"HandleTypeSRQ", int64(HandleTypeSRQ), "DAT_HANDLE_TYPE_SRQ"},
	{"HandleTypeCSP", int64(HandleTypeCSP), "DAT_HANDLE_TYPE_CSP"},
	{"HandleTypeExtensionBase", int64(HandleTypeExtensionBase), "DAT_HANDLE_TYPE_EXTENSION_BASE"},
	// ext_ib.go
	{"IBExtensionVersion", int64(IBExtensionVersion), "DAT_IB_EXTENSION_VERSION"},
	{"EventIBDTO", int64(EventIBDTO), "DAT_IB_DTO_EVENT"},
	{"DTOIBRDMAWriteImmed", int64(DTOIBRDMAWriteImmed), "DAT_IB_DTO_RDMA_WRITE_IMMED"},
	{"DTOIBRecvImmed", int64(DTOIBRecvImmed), "DAT_IB_DTO_RECV_IMMED"},
	{"DTOIBFetchAdd", int64(DTOIBFetchAdd), "DAT_IB_DTO_FETCH_ADD"},
	{"DTOIBCmpSwap", int64(DTOIBCmpSwap), "DAT_IB_DTO_CMP_SWAP"},
	{"DTOIBRecvMsgImmed", int64(DTOIBRecvMsgImmed), "DAT_IB_DTO_RECV_MSG_IMMED"},
	{"MemPrivIBRemoteAtomic", int64(MemPrivIBRemoteAtomic), "DAT_IB_MEM_PRIV_REMOTE_ATOMIC"},
	{"IBFetchAndAdd", int64(IBFetchAndAdd), "DAT_IB_FETCH_AND_ADD"},
	{"IBCmpAndSwap", int64(IBCmpAndSwap), "DAT_IB_CMP_AND_SWAP"},
	{"IBRDMAWriteImmed", int64(IBRDMAWriteImmed), "DAT_IB_RDMA_WRITE_IMMED"},
	{"IBRDMAWriteImmedData", int64(IBRDMAWriteImmedData), "DAT_IB_RDMA_WRITE_IMMED_DATA"},
	{"IBRecvImmedData", int64(IBRecvImmedData), "DAT_IB_RECV_IMMED_DATA"},
	{"IBOpSuccess", int64(IBOpSuccess), "DAT_OP_SUCCESS"},
	{"IBOpErr", int64(IBOpErr), "DAT_IB_OP_ERR"},
	{"EPFieldIAHandle", int64(EPFieldIAHandle), "DAT_EP_FIELD_IA_HANDLE"},
	{"EPFieldEPState", int64(EPFieldEPState), "DAT_EP_FIELD_EP_STATE"},
	{"EPFieldComm", int64(EPFieldComm), "DAT_EP_FIELD_COMM"},
	{"EPFieldLocalIAAddress", int64(EPFieldLocalIAAddress), "DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR"},
	{"EPFieldLocalPortQual", int64(EPFieldLocalPortQual), "DAT_EP_FIELD_LOCAL_PORT_QUAL"},
	{"EPFieldRemoteIAAddress", int64(EPFieldRemoteIAAddress), "DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR"},
	{"EPFieldRemotePortQual", int64(EPFieldRemotePortQual), "DAT_EP_FIELD_REMOTE_PORT_QUAL"},
	{"EPFieldPZ", int64(EPFieldPZ), "DAT_EP_FIELD_PZ_HANDLE"},
	{"EPFieldRecvEVD", int64(EPFieldRecvEVD), "DAT_EP_FIELD_RECV_EVD_HANDLE"},
	{"EPFieldRequestEVD", int64(EPFieldRequestEVD), "DAT_EP_FIELD_REQUEST_EVD_HANDLE"},
	{"EPFieldConnectEVD", int64(EPFieldConnectEVD), "DAT_EP_FIELD_CONNECT_EVD_HANDLE"},
	{"EPFieldSRQ", int64(EPFieldSRQ), "DAT_EP_FIELD_SRQ_HANDLE"},
	{"EPFieldServiceType", int64(EPFieldServiceType), "DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE"},
	{"EPFieldMaxMessageSize", int64(EPFieldMaxMessageSize), "DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE"},
	{"EPFieldMaxRDMASize", int64(EPFieldMaxRDMASize), "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE"},
	{"EPFieldQoS", int64(EPFieldQoS), "DAT_EP_FIELD_EP_ATTR_QOS"},
	{"EPFieldRecvCompletionFlags", int64(EPFieldRecvCompletionFlags), "DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS"},
	{"EPFieldRequestCompletionFlag", int64(EPFieldRequestCompletionFlag), "DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS"},
	{"EPFieldMaxRecvDTOs", int64(EPFieldMaxRecvDTOs), "DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS"},
	{"EPFieldMaxRequestDTOs", int64(EPFieldMaxRequestDTOs), "DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS"},
	{"EPFieldMaxRecvIOV", int64(EPFieldMaxRecvIOV), "DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV"},
	{"EPFieldMaxRequestIOV", int64(EPFieldMaxRequestIOV), "DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV"},
	{"EPFieldMaxRDMAReadIn", int64(EPFieldMaxRDMAReadIn), "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN"},
	{"EPFieldMaxRDMAReadOut", int64(EPFieldMaxRDMAReadOut), "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT"},
	{"EPFieldSRQSoftHW", int64(EPFieldSRQSoftHW), "DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW"},
	{"EPFieldMaxRDMAReadIOV", int64(EPFieldMaxRDMAReadIOV), "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV"},
	{"EPFieldMaxRDMAWriteIOV", int64(EPFieldMaxRDMAWriteIOV), "DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV"},
	{"EPFieldNumTransportAttr", int64(EPFieldNumTransportAttr), "DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR"},
	{"EPFieldTransportSpecificAttr", int64(EPFieldTransportSpecificAttr), "DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR"},
	{"EPFieldNumProviderAttr", int64(EPFieldNumProviderAttr), "DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR"},
	{"EPFieldProviderSpecificAttr", int64(EPFieldProviderSpecificAttr), "DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR"},
	{"EPFieldEPAttrAll", int64(EPFieldEPAttrAll), "DAT_EP_FIELD_EP_ATTR_ALL"},
	{"EPFieldAll", int64(EPFieldAll), "DAT_EP_FIELD_ALL"},
	// ud.go
	{"ServiceTypeIBUD", int64(ServiceTypeIBUD), "DAT_IB_SERVICE_TYPE_UD"},
	{"EventIBUDConnectionRequest", int64(EventIBUDConnectionRequest), "DAT_IB_UD_CONNECTION_REQUEST_EVENT"},
	{"EventIBUDConnectionEstablished", int64(EventIBUDConnectionEstablished), "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED"},
	{"EventIBUDConnectionReject", int64(EventIBUDConnectionReject), "DAT_IB_UD_CONNECTION_REJECT_EVENT"},
	{"EventIBUDConnectionError", int64(EventIBUDConnectionError), "DAT_IB_UD_CONNECTION_ERROR_EVENT"},
	{"DTOIBSendUD", int64(DTOIBSendUD), "DAT_IB_DTO_SEND_UD"},
	{"DTOIBRecvUD", int64(DTOIBRecvUD), "DAT_IB_DTO_RECV_UD"},
	{"DTOIBRecvUDImmed", int64(DTOIBRecvUDImmed), "DAT_IB_DTO_RECV_UD_IMMED"},
	{"IBUDConnectRequest", int64(IBUDConnectRequest), "DAT_IB_UD_CONNECT_REQUEST"},
	{"IBUDRemoteAH", int64(IBUDRemoteAH), "DAT_IB_UD_REMOTE_AH"},
	{"IBUDPassiveRemoteAH", int64(IBUDPassiveRemoteAH), "DAT_IB_UD_PASSIVE_REMOTE_AH"},
	{"IBUDSend", int64(IBUDSend), "DAT_IB_UD_SEND"},
	{"IBUDRecv", int64(IBUDRecv), "DAT_IB_UD_RECV"},
	{"IBUDConnectReject", int64(IBUDConnectReject), "DAT_IB_UD_CONNECT_REJECT"},
	{"IBUDConnectError", int64(IBUDConnectError), "DAT_IB_UD_CONNECT_ERROR"},
	{"GRHSize", int64(GRHSize), "sizeof(struct ibv_grh)"},
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
			assert.Equalf(t, cv, c.value, "%s = %#x, but C %s = %#x", c.goName, c.value, c.cName, cv)
		})
	}
}

// TestCHeadersCoverAllConstants checks that cConsts has one entry for each
// exported constant declared in return.go and consts.go, so a constant
// cannot be added without being checked against C.
func TestCHeadersCoverAllConstants(t *testing.T) {
	listed := make(map[string]bool, len(cConsts))
	for _, c := range cConsts {
		assert.Falsef(t, listed[c.goName], "%s listed twice in cConsts", c.goName)
		listed[c.goName] = true
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range []string{"return.go", "consts.go", "epmodify.go", "ext_ib.go", "ud.go"} {
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
						assert.Truef(t, listed[n.Name], "%s (%s) has no entry in cConsts", n.Name, file)
					}
				}
			}
		}
	}
	for name := range listed {
		assert.Truef(t, declared[name], "cConsts lists %s, which return.go/consts.go do not declare", name)
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

package udat

// This file holds the DAT 2.0 constants of dat.h, udat.h and udat_config.h
// with their C numeric values; names.go holds the C names their String
// methods print. cheaders_test.go checks every one of them against the
// installed C headers.

// Version and platform constants.
const (
	// VersionMajor is DAT_VERSION_MAJOR, the major DAT API version (2).
	VersionMajor = 2
	// VersionMinor is DAT_VERSION_MINOR, the minor DAT API version (0).
	VersionMinor = 0
	// NameMaxLength is DAT_NAME_MAX_LENGTH, the longest IA name in bytes.
	NameMaxLength = 256
	// OptimalAlignment is DAT_OPTIMAL_ALIGNMENT, the buffer alignment in bytes
	// that gives the best performance.
	OptimalAlignment = 256
	// LMRCookieSize is DAT_LMR_COOKIE_SIZE, the size in bytes of a shared
	// memory identifier.
	LMRCookieSize = 40
)

// Count constants (DAT_COUNT values).
const (
	// WatermarkInfinite is DAT_WATERMARK_INFINITE: no watermark.
	WatermarkInfinite int32 = -1
	// HWDefault is DAT_HW_DEFAULT, the default SRQ high watermark of an EP.
	HWDefault int32 = WatermarkInfinite
	// SRQLWDefault is DAT_SRQ_LW_DEFAULT, the default SRQ low watermark.
	SRQLWDefault int32 = 0
	// ValueUnknown is DAT_VALUE_UNKNOWN, returned for counts a provider
	// cannot report.
	ValueUnknown int32 = -2
)

// ConnQual is a DAT_CONN_QUAL: the connection qualifier (for IP transports,
// the port) that a service point listens on and a connect request names.
type ConnQual uint64

// PortQual is a DAT_PORT_QUAL, the port qualifier of an endpoint.
type PortQual = ConnQual

// Timeout is a DAT_TIMEOUT: a wait limit in microseconds.
type Timeout uint32

// TimeoutInfinite is DAT_TIMEOUT_INFINITE: wait without limit.
const TimeoutInfinite Timeout = ^Timeout(0)

// CompletionFlags is a DAT_COMPLETION_FLAGS set: how a posted DTO reports
// its completion. The same flags describe, as EP attributes, which
// completion modes an endpoint's queues accept.
type CompletionFlags uint32

// Completion flags.
const (
	// CompletionDefault is DAT_COMPLETION_DEFAULT_FLAG: always post a
	// completion event.
	CompletionDefault CompletionFlags = 0x00
	// CompletionSuppress is DAT_COMPLETION_SUPPRESS_FLAG: post no event when
	// the DTO succeeds.
	CompletionSuppress CompletionFlags = 0x01
	// CompletionSolicitedWait is DAT_COMPLETION_SOLICITED_WAIT_FLAG: the
	// sender asks that the receiver be woken by this message.
	CompletionSolicitedWait CompletionFlags = 0x02
	// CompletionUnsignalled is DAT_COMPLETION_UNSIGNALLED_FLAG: post the event
	// without waking a waiter.
	CompletionUnsignalled CompletionFlags = 0x04
	// CompletionBarrierFence is DAT_COMPLETION_BARRIER_FENCE_FLAG: do not
	// start until all earlier RDMA reads (and IB atomics) of the EP
	// completed. With none outstanding there is nothing to wait for, and
	// the work request goes to the device unfenced (see README).
	CompletionBarrierFence CompletionFlags = 0x08
	// CompletionEVDThreshold is DAT_COMPLETION_EVD_THRESHOLD_FLAG (uDAPL, EP
	// receive attribute): waiters are woken by the dat_evd_wait threshold.
	CompletionEVDThreshold CompletionFlags = 0x10
	// CompletionLMRInvalidateFence is DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG
	// (kDAPL only).
	CompletionLMRInvalidateFence CompletionFlags = 0x20
)

// DTOOp is a DAT_DTOS value: the kind of data transfer operation a
// completion event reports.
type DTOOp uint32

// DTO operations.
const (
	// DTOSend is DAT_DTO_SEND.
	DTOSend DTOOp = 0
	// DTORDMAWrite is DAT_DTO_RDMA_WRITE.
	DTORDMAWrite DTOOp = 1
	// DTORDMARead is DAT_DTO_RDMA_READ.
	DTORDMARead DTOOp = 2
	// DTOReceive is DAT_DTO_RECEIVE.
	DTOReceive DTOOp = 3
	// DTOReceiveWithInvalidate is DAT_DTO_RECEIVE_WITH_INVALIDATE.
	DTOReceiveWithInvalidate DTOOp = 4
	// DTOBindMW is DAT_DTO_BIND_MW: an RMR bind reported as a DTO (DAT 2.0).
	DTOBindMW DTOOp = 5
	// DTOLMRFMR is DAT_DTO_LMR_FMR (kDAPL only).
	DTOLMRFMR DTOOp = 6
	// DTOLMRInvalidate is DAT_DTO_LMR_INVALIDATE (kDAPL only).
	DTOLMRInvalidate DTOOp = 7
	// DTOExtensionBase is DAT_DTO_EXTENSION_BASE, the first extension DTO.
	DTOExtensionBase DTOOp = 8
)

// QoS is a DAT_QOS value: the quality of service an endpoint asks for.
type QoS uint32

// Quality of service values.
const (
	// QoSBestEffort is DAT_QOS_BEST_EFFORT.
	QoSBestEffort QoS = 0x00
	// QoSHighThroughput is DAT_QOS_HIGH_THROUGHPUT.
	QoSHighThroughput QoS = 0x01
	// QoSLowLatency is DAT_QOS_LOW_LATENCY.
	QoSLowLatency QoS = 0x02
	// QoSEconomy is DAT_QOS_ECONOMY.
	QoSEconomy QoS = 0x04
	// QoSPremium is DAT_QOS_PREMIUM.
	QoSPremium QoS = 0x08
)

// ConnectFlags is a DAT_CONNECT_FLAGS set passed to dat_ep_connect.
type ConnectFlags uint32

// Connect flags.
const (
	// ConnectDefault is DAT_CONNECT_DEFAULT_FLAG.
	ConnectDefault ConnectFlags = 0x00
	// ConnectMultipathRequested is DAT_CONNECT_MULTIPATH_REQUESTED_FLAG
	// (also spelled DAT_CONNECT_MULTIPATH_FLAG).
	ConnectMultipathRequested ConnectFlags = 0x01
	// ConnectMultipathRequired is DAT_CONNECT_MULTIPATH_REQUIRED_FLAG.
	ConnectMultipathRequired ConnectFlags = 0x02
)

// CloseFlags is a DAT_CLOSE_FLAGS value: how dat_ia_close and
// dat_ep_disconnect tear things down.
type CloseFlags uint32

// Close flags.
const (
	// CloseAbruptFlag is DAT_CLOSE_ABRUPT_FLAG: stop at once, flushing
	// outstanding work.
	CloseAbruptFlag CloseFlags = 0x00
	// CloseGracefulFlag is DAT_CLOSE_GRACEFUL_FLAG: let outstanding work
	// complete first.
	CloseGracefulFlag CloseFlags = 0x01
	// CloseDefault is DAT_CLOSE_DEFAULT, which is CloseAbruptFlag.
	CloseDefault = CloseAbruptFlag
)

// EVDFlags is a DAT_EVD_FLAGS set: the event streams an event dispatcher
// accepts.
type EVDFlags uint32

// EVD flags.
const (
	// EVDSoftwareFlag is DAT_EVD_SOFTWARE_FLAG: software events
	// (dat_evd_post_se).
	EVDSoftwareFlag EVDFlags = 0x001
	// EVDCRFlag is DAT_EVD_CR_FLAG: connection request events.
	EVDCRFlag EVDFlags = 0x010
	// EVDDTOFlag is DAT_EVD_DTO_FLAG: DTO completion events.
	EVDDTOFlag EVDFlags = 0x020
	// EVDConnectionFlag is DAT_EVD_CONNECTION_FLAG: connection events.
	EVDConnectionFlag EVDFlags = 0x040
	// EVDRMRBindFlag is DAT_EVD_RMR_BIND_FLAG: RMR bind completion events.
	EVDRMRBindFlag EVDFlags = 0x080
	// EVDAsyncFlag is DAT_EVD_ASYNC_FLAG: asynchronous error events.
	EVDAsyncFlag EVDFlags = 0x100
	// EVDDefaultFlag is DAT_EVD_DEFAULT_FLAG: CR, DTO, connection, RMR bind
	// and async events.
	EVDDefaultFlag EVDFlags = 0x1F0
	// EVDExtensionBase is DAT_EVD_EXTENSION_BASE, the first extension flag.
	EVDExtensionBase EVDFlags = 0x200
)

// PSPFlags is a DAT_PSP_FLAGS value: who creates the endpoint for a
// connection request arriving at a public service point.
type PSPFlags uint32

// PSP flags.
const (
	// PSPConsumerFlag is DAT_PSP_CONSUMER_FLAG: the consumer supplies the EP.
	PSPConsumerFlag PSPFlags = 0x00
	// PSPProviderFlag is DAT_PSP_PROVIDER_FLAG: the provider creates the EP.
	PSPProviderFlag PSPFlags = 0x01
)

// MemPriv is a DAT_MEM_PRIV_FLAGS set: the accesses an LMR or RMR allows.
type MemPriv uint32

// Memory privileges.
const (
	// MemPrivNone is DAT_MEM_PRIV_NONE_FLAG.
	MemPrivNone MemPriv = 0x00
	// MemPrivLocalRead is DAT_MEM_PRIV_LOCAL_READ_FLAG.
	MemPrivLocalRead MemPriv = 0x01
	// MemPrivRemoteRead is DAT_MEM_PRIV_REMOTE_READ_FLAG.
	MemPrivRemoteRead MemPriv = 0x02
	// MemPrivLocalWrite is DAT_MEM_PRIV_LOCAL_WRITE_FLAG.
	MemPrivLocalWrite MemPriv = 0x10
	// MemPrivRemoteWrite is DAT_MEM_PRIV_REMOTE_WRITE_FLAG.
	MemPrivRemoteWrite MemPriv = 0x20
	// MemPrivAll is DAT_MEM_PRIV_ALL_FLAG: all four privileges.
	MemPrivAll MemPriv = 0x33
	// MemPrivExtensionBase is DAT_MEM_PRIV_EXTENSION_BASE, the first
	// extension privilege.
	MemPrivExtensionBase MemPriv = 0x40
	// MemPrivRead is DAT_MEM_PRIV_READ_FLAG: local and remote read (DAT 1.0).
	MemPrivRead = MemPrivLocalRead | MemPrivRemoteRead
	// MemPrivWrite is DAT_MEM_PRIV_WRITE_FLAG: local and remote write
	// (DAT 1.0).
	MemPrivWrite = MemPrivLocalWrite | MemPrivRemoteWrite
)

// VAType is a DAT_VA_TYPE value: how DTOs address an LMR.
type VAType uint32

// Virtual address types.
const (
	// VATypeVA is DAT_VA_TYPE_VA: addresses are virtual addresses.
	VATypeVA VAType = 0x0
	// VATypeZB is DAT_VA_TYPE_ZB: addresses are zero-based offsets.
	VATypeZB VAType = 0x1
)

// RMRScope is a DAT_RMR_SCOPE value (DAT 2.0): what an RMR may be bound to.
type RMRScope uint32

// RMR scopes.
const (
	// RMRScopeEP is DAT_RMR_SCOPE_EP: bound to at most one EP at a time.
	RMRScopeEP RMRScope = 0
	// RMRScopePZ is DAT_RMR_SCOPE_PZ: bound to a protection zone.
	RMRScopePZ RMRScope = 1
	// RMRScopeAny is DAT_RMR_SCOPE_ANY: both.
	RMRScopeAny RMRScope = 2
)

// MemType is a DAT_MEM_TYPE value: what kind of memory dat_lmr_create
// registers.
type MemType uint32

// Memory types.
const (
	// MemTypeVirtual is DAT_MEM_TYPE_VIRTUAL: a virtual address range.
	MemTypeVirtual MemType = 0x00
	// MemTypeLMR is DAT_MEM_TYPE_LMR: the memory of an existing LMR.
	MemTypeLMR MemType = 0x01
	// MemTypeSharedVirtual is DAT_MEM_TYPE_SHARED_VIRTUAL (uDAPL): shared
	// memory named by a cookie.
	MemTypeSharedVirtual MemType = 0x02
)

// IOVOwnership is a DAT_IOV_OWNERSHIP value: whether the provider modifies
// a DTO's IOV.
type IOVOwnership uint32

// IOV ownership values.
const (
	// IOVConsumer is DAT_IOV_CONSUMER: the provider never modifies the IOV.
	IOVConsumer IOVOwnership = 0x0
	// IOVProviderNoMod is DAT_IOV_PROVIDER_NOMOD: the provider owns the IOV
	// until completion but does not modify it.
	IOVProviderNoMod IOVOwnership = 0x1
	// IOVProviderMod is DAT_IOV_PROVIDER_MOD: the provider may modify it.
	IOVProviderMod IOVOwnership = 0x2
)

// EPCreatorForPSP is a DAT_EP_CREATOR_FOR_PSP value: whether the provider
// can create endpoints for public service points.
type EPCreatorForPSP uint32

// EP creator values.
const (
	// PSPCreatesEPNever is DAT_PSP_CREATES_EP_NEVER.
	PSPCreatesEPNever EPCreatorForPSP = 0
	// PSPCreatesEPIfAsked is DAT_PSP_CREATES_EP_IFASKED.
	PSPCreatesEPIfAsked EPCreatorForPSP = 1
	// PSPCreatesEPAlways is DAT_PSP_CREATES_EP_ALWAYS.
	PSPCreatesEPAlways EPCreatorForPSP = 2
)

// PZSupport is a DAT_PZ_SUPPORT value.
type PZSupport uint32

// Protection zone support values.
const (
	// PZUnique is DAT_PZ_UNIQUE.
	PZUnique PZSupport = 0
	// PZShareable is DAT_PZ_SHAREABLE.
	PZShareable PZSupport = 1
)

// Extension is a DAT_EXTENSION value: the extension an IA supports.
type Extension uint32

// Extension values.
const (
	// ExtensionNone is DAT_EXTENSION_NONE.
	ExtensionNone Extension = 0
	// ExtensionIB is DAT_EXTENSION_IB: the InfiniBand extension.
	ExtensionIB Extension = 1
	// ExtensionIW is DAT_EXTENSION_IW: the iWARP extension.
	ExtensionIW Extension = 2
)

// ServiceType is a DAT_SERVICE_TYPE value: the transport service of an
// endpoint.
type ServiceType uint32

// Service types.
const (
	// ServiceTypeRC is DAT_SERVICE_TYPE_RC: reliable connection.
	ServiceTypeRC ServiceType = 0
	// ServiceTypeExtensionBase is DAT_SERVICE_TYPE_EXTENSION_BASE.
	ServiceTypeExtensionBase ServiceType = 1
)

// EPState is a DAT_EP_STATE value: the state of an endpoint.
type EPState uint32

// Endpoint states.
const (
	// EPStateUnconnected is DAT_EP_STATE_UNCONNECTED, the quiescent state.
	EPStateUnconnected EPState = 0
	// EPStateUnconfiguredUnconnected is DAT_EP_STATE_UNCONFIGURED_UNCONNECTED.
	EPStateUnconfiguredUnconnected EPState = 1
	// EPStateReserved is DAT_EP_STATE_RESERVED: held by a reserved service
	// point.
	EPStateReserved EPState = 2
	// EPStateUnconfiguredReserved is DAT_EP_STATE_UNCONFIGURED_RESERVED.
	EPStateUnconfiguredReserved EPState = 3
	// EPStatePassiveConnectionPending is
	// DAT_EP_STATE_PASSIVE_CONNECTION_PENDING: accept in progress.
	EPStatePassiveConnectionPending EPState = 4
	// EPStateUnconfiguredPassive is DAT_EP_STATE_UNCONFIGURED_PASSIVE.
	EPStateUnconfiguredPassive EPState = 5
	// EPStateActiveConnectionPending is
	// DAT_EP_STATE_ACTIVE_CONNECTION_PENDING: connect in progress.
	EPStateActiveConnectionPending EPState = 6
	// EPStateTentativeConnectionPending is
	// DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING: provider-created EP waiting
	// for the consumer to accept or reject.
	EPStateTentativeConnectionPending EPState = 7
	// EPStateUnconfiguredTentative is DAT_EP_STATE_UNCONFIGURED_TENTATIVE.
	EPStateUnconfiguredTentative EPState = 8
	// EPStateConnected is DAT_EP_STATE_CONNECTED.
	EPStateConnected EPState = 9
	// EPStateDisconnectPending is DAT_EP_STATE_DISCONNECT_PENDING.
	EPStateDisconnectPending EPState = 10
	// EPStateDisconnected is DAT_EP_STATE_DISCONNECTED (also the error
	// state).
	EPStateDisconnected EPState = 11
	// EPStateCompletionPending is DAT_EP_STATE_COMPLETION_PENDING.
	EPStateCompletionPending EPState = 12
	// EPStateConnectedSinglePath is DAT_EP_STATE_CONNECTED_SINGLE_PATH.
	EPStateConnectedSinglePath EPState = 13
	// EPStateConnectedMultiPath is DAT_EP_STATE_CONNECTED_MULTI_PATH.
	EPStateConnectedMultiPath EPState = 14

	// EPStateError is DAT_EP_STATE_ERROR, an alias of EPStateDisconnected.
	EPStateError = EPStateDisconnected
)

// SRQState is a DAT_SRQ_STATE value: the state of a shared receive queue.
type SRQState uint32

// SRQ states.
const (
	// SRQStateError is DAT_SRQ_STATE_ERROR.
	SRQStateError SRQState = 0
	// SRQStateOperational is DAT_SRQ_STATE_OPERATIONAL.
	SRQStateOperational SRQState = 1
	// SRQStateShutdown is DAT_SRQ_STATE_SHUTDOWN.
	SRQStateShutdown SRQState = 2
)

// EVDState is a DAT_EVD_STATE set, as reported by dat_evd_query. It has
// three independent parts: enabled or disabled, waitable or unwaitable, and
// the notification configuration.
type EVDState uint32

// EVD state bits.
const (
	// EVDStateEnabled is DAT_EVD_STATE_ENABLED.
	EVDStateEnabled EVDState = 0x01
	// EVDStateDisabled is DAT_EVD_STATE_DISABLED.
	EVDStateDisabled EVDState = 0x02
	// EVDStateWaitable is DAT_EVD_STATE_WAITABLE.
	EVDStateWaitable EVDState = 0x04
	// EVDStateUnwaitable is DAT_EVD_STATE_UNWAITABLE.
	EVDStateUnwaitable EVDState = 0x08
	// EVDStateConfigNotify is DAT_EVD_STATE_CONFIG_NOTIFY.
	EVDStateConfigNotify EVDState = 0x10
	// EVDStateConfigSolicited is DAT_EVD_STATE_CONFIG_SOLICITED.
	EVDStateConfigSolicited EVDState = 0x20
	// EVDStateConfigThreshold is DAT_EVD_STATE_CONFIG_THRESHOLD.
	EVDStateConfigThreshold EVDState = 0x30
)

// ProxyType is a DAT_PROXY_TYPE value: how a CNO signals its consumer.
type ProxyType uint32

// CNO proxy types.
const (
	// ProxyTypeNone is DAT_PROXY_TYPE_NONE.
	ProxyTypeNone ProxyType = 0x0
	// ProxyTypeAgent is DAT_PROXY_TYPE_AGENT.
	ProxyTypeAgent ProxyType = 0x1
	// ProxyTypeFD is DAT_PROXY_TYPE_FD.
	ProxyTypeFD ProxyType = 0x2
)

// DTOStatus is a DAT_DTO_COMPLETION_STATUS value: the outcome of a DTO or
// RMR bind reported in its completion event.
type DTOStatus uint32

// DTO completion statuses.
const (
	// DTOSuccess is DAT_DTO_SUCCESS.
	DTOSuccess DTOStatus = 0
	// DTOErrFlushed is DAT_DTO_ERR_FLUSHED: the DTO was flushed because the
	// endpoint left the connected state.
	DTOErrFlushed DTOStatus = 1
	// DTOErrLocalLength is DAT_DTO_ERR_LOCAL_LENGTH: the local buffer was too
	// small.
	DTOErrLocalLength DTOStatus = 2
	// DTOErrLocalEP is DAT_DTO_ERR_LOCAL_EP: a local endpoint error.
	DTOErrLocalEP DTOStatus = 3
	// DTOErrLocalProtection is DAT_DTO_ERR_LOCAL_PROTECTION: a local
	// protection or privilege error.
	DTOErrLocalProtection DTOStatus = 4
	// DTOErrBadResponse is DAT_DTO_ERR_BAD_RESPONSE.
	DTOErrBadResponse DTOStatus = 5
	// DTOErrRemoteAccess is DAT_DTO_ERR_REMOTE_ACCESS: the remote RMR did not
	// allow the access.
	DTOErrRemoteAccess DTOStatus = 6
	// DTOErrRemoteResponder is DAT_DTO_ERR_REMOTE_RESPONDER.
	DTOErrRemoteResponder DTOStatus = 7
	// DTOErrTransport is DAT_DTO_ERR_TRANSPORT.
	DTOErrTransport DTOStatus = 8
	// DTOErrReceiverNotReady is DAT_DTO_ERR_RECEIVER_NOT_READY.
	DTOErrReceiverNotReady DTOStatus = 9
	// DTOErrPartialPacket is DAT_DTO_ERR_PARTIAL_PACKET.
	DTOErrPartialPacket DTOStatus = 10
	// DTOErrRMROperationFailed is DAT_RMR_OPERATION_FAILED.
	DTOErrRMROperationFailed DTOStatus = 11
	// DTOErrLocalMMError is DAT_DTO_ERR_LOCAL_MM_ERROR (kDAPL only).
	DTOErrLocalMMError DTOStatus = 12

	// DTOLengthError is DAT_DTO_LENGTH_ERROR, the DAT 1.x name of
	// DTOErrLocalLength.
	DTOLengthError = DTOErrLocalLength
	// DTOFailure is DAT_DTO_FAILURE, the DAT 1.x name of DTOErrFlushed.
	DTOFailure = DTOErrFlushed
	// RMRBindSuccess is DAT_RMR_BIND_SUCCESS.
	RMRBindSuccess = DTOSuccess
	// RMRBindFailure is DAT_RMR_BIND_FAILURE.
	RMRBindFailure = DTOErrFlushed
)

// EventNumber is a DAT_EVENT_NUMBER value: the kind of an event.
type EventNumber uint32

// Event numbers.
const (
	// EventDTOCompletion is DAT_DTO_COMPLETION_EVENT.
	EventDTOCompletion EventNumber = 0x00001
	// EventRMRBindCompletion is DAT_RMR_BIND_COMPLETION_EVENT.
	EventRMRBindCompletion EventNumber = 0x01001
	// EventConnectionRequest is DAT_CONNECTION_REQUEST_EVENT.
	EventConnectionRequest EventNumber = 0x02001
	// EventConnectionEstablished is DAT_CONNECTION_EVENT_ESTABLISHED.
	EventConnectionEstablished EventNumber = 0x04001
	// EventConnectionPeerRejected is DAT_CONNECTION_EVENT_PEER_REJECTED.
	EventConnectionPeerRejected EventNumber = 0x04002
	// EventConnectionNonPeerRejected is
	// DAT_CONNECTION_EVENT_NON_PEER_REJECTED.
	EventConnectionNonPeerRejected EventNumber = 0x04003
	// EventConnectionAcceptCompletionError is
	// DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR.
	EventConnectionAcceptCompletionError EventNumber = 0x04004
	// EventConnectionDisconnected is DAT_CONNECTION_EVENT_DISCONNECTED.
	EventConnectionDisconnected EventNumber = 0x04005
	// EventConnectionBroken is DAT_CONNECTION_EVENT_BROKEN.
	EventConnectionBroken EventNumber = 0x04006
	// EventConnectionTimedOut is DAT_CONNECTION_EVENT_TIMED_OUT.
	EventConnectionTimedOut EventNumber = 0x04007
	// EventConnectionUnreachable is DAT_CONNECTION_EVENT_UNREACHABLE.
	EventConnectionUnreachable EventNumber = 0x04008
	// EventAsyncErrorEVDOverflow is DAT_ASYNC_ERROR_EVD_OVERFLOW.
	EventAsyncErrorEVDOverflow EventNumber = 0x08001
	// EventAsyncErrorIACatastrophic is DAT_ASYNC_ERROR_IA_CATASTROPHIC.
	EventAsyncErrorIACatastrophic EventNumber = 0x08002
	// EventAsyncErrorEPBroken is DAT_ASYNC_ERROR_EP_BROKEN.
	EventAsyncErrorEPBroken EventNumber = 0x08003
	// EventAsyncErrorTimedOut is DAT_ASYNC_ERROR_TIMED_OUT.
	EventAsyncErrorTimedOut EventNumber = 0x08004
	// EventAsyncErrorProviderInternalError is
	// DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR.
	EventAsyncErrorProviderInternalError EventNumber = 0x08005
	// EventHADownTo1 is DAT_HA_DOWN_TO_1.
	EventHADownTo1 EventNumber = 0x08101
	// EventHAUpToMultiPath is DAT_HA_UP_TO_MULTI_PATH.
	EventHAUpToMultiPath EventNumber = 0x08102
	// EventSoftware is DAT_SOFTWARE_EVENT, posted by dat_evd_post_se.
	EventSoftware EventNumber = 0x10001
	// EventExtension is DAT_EXTENSION_EVENT.
	EventExtension EventNumber = 0x20000
	// EventIBExtensionRangeBase is DAT_IB_EXTENSION_RANGE_BASE.
	EventIBExtensionRangeBase EventNumber = 0x40000
	// EventIWExtensionRangeBase is DAT_IW_EXTENSION_RANGE_BASE.
	EventIWExtensionRangeBase EventNumber = 0x80000
)

// AsyncErrorReason is the object-specific reason (a DAT_COUNT) carried by an
// asynchronous error event. Its meaning depends on the kind of object the
// event names.
type AsyncErrorReason int32

// Asynchronous error reasons, by object.
const (
	// IACatastrophicError is DAT_IA_CATASTROPHIC_ERROR.
	IACatastrophicError AsyncErrorReason = 0
	// IAOtherError is DAT_IA_OTHER_ERROR.
	IAOtherError AsyncErrorReason = 1
	// EPTransferToError is DAT_EP_TRANSFER_TO_ERROR.
	EPTransferToError AsyncErrorReason = 0
	// EPOtherError is DAT_EP_OTHER_ERROR.
	EPOtherError AsyncErrorReason = 1
	// SRQSoftHighWatermarkEvent is DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT.
	SRQSoftHighWatermarkEvent AsyncErrorReason = 2
	// EVDOverflowError is DAT_EVD_OVERFLOW_ERROR.
	EVDOverflowError AsyncErrorReason = 0
	// EVDOtherError is DAT_EVD_OTHER_ERROR.
	EVDOtherError AsyncErrorReason = 1
	// SRQTransferToError is DAT_SRQ_TRANSFER_TO_ERROR.
	SRQTransferToError AsyncErrorReason = 0
	// SRQOtherError is DAT_SRQ_OTHER_ERROR.
	SRQOtherError AsyncErrorReason = 1
	// SRQLowWatermarkEvent is DAT_SRQ_LOW_WATERMARK_EVENT.
	SRQLowWatermarkEvent AsyncErrorReason = 2
	// LMROtherError is DAT_LMR_OTHER_ERROR.
	LMROtherError AsyncErrorReason = 0
	// RMROtherError is DAT_RMR_OTHER_ERROR.
	RMROtherError AsyncErrorReason = 0
	// PZOtherError is DAT_PZ_OTHER_ERROR.
	PZOtherError AsyncErrorReason = 0
)

// HandleType is a DAT_HANDLE_TYPE value: the kind of object a handle
// designates, as returned by dat_get_handle_type.
type HandleType uint32

// Handle types.
const (
	// HandleTypeCR is DAT_HANDLE_TYPE_CR (connection request).
	HandleTypeCR HandleType = 0
	// HandleTypeEP is DAT_HANDLE_TYPE_EP (endpoint).
	HandleTypeEP HandleType = 1
	// HandleTypeEVD is DAT_HANDLE_TYPE_EVD (event dispatcher).
	HandleTypeEVD HandleType = 2
	// HandleTypeIA is DAT_HANDLE_TYPE_IA (interface adapter).
	HandleTypeIA HandleType = 3
	// HandleTypeLMR is DAT_HANDLE_TYPE_LMR (local memory region).
	HandleTypeLMR HandleType = 4
	// HandleTypePSP is DAT_HANDLE_TYPE_PSP (public service point).
	HandleTypePSP HandleType = 5
	// HandleTypePZ is DAT_HANDLE_TYPE_PZ (protection zone).
	HandleTypePZ HandleType = 6
	// HandleTypeRMR is DAT_HANDLE_TYPE_RMR (remote memory region).
	HandleTypeRMR HandleType = 7
	// HandleTypeRSP is DAT_HANDLE_TYPE_RSP (reserved service point).
	HandleTypeRSP HandleType = 8
	// HandleTypeCNO is DAT_HANDLE_TYPE_CNO (consumer notification object).
	HandleTypeCNO HandleType = 9
	// HandleTypeSRQ is DAT_HANDLE_TYPE_SRQ (shared receive queue).
	HandleTypeSRQ HandleType = 10
	// HandleTypeCSP is DAT_HANDLE_TYPE_CSP (common service point).
	HandleTypeCSP HandleType = 11
	// HandleTypeExtensionBase is DAT_HANDLE_TYPE_EXTENSION_BASE.
	HandleTypeExtensionBase HandleType = 12
)

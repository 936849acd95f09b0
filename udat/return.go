package udat

import (
	"errors"
	"fmt"
)

// Return is a DAT_RETURN value: the result code of a DAT operation.
//
// Like the C type it packs three fields into 32 bits:
//
//	bits 31-30  class    (ClassError, ClassWarning, or 0 for success)
//	bits 29-16  type     (InvalidHandle, InvalidParameter, QueueEmpty, ...)
//	bits 15-0   subtype  (InvalidHandleEP, InvalidArg3, ...)
//
// The type and subtype constants of this package carry no class bits, so
// a full code is built as ClassError|InvalidHandle|InvalidHandleEP. The
// numeric values are those of the DAT 2.0 header dat_error.h, so a code
// printed by a C consumer means the same thing here.
type Return uint32

// Class bits and masks of a Return (DAT_CLASS_* and DAT_*_MASK).
const (
	// Success is DAT_SUCCESS: no class, no type, no subtype.
	Success Return = 0x00000000
	// ClassSuccess is DAT_CLASS_SUCCESS (no class bit set).
	ClassSuccess Return = 0x00000000
	// ClassError is DAT_CLASS_ERROR, set on every failed operation.
	ClassError Return = 0x80000000
	// ClassWarning is DAT_CLASS_WARNING.
	ClassWarning Return = 0x40000000
	// ClassMask selects the class bits (31-30) of a Return.
	ClassMask Return = 0xC0000000
	// TypeMask is DAT_TYPE_MASK: the type bits (29-16) of a Return.
	TypeMask Return = 0x3FFF0000
	// SubtypeMask is DAT_SUBTYPE_MASK: the subtype bits (15-0) of a Return.
	SubtypeMask Return = 0x0000FFFF
)

// Types of Return (DAT_RETURN_TYPE), without class bits.
const (
	// Abort is DAT_ABORT: the operation was aborted because the IA was
	// closed or the EVD destroyed.
	Abort Return = 0x00010000
	// ConnQualInUse is DAT_CONN_QUAL_IN_USE: the connection qualifier is
	// already in use.
	ConnQualInUse Return = 0x00020000
	// InsufficientResources is DAT_INSUFFICIENT_RESOURCES: a resource limit
	// was hit; the subtype names the resource.
	InsufficientResources Return = 0x00030000
	// InternalError is DAT_INTERNAL_ERROR: the provider detected an internal
	// error not caused by the consumer.
	InternalError Return = 0x00040000
	// InvalidHandle is DAT_INVALID_HANDLE: a handle argument was invalid; the
	// subtype names the kind of handle.
	InvalidHandle Return = 0x00050000
	// InvalidParameter is DAT_INVALID_PARAMETER: an argument was invalid; the
	// subtype gives its position.
	InvalidParameter Return = 0x00060000
	// InvalidState is DAT_INVALID_STATE: an object is in a state that does not
	// allow the operation; the subtype names object and state.
	InvalidState Return = 0x00070000
	// LengthError is DAT_LENGTH_ERROR: a buffer was too small for the data.
	LengthError Return = 0x00080000
	// ModelNotSupported is DAT_MODEL_NOT_SUPPORTED: the requested model is not
	// supported by the provider.
	ModelNotSupported Return = 0x00090000
	// ProviderNotFound is DAT_PROVIDER_NOT_FOUND: the IA name is not among the
	// registered providers.
	ProviderNotFound Return = 0x000A0000
	// PrivilegesViolation is DAT_PRIVILEGES_VIOLATION: the memory privileges
	// do not allow the access.
	PrivilegesViolation Return = 0x000B0000
	// ProtectionViolation is DAT_PROTECTION_VIOLATION: the memory and the
	// endpoint are in different protection zones, or an LMR is invalid.
	ProtectionViolation Return = 0x000C0000
	// QueueEmpty is DAT_QUEUE_EMPTY: no event was available.
	QueueEmpty Return = 0x000D0000
	// QueueFull is DAT_QUEUE_FULL: the event dispatcher queue is full.
	QueueFull Return = 0x000E0000
	// TimeoutExpired is DAT_TIMEOUT_EXPIRED: a wait timed out.
	TimeoutExpired Return = 0x000F0000
	// ProviderAlreadyRegistered is DAT_PROVIDER_ALREADY_REGISTERED.
	ProviderAlreadyRegistered Return = 0x00100000
	// ProviderInUse is DAT_PROVIDER_IN_USE: the provider cannot be closed now.
	ProviderInUse Return = 0x00110000
	// InvalidAddress is DAT_INVALID_ADDRESS: the remote address is not valid
	// or not reachable; the subtype says which.
	InvalidAddress Return = 0x00120000
	// InterruptedCall is DAT_INTERRUPTED_CALL: a wait was interrupted.
	InterruptedCall Return = 0x00130000
	// ConnQualUnavailable is DAT_CONN_QUAL_UNAVAILABLE: no connection
	// qualifier is free.
	ConnQualUnavailable Return = 0x00140000
	// ReservedLMR is DAT_RESERVED_LMR (kDAPL only).
	ReservedLMR Return = 0x00150000
	// PortInUse is DAT_PORT_IN_USE: the IP port is in use.
	PortInUse Return = 0x00160000
	// CommNotSupported is DAT_COMM_NOT_SUPPORTED.
	CommNotSupported Return = 0x00170000
	// ExtensionBase is DAT_EXTENSION_BASE, the first type reserved for DAT
	// extensions (0x10000000 up to NotImplemented).
	ExtensionBase Return = 0x10000000
	// NotImplemented is DAT_NOT_IMPLEMENTED: the provider does not support
	// the operation.
	NotImplemented Return = 0x3FFF0000

	// NameNotFound is DAT_NAME_NOT_FOUND, the DAT 1.0 name of
	// ProviderNotFound.
	NameNotFound = ProviderNotFound
)

// Subtypes of Return (DAT_RETURN_SUBTYPE). A subtype only has meaning
// together with its type.
const (
	// NoSubtype means the code carries no subtype.
	NoSubtype Return = 0 // DAT_NO_SUBTYPE

	// Subtypes of Abort.
	SubInterrupted Return = 1 // DAT_SUB_INTERRUPTED

	// Subtypes of InsufficientResources: the resource that ran out.
	ResourceMemory           Return = 2  // DAT_RESOURCE_MEMORY
	ResourceDevice           Return = 3  // DAT_RESOURCE_DEVICE
	ResourceTEP              Return = 4  // DAT_RESOURCE_TEP
	ResourceTEVD             Return = 5  // DAT_RESOURCE_TEVD
	ResourceProtectionDomain Return = 6  // DAT_RESOURCE_PROTECTION_DOMAIN
	ResourceMemoryRegion     Return = 7  // DAT_RESOURCE_MEMORY_REGION
	ResourceErrorHandler     Return = 8  // DAT_RESOURCE_ERROR_HANDLER
	ResourceCredits          Return = 9  // DAT_RESOURCE_CREDITS
	ResourceSRQ              Return = 10 // DAT_RESOURCE_SRQ

	// Subtypes of InvalidHandle: the kind of handle, or its argument position.
	InvalidHandleIA         Return = 11 // DAT_INVALID_HANDLE_IA
	InvalidHandleEP         Return = 12 // DAT_INVALID_HANDLE_EP
	InvalidHandleLMR        Return = 13 // DAT_INVALID_HANDLE_LMR
	InvalidHandleRMR        Return = 14 // DAT_INVALID_HANDLE_RMR
	InvalidHandlePZ         Return = 15 // DAT_INVALID_HANDLE_PZ
	InvalidHandlePSP        Return = 16 // DAT_INVALID_HANDLE_PSP
	InvalidHandleRSP        Return = 17 // DAT_INVALID_HANDLE_RSP
	InvalidHandleCR         Return = 18 // DAT_INVALID_HANDLE_CR
	InvalidHandleCNO        Return = 19 // DAT_INVALID_HANDLE_CNO
	InvalidHandleEVDCR      Return = 20 // DAT_INVALID_HANDLE_EVD_CR
	InvalidHandleEVDRequest Return = 21 // DAT_INVALID_HANDLE_EVD_REQUEST
	InvalidHandleEVDRecv    Return = 22 // DAT_INVALID_HANDLE_EVD_RECV
	InvalidHandleEVDConn    Return = 23 // DAT_INVALID_HANDLE_EVD_CONN
	InvalidHandleEVDAsync   Return = 24 // DAT_INVALID_HANDLE_EVD_ASYNC
	InvalidHandleSRQ        Return = 25 // DAT_INVALID_HANDLE_SRQ
	InvalidHandleCSP        Return = 26 // DAT_INVALID_HANDLE_CSP
	InvalidHandle1          Return = 27 // DAT_INVALID_HANDLE1
	InvalidHandle2          Return = 28 // DAT_INVALID_HANDLE2
	InvalidHandle3          Return = 29 // DAT_INVALID_HANDLE3
	InvalidHandle4          Return = 30 // DAT_INVALID_HANDLE4
	InvalidHandle5          Return = 31 // DAT_INVALID_HANDLE5
	InvalidHandle6          Return = 32 // DAT_INVALID_HANDLE6
	InvalidHandle7          Return = 33 // DAT_INVALID_HANDLE7
	InvalidHandle8          Return = 34 // DAT_INVALID_HANDLE8
	InvalidHandle9          Return = 35 // DAT_INVALID_HANDLE9
	InvalidHandle10         Return = 36 // DAT_INVALID_HANDLE10

	// Subtypes of InvalidParameter: the 1-based position of the bad argument.
	InvalidArg1  Return = 37 // DAT_INVALID_ARG1
	InvalidArg2  Return = 38 // DAT_INVALID_ARG2
	InvalidArg3  Return = 39 // DAT_INVALID_ARG3
	InvalidArg4  Return = 40 // DAT_INVALID_ARG4
	InvalidArg5  Return = 41 // DAT_INVALID_ARG5
	InvalidArg6  Return = 42 // DAT_INVALID_ARG6
	InvalidArg7  Return = 43 // DAT_INVALID_ARG7
	InvalidArg8  Return = 44 // DAT_INVALID_ARG8
	InvalidArg9  Return = 45 // DAT_INVALID_ARG9
	InvalidArg10 Return = 46 // DAT_INVALID_ARG10

	// Subtypes of InvalidState: the object and the state that forbids the call.
	InvalidStateEPUnconnected      Return = 47 // DAT_INVALID_STATE_EP_UNCONNECTED
	InvalidStateEPActConnPending   Return = 48 // DAT_INVALID_STATE_EP_ACTCONNPENDING
	InvalidStateEPPassConnPending  Return = 49 // DAT_INVALID_STATE_EP_PASSCONNPENDING
	InvalidStateEPTentConnPending  Return = 50 // DAT_INVALID_STATE_EP_TENTCONNPENDING
	InvalidStateEPConnected        Return = 51 // DAT_INVALID_STATE_EP_CONNECTED
	InvalidStateEPDisconnected     Return = 52 // DAT_INVALID_STATE_EP_DISCONNECTED
	InvalidStateEPReserved         Return = 53 // DAT_INVALID_STATE_EP_RESERVED
	InvalidStateEPComplPending     Return = 54 // DAT_INVALID_STATE_EP_COMPLPENDING
	InvalidStateEPDiscPending      Return = 55 // DAT_INVALID_STATE_EP_DISCPENDING
	InvalidStateEPProviderControl  Return = 56 // DAT_INVALID_STATE_EP_PROVIDERCONTROL
	InvalidStateEPNotReady         Return = 57 // DAT_INVALID_STATE_EP_NOTREADY
	InvalidStateEPRecvWatermark    Return = 58 // DAT_INVALID_STATE_EP_RECV_WATERMARK
	InvalidStateEPPZ               Return = 59 // DAT_INVALID_STATE_EP_PZ
	InvalidStateEPEVDRequest       Return = 60 // DAT_INVALID_STATE_EP_EVD_REQUEST
	InvalidStateEPEVDRecv          Return = 61 // DAT_INVALID_STATE_EP_EVD_RECV
	InvalidStateEPEVDConnect       Return = 62 // DAT_INVALID_STATE_EP_EVD_CONNECT
	InvalidStateEPUnconfigured     Return = 63 // DAT_INVALID_STATE_EP_UNCONFIGURED
	InvalidStateEPUnconfReserved   Return = 64 // DAT_INVALID_STATE_EP_UNCONFRESERVED
	InvalidStateEPUnconfPassive    Return = 65 // DAT_INVALID_STATE_EP_UNCONFPASSIVE
	InvalidStateEPUnconfTentative  Return = 66 // DAT_INVALID_STATE_EP_UNCONFTENTATIVE
	InvalidStateCNOInUse           Return = 67 // DAT_INVALID_STATE_CNO_IN_USE
	InvalidStateCNODead            Return = 68 // DAT_INVALID_STATE_CNO_DEAD
	InvalidStateEVDOpen            Return = 69 // DAT_INVALID_STATE_EVD_OPEN
	InvalidStateEVDEnabled         Return = 70 // DAT_INVALID_STATE_EVD_ENABLED
	InvalidStateEVDDisabled        Return = 71 // DAT_INVALID_STATE_EVD_DISABLED
	InvalidStateEVDWaitable        Return = 72 // DAT_INVALID_STATE_EVD_WAITABLE
	InvalidStateEVDUnwaitable      Return = 73 // DAT_INVALID_STATE_EVD_UNWAITABLE
	InvalidStateEVDInUse           Return = 74 // DAT_INVALID_STATE_EVD_IN_USE
	InvalidStateEVDConfigNotify    Return = 75 // DAT_INVALID_STATE_EVD_CONFIG_NOTIFY
	InvalidStateEVDConfigSolicited Return = 76 // DAT_INVALID_STATE_EVD_CONFIG_SOLICITED
	InvalidStateEVDConfigThreshold Return = 77 // DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD
	InvalidStateEVDWaiter          Return = 78 // DAT_INVALID_STATE_EVD_WAITER
	InvalidStateEVDAsync           Return = 79 // DAT_INVALID_STATE_EVD_ASYNC
	InvalidStateIAInUse            Return = 80 // DAT_INVALID_STATE_IA_IN_USE
	InvalidStateLMRInUse           Return = 81 // DAT_INVALID_STATE_LMR_IN_USE
	InvalidStateLMRFree            Return = 82 // DAT_INVALID_STATE_LMR_FREE
	InvalidStatePZInUse            Return = 83 // DAT_INVALID_STATE_PZ_IN_USE
	InvalidStatePZFree             Return = 84 // DAT_INVALID_STATE_PZ_FREE
	InvalidStateSRQOperational     Return = 85 // DAT_INVALID_STATE_SRQ_OPERATIONAL
	InvalidStateSRQError           Return = 86 // DAT_INVALID_STATE_SRQ_ERROR
	InvalidStateSRQInUse           Return = 87 // DAT_INVALID_STATE_SRQ_IN_USE
	InvalidStateSRQShutdown        Return = 88 // DAT_INVALID_STATE_SRQ_SHUTDOWN

	// Subtypes of PrivilegesViolation.
	PrivilegesRead      Return = 89 // DAT_PRIVILEGES_READ
	PrivilegesWrite     Return = 90 // DAT_PRIVILEGES_WRITE
	PrivilegesRDMARead  Return = 91 // DAT_PRIVILEGES_RDMA_READ
	PrivilegesRDMAWrite Return = 92 // DAT_PRIVILEGES_RDMA_WRITE

	// Subtypes of ProtectionViolation.
	ProtectionRead      Return = 93 // DAT_PROTECTION_READ
	ProtectionWrite     Return = 94 // DAT_PROTECTION_WRITE
	ProtectionRDMARead  Return = 95 // DAT_PROTECTION_RDMA_READ
	ProtectionRDMAWrite Return = 96 // DAT_PROTECTION_RDMA_WRITE

	// Subtypes of InvalidAddress.
	InvalidAddressUnsupported Return = 97 // DAT_INVALID_ADDRESS_UNSUPPORTED
	InvalidAddressUnreachable Return = 98 // DAT_INVALID_ADDRESS_UNREACHABLE
	InvalidAddressMalformed   Return = 99 // DAT_INVALID_ADDRESS_MALFORMED

	// Subtypes of ProviderNotFound.
	NameNotRegistered    Return = 100 // DAT_NAME_NOT_REGISTERED
	MajorNotFound        Return = 101 // DAT_MAJOR_NOT_FOUND
	MinorNotFound        Return = 102 // DAT_MINOR_NOT_FOUND
	ThreadSafetyNotFound Return = 103 // DAT_THREAD_SAFETY_NOT_FOUND
)

// returnTypeNames maps every type of Return to its C name.
var returnTypeNames = map[Return]string{
	Success:                   "DAT_SUCCESS",
	Abort:                     "DAT_ABORT",
	ConnQualInUse:             "DAT_CONN_QUAL_IN_USE",
	InsufficientResources:     "DAT_INSUFFICIENT_RESOURCES",
	InternalError:             "DAT_INTERNAL_ERROR",
	InvalidHandle:             "DAT_INVALID_HANDLE",
	InvalidParameter:          "DAT_INVALID_PARAMETER",
	InvalidState:              "DAT_INVALID_STATE",
	LengthError:               "DAT_LENGTH_ERROR",
	ModelNotSupported:         "DAT_MODEL_NOT_SUPPORTED",
	ProviderNotFound:          "DAT_PROVIDER_NOT_FOUND",
	PrivilegesViolation:       "DAT_PRIVILEGES_VIOLATION",
	ProtectionViolation:       "DAT_PROTECTION_VIOLATION",
	QueueEmpty:                "DAT_QUEUE_EMPTY",
	QueueFull:                 "DAT_QUEUE_FULL",
	TimeoutExpired:            "DAT_TIMEOUT_EXPIRED",
	ProviderAlreadyRegistered: "DAT_PROVIDER_ALREADY_REGISTERED",
	ProviderInUse:             "DAT_PROVIDER_IN_USE",
	InvalidAddress:            "DAT_INVALID_ADDRESS",
	InterruptedCall:           "DAT_INTERRUPTED_CALL",
	ConnQualUnavailable:       "DAT_CONN_QUAL_UNAVAILABLE",
	ReservedLMR:               "DAT_RESERVED_LMR",
	PortInUse:                 "DAT_PORT_IN_USE",
	CommNotSupported:          "DAT_COMM_NOT_SUPPORTED",
	ExtensionBase:             "DAT_EXTENSION_BASE",
	NotImplemented:            "DAT_NOT_IMPLEMENTED",
}

// subtypeNames maps every subtype of Return to its C name. NoSubtype maps
// to "" because a code without subtype has no minor message.
var subtypeNames = map[Return]string{
	NoSubtype:                      "",
	SubInterrupted:                 "DAT_SUB_INTERRUPTED",
	ResourceMemory:                 "DAT_RESOURCE_MEMORY",
	ResourceDevice:                 "DAT_RESOURCE_DEVICE",
	ResourceTEP:                    "DAT_RESOURCE_TEP",
	ResourceTEVD:                   "DAT_RESOURCE_TEVD",
	ResourceProtectionDomain:       "DAT_RESOURCE_PROTECTION_DOMAIN",
	ResourceMemoryRegion:           "DAT_RESOURCE_MEMORY_REGION",
	ResourceErrorHandler:           "DAT_RESOURCE_ERROR_HANDLER",
	ResourceCredits:                "DAT_RESOURCE_CREDITS",
	ResourceSRQ:                    "DAT_RESOURCE_SRQ",
	InvalidHandleIA:                "DAT_INVALID_HANDLE_IA",
	InvalidHandleEP:                "DAT_INVALID_HANDLE_EP",
	InvalidHandleLMR:               "DAT_INVALID_HANDLE_LMR",
	InvalidHandleRMR:               "DAT_INVALID_HANDLE_RMR",
	InvalidHandlePZ:                "DAT_INVALID_HANDLE_PZ",
	InvalidHandlePSP:               "DAT_INVALID_HANDLE_PSP",
	InvalidHandleRSP:               "DAT_INVALID_HANDLE_RSP",
	InvalidHandleCR:                "DAT_INVALID_HANDLE_CR",
	InvalidHandleCNO:               "DAT_INVALID_HANDLE_CNO",
	InvalidHandleEVDCR:             "DAT_INVALID_HANDLE_EVD_CR",
	InvalidHandleEVDRequest:        "DAT_INVALID_HANDLE_EVD_REQUEST",
	InvalidHandleEVDRecv:           "DAT_INVALID_HANDLE_EVD_RECV",
	InvalidHandleEVDConn:           "DAT_INVALID_HANDLE_EVD_CONN",
	InvalidHandleEVDAsync:          "DAT_INVALID_HANDLE_EVD_ASYNC",
	InvalidHandleSRQ:               "DAT_INVALID_HANDLE_SRQ",
	InvalidHandleCSP:               "DAT_INVALID_HANDLE_CSP",
	InvalidHandle1:                 "DAT_INVALID_HANDLE1",
	InvalidHandle2:                 "DAT_INVALID_HANDLE2",
	InvalidHandle3:                 "DAT_INVALID_HANDLE3",
	InvalidHandle4:                 "DAT_INVALID_HANDLE4",
	InvalidHandle5:                 "DAT_INVALID_HANDLE5",
	InvalidHandle6:                 "DAT_INVALID_HANDLE6",
	InvalidHandle7:                 "DAT_INVALID_HANDLE7",
	InvalidHandle8:                 "DAT_INVALID_HANDLE8",
	InvalidHandle9:                 "DAT_INVALID_HANDLE9",
	InvalidHandle10:                "DAT_INVALID_HANDLE10",
	InvalidArg1:                    "DAT_INVALID_ARG1",
	InvalidArg2:                    "DAT_INVALID_ARG2",
	InvalidArg3:                    "DAT_INVALID_ARG3",
	InvalidArg4:                    "DAT_INVALID_ARG4",
	InvalidArg5:                    "DAT_INVALID_ARG5",
	InvalidArg6:                    "DAT_INVALID_ARG6",
	InvalidArg7:                    "DAT_INVALID_ARG7",
	InvalidArg8:                    "DAT_INVALID_ARG8",
	InvalidArg9:                    "DAT_INVALID_ARG9",
	InvalidArg10:                   "DAT_INVALID_ARG10",
	InvalidStateEPUnconnected:      "DAT_INVALID_STATE_EP_UNCONNECTED",
	InvalidStateEPActConnPending:   "DAT_INVALID_STATE_EP_ACTCONNPENDING",
	InvalidStateEPPassConnPending:  "DAT_INVALID_STATE_EP_PASSCONNPENDING",
	InvalidStateEPTentConnPending:  "DAT_INVALID_STATE_EP_TENTCONNPENDING",
	InvalidStateEPConnected:        "DAT_INVALID_STATE_EP_CONNECTED",
	InvalidStateEPDisconnected:     "DAT_INVALID_STATE_EP_DISCONNECTED",
	InvalidStateEPReserved:         "DAT_INVALID_STATE_EP_RESERVED",
	InvalidStateEPComplPending:     "DAT_INVALID_STATE_EP_COMPLPENDING",
	InvalidStateEPDiscPending:      "DAT_INVALID_STATE_EP_DISCPENDING",
	InvalidStateEPProviderControl:  "DAT_INVALID_STATE_EP_PROVIDERCONTROL",
	InvalidStateEPNotReady:         "DAT_INVALID_STATE_EP_NOTREADY",
	InvalidStateEPRecvWatermark:    "DAT_INVALID_STATE_EP_RECV_WATERMARK",
	InvalidStateEPPZ:               "DAT_INVALID_STATE_EP_PZ",
	InvalidStateEPEVDRequest:       "DAT_INVALID_STATE_EP_EVD_REQUEST",
	InvalidStateEPEVDRecv:          "DAT_INVALID_STATE_EP_EVD_RECV",
	InvalidStateEPEVDConnect:       "DAT_INVALID_STATE_EP_EVD_CONNECT",
	InvalidStateEPUnconfigured:     "DAT_INVALID_STATE_EP_UNCONFIGURED",
	InvalidStateEPUnconfReserved:   "DAT_INVALID_STATE_EP_UNCONFRESERVED",
	InvalidStateEPUnconfPassive:    "DAT_INVALID_STATE_EP_UNCONFPASSIVE",
	InvalidStateEPUnconfTentative:  "DAT_INVALID_STATE_EP_UNCONFTENTATIVE",
	InvalidStateCNOInUse:           "DAT_INVALID_STATE_CNO_IN_USE",
	InvalidStateCNODead:            "DAT_INVALID_STATE_CNO_DEAD",
	InvalidStateEVDOpen:            "DAT_INVALID_STATE_EVD_OPEN",
	InvalidStateEVDEnabled:         "DAT_INVALID_STATE_EVD_ENABLED",
	InvalidStateEVDDisabled:        "DAT_INVALID_STATE_EVD_DISABLED",
	InvalidStateEVDWaitable:        "DAT_INVALID_STATE_EVD_WAITABLE",
	InvalidStateEVDUnwaitable:      "DAT_INVALID_STATE_EVD_UNWAITABLE",
	InvalidStateEVDInUse:           "DAT_INVALID_STATE_EVD_IN_USE",
	InvalidStateEVDConfigNotify:    "DAT_INVALID_STATE_EVD_CONFIG_NOTIFY",
	InvalidStateEVDConfigSolicited: "DAT_INVALID_STATE_EVD_CONFIG_SOLICITED",
	InvalidStateEVDConfigThreshold: "DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD",
	InvalidStateEVDWaiter:          "DAT_INVALID_STATE_EVD_WAITER",
	InvalidStateEVDAsync:           "DAT_INVALID_STATE_EVD_ASYNC",
	InvalidStateIAInUse:            "DAT_INVALID_STATE_IA_IN_USE",
	InvalidStateLMRInUse:           "DAT_INVALID_STATE_LMR_IN_USE",
	InvalidStateLMRFree:            "DAT_INVALID_STATE_LMR_FREE",
	InvalidStatePZInUse:            "DAT_INVALID_STATE_PZ_IN_USE",
	InvalidStatePZFree:             "DAT_INVALID_STATE_PZ_FREE",
	InvalidStateSRQOperational:     "DAT_INVALID_STATE_SRQ_OPERATIONAL",
	InvalidStateSRQError:           "DAT_INVALID_STATE_SRQ_ERROR",
	InvalidStateSRQInUse:           "DAT_INVALID_STATE_SRQ_IN_USE",
	InvalidStateSRQShutdown:        "DAT_INVALID_STATE_SRQ_SHUTDOWN",
	PrivilegesRead:                 "DAT_PRIVILEGES_READ",
	PrivilegesWrite:                "DAT_PRIVILEGES_WRITE",
	PrivilegesRDMARead:             "DAT_PRIVILEGES_RDMA_READ",
	PrivilegesRDMAWrite:            "DAT_PRIVILEGES_RDMA_WRITE",
	ProtectionRead:                 "DAT_PROTECTION_READ",
	ProtectionWrite:                "DAT_PROTECTION_WRITE",
	ProtectionRDMARead:             "DAT_PROTECTION_RDMA_READ",
	ProtectionRDMAWrite:            "DAT_PROTECTION_RDMA_WRITE",
	InvalidAddressUnsupported:      "DAT_INVALID_ADDRESS_UNSUPPORTED",
	InvalidAddressUnreachable:      "DAT_INVALID_ADDRESS_UNREACHABLE",
	InvalidAddressMalformed:        "DAT_INVALID_ADDRESS_MALFORMED",
	NameNotRegistered:              "DAT_NAME_NOT_REGISTERED",
	MajorNotFound:                  "DAT_MAJOR_NOT_FOUND",
	MinorNotFound:                  "DAT_MINOR_NOT_FOUND",
	ThreadSafetyNotFound:           "DAT_THREAD_SAFETY_NOT_FOUND",
}

// Type returns the type bits (29-16) of r, without class and subtype, so it
// can be compared with InvalidHandle, QueueEmpty and the other types.
func (r Return) Type() Return { return r & TypeMask }

// Subtype returns the subtype bits (15-0) of r.
func (r Return) Subtype() Return { return r & SubtypeMask }

// Class returns the class bits (31-30) of r: ClassError, ClassWarning or
// ClassSuccess.
func (r Return) Class() Return { return r & ClassMask }

// IsError reports whether r has the error class bit set.
func (r Return) IsError() bool { return r&ClassError != 0 }

// IsWarning reports whether r has the warning class bit set.
func (r Return) IsWarning() bool { return r&ClassWarning != 0 }

// IsSuccess reports whether r reports neither an error nor a warning.
// A bare type without class bits, as some C providers return, is not a
// success.
func (r Return) IsSuccess() bool { return r == Success }

// String returns the message dat_strerror would give for r: the major
// message (the type's C name), followed by a space and the minor message
// (the subtype's C name) when r has a subtype, e.g.
// "DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP". A warning is prefixed with
// "DAT_CLASS_WARNING ". Unknown values are printed in hexadecimal.
func (r Return) String() string {
	major, minor := Strerror(r)
	s := major
	if minor != "" {
		s += " " + minor
	}
	if r.Class() == ClassWarning {
		s = "DAT_CLASS_WARNING " + s
	}
	return s
}

// Strerror is the equivalent of dat_strerror: it returns the major message
// describing the type of r and the minor message describing its subtype.
// The minor message is empty when r has no subtype. Class bits are ignored.
// Values outside dat_error.h give messages of the form
// "DAT_RETURN_TYPE(0x00420000)" and "DAT_RETURN_SUBTYPE(999)".
func Strerror(r Return) (major, minor string) {
	major, ok := returnTypeNames[r.Type()]
	if !ok {
		major = fmt.Sprintf("DAT_RETURN_TYPE(%#08x)", uint32(r.Type()))
	}
	if st := r.Subtype(); st != NoSubtype {
		minor, ok = subtypeNames[st]
		if !ok {
			minor = fmt.Sprintf("DAT_RETURN_SUBTYPE(%d)", uint32(st))
		}
	}
	return major, minor
}

// Error is the error returned by the operations of this package. Code is the
// full DAT_RETURN, always with ClassError (or, for warnings, ClassWarning)
// set, and Op names the operation that failed, e.g. "dat_ep_post_send".
//
// Errors compare by type: errors.Is(err, ErrInvalidHandle) is true for any
// invalid-handle error whatever its subtype, while a target with a subtype
// only matches that subtype. Use errors.As to get the full code.
type Error struct {
	// Code is the DAT_RETURN value, class bits included.
	Code Return
	// Op is the operation that failed; it may be empty.
	Op string
	// Detail says more where the code alone leaves it open, such as which
	// limit a DTO exceeded; it may be empty.
	Detail string

	// cause is the error of the layer below, where it matters to a caller;
	// Unwrap returns it.
	cause error
}

// Error returns "udat: " + Op + ": " + the dat_strerror form of Code (just
// "udat: " + the code when Op is empty), followed by ": " + Detail when
// there is one.
func (e *Error) Error() string {
	s := "udat: " + e.Code.String()
	if e.Op != "" {
		s = "udat: " + e.Op + ": " + e.Code.String()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is an *Error with the same type as e and either
// no subtype or the same subtype. Class bits and Op are not compared.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t == nil {
		return false
	}
	if e.Code.Type() != t.Code.Type() {
		return false
	}
	return t.Code.Subtype() == NoSubtype || t.Code.Subtype() == e.Code.Subtype()
}

// Unwrap returns the error that caused e, or nil. OpenIA's
// DAT_MODEL_NOT_SUPPORTED in a build without RDMA support (not Linux, or
// cgo disabled) unwraps to one that wraps errors.ErrUnsupported, so
// errors.Is(err, errors.ErrUnsupported) holds; comparisons with this
// package's sentinels still go by DAT type (Is).
func (e *Error) Unwrap() error { return e.cause }

// Sentinel errors, one per type of Return. Compare with errors.Is; they
// match any error of their type whatever its subtype.
var (
	// ErrAbort matches DAT_ABORT errors.
	ErrAbort = &Error{Code: ClassError | Abort}
	// ErrConnQualInUse matches DAT_CONN_QUAL_IN_USE errors.
	ErrConnQualInUse = &Error{Code: ClassError | ConnQualInUse}
	// ErrInsufficientResources matches DAT_INSUFFICIENT_RESOURCES errors.
	ErrInsufficientResources = &Error{Code: ClassError | InsufficientResources}
	// ErrInternalError matches DAT_INTERNAL_ERROR errors.
	ErrInternalError = &Error{Code: ClassError | InternalError}
	// ErrInvalidHandle matches DAT_INVALID_HANDLE errors.
	ErrInvalidHandle = &Error{Code: ClassError | InvalidHandle}
	// ErrInvalidParameter matches DAT_INVALID_PARAMETER errors.
	ErrInvalidParameter = &Error{Code: ClassError | InvalidParameter}
	// ErrInvalidState matches DAT_INVALID_STATE errors.
	ErrInvalidState = &Error{Code: ClassError | InvalidState}
	// ErrLengthError matches DAT_LENGTH_ERROR errors.
	ErrLengthError = &Error{Code: ClassError | LengthError}
	// ErrModelNotSupported matches DAT_MODEL_NOT_SUPPORTED errors.
	ErrModelNotSupported = &Error{Code: ClassError | ModelNotSupported}
	// ErrProviderNotFound matches DAT_PROVIDER_NOT_FOUND errors.
	ErrProviderNotFound = &Error{Code: ClassError | ProviderNotFound}
	// ErrPrivilegesViolation matches DAT_PRIVILEGES_VIOLATION errors.
	ErrPrivilegesViolation = &Error{Code: ClassError | PrivilegesViolation}
	// ErrProtectionViolation matches DAT_PROTECTION_VIOLATION errors.
	ErrProtectionViolation = &Error{Code: ClassError | ProtectionViolation}
	// ErrQueueEmpty matches DAT_QUEUE_EMPTY errors.
	ErrQueueEmpty = &Error{Code: ClassError | QueueEmpty}
	// ErrQueueFull matches DAT_QUEUE_FULL errors.
	ErrQueueFull = &Error{Code: ClassError | QueueFull}
	// ErrTimeoutExpired matches DAT_TIMEOUT_EXPIRED errors.
	ErrTimeoutExpired = &Error{Code: ClassError | TimeoutExpired}
	// ErrProviderAlreadyRegistered matches DAT_PROVIDER_ALREADY_REGISTERED
	// errors.
	ErrProviderAlreadyRegistered = &Error{Code: ClassError | ProviderAlreadyRegistered}
	// ErrProviderInUse matches DAT_PROVIDER_IN_USE errors.
	ErrProviderInUse = &Error{Code: ClassError | ProviderInUse}
	// ErrInvalidAddress matches DAT_INVALID_ADDRESS errors.
	ErrInvalidAddress = &Error{Code: ClassError | InvalidAddress}
	// ErrInterruptedCall matches DAT_INTERRUPTED_CALL errors.
	ErrInterruptedCall = &Error{Code: ClassError | InterruptedCall}
	// ErrConnQualUnavailable matches DAT_CONN_QUAL_UNAVAILABLE errors.
	ErrConnQualUnavailable = &Error{Code: ClassError | ConnQualUnavailable}
	// ErrReservedLMR matches DAT_RESERVED_LMR errors.
	ErrReservedLMR = &Error{Code: ClassError | ReservedLMR}
	// ErrPortInUse matches DAT_PORT_IN_USE errors.
	ErrPortInUse = &Error{Code: ClassError | PortInUse}
	// ErrCommNotSupported matches DAT_COMM_NOT_SUPPORTED errors.
	ErrCommNotSupported = &Error{Code: ClassError | CommNotSupported}
	// ErrNotImplemented matches DAT_NOT_IMPLEMENTED errors.
	ErrNotImplemented = &Error{Code: ClassError | NotImplemented}
)

// newError returns the error of operation op for code, a type optionally
// or-ed with a subtype. ClassError is always set, and any warning bit
// cleared, so callers never produce a class-less code.
func newError(op string, code Return) *Error {
	return &Error{Code: ClassError | code&^ClassMask, Op: op}
}

// newErrorDetail is newError with a detail for the message.
func newErrorDetail(op string, code Return, detail string) *Error {
	e := newError(op, code)
	e.Detail = detail
	return e
}

// newWarning is like newError but sets ClassWarning instead of ClassError.
func newWarning(op string, code Return) *Error {
	return &Error{Code: ClassWarning | code&^ClassMask, Op: op}
}

// CodeOf returns the DAT_RETURN for err: Success for nil, the Code of the
// first *Error in err's chain, and ClassError|InternalError for any other
// error.
func CodeOf(err error) Return {
	if err == nil {
		return Success
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	return ClassError | InternalError
}

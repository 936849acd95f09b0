package udat

import (
	"errors"
	"syscall"

	"github.com/udapl-go/udapl/cverbs"
)

// verbsErr turns an error from cverbs into a DAT error, following the errno
// mapping of the C reference: EOVERFLOW -> DAT_LENGTH_ERROR, EACCES ->
// DAT_PRIVILEGES_VIOLATION, EPERM -> DAT_PROTECTION_VIOLATION, EINVAL ->
// DAT_INVALID_PARAMETER, ENOMEM -> DAT_INSUFFICIENT_RESOURCES, and so on.
// dflt is used for an errno without a DAT meaning.
func verbsErr(op string, err error, dflt Return) error {
	if err == nil {
		return nil
	}
	var en syscall.Errno
	if !errors.As(err, &en) {
		if errors.Is(err, cverbs.ErrClosed) {
			return newError(op, InvalidState)
		}
		return newError(op, dflt)
	}
	return newError(op, errnoReturn(en, dflt))
}

func errnoReturn(en syscall.Errno, dflt Return) Return {
	switch en {
	case syscall.EOVERFLOW:
		return LengthError
	case syscall.EACCES:
		return PrivilegesViolation
	case syscall.EPERM:
		return ProtectionViolation
	case syscall.EINVAL:
		return InvalidParameter
	case syscall.ENOMEM, syscall.ENOSPC, syscall.ENFILE, syscall.EMFILE, syscall.ENOBUFS:
		return InsufficientResources
	case syscall.EAGAIN:
		return QueueEmpty
	case syscall.ETIMEDOUT:
		return TimeoutExpired
	case syscall.ENETUNREACH, syscall.EHOSTUNREACH:
		return InvalidAddress | InvalidAddressUnreachable
	case syscall.EADDRNOTAVAIL, syscall.EAFNOSUPPORT:
		return InvalidAddress | InvalidAddressUnsupported
	case syscall.EADDRINUSE:
		return ConnQualInUse
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		return ModelNotSupported
	case syscall.ENODEV, syscall.ENXIO, syscall.ENOENT:
		return ProviderNotFound
	case syscall.EBUSY:
		return InvalidState
	}
	return dflt
}

// dtoStatus maps an ibv_wc_status to a DAT completion status, as the C
// reference does.
func dtoStatus(s cverbs.WCStatus) DTOStatus {
	switch s {
	case cverbs.WCSuccess:
		return DTOSuccess
	case cverbs.WCLocLenErr:
		return DTOErrLocalLength
	case cverbs.WCLocQPOpErr:
		return DTOErrLocalEP
	case cverbs.WCLocProtErr, cverbs.WCLocAccessErr:
		return DTOErrLocalProtection
	case cverbs.WCWRFlushErr:
		return DTOErrFlushed
	case cverbs.WCBadRespErr:
		return DTOErrBadResponse
	case cverbs.WCRemAccessErr:
		return DTOErrRemoteAccess
	case cverbs.WCRemInvReqErr, cverbs.WCRemOpErr, cverbs.WCRemAbortErr:
		return DTOErrRemoteResponder
	case cverbs.WCRNRRetryExcErr, cverbs.WCRespTimeoutErr:
		return DTOErrReceiverNotReady
	case cverbs.WCMWBindErr:
		return DTOErrRMROperationFailed
	}
	// RETRY_EXC, FATAL, GENERAL and the rest.
	return DTOErrTransport
}

// stateSubtype gives the DAT_INVALID_STATE subtype that names an EP state.
func stateSubtype(s EPState) Return {
	switch s {
	case EPStateUnconnected:
		return InvalidStateEPUnconnected
	case EPStateReserved:
		return InvalidStateEPReserved
	case EPStatePassiveConnectionPending:
		return InvalidStateEPPassConnPending
	case EPStateActiveConnectionPending:
		return InvalidStateEPActConnPending
	case EPStateTentativeConnectionPending:
		return InvalidStateEPTentConnPending
	case EPStateConnected:
		return InvalidStateEPConnected
	case EPStateDisconnectPending:
		return InvalidStateEPDiscPending
	case EPStateDisconnected:
		return InvalidStateEPDisconnected
	case EPStateCompletionPending:
		return InvalidStateEPComplPending
	}
	return NoSubtype
}

package udat

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReturnFields(t *testing.T) {
	r := ClassError | InvalidHandle | InvalidHandleEP
	assert.Equal(t, Return(0x8005000C), r)
	assert.Equal(t, InvalidHandle, r.Type())
	assert.Equal(t, InvalidHandleEP, r.Subtype())
	assert.Equal(t, ClassError, r.Class())
	assert.True(t, r.IsError())
	assert.False(t, r.IsWarning())
	assert.False(t, r.IsSuccess())

	w := ClassWarning | Abort | SubInterrupted
	assert.Equal(t, Abort, w.Type())
	assert.Equal(t, SubInterrupted, w.Subtype())
	assert.Equal(t, ClassWarning, w.Class())
	assert.False(t, w.IsError())
	assert.True(t, w.IsWarning())

	assert.True(t, Success.IsSuccess())
	assert.False(t, Success.IsError())
	assert.Equal(t, ClassSuccess, Success.Class())

	// A bare type, as some C providers return, is neither an error nor a
	// success.
	assert.False(t, QueueEmpty.IsError())
	assert.False(t, QueueEmpty.IsSuccess())

	// Type never includes class or subtype bits, even for the largest type.
	nr := ClassError | NotImplemented | 0xFFFF
	assert.Equal(t, NotImplemented, nr.Type())
	assert.Equal(t, Return(0xFFFF), nr.Subtype())
}

func TestReturnConstantsHaveNoClassBits(t *testing.T) {
	for typ := range returnTypeNames {
		assert.Zerof(t, typ&ClassMask, "%s has class bits", typ)
		assert.Zerof(t, typ&SubtypeMask, "%s has subtype bits", typ)
	}
	for st := range subtypeNames {
		assert.Zerof(t, st&^SubtypeMask, "subtype %d has bits above 15", uint32(st))
	}
	assert.Len(t, subtypeNames, int(ThreadSafetyNotFound)+1, "subtypes are contiguous from 0")
}

func TestReturnString(t *testing.T) {
	tests := []struct {
		r    Return
		want string
	}{
		{Success, "DAT_SUCCESS"},
		{ClassError | InvalidHandle | InvalidHandleEP, "DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP"},
		{InvalidHandle | InvalidHandleEP, "DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP"},
		{ClassError | QueueEmpty, "DAT_QUEUE_EMPTY"},
		{ClassError | InvalidParameter | InvalidArg3, "DAT_INVALID_PARAMETER DAT_INVALID_ARG3"},
		{ClassError | InvalidState | InvalidStateEVDWaiter, "DAT_INVALID_STATE DAT_INVALID_STATE_EVD_WAITER"},
		{ClassError | InvalidState | InvalidStateEPUnconnected, "DAT_INVALID_STATE DAT_INVALID_STATE_EP_UNCONNECTED"},
		{ClassError | InsufficientResources | ResourceMemory, "DAT_INSUFFICIENT_RESOURCES DAT_RESOURCE_MEMORY"},
		{ClassError | InvalidAddress | InvalidAddressUnreachable, "DAT_INVALID_ADDRESS DAT_INVALID_ADDRESS_UNREACHABLE"},
		{ClassError | ProviderNotFound | NameNotRegistered, "DAT_PROVIDER_NOT_FOUND DAT_NAME_NOT_REGISTERED"},
		{ClassError | InterruptedCall, "DAT_INTERRUPTED_CALL"},
		{ClassError | NotImplemented, "DAT_NOT_IMPLEMENTED"},
		{ClassWarning | Abort | SubInterrupted, "DAT_CLASS_WARNING DAT_ABORT DAT_SUB_INTERRUPTED"},
		{ClassError | 0x00420000, "DAT_RETURN_TYPE(0x00420000)"},
		{ClassError | LengthError | 999, "DAT_LENGTH_ERROR DAT_RETURN_SUBTYPE(999)"},
	}
	for _, tt := range tests {
		assert.Equalf(t, tt.want, tt.r.String(), "%#08x", uint32(tt.r))
	}
}

func TestReturnStrerror(t *testing.T) {
	major, minor := Strerror(ClassError | InvalidHandle | InvalidHandleEVDRequest)
	assert.Equal(t, "DAT_INVALID_HANDLE", major)
	assert.Equal(t, "DAT_INVALID_HANDLE_EVD_REQUEST", minor)

	major, minor = Strerror(Success)
	assert.Equal(t, "DAT_SUCCESS", major)
	assert.Empty(t, minor)

	major, minor = Strerror(TimeoutExpired)
	assert.Equal(t, "DAT_TIMEOUT_EXPIRED", major)
	assert.Empty(t, minor)

	// Every known type and subtype has a C-style name.
	for typ, name := range returnTypeNames {
		major, _ := Strerror(typ)
		assert.Equal(t, name, major)
		assert.Regexp(t, `^DAT_[A-Z0-9_]+$`, major)
	}
	for st, name := range subtypeNames {
		_, minor := Strerror(InvalidParameter | st)
		assert.Equal(t, name, minor)
		if st != NoSubtype {
			assert.Regexp(t, `^DAT_[A-Z0-9_]+$`, minor)
		}
	}
}

func TestReturnNewErrorSetsClass(t *testing.T) {
	for typ := range returnTypeNames {
		if typ == Success {
			continue
		}
		for _, in := range []Return{typ, typ | InvalidArg1, ClassWarning | typ, ClassError | typ} {
			e := newError("op", in)
			assert.True(t, e.Code.IsError(), "%#08x", uint32(in))
			assert.Equal(t, ClassError, e.Code.Class(), "%#08x", uint32(in))
			assert.Equal(t, typ, e.Code.Type())
			assert.Equal(t, in.Subtype(), e.Code.Subtype())

			w := newWarning("op", in)
			assert.Equal(t, ClassWarning, w.Code.Class(), "%#08x", uint32(in))
			assert.Equal(t, typ, w.Code.Type())
			assert.Equal(t, in.Subtype(), w.Code.Subtype())
		}
	}
}

func TestReturnErrorMessage(t *testing.T) {
	e := newError("dat_ep_post_send", InvalidHandle|InvalidHandleEP)
	assert.Equal(t, "udat: dat_ep_post_send: DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP", e.Error())
	assert.Equal(t, "udat: DAT_QUEUE_EMPTY", newError("", QueueEmpty).Error())
	assert.Equal(t, "udat: DAT_INVALID_HANDLE", ErrInvalidHandle.Error())
	assert.Equal(t, "udat: dat_evd_wait: DAT_CLASS_WARNING DAT_ABORT DAT_SUB_INTERRUPTED",
		newWarning("dat_evd_wait", Abort|SubInterrupted).Error())
}

func TestReturnErrorIs(t *testing.T) {
	err := error(newError("dat_ep_post_send", InvalidHandle|InvalidHandleEP))
	wrapped := fmt.Errorf("sending: %w", err)

	for _, e := range []error{err, wrapped} {
		assert.ErrorIs(t, e, ErrInvalidHandle, "any subtype matches the sentinel")
		assert.ErrorIs(t, e, &Error{Code: ClassError | InvalidHandle | InvalidHandleEP}, "same subtype")
		assert.ErrorIs(t, e, &Error{Code: InvalidHandle | InvalidHandleEP}, "class is not compared")
		assert.NotErrorIs(t, e, &Error{Code: ClassError | InvalidHandle | InvalidHandleLMR}, "other subtype")
		assert.NotErrorIs(t, e, ErrInvalidParameter)
		assert.NotErrorIs(t, e, ErrInvalidState)
		assert.NotErrorIs(t, e, errors.New("DAT_INVALID_HANDLE"))
	}

	// A warning matches its type too.
	assert.ErrorIs(t, newWarning("op", Abort|SubInterrupted), ErrAbort)

	// A typed nil target never matches.
	var nilErr *Error
	assert.False(t, newError("op", QueueEmpty).Is(nilErr))

	// Each sentinel matches errors of its own type only.
	for _, s := range sentinels() {
		for _, other := range sentinels() {
			e := newError("op", other.Code.Type()|InvalidArg2)
			assert.Equalf(t, s == other, errors.Is(e, s), "%v vs %v", e, s)
		}
	}
}

func TestReturnErrorAs(t *testing.T) {
	err := fmt.Errorf("wrap: %w", newError("dat_ep_connect", InvalidAddress|InvalidAddressUnreachable))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ClassError|InvalidAddress|InvalidAddressUnreachable, e.Code)
	assert.Equal(t, "dat_ep_connect", e.Op)
	assert.Equal(t, InvalidAddressUnreachable, e.Code.Subtype())
}

func TestReturnCodeOf(t *testing.T) {
	assert.Equal(t, Success, CodeOf(nil))
	assert.Equal(t, ClassError|QueueEmpty, CodeOf(newError("dat_evd_dequeue", QueueEmpty)))
	assert.Equal(t, ClassError|InvalidParameter|InvalidArg4,
		CodeOf(fmt.Errorf("x: %w", newError("op", InvalidParameter|InvalidArg4))))
	assert.Equal(t, ClassWarning|Abort, CodeOf(newWarning("op", Abort)))
	assert.Equal(t, ClassError|InternalError, CodeOf(errors.New("boom")))
	var nilErr *Error
	assert.Equal(t, ClassError|InternalError, CodeOf(fmt.Errorf("x: %w", error(nilErr))))
	assert.Equal(t, ClassError|TimeoutExpired, CodeOf(errors.Join(errors.New("a"), ErrTimeoutExpired)))
}

func TestReturnSentinels(t *testing.T) {
	ss := sentinels()
	// One sentinel per type of dat_error.h except DAT_SUCCESS and the
	// extension range base.
	assert.Len(t, ss, len(returnTypeNames)-2)
	seen := map[Return]bool{}
	for _, s := range ss {
		assert.Equal(t, ClassError, s.Code.Class())
		assert.Equal(t, NoSubtype, s.Code.Subtype())
		_, known := returnTypeNames[s.Code.Type()]
		assert.True(t, known)
		assert.False(t, seen[s.Code.Type()], "duplicate sentinel %v", s)
		seen[s.Code.Type()] = true
		assert.Empty(t, s.Op)
	}
}

// sentinels lists the exported sentinel errors.
func sentinels() []*Error {
	return []*Error{
		ErrAbort, ErrConnQualInUse, ErrInsufficientResources, ErrInternalError,
		ErrInvalidHandle, ErrInvalidParameter, ErrInvalidState, ErrLengthError,
		ErrModelNotSupported, ErrProviderNotFound, ErrPrivilegesViolation,
		ErrProtectionViolation, ErrQueueEmpty, ErrQueueFull, ErrTimeoutExpired,
		ErrProviderAlreadyRegistered, ErrProviderInUse, ErrInvalidAddress,
		ErrInterruptedCall, ErrConnQualUnavailable, ErrReservedLMR, ErrPortInUse,
		ErrCommNotSupported, ErrNotImplemented,
	}
}

// Unwrap gives the cause an *Error carries, without changing how it
// compares with the sentinels.
func TestReturnErrorUnwrap(t *testing.T) {
	cause := fmt.Errorf("cverbs: %w", errors.ErrUnsupported)
	err := error(&Error{Code: ClassError | ModelNotSupported, Op: "dat_ia_open", cause: cause})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorIs(t, err, ErrModelNotSupported)
	assert.NotErrorIs(t, err, ErrInvalidHandle)
	assert.Equal(t, cause, errors.Unwrap(err))
	assert.NoError(t, errors.Unwrap(newError("x", InvalidHandle)))
	assert.NotErrorIs(t, newError("x", ModelNotSupported), errors.ErrUnsupported)
}

package udat

// FuzzStrerror feeds DAT_RETURN values to Strerror, Return.String and
// Error.Error of return.go (and the String methods of the other DAT enums
// and flag sets). It needs no RDMA device and has no build constraint: it
// builds and runs on every platform, its seeds (f.Add) in every go test;
// make fuzz runs it on the host.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func FuzzStrerror(f *testing.F) {
	for _, c := range []Return{
		Success, ClassError | InvalidHandle | InvalidHandleEP, ClassError | InvalidParameter | InvalidArg3,
		ClassWarning | LengthError, ClassError | PrivilegesViolation | PrivilegesWrite, InvalidState,
		ClassError | NotImplemented, ClassError | ExtensionBase | 5, ClassError | 0x00420000 | 999,
		ClassMask | TypeMask | SubtypeMask, ClassError | QueueEmpty, SubtypeMask,
	} {
		f.Add(uint32(c), "dat_ep_post_send")
	}
	f.Add(uint32(0x80060025), "")
	f.Add(uint32(0xC00B005A), "op\x00\xff")
	f.Fuzz(func(t *testing.T, code uint32, op string) {
		r := Return(code)
		major, minor := Strerror(r)
		require.NotEmpty(t, major)
		require.True(t, strings.HasPrefix(major, "DAT_"), major)
		require.Equal(t, r.Subtype() == NoSubtype, minor == "", "a minor message exactly when there is a subtype")
		if minor != "" {
			require.True(t, strings.HasPrefix(minor, "DAT_"), minor)
		}
		m2, n2 := Strerror(r &^ ClassMask)
		require.Equal(t, major, m2, "class bits do not change the message")
		require.Equal(t, minor, n2)
		if r.Type() != Success {
			m3, _ := Strerror(Success | r.Subtype())
			require.NotEqual(t, m3, major)
		}

		s := r.String()
		require.NotEmpty(t, s)
		require.True(t, utf8.ValidString(s))
		require.Contains(t, s, major)
		require.Contains(t, s, minor)
		require.Equal(t, r.Class() == ClassWarning, strings.HasPrefix(s, "DAT_CLASS_WARNING "))

		require.Equal(t, r == Success, r.IsSuccess())
		require.Equal(t, r&ClassError != 0, r.IsError())
		require.Equal(t, r&ClassWarning != 0, r.IsWarning())
		require.Equal(t, r, r.Class()|r.Type()|r.Subtype())

		e := &Error{Code: r, Op: op}
		msg := e.Error()
		require.True(t, strings.HasPrefix(msg, "udat: "), msg)
		require.Contains(t, msg, s)
		require.Contains(t, msg, op)
		require.True(t, errors.Is(e, &Error{Code: ClassError | r.Type()}), "an error matches its type")
		require.True(t, errors.Is(e, &Error{Code: r}), "an error matches itself")
		require.False(t, errors.Is(e, &Error{Code: ClassError | (r.Type() ^ 0x00010000)}))
		require.False(t, e.Is(nil))
		require.False(t, e.Is((*Error)(nil)))
		require.Equal(t, r, CodeOf(e))
		require.Equal(t, r, CodeOf(fmt.Errorf("wrapped: %w", e)))

		ne := newError(op, r)
		require.True(t, ne.Code.IsError())
		require.False(t, ne.Code.IsWarning())
		require.Equal(t, r&^ClassMask, ne.Code&^ClassMask)
		require.Contains(t, ne.Error(), major)
		nw := newWarning(op, r)
		require.True(t, nw.Code.IsWarning())
		require.False(t, nw.Code.IsError())

		// The other DAT enums and flag sets print whatever their value.
		for _, str := range []string{
			CompletionFlags(code).String(), DTOOp(code).String(), CloseFlags(code).String(),
			EVDFlags(code).String(), MemPriv(code).String(), EPState(code).String(),
			DTOStatus(code).String(), EventNumber(code).String(), HandleType(code).String(),
		} {
			require.NotEmpty(t, str)
			require.True(t, utf8.ValidString(str), "%q", str)
		}
	})
}

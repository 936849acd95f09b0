package udat

// Fuzz targets that need no RDMA device (go test -fuzz), built and run on
// every platform; their seeds (f.Add) run in every go test:
//
//	FuzzParseDatConf  dat.conf text into the parser
//	FuzzStrerror      DAT_RETURN values into Strerror, String and Error
//	FuzzOpenIAName    IA names into OpenIA (in the VM some of them open
//	                  rxe0; in a build without RDMA support every name
//	                  but "" fails with DAT_MODEL_NOT_SUPPORTED)
//
// The targets that post on a device are in fuzz_device_test.go. make fuzz
// runs each target for a bounded time, these on the host.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
	"github.com/udapl-go/udapl/internal/devtest"
)

const fuzzConfEntry = `ofa-v2-cma-roe-eth0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth0 0" ""`

func FuzzParseDatConf(f *testing.F) {
	for _, s := range []string{
		"",
		fuzzConfEntry,
		fuzzConfEntry + "\n" + fuzzConfEntry + "\n",
		"ofa-v2-rxe0-1u\tu2.0\tthreadsafe\tnondefault\tlibdaploucm.so.2\tdapl.2.0\t\"rxe0 1\"\t\"plat x\"  # trailing comment",
		`ofa-v2-scm-rxe0 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 rxe0 ""`,
		"# comment only\n\n   # indented comment\n\t\n",
		"x k1.2 threadsafe nondefault lib p.10.20 \"a#b\" \"\"\r\n",
		`bad-quotes u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth0 0 ""`,
		`"quoted-name" u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth0 0" ""`,
		`unterminated u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth0 0`,
		`a"b u2.0 nonthreadsafe default l dapl.2.0 "" ""`,
		`n u2. nonthreadsafe default l dapl.2.0 "" ""`,
		`n u2.0 nonthreadsafe default l .2.0 "" ""`,
		`n u2.0 nonthreadsafe default l dapl.2.x "" ""`,
		`n u2.0 nonthreadsafe default l dapl.2.0 "x"y ""`,
		"n u2.0 nonthreadsafe default l dapl.2.0 \"\x00\" \"\xff\"\n\r\n\r",
		"\x00\xff\xfe garbage \" # \"\n",
		strings.Repeat("#", 70000) + "\n" + fuzzConfEntry,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"rxe.conf", "bad.conf", "empty.conf"} {
		b, err := os.ReadFile(filepath.Join(datConfTestdata, name))
		require.NoError(f, err)
		f.Add(b)
	}
	path := filepath.Join(f.TempDir(), "dat.conf")
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := parseDatConf(bytes.NewReader(data), "fuzz.conf")
		checkDatConf(t, data, ps, err)

		// ReadDatConf reads the same entries from a file, and Providers
		// keeps the first entry of each name.
		require.NoError(t, os.WriteFile(path, data, 0o600))
		ps2, err2 := ReadDatConf(path)
		require.Equal(t, ps, ps2)
		require.Equal(t, err == nil, err2 == nil)
		t.Setenv(DatConfEnv, path)
		prov, err3 := Providers()
		if errors.Is(err, bufio.ErrTooLong) {
			require.Error(t, err3)
			return
		}
		require.NoError(t, err3)
		seen := map[string]bool{}
		var want []ProviderInfo
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				want = append(want, p)
			}
		}
		require.Equal(t, want, prov)
	})
}

// checkDatConf checks what parseDatConf made of data.
func checkDatConf(t *testing.T, data []byte, ps []ProviderInfo, err error) {
	t.Helper()
	if errors.Is(err, bufio.ErrTooLong) {
		require.Nil(t, ps, "a read error comes with no entries")
		return
	}
	// The lines bufio.ScanLines sees.
	nlines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		nlines++
	}
	nbad := 0
	if err != nil {
		joined, ok := err.(interface{ Unwrap() []error })
		require.True(t, ok, "the error %v joins one error per bad line", err)
		last := 0
		for _, e := range joined.Unwrap() {
			var le *DatConfLineError
			require.ErrorAs(t, e, &le)
			require.Equal(t, "fuzz.conf", le.Path)
			require.Greater(t, le.Line, last, "bad lines are reported once each, in order")
			require.LessOrEqual(t, le.Line, nlines)
			require.NotEmpty(t, le.Msg)
			require.Equal(t, fmt.Sprintf("udat: fuzz.conf:%d: %s", le.Line, le.Msg), le.Error())
			last = le.Line
			nbad++
		}
		require.NotZero(t, nbad)
	}
	require.LessOrEqual(t, len(ps)+nbad, nlines, "at most one entry or error per line")

	for _, p := range ps {
		// The six unquoted fields are single words.
		for i, fld := range []string{p.Name, p.APIVersion, p.ThreadSafety, p.Library, p.ProviderVersion} {
			require.NotEmpty(t, fld, "field %d of %+v", i, p)
			require.False(t, strings.ContainsAny(fld, " \t\r\n#\""), "field %d of %+v is one word", i, p)
			require.True(t, bytes.Contains(data, []byte(fld)))
		}
		require.True(t, validAPIVersion(p.APIVersion), "%+v", p)
		require.True(t, validProviderVersion(p.ProviderVersion), "%+v", p)
		require.Contains(t, []string{"threadsafe", "nonthreadsafe"}, p.ThreadSafety)
		require.Equal(t, p.ThreadSafety == "threadsafe", p.ThreadSafe())
		for _, fld := range []string{p.IAParams, p.PlatformParams} {
			require.False(t, strings.ContainsAny(fld, "\"\n"), "%+v", p)
		}
		fields := strings.Fields(p.IAParams)
		if len(fields) == 0 {
			require.Empty(t, p.NetDev())
		} else {
			require.Equal(t, fields[0], p.NetDev())
		}
		require.GreaterOrEqual(t, p.Port(), 0)

		// An entry written back as a line parses to itself.
		def := "nondefault"
		if p.Default {
			def = "default"
		}
		line := fmt.Sprintf("%s %s %s %s %s %s \"%s\" \"%s\"\n", p.Name, p.APIVersion, p.ThreadSafety, def,
			p.Library, p.ProviderVersion, p.IAParams, p.PlatformParams)
		again, err := parseDatConf(strings.NewReader(line), "again")
		require.NoError(t, err, "line %q", line)
		require.Equal(t, []ProviderInfo{p}, again, "line %q", line)
	}
}

// ---------------------------------------------------------------------------
// FuzzStrerror

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

// ---------------------------------------------------------------------------
// FuzzOpenIAName

// fuzzIAConf is the dat.conf FuzzOpenIAName points DAT_OVERRIDE at: entries
// that name the VM's device, netdev and address, and odd ones.
var fuzzIAConf = strings.Join([]string{
	`fz-dev u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "rxe0 1" ""`,
	`fz-dev u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "no-such-dev 1" ""`,
	`fz-netdev u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "d0 0" ""`,
	`fz-ip u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "192.0.2.1 0" ""`,
	`fz-ip6 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "::1 0" ""`,
	`fz-ipzone u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fe80::1%d0 0" ""`,
	`fz-lo u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "lo 0" ""`,
	`fz-empty u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "" ""`,
	`fz-blank u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "  " ""`,
	`fz-unquoted u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 rxe0 ""`,
	"fz-nul u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"rxe0\x00 1\" \"\"",
	"fz-uni u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"\u00fc0 0\" \"\"",
	`fz-long u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "` + strings.Repeat("n", 300) + ` 0" ""`,
	`fz-self u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fz-self 0" ""`,
	`fz-chain u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "fz-dev 0" ""`,
	`bad line`,
}, "\n") + "\n"

func FuzzOpenIAName(f *testing.F) {
	conf := filepath.Join(f.TempDir(), "dat.conf")
	require.NoError(f, os.WriteFile(conf, []byte(fuzzIAConf), 0o600))
	f.Setenv(DatConfEnv, conf)
	providers, _ := Providers()
	// Without RDMA support (not Linux, or no cgo) nothing opens.
	_, devErr := cverbs.Devices()
	rdma := !errors.Is(devErr, cverbs.ErrUnsupported)
	for _, s := range []string{
		"", "rxe0", "rxe1", "d0", "lo", "eth0", "192.0.2.1", "::ffff:192.0.2.1", "127.0.0.1", "::1",
		"0.0.0.0", "fe80::1%d0", "192.0.2.1:4791", "[::1]", "192.0.2.256",
		"fz-dev", "fz-netdev", "fz-ip", "fz-ip6", "fz-ipzone", "fz-lo", "fz-empty", "fz-blank",
		"fz-unquoted", "fz-nul", "fz-uni", "fz-long", "fz-self", "fz-chain", "ofa-v2-ib0",
		"rxe0\x00", "\x00", "rxe0 ", " rxe0", "RXE0", "\u00fc0", "\xff\xfe", "../rxe0", "rxe0/1",
		strings.Repeat("a", 5000), strings.Repeat("rxe0", 64),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ia, err := OpenIA(name, 8)
		if err != nil {
			require.Nil(t, ia)
			var de *Error
			require.ErrorAs(t, err, &de, "OpenIA(%q) returns a *udat.Error", name)
			require.True(t, de.Code.IsError(), "%v", err)
			if name == "" {
				require.ErrorIs(t, err, ErrInvalidParameter)
				return
			}
			if !rdma {
				require.ErrorIs(t, err, ErrModelNotSupported, "OpenIA(%q)", name)
				return
			}
			// Every name that opens nothing is an unknown provider.
			require.ErrorIs(t, err, ErrProviderNotFound, "OpenIA(%q)", name)
			return
		}
		require.True(t, rdma, "OpenIA(%q) opened an IA without RDMA support", name)
		require.NotNil(t, ia)
		defer func() { require.NoError(t, ia.Close(CloseAbruptFlag)) }()
		// Only a name that means something opens an IA: a device, a network
		// interface, an address or a provider of the dat.conf file.
		known := name == devtest.Device()
		if _, err := net.InterfaceByName(name); err == nil {
			known = true
		}
		if _, err := netip.ParseAddr(name); err == nil {
			known = true
		}
		for _, p := range providers {
			known = known || p.Name == name
		}
		require.True(t, known, "OpenIA(%q) opened an IA", name)
		a, _, err := ia.Query()
		require.NoError(t, err)
		require.NotEmpty(t, a.AdapterName)
		require.NotNil(t, ia.AsyncEVD())
	})
}

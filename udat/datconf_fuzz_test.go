package udat

// FuzzParseDatConf feeds dat.conf text to the parser of datconf.go
// (parseDatConf), and the same text as a file to ReadDatConf and Providers.
// It needs no RDMA device and has no build constraint: it builds and runs
// on every platform, its seeds (f.Add) in every go test; make fuzz runs it
// on the host.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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

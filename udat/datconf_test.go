package udat

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const datConfTestdata = "../testdata/datconf"

func TestDatConfRead(t *testing.T) {
	ps, err := ReadDatConf(filepath.Join(datConfTestdata, "rxe.conf"))
	require.NoError(t, err)
	require.Len(t, ps, 4)

	assert.Equal(t, ProviderInfo{
		Name:            "ofa-v2-cma-roe-eth0",
		APIVersion:      "u2.0",
		ThreadSafety:    "nonthreadsafe",
		Default:         true,
		Library:         "libdaplofa.so.2",
		ProviderVersion: "dapl.2.0",
		IAParams:        "eth0 0",
		PlatformParams:  "",
	}, ps[0])
	assert.Equal(t, "eth0", ps[0].NetDev())
	assert.Equal(t, 0, ps[0].Port())
	assert.False(t, ps[0].ThreadSafe())

	// Tabs, nondefault, threadsafe, a quoted value with a space and a
	// trailing comment.
	assert.Equal(t, ProviderInfo{
		Name:            "ofa-v2-rxe0-1u",
		APIVersion:      "u2.0",
		ThreadSafety:    "threadsafe",
		Default:         false,
		Library:         "libdaploucm.so.2",
		ProviderVersion: "dapl.2.0",
		IAParams:        "rxe0 1",
		PlatformParams:  "plat x",
	}, ps[1])
	assert.Equal(t, "rxe0", ps[1].NetDev())
	assert.Equal(t, 1, ps[1].Port())
	assert.True(t, ps[1].ThreadSafe())

	// Unquoted IA parameters are accepted, as by the C parser.
	assert.Equal(t, "rxe0", ps[2].IAParams)
	assert.Equal(t, "rxe0", ps[2].NetDev())
	assert.Equal(t, 0, ps[2].Port())

	// ReadDatConf keeps duplicates; Providers drops them.
	assert.Equal(t, ps[0].Name, ps[3].Name)
	assert.Equal(t, "eth1", ps[3].NetDev())
}

func TestDatConfBadLines(t *testing.T) {
	path := filepath.Join(datConfTestdata, "bad.conf")
	ps, err := ReadDatConf(path)
	require.Error(t, err)
	require.Len(t, ps, 1, "the valid entry is still returned")
	assert.Equal(t, "good", ps[0].Name)

	var lines []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var le *DatConfLineError
		require.ErrorAs(t, e, &le)
		assert.Equal(t, path, le.Path)
		lines = append(lines, le.Line)
		assert.True(t, strings.HasPrefix(le.Error(), "udat: "+path+":"), le.Error())
	}
	assert.Equal(t, []int{3, 4, 5, 6, 7, 8, 9, 10, 11}, lines)
	for _, want := range []string{"7 fields, want 8", "9 fields, want 8", `bad api version "2.0"`,
		`bad thread safety "maybe"`, `bad default field "yes"`, `bad provider version "2.0"`,
		"no space after quoted string", "field 1 must not be quoted", "unterminated quoted string"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestDatConfEmptyAndMissing(t *testing.T) {
	ps, err := ReadDatConf(filepath.Join(datConfTestdata, "empty.conf"))
	require.NoError(t, err)
	assert.Empty(t, ps)

	_, err = ReadDatConf(filepath.Join(t.TempDir(), "nope.conf"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestDatConfParseLine(t *testing.T) {
	tests := []struct {
		line string
		want []datConfField
		err  string
	}{
		{"", nil, ""},
		{"   \t ", nil, ""},
		{"# all comment", nil, ""},
		{`a b#c`, []datConfField{{text: "a"}, {text: "b"}}, ""},
		{`a "b # c" d`, []datConfField{{text: "a"}, {text: "b # c", quoted: true}, {text: "d"}}, ""},
		{`a ""`, []datConfField{{text: "a"}, {text: "", quoted: true}}, ""},
		{"a \"x\"\r", []datConfField{{text: "a"}, {text: "x", quoted: true}}, ""},
		{`a "x"#c`, []datConfField{{text: "a"}, {text: "x", quoted: true}}, ""},
		{`a "x`, nil, "unterminated"},
		{`a "x"y`, nil, "no space"},
		{`a x"y"`, nil, "quote inside"},
	}
	for _, tt := range tests {
		got, err := splitDatConfLine(tt.line)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, tt.line)
			continue
		}
		require.NoError(t, err, tt.line)
		assert.Equal(t, tt.want, got, tt.line)
	}
}

func TestDatConfVersions(t *testing.T) {
	for _, v := range []string{"u2.0", "k1.2", "u10.11"} {
		assert.True(t, validAPIVersion(v), v)
	}
	for _, v := range []string{"", "u", "u2", "2.0", "x2.0", "u2.", "u.0", "u2.0.1", "u2.x"} {
		assert.False(t, validAPIVersion(v), v)
	}
	for _, v := range []string{"dapl.2.0", "x.1.2"} {
		assert.True(t, validProviderVersion(v), v)
	}
	for _, v := range []string{"", "dapl", "dapl.2", ".2.0", "dapl.2.x", "2.0"} {
		assert.False(t, validProviderVersion(v), v)
	}
}

func TestDatConfPath(t *testing.T) {
	t.Setenv("DAT_OVERRIDE", "")
	assert.Equal(t, "/etc/dat.conf", DatConfPath())
	t.Setenv("DAT_OVERRIDE", "/tmp/my-dat.conf")
	assert.Equal(t, "/tmp/my-dat.conf", DatConfPath())
}

func TestDatConfProviders(t *testing.T) {
	t.Setenv("DAT_OVERRIDE", filepath.Join(datConfTestdata, "rxe.conf"))
	ps, err := Providers()
	require.NoError(t, err)
	require.Len(t, ps, 3, "the duplicate name keeps its first entry")
	assert.Equal(t, []string{"ofa-v2-cma-roe-eth0", "ofa-v2-rxe0-1u", "ofa-v2-scm-rxe0"},
		[]string{ps[0].Name, ps[1].Name, ps[2].Name})
	assert.Equal(t, "eth0", ps[0].NetDev())

	// Malformed lines are skipped without error, as in the C registry.
	t.Setenv("DAT_OVERRIDE", filepath.Join(datConfTestdata, "bad.conf"))
	ps, err = Providers()
	require.NoError(t, err)
	require.Len(t, ps, 1)
	assert.Equal(t, "good", ps[0].Name)

	// No file: no providers.
	t.Setenv("DAT_OVERRIDE", filepath.Join(t.TempDir(), "missing.conf"))
	ps, err = Providers()
	require.NoError(t, err)
	assert.Empty(t, ps)

	// Other read errors are reported.
	t.Setenv("DAT_OVERRIDE", t.TempDir())
	_, err = Providers()
	require.Error(t, err)
	assert.False(t, errors.Is(err, fs.ErrNotExist))
}

func TestDatConfNetDev(t *testing.T) {
	assert.Equal(t, "", ProviderInfo{}.NetDev())
	assert.Equal(t, "", ProviderInfo{IAParams: "   "}.NetDev())
	assert.Equal(t, "192.168.0.1", ProviderInfo{IAParams: " 192.168.0.1  0 "}.NetDev())
	assert.Equal(t, 2, ProviderInfo{IAParams: "mlx4_0 2"}.Port())
	assert.Equal(t, 0, ProviderInfo{IAParams: "mlx4_0 x"}.Port())
	assert.Equal(t, 0, ProviderInfo{IAParams: "mlx4_0 -1"}.Port())
}

// TestDatConfSystemFile parses the installed /etc/dat.conf (from libdapl2)
// when there is one: every line of the stock file is a valid entry.
func TestDatConfSystemFile(t *testing.T) {
	if _, err := os.Stat(DefaultDatConf); err != nil {
		t.Skipf("%s: %v", DefaultDatConf, err)
	}
	ps, err := ReadDatConf(DefaultDatConf)
	require.NoError(t, err)
	for _, p := range ps {
		assert.NotEmpty(t, p.Name)
		assert.NotEmpty(t, p.NetDev(), p.Name)
	}
}

package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, args ...string) (*config, error) {
	t.Helper()
	t.Setenv("UDAPL_DEVICE", "")
	return parseArgs(args, io.Discard)
}

func TestParseDefaults(t *testing.T) {
	c, err := parse(t, "-h", "192.0.2.1")
	require.NoError(t, err)
	assert.False(t, c.server)
	assert.Equal(t, "192.0.2.1", c.host)
	assert.Equal(t, "rxe0", c.device)
	assert.Equal(t, uint(defaultPort), c.port)
	assert.Equal(t, testQuick, c.test)
	assert.Equal(t, defaultTimeout, c.timeout)
	assert.Equal(t, opWrite, c.op)
	assert.Equal(t, 64, c.size)
	assert.Equal(t, 10000, c.iters)
	assert.Equal(t, 64, c.depth)
	assert.Equal(t, 1, c.signal)
	assert.False(t, c.block)
	assert.Equal(t, 1, c.segs)
	assert.Equal(t, 1000, c.latIters)
	assert.Equal(t, "auto", c.progress)
	assert.Equal(t, defaultYield, c.yield)
	assert.Equal(t, "auto", c.credits)
}

func TestParseServer(t *testing.T) {
	c, err := parse(t, "-s", "-D", "d0", "-p", "5000", "-sessions", "3")
	require.NoError(t, err)
	assert.True(t, c.server)
	assert.Equal(t, "d0", c.device)
	assert.Equal(t, uint(5000), c.port)
	assert.Equal(t, 3, c.sessions)
}

func TestParseDeviceFromEnv(t *testing.T) {
	t.Setenv("UDAPL_DEVICE", "siw0")
	c, err := parseArgs([]string{"-s"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "siw0", c.device)
	c, err = parseArgs([]string{"-s", "-D", "rxe1"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "rxe1", c.device, "-D wins over the environment")
}

func TestParsePerf(t *testing.T) {
	c, err := parse(t, "-h", "host", "-T", "P", "-o", "RR", "-size", "4k", "-n", "500", "-q", "32",
		"-signal", "8", "-batch", "16", "-wait", "block", "-segs", "4", "-lat-n", "0", "-progress", "on", "-json")
	require.NoError(t, err)
	assert.Equal(t, testPerf, c.test)
	assert.Equal(t, opRead, c.op)
	assert.Equal(t, 4096, c.size)
	assert.Equal(t, 500, c.iters)
	assert.Equal(t, 32, c.depth)
	assert.Equal(t, 8, c.signal)
	assert.Equal(t, 16, c.batch)
	assert.True(t, c.block)
	assert.Equal(t, 4, c.segs)
	assert.Equal(t, 0, c.latIters)
	assert.Equal(t, "on", c.progress)
	assert.True(t, c.jsonOnly)
}

func TestParseCredits(t *testing.T) {
	for _, v := range []string{"auto", "on", "OFF"} {
		c, err := parse(t, "-h", "host", "-T", "P", "-o", "send", "-credits", v)
		require.NoError(t, err, v)
		assert.Equal(t, strings.ToLower(v), c.credits)
	}
	c, err := parse(t, "-h", "host", "-T", "P", "-o", "write", "-credits", "off")
	require.NoError(t, err)
	assert.Equal(t, "off", c.credits, "off is no request, and fits any test")
}

func TestParseDoubleDashAndWords(t *testing.T) {
	c, err := parse(t, "--h=host", "--T=perf", "--o=send", "--lat", "--timeout=2s")
	require.NoError(t, err)
	assert.Equal(t, testPerf, c.test)
	assert.Equal(t, opSend, c.op)
	assert.True(t, c.lat)
	assert.Equal(t, 2*time.Second, c.timeout)
}

func TestParseTransDefaults(t *testing.T) {
	c, err := parse(t, "-c", "-h", "h", "-T", "T", "-eps", "8")
	require.NoError(t, err)
	assert.Equal(t, testTrans, c.test)
	assert.Equal(t, 8, c.eps)
	assert.Equal(t, 4096, c.size)
	assert.Equal(t, 200, c.iters)
}

func TestParseHelp(t *testing.T) {
	for _, a := range []string{"--help", "-help"} {
		_, err := parse(t, a)
		assert.True(t, errors.Is(err, flag.ErrHelp), a)
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"--help"}, &out, &errb))
	assert.Contains(t, out.String(), "Usage:")
	assert.Contains(t, out.String(), "udattest -s")
	assert.Empty(t, errb.String())
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "choose server (-s) or client (-h HOST)"},
		{[]string{"-c"}, "needs the server's address"},
		{[]string{"-s", "-h", "x"}, "exclude each other"},
		{[]string{"-h", "x", "-p", "0"}, "port must be"},
		{[]string{"-h", "x", "-p", "70000"}, "port must be"},
		{[]string{"-h", "x", "-T", "X"}, "want Q (quick)"},
		{[]string{"-h", "x", "-o", "atomic"}, "want send, write or read"},
		{[]string{"-h", "x", "-size", "lots"}, "not a size"},
		{[]string{"-h", "x", "-size", "0"}, "must be 1 B"},
		{[]string{"-h", "x", "-n", "0"}, "at least 1"},
		{[]string{"-h", "x", "-q", "0"}, "-q 0"},
		{[]string{"-h", "x", "-q", "8", "-signal", "9"}, "-signal 9"},
		{[]string{"-h", "x", "-q", "8", "-batch", "9"}, "-batch 9"},
		{[]string{"-h", "x", "-batch", "0"}, "-batch 0"},
		{[]string{"-h", "x", "-segs", "17"}, "-segs 17"},
		{[]string{"-h", "x", "-size", "2", "-segs", "3"}, "more segments than bytes"},
		{[]string{"-h", "x", "-wait", "spin"}, "want poll or block"},
		{[]string{"-h", "x", "-progress", "maybe"}, "want on or off"},
		{[]string{"-h", "x", "-T", "P", "-lat", "-o", "write", "-wait", "block"}, "no -wait block"},
		{[]string{"-h", "x", "-T", "P", "-lat", "-o", "write", "-size", "2"}, "needs -size 4"},
		{[]string{"-h", "x", "-T", "T", "-eps", "0"}, "-eps 0"},
		{[]string{"-h", "x", "extra"}, "unexpected argument"},
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"-h", "x", "-timeout", "0s"}, "-timeout must be positive"},
		{[]string{"-h", "x", "-yield", "-1ms"}, "-yield must not be negative"},
		{[]string{"-h", "x", "-T", "P", "-o", "send", "-credits", "maybe"}, "want auto, on or off"},
		{[]string{"-h", "x", "-T", "P", "-o", "write", "-credits", "on"}, "credits are for the send bandwidth test"},
		{[]string{"-h", "x", "-T", "P", "-o", "send", "-lat", "-credits", "on"}, "credits are for the send bandwidth test"},
		{[]string{"-h", "x", "-credits", "on"}, "credits are for the send bandwidth test"},
	}
	for _, tc := range cases {
		_, err := parse(t, tc.args...)
		var ue *usageError
		if assert.Truef(t, errors.As(err, &ue), "%v: want a usage error, got %v", tc.args, err) {
			assert.Containsf(t, err.Error(), tc.want, "%v", tc.args)
		}
	}
}

func TestUsageExitStatus(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run([]string{"-h", "x", "-q", "-1"}, &out, &errb))
	assert.Contains(t, errb.String(), "udattest --help")
	assert.Empty(t, out.String())
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "64": 64, "4k": 4096, "4K": 4096, "4KiB": 4096,
		"64B": 64, "1M": 1 << 20, "2m": 2 << 20, "1G": 1 << 30} {
		got, err := parseSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "k", "-1", "1.5k", "2G", "x64"} {
		_, err := parseSize(in)
		assert.Error(t, err, in)
	}
}

func TestHelpMentionsEveryFlag(t *testing.T) {
	for _, f := range []string{"-s ", "-h HOST", "-c ", "-D IA", "-p PORT", "-T ", "-timeout", "-progress", "-json",
		"-v ", "-sessions", "-o OP", "-size", "-n N", "-q N", "-signal", "-batch", "-wait", "-segs", "-lat ", "-lat-n", "-eps", "-yield", "-credits"} {
		assert.True(t, strings.Contains(usageText, f), "usage text lacks %q", f)
	}
}

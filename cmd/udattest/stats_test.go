package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func durs(vs ...int) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v)
	}
	return out
}

// ascending returns the durations 1, 2, ..., n (nanoseconds), whose p-th
// percentile is easy to tell.
func ascending(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i + 1)
	}
	return out
}

func TestPercentileNearestRank(t *testing.T) {
	// 1..100: the p-th percentile is p.
	s := ascending(100)
	assert.Equal(t, time.Duration(1), percentile(s, 1))
	assert.Equal(t, time.Duration(50), percentile(s, 50))
	assert.Equal(t, time.Duration(99), percentile(s, 99))
	assert.Equal(t, time.Duration(100), percentile(s, 99.9))
	assert.Equal(t, time.Duration(100), percentile(s, 100))

	// 1000 samples: p99.9 is the 999th, not the maximum.
	s = ascending(1000)
	assert.Equal(t, time.Duration(500), percentile(s, 50))
	assert.Equal(t, time.Duration(990), percentile(s, 99))
	assert.Equal(t, time.Duration(999), percentile(s, 99.9))

	// Small sets.
	assert.Equal(t, time.Duration(0), percentile(nil, 50))
	assert.Equal(t, time.Duration(7), percentile(durs(7), 50))
	assert.Equal(t, time.Duration(7), percentile(durs(7), 99.9))
	assert.Equal(t, time.Duration(1), percentile(durs(1, 2), 50))
	assert.Equal(t, time.Duration(2), percentile(durs(1, 2), 51))
	assert.Equal(t, time.Duration(2), percentile(durs(1, 2, 3), 50))
	assert.Equal(t, time.Duration(1), percentile(durs(1, 2, 3), 0), "p0 is the minimum")
}

func TestSummarize(t *testing.T) {
	s := make([]time.Duration, 1000)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Microsecond
	}
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	st := summarize(s)
	assert.Equal(t, 1000, st.N)
	assert.Equal(t, time.Microsecond, st.Min)
	assert.Equal(t, 1000*time.Microsecond, st.Max)
	assert.Equal(t, 500*time.Microsecond, st.P50)
	assert.Equal(t, 990*time.Microsecond, st.P99)
	assert.Equal(t, 999*time.Microsecond, st.P999)
	assert.Equal(t, 500500*time.Nanosecond, st.Avg)
	assert.Equal(t, latStats{}, summarize(nil))
}

func TestResultRates(t *testing.T) {
	var r result
	r.setRate(20000, 4096, 2*time.Second)
	assert.Equal(t, 10000.0, r.MsgRate)
	assert.InDelta(t, 39.0625, r.MBps, 1e-3, "MB is 2^20 bytes")
	assert.Equal(t, 2.0, r.Seconds)
	assert.Equal(t, int64(20000), r.Ops)
	r.setLatency(summarize(durs(1500, 2500, 3500)))
	assert.Equal(t, 2.5, r.LatP50)
	assert.Equal(t, 1.5, r.LatMin)
	assert.Equal(t, 3.5, r.LatP999)
}

func TestJSONLine(t *testing.T) {
	r := result{Tool: "udattest", Test: "perf", Mode: "bw", Op: "write", Size: 64, Iters: 10, Wait: "poll",
		MsgRate: 1234.5, MBps: 0.07, LatN: 3, LatP50: 2.5, Result: "PASSED"}
	line := r.jsonLine()
	assert.NotContains(t, line, "\n")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m))
	assert.Equal(t, "PASSED", m["result"])
	assert.Equal(t, 1234.5, m["msg_rate"])
	assert.Equal(t, 2.5, m["lat_p50_us"])
	assert.Equal(t, "write", m["op"])
	_, hasErr := m["error"]
	assert.False(t, hasErr)
}

func TestPerfTable(t *testing.T) {
	r := &result{Size: 4096, Iters: 20000, Seconds: 1.5, MsgRate: 13333.3, MBps: 52.08, LatN: 10, LatP50: 20.25, LatP99: 31, LatP999: 45.5}
	var b bytes.Buffer
	printPerfTable(&b, r, "RDMA write bandwidth")
	out := b.String()
	assert.Contains(t, out, "RDMA write bandwidth")
	assert.Contains(t, out, "#bytes")
	fields := strings.Fields(strings.Split(out, "\n")[4])
	assert.Equal(t, []string{"4096", "20000", "1.500", "13.33", "52.08", "20.25", "31.00", "45.50"}, fields)
	r.LatN = 0
	b.Reset()
	printPerfTable(&b, r, "x")
	assert.Equal(t, []string{"4096", "20000", "1.500", "13.33", "52.08", "-", "-", "-"}, strings.Fields(strings.Split(b.String(), "\n")[4]))
}

func TestProgressLine(t *testing.T) {
	p := &progress{label: "RDMA write 64 B", total: 1000, size: 64}
	l := p.line(500, time.Second)
	assert.Contains(t, l, "RDMA write 64 B: 500/1000 ops")
	assert.Contains(t, l, "50%")
	assert.Contains(t, l, "0.5 kops/s")
	assert.Contains(t, l, "eta 1s")
	var nilp *progress
	nilp.set(1) // a nil progress does nothing
	nilp.add(1)
	nilp.finish()
}

func TestProtoRoundTrip(t *testing.T) {
	r := request{test: 'P', op: opRead, lat: true, block: true, epIndex: 2, eps: 3, session: 0xdeadbeef,
		nonce: 7, size: 4096, iters: 100000, latIters: 1000, depth: 128, signal: 16, segs: 4}
	b := r.marshal()
	require.Len(t, b, reqLen)
	require.LessOrEqual(t, len(b), 56, "fits a connect's private data")
	got, err := parseRequest(b)
	require.NoError(t, err)
	assert.Equal(t, r, got)
	// Zero padding by the transport is fine.
	got, err = parseRequest(append(b, make([]byte, 8)...))
	require.NoError(t, err)
	assert.Equal(t, r, got)
	_, err = parseRequest([]byte("hello"))
	assert.Error(t, err)
	bad := r
	bad.epIndex = 3
	_, err = parseRequest(bad.marshal())
	assert.Error(t, err)

	require.NoError(t, checkReply(makeReply(42), 42))
	assert.Error(t, checkReply(makeReply(42), 43))
	assert.Error(t, checkReply([]byte("nope"), 42))

	m := ctrl{typ: msgVerify, seq: 9, a: 1, b: 2, c: 3}
	m.rmr.VirtualAddress, m.rmr.SegmentLength, m.rmr.RMRContext = 0x1000, 64, 0x77
	fillPattern(m.payload[:], 5)
	buf := make([]byte, ctrlSize)
	m.marshal(buf)
	got2, err := parseCtrl(buf)
	require.NoError(t, err)
	assert.Equal(t, m, got2)
	_, err = parseCtrl(make([]byte, ctrlSize))
	assert.Error(t, err)
}

func TestPattern(t *testing.T) {
	b := make([]byte, 1000)
	fillPattern(b, 1)
	assert.Equal(t, -1, checkPattern(b, 1))
	assert.Equal(t, 0, checkPattern(b, 2), "another seed differs at once")
	b[777] ^= 1
	assert.Equal(t, 777, checkPattern(b, 1))
	c := make([]byte, 1000)
	fillPattern(c, 2)
	assert.NotEqual(t, b, c)
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "/dev/null is a character device, not a terminal")
	assert.False(t, wantProgress("off"))
	assert.True(t, wantProgress("on"))
}

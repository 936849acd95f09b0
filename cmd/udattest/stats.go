package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample such that at least p percent of
// the samples are no greater. It returns 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The epsilon keeps float error (0.999*1000 = 999.0000000000001) from
	// moving the rank up by one.
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	return sorted[clamp(rank, 1, n)-1]
}

// latStats summarizes latency samples.
type latStats struct {
	N                             int
	Min, P50, P99, P999, Max, Avg time.Duration
}

// summarize sorts samples in place and summarizes them.
func summarize(samples []time.Duration) latStats {
	if len(samples) == 0 {
		return latStats{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return latStats{
		N:    len(samples),
		Min:  samples[0],
		P50:  percentile(samples, 50),
		P99:  percentile(samples, 99),
		P999: percentile(samples, 99.9),
		Max:  samples[len(samples)-1],
		Avg:  sum / time.Duration(len(samples)),
	}
}

// result is what a test run reports; it is printed as a table and as one
// JSON line.
type result struct {
	Tool    string  `json:"tool"`
	Test    string  `json:"test"`
	Mode    string  `json:"mode,omitempty"` // "bw" or "lat" (performance)
	Op      string  `json:"op,omitempty"`
	Size    int     `json:"size"`
	Iters   int     `json:"iters"`
	Depth   int     `json:"depth,omitempty"`
	Signal  int     `json:"signal,omitempty"`
	Batch   int     `json:"batch,omitempty"`
	Wait    string  `json:"wait"`
	Segs    int     `json:"segs,omitempty"`
	Credits bool    `json:"credits,omitempty"` // a send bandwidth run with credits
	EPs     int     `json:"eps,omitempty"`
	Seconds float64 `json:"seconds"`
	Ops     int64   `json:"ops"`
	MsgRate float64 `json:"msg_rate"` // operations per second
	MBps    float64 `json:"mb_per_s"` // MB = 2^20 bytes, as perftest and dapltest
	LatN    int     `json:"lat_samples,omitempty"`
	LatMin  float64 `json:"lat_min_us,omitempty"`
	LatP50  float64 `json:"lat_p50_us,omitempty"`
	LatP99  float64 `json:"lat_p99_us,omitempty"`
	LatP999 float64 `json:"lat_p999_us,omitempty"`
	LatMax  float64 `json:"lat_max_us,omitempty"`
	LatAvg  float64 `json:"lat_avg_us,omitempty"`
	Result  string  `json:"result"`
	Error   string  `json:"error,omitempty"`
}

func us(d time.Duration) float64 { return math.Round(float64(d)/1e3*100) / 100 }

// setRate fills the throughput fields from ops operations of size bytes in
// elapsed.
func (r *result) setRate(ops int64, size int, elapsed time.Duration) {
	r.Ops = ops
	r.Seconds = round(elapsed.Seconds(), 6)
	if elapsed > 0 {
		r.MsgRate = round(float64(ops)/elapsed.Seconds(), 2)
		r.MBps = round(float64(ops)*float64(size)/elapsed.Seconds()/(1<<20), 3)
	}
}

func (r *result) setLatency(s latStats) {
	r.LatN = s.N
	r.LatMin, r.LatP50, r.LatP99, r.LatP999 = us(s.Min), us(s.P50), us(s.P99), us(s.P999)
	r.LatMax, r.LatAvg = us(s.Max), us(s.Avg)
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// jsonLine returns the result as one line of JSON.
func (r *result) jsonLine() string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf(`{"tool":"udattest","result":"FAILED","error":%q}`, err.Error())
	}
	return string(b)
}

// printPerfTable prints a performance result the way perftest does: one
// header line, one line of numbers.
func printPerfTable(w io.Writer, r *result, title string) {
	line := strings.Repeat("-", 100)
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, " %s\n", title)
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, " %-9s %-11s %-10s %-14s %-12s %-12s %-12s %-12s\n",
		"#bytes", "#iterations", "seconds", "msg rate[k/s]", "BW[MB/sec]", "p50[usec]", "p99[usec]", "p99.9[usec]")
	lat := func(v float64) string {
		if r.LatN == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	fmt.Fprintf(w, " %-9d %-11d %-10.3f %-14.2f %-12.2f %-12s %-12s %-12s\n",
		r.Size, r.Iters, r.Seconds, r.MsgRate/1e3, r.MBps, lat(r.LatP50), lat(r.LatP99), lat(r.LatP999))
	fmt.Fprintln(w, line)
}

package benchreport

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Run is one run of one tool as scripts/bench-vm.sh recorded it: a line of
// runs.tsv, tab-separated
//
//	row  tool  rep  raw  status
//
// where raw is the client's output, a path relative to the VM's directory
// (raw/ROW.TOOL.REP, a perftest server's output beside it with .server
// added), and status is "ok" when the run ended well as far as the script
// could tell (both sides exited 0 within their bounds and the output shows
// the tool's result marker), else why it failed. A perftest run that was
// tried twice has a line for each try.
type Run struct {
	Row, Tool, Rep, Raw, Status string
}

// RunOK is the status of a run bench-vm.sh saw end well.
const RunOK = "ok"

// ParseRuns parses runs.tsv. Blank lines are skipped.
func ParseRuns(s string) ([]Run, error) {
	var rs []Run
	for i, line := range lines(s) {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 5)
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: %d fields, want 5", i+1, len(f))
		}
		rs = append(rs, Run{Row: f[0], Tool: f[1], Rep: f[2], Raw: f[3], Status: f[4]})
	}
	return rs, nil
}

// Kind is what a row measures, by its name: "conn" (connection setup,
// conn_), "lat" (a ping-pong, _lat_), "rtt" (one blocking operation at a
// time, _rtt_) or "bw" (throughput).
func Kind(row string) string {
	switch {
	case strings.HasPrefix(row, "conn_"):
		return "conn"
	case strings.Contains(row, "_lat_"):
		return "lat"
	case strings.Contains(row, "_rtt_"):
		return "rtt"
	}
	return "bw"
}

// ParseRun makes the Result of run from out, its client's output (perftest,
// dapltest -T P or udattest -json), with the metrics its tool reports for
// the row's kind and NA for the others. reason is "" for a run with a
// result, else why it failed; a failed run's values are all FAIL.
func ParseRun(run Run, out string) (r Result, reason string) {
	r = Result{Row: run.Row, Tool: run.Tool, Rep: run.Rep, Values: [nMetrics]string{NA, NA, NA, NA}}
	var err error
	switch {
	case run.Status != RunOK:
		reason = run.Status
		if run.Tool == "udapl" {
			// What udattest said went wrong, from its FAILED line.
			if e := udattestError(out); e != "" {
				reason += ": " + e
			}
		}
		if Kind(run.Row) == "conn" && strings.HasPrefix(reason, "client:") {
			// What the client said went wrong (failLine).
			if e := failLine(out, 160); e != "" {
				reason += ": " + e
			}
		}
	case Kind(run.Row) == "conn":
		err = parseDtestcm(&r, out)
	case run.Tool == "perftest":
		err = parsePerftest(&r, out)
	case run.Tool == "dapl":
		err = parseDapltest(&r, out)
	case run.Tool == "udapl":
		err = parseUdattest(&r, out)
	default:
		err = fmt.Errorf("unknown tool %q", run.Tool)
	}
	if err != nil {
		reason = err.Error()
	}
	if reason != "" {
		r.Values = [nMetrics]string{Fail, Fail, Fail, Fail}
	}
	return r, reason
}

// fields are the numbers at the given indexes of f, or an error naming
// what when f is too short or one is not a number.
func fields(f []string, what string, idx ...int) ([]float64, error) {
	vs := make([]float64, len(idx))
	for i, k := range idx {
		if k >= len(f) {
			return nil, fmt.Errorf("%s: %d fields", what, len(f))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(f[k]), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: field %d is not a number: %q", what, k+1, f[k])
		}
		vs[i] = v
	}
	return vs, nil
}

// fixed formats v with digits decimals as C's printf does, which
// bench-vm.sh's awk used: "inf" where a tool printed inf (perftest does,
// now and then, for every latency of a run), which the report takes for a
// number as it always did.
func fixed(v float64, digits int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func f2(v float64) string { return fixed(v, 2) }
func f3(v float64) string { return fixed(v, 3) }

// parsePerftest reads the line after perftest's header that starts with
// #bytes: bandwidth tests print
//
//	#bytes #iterations BW-peak BW-average MsgRate[Mpps]
//
// latency tests
//
//	#bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
//
// A bandwidth run gives its msg rate (MsgRate x 10^6) and BW-average
// (perftest's MB is 2^20 bytes), a latency run t_typical as p50 and p99.
func parsePerftest(r *Result, out string) error {
	ls := lines(out)
	line := ""
	found := false
	for i, l := range ls {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "#bytes") {
			found = true
			if i+1 < len(ls) {
				line = ls[i+1]
			}
			break
		}
	}
	if !found {
		return fmt.Errorf("no result in the output")
	}
	what := "no result line after #bytes"
	f := strings.Fields(line)
	if len(f) == 0 {
		return fmt.Errorf("%s", what)
	}
	if Kind(r.Row) == "bw" {
		v, err := fields(f, what, 4, 3)
		if err != nil {
			return err
		}
		r.Values[MsgRate], r.Values[Bandwidth] = f2(v[0]*1e6), f3(v[1])
		return nil
	}
	v, err := fields(f, what, 4, 7)
	if err != nil {
		return err
	}
	r.Values[P50], r.Values[P99] = f2(v[0]), f2(v[1])
	return nil
}

// dapltestSep separates the fields of dapltest's raw: line.
var dapltestSep = regexp.MustCompile(`, *`)

// parseDapltest reads the last raw: line of dapltest -T P:
//
//	raw: OP, iterations, seg size, segs, pipeline, cpu, ops/sec, MB/sec, latency, post, reap
//
// A throughput row gives ops/sec as the msg rate and the bandwidth from it
// and the segment size (the MB/sec dapltest prints is neither 2^20 nor
// 10^6 bytes per MB); a round-trip row (one operation at a time) 10^6 /
// ops/sec, the mean round trip, as p50.
func parseDapltest(r *Result, out string) error {
	line := ""
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "raw:") {
			line = l
		}
	}
	if line == "" {
		return fmt.Errorf("no raw: result line")
	}
	what := "raw: result line"
	f := dapltestSep.Split(strings.TrimPrefix(line, "raw: "), -1)
	v, err := fields(f, what, 6, 2)
	if err != nil {
		return err
	}
	ops, seg := v[0], v[1]
	if Kind(r.Row) == "rtt" {
		if ops <= 0 {
			return fmt.Errorf("%s: ops/sec %q", what, f[6])
		}
		r.Values[P50] = f2(1e6 / ops)
		return nil
	}
	r.Values[MsgRate], r.Values[Bandwidth] = f2(ops), f3(ops*seg/1048576)
	return nil
}

// udattestValue is the number udattest's JSON line gives key, as printed,
// or NA.
func udattestValue(line, key string) string {
	_, rest, ok := strings.Cut(line, `"`+key+`":`)
	if !ok {
		return NA
	}
	n := 0
	for n < len(rest) && strings.IndexByte("0123456789.e+-", rest[n]) >= 0 {
		n++
	}
	if n == 0 {
		return NA
	}
	return rest[:n]
}

// udattestErr matches the error of udattest's FAILED line (up to the
// first quote: an escaped one ends it).
var udattestErr = regexp.MustCompile(`"error":"([^"]*)"`)

// udattestError is the error of the last FAILED line of udattest's
// output, or "".
func udattestError(out string) string {
	m := udattestErr.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// parseUdattest reads the last PASSED line of udattest -json: its values
// as printed, msg_rate and mb_per_s for a throughput row, lat_p50_us and
// lat_p99_us for a ping-pong; a round-trip row (-q 1) gets 10^6 / msg_rate,
// the mean round trip, as p50. A value the line does not give is NA.
func parseUdattest(r *Result, out string) error {
	line := ""
	for _, l := range lines(out) {
		if strings.Contains(l, `"result":"PASSED"`) {
			line = l
		}
	}
	if line == "" {
		return fmt.Errorf("no PASSED result line")
	}
	switch Kind(r.Row) {
	case "lat":
		r.Values[P50], r.Values[P99] = udattestValue(line, "lat_p50_us"), udattestValue(line, "lat_p99_us")
	case "rtt":
		if m, ok := value(udattestValue(line, "msg_rate")); ok && m > 0 {
			r.Values[P50] = f2(1e6 / m)
		}
	default:
		r.Values[MsgRate], r.Values[Bandwidth] = udattestValue(line, "msg_rate"), udattestValue(line, "mb_per_s")
	}
	return nil
}

// ConnTools are the tools of a connection row: dtestcm's server and client,
// C (the C dtestcm of dapl2-utils) or Go (internal/cmd/dtestcmgo), as
// SERVER-CLIENT.
var ConnTools = []string{"c-c", "c-go", "go-c", "go-go"}

// dtestcmC matches the C dtestcm client's result line:
//
//	Connections:  4463.44 usec, CPS  224.04 Total 4.46 secs, poll_cnt=0, Num=1000
var dtestcmC = regexp.MustCompile(`Connections: +[0-9.]+ usec, CPS +([0-9.]+) .*Num=(\d+)`)

// dtestcmGo matches the Go port's result line: CPS 275.8
var dtestcmGo = regexp.MustCompile(`(?m)^CPS ([0-9.]+)$`)

// parseDtestcm reads a dtestcm client's connections per second (C or Go,
// both timing the same span: from the first connect to the last burst's
// ESTABLISHED events), as printed, into the msg rate.
func parseDtestcm(r *Result, out string) error {
	if m := dtestcmC.FindAllStringSubmatch(out, -1); m != nil {
		last := m[len(m)-1]
		if n, _ := strconv.Atoi(last[2]); n <= 0 {
			return fmt.Errorf("dtestcm: Num=%s connections", last[2])
		}
		r.Values[MsgRate] = last[1]
		return nil
	}
	if m := dtestcmGo.FindAllStringSubmatch(out, -1); m != nil {
		r.Values[MsgRate] = m[len(m)-1][1]
		return nil
	}
	return fmt.Errorf("no dtestcm CPS line")
}

// failLine is what a dtestcm's output (C or Go) says went wrong: its first
// line with "ERR" (the C program's errors: "ERR psp_create:
// DAT_CONN_QUAL_IN_USE", "DAPL ERR ..."; the Go port's fatal error, which
// ends it, names a DAT error), else its last line that is not blank (how
// far it got), cut to at most max bytes; "" for an empty output.
func failLine(out string, max int) string {
	ls := lines(out)
	l := ""
	for _, s := range ls {
		if strings.Contains(s, "ERR") {
			l = s
			break
		}
	}
	for i := len(ls) - 1; i >= 0 && l == ""; i-- {
		l = ls[i]
		if strings.TrimSpace(l) == "" {
			l = ""
		}
	}
	l = strings.TrimSpace(l)
	if len(l) > max {
		l = l[:max] + "..."
	}
	return l
}

// DevinfoMTU is the active MTU in ibv_devinfo's output (its first port),
// or "".
func DevinfoMTU(s string) string {
	for _, l := range lines(s) {
		if strings.Contains(l, "active_mtu") {
			if f := strings.Fields(l); len(f) >= 2 {
				return f[1]
			}
			return ""
		}
	}
	return ""
}

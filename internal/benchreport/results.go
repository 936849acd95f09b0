// Package benchreport writes BENCHMARKS.md from the results of make bench
// (command benchreport, run by scripts/bench.sh): medians, the ratios
// udapl/perftest and udapl/C DAPL, which targets are met, where the
// differences go, the spread, the failed runs and the Go benchmarks.
//
// scripts/bench-vm.sh leaves, in DIR/det (the deterministic VM) and DIR/smp
// (the 2-vCPU VM), results.tsv (a line per run: row, tool, repetition,
// msg rate, MB/s, p50 and p99 in us, each a number, NA or FAIL),
// failures.tsv (a line per failed run: row, tool, repetition, reason, raw
// output file), env.txt (KEY=VALUE lines) and gobench.txt (go test -bench
// output); scripts/bench.sh adds DIR/host.txt (commit=...). Row names differ
// between the modes, so the results of both are taken together.
// docs/performance.md says what the tables measure and why.
package benchreport

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The metrics of a result, in the order of results.tsv's columns.
const (
	MsgRate   = iota // messages a second
	Bandwidth        // MB/s, MB = 2^20 bytes
	P50              // us: p50 latency, or a mean round trip
	P99              // us
	nMetrics
)

// The values a run reports instead of a number.
const (
	NA   = "NA"   // the tool does not report this metric
	Fail = "FAIL" // the run failed
)

// Result is one run of one tool: a line of results.tsv.
type Result struct {
	Row, Tool, Rep string
	Values         [nMetrics]string // a number, NA or FAIL
}

// Failed reports whether the run failed.
func (r Result) Failed() bool { return r.Values[MsgRate] == Fail }

// Failure is a failed run with its reason: a line of failures.tsv.
type Failure struct {
	Row, Tool, Rep, Reason, Raw string
}

// Env is one VM's env.txt: KEY=VALUE lines, the first of each key.
type Env map[string]string

// Inputs is what a bench run left in its directory.
type Inputs struct {
	Dir      string
	Results  []Result
	Failures []Failure
	Env      map[string]Env    // by mode: det, smp
	GoBench  map[string]string // by mode, gobench.txt; absent or empty: not run
	Commit   string            // host.txt's commit=, "" when unknown
	Measured time.Time         // when the newer results.tsv was written
}

// Modes are the VMs of a bench run, in the order their results are read.
var Modes = []string{"det", "smp"}

// Read reads the results of a bench run from dir. It fails when neither
// VM left results.
func Read(dir string) (*Inputs, error) {
	in := &Inputs{Dir: dir, Env: map[string]Env{}, GoBench: map[string]string{}}
	for _, mode := range Modes {
		md := filepath.Join(dir, mode)
		path := filepath.Join(md, "results.tsv")
		if b, err := os.ReadFile(path); err == nil {
			rs, err := ParseResults(string(b))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			in.Results = append(in.Results, rs...)
			if st, err := os.Stat(path); err == nil && st.ModTime().After(in.Measured) {
				in.Measured = st.ModTime()
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if b, err := os.ReadFile(filepath.Join(md, "failures.tsv")); err == nil {
			in.Failures = append(in.Failures, ParseFailures(string(b))...)
		}
		if b, err := os.ReadFile(filepath.Join(md, "env.txt")); err == nil {
			in.Env[mode] = ParseEnv(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(md, "gobench.txt")); err == nil {
			in.GoBench[mode] = string(b)
		}
	}
	if len(in.Results) == 0 {
		return nil, fmt.Errorf("no results in %s or %s", filepath.Join(dir, "det"), filepath.Join(dir, "smp"))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "host.txt")); err == nil {
		in.Commit = ParseEnv(string(b))["commit"]
	}
	return in, nil
}

// ParseResults parses results.tsv: tab-separated row, tool, repetition
// and the four metrics. Blank lines are skipped.
func ParseResults(s string) ([]Result, error) {
	var rs []Result
	for i, line := range lines(s) {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3+nMetrics {
			return nil, fmt.Errorf("line %d: %d fields, want %d", i+1, len(f), 3+nMetrics)
		}
		r := Result{Row: f[0], Tool: f[1], Rep: f[2]}
		copy(r.Values[:], f[3:])
		rs = append(rs, r)
	}
	return rs, nil
}

// ParseFailures parses failures.tsv: tab-separated row, tool, repetition,
// reason and the raw output file (which takes the rest of the line).
func ParseFailures(s string) []Failure {
	var fs []Failure
	for _, line := range lines(s) {
		f := strings.SplitN(line, "\t", 5)
		f = append(f, make([]string, 5-len(f))...)
		fs = append(fs, Failure{Row: f[0], Tool: f[1], Rep: f[2], Reason: f[3], Raw: f[4]})
	}
	return fs
}

// ParseEnv parses KEY=VALUE lines; the first line of a key counts.
func ParseEnv(s string) Env {
	e := Env{}
	for _, line := range lines(s) {
		if k, v, ok := strings.Cut(line, "="); ok {
			if _, seen := e[k]; !seen {
				e[k] = v
			}
		}
	}
	return e
}

// lines splits s into lines, without the last one's newline.
func lines(s string) []string {
	var ls []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	return ls
}

// env is the value of key in mode's env.txt, or, when that VM left none,
// in the other's.
func (in *Inputs) env(key, mode string) string {
	e, ok := in.Env[mode]
	if !ok {
		e = in.Env["smp"]
	}
	return e[key]
}

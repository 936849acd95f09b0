// Package benchreport writes BENCHMARKS.md from the results of make bench
// (command benchreport, run by scripts/bench.sh): medians, the ratios
// udapl/perftest and udapl/C DAPL, which targets are met, where the
// differences go, the spread, the failed runs and the Go benchmarks.
//
// scripts/bench-vm.sh leaves, in DIR/det (the deterministic VM) and DIR/smp
// (the 2-vCPU VM), runs.tsv (a line per run: row, tool, repetition, the
// client's output file under raw/ and "ok" or why the run failed; see Run),
// the tools' outputs in raw/, env.txt (KEY=VALUE lines), ibv_devinfo.txt
// and gobench.txt (go test -bench output); scripts/bench.sh adds
// DIR/host.txt (commit=...). This package reads the numbers out of the
// tools' outputs (ParseRun). Row names differ between the modes, so the
// results of both are taken together; the connection rows, which both VMs
// run, are named after their VM (conn_rc_wait in det becomes
// conn_rc_wait_det). DIR/siw is the deterministic VM again on soft-iWARP
// (siw0), with throughput rows of the same names as det's: they are named
// with _siw (write_bw_64_siw), and have a table of their own whose ratios
// are of siw's medians only (RowName).
//
// Older runs of bench-vm.sh left, instead of runs.tsv, results.tsv (a line
// per run: row, tool, repetition, msg rate, MB/s, p50 and p99 in us, each
// a number, NA or FAIL) and failures.tsv (a line per failed run: row, tool,
// repetition, reason, raw output file); Read reads those where there is no
// runs.tsv.
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
	Measured time.Time         // when the newer runs.tsv (or results.tsv) was written
}

// Modes are the VMs of a bench run, in the order their results are read:
// the deterministic VM and the 2-vCPU VM on Soft-RoCE (rxe0), and the
// deterministic VM on soft-iWARP (siw0).
var Modes = []string{"det", "smp", "siw"}

// SiwMode is the VM whose device is soft-iWARP: its rows are named with
// the suffix _siw (write_bw_64 there is write_bw_64_siw), so that no
// median, and no ratio of medians, takes runs of two devices together.
const SiwMode = "siw"

// RowName is the name in the report of row as mode's VM ran it: a
// connection row, which both rxe VMs run, is named after its VM
// (conn_rc_wait in det is conn_rc_wait_det), and every row of the siw VM
// gets _siw.
func RowName(row, mode string) string {
	if Kind(row) == "conn" || mode == SiwMode {
		return row + "_" + mode
	}
	return row
}

// Read reads the results of a bench run from dir. It fails when neither
// VM left results.
func Read(dir string) (*Inputs, error) {
	in := &Inputs{Dir: dir, Env: map[string]Env{}, GoBench: map[string]string{}}
	for _, mode := range Modes {
		md := filepath.Join(dir, mode)
		path := filepath.Join(md, "runs.tsv")
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			path = filepath.Join(md, "results.tsv")
			b, err = os.ReadFile(path)
		}
		if err == nil {
			rs, fails, err := readResults(dir, mode, path, string(b))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			in.Results, in.Failures = append(in.Results, rs...), append(in.Failures, fails...)
			if st, err := os.Stat(path); err == nil && st.ModTime().After(in.Measured) {
				in.Measured = st.ModTime()
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if b, err := os.ReadFile(filepath.Join(md, "env.txt")); err == nil {
			in.Env[mode] = ParseEnv(string(b))
			if d, err := os.ReadFile(filepath.Join(md, "ibv_devinfo.txt")); err == nil {
				if _, ok := in.Env[mode]["mtu"]; !ok {
					in.Env[mode]["mtu"] = DevinfoMTU(string(d))
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(md, "gobench.txt")); err == nil {
			in.GoBench[mode] = string(b)
		}
	}
	if len(in.Results) == 0 {
		return nil, fmt.Errorf("no results in %s, %s or %s", filepath.Join(dir, "det"), filepath.Join(dir, "smp"), filepath.Join(dir, SiwMode))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "host.txt")); err == nil {
		in.Commit = ParseEnv(string(b))["commit"]
	}
	return in, nil
}

// readResults reads the results and failures of mode's VM from path, its
// runs.tsv (and the outputs it names) or, from older runs, its results.tsv
// (and failures.tsv), of which b is the text.
func readResults(dir, mode, path, b string) ([]Result, []Failure, error) {
	md := filepath.Join(dir, mode)
	if filepath.Base(path) == "results.tsv" {
		rs, err := ParseResults(b)
		var fails []Failure
		if f, err := os.ReadFile(filepath.Join(md, "failures.tsv")); err == nil {
			fails = ParseFailures(string(f))
		}
		return rs, fails, err
	}
	runs, err := ParseRuns(b)
	if err != nil {
		return nil, nil, err
	}
	var rs []Result
	var fails []Failure
	for _, run := range runs {
		out, err := os.ReadFile(filepath.Join(md, run.Raw))
		if err != nil && run.Status == RunOK {
			run.Status = "no output: " + err.Error()
		}
		r, reason := ParseRun(run, string(out))
		conn := Kind(run.Row) == "conn"
		// Both rxe VMs run the connection rows, each its own; siw's rows
		// are siw's.
		r.Row = RowName(run.Row, mode)
		run.Row = r.Row
		if conn {
			if strings.HasPrefix(run.Status, "server:") {
				// What the server said went wrong, from its output.
				if b, err := os.ReadFile(filepath.Join(md, run.Raw+".server")); err == nil {
					if e := failLine(string(b), 160); e != "" {
						reason += ": " + e
					}
				}
			}
		}
		rs = append(rs, r)
		if reason != "" {
			// The output's path as bench-vm.sh, given DIR/MODE, names it.
			fails = append(fails, Failure{Row: run.Row, Tool: run.Tool, Rep: run.Rep, Reason: reason, Raw: dir + "/" + mode + "/" + run.Raw})
		}
	}
	return rs, fails, nil
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

// param is the value of key in the first env.txt of Modes that has it:
// for what every VM is given alike (the iterations, the depth, the bound,
// the tools' versions), so that a run of the siw VM alone has them too.
func (in *Inputs) param(key string) string {
	for _, mode := range Modes {
		if v := in.Env[mode][key]; v != "" {
			return v
		}
	}
	return ""
}

// env is the value of key in mode's env.txt, or, when that VM left none,
// in the other's (siw's has no stand-in: another device's would mislead).
func (in *Inputs) env(key, mode string) string {
	e, ok := in.Env[mode]
	if !ok && mode != SiwMode {
		e = in.Env["smp"]
	}
	return e[key]
}

// Package testsummary summarises `go test -json` runs in one table: for each
// run (a label, such as rxe/6.1 or siw/6.1) and each package in it, how many
// top-level tests passed, were not applicable, skipped or failed; then the
// failed tests, the not-applicable ones with their reasons and the plain
// skips. Command testsummary (internal/cmd/testsummary) is its front end for
// the Makefile, which runs the tests and leaves the counting to it.
//
// A test is not applicable when it skipped with a message that starts with
// NotApplicable (t.Skip("not applicable: siw0 has no UD")): the device or
// kernel under test lacks what it tests. Any other skip is a plain skip,
// which a device run may treat as a failure, since a test that skips for
// want of a device or a peer asserts nothing.
package testsummary

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// NotApplicable starts the skip message of a test that does not apply to the
// device or kernel under test.
const NotApplicable = "not applicable:"

// Result is what became of a top-level test.
type Result int

// The results of a top-level test.
const (
	Passed  Result = iota
	NA             // skipped as not applicable
	Skipped        // skipped for another reason
	Failed
)

// Test is one top-level test of a package.
type Test struct {
	Name   string
	Result Result
	// Reasons: for NA, the distinct reasons its output gives (the text
	// after NotApplicable); for the failure that stands for a package
	// without a failed test (Name is then the package's), why it failed.
	Reasons []string
	// Output is what a failed test printed, its subtests' lines included.
	Output string
}

// Package is what one package's tests came to in one run. It has a test
// named as the package when the package failed without a failed test (its
// build failed, it exited or timed out), so that no package failure goes
// uncounted.
type Package struct {
	Name  string
	Tests []Test // top-level tests, in the order they ended
}

// Counts are numbers of top-level tests by result.
type Counts struct {
	Passed, NA, Skipped, Failed int
}

func (c *Counts) add(o Counts) {
	c.Passed += o.Passed
	c.NA += o.NA
	c.Skipped += o.Skipped
	c.Failed += o.Failed
}

// Counts counts p's tests by result.
func (p *Package) Counts() Counts {
	var c Counts
	for _, t := range p.Tests {
		switch t.Result {
		case Passed:
			c.Passed++
		case NA:
			c.NA++
		case Skipped:
			c.Skipped++
		case Failed:
			c.Failed++
		}
	}
	return c
}

// Run is one `go test -json` output: the packages that ran a test or failed,
// in the order they started.
type Run struct {
	Label    string
	Packages []*Package
}

// Counts sums the counts of r's packages.
func (r *Run) Counts() Counts {
	var c Counts
	for _, p := range r.Packages {
		c.add(p.Counts())
	}
	return c
}

// event is the part of a test2json event that the summary needs.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// pkgState follows one package through the events.
type pkgState struct {
	pkg   *Package
	ended bool
	// output of each top-level test still running, its subtests' included,
	// kept whole because test2json may split a long line across events
	output  map[string]*strings.Builder
	running []string // top-level tests started and not ended
}

// ReadFile reads the `go test -json` output in file as the run label.
func ReadFile(label, file string) (*Run, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	run, err := Parse(label, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return run, nil
}

// Parse reads `go test -json` output as the run label. Lines that are not
// JSON objects are ignored: they are the go command's own messages when its
// standard error goes to the same file. A package that started and has no
// result (the output was cut short) counts as failed.
func Parse(label string, r io.Reader) (*Run, error) {
	var order []*pkgState
	pkgs := map[string]*pkgState{}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if trimmed := strings.TrimSpace(string(line)); strings.HasPrefix(trimmed, "{") {
			var e event
			if jerr := json.Unmarshal([]byte(trimmed), &e); jerr != nil {
				return nil, fmt.Errorf("line %d: %w", n, jerr)
			}
			// Build events name an import path, not a package: the
			// package's own fail event follows them.
			if e.Package != "" {
				s := pkgs[e.Package]
				if s == nil {
					s = &pkgState{pkg: &Package{Name: e.Package}, output: map[string]*strings.Builder{}}
					pkgs[e.Package] = s
					order = append(order, s)
				}
				s.handle(e)
			}
		}
		if err != nil {
			break
		}
	}
	run := &Run{Label: label}
	for _, s := range order {
		if !s.ended {
			s.packageFailed("no result: the output is cut short")
		}
		if len(s.pkg.Tests) > 0 {
			run.Packages = append(run.Packages, s.pkg)
		}
	}
	return run, nil
}

func (s *pkgState) handle(e event) {
	top, _, _ := strings.Cut(e.Test, "/")
	switch {
	case e.Action == "output" && top != "":
		b := s.output[top]
		if b == nil {
			b = &strings.Builder{}
			s.output[top] = b
		}
		b.WriteString(e.Output)
	case e.Action == "run" && e.Test == top:
		s.running = append(s.running, top)
	case isEnd(e.Action) && top != "" && e.Test == top:
		t := Test{Name: top}
		switch e.Action {
		case "pass":
			t.Result = Passed
		case "fail":
			t.Result = Failed
			if b := s.output[top]; b != nil {
				t.Output = b.String()
			}
		case "skip":
			t.Result = Skipped
			if b := s.output[top]; b != nil {
				t.Reasons = naReasons(b.String())
			}
			if len(t.Reasons) > 0 {
				t.Result = NA
			}
		}
		s.pkg.Tests = append(s.pkg.Tests, t)
		delete(s.output, top)
		s.running = slices.DeleteFunc(s.running, func(n string) bool { return n == top })
	case isEnd(e.Action) && top == "":
		s.ended = true
		if e.Action != "fail" || slices.ContainsFunc(s.pkg.Tests, func(t Test) bool { return t.Result == Failed }) {
			return
		}
		switch {
		case e.FailedBuild != "":
			s.packageFailed("build failed")
		case len(s.running) > 0:
			s.packageFailed("did not finish: " + strings.Join(s.running, ", "))
		default:
			s.packageFailed("the test binary failed after its tests")
		}
	}
}

func isEnd(action string) bool {
	return action == "pass" || action == "fail" || action == "skip"
}

// packageFailed counts a failure of the package that no test accounts for.
func (s *pkgState) packageFailed(reason string) {
	s.pkg.Tests = append(s.pkg.Tests, Test{Name: s.pkg.Name, Result: Failed, Reasons: []string{reason}})
}

// naReasons returns the distinct reasons of the lines of output that start
// with NotApplicable, after the file:line prefix of t.Log and t.Skip.
func naReasons(output string) []string {
	var reasons []string
	for line := range strings.Lines(output) {
		msg := strings.TrimSpace(line)
		if pos, rest, ok := strings.Cut(msg, ": "); ok && isPosition(pos) {
			msg = rest
		}
		if reason, ok := strings.CutPrefix(msg, NotApplicable); ok {
			if reason = strings.TrimSpace(reason); !slices.Contains(reasons, reason) {
				reasons = append(reasons, reason)
			}
		}
	}
	return reasons
}

// isPosition reports whether s is a file:line position such as foo_test.go:12.
func isPosition(s string) bool {
	file, line, ok := strings.Cut(s, ".go:")
	if !ok || file == "" || line == "" {
		return false
	}
	return strings.Trim(line, "0123456789") == ""
}

// Problems returns why runs fail as a whole, one line each, or nothing when
// they pass: failed tests, and runs with no test at all (a run that ran
// nothing asserts nothing); with skipsFail, plain skips too.
func Problems(runs []*Run, skipsFail bool) []string {
	var probs []string
	for _, r := range runs {
		c := r.Counts()
		switch {
		case c == Counts{}:
			probs = append(probs, r.Label+": no tests ran")
		case c.Failed > 0:
			probs = append(probs, fmt.Sprintf("%s: %d failed", r.Label, c.Failed))
		}
		if skipsFail && c.Skipped > 0 {
			probs = append(probs, fmt.Sprintf("%s: %d skipped (-skips-fail)", r.Label, c.Skipped))
		}
	}
	return probs
}

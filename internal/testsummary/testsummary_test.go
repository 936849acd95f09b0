package testsummary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The testdata files are `go test -json` output of a throwaway module
// (example.com/tsamp), trimmed of times and of most RUN and stack lines:
//
//	mixed.json  ./... : package broken does not build; good has a pass, a
//	            failure, a plain skip, a not-applicable skip, a test whose
//	            subtest is not applicable, one not applicable with its
//	            subtests, one with a failed subtest; panicky has a panic
//	skips.json  good -run 'TestPass|TestSkip|TestNA|TestSubs$'
//	na.json     good -run 'TestPass|TestNA|TestSubsNA'
//	none.json   good -run XXX (no tests ran)
//	hang.json   hang -timeout 2s: TestHang never ends
const (
	broken  = "example.com/tsamp/broken"
	good    = "example.com/tsamp/good"
	panicky = "example.com/tsamp/panicky"
	hang    = "example.com/tsamp/hang"
)

func read(t *testing.T, label, name string) *Run {
	t.Helper()
	r, err := ReadFile(label, filepath.Join("testdata", name))
	require.NoError(t, err)
	return r
}

func pkg(t *testing.T, r *Run, name string) *Package {
	t.Helper()
	for _, p := range r.Packages {
		if p.Name == name {
			return p
		}
	}
	require.Failf(t, "no package", "%s in run %s", name, r.Label)
	return nil
}

// results maps each test of p to its result.
func results(p *Package) map[string]Result {
	m := map[string]Result{}
	for _, t := range p.Tests {
		m[t.Name] = t.Result
	}
	return m
}

func TestCounts(t *testing.T) {
	r := read(t, "rxe", "mixed.json")
	require.Equal(t, []string{broken, good, panicky}, []string{r.Packages[0].Name, r.Packages[1].Name, r.Packages[2].Name})

	// Subtests are not counted: TestSubs passed though its subtest b/c
	// skipped, TestSubFail failed once for its failed subtest.
	require.Equal(t, map[string]Result{
		"TestPass": Passed, "TestFail": Failed, "TestSkip": Skipped, "TestNA": NA,
		"TestSubs": Passed, "TestSubsNA": NA, "TestSubFail": Failed,
	}, results(pkg(t, r, good)))
	require.Equal(t, Counts{Passed: 2, NA: 2, Skipped: 1, Failed: 2}, pkg(t, r, good).Counts())

	// A test that panics fails; the package's failure is not counted again.
	require.Equal(t, Counts{Passed: 1, Failed: 1}, pkg(t, r, panicky).Counts())

	// A build failure is one failure, named as the package.
	require.Equal(t, []Test{{Name: broken, Result: Failed, Reasons: []string{"build failed"}}}, pkg(t, r, broken).Tests)

	require.Equal(t, Counts{Passed: 3, NA: 2, Skipped: 1, Failed: 4}, r.Counts())
}

func TestTimeout(t *testing.T) {
	p := pkg(t, read(t, "hang", "hang.json"), hang)
	require.Equal(t, Counts{Passed: 1, Failed: 1}, p.Counts())
	require.Equal(t, Test{Name: hang, Result: Failed, Reasons: []string{"did not finish: TestHang"}}, p.Tests[1])
}

func TestCutShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "skips.json"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	r, err := Parse("cut", strings.NewReader(strings.Join(lines[:len(lines)/2], "")))
	require.NoError(t, err)
	p := pkg(t, r, good)
	require.Equal(t, Failed, p.Tests[len(p.Tests)-1].Result)
	require.Equal(t, good, p.Tests[len(p.Tests)-1].Name)
}

func TestNAReasons(t *testing.T) {
	p := pkg(t, read(t, "siw", "na.json"), good)
	reasons := map[string][]string{}
	for _, test := range p.Tests {
		reasons[test.Name] = test.Reasons
	}
	// TestSubsNA and its two subtests each give the same reason.
	require.Equal(t, map[string][]string{
		"TestPass":   nil,
		"TestNA":     {"siw0 has no UD"},
		"TestSubsNA": {"siw0 has no atomics"},
	}, reasons)

	require.Equal(t, []string{"no SRQ", "no UD"}, naReasons(
		"=== RUN   TestX\n    x_test.go:3: not applicable: no SRQ\n"+
			"not applicable: no UD\n    x_test.go:4: it is not applicable: no\n"+
			"    x_test.go:5: not applicable:  no SRQ \n"))
}

func TestParseErrors(t *testing.T) {
	_, err := ReadFile("x", filepath.Join("testdata", "absent.json"))
	require.Error(t, err)

	_, err = Parse("x", strings.NewReader(`{"Action":"start","Package":"p"}`+"\n{\"Action\":\n"))
	require.ErrorContains(t, err, "line 2")

	// The go command's own messages, on the same file, are not events.
	r, err := Parse("x", strings.NewReader("go: downloading example.com/m v1.0.0\n"+
		`{"Action":"run","Package":"p","Test":"TestA"}`+"\n"+
		`{"Action":"pass","Package":"p","Test":"TestA"}`+"\n"+
		`{"Action":"pass","Package":"p"}`))
	require.NoError(t, err)
	require.Equal(t, Counts{Passed: 1}, r.Counts())
}

func TestProblems(t *testing.T) {
	mixed, skips, na, none := read(t, "rxe", "mixed.json"), read(t, "skips", "skips.json"), read(t, "siw", "na.json"), read(t, "none", "none.json")
	require.Empty(t, Problems([]*Run{skips, na}, false))
	require.Empty(t, Problems([]*Run{na}, true), "not applicable is no skip")
	require.Equal(t, []string{"skips: 1 skipped (-skips-fail)"}, Problems([]*Run{skips, na}, true))
	require.Equal(t, []string{"rxe: 4 failed", "none: no tests ran"}, Problems([]*Run{mixed, na, none}, false))
}

func TestMainStatus(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		for i, a := range args {
			if label, file, ok := strings.Cut(a, "="); ok {
				args[i] = label + "=" + filepath.Join("testdata", file)
			}
		}
		return Main(args, &out, &errs), errs.String()
	}
	status, _ := run("siw=na.json", "skips=skips.json")
	require.Equal(t, 0, status)
	status, errs := run("-skips-fail", "siw=na.json", "skips=skips.json")
	require.Equal(t, 1, status)
	require.Contains(t, errs, "skips: 1 skipped")
	status, errs = run("siw=na.json", "gone=absent.json")
	require.Equal(t, 1, status)
	require.Contains(t, errs, "gone:")
	status, _ = run("none=none.json")
	require.Equal(t, 1, status)
	status, _ = run("rxe=mixed.json")
	require.Equal(t, 1, status)
	status, _ = run("na.json")
	require.Equal(t, 2, status)
	status, _ = run()
	require.Equal(t, 2, status)
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, []*Run{read(t, "rxe/6.1", "mixed.json"), read(t, "siw/6.1", "na.json")}))
	out := b.String()
	t.Log("\n" + out)
	table, lists, _ := strings.Cut(out, "\n\n")

	rows := strings.Split(table, "\n")
	want := [][]string{
		{"run", "package", "passed", "n/a", "skipped", "failed"},
		{"rxe/6.1", broken, "0", "0", "0", "1"},
		{"rxe/6.1", good, "2", "2", "1", "2"},
		{"rxe/6.1", panicky, "1", "0", "0", "1"},
		{"siw/6.1", good, "1", "2", "0", "0"},
		{"rxe/6.1", "total", "3", "2", "1", "4"},
		{"siw/6.1", "total", "1", "2", "0", "0"},
	}
	require.Len(t, rows, len(want))
	for i, row := range rows {
		require.Equal(t, want[i], strings.Fields(row))
		// Numbers align to the right, so that every row ends at the
		// same column.
		require.Len(t, row, len(rows[0]), "row %q", row)
		require.Equal(t, strings.Index(rows[0], "package"), strings.Index(row, want[i][1]), "row %q", row)
	}

	var got [][]string
	for line := range strings.Lines(lists) {
		got = append(got, strings.Fields(line))
	}
	require.Equal(t, [][]string{
		{"failed:"},
		{"rxe/6.1", broken, broken, "build", "failed"},
		{"rxe/6.1", good, "TestFail"},
		{"rxe/6.1", good, "TestSubFail"},
		{"rxe/6.1", panicky, "TestPanic"},
		{},
		{"not", "applicable:"},
		{"rxe/6.1", good, "TestNA", "siw0", "has", "no", "UD"},
		{"rxe/6.1", good, "TestSubsNA", "siw0", "has", "no", "atomics"},
		{"siw/6.1", good, "TestNA", "siw0", "has", "no", "UD"},
		{"siw/6.1", good, "TestSubsNA", "siw0", "has", "no", "atomics"},
		{},
		{"skipped:"},
		{"rxe/6.1", good, "TestSkip"},
	}, got)
}

// A failed test keeps what it printed, and -failed-output prints it ahead
// of the table under a line that names it.
func TestFailedOutput(t *testing.T) {
	r := read(t, "rxe", "mixed.json")
	var b strings.Builder
	require.NoError(t, WriteFailedOutput(&b, []*Run{r}))
	require.Contains(t, b.String(), "=== rxe "+good+" TestFail\n    good_test.go:7: boom\n")
	require.NotContains(t, b.String(), "TestPass")

	var out, errs strings.Builder
	Main([]string{"-failed-output", "rxe=" + filepath.Join("testdata", "mixed.json")}, &out, &errs)
	before, _, ok := strings.Cut(out.String(), "run ")
	require.True(t, ok, "the table follows")
	require.Contains(t, before, "good_test.go:7: boom")
}

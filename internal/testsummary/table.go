package testsummary

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteTable writes the summary of runs: a row per run and package with its
// counts, a total row per run, then a line per failed, not-applicable and
// plain-skipped test (not-applicable ones with their reasons, failures
// standing for a package with why it failed).
func WriteTable(w io.Writer, runs []*Run) error {
	rows := [][]string{{"run", "package", "passed", "n/a", "skipped", "failed"}}
	for _, r := range runs {
		for _, p := range r.Packages {
			rows = append(rows, countRow(r.Label, p.Name, p.Counts()))
		}
	}
	for _, r := range runs {
		rows = append(rows, countRow(r.Label, "total", r.Counts()))
	}
	var b strings.Builder
	writeAligned(&b, rows, 2)
	for _, sec := range []struct {
		title  string
		result Result
	}{{"failed", Failed}, {"not applicable", NA}, {"skipped", Skipped}} {
		var lines [][]string
		for _, r := range runs {
			for _, p := range r.Packages {
				for _, t := range p.Tests {
					if t.Result == sec.result {
						lines = append(lines, []string{"  " + r.Label, p.Name, t.Name, strings.Join(t.Reasons, "; ")})
					}
				}
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n%s:\n", sec.title)
			writeAligned(&b, lines, len(lines[0]))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFailedOutput writes what each failed test of runs printed, under a
// line that names it: the log of a run whose go test -json output went to a
// file still shows why a test failed.
func WriteFailedOutput(w io.Writer, runs []*Run) error {
	var b strings.Builder
	for _, r := range runs {
		for _, p := range r.Packages {
			for _, t := range p.Tests {
				if t.Result == Failed && t.Output != "" {
					fmt.Fprintf(&b, "=== %s %s %s\n%s", r.Label, p.Name, t.Name, t.Output)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func countRow(label, pkg string, c Counts) []string {
	return []string{label, pkg, strconv.Itoa(c.Passed), strconv.Itoa(c.NA), strconv.Itoa(c.Skipped), strconv.Itoa(c.Failed)}
}

// writeAligned writes rows in columns two spaces apart, those from column
// right on aligned to the right, the others to the left; lines carry no
// trailing blanks.
func writeAligned(b *strings.Builder, rows [][]string, right int) {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(cell))
			if i >= right {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

package testsummary

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// usage is the command line of command testsummary.
const usage = "testsummary [-skips-fail] [-failed-output] LABEL=FILE [LABEL=FILE ...]"

// Main is command testsummary: args are its arguments (without the program
// name). It writes the table of the runs to stdout and what fails them to
// stderr, and returns the exit status: 0 when all pass, 1 when a test failed,
// a file could not be read or parsed or a run has no tests (or, with
// -skips-fail, a test skipped other than as not applicable), 2 on a usage
// error.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	skipsFail := fs.Bool("skips-fail", false, "count plain skips (not \"not applicable\") as failures")
	failedOutput := fs.Bool("failed-output", false, "print what each failed test printed, before the table")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n  FILE: the output of go test -json\n", usage)
		fs.PrintDefaults()
	}
	if fs.Parse(args) != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	status := 0
	var runs []*Run
	for _, arg := range fs.Args() {
		label, file, ok := strings.Cut(arg, "=")
		if !ok || label == "" || file == "" {
			fmt.Fprintf(stderr, "testsummary: %q is not LABEL=FILE\n", arg)
			return 2
		}
		run, err := ReadFile(label, file)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %s: %v\n", label, err)
			status = 1
			continue
		}
		runs = append(runs, run)
	}
	if *failedOutput {
		if err := WriteFailedOutput(stdout, runs); err != nil {
			fmt.Fprintln(stderr, "testsummary:", err)
			status = 1
		}
	}
	if err := WriteTable(stdout, runs); err != nil {
		fmt.Fprintln(stderr, "testsummary:", err)
		status = 1
	}
	for _, p := range Problems(runs, *skipsFail) {
		fmt.Fprintln(stderr, "testsummary:", p)
		status = 1
	}
	return status
}

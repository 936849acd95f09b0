// Command testsummary prints one table of the results of `go test -json`
// runs, each under a label, and fails when a test failed or a run has no
// tests (see package testsummary):
//
//	testsummary [-skips-fail] LABEL=FILE [LABEL=FILE ...]
//
// For example, testsummary rxe/6.1=/tmp/t-rxe.json siw/6.1=/tmp/t-siw.json.
// With -skips-fail, a test that skipped other than as not applicable fails
// the runs too: a device run must not skip silently.
package main

import (
	"os"

	"github.com/udapl-go/udapl/internal/testsummary"
)

func main() {
	os.Exit(testsummary.Main(os.Args[1:], os.Stdout, os.Stderr))
}

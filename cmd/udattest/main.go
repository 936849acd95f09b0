// Command udattest tests a uDAPL (DAT) provider end to end and measures it,
// like the C tools dtest and dapltest: a server and a client, a quick check,
// a performance test and a transaction test. It is built only on package
// udat. Run udattest --help for its usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// progressOut is where the progress line goes.
var progressOut io.Writer = os.Stderr

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "udattest: %v\nRun 'udattest --help' for usage.\n", err)
		return 2
	}
	yieldInterval, latCausesDir = cfg.yield, cfg.causes
	if cfg.cpuProf != "" {
		f, err := os.Create(cfg.cpuProf)
		if err != nil {
			fmt.Fprintf(stderr, "udattest: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "udattest: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.server {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := runServer(ctx, cfg, stdout); err != nil {
			fmt.Fprintf(stderr, "udattest: %v\n", err)
			return 1
		}
		return 0
	}
	return runClient(cfg, stdout, stderr)
}

// runClient runs the test the configuration names and prints its result.
func runClient(cfg *config, stdout, stderr io.Writer) int {
	prog := wantProgress(cfg.progress)
	var res *result
	var err error
	switch cfg.test {
	case testQuick:
		res, err = runQuick(cfg, stdout)
	case testPerf:
		res, err = runPerf(cfg, stdout, prog)
		if err == nil && !cfg.jsonOnly {
			printPerfTable(stdout, res, perfTitle(cfg, res.Credits))
		}
	case testTrans:
		res, err = runTrans(cfg, stdout, prog)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "udattest: %v\nRun 'udattest --help' for usage.\n", err)
		return 2
	}
	if err != nil {
		res.Result, res.Error = "FAILED", err.Error()
		fmt.Fprintf(stderr, "udattest: %v\n", err)
	}
	if !cfg.jsonOnly {
		fmt.Fprintln(stdout, res.Result)
	}
	fmt.Fprintln(stdout, res.jsonLine())
	if err != nil {
		return 1
	}
	return 0
}

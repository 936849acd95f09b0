// Command instrcount counts user-space instructions per operation from
// callgrind profiles: each process is profiled twice, with N1 and N2
// operations, and an operation costs (Ir(N2) - Ir(N1)) / (N2 - N1), so that
// start-up, connection and teardown cancel out. scripts/bench-instr.sh
// makes the profiles (`make bench-instr`); this program does the
// arithmetic and writes the tables.
//
//	instrcount report -dir DIR [-md BENCHMARKS.md]
//	    the tables of a bench-instr run (DIR: the profiles and env.txt of
//	    scripts/bench-instr-vm.sh); printed, or with -md written into that
//	    file as its first section (the rest of the file is kept)
//	instrcount pair -tool udapl|dapl|perftest|c [-dapl VERSION] [-top K] N1 FILE1 N2 FILE2
//	    one process's count per operation, with (udapl) the split and
//	    (udapl, c) the K functions that cost the most per operation; c is
//	    a C program's whole process (dtestcm: scripts/cm-instr.sh)
//	instrcount splice -md FILE -from OLD
//	    puts OLD's instruction section into FILE (as its first section,
//	    replacing one FILE has): scripts/bench.sh keeps it across
//	    internal/cmd/benchreport, which writes the rest of BENCHMARKS.md
//	instrcount trim -tool udapl|dapl|perftest IN1 IN2 OUT1 OUT2
//	    a small copy of a pair of profiles that counts the same (testdata)
//	instrcount guard -budget FILE N1 FILE1 N2 FILE2
//	    the instruction guard (scripts/instr-guard.sh): each row of FILE
//	    per DTO, from profiles of udat's guard test run with N1 and N2
//	    rounds, against its budget; fails when a row is over
//
// What each tool's count is: udapl (a Go program) the whole process less
// the Go runtime's monitor thread; perftest its measurement loop function;
// dapltest its throughput loop (see daplBuilds).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "report":
		err = cmdReport(os.Args[2:])
	case "pair":
		err = cmdPair(os.Args[2:], os.Stdout)
	case "splice":
		err = cmdSplice(os.Args[2:])
	case "trim":
		err = cmdTrim(os.Args[2:])
	case "guard":
		err = cmdGuard(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "instrcount:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: instrcount report -dir DIR [-md FILE]
       instrcount pair -tool udapl|dapl|perftest|c [-dapl VERSION] [-top K] N1 FILE1 N2 FILE2
       instrcount splice -md FILE -from OLD
       instrcount trim -tool udapl|dapl|perftest IN1 IN2 OUT1 OUT2
       instrcount guard -budget FILE N1 FILE1 N2 FILE2`)
	os.Exit(2)
}

func cmdPair(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("pair", flag.ExitOnError)
	tool := fs.String("tool", "udapl", "udapl, dapl, perftest or c")
	dapl := fs.String("dapl", "2.1.10.1.f1e05b7a-3+b1", "dapl2-utils version (which build of dapltest)")
	top := fs.Int("top", 25, "functions to list (udapl, c)")
	fs.Parse(args)
	if fs.NArg() != 4 {
		return fmt.Errorf("pair: want N1 FILE1 N2 FILE2")
	}
	n1, err1 := strconv.ParseInt(fs.Arg(0), 10, 64)
	n2, err2 := strconv.ParseInt(fs.Arg(2), 10, 64)
	if err1 != nil || err2 != nil || n1 == n2 {
		return fmt.Errorf("pair: N1 and N2 must be two different numbers")
	}
	r1, err := loadRun(*tool, fs.Arg(1), *dapl)
	if err != nil {
		return err
	}
	r2, err := loadRun(*tool, fs.Arg(3), *dapl)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d instructions at N=%d, %d at N=%d: %.1f per operation\n",
		*tool, r1.Count, n1, r2.Count, n2, perOp(r1.Count, r2.Count, n1, n2))
	if r2.Loop != "" {
		fmt.Fprintf(w, "measurement loop: %s\n", r2.Loop)
	}
	if r1.Profile == nil {
		return nil
	}
	if *tool == "udapl" {
		s1, s2 := split(r1.Profile), split(r2.Profile)
		var sum float64
		for _, c := range categories {
			v := perOp(s1[c], s2[c], n1, n2)
			sum += v
			fmt.Fprintf(w, "  %-48s %8.2f\n", c, v)
		}
		fmt.Fprintf(w, "  %-48s %8.1f\n", "sum", sum)
	}
	for i, d := range funcDeltas(r1.Profile, r2.Profile, n1, n2) {
		if i == *top {
			break
		}
		fmt.Fprintf(w, "%8.1f  %-10.10s  %s  (%s)\n", d.PerOp, d.Cat, d.Key.Name, d.File)
	}
	return nil
}

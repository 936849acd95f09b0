// Command benchreport writes BENCHMARKS.md, to stdout, from the results
// scripts/bench.sh's VMs left in DIR (see package benchreport):
//
//	benchreport DIR
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/udapl-go/udapl/internal/benchreport"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport DIR")
		os.Exit(2)
	}
	in, err := benchreport.Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	err = benchreport.Write(w, in)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

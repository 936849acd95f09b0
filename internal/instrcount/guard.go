package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The instruction guard (make guard, scripts/instr-guard.sh): udat's post
// and completion of one DTO over cverbs.FakeDevice, counted by callgrind
// on the host, against budgets checked into the repository. A row R of the
// budget file is the inclusive cost of the methods (*guardRig).countRPost
// and (*guardRig).countRDequeue of udat/instrguard_test.go (or the one of
// them it has), per round, divided by the DTOs one round moves.

// guardRow is one line of the budget file.
type guardRow struct {
	Name   string
	DTOs   int64 // per round
	Budget int64 // instructions per DTO
}

// readBudget parses the budget file: "row DTOs budget" per line; # starts
// a comment.
func readBudget(r io.Reader) ([]guardRow, error) {
	var rows []guardRow
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want row, DTOs per round, budget", line)
		}
		dtos, err1 := strconv.ParseInt(f[1], 10, 64)
		budget, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || dtos < 1 || budget < 1 {
			return nil, fmt.Errorf("line %d: DTOs and budget must be positive numbers", line)
		}
		rows = append(rows, guardRow{f[0], dtos, budget})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no rows")
	}
	return rows, nil
}

// guardCost is the inclusive cost of row's counted methods in p: its post
// and its dequeue, or only one of them (an empty poll has no post). A row
// that measures nothing fails.
func guardCost(p *Profile, row string) (int64, error) {
	var sum int64
	found := false
	for _, part := range []string{"Post", "Dequeue"} {
		name := "(*guardRig).count" + row + part
		for k, f := range p.Funcs {
			if strings.HasSuffix(k.Name, name) {
				sum += f.Inclusive()
				found = true
			}
		}
	}
	if !found {
		return 0, fmt.Errorf("row %s: no function (*guardRig).count%sPost or count%[2]sDequeue in the profile", row, row)
	}
	return sum, nil
}

// guardResult is a row measured.
type guardResult struct {
	guardRow
	PerDTO float64
}

func (g guardResult) over() bool { return g.PerDTO > float64(g.Budget) }

// measureGuard measures every row from the profiles of n1 and n2 rounds.
func measureGuard(rows []guardRow, n1 int64, p1 *Profile, n2 int64, p2 *Profile) ([]guardResult, error) {
	var out []guardResult
	for _, r := range rows {
		c1, err := guardCost(p1, r.Name)
		if err != nil {
			return nil, err
		}
		c2, err := guardCost(p2, r.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, guardResult{r, perOp(c1, c2, n1, n2) / float64(r.DTOs)})
	}
	return out, nil
}

// writeGuard prints the table and reports whether every row is within its
// budget.
func writeGuard(w io.Writer, res []guardResult) bool {
	ok := true
	fmt.Fprintf(w, "%-10s %6s %10s %8s\n", "row", "DTOs", "per DTO", "budget")
	for _, r := range res {
		verdict := "ok"
		if r.over() {
			verdict, ok = "OVER BUDGET", false
		}
		fmt.Fprintf(w, "%-10s %6d %10.1f %8d  %s\n", r.Name, r.DTOs, r.PerDTO, r.Budget, verdict)
	}
	return ok
}

func cmdGuard(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("guard", flag.ExitOnError)
	budget := fs.String("budget", "", "the budget file")
	fs.Parse(args)
	if fs.NArg() != 4 || *budget == "" {
		return fmt.Errorf("guard: want -budget FILE N1 FILE1 N2 FILE2")
	}
	n1, err1 := strconv.ParseInt(fs.Arg(0), 10, 64)
	n2, err2 := strconv.ParseInt(fs.Arg(2), 10, 64)
	if err1 != nil || err2 != nil || n1 == n2 {
		return fmt.Errorf("guard: N1 and N2 must be two different numbers")
	}
	f, err := os.Open(*budget)
	if err != nil {
		return err
	}
	rows, err := readBudget(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *budget, err)
	}
	p1, err := ReadProfile(fs.Arg(1))
	if err != nil {
		return err
	}
	p2, err := ReadProfile(fs.Arg(3))
	if err != nil {
		return err
	}
	res, err := measureGuard(rows, n1, p1, n2, p2)
	if err != nil {
		return err
	}
	if !writeGuard(w, res) {
		return fmt.Errorf("guard: a row costs more than its budget (%s); if that is intended, raise the budget there", *budget)
	}
	return nil
}

package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The rows of the table: a row of scripts/bench-instr-vm.sh and the side
// measured.
type rowSpec struct {
	Row, Side, Title string
}

var rowSpecs = []rowSpec{
	{"write_64", "client", "RDMA write, 64 B"},
	{"read_64", "client", "RDMA read, 64 B"},
	{"send_64", "client", "send/recv, 64 B: sender"},
	{"send_64", "server", "send/recv, 64 B: receiver"},
	{"write_64_batch16", "client", "RDMA write, 64 B, posts of 16"},
	{"write_64_block", "client", "RDMA write, 64 B, blocking waits"},
}

var tools = []string{"udapl", "dapl", "perftest"}

// measurement is one (row, side, tool): the per-operation count of every
// repetition, the split of the repetitions (udapl) and the perftest loop.
type measurement struct {
	perOp []float64
	split map[string][]float64
	loop  string
	err   error
}

func (m *measurement) mean() float64 {
	var s float64
	for _, v := range m.perOp {
		s += v
	}
	return s / float64(len(m.perOp))
}

// spread is (max - min) / mean of the repetitions.
func (m *measurement) spread() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range m.perOp {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return (hi - lo) / m.mean()
}

type report struct {
	env      map[string]string
	failures []string // failures.tsv of the VM script: row tool side n rep why
	n1, n2   int64
	reps     int
	m        map[string]*measurement // row.side.tool
}

func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			// host_seconds: one line per boot (repetitions added later)
			if a, err1 := strconv.Atoi(env[k]); err1 == nil && k == "host_seconds" {
				if b, err2 := strconv.Atoi(v); err2 == nil {
					v = strconv.Itoa(a + b)
				}
			}
			env[k] = v
		}
	}
	return env, sc.Err()
}

// measure reads every profile of a bench-instr run.
func measure(dir string) (*report, error) {
	env, err := readEnv(filepath.Join(dir, "env.txt"))
	if err != nil {
		return nil, err
	}
	if host, err := readEnv(filepath.Join(dir, "host.txt")); err == nil {
		for k, v := range host {
			env[k] = v
		}
	}
	r := &report{env: env, m: map[string]*measurement{}}
	if b, err := os.ReadFile(filepath.Join(dir, "failures.tsv")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				r.failures = append(r.failures, strings.Join(strings.Split(l, "\t"), " "))
			}
		}
	}
	r.n1, _ = strconv.ParseInt(env["n1"], 10, 64)
	r.n2, _ = strconv.ParseInt(env["n2"], 10, 64)
	r.reps, _ = strconv.Atoi(env["reps"])
	if r.n1 <= 0 || r.n2 <= r.n1 || r.reps <= 0 {
		return nil, fmt.Errorf("%s/env.txt: n1, n2 or reps missing", dir)
	}
	for _, rs := range rowSpecs {
		for _, tool := range tools {
			m := &measurement{split: map[string][]float64{}}
			for rep := 1; rep <= r.reps; rep++ {
				name := func(n int64) string {
					return filepath.Join(dir, fmt.Sprintf("%s.%s.%s.%d.%d.out", rs.Row, tool, rs.Side, n, rep))
				}
				if !exists(name(r.n1)) && !exists(name(r.n2)) {
					continue
				}
				r1, err := loadRun(tool, name(r.n1), env["dapl"])
				if err == nil {
					var r2 *Run
					r2, err = loadRun(tool, name(r.n2), env["dapl"])
					if err == nil {
						err = r.check(tool, r1, r2)
					}
					if err == nil {
						m.perOp = append(m.perOp, perOp(r1.Count, r2.Count, r.n1, r.n2))
						m.loop = r2.Loop
						if r1.Profile != nil {
							s1, s2 := split(r1.Profile), split(r2.Profile)
							for _, c := range categories {
								m.split[c] = append(m.split[c], perOp(s1[c], s2[c], r.n1, r.n2))
							}
						}
					}
				}
				if err != nil {
					m.err = err
					break
				}
			}
			if m.err != nil || len(m.perOp) > 0 {
				r.m[rs.Row+"."+rs.Side+"."+tool] = m
			}
		}
	}
	return r, nil
}

// check: dapltest's loop posted as often as the run had operations.
func (r *report) check(tool string, r1, r2 *Run) error {
	if tool == "dapl" && (r1.Posts != r.n1 || r2.Posts != r.n2) {
		return fmt.Errorf("dapltest's throughput loop posted %d and %d times, want %d and %d: not the loop", r1.Posts, r2.Posts, r.n1, r.n2)
	}
	return nil
}

func (r *report) get(rs rowSpec, tool string) *measurement {
	m := r.m[rs.Row+"."+rs.Side+"."+tool]
	if m == nil || m.err != nil || len(m.perOp) == 0 {
		return nil
	}
	return m
}

// num formats with thousands separators, no decimals.
func num(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func cell(m *measurement) string {
	if m == nil {
		return "–"
	}
	return num(m.mean())
}

func ratio(a, b *measurement) string {
	if a == nil || b == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", a.mean()/b.mean())
}

func diff(a, b *measurement) string {
	if a == nil || b == nil {
		return "–"
	}
	d := a.mean() - b.mean()
	if d > 0 {
		return "+" + num(d)
	}
	return num(d)
}

const (
	sectionBegin = "<!-- instrcount: begin (make bench-instr writes this section; do not edit by hand) -->"
	sectionEnd   = "<!-- instrcount: end -->"
)

// markdown is the section of BENCHMARKS.md.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	e := func(k string) string {
		if v := r.env[k]; v != "" {
			return v
		}
		return "unknown"
	}
	p("%s\n## Instructions per operation\n\n", sectionBegin)
	p("User-space instructions per operation, counted exactly with valgrind's callgrind inside the Soft-RoCE VM:\n")
	p("every measured process runs twice, with %s and with %s operations, and an operation costs\n", num(float64(r.n1)), num(float64(r.n2)))
	p("(Ir(%d) - Ir(%d)) / %d, so that start-up, connection and teardown cancel out. The kernel's work\n", r.n2, r.n1, r.n2-r.n1)
	p("(Soft-RoCE, system calls) is not in these counts. Lower is better. Produced by `make bench-instr`\n")
	p("(scripts/bench-instr.sh, internal/instrcount), also at the start of `make bench`; do not edit by hand.\n\n")
	p("- Date: %s; commit: %s; %s, in the deterministic %s-vCPU VM (kernel %s, device %s)", e("date"), e("commit"), e("valgrind"), e("cpus"), e("kernel"), e("device"))
	if s, err := strconv.Atoi(r.env["host_seconds"]); err == nil {
		p("; the VM ran %d min", (s+30)/60)
	}
	p("\n")
	p("- Every row: 64 B, queue depth %s, a completion for every operation, busy polling unless said;\n", e("depth"))
	p("  udattest `-T P -size 64 -q %s -signal 1 -lat-n 0`, `dapltest -T P -p %s OP 64 1` through the cma\n", e("depth"), e("depth"))
	p("  provider, perftest `ib_*_bw -s 64 -t %s -Q 1` (%s; dapl2-utils %s).\n", e("depth"), "perftest "+e("perftest"), e("dapl"))
	p("- **udapl**: the whole udattest process but the Go runtime's monitor thread (`runtime.sysmon`, which\n")
	p("  wakes more often the slower the program runs: under valgrind its work grows with the run's length),\n")
	p("  with `GODEBUG=asyncpreemptoff=1` and `-yield 0` (its polling loop's yield to the scheduler every 2 ms\n")
	p("  would come dozens of times more often per operation under valgrind than at full speed); its own\n")
	p("  loop is in the count (the split below shows it).\n")
	p("- **C DAPL**: dapltest's throughput loop, `DT_performance_post_rdma_op` and `DT_performance_reap` with\n")
	p("  everything they call (libdat2, the cma provider, librxe, libc) and the loop's own instructions; not\n")
	p("  its latency phase, which follows with as many operations again, one at a time.\n")
	p("- **perftest**: its measurement loop function (`run_iter_bw`, `run_iter_bw_server`: the function of\n")
	p("  the stripped binary that calls librxe most), which leaves out its clock calibration; its peak search\n")
	p("  (O(N^2)) is turned off (`-N`). Its loop reads the cycle counter for every post and completion.\n")
	p("- Rows without a counterpart (`–`): dapltest has no send/recv and no post lists; perftest is not run\n")
	p("  with blocking waits, as in the rate tables.\n\n")

	p("| Row | udapl (udattest) | C DAPL (dapltest) | perftest | udapl / C DAPL | udapl / perftest | udapl - C DAPL | udapl - perftest |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var failed []string
	for _, rs := range rowSpecs {
		u, d, pf := r.get(rs, "udapl"), r.get(rs, "dapl"), r.get(rs, "perftest")
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", rs.Title, cell(u), cell(d), cell(pf),
			ratio(u, d), ratio(u, pf), diff(u, d), diff(u, pf))
		for _, tool := range tools {
			if m := r.m[rs.Row+"."+rs.Side+"."+tool]; m != nil && m.err != nil {
				failed = append(failed, fmt.Sprintf("%s, %s: %v", rs.Title, tool, m.err))
			}
		}
	}
	p("\n")
	var loops []string
	for _, rs := range rowSpecs {
		if m := r.get(rs, "perftest"); m != nil && m.loop != "" {
			loops = append(loops, fmt.Sprintf("%s `%s`", rs.Title, strings.TrimLeft(strings.TrimPrefix(m.loop, "0x"), "0")))
		}
	}
	if len(loops) > 0 {
		p("perftest's measurement loops, by offset in its binary: %s.\n\n", strings.Join(loops, ", "))
	}
	if r.reps > 1 {
		p("Repeatability: the table shows the mean of %d runs of each; they differ by at most (max - min over the mean):\n\n", r.reps)
		p("| Row | udapl | C DAPL | perftest |\n|---|---:|---:|---:|\n")
		for _, rs := range rowSpecs {
			p("| %s", rs.Title)
			for _, tool := range tools {
				if m := r.get(rs, tool); m != nil && len(m.perOp) > 1 {
					p(" | %.2f %%", 100*m.spread())
				} else {
					p(" | –")
				}
			}
			p(" |\n")
		}
		p("\n")
		var loose []string
		for _, rs := range rowSpecs {
			if m := r.get(rs, "udapl"); m != nil && len(m.perOp) > 1 && m.spread() > 0.005 {
				loose = append(loose, rs.Title)
			}
		}
		if len(loose) > 0 {
			p("Where udattest's runs differ by more than 0.5 %% (%s), the difference is in the Go runtime's work\n", strings.Join(loose, "; "))
			p("that time rather than operations drives (the scheduler looking for work, a P taken back from a long\n")
			p("cgo call, timers, the heap), which falls differently in every run; a receiving server also idles\n")
			p("while its client starts under valgrind. Compare the runs' parts with `instrcount pair`.\n\n")
		}
	}
	if len(failed)+len(r.failures) > 0 {
		p("Failed (not counted):\n\n")
		for _, f := range r.failures {
			p("- the run of %s\n", f)
		}
		for _, f := range failed {
			p("- %s\n", f)
		}
		p("\n")
	}

	p("### Where udapl's instructions go\n\n")
	p("Each function's own instructions per operation, the same difference, summed by part:\n\n")
	p("| Part |")
	var cols []rowSpec
	for _, rs := range rowSpecs {
		if r.get(rs, "udapl") != nil {
			cols = append(cols, rs)
			p(" %s |", rs.Title)
		}
	}
	p("\n|---|%s\n", strings.Repeat("---:|", len(cols)))
	for _, c := range categories {
		p("| %s |", c)
		for _, rs := range cols {
			p(" %s |", num(meanOf(r.get(rs, "udapl").split[c])))
		}
		p("\n")
	}
	p("| **total** |")
	for _, rs := range cols {
		p(" **%s** |", num(r.get(rs, "udapl").mean()))
	}
	p("\n\n")
	p("The parts: the DAT post path is package udat's and cverbs's Go functions on the post side (`post.go`,\n")
	p("`post_fast.go`, `post_check.go`, the ring's `reserve`, the LMR and EP lookups, `SendBatch`), the completion\n")
	p("path theirs on the completion side (`evd.go`, `complete.go`, the ring's `complete` and `next`, `CQ.Poll`); the cgo crossing\n")
	p("is the runtime's `cgocall`, `asmcgocall`, `entersyscall`/`reentersyscall`, `exitsyscall` and what they\n")
	p("call for it (`casgstatus`, `save`, and the share of `lock2`/`unlock2` that they take); the C shims are\n")
	p("the functions of `cverbs/include/cverbs.h` and cgo's prologues; the provider librxe (and libibverbs),\n")
	p("or on Soft-RoCE cverbs' direct path, which writes and reads the provider's queues itself in librxe's place\n")
	p("(`cverbs/rxe.go`, its lines inlined elsewhere included), so that no cgo crossing, C shim, librxe or libc is\n")
	p("left on a post or a poll (`UDAPL_RXE_DIRECT=0` counts the verbs path); the tool loop is udattest's package\n")
	p("main, with the loop's own lines that callgrind charges to the runtime function a goroutine switch left\n")
	p("(`runtime.exitsyscall`: no other package can inline main's code). The DAT layer's own share, the one\n")
	p("to hold against C DAPL's library (libdaplofa and libdat2), is the two DAT paths. Work still driven by time rather than by operations (udat's\n")
	p("watchdog tick, the scheduler's idle threads) comes more often per operation under valgrind's\n")
	p("slowdown than at full speed, so the Go runtime's other part is an upper bound. `go run\n")
	p("./internal/instrcount pair -tool udapl N1 FILE1 N2 FILE2` lists the functions of a pair of profiles.\n")
	p("%s\n", sectionEnd)
	return b.String()
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func cmdReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	dir := fs.String("dir", "", "the directory of a bench-instr run")
	md := fs.String("md", "", "write the section into this file (BENCHMARKS.md)")
	fs.Parse(args)
	if *dir == "" {
		return fmt.Errorf("report: -dir is required")
	}
	r, err := measure(*dir)
	if err != nil {
		return err
	}
	sec := r.markdown()
	if *md == "" {
		fmt.Print(sec)
		return nil
	}
	old, err := os.ReadFile(*md)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(*md, []byte(spliceSection(string(old), sec)), 0o644)
}

func cmdSplice(args []string) error {
	fs := flag.NewFlagSet("splice", flag.ExitOnError)
	md := fs.String("md", "", "the file to put the section into")
	from := fs.String("from", "", "the file to take it from")
	fs.Parse(args)
	if *md == "" || *from == "" {
		return fmt.Errorf("splice: -md and -from are required")
	}
	src, err := os.ReadFile(*from)
	if err != nil {
		return err
	}
	sec, ok := extractSection(string(src))
	if !ok {
		return nil // nothing to keep
	}
	dst, err := os.ReadFile(*md)
	if err != nil {
		return err
	}
	return os.WriteFile(*md, []byte(spliceSection(string(dst), sec)), 0o644)
}

// extractSection is the section, markers included, with its newline.
func extractSection(doc string) (string, bool) {
	i := strings.Index(doc, sectionBegin)
	j := strings.Index(doc, sectionEnd)
	if i < 0 || j < i {
		return "", false
	}
	return doc[i:j+len(sectionEnd)] + "\n", true
}

// spliceSection puts sec into doc: in place of the section doc has, or else
// before doc's first "## " heading (after the title and its preamble), or
// at the end.
func spliceSection(doc, sec string) string {
	if i, j := strings.Index(doc, sectionBegin), strings.Index(doc, sectionEnd); i >= 0 && j > i {
		rest := doc[j+len(sectionEnd):]
		rest = strings.TrimPrefix(rest, "\n")
		return doc[:i] + sec + rest
	}
	lines := strings.SplitAfter(doc, "\n")
	for k, l := range lines {
		if strings.HasPrefix(l, "## ") {
			return strings.Join(lines[:k], "") + sec + "\n" + strings.Join(lines[k:], "")
		}
	}
	if doc != "" && !strings.HasSuffix(doc, "\n\n") {
		doc += "\n"
	}
	return doc + sec
}

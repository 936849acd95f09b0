package benchreport

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// The rows of each table, in order, and their titles.
var (
	bwRows    = []string{"write_bw_64", "write_bw_4k", "read_bw_64", "read_bw_4k", "send_bw_64", "send_bw_4k", "write_bw_64_list16"}
	blockRows = []string{"write_bw_64_block", "write_bw_4k_block", "read_bw_64_block", "read_bw_4k_block"}
	latRows   = []string{"write_lat_64", "send_lat_64", "send_lat_4k_block"}
	rttRows   = []string{"write_rtt_4k_block"}
	connRows  = []string{"conn_rc_wait_det", "conn_rc_poll_det", "conn_ud_wait_det", "conn_ud_poll_det",
		"conn_rc_wait_smp", "conn_rc_poll_smp", "conn_ud_wait_smp", "conn_ud_poll_smp"}
	tools = []string{"perftest", "dapl", "udapl"}
	// The soft-iWARP VM's rows: det's throughput rows, on siw0.
	siwRows = siwNames(append(append([]string{}, bwRows...), blockRows...))
)

// siwNames are rows as the siw VM's (RowName).
func siwNames(rows []string) []string {
	var s []string
	for _, row := range rows {
		s = append(s, RowName(row, SiwMode))
	}
	return s
}

var titles = map[string]string{
	"write_bw_64":        "RDMA write, 64 B",
	"write_bw_4k":        "RDMA write, 4 KiB",
	"write_bw_64_list16": "RDMA write, 64 B, posts of 16",
	"read_bw_64":         "RDMA read, 64 B",
	"read_bw_4k":         "RDMA read, 4 KiB",
	"send_bw_64":         "send/recv, 64 B",
	"send_bw_4k":         "send/recv, 4 KiB",
	"write_bw_64_block":  "RDMA write, 64 B, blocking",
	"write_bw_4k_block":  "RDMA write, 4 KiB, blocking",
	"read_bw_64_block":   "RDMA read, 64 B, blocking",
	"read_bw_4k_block":   "RDMA read, 4 KiB, blocking",
	"write_lat_64":       "RDMA write latency, 64 B",
	"send_lat_64":        "send/recv latency, 64 B",
	"send_lat_4k_block":  "send/recv latency, 4 KiB, blocking",
	"write_rtt_4k_block": "RDMA write round trip, 4 KiB, blocking",
	"conn_rc_wait_det":   "RC connections, dat_evd_wait (deterministic VM)",
	"conn_rc_poll_det":   "RC connections, polling (deterministic VM)",
	"conn_rc_wait_smp":   "RC connections, dat_evd_wait (2-vCPU VM)",
	"conn_rc_poll_smp":   "RC connections, polling (2-vCPU VM)",
	"conn_ud_wait_det":   "UD address resolutions, dat_evd_wait (deterministic VM)",
	"conn_ud_poll_det":   "UD address resolutions, polling (deterministic VM)",
	"conn_ud_wait_smp":   "UD address resolutions, dat_evd_wait (2-vCPU VM)",
	"conn_ud_poll_smp":   "UD address resolutions, polling (2-vCPU VM)",
}

// connToolNames are the columns of the connection table, by tool.
var connToolNames = map[string]string{
	"c-c":   "C server, C client",
	"c-go":  "C server, udapl client",
	"go-c":  "udapl server, C client",
	"go-go": "udapl server, udapl client",
}

// Title is the title of a row in the tables ("" for a row it does not
// know); a row of the siw VM is its rxe twin's, with "(siw)".
func Title(row string) string {
	if base, ok := strings.CutSuffix(row, "_"+SiwMode); ok && Kind(row) != "conn" {
		if t := titles[base]; t != "" {
			return t + " (siw)"
		}
		return ""
	}
	return titles[row]
}

// Target is what a row is held to (issue 8): udapl's median against the
// reference tool's, at least (throughput) or at most (latency) Ratio
// times; Link is the part of docs/performance.md that accounts for a miss.
type Target struct {
	Tool, Name string // the reference tool and how the tables name it
	Ratio      float64
	Miss       string // why a miss is one, as the tables say it
	Link       string
}

// ThroughputTarget is the target of a throughput row: send/recv >= 0.95 x
// perftest, posts of 16 >= 1.0 x perftest -l 16, the RDMA rows >= 1.0 x
// C DAPL.
func ThroughputTarget(row string) Target {
	switch {
	case strings.HasPrefix(row, "send_"):
		return Target{"perftest", "perftest", 0.95, "< 0.95 x perftest", "[send/recv on one CPU](docs/performance.md#sendrecv-on-one-cpu)"}
	case strings.HasSuffix(row, "_list16"):
		return Target{"perftest", "perftest -l 16", 1.0, "< 1.0 x perftest", "[posts of 16](docs/performance.md#posts-of-16)"}
	}
	return Target{"dapl", "C DAPL", 1.0, "< 1.0 x C DAPL", "[per-operation instructions](docs/performance.md#per-operation-instructions)"}
}

// LatencyTarget is the target of a latency row: polling p50 <= 1.05 x
// perftest, the blocking round trip <= 1.0 x C DAPL; ok is false for the
// blocking ping-pong, which has none.
func LatencyTarget(row string) (t Target, ok bool) {
	switch {
	case strings.Contains(row, "_lat_") && strings.HasSuffix(row, "_block"):
		return Target{}, false
	case strings.Contains(row, "_rtt_"):
		return Target{"dapl", "C DAPL", 1.0, "> 1.0 x C DAPL", "[latency](docs/performance.md#latency)"}, true
	}
	return Target{"perftest", "perftest", 1.05, "> 1.05 x perftest", "[latency](docs/performance.md#latency)"}, true
}

// TailTarget is the target of a latency row's p99: polling p99 <= 1.5 x
// perftest (issue 25's tail); ok is false for the rows that have none, the
// blocking ones.
func TailTarget(row string) (t Target, ok bool) {
	if !strings.Contains(row, "_lat_") || strings.HasSuffix(row, "_block") {
		return Target{}, false
	}
	return Target{"perftest", "perftest", 1.5, "> 1.5 x perftest", "[latency](docs/performance.md#latency)"}, true
}

// report builds the tables of one bench run.
type report struct {
	in         *Inputs
	met, total int // targets
}

// val is the median of metric m of tool on row, formatted, marked when
// runs failed: "V (N failed)", or "FAILED (N runs)" when none passed.
func (r *report) val(row, tool string, m, digits int) string {
	v := Num(r.in.Median(row, tool, m), digits)
	if f := r.in.Fails(row, tool); f != 0 {
		if v == dash {
			return fmt.Sprintf("FAILED (%s)", plural(f, "run"))
		}
		return fmt.Sprintf("%s (%d failed)", v, f)
	}
	return v
}

// target counts a target, met or not.
func (r *report) target(met bool) {
	r.total++
	if met {
		r.met++
	}
}

// throughput is the table of the throughput rows: msg rate and bandwidth
// of each tool, the ratios of the medians and the paired ratios, and
// which targets are met (without targets: no such column, none counted;
// the siw rows). Every ratio is of two tools on the same row, so on the
// same device.
func (r *report) throughput(rows []string, targets bool) string {
	var b strings.Builder
	if targets {
		b.WriteString("| Row | Metric (median) | perftest | C DAPL (dapltest) | udapl (udattest) | udapl / perftest | udapl / C DAPL | Targets met | paired: udapl / perftest | paired: udapl / C DAPL |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n")
	} else {
		b.WriteString("| Row | Metric (median) | perftest | C DAPL (dapltest) | udapl (udattest) | udapl / perftest | udapl / C DAPL | paired: udapl / perftest | paired: udapl / C DAPL |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	}
	for _, row := range rows {
		for _, m := range []int{MsgRate, Bandwidth} {
			name, digits := "msg rate (1/s)", 0
			if m == Bandwidth {
				name, digits = "bandwidth (MB/s)", 2
			}
			p, d, u := r.in.Median(row, "perftest", m), r.in.Median(row, "dapl", m), r.in.Median(row, "udapl", m)
			rp, rd := Ratio(u, p), Ratio(u, d)
			tg := ThroughputTarget(row)
			got := rd
			if tg.Tool == "perftest" {
				got = rp
			}
			cell := "yes"
			if u == nil {
				cell = "no (no result)"
			} else if !ratioAtLeast(got, tg.Ratio) {
				cell = "no (" + tg.Miss + ")"
			}
			title, cp, cd, cu := "", Num(p, digits), Num(d, digits), Num(u, digits)
			if m == MsgRate {
				if targets {
					r.target(cell == "yes")
				}
				// The failed runs show once per row, on its first line.
				title = Title(row)
				cp, cd, cu = r.val(row, "perftest", m, digits), r.val(row, "dapl", m, digits), r.val(row, "udapl", m, digits)
			} else {
				cell = "(as above)"
			}
			if targets {
				cell = " " + cell + " |"
			} else {
				cell = ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |%s %s | %s |\n", title, name, cp, cd, cu,
				orDash(rp), orDash(rd), cell, orDash(pratio(r.in.PairedRatio(row, "perftest", m))),
				orDash(pratio(r.in.PairedRatio(row, "dapl", m))))
		}
	}
	return b.String()
}

// siw is the table of the soft-iWARP VM's throughput rows that ran,
// polling and blocking, as the deterministic VM's on rxe0 without targets,
// or "" when none ran.
func (r *report) siw() string {
	var rows []string
	for _, row := range siwRows {
		for _, tool := range tools {
			if _, ok := r.in.Stat(row, tool, MsgRate); ok || r.in.Fails(row, tool) > 0 {
				rows = append(rows, row)
				break
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return r.throughput(rows, false)
}

// latencyTarget is the target cell of a latency row whose ratio of the
// medians (of p50, or of the round trip) is ratio, and counts the target.
func (r *report) latencyTarget(row, ratio string) string {
	tg, ok := LatencyTarget(row)
	if !ok {
		return "(no target; perftest -e)"
	}
	return r.targetCell(tg, ratio)
}

// tailTarget is latencyTarget for the ratio of the p99 medians.
func (r *report) tailTarget(row, ratio string) string {
	tg, ok := TailTarget(row)
	if !ok {
		return "(no target)"
	}
	return r.targetCell(tg, ratio)
}

// targetCell says whether ratio meets tg, and counts the target.
func (r *report) targetCell(tg Target, ratio string) string {
	met := ratioAtMost(ratio, tg.Ratio)
	r.target(met)
	if !met {
		return "no (" + tg.Miss + ")"
	}
	return "yes"
}

// latency is the table of the ping-pong rows: p50 and p99 against perftest.
func (r *report) latency() string {
	var b strings.Builder
	b.WriteString("| Row | Metric (median) | perftest | udapl (udattest) | udapl / perftest | Target met | paired: udapl / perftest |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---:|\n")
	for _, row := range latRows {
		p, u := r.in.Median(row, "perftest", P50), r.in.Median(row, "udapl", P50)
		rp := Ratio(u, p)
		fmt.Fprintf(&b, "| %s | p50 (us) | %s | %s | %s | %s | %s |\n", Title(row), r.val(row, "perftest", P50, 2),
			r.val(row, "udapl", P50, 2), orDash(rp), r.latencyTarget(row, rp), pratio(r.in.PairedRatio(row, "perftest", P50)))
		p, u = r.in.Median(row, "perftest", P99), r.in.Median(row, "udapl", P99)
		rp = Ratio(u, p)
		fmt.Fprintf(&b, "| | p99 (us) | %s | %s | %s | %s | %s |\n", Num(p, 2), Num(u, 2), orDash(rp),
			r.tailTarget(row, rp), pratio(r.in.PairedRatio(row, "perftest", P99)))
	}
	return b.String()
}

// roundTrip is the table of one blocking RDMA write at a time, C DAPL
// against udapl: the mean round trip.
func (r *report) roundTrip() string {
	var b strings.Builder
	b.WriteString("| Row | Metric (median) | C DAPL (dapltest -m b -p 1) | udapl (udattest -wait block -q 1) | udapl / C DAPL | Target met | paired: udapl / C DAPL |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---:|\n")
	for _, row := range rttRows {
		d, u := r.in.Median(row, "dapl", P50), r.in.Median(row, "udapl", P50)
		rd := Ratio(u, d)
		fmt.Fprintf(&b, "| %s | mean round trip (us) | %s | %s | %s | %s | %s |\n", Title(row), r.val(row, "dapl", P50, 2),
			r.val(row, "udapl", P50, 2), orDash(rd), r.latencyTarget(row, rd), pratio(r.in.PairedRatio(row, "dapl", P50)))
	}
	return b.String()
}

// connections is the table of the connection rows: the median connections
// per second of each combination of C and udapl (dtestcm and its Go port)
// as server and client, and each against C's own (C server, C client),
// as the ratio of the medians and paired by repetition. Only the rows
// that ran; "(not run)" when the bench ran none.
func (r *report) connections() string {
	var rows []string
	for _, row := range connRows {
		for _, tool := range ConnTools {
			if _, ok := r.in.Stat(row, tool, MsgRate); ok || r.in.Fails(row, tool) > 0 {
				rows = append(rows, row)
				break
			}
		}
	}
	if len(rows) == 0 {
		return "(not run)\n"
	}
	var b strings.Builder
	b.WriteString("| Row | Metric |")
	for _, tool := range ConnTools {
		b.WriteString(" " + connToolNames[tool] + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(ConnTools)) + "\n")
	for _, row := range rows {
		c := r.in.Median(row, "c-c", MsgRate)
		metric := "connections/s (median)"
		if strings.HasPrefix(row, "conn_ud_") {
			metric = "address resolutions/s (median)"
		}
		var rate, ratio, paired strings.Builder
		for _, tool := range ConnTools {
			rate.WriteString(" " + r.val(row, tool, MsgRate, 0) + " |")
			if tool == "c-c" {
				ratio.WriteString(" (1.00) |")
				paired.WriteString(" |")
				continue
			}
			ratio.WriteString(" " + orDash(Ratio(r.in.Median(row, tool, MsgRate), c)) + " |")
			paired.WriteString(" " + orDash(pratio(r.in.PairedRatioOf(row, tool, "c-c", MsgRate))) + " |")
		}
		fmt.Fprintf(&b, "| %s | %s |%s\n", Title(row), metric, rate.String())
		if _, ok := r.in.Stat(row, "c-c", MsgRate); !ok && r.in.Fails(row, "c-c") == 0 {
			continue // C did not run: no ratio to show
		}
		fmt.Fprintf(&b, "| | / C, C (medians) |%s\n", ratio.String())
		fmt.Fprintf(&b, "| | / C, C (paired) |%s\n", paired.String())
	}
	return b.String()
}

// Gap is how far a throughput row misses its target, per operation. In
// the deterministic VM an operation costs 10^9 / rate instructions of the
// whole guest (its clock counts one a nanosecond), so the difference of
// two rates is instructions: Extra is how many more udapl spends than the
// reference, Fewer how many fewer it would need for the target.
func Gap(udapl, ref, target float64) (extra, fewer float64) {
	return 1e9/udapl - 1e9/ref, 1e9/udapl - 1e9/(target*ref)
}

// gaps is the table of every row whose target is not met, with the
// difference per operation: instructions in the deterministic VM,
// microseconds of p50 (or of the mean round trip) in the 2-vCPU VM.
func (r *report) gaps() string {
	var b strings.Builder
	b.WriteString("| Row | Reference | udapl / reference | udapl's extra per operation | Fewer needed for the target | Account (docs/performance.md) |\n")
	b.WriteString("|---|---|---:|---:|---:|---|\n")
	for _, row := range append(append([]string{}, bwRows...), blockRows...) {
		tg := ThroughputTarget(row)
		u, ref := r.in.Median(row, "udapl", MsgRate), r.in.Median(row, tg.Tool, MsgRate)
		rr := Ratio(u, ref)
		if rr == "" || ratioAtLeast(rr, tg.Ratio) {
			continue
		}
		extra, fewer := Gap(*u, *ref, tg.Ratio)
		fmt.Fprintf(&b, "| %s | %s | %s | %s instructions | %s instructions | %s |\n", Title(row), tg.Name, rr,
			Num(&extra, 0), Num(&fewer, 0), tg.Link)
	}
	// The latency rows' two targets: p50 (or the round trip) and p99.
	lat := []struct {
		metric int
		suffix string
		target func(string) (Target, bool)
	}{{P50, "", LatencyTarget}, {P99, ", p99", TailTarget}}
	for _, row := range append(append([]string{}, latRows...), rttRows...) {
		for _, l := range lat {
			tg, ok := l.target(row)
			if !ok {
				continue
			}
			u, ref := r.in.Median(row, "udapl", l.metric), r.in.Median(row, tg.Tool, l.metric)
			rr := Ratio(u, ref)
			if rr == "" || ratioAtMost(rr, tg.Ratio) {
				continue
			}
			fmt.Fprintf(&b, "| %s%s | %s | %s | %.2f us | %.2f us | %s |\n", Title(row), l.suffix, tg.Name, rr, *u-*ref, *u-tg.Ratio**ref, tg.Link)
		}
	}
	return b.String()
}

// spread is the table of how well the runs agree: their count, failures,
// and the range of the msg rate and of p50.
func (r *report) spread() string {
	var b strings.Builder
	b.WriteString("| Row | Tool | Runs (failed) | msg (or connection) rate min – max (1/s) | p50 min – max (us) |\n")
	b.WriteString("|---|---|---|---|---|\n")
	rng := func(row, tool string, m, digits int) string {
		s, ok := r.in.Stat(row, tool, m)
		if !ok {
			return dash
		}
		return Num(&s.Min, digits) + " – " + Num(&s.Max, digits)
	}
	for _, rows := range [][]string{bwRows, blockRows, latRows, rttRows, connRows, siwRows} {
		for _, row := range rows {
			ts := tools
			if Kind(row) == "conn" {
				ts = ConnTools
			}
			for _, tool := range ts {
				runs := ""
				if s, ok := r.in.Stat(row, tool, MsgRate); ok {
					runs = fmt.Sprint(s.Runs)
				} else if s, ok := r.in.Stat(row, tool, P50); ok {
					runs = fmt.Sprint(s.Runs)
				}
				f := r.in.Fails(row, tool)
				if runs == "" && f == 0 {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %s (%d) | %s | %s |\n", Title(row), tool, orZero(runs), f,
					rng(row, tool, MsgRate, 0), rng(row, tool, P50, 2))
			}
		}
	}
	return b.String()
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// failedRuns lists every failed run with why, from failures.tsv, and says
// how many failed runs it does not explain.
func (r *report) failedRuns() string {
	n := r.in.Failed()
	if n == 0 {
		return "None: every run of every tool ended within its bound and reported a result.\n"
	}
	var b strings.Builder
	if len(r.in.Failures) > 0 {
		b.WriteString("| Row | Tool | Repetition | Why | Output |\n")
		b.WriteString("|---|---|---:|---|---|\n")
		for _, f := range r.in.Failures {
			raw := strings.TrimPrefix(f.Raw, r.in.Dir+"/")
			fmt.Fprintf(&b, "| %s | %s | %s | %s | `%s` |\n", Title(f.Row), f.Tool, f.Rep,
				strings.ReplaceAll(f.Reason, "|", `\|`), raw)
		}
		b.WriteString("\n")
	}
	// Failed runs that failures.tsv does not explain (older runs of
	// bench-vm.sh wrote none).
	if len(r.in.Failures) < n {
		fmt.Fprintf(&b, "%d failed runs are counted in the Spread table without a recorded reason.\n", n-len(r.in.Failures))
	}
	return b.String()
}

// goBench is the table of one VM's Go data-path benchmarks (go test -bench
// output), or "(not run)".
func (r *report) goBench(mode string) string {
	out := r.in.GoBench[mode]
	if out == "" {
		return "(not run)\n"
	}
	var b strings.Builder
	b.WriteString("| Benchmark | ns/DTO | allocs/op | post allocs/DTO | poll allocs/DTO | cgo calls per batch: post | poll | empty polls/batch |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, m, ok := ParseBenchLine(sc.Text())
		if !ok {
			continue
		}
		if name == "DequeueEmpty" {
			fmt.Fprintf(&b, "| %s | %s ns/op | %s | – | %s | – | %s | – |\n", name, m["ns/op"], m["allocs/op"], m["allocs/op"], m["cgo/op"])
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, m["ns/DTO"], m["allocs/op"], m["post-allocs/DTO"],
			m["poll-allocs/DTO"], m["post-cgo/batch"], m["poll-cgo/batch"], m["empty-polls/batch"])
	}
	return b.String()
}

// ParseBenchLine parses a result line of go test -bench: the benchmark's
// name without "Benchmark" and the -GOMAXPROCS suffix, and its metrics by
// unit, as printed. ok is false for a line that is not a benchmark's.
func ParseBenchLine(line string) (name string, metrics map[string]string, ok bool) {
	if !strings.HasPrefix(line, "Benchmark") {
		return "", nil, false
	}
	f := strings.Fields(line)
	name = strings.TrimPrefix(f[0], "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i >= 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	metrics = map[string]string{}
	// f[1] is the iteration count; then value, unit pairs.
	for i := 2; i+1 < len(f); i += 2 {
		metrics[f[i+1]] = f[i]
	}
	return name, metrics, true
}

//go:embed report.md.tmpl
var reportTemplate string

var tmpl = template.Must(template.New("BENCHMARKS.md").Option("missingkey=error").Parse(reportTemplate))

// Write writes BENCHMARKS.md for the bench run in.
func Write(w io.Writer, in *Inputs) error {
	r := &report{in: in}
	reps := ParseEnv(strings.ReplaceAll(in.param("reps"), " ", "\n"))
	// nconn=1000 burst=100 conn_reps=3 conn_timeout=240, in either VM.
	connLine := in.env("nconn", "det")
	if connLine == "" {
		connLine = in.env("nconn", "smp")
	}
	conn := ParseEnv(strings.ReplaceAll("nconn="+connLine, " ", "\n"))
	first, _, _ := strings.Cut(in.env("reps", "det"), " ")
	smpReps, _, _ := strings.Cut(in.env("reps", "smp"), " ")
	siwReps, _, _ := strings.Cut(in.env("reps", SiwMode), " ")
	bound, _, _ := strings.Cut(in.param("timeout"), " ")
	if bound != "" {
		bound += " s"
	} else {
		bound = "a fixed time"
	}
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	}
	data := map[string]any{
		"Env":         func(key, mode string) string { return in.env(key, mode) },
		"Param":       func(key string) string { return in.param(key) },
		"Date":        in.Measured.UTC().Format("2006-01-02 15:04 UTC"),
		"Commit":      commit,
		"Reps":        first,
		"SMPReps":     smpReps,
		"N64":         reps["n64"],
		"N4K":         reps["n4k"],
		"NLat":        reps["nlat"],
		"Depth":       reps["depth"],
		"NRTT":        in.env("nrtt", "smp"),
		"Bound":       bound,
		"Failed":      in.Failed(),
		"Dir":         in.Dir,
		"Throughput":  strings.TrimSuffix(r.throughput(bwRows, true), "\n"),
		"Blocking":    strings.TrimSuffix(r.throughput(blockRows, true), "\n"),
		"Siw":         strings.TrimSuffix(r.siw(), "\n"),
		"SiwReps":     siwReps,
		"Latency":     strings.TrimSuffix(r.latency(), "\n"),
		"RoundTrip":   strings.TrimSuffix(r.roundTrip(), "\n"),
		"Connections": strings.TrimSuffix(r.connections(), "\n"),
		"NConn":       conn["nconn"],
		"Burst":       conn["burst"],
		"ConnReps":    conn["conn_reps"],
		"ConnTimeout": conn["conn_timeout"],
		"Gaps":        strings.TrimSuffix(r.gaps(), "\n"),
		"Spread":      strings.TrimSuffix(r.spread(), "\n"),
		"FailedRuns":  strings.TrimRight(r.failedRuns(), "\n"),
		"GoBenchDet":  strings.TrimSuffix(r.goBench("det"), "\n"),
		"GoBenchSMP":  strings.TrimSuffix(r.goBench("smp"), "\n"),
	}
	data["Met"], data["Total"] = r.met, r.total
	return tmpl.Execute(w, data)
}

package benchreport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata")

// inputs makes Inputs of results.tsv lines (tab-separated).
func inputs(t *testing.T, lines ...string) *Inputs {
	t.Helper()
	rs, err := ParseResults(strings.Join(lines, "\n") + "\n")
	require.NoError(t, err)
	return &Inputs{Results: rs, Env: map[string]Env{}, GoBench: map[string]string{}}
}

func fp(v float64) *float64 { return &v }

func TestParseResults(t *testing.T) {
	rs, err := ParseResults("write_bw_64\tudapl\t1\t60835.5\t3.713\tNA\tNA\n\nsend_lat_64\tperftest\t2\tFAIL\tFAIL\tFAIL\tFAIL\n")
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, Result{Row: "write_bw_64", Tool: "udapl", Rep: "1", Values: [4]string{"60835.5", "3.713", NA, NA}}, rs[0])
	assert.False(t, rs[0].Failed())
	assert.True(t, rs[1].Failed())

	_, err = ParseResults("write_bw_64\tudapl\t1\t60835.5\n")
	assert.ErrorContains(t, err, "line 1: 4 fields, want 7")
}

func TestParseFailures(t *testing.T) {
	fs := ParseFailures("r\tdapl\t2\tclient: timed out\t/tmp/x/det/raw/r.dapl.2\nr2\tudapl\t1\twhy\n")
	require.Len(t, fs, 2)
	assert.Equal(t, Failure{"r", "dapl", "2", "client: timed out", "/tmp/x/det/raw/r.dapl.2"}, fs[0])
	assert.Equal(t, Failure{"r2", "udapl", "1", "why", ""}, fs[1])
}

func TestParseEnv(t *testing.T) {
	e := ParseEnv("reps=3 n64=20000\nhost_load=1.55 1.20 1.01\nreps=9\nnot a pair\n")
	assert.Equal(t, Env{"reps": "3 n64=20000", "host_load": "1.55 1.20 1.01"}, e)
}

func TestEnvFallsBackToSMP(t *testing.T) {
	in := &Inputs{Env: map[string]Env{"smp": {"kernel": "6.1"}}}
	assert.Equal(t, "6.1", in.env("kernel", "det"), "no det env.txt: the smp one")
	in.Env["det"] = Env{"cpus": "1"}
	assert.Equal(t, "", in.env("kernel", "det"), "a det env.txt without the key")
	assert.Equal(t, "6.1", in.env("kernel", "smp"))
}

func TestStat(t *testing.T) {
	in := inputs(t,
		"r\tudapl\t1\t30\tNA\t5\tNA",
		"r\tudapl\t2\t10\tNA\t7\tNA",
		"r\tudapl\t3\t20\tNA\tNA\tNA",
		"r\tudapl\t4\tFAIL\tFAIL\tFAIL\tFAIL",
		"r\tdapl\t1\t99\tNA\tNA\tNA",
		"q\tudapl\t1\t1\tNA\tNA\tNA",
	)
	s, ok := in.Stat("r", "udapl", MsgRate)
	require.True(t, ok)
	assert.Equal(t, Stat{Median: 20, Min: 10, Max: 30, Runs: 3}, s, "odd: the middle one; FAIL left out")
	s, ok = in.Stat("r", "udapl", P50)
	require.True(t, ok)
	assert.Equal(t, Stat{Median: 6, Min: 5, Max: 7, Runs: 2}, s, "even: the mean of the middle two; NA left out")
	_, ok = in.Stat("r", "udapl", Bandwidth)
	assert.False(t, ok, "no run reported it")
	assert.Nil(t, in.Median("r", "perftest", MsgRate))
	assert.Equal(t, 99.0, *in.Median("r", "dapl", MsgRate))

	assert.Equal(t, 1, in.Fails("r", "udapl"))
	assert.Equal(t, 0, in.Fails("r", "dapl"))
	assert.Equal(t, 1, in.Failed())
}

func TestPairedRatio(t *testing.T) {
	in := inputs(t,
		"r\tudapl\t1\t90\tNA\tNA\tNA",
		"r\tdapl\t1\t100\tNA\tNA\tNA",
		"r\tudapl\t2\t50\tNA\tNA\tNA",
		"r\tdapl\t2\t40\tNA\tNA\tNA",
		"r\tudapl\t3\t10\tNA\tNA\tNA",
		"r\tdapl\t3\tFAIL\tFAIL\tFAIL\tFAIL", // no pair
		"r\tudapl\t4\t10\tNA\tNA\tNA",
		"r\tdapl\t4\t0\tNA\tNA\tNA", // not positive: no ratio
		"r\tudapl\t5\t70\tNA\tNA\tNA",
		"r\tdapl\t5\t100\tNA\tNA\tNA",
		"r\tperftest\t1\t100\tNA\tNA\tNA",
	)
	// Ratios 0.9, 1.25 and 0.7: the median is 0.9, where the ratio of the
	// medians (56/100... ) differs.
	require.NotNil(t, in.PairedRatio("r", "dapl", MsgRate))
	assert.InDelta(t, 0.9, *in.PairedRatio("r", "dapl", MsgRate), 1e-12)
	assert.InDelta(t, 0.9, *in.PairedRatio("r", "perftest", MsgRate), 1e-12, "one pair")
	assert.Nil(t, in.PairedRatio("r", "dapl", P50))
	assert.Nil(t, in.PairedRatio("q", "dapl", MsgRate))
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v      float64
		digits int
		want   string
	}{
		{0, 0, "0"},
		{999, 0, "999"},
		{1000, 0, "1,000"},
		{65708.5, 0, "65,708"}, // to even, as printf
		{65709.5, 0, "65,710"},
		{1234567.891, 2, "1,234,567.89"},
		{3.713, 2, "3.71"},
		{-123, 0, "-123"},
		{-1234.5, 1, "-1,234.5"},
	} {
		assert.Equal(t, c.want, Num(&c.v, c.digits), "%v %d", c.v, c.digits)
	}
	assert.Equal(t, "–", Num(nil, 2))
}

func TestRatio(t *testing.T) {
	assert.Equal(t, "0.93", Ratio(fp(60835), fp(65305)))
	assert.Equal(t, "", Ratio(nil, fp(1)))
	assert.Equal(t, "", Ratio(fp(1), nil))
	assert.Equal(t, "", Ratio(fp(1), fp(0)))
	// A target is judged on the ratio as shown.
	assert.True(t, ratioAtLeast(Ratio(fp(0.9496), fp(1)), 0.95))
	assert.False(t, ratioAtLeast("", 0))
	assert.True(t, ratioAtMost("1.05", 1.05))
	assert.False(t, ratioAtMost("", 2))
}

func TestTargets(t *testing.T) {
	for row, want := range map[string]Target{
		"send_bw_64":         {"perftest", "perftest", 0.95, "< 0.95 x perftest", "[send/recv on one CPU](docs/performance.md#sendrecv-on-one-cpu)"},
		"write_bw_64_list16": {"perftest", "perftest -l 16", 1.0, "< 1.0 x perftest", "[posts of 16](docs/performance.md#posts-of-16)"},
		"read_bw_4k_block":   {"dapl", "C DAPL", 1.0, "< 1.0 x C DAPL", "[per-operation instructions](docs/performance.md#per-operation-instructions)"},
	} {
		assert.Equal(t, want.Tool, ThroughputTarget(row).Tool, row)
		assert.Equal(t, want.Ratio, ThroughputTarget(row).Ratio, row)
		assert.Equal(t, want.Miss, ThroughputTarget(row).Miss, row)
		assert.Equal(t, want.Name, ThroughputTarget(row).Name, row)
	}
	tg, ok := LatencyTarget("write_lat_64")
	assert.True(t, ok)
	assert.Equal(t, 1.05, tg.Ratio)
	assert.Equal(t, "perftest", tg.Tool)
	tg, ok = LatencyTarget("write_rtt_4k_block")
	assert.True(t, ok)
	assert.Equal(t, "dapl", tg.Tool)
	assert.Equal(t, 1.0, tg.Ratio)
	_, ok = LatencyTarget("send_lat_4k_block")
	assert.False(t, ok, "the blocking ping-pong has no target")
	tg, ok = TailTarget("send_lat_64")
	assert.True(t, ok)
	assert.Equal(t, 1.5, tg.Ratio)
	_, ok = TailTarget("send_lat_4k_block")
	assert.False(t, ok, "nor has its tail")
	_, ok = TailTarget("write_rtt_4k_block")
	assert.False(t, ok, "the round trip is a mean")
}

func TestGap(t *testing.T) {
	// 50,000/s against 62,500/s: 20,000 and 16,000 instructions an
	// operation in the deterministic VM.
	extra, fewer := Gap(50000, 62500, 1.0)
	assert.InDelta(t, 4000, extra, 1e-9)
	assert.InDelta(t, 4000, fewer, 1e-9)
	extra, fewer = Gap(50000, 62500, 0.5)
	assert.InDelta(t, 4000, extra, 1e-9)
	assert.InDelta(t, 20000-32000, fewer, 1e-9, "a target already met needs none fewer")
}

func TestVal(t *testing.T) {
	in := inputs(t,
		"r\tudapl\t1\t100\tNA\tNA\tNA",
		"r\tudapl\t2\tFAIL\tFAIL\tFAIL\tFAIL",
		"r\tudapl\t3\tFAIL\tFAIL\tFAIL\tFAIL",
		"r\tdapl\t1\tFAIL\tFAIL\tFAIL\tFAIL",
		"q\tdapl\t1\tFAIL\tFAIL\tFAIL\tFAIL",
		"q\tdapl\t2\tFAIL\tFAIL\tFAIL\tFAIL",
	)
	r := &report{in: in}
	assert.Equal(t, "100 (2 failed)", r.val("r", "udapl", MsgRate, 0))
	assert.Equal(t, "FAILED (1 run)", r.val("r", "dapl", MsgRate, 0))
	assert.Equal(t, "FAILED (2 runs)", r.val("q", "dapl", MsgRate, 0))
	assert.Equal(t, "–", r.val("r", "perftest", MsgRate, 0))
}

func TestParseBenchLine(t *testing.T) {
	name, m, ok := ParseBenchLine("BenchmarkRDMAWrite/segs=1/batch=16/post=list-2 \t    1000\t   39579 ns/op\t 13193 ns/DTO\t 1.000 post-cgo/batch\t       0 allocs/op")
	require.True(t, ok)
	assert.Equal(t, "RDMAWrite/segs=1/batch=16/post=list", name)
	assert.Equal(t, map[string]string{"ns/op": "39579", "ns/DTO": "13193", "post-cgo/batch": "1.000", "allocs/op": "0"}, m)
	name, _, ok = ParseBenchLine("BenchmarkDequeueEmpty-12  1000  806.8 ns/op")
	require.True(t, ok)
	assert.Equal(t, "DequeueEmpty", name)
	name, _, _ = ParseBenchLine("BenchmarkX/n=a-b 1 2 ns/op")
	assert.Equal(t, "X/n=a-b", name, "only a numeric suffix is GOMAXPROCS")
	_, _, ok = ParseBenchLine("PASS")
	assert.False(t, ok)
}

func TestReadNoResults(t *testing.T) {
	_, err := Read(t.TempDir())
	assert.ErrorContains(t, err, "no results in")
}

// TestReport writes the report of each recorded bench run in testdata and
// compares it with the golden file beside it (go test -update rewrites
// them).
func TestReport(t *testing.T) {
	for _, run := range []string{"clean", "failures", "conn", "siw"} {
		t.Run(run, func(t *testing.T) {
			in, err := Read(filepath.Join("testdata", run))
			require.NoError(t, err)
			// As bench.sh's default directory had held them, measured then.
			in.Dir = "/tmp/udapl-bench"
			in.Measured = time.Date(2026, 11, 25, 4, 21, 0, 0, time.UTC)
			var b bytes.Buffer
			require.NoError(t, Write(&b, in))
			golden := filepath.Join("testdata", run+".md")
			if *update {
				require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), b.String())
		})
	}
}

// The failed runs show in the tables, the count and their own section.
func TestReportFailures(t *testing.T) {
	in, err := Read(filepath.Join("testdata", "failures"))
	require.NoError(t, err)
	in.Dir = "/tmp/udapl-bench" // where its failures.tsv says the raw output is
	var b bytes.Buffer
	require.NoError(t, Write(&b, in))
	s := b.String()
	assert.Contains(t, s, "Failed runs: **6**")
	assert.Contains(t, s, "| send/recv, 64 B | msg rate (1/s) | 33,813 | – | FAILED (3 runs) | – | – | no (no result) |")
	assert.Contains(t, s, "| 12,994 (1 failed) |")
	assert.Contains(t, s, "| RDMA write, 4 KiB, blocking | dapl | 2 | client: timed out after 60 s \\| server restarted | `det/raw/write_bw_4k_block.dapl.2` |")
	assert.Contains(t, s, "3 failed runs are counted in the Spread table without a recorded reason.")
	assert.Contains(t, s, "### 2-vCPU VM (host time, noisy)\n\n(not run)\n")
}

func TestParseRuns(t *testing.T) {
	rs, err := ParseRuns("r\tdapl\t1\traw/r.dapl.1\tok\n\nr\tudapl\t2\traw/r.udapl.2\tclient: exit status 1\n")
	require.NoError(t, err)
	assert.Equal(t, []Run{{"r", "dapl", "1", "raw/r.dapl.1", RunOK}, {"r", "udapl", "2", "raw/r.udapl.2", "client: exit status 1"}}, rs)
	_, err = ParseRuns("r\tdapl\t1\traw/r.dapl.1\n")
	assert.ErrorContains(t, err, "line 1: 4 fields, want 5")
}

func TestKind(t *testing.T) {
	assert.Equal(t, "lat", Kind("send_lat_4k_block"))
	assert.Equal(t, "rtt", Kind("write_rtt_4k_block"))
	assert.Equal(t, "bw", Kind("write_bw_64_block"))
	assert.Equal(t, "bw", Kind("write_bw_64_list16"))
}

// Results the tools' outputs do not give, and what udattest's JSON does
// not say: NA, as bench-vm.sh's awk had it.
func TestParseRunEdges(t *testing.T) {
	run := func(row, tool, out string) (Result, string) {
		return ParseRun(Run{Row: row, Tool: tool, Rep: "1", Raw: "raw/x", Status: RunOK}, out)
	}
	r, why := run("write_bw_64", "udapl", `{"msg_rate":12.5,"result":"PASSED"}`)
	assert.Empty(t, why)
	assert.Equal(t, [4]string{"12.5", NA, NA, NA}, r.Values)
	r, why = run("write_rtt_4k_block", "udapl", `{"msg_rate":null,"result":"PASSED"}`)
	assert.Empty(t, why)
	assert.Equal(t, [4]string{NA, NA, NA, NA}, r.Values, "no rate, no round trip")
	r, why = run("write_rtt_4k_block", "dapl", "raw: RW, 2000, 4096, 1, 1, 100.0, 2500, 9.77\n")
	assert.Empty(t, why)
	assert.Equal(t, [4]string{NA, NA, "400.00", NA}, r.Values)

	_, why = run("write_bw_64", "udapl", `{"result":"FAILED","error":"x"}`)
	assert.Equal(t, "no PASSED result line", why)
	_, why = run("write_bw_64", "perftest", " #bytes #iterations\n 64 2000 0.00\n")
	assert.Equal(t, "no result line after #bytes: 3 fields", why, "where the awk printed zeros")
	_, why = run("write_bw_64", "perftest", "Couldn't connect\n")
	assert.Equal(t, "no result in the output", why)
	_, why = run("write_bw_64", "dapl", "raw: RW, 2000, 64, 1, 64, 100.0, x\n")
	assert.Equal(t, `raw: result line: field 7 is not a number: "x"`, why)
	r, why = run("write_bw_64", "nccl", "")
	assert.Equal(t, `unknown tool "nccl"`, why)
	assert.True(t, r.Failed())

	r, why = ParseRun(Run{Row: "r", Tool: "udapl", Rep: "1", Status: "client: exit status 1"},
		`{"tool":"udattest","result":"FAILED","error":"connect: \"rxe0\" refused"}`)
	assert.Equal(t, `client: exit status 1: connect: \`, why, "up to the first quote, as grep -o | cut had it")
	assert.True(t, r.Failed())
}

func TestDevinfoMTU(t *testing.T) {
	assert.Equal(t, "4096", DevinfoMTU("\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t1024 (3)\n"))
	assert.Equal(t, "", DevinfoMTU("Failed to get IB devices list\n"))
}

// TestReadRuns reads recorded outputs of every tool and kind of row (in
// testdata/runs; see its README) and compares their results and failures
// with what bench-vm.sh wrote for them when it read the numbers itself
// (old-results.tsv, old-failures.tsv).
func TestReadRuns(t *testing.T) {
	dir := filepath.Join("testdata", "runs")
	in, err := Read(dir)
	require.NoError(t, err)
	var want []Result
	var fails []Failure
	for _, mode := range []string{"det", "smp"} {
		b, err := os.ReadFile(filepath.Join(dir, mode, "old-results.tsv"))
		require.NoError(t, err)
		rs, err := ParseResults(string(b))
		require.NoError(t, err)
		want = append(want, rs...)
		b, err = os.ReadFile(filepath.Join(dir, mode, "old-failures.tsv"))
		require.NoError(t, err)
		fails = append(fails, ParseFailures(string(b))...)
	}
	assert.Equal(t, want, in.Results)
	assert.Equal(t, fails, in.Failures)
	assert.Equal(t, "1024", in.env("mtu", "det"), "from ibv_devinfo.txt")
	assert.Equal(t, "1024", in.env("mtu", "smp"), "env.txt's own")
}

func TestParseDtestcm(t *testing.T) {
	run := func(tool, out string) (Result, string) {
		return ParseRun(Run{Row: "conn_rc_wait", Tool: tool, Rep: "1", Raw: "raw/x", Status: RunOK}, out)
	}
	r, why := run("c-c", " EP free:       540.59 usec avg\n Connections:  4463.44 usec, CPS  224.04 Total 4.46 secs, poll_cnt=0, Num=1000\n TOTAL:     1.28 sec\n")
	assert.Empty(t, why)
	assert.Equal(t, [4]string{"224.04", NA, NA, NA}, r.Values, "the C client's CPS, as printed")
	r, why = run("go-go", "2026/11/27 08:29:47 Go dtestcm client: all 1000 connected in 453.989666ms: 2202.7 connections/s\nCPS 2202.7\nDAPL Connection Test Complete.\n")
	assert.Empty(t, why)
	assert.Equal(t, [4]string{"2202.7", NA, NA, NA}, r.Values, "the Go client's CPS line, not its log line")
	_, why = run("c-c", " Connections:  0.00 usec, CPS  0.00 Total 0.00 secs, poll_cnt=0, Num=0\n")
	assert.Equal(t, "dtestcm: Num=0 connections", why)
	r, why = run("go-c", "DAPL Connection Test Complete.\n")
	assert.Equal(t, "no dtestcm CPS line", why)
	assert.True(t, r.Failed())
	assert.Equal(t, "conn", Kind("conn_rc_poll"))

	// A client's failure gets its last words; a server's does not.
	r, why = ParseRun(Run{Row: "conn_rc_poll", Tool: "c-go", Rep: "2", Status: "client: exit status 1; server stopped"},
		"2026/11/27 08:29:47 dtestcm: connect: DAT_INVALID_STATE\n\n")
	assert.Equal(t, "client: exit status 1; server stopped: 2026/11/27 08:29:47 dtestcm: connect: DAT_INVALID_STATE", why)
	assert.True(t, r.Failed())
	_, why = ParseRun(Run{Row: "conn_rc_poll", Tool: "go-c", Rep: "2", Status: "server: exit status 1"}, "DAPL Connection Test Complete.\n")
	assert.Equal(t, "server: exit status 1", why)
	assert.Equal(t, "abc...", failLine("x\nabcdef\n \n", 3), "the last line, cut")
	assert.Equal(t, "ERR psp_create: DAT_CONN_QUAL_IN_USE", failLine(" Running server on ofa-v2-cma-roe-d0 with 1000 RC connections\n"+
		" ERR psp_create: DAT_CONN_QUAL_IN_USE \n ERR: Checking ASYNC EVD...\n", 160), "the C program's first error")
	assert.Equal(t, "", failLine("\n \n", 10))
}

// The connection rows of a recorded run (testdata/conn: both VMs, 3
// repetitions each, every output as bench-vm.sh left it but the servers'):
// named after their VM, all four combinations, against C's own.
func TestReadConn(t *testing.T) {
	in, err := Read(filepath.Join("testdata", "conn"))
	require.NoError(t, err)
	for _, row := range connRows {
		if strings.HasPrefix(row, "conn_ud_") {
			continue // recorded before the UD rows
		}
		for _, tool := range ConnTools {
			s, ok := in.Stat(row, tool, MsgRate)
			require.True(t, ok, "%s %s", row, tool)
			assert.Equal(t, 3, s.Runs, "%s %s", row, tool)
		}
	}
	_, ok := in.Stat("conn_rc_wait", "c-c", MsgRate)
	assert.False(t, ok, "the rows are named after their VM")
	r := &report{in: in}
	s := r.connections()
	assert.Contains(t, s, "| Row | Metric | C server, C client | C server, udapl client | udapl server, C client | udapl server, udapl client |\n")
	assert.Contains(t, s, "| RC connections, dat_evd_wait (deterministic VM) | connections/s (median) |")
	assert.Contains(t, s, "| | / C, C (medians) | (1.00) |")

	// A combination with no result shows as failed, its ratios as dashes.
	in.Results = append(in.Results, Result{Row: "conn_rc_new_det", Tool: "c-go", Rep: "1", Values: [4]string{Fail, Fail, Fail, Fail}})
	in.Results = slices.DeleteFunc(in.Results, func(r Result) bool { return r.Row == "conn_rc_poll_smp" && r.Tool == "go-go" })
	in.Results = append(in.Results, Result{Row: "conn_rc_poll_smp", Tool: "go-go", Rep: "1", Values: [4]string{Fail, Fail, Fail, Fail}})
	s = r.connections()
	assert.Regexp(t, `\| RC connections, polling \(2-vCPU VM\) \| connections/s \(median\) \| [0-9,]+ \| [0-9,]+ \| [0-9,]+ \| FAILED \(1 run\) \|\n\| \| / C, C \(medians\) \| \(1.00\) \| [0-9.]+ \| [0-9.]+ \| – \|\n\| \| / C, C \(paired\) \| \| [0-9.]+ \| [0-9.]+ \| – \|`, s)

	assert.Equal(t, "(not run)\n", (&report{in: inputs(t, "r\tudapl\t1\t30\tNA\t5\tNA")}).connections())
}

// Only the connection rows that ran have lines: here the 2-vCPU VM's
// polling row, whose four runs timed out.
func TestConnOnlyRowsThatRan(t *testing.T) {
	in := inputs(t,
		"conn_rc_poll_smp\tc-c\t1\tFAIL\tFAIL\tFAIL\tFAIL",
		"conn_rc_poll_smp\tgo-go\t1\tFAIL\tFAIL\tFAIL\tFAIL",
	)
	s := (&report{in: in}).connections()
	assert.NotContains(t, s, "deterministic VM")
	assert.NotContains(t, s, "dat_evd_wait")
	assert.Contains(t, s, "| RC connections, polling (2-vCPU VM) | connections/s (median) | FAILED (1 run) | – | – | FAILED (1 run) |\n")
}

// A UD row has the Go port on both sides only (C's dtestcm has no UD
// here): its rate, and no ratio to C.
func TestConnUDRow(t *testing.T) {
	in := inputs(t,
		"conn_rc_wait_det\tc-c\t1\t2000\tNA\tNA\tNA",
		"conn_rc_wait_det\tgo-go\t1\t1500\tNA\tNA\tNA",
		"conn_ud_wait_det\tgo-go\t1\t3000\tNA\tNA\tNA",
	)
	s := (&report{in: in}).connections()
	assert.Contains(t, s, "| UD address resolutions, dat_evd_wait (deterministic VM) | address resolutions/s (median) | – | – | – | 3,000 |\n")
	assert.Contains(t, s, "| | / C, C (medians) | (1.00) | – | – | 0.75 |\n", "the RC row keeps its ratios")
	assert.Equal(t, 2, strings.Count(s, "/ C, C"), "the UD row has none")
}

// A server that failed: its own output says why (testdata/connfail).
func TestReadConnServerFailure(t *testing.T) {
	in, err := Read(filepath.Join("testdata", "connfail"))
	require.NoError(t, err)
	require.Len(t, in.Failures, 1)
	f := in.Failures[0]
	assert.Equal(t, "conn_rc_poll_smp", f.Row)
	assert.Equal(t, "server: ended before it listened, exit status 0: ERR psp_create: DAT_CONN_QUAL_IN_USE", f.Reason)
	assert.Equal(t, 1, in.Fails("conn_rc_poll_smp", "c-c"))
	require.NotNil(t, in.Median("conn_rc_poll_smp", "go-go", MsgRate))
	s := (&report{in: in}).connections()
	assert.Contains(t, s, "| RC connections, polling (2-vCPU VM) | connections/s (median) | FAILED (1 run) | – | – | 276 |\n")
}

// The siw VM's rows are named with _siw; its connection rows too, once.
func TestRowName(t *testing.T) {
	assert.Equal(t, "write_bw_64", RowName("write_bw_64", "det"))
	assert.Equal(t, "conn_rc_wait_det", RowName("conn_rc_wait", "det"))
	assert.Equal(t, "write_bw_64_siw", RowName("write_bw_64", SiwMode))
	assert.Equal(t, "conn_rc_wait_siw", RowName("conn_rc_wait", SiwMode))
	assert.Equal(t, "RDMA write, 64 B, posts of 16 (siw)", Title("write_bw_64_list16_siw"))
	assert.Equal(t, "bw", Kind("write_bw_64_list16_siw"))
	assert.Equal(t, "", Title("nothing_siw"))
}

// No ratio takes two devices: an rxe0 median never meets a siw0 one, and
// the siw rows count no target.
func TestSiwNeverMixesDevices(t *testing.T) {
	in := inputs(t,
		"write_bw_64\tudapl\t1\t60000\t3.6\tNA\tNA",
		"write_bw_64\tdapl\t1\t50000\t3.0\tNA\tNA",
		"write_bw_64_siw\tperftest\t1\t20000\t1.2\tNA\tNA",
		"write_bw_64_siw\tdapl\t1\t40000\t2.4\tNA\tNA",
		"read_bw_64_siw\tudapl\t1\t30000\t1.8\tNA\tNA",
		"read_bw_64_siw\tdapl\t1\t15000\t0.9\tNA\tNA",
		"write_bw_64_block_siw\tudapl\t1\t30000\t1.8\tNA\tNA",
		"write_bw_64_block_siw\tdapl\t1\t40000\t2.4\tNA\tNA",
	)
	r := &report{in: in}
	s := r.siw()
	assert.Contains(t, s, "| RDMA write, 64 B (siw) | msg rate (1/s) | 20,000 | 40,000 | – | – | – | – | – |\n",
		"no udapl run on siw: no ratio, though rxe0 has one")
	assert.Contains(t, s, "| RDMA read, 64 B (siw) | msg rate (1/s) | – | 15,000 | 30,000 | – | 2.00 | – | 2.00 |\n")
	assert.Contains(t, s, "| RDMA write, 64 B, blocking (siw) | msg rate (1/s) | – | 40,000 | 30,000 | – | 0.75 | – | 0.75 |\n",
		"the blocking rows in the same table")
	assert.NotContains(t, s, "Targets met")
	assert.NotContains(t, s, "RDMA write, 4 KiB", "only the rows that ran")
	assert.Equal(t, 0, r.total, "no target counted")
	assert.Contains(t, r.throughput(bwRows, true), "| RDMA write, 64 B | msg rate (1/s) | – | 50,000 | 60,000 | – | 1.20 | yes | – | 1.20 |\n")
	assert.Equal(t, "", (&report{in: inputs(t, "write_bw_64\tudapl\t1\t1\tNA\tNA\tNA")}).siw(), "no siw VM: no table")
}

// A recorded run of the siw VM alone (testdata/siw): its rows are named
// with _siw, its failures too, the parameters come from its env.txt, and
// its table's ratios are of siw0's medians.
func TestReadSiw(t *testing.T) {
	in, err := Read(filepath.Join("testdata", "siw"))
	require.NoError(t, err)
	for _, r := range in.Results {
		assert.True(t, strings.HasSuffix(r.Row, "_siw"), r.Row)
	}
	s, ok := in.Stat("write_bw_64_siw", "udapl", MsgRate)
	require.True(t, ok)
	assert.Equal(t, 3, s.Runs)
	_, ok = in.Stat("write_bw_64", "udapl", MsgRate)
	assert.False(t, ok, "no rxe0 row from the siw VM")
	assert.Equal(t, 3, in.Fails("send_bw_64_siw", "udapl"))
	assert.Equal(t, 1, in.Fails("write_bw_4k_siw", "dapl"))
	require.Len(t, in.Failures, 4)
	assert.Equal(t, "send_bw_64_siw", in.Failures[0].Row)
	assert.Contains(t, in.Failures[0].Reason, "DAT_DTO_ERR_FLUSHED")
	assert.Equal(t, "20000", ParseEnv(strings.ReplaceAll(in.param("reps"), " ", "\n"))["n64"])
	assert.Equal(t, "", in.env("kernel", "det"), "no rxe VM: no stand-in from siw's")

	var b bytes.Buffer
	require.NoError(t, Write(&b, in))
	md := b.String()
	assert.Contains(t, md, "### Throughput, soft-iWARP (deterministic VM, siw0)")
	assert.Contains(t, md, "at nice 19")
	assert.Contains(t, md, "| RDMA write, 64 B (siw) | msg rate (1/s) | 53,085 | 51,635 | 47,088 | 0.89 | 0.91 | 0.89 | 0.91 |\n")
	assert.Contains(t, md, "| send/recv, 64 B (siw) | msg rate (1/s) | 25,579 | – | FAILED (3 runs) | – | – | – | – |\n")
	assert.Contains(t, md, "**0 of 16 met**", "the siw rows count no target")
	assert.Contains(t, md, "bandwidth rows 20000 iterations at 64 B")
}

package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A profile in callgrind's own compressed form: names defined once and
// referred to by id, positions relative to the last cost line (which a
// call's line does not move), cob= only where the callee's object differs.
const compressedProfile = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 1
cmd:  /usr/bin/tool -n 5
part: 1

positions: instr line
events: Ir
summary: 1000

ob=(1) /usr/bin/tool
fl=(1) ???
fn=(1) 0x0000000000001000
0x1000 0 10
+4 * 5
cob=(2) /usr/lib/libibverbs/librxe-rdmav34.so
cfi=(2) ???
cfn=(2) 0x0000000000003cc0
calls=5 0x3cc0 0
+2 * 500
+4 * 7
cfn=(3) 0x0000000000002000
calls=1 0x2000 0
* * 100

ob=(2)
fl=(2)
fn=(2)
0x3cc0 0 500

ob=(1)
fl=(1)
fn=(3)
0x2000 0 60
cfn=(4) main'2
calls=1 0x2100 0
+8 * 40

fn=(4)
0x2100 0 40
totals: 1000
`

func TestParseCompressed(t *testing.T) {
	p, err := parseProfile(strings.NewReader(compressedProfile))
	if err != nil {
		t.Fatal(err)
	}
	if p.Totals != 1000 || p.Cmd != "/usr/bin/tool -n 5" {
		t.Fatalf("totals %d cmd %q", p.Totals, p.Cmd)
	}
	tool := "/usr/bin/tool"
	top := p.Funcs[FuncKey{tool, "0x0000000000001000"}]
	if top == nil {
		t.Fatal("no 0x1000")
	}
	// 10 + 5 own at 0x1000 and 0x1004; the call lines (at 0x1006, relative
	// to 0x1004) do not move the position: the 7 is at 0x1004+4.
	if top.Self != 22 || top.Inclusive() != 622 {
		t.Errorf("0x1000: self %d inclusive %d, want 22 and 622", top.Self, top.Inclusive())
	}
	want := map[uint64]int64{0x1000: 10, 0x1004: 5, 0x1008: 7}
	for a, c := range want {
		if top.SelfAt[a] != c {
			t.Errorf("0x1000 at %#x: %d, want %d (all: %v)", a, top.SelfAt[a], c, top.SelfAt)
		}
	}
	rxe := FuncKey{"/usr/lib/libibverbs/librxe-rdmav34.so", "0x0000000000003cc0"}
	if a := top.Calls[rxe]; a == nil || a.Count != 5 || a.Cost != 500 {
		t.Errorf("call into librxe: %+v", a)
	}
	// no cob=: the callee is in the caller's object
	if a := top.Calls[FuncKey{tool, "0x0000000000002000"}]; a == nil || a.Cost != 100 {
		t.Errorf("call to 0x2000: %+v", a)
	}
	if f := p.Funcs[rxe]; f == nil || f.Self != 500 {
		t.Errorf("librxe's function: %+v", f)
	}
	if baseName("main'2") != "main" || baseName("f'x") != "f'x" {
		t.Error("baseName")
	}
	loop, err := perftestLoop(p)
	if err == nil {
		t.Errorf("perftestLoop found %s, called by nobody", loop.Key)
	}

	// Written back and read again, it counts the same.
	var buf bytes.Buffer
	if err := WriteProfile(&buf, p, func(*Func) bool { return true }); err != nil {
		t.Fatal(err)
	}
	q, err := parseProfile(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	for k, f := range p.Funcs {
		g := q.Funcs[k]
		if g == nil || g.Self != f.Self || g.Inclusive() != f.Inclusive() {
			t.Errorf("%s: written and read again: %+v, was %+v", k, g, f)
		}
	}
	if q.Funcs[FuncKey{tool, "0x0000000000001000"}].SelfAt[0x1008] != 7 {
		t.Error("instruction addresses lost in writing")
	}
}

// A goroutine switch leaves callgrind charging the polling loop, at
// udattest's lines (fi=), to the runtime function the switch left:
// chargeToolLines gives those lines to the tool loop, and the inlined
// lines of other files stay where they are.
const switchedProfile = `# callgrind format
version: 1
cmd: /tmp/udattest -n 5
positions: line
events: Ir

ob=(1) /tmp/udattest
fl=(1) /usr/local/go/src/runtime/proc.go
fn=(1) runtime.exitsyscall
4883 30
fi=(2) /work/main/cmd/udattest/perf.go
240 500
fi=(3) /usr/local/go/src/sync/atomic/type.go
10 20
fe=(1)
4890 5

fl=(4) /work/main/udat/evd.go
fn=(2) github.com/udapl-go/udapl/udat.(*EVD).DequeueInto
400 100
fi=(5) /usr/local/go/src/internal/sync/mutex.go
30 12
totals: 667
`

func TestToolLinesChargedToMain(t *testing.T) {
	p, err := parseProfile(strings.NewReader(switchedProfile))
	if err != nil {
		t.Fatal(err)
	}
	// Written and read again, the files of the lines stay.
	var buf bytes.Buffer
	if err := WriteProfile(&buf, p, func(*Func) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if p, err = parseProfile(&buf); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	exit := p.Funcs[FuncKey{"/tmp/udattest", "runtime.exitsyscall"}]
	if exit == nil || exit.Self != 555 || exit.Foreign["/work/main/cmd/udattest/perf.go"] != 500 {
		t.Fatalf("runtime.exitsyscall: %+v", exit)
	}
	chargeLines(p)
	got := split(p)
	want := map[string]int64{catCgo: 55, catTool: 500, catComplete: 112}
	for _, c := range categories {
		if got[c] != want[c] {
			t.Errorf("%s: %d, want %d", c, got[c], want[c])
		}
	}
}

// cverbs' direct path on Soft-RoCE (cverbs/rxe.go) is the provider's work:
// its functions, and its lines inlined into other cverbs functions, count
// as the provider; the rest of cverbs stays in the DAT paths.
const directProfile = `# callgrind format
version: 1
cmd: /tmp/udattest -n 5
positions: line
events: Ir

ob=(1) /tmp/udattest
fl=(1) /work/main/cverbs/post.go
fn=(1) github.com/udapl-go/udapl/cverbs.SendBatch.SetSGE
220 40
fi=(2) /work/main/cverbs/rxe.go
198 6
fe=(1)
227 4

fl=(2)
fn=(2) github.com/udapl-go/udapl/cverbs.(*rxeSend).putSGE
256 90

fl=(3) /work/main/cverbs/cq.go
fn=(3) github.com/udapl-go/udapl/cverbs.(*CQ).PollSerial
100 10
fi=(2)
447 30
totals: 180
`

func TestDirectPathChargedToProvider(t *testing.T) {
	p, err := parseProfile(strings.NewReader(directProfile))
	require.NoError(t, err)
	chargeLines(p)
	got := split(p)
	want := map[string]int64{catPost: 44, catComplete: 10, catProvider: 126}
	for _, c := range categories {
		assert.Equal(t, want[c], got[c], c)
	}
}

// The recorded sample (testdata/, trimmed with `instrcount trim` from a run
// of make bench-instr's write_64 row): 64 B RDMA writes, 2,000 and 10,000
// of them, each tool under callgrind in the VM. The values are those of the
// untrimmed profiles.
func TestRecordedSample(t *testing.T) {
	const n1, n2 = 2000, 10000
	dir := "testdata"
	for _, c := range []struct {
		tool string
		want float64
		loop string
	}{
		{"udapl", sampleUdapl, ""},
		{"dapl", sampleDapl, ""},
		{"perftest", samplePerftest, "0x000000000001ea90"},
	} {
		r1, err := loadRun(c.tool, filepath.Join(dir, "write_64."+c.tool+".client.2000.1.out"), sampleDaplVersion)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := loadRun(c.tool, filepath.Join(dir, "write_64."+c.tool+".client.10000.1.out"), sampleDaplVersion)
		if err != nil {
			t.Fatal(err)
		}
		got := perOp(r1.Count, r2.Count, n1, n2)
		if math.Abs(got-c.want) > 0.05 {
			t.Errorf("%s: %.2f instructions per operation, want %.2f", c.tool, got, c.want)
		}
		if r2.Loop != c.loop {
			t.Errorf("%s: loop %q, want %q", c.tool, r2.Loop, c.loop)
		}
		if c.tool == "dapl" && (r1.Posts != n1 || r2.Posts != n2) {
			t.Errorf("dapl: %d and %d posts", r1.Posts, r2.Posts)
		}
		if c.tool != "udapl" {
			continue
		}
		// The split adds up to the count, and the big parts are there.
		s1, s2 := split(r1.Profile), split(r2.Profile)
		var sum float64
		for _, cat := range categories {
			v := perOp(s1[cat], s2[cat], n1, n2)
			sum += v
			if w, ok := sampleSplit[cat]; ok && math.Abs(v-w) > 0.05 {
				t.Errorf("udapl %s: %.2f, want %.2f", cat, v, w)
			}
		}
		if math.Abs(sum-got) > 1e-6 {
			t.Errorf("udapl: the split adds up to %.2f, the count is %.2f", sum, got)
		}
	}
}

// Tool c counts the whole process: the trimmed dapltest profiles' totals
// (the summary line), not the throughput loop that tool dapl takes.
func TestWholeProcess(t *testing.T) {
	f1 := filepath.Join("testdata", "write_64.dapl.client.2000.1.out")
	f2 := filepath.Join("testdata", "write_64.dapl.client.10000.1.out")
	r, err := loadRun("c", f1, "")
	require.NoError(t, err)
	assert.Equal(t, int64(7270832), r.Count)
	require.NotNil(t, r.Profile)
	var out strings.Builder
	require.NoError(t, cmdPair([]string{"-tool", "c", "-top", "3", "2000", f1, "10000", f2}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The count, then the top functions, without udapl's split.
	assert.Equal(t, "c: 7270832 instructions at N=2000, 21758925 at N=10000: 1811.0 per operation", lines[0])
	assert.Len(t, lines, 4)
	assert.NotContains(t, out.String(), "sum")
}

// The report over the sample, as scripts/bench-instr.sh lays it out.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	env := "n1=2000\nn2=10000\nreps=1\ndepth=64\ncpus=1\nkernel=k\ndevice=rxe0\nvalgrind=valgrind-3.19.0\nperftest=p\ndapl=" + sampleDaplVersion + "\n"
	if err := os.WriteFile(filepath.Join(dir, "env.txt"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/write_64.*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := measure(dir)
	if err != nil {
		t.Fatal(err)
	}
	md := r.markdown()
	row := "| RDMA write, 64 B | " + num(sampleUdapl) + " | " + num(sampleDapl) + " | " + num(samplePerftest) + " |"
	if !strings.Contains(md, row) {
		t.Errorf("no row %q in\n%s", row, md)
	}
	if !strings.Contains(md, "| RDMA read, 64 B | – | – | – |") {
		t.Errorf("a row not measured is not shown as such:\n%s", md)
	}
	if !strings.HasPrefix(md, sectionBegin) || !strings.HasSuffix(md, sectionEnd+"\n") {
		t.Error("the section's markers")
	}
}

func TestSplice(t *testing.T) {
	doc := "# Benchmarks\n\nintro\n\n## Results\n\nrates\n"
	sec := sectionBegin + "\n## Instructions per operation\n\nA\n" + sectionEnd + "\n"
	got := spliceSection(doc, sec)
	want := "# Benchmarks\n\nintro\n\n" + sec + "\n## Results\n\nrates\n"
	if got != want {
		t.Fatalf("first splice:\n%s\nwant\n%s", got, want)
	}
	sec2 := strings.Replace(sec, "A\n", "B\n", 1)
	if again := spliceSection(got, sec2); again != strings.Replace(want, "A\n", "B\n", 1) {
		t.Errorf("replacing:\n%s", again)
	}
	if ex, ok := extractSection(got); !ok || ex != sec {
		t.Errorf("extract: %q %v", ex, ok)
	}
	if _, ok := extractSection(doc); ok {
		t.Error("extract from a document without the section")
	}
	if got := spliceSection("", sec); got != sec {
		t.Errorf("into an empty file: %q", got)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999.4: "999", 1908.5: "1,909", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// What the untrimmed profiles of the sample count (instrcount pair).
const (
	sampleDaplVersion = "2.1.10.1.f1e05b7a-3+b1"
	sampleUdapl       = (23189567.0 - 7921838.0) / 8000
	sampleDapl        = (9999168.0 - 1999168.0) / 8000
	samplePerftest    = (3982162.0 - 796912.0) / 8000
)

var sampleSplit = map[string]float64{
	catPost:     464.45,
	catComplete: 521.94,
	catCgo:      335.28,
	catShim:     76.60,
	catProvider: 217.01,
	catLibc:     70.19,
	catTool:     149.41,
	catRuntime:  73.60,
}

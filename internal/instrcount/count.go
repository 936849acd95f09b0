package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// What each tool's count is, of one process's profile.

// goCount is a Go program's count: every thread but the runtime's monitor
// (runtime.sysmon runs alone on its thread and wakes more often the slower
// the program runs, so under valgrind it grows with the run's length). The
// profiles are one per thread (--separate-threads=yes); it returns their
// sum without the monitor's thread, the monitor's, and the others merged
// into one profile.
func goCount(threads []*Profile) (count, monitor int64, merged *Profile, err error) {
	merged = &Profile{Funcs: map[FuncKey]*Func{}}
	monitors := 0
	for _, t := range threads {
		if t.hasFunc("runtime.sysmon") {
			monitors++
			monitor += t.Totals
			continue
		}
		merged.Merge(t)
		if merged.Cmd == "" {
			merged.Cmd = t.Cmd
		}
	}
	if monitors != 1 {
		return 0, 0, nil, fmt.Errorf("%d threads run runtime.sysmon, want 1 (a Go program, --separate-threads=yes)", monitors)
	}
	return merged.Totals, monitor, merged, nil
}

func (p *Profile) hasFunc(name string) bool {
	for k := range p.Funcs {
		if k.Name == name {
			return true
		}
	}
	return false
}

// perftestLoop finds perftest's measurement loop (run_iter_bw and the like,
// in a stripped binary): the function of the program's own object that
// calls into the RDMA provider (libibverbs/lib*-rdmav*.so) most often. It
// has to be called once. Its inclusive cost leaves out what perftest does
// before and after it: the connection, the clock calibration, the report.
func perftestLoop(p *Profile) (*Func, error) {
	prog := programObject(p)
	var best *Func
	var bestCalls int64
	for _, f := range p.Funcs {
		if f.Key.Object != prog {
			continue
		}
		var n int64
		for to, a := range f.Calls {
			if isProvider(to.Object) {
				n += a.Count
			}
		}
		if n > bestCalls || n == bestCalls && best != nil && f.Key.Name < best.Key.Name {
			best, bestCalls = f, n
		}
	}
	if best == nil || bestCalls == 0 {
		return nil, fmt.Errorf("no function of %s calls the provider", prog)
	}
	if n := p.callsInto(best.Key); n != 1 {
		return nil, fmt.Errorf("the measurement loop %s is called %d times, want 1", best.Key, n)
	}
	return best, nil
}

// programObject is the object of the profiled command, by the base name of
// its first word.
func programObject(p *Profile) string {
	fs := strings.Fields(p.Cmd)
	if len(fs) == 0 {
		return ""
	}
	base := filepath.Base(fs[0])
	for k := range p.Funcs {
		if filepath.Base(k.Object) == base {
			return k.Object
		}
	}
	return fs[0]
}

func isProvider(obj string) bool {
	return strings.Contains(obj, "/libibverbs/") && strings.Contains(obj, "-rdmav")
}

func (p *Profile) callsInto(k FuncKey) int64 {
	var n int64
	for _, f := range p.Funcs {
		if a := f.Calls[k]; a != nil {
			n += a.Count
		}
	}
	return n
}

// daplLoop says where dapltest -T P's throughput loop is in one build of
// dapltest (stripped: callgrind names a function by its offset). The loop is
// inlined into the function that runs both phases (DT_Performance_Test_
// Client_Exchange); each operation it calls the post
// (DT_performance_post_rdma_op) and the reap (DT_performance_reap) once,
// and the loop's own instructions lie in [LoopLo, LoopHi). The latency phase
// that follows (N more operations, one at a time, with clock reads) is left
// out.
type daplLoop struct {
	Exchange, Post, Reap string
	LoopLo, LoopHi       uint64
}

// daplBuilds: the builds of dapltest (dapl2-utils version) whose loop is known.
// For another, find the two functions and the loop with objdump -d (the
// exchange function calls dat_ep_post_rdma_write@plt directly in its latency
// phase; the loop is the one that calls the reap).
var daplBuilds = map[string]daplLoop{
	"2.1.10.1.f1e05b7a-3+b1": {
		Exchange: "0x000000000000f5e0",
		Post:     "0x0000000000011a40",
		Reap:     "0x0000000000011e80",
		LoopLo:   0xf8fe,
		LoopHi:   0xf9b0,
	},
}

// daplCount is dapltest's throughput loop: the post and the reap with
// everything they call, and the loop's own instructions; posts is how many
// times the loop posted.
func daplCount(p *Profile, version string) (count, posts int64, err error) {
	b, ok := daplBuilds[version]
	if !ok {
		return 0, 0, fmt.Errorf("dapltest %q: its throughput loop is not known (see daplBuilds)", version)
	}
	obj := programObject(p)
	ex := p.Funcs[FuncKey{obj, b.Exchange}]
	if ex == nil {
		return 0, 0, fmt.Errorf("dapltest: no function %s in %s", b.Exchange, obj)
	}
	if ex.SelfAt == nil {
		return 0, 0, fmt.Errorf("dapltest: no instruction addresses (callgrind --dump-instr=yes)")
	}
	post, reap := ex.Calls[FuncKey{obj, b.Post}], ex.Calls[FuncKey{obj, b.Reap}]
	if post == nil || reap == nil {
		return 0, 0, fmt.Errorf("dapltest: %s calls no %s or no %s", b.Exchange, b.Post, b.Reap)
	}
	count = post.Cost + reap.Cost
	for a, c := range ex.SelfAt {
		if a >= b.LoopLo && a < b.LoopHi {
			count += c
		}
	}
	return count, post.Count, nil
}

// Categories of udapl's instructions, in the order of the split's table.
const (
	catPost     = "DAT post path (udat, cverbs Go side)"
	catComplete = "DAT completion path (udat, cverbs Go side)"
	catCgo      = "cgo crossing (Go runtime)"
	catShim     = "C shims (cverbs.h, cgo prologues)"
	catProvider = "provider (librxe, libibverbs; on Soft-RoCE cverbs/rxe.go)"
	catLibc     = "libc"
	catTool     = "tool loop (udattest, package main)"
	catRuntime  = "other Go runtime and standard library"
	catOther    = "other"
)

var categories = []string{catPost, catComplete, catCgo, catShim, catProvider, catLibc, catTool, catRuntime, catOther}

const modPrefix = "github.com/udapl-go/udapl/"

// toolDir holds udattest's sources, package main.
const toolDir = "/cmd/udattest/"

// directFile is cverbs' direct path on Soft-RoCE: the Go code that writes
// and reads the provider's queues in librxe's place, the provider's part.
const directFile = "/cverbs/rxe.go"

// chargeLines gives the lines of two kinds of code back to their part
// when callgrind charged them to another function: udattest's own lines,
// and the direct path's that other cverbs functions inline.
//
// When a goroutine switch (the scheduler's gogo) jumps into the polling
// loop, callgrind goes on charging the loop to the function the switch
// left, runtime.exitsyscall for one: 52 instructions per 64 B RDMA write
// that were the loop's showed as the cgo crossing. No function of another
// package can inline main's code, so cost at main's lines in one is the
// loop's. The direct path's small helpers (a slot's address, the queue's
// indexes) are inlined into the cverbs functions that call them, and are
// the provider's work all the same. Either moves to a function of its own,
// named after the one it was charged to, in the file whose part it is.
func chargeLines(p *Profile) {
	chargeForeign(p, toolDir, "main.(loop charged to %s)", func(n string) bool { return strings.HasPrefix(n, "main.") })
	chargeForeign(p, directFile, modPrefix+"cverbs.(direct path charged to %s)", func(string) bool { return false })
}

// chargeForeign moves the cost at lines of files whose name contains dir
// out of every function but those own names: to a function named by
// label (with the name of the one it leaves) in that file.
func chargeForeign(p *Profile, dir, label string, own func(name string) bool) {
	for k, f := range p.Funcs {
		if own(k.Name) || strings.Contains(f.File, dir) {
			continue
		}
		for file, c := range f.Foreign {
			if !strings.Contains(file, dir) {
				continue
			}
			f.Self -= c
			delete(f.Foreign, file)
			mk := FuncKey{k.Object, fmt.Sprintf(label, baseName(k.Name))}
			m := p.Funcs[mk]
			if m == nil {
				m = &Func{Key: mk, File: file, Calls: map[FuncKey]*Arc{}}
				p.Funcs[mk] = m
			}
			m.Self += c
		}
	}
}

// cgoRuntime: the Go runtime's side of a cgo call.
var cgoRuntime = map[string]bool{
	"runtime.cgocall":                    true,
	"runtime.asmcgocall.abi0":            true,
	"runtime.asmcgocall":                 true,
	"runtime.entersyscall":               true,
	"runtime.reentersyscall":             true,
	"runtime.exitsyscall":                true,
	"runtime.exitsyscallfast":            true,
	"runtime.exitsyscall0":               true,
	"runtime.save":                       true,
	"runtime.casgstatus":                 true,
	"runtime.entersyscall_sysmon":        true,
	"runtime.exitsyscallTryGetP":         true,
	"runtime.exitsyscallfast_pidle":      true,
	"runtime.asmcgocall_landingpad.abi0": true,
	"gosave_systemstack_switch":          true,
	"runtime.getcallerfp":                true,
	"runtime.getfp":                      true,
}

// chargedToCaller: small helpers whose cost goes to the category of the
// function that called them (the locks the cgo crossing takes are the
// crossing's).
var chargedToCaller = map[string]bool{
	"runtime.lock2":   true,
	"runtime.unlock2": true,
}

// completionPrefixes and completionWords: the functions of udat and cverbs
// on the completion side, by receiver or name; the rest of both packages is
// the post side.
var (
	completionPrefixes = []string{
		"(*EVD).", "(*CQ).", "(*CompChannel).", "(*CNO).", "(*fifoRing).usualHead", "(*fifoRing).popUsual",
		"(*fifoRing).release", "(*fifoRing).next", "(*fifoRing).complete", "(*fifoRing).pop", "(*EP).slotEventTo",
	}
	completionWords = []string{"deliver", "Deliver", "Poll", "poll", "Wait", "wait", "Dequeue", "dequeue"}
)

// baseName strips callgrind's recursion mark ('2, '3, ...).
func baseName(n string) string {
	if i := strings.LastIndexByte(n, '\''); i > 0 {
		if _, err := strconv.Atoi(n[i+1:]); err == nil {
			return n[:i]
		}
	}
	return n
}

// category is where one function of udattest's profile goes.
func category(f *Func, prog string) string {
	n, o := baseName(f.Key.Name), f.Key.Object
	switch {
	case strings.Contains(o, "/libibverbs"), strings.Contains(o, "libibverbs.so"):
		return catProvider
	case strings.Contains(filepath.Base(o), "libc.so"):
		return catLibc
	case o != prog:
		return catOther
	case strings.HasPrefix(n, "main."):
		return catTool
	case strings.Contains(f.File, directFile):
		return catProvider
	case strings.HasSuffix(f.File, "cverbs.h"), strings.Contains(f.File, "cgo-gcc-prolog"):
		return catShim
	case cgoRuntime[n], strings.Contains(f.File, "runtime/cgo/"), strings.HasPrefix(n, "_cgo_"),
		strings.Contains(n, "._Cfunc_"), strings.Contains(n, "._cgo_"):
		// the runtime's side, the runtime/cgo C code, and cgo's Go stubs
		return catCgo
	case strings.HasPrefix(n, modPrefix+"udat."), strings.HasPrefix(n, modPrefix+"cverbs."):
		rest := n[len(modPrefix):]
		rest = rest[strings.IndexByte(rest, '.')+1:]
		for _, c := range completionPrefixes {
			if strings.HasPrefix(rest, c) {
				return catComplete
			}
		}
		for _, c := range completionWords {
			if strings.Contains(rest, c) {
				return catComplete
			}
		}
		return catPost
	}
	return catRuntime
}

// split is a profile's cost per category: each function's own cost, a
// charged-to-caller helper's shared out among its callers' categories in
// proportion to what their calls cost.
func split(p *Profile) map[string]int64 {
	prog := programObject(p)
	out := map[string]int64{}
	catOf := map[FuncKey]string{}
	for k, f := range p.Funcs {
		catOf[k] = category(f, prog)
	}
	// callers of each helper
	in := map[FuncKey]map[string]int64{}
	for _, f := range p.Funcs {
		for to, a := range f.Calls {
			if chargedToCaller[baseName(to.Name)] {
				if in[to] == nil {
					in[to] = map[string]int64{}
				}
				c := catOf[f.Key]
				if chargedToCaller[baseName(f.Key.Name)] {
					c = catRuntime
				}
				in[to][c] += a.Cost
			}
		}
	}
	for k, f := range p.Funcs {
		shares := in[k]
		if !chargedToCaller[baseName(k.Name)] || len(shares) == 0 {
			out[catOf[k]] += f.Self
			continue
		}
		var total int64
		for _, c := range shares {
			total += c
		}
		cats := make([]string, 0, len(shares))
		for c := range shares {
			cats = append(cats, c)
		}
		sort.Strings(cats)
		left := f.Self
		for i, c := range cats {
			share := f.Self * shares[c] / total
			if i == len(cats)-1 {
				share = left
			}
			out[c] += share
			left -= share
		}
	}
	return out
}

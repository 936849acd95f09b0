package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"
)

// The causes of the latency tail. With -lat-causes DIR on both ends, each
// side of a polling ping-pong (-lat -o send or write) notes, once per
// message and off the critical path (after its post, while the message is
// on its way), what happened to it since its previous message: it yielded
// to the Go scheduler, another thread of the process ran (the runtime woke
// one: a spinning M after a yield or a preemption, the monitor, a timer),
// its thread was switched out, the goroutine moved to another thread, a GC
// cycle ran, it waited for a send completion. The server leaves its notes
// in DIR/lat-peer.flags as it ends the ping-pong; the client takes them
// after the run and prints, for the samples above twice the median and for
// the p99 tail (the samples at or above p99), how many had each cause, on
// either side. The notes cost three system calls and a runtime/metrics
// read per message, which is why they are off by default: the latency
// numbers of a run with them are not the plain ones.

// latCausesDir is where the server leaves its notes: -lat-causes, set
// once before anything runs; "": the notes are off.
var latCausesDir string

// The causes, one bit each.
const (
	causeYield   uint8 = 1 << iota // the loop yielded (-yield)
	causeOther                     // another thread of the process ran (and slept again)
	causeVolSw                     // the thread blocked in the kernel (voluntary switch)
	causeInvolSw                   // the kernel preempted the thread (involuntary switch)
	causeMigrate                   // the goroutine ran on another thread
	causeGC                        // a GC cycle ended
	causeReap                      // the loop waited for a send completion
	numCauses    = iota
)

var causeNames = [numCauses]string{
	"yield to the scheduler (-yield)",
	"another thread of this process ran",
	"thread blocked (voluntary switch)",
	"thread preempted (involuntary switch)",
	"goroutine moved to another thread",
	"GC cycle",
	"waited for a send completion",
}

// causeSnap is what a note compares with the previous one.
type causeSnap struct {
	tid            int
	nvcsw, nivcsw  int64
	gc             uint64
	procVcsw       int64 // voluntary switches of the whole process
	yieldLast      time.Time
	reaps          int
	threadCounters bool // tid and the switch counts are known
}

// latCauses records the notes of one side of a ping-pong.
type latCauses struct {
	dir   string
	flags []uint8 // flags[m-1]: since the note before message m's
	m     int
	prev  causeSnap
	reaps int // lazyReaper.wait calls
	gc    []metrics.Sample
	y     *yielder
	// Allocations during the run (runtime/metrics), from start to done.
	allocs0, allocs uint64
	gcs             uint64
	cgo0, cgo       uint64 // cgo calls
	threads         uint64 // OS threads at the end
}

// newLatCauses returns the recorder of a ping-pong of n messages, or nil
// (whose methods do nothing) when the notes are off.
func newLatCauses(n int, y *yielder) *latCauses {
	dir := latCausesDir
	if dir == "" {
		return nil
	}
	lc := &latCauses{dir: dir, flags: make([]uint8, n+1), y: y,
		gc: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:objects"},
			{Name: "/cgo/go-to-c-calls:calls"}, {Name: "/sched/threads/total:threads"}}}
	metrics.Read(lc.gc)
	lc.allocs0, lc.cgo0 = lc.gc[1].Value.Uint64(), lc.gc[2].Value.Uint64()
	lc.prev = lc.snap()
	return lc
}

func (lc *latCauses) snap() causeSnap {
	s := causeSnap{yieldLast: lc.y.last, reaps: lc.reaps}
	metrics.Read(lc.gc)
	s.gc = lc.gc[0].Value.Uint64()
	s.tid, s.nvcsw, s.nivcsw, s.procVcsw, s.threadCounters = threadCounters()
	return s
}

// note records what happened since the previous note; call it once per
// message, after its post.
func (lc *latCauses) note() {
	if lc == nil {
		return
	}
	s := lc.snap()
	p := &lc.prev
	var f uint8
	if !s.yieldLast.Equal(p.yieldLast) {
		f |= causeYield
	}
	if s.threadCounters && p.threadCounters {
		// The process's voluntary switches less this thread's: another
		// of its threads (a spinning M, the monitor, a timer's) went to
		// sleep, so it had run.
		if s.procVcsw-p.procVcsw > s.nvcsw-p.nvcsw {
			f |= causeOther
		}
		if s.tid != p.tid {
			f |= causeMigrate
		} else {
			if s.nvcsw != p.nvcsw {
				f |= causeVolSw
			}
			if s.nivcsw != p.nivcsw {
				f |= causeInvolSw
			}
		}
	}
	if s.gc != p.gc {
		f |= causeGC
	}
	if s.reaps != p.reaps {
		f |= causeReap
	}
	if lc.m < len(lc.flags) {
		lc.flags[lc.m] = f
	}
	lc.m++
	lc.prev = s
}

// done ends the notes: the allocations and GC cycles of the run.
func (lc *latCauses) done() {
	if lc == nil {
		return
	}
	metrics.Read(lc.gc)
	lc.allocs = lc.gc[1].Value.Uint64() - lc.allocs0
	lc.cgo = lc.gc[2].Value.Uint64() - lc.cgo0
	lc.threads = lc.gc[3].Value.Uint64()
	lc.gcs = lc.gc[0].Value.Uint64()
}

// peerFile is where the server leaves its notes for the client.
func (lc *latCauses) peerFile() string { return filepath.Join(lc.dir, "lat-peer.flags") }

// leave writes the server's notes for the client (message m's at m-1).
func (lc *latCauses) leave() error {
	if lc == nil {
		return nil
	}
	lc.done()
	tmp := lc.peerFile() + ".tmp"
	if err := os.WriteFile(tmp, lc.flags[1:], 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, lc.peerFile())
}

// clientCauses is the client's recorder of the last ping-pong, for runPerf
// to report once the server has left its notes (after the run's msgDone).
var clientCauses *latCauses

// takePeer reads and removes the server's notes; nil if there are none for
// n messages.
func (lc *latCauses) takePeer(n int) []uint8 {
	b, err := os.ReadFile(lc.peerFile())
	os.Remove(lc.peerFile())
	if err != nil || len(b) != n {
		return nil
	}
	return b
}

// causeTable is the per-cause count of a set of samples.
type causeTable struct {
	n         int            // samples
	own, peer [numCauses]int // samples with the cause on this side / on the peer
	none      int            // samples with no cause on either side
	ownOnly   [numCauses]int // samples whose only cause is this one (this side)
	peerOnly  [numCauses]int // the same, on the peer
}

// sampleFlags returns the causes noted for sample j, message j+1's round
// trip: the client's note at the post of message j+2 (own[j+1]) and the
// server's at its echo of message j+1 (peer[j]); 0 where there is none.
func sampleFlags(j int, own, peer []uint8) (o, p uint8) {
	if j+1 < len(own) {
		o = own[j+1]
	}
	if j < len(peer) {
		p = peer[j]
	}
	return o, p
}

// classify counts, for the samples that pick selects, the causes noted on
// each side (sampleFlags).
func classify(samples []time.Duration, own, peer []uint8, pick func(time.Duration) bool) causeTable {
	var t causeTable
	for j, s := range samples {
		if !pick(s) {
			continue
		}
		t.n++
		o, p := sampleFlags(j, own, peer)
		if o == 0 && p == 0 {
			t.none++
		}
		for c := range numCauses {
			bit := uint8(1) << c
			if o&bit != 0 {
				t.own[c]++
				if o == bit && p == 0 {
					t.ownOnly[c]++
				}
			}
			if p&bit != 0 {
				t.peer[c]++
				if p == bit && o == 0 {
					t.peerOnly[c]++
				}
			}
		}
	}
	return t
}

// report prints the causes of the slow samples and of the p99 tail, and
// how often each cause came at all. samples is in message order (not yet
// sorted); peer is the server's notes or nil.
func (lc *latCauses) report(w io.Writer, samples []time.Duration, peer []uint8) {
	if lc == nil || len(samples) == 0 {
		return
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	p50, p99 := percentile(sorted, 50), percentile(sorted, 99)
	slow := classify(samples, lc.flags, peer, func(s time.Duration) bool { return s > 2*p50 })
	tail := classify(samples, lc.flags, peer, func(s time.Duration) bool { return s >= p99 })
	all := classify(samples, lc.flags, peer, func(time.Duration) bool { return true })
	fmt.Fprintf(w, "lat-causes: %d samples, p50 %.2f us, p99 %.2f us; %d above 2 x p50, %d at or above p99\n",
		len(samples), us(p50), us(p99), slow.n, tail.n)
	fmt.Fprintf(w, "lat-causes: client: %d allocations, %d cgo calls, %d GC cycles so far, %d threads; server notes: %v\n",
		lc.allocs, lc.cgo, lc.gcs, lc.threads, peer != nil)
	fmt.Fprintf(w, "lat-causes: %-40s %-6s %8s %8s %8s %8s %8s\n", "cause", "side", "all", "slow", "alone", "p99", "p99 %")
	row := func(name, side string, a, s, alone, t int) {
		if a == 0 && s == 0 {
			return
		}
		pct := 0.0
		if tail.n > 0 {
			pct = 100 * float64(t) / float64(tail.n)
		}
		fmt.Fprintf(w, "lat-causes: %-40s %-6s %8d %8d %8d %8d %7.0f%%\n", name, side, a, s, alone, t, pct)
	}
	for c := range numCauses {
		row(causeNames[c], "client", all.own[c], slow.own[c], slow.ownOnly[c], tail.own[c])
		if peer != nil {
			row(causeNames[c], "server", all.peer[c], slow.peer[c], slow.peerOnly[c], tail.peer[c])
		}
	}
	row("none of these", "both", all.none, slow.none, slow.none, tail.none)
	var b strings.Builder
	for j, s := range samples {
		if s >= p99 {
			o, p := sampleFlags(j, lc.flags, peer)
			fmt.Fprintf(&b, " %d:%.0fus/c%02x/s%02x", j, us(s), o, p)
		}
	}
	fmt.Fprintf(w, "lat-causes: tail (sample:latency/client flags/server flags):%s\n", b.String())
	fmt.Fprintf(w, "lat-causes: GOMAXPROCS %d\n", runtime.GOMAXPROCS(0))
}

// end closes the notes of a ping-pong that ended with err: the client's
// are kept for runPerf, the server's left for the client.
func (lc *latCauses) end(initiator bool, err error) error {
	if lc == nil || err != nil {
		return err
	}
	if initiator {
		lc.done()
		clientCauses = lc
		return nil
	}
	if err := lc.leave(); err != nil {
		fmt.Fprintf(os.Stderr, "udattest: -lat-causes: %v\n", err)
	}
	return nil
}

//go:build linux && cgo

package udat_test

// Benchmarks of the data path: posting DTOs and polling their completions,
// one at a time and in batches of 16 and 128, posted one DAT call per DTO
// (post=each) or with one EP.PostRequests/PostRecvs call (post=list), with one
// segment per DTO and with 8 segments in 8 different LMRs (every segment is
// looked up and checked at post time). They are device benchmarks: run them
// inside the VM,
//
//	go test -exec "$PWD/scripts/vmexec" -run '^$' -bench . ./udat/
//
// Besides ns/op and allocs/op (one op is one batch) each reports, from a
// separate pass over the same loop:
//
//	ns/DTO             time per DTO (post + completion)
//	post-allocs/DTO    heap allocations per post
//	poll-allocs/DTO    heap allocations per completion reaped
//	post-cgo/batch     Go-to-C calls made by posting a batch (for
//	                   send/recv: the receives and the sends)
//	poll-cgo/batch     Go-to-C calls made by the DequeueInto calls that
//	                   returned a completion
//	empty-polls/batch  DequeueInto calls that found nothing (each one cgo call)
//
// The cgo figures are read from the runtime's own counter
// (/cgo/go-to-c-calls:calls), not estimated.

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

const (
	benchMaxBatch = 128
	benchMaxSegs  = 8
	benchSegLen   = 8 // bytes per segment
	benchTimeout  = udat.Timeout(20_000_000)
)

var benchQual atomic.Uint64

func init() { benchQual.Store(uint64(5000 + os.Getpid()%4000)) } // see connQualSeq

// benchPair is a connected pair of EPs on the device's loopback, each with
// its own request and receive EVDs and benchMaxSegs LMRs.
type benchPair struct {
	ia                   *udat.IA
	client, server       *udat.EP
	cReq, cRecv          *udat.EVD
	sReq, sRecv          *udat.EVD
	cLMR, sLMR           []*udat.LMR
	remote               udat.RMRTriplet
	iov1, iov8, recvIOV8 []udat.LMRTriplet
}

func newBenchPair(b *testing.B) *benchPair {
	b.Helper()
	dev := devtest.Require(b)
	ia, err := udat.OpenIA(dev, 8)
	if err != nil {
		b.Fatalf("open the RDMA device %q (device benchmarks run inside the VM): %v", dev, err)
	}
	b.Cleanup(func() { ia.Close(udat.CloseAbruptFlag) })
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	pz, err := ia.CreatePZ()
	must(err)
	attr := udat.DefaultEPAttr()
	attr.MaxRequestDTOs, attr.MaxRecvDTOs = 2*benchMaxBatch, 2*benchMaxBatch
	attr.MaxRequestIOV, attr.MaxRecvIOV, attr.MaxRDMAWriteIOV = benchMaxSegs, benchMaxSegs, benchMaxSegs
	p := &benchPair{ia: ia}
	side := func() (*udat.EP, *udat.EVD, *udat.EVD, *udat.EVD, []*udat.LMR) {
		req, err := ia.CreateEVD(4*benchMaxBatch, udat.EVDDTOFlag)
		must(err)
		recv, err := ia.CreateEVD(4*benchMaxBatch, udat.EVDDTOFlag)
		must(err)
		conn, err := ia.CreateEVD(8, udat.EVDConnectionFlag)
		must(err)
		ep, err := ia.CreateEP(pz, recv, req, conn, &attr)
		must(err)
		lmrs := make([]*udat.LMR, benchMaxSegs)
		for i := range lmrs {
			lmrs[i], err = ia.AllocLMR(pz, 4096, udat.MemPrivAll)
			must(err)
		}
		return ep, req, recv, conn, lmrs
	}
	var cConn, sConn *udat.EVD
	p.client, p.cReq, p.cRecv, cConn, p.cLMR = side()
	p.server, p.sReq, p.sRecv, sConn, p.sLMR = side()
	crEVD, err := ia.CreateEVD(4, udat.EVDCRFlag)
	must(err)
	qual := udat.ConnQual(benchQual.Add(1))
	_, err = ia.CreatePSP(qual, crEVD, udat.PSPConsumerFlag)
	must(err)
	must(p.client.Connect(ia.Address(), qual, benchTimeout, nil, udat.QoSBestEffort, udat.ConnectDefault))
	ev, _, err := crEVD.Wait(benchTimeout, 1)
	must(err)
	must(ev.CR.CR.Accept(p.server, nil))
	for _, e := range []*udat.EVD{cConn, sConn} {
		ev, _, err := e.Wait(benchTimeout, 1)
		must(err)
		if ev.Number != udat.EventConnectionEstablished {
			b.Fatalf("connection event %v", ev.Number)
		}
	}
	p.remote = p.sLMR[0].RMRTriplet(0, benchMaxSegs*benchSegLen)
	p.iov1 = []udat.LMRTriplet{p.cLMR[0].Triplet(0, benchSegLen)}
	for i := 0; i < benchMaxSegs; i++ {
		p.iov8 = append(p.iov8, p.cLMR[i].Triplet(64*i, benchSegLen))
		p.recvIOV8 = append(p.recvIOV8, p.sLMR[i].Triplet(64*i, benchSegLen))
	}
	return p
}

// reap dequeues n DTO completions from e, busy polling with DequeueInto
// (the lean form a polling loop should use). It returns the number of calls
// that found the EVD empty.
func reap(b *testing.B, e *udat.EVD, n int) int {
	empty := 0
	var ev udat.Event
	for got := 0; got < n; {
		err := e.DequeueInto(&ev)
		if err != nil {
			if errors.Is(err, udat.ErrQueueEmpty) {
				empty++
				continue
			}
			b.Fatal(err)
		}
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess {
			b.Fatalf("event %v, status %v", ev.Number, ev.DTO.Status)
		}
		got++
	}
	return empty
}

// counters reads the runtime's allocation and cgo call counters.
type counters struct{ s []metrics.Sample }

func newCounters() *counters {
	return &counters{s: []metrics.Sample{
		{Name: "/gc/heap/allocs:objects"},      // heap allocations but tiny ones
		{Name: "/gc/heap/tiny/allocs:objects"}, // tiny ones
		{Name: "/cgo/go-to-c-calls:calls"},
	}}
}

func (c *counters) read() (allocs, cgo uint64) {
	metrics.Read(c.s)
	return c.s[0].Value.Uint64() + c.s[1].Value.Uint64(), c.s[2].Value.Uint64()
}

// dataPath is one benchmark's loop body, split in phases so a separate
// pass can count what each one does.
type dataPath struct {
	pre  func() error     // once, before everything
	post func() error     // posts one batch
	poll func(*testing.B) // reaps the batch's completions
}

// measure runs the pass that counts allocations and cgo calls per phase,
// then the timed loop, and reports both.
func measure(b *testing.B, batch int, dp dataPath) {
	if dp.pre != nil {
		if err := dp.pre(); err != nil {
			b.Fatal(err)
		}
	}
	// Warm up, then count over a few batches.
	for i := 0; i < 4; i++ {
		if err := dp.post(); err != nil {
			b.Fatal(err)
		}
		dp.poll(b)
	}
	const rounds = 20
	c := newCounters()
	var postAllocs, postCgo uint64
	pc := &pollCount{c: c}
	for i := 0; i < rounds; i++ {
		a0, c0 := c.read()
		if err := dp.post(); err != nil {
			b.Fatal(err)
		}
		a1, c1 := c.read()
		postAllocs += a1 - a0
		postCgo += c1 - c0
		pollCounter = pc
		dp.poll(b)
		pollCounter = nil
	}
	n := float64(rounds * batch)
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := dp.post(); err != nil {
			b.Fatal(err)
		}
		dp.poll(b)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/DTO")
	b.ReportMetric(float64(postAllocs)/n, "post-allocs/DTO")
	b.ReportMetric(float64(pc.allocs)/n, "poll-allocs/DTO")
	b.ReportMetric(float64(postCgo)/rounds, "post-cgo/batch")
	b.ReportMetric(float64(pc.cgo)/rounds, "poll-cgo/batch")
	b.ReportMetric(float64(pc.empty)/rounds, "empty-polls/batch")
}

// pollCounter, when set, makes the poll phase count per DequeueInto call.
var pollCounter *pollCount

type pollCount struct {
	c                  *counters
	allocs, cgo, empty uint64
}

// reapCounted is reap, with counting per DequeueInto call when a pass asks for
// it: allocations and cgo calls of the calls that returned a completion,
// and the number of calls that found the EVD empty.
func reapCounted(b *testing.B, e *udat.EVD, n int) {
	pc := pollCounter
	if pc == nil {
		reap(b, e, n)
		return
	}
	var ev udat.Event
	for got := 0; got < n; {
		a0, c0 := pc.c.read()
		err := e.DequeueInto(&ev)
		a1, c1 := pc.c.read()
		if err != nil {
			if errors.Is(err, udat.ErrQueueEmpty) {
				pc.empty++
				continue
			}
			b.Fatal(err)
		}
		pc.allocs += a1 - a0
		pc.cgo += c1 - c0
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOSuccess {
			b.Fatalf("event %v, status %v", ev.Number, ev.DTO.Status)
		}
		got++
	}
}

// postModes are the two ways the benchmarks post a batch: "each", one DAT
// call per DTO (EP.PostRDMAWrite, EP.PostSend, EP.PostRecv), and "list",
// the whole batch with one EP.PostRequests or EP.PostRecvs call.
var postModes = []string{"each", "list"}

// BenchmarkRDMAWrite posts batches of signalled RDMA writes and reaps their
// completions.
func BenchmarkRDMAWrite(b *testing.B) {
	for _, segs := range []int{1, benchMaxSegs} {
		for _, batch := range []int{1, 16, benchMaxBatch} {
			for _, mode := range postModes {
				b.Run(fmt.Sprintf("segs=%d/batch=%d/post=%s", segs, batch, mode), func(b *testing.B) {
					p := newBenchPair(b)
					iov := p.iov1
					if segs > 1 {
						iov = p.iov8
					}
					reqs := make([]udat.Request, batch)
					for i := range reqs {
						reqs[i] = udat.Request{Op: udat.DTORDMAWrite, LocalIOV: iov, Cookie: uint64(i), Remote: p.remote}
					}
					measure(b, batch, dataPath{
						post: func() error { return postRequests(p.client, reqs, mode) },
						poll: func(b *testing.B) { reapCounted(b, p.cReq, batch) },
					})
				})
			}
		}
	}
}

// postRequests posts reqs one DAT call each, or as one list.
func postRequests(ep *udat.EP, reqs []udat.Request, mode string) error {
	if mode == "list" {
		_, err := ep.PostRequests(reqs)
		return err
	}
	for i := range reqs {
		r := &reqs[i]
		var err error
		if r.Op == udat.DTOSend {
			err = ep.PostSend(r.LocalIOV, r.Cookie, r.Flags)
		} else {
			err = ep.PostRDMAWrite(r.LocalIOV, r.Cookie, r.Remote, r.Flags)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// postRecvs posts recvs one DAT call each, or as one list.
func postRecvs(ep *udat.EP, recvs []udat.Recv, mode string) error {
	if mode == "list" {
		_, err := ep.PostRecvs(recvs)
		return err
	}
	for i := range recvs {
		if err := ep.PostRecv(recvs[i].LocalIOV, recvs[i].Cookie, recvs[i].Flags); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSendRecv posts batches of receives (on the server) and sends
// (on the client), then reaps the send and the receive completions. One
// batch of receives stays posted ahead, so no send waits for a receive.
func BenchmarkSendRecv(b *testing.B) {
	for _, segs := range []int{1, benchMaxSegs} {
		for _, batch := range []int{1, 16, benchMaxBatch} {
			for _, mode := range postModes {
				b.Run(fmt.Sprintf("segs=%d/batch=%d/post=%s", segs, batch, mode), func(b *testing.B) {
					p := newBenchPair(b)
					iov, riov := p.iov1, []udat.LMRTriplet{p.sLMR[0].Triplet(0, benchSegLen)}
					if segs > 1 {
						iov, riov = p.iov8, p.recvIOV8
					}
					reqs := make([]udat.Request, batch)
					recvs := make([]udat.Recv, batch)
					for i := range reqs {
						reqs[i] = udat.Request{Op: udat.DTOSend, LocalIOV: iov, Cookie: uint64(i)}
						recvs[i] = udat.Recv{LocalIOV: riov, Cookie: uint64(i)}
					}
					measure(b, batch, dataPath{
						pre: func() error { return postRecvs(p.server, recvs, mode) },
						post: func() error {
							if err := postRecvs(p.server, recvs, mode); err != nil {
								return err
							}
							return postRequests(p.client, reqs, mode)
						},
						poll: func(b *testing.B) {
							reapCounted(b, p.cReq, batch)
							reapCounted(b, p.sRecv, batch)
						},
					})
				})
			}
		}
	}
}

// BenchmarkDequeueEmpty is the cost of one poll of an empty EVD: one cgo
// call to ibv_poll_cq that finds nothing.
func BenchmarkDequeueEmpty(b *testing.B) {
	p := newBenchPair(b)
	c := newCounters()
	_, c0 := c.read()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.cReq.Dequeue(); !errors.Is(err, udat.ErrQueueEmpty) {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_, c1 := c.read()
	b.ReportMetric(float64(c1-c0)/float64(b.N), "cgo/op")
}

// BenchmarkRDMAWriteGoroutines posts signalled 64-byte RDMA writes on one
// EP from one goroutine and from four at once. Each goroutine posts a write,
// then busy-polls the shared request EVD for a completion (any goroutine's),
// so each has one write in flight. One op is one DTO; DTOs/s is the rate of
// them all (issue 25: whether goroutines that post on one EP would gain from
// having their posts combined).
func BenchmarkRDMAWriteGoroutines(b *testing.B) {
	for _, g := range []int{1, 4} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			p := newBenchPair(b)
			iov := []udat.LMRTriplet{p.cLMR[0].Triplet(0, 64)}
			remote := p.sLMR[0].RMRTriplet(0, 64)
			var claimed atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			var eg errgroup.Group
			for range g {
				eg.Go(func() error {
					var ev udat.Event
					for claimed.Add(1) <= int64(b.N) {
						if err := p.client.PostRDMAWrite(iov, 1, remote, udat.CompletionDefault); err != nil {
							return err
						}
						for {
							err := p.cReq.DequeueInto(&ev)
							if err == nil && ev.DTO.Status != udat.DTOSuccess {
								err = fmt.Errorf("completion status %v", ev.DTO.Status)
							}
							if !errors.Is(err, udat.ErrQueueEmpty) {
								if err != nil {
									return err
								}
								break
							}
							runtime.Gosched() // four pollers, two CPUs
						}
					}
					return nil
				})
			}
			if err := eg.Wait(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "DTOs/s")
		})
	}
}

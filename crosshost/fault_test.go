package crosshost

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// Faults: the peer host dies, the link goes down, the peer host freezes,
// packets are lost, connections fail. Every DTO either side posted is
// accounted for exactly once (the endpoint's map of outstanding cookies
// must end empty, and a second completion of a cookie fails the test), every
// wait is bounded, and the time it took to notice is printed.

// detectSlack is what a detection may take beyond the EP's DeadPeerTimeout:
// the retransmit timer runs in jiffies and the emulated VMs are slow.
const detectSlack = 3 * time.Second

// streamPair starts a sink on the peer host and connects a source to it.
func streamPair(t *testing.T, s stream) (*source, *roleRun) {
	t.Helper()
	port := nextPort()
	sink := startRole(t, request{Role: "stream-sink", Port: port, Args: roleArgs{Stream: s}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := connectSource(ctx, s, peerAddr(t), port)
	require.NoError(t, err)
	t.Cleanup(src.close)
	return src, sink
}

// runFor streams for d, or until a DTO fails.
func (src *source) runFor(t *testing.T, d time.Duration, during func()) error {
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- src.run(context.Background(), stop, src.s.budget()+detectSlack+10*time.Second)
	}()
	if during != nil {
		during()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		close(stop)
	}
	return <-done
}

func logCounts(t *testing.T, who string, counts map[string]int) {
	t.Helper()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, counts[k])
	}
	t.Logf("%s:%s", who, b.String())
}

// requireAccounted checks that every DTO posted completed once: posted =
// ok + flushed + failed, per kind.
func requireAccounted(t *testing.T, who string, counts map[string]int, left int) {
	t.Helper()
	for _, kind := range []string{"send", "write", "read", "recv"} {
		posted := counts[kind+" posted"]
		done := 0
		for k, v := range counts {
			if strings.HasPrefix(k, kind+" ") && k != kind+" posted" && k != kind+" left on the SRQ" && !strings.HasSuffix(k, "verified") {
				done += v
			}
		}
		if kind == "recv" {
			done += counts["recv left on the SRQ"]
		}
		assert.Equal(t, posted, done, "%s: %s DTOs posted vs completed (%d still outstanding)", who, kind, left)
	}
}

// TestStreams streams each DTO kind across the link for a while and ends
// normally: the data checked on both sides, every DTO accounted for.
func TestStreams(t *testing.T) {
	for _, s := range []stream{{Kind: udat.DTOSend}, {Kind: udat.DTOSend, SRQ: true}, {Kind: udat.DTORDMAWrite}, {Kind: udat.DTORDMARead}} {
		t.Run(fmt.Sprintf("%s srq=%v", opName(s.Kind), s.SRQ), func(t *testing.T) {
			skipUnpacedSends(t, s)
			src, sink := streamPair(t, s)
			require.NoError(t, src.runFor(t, 2*time.Second, nil))
			require.True(t, src.firstErr.IsZero(), "a DTO failed: %v", src.firstStatus)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, src.finish(ctx))
			assert.Equal(t, udat.EventConnectionDisconnected, src.connEvent)
			res := sink.finish(t, time.Minute)
			t.Logf("%s: %.2f MB/s", opName(s.Kind), float64(src.bytes)/src.stoppedAfter.Seconds()/1e6)
			logCounts(t, "source", src.counts)
			logCounts(t, "sink", res.Counts)
			requireAccounted(t, "source", src.counts, len(src.posted))
			requireAccounted(t, "sink", res.Counts, 0)
			if s.Kind == udat.DTOSend {
				assert.Equal(t, src.counts["send ok"]-1, res.Counts["msgs verified"], "every message but the end marker checked")
			}
		})
	}
}

// requireBroken checks what the source saw after a fault that outlasts the
// retransmission budget: a failed DTO within the bound, the rest flushed,
// EventConnectionBroken, and its own receives flushed.
func requireBroken(t *testing.T, src *source, faultAt time.Time) {
	t.Helper()
	bound := src.s.budget() + detectSlack
	require.False(t, src.firstErr.IsZero(), "no DTO failed")
	detect := src.firstErr.Sub(faultAt)
	t.Logf("detected %v after the fault (bound %v): first failed DTO %v", detect.Round(time.Millisecond), bound, src.firstStatus)
	assert.GreaterOrEqual(t, detect, time.Duration(0), "a DTO failed before the fault")
	assert.Less(t, detect, bound, "detection time")
	ctx := context.Background()
	require.NoError(t, src.awaitEnd(ctx, 20*time.Second))
	assert.Equal(t, udat.EventConnectionBroken, src.connEvent)
	t.Logf("every request completed %v after the fault; connection event %v %v after it",
		src.drainedAt.Sub(faultAt).Round(time.Millisecond), src.connEvent, src.connEventAt.Sub(faultAt).Round(time.Millisecond))
	logCounts(t, "source (A)", src.counts)
	requireAccounted(t, "source (A)", src.counts, len(src.posted))
	assert.Zero(t, src.inflight, "requests never completed")
	if src.srq == nil {
		assert.Empty(t, src.posted, "receives never completed")
	}
}

// TestPeerHostDies kills VM B in the middle of a stream of each kind.
func TestPeerHostDies(t *testing.T) {
	requirePair(t)
	for _, s := range []stream{{Kind: udat.DTOSend}, {Kind: udat.DTORDMAWrite, SRQ: true}, {Kind: udat.DTORDMARead}} {
		t.Run(fmt.Sprintf("%s srq=%v", opName(s.Kind), s.SRQ), func(t *testing.T) {
			skipUnpacedSends(t, s)
			logCountersAtEnd(t) // a DTO that fails before the kill: why
			src, _ := streamPair(t, s)
			var killedAt time.Time
			err := src.runFor(t, time.Minute, func() {
				time.Sleep(time.Second)
				t.Cleanup(func() { rebootPeer(t) })
				killedAt = time.Now() // the kill itself comes a little later
				hostFault(t, "kill B")
			})
			require.NoError(t, err)
			requireBroken(t, src, killedAt)
		})
	}
}

// TestLinkOutage takes B's link down (qemu set_link) for less than the
// retransmission budget, after which the stream goes on and all its data
// arrives, and for longer, after which both sides see the connection end
// and a new one works.
func TestLinkOutage(t *testing.T) {
	requirePair(t)
	outage(t, "link-blip")
}

// TestHostFreezes freezes VM B (qemu stop, then cont), shorter and longer
// than the budget, like TestLinkOutage.
func TestHostFreezes(t *testing.T) {
	requirePair(t)
	outage(t, "freeze")
}

// cut asks the host for an outage of d.
func cut(t *testing.T, fault string, d time.Duration) {
	t.Helper()
	hostFault(t, fmt.Sprintf("%s %d", fault, d.Milliseconds()))
}

func outage(t *testing.T, fault string) {
	s := stream{Kind: udat.DTORDMAWrite}
	budget := s.budget()
	t.Run("shorter than the budget", func(t *testing.T) {
		// On rxe every ACK timeout an outage lasts costs a resend, and so
		// does each sequence NAK of the recovery (the first packets
		// through find the peer expecting an earlier one). The host
		// stretches a short cut now and then (58 ms took 175 ms, with the
		// default 67 ms timer: 6 resends, and the connection broke), so
		// this stream waits 268 ms for an acknowledgement: a cut of a
		// quarter of that costs one or two resends of its six.
		s := stream{Kind: udat.DTORDMAWrite, ACKTimeout: 16}
		short := udat.ACKTimeoutDuration(s.ACKTimeout) / 4
		logCountersAtEnd(t)
		src, sink := streamPair(t, s)
		err := src.runFor(t, 4*time.Second, func() {
			time.Sleep(time.Second)
			cut(t, fault, short)
		})
		require.NoError(t, err)
		require.True(t, src.firstErr.IsZero(), "a DTO failed after a %v outage: %v", short, src.firstStatus)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, src.finish(ctx))
		res := sink.finish(t, time.Minute)
		logCounts(t, "source (A)", src.counts)
		logCounts(t, "sink (B)", res.Counts)
		requireAccounted(t, "source (A)", src.counts, len(src.posted))
		requireAccounted(t, "sink (B)", res.Counts, 0)
		assert.Equal(t, 1, res.Counts["write regions verified"])
	})
	t.Run("longer than the budget", func(t *testing.T) {
		logCountersAtEnd(t)
		src, sink := streamPair(t, s)
		long := budget + 3*time.Second
		var faultAt time.Time
		err := src.runFor(t, time.Minute, func() {
			time.Sleep(time.Second)
			faultAt = time.Now()
			cut(t, fault, long)
		})
		require.NoError(t, err)
		requireBroken(t, src, faultAt)
		// B learns when A's disconnect request gets through, after the
		// outage: rdma_cm resends it.
		res := sink.finish(t, 2*time.Minute)
		t.Logf("B's sink reported the end %v after the fault began", time.Since(faultAt).Round(time.Millisecond))
		logCounts(t, "sink (B)", res.Counts)
		requireAccounted(t, "sink (B)", res.Counts, 0)
		t.Run("a new connection", func(t *testing.T) {
			src, sink := streamPair(t, s)
			require.NoError(t, src.runFor(t, time.Second, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, src.finish(ctx))
			sink.finish(t, time.Minute)
		})
	})
}

// TestLoss streams RDMA writes through tc netem on A's link at 0, 1 and 10 %
// loss, with the defaults and with C DAPL's settings on rxe (retry count 7,
// rdma_cm's ACK timeout 19), and reports the rates. The data is checked.
func TestLoss(t *testing.T) {
	requirePair(t)
	for _, netem := range []string{"", "loss 1%", "loss 10%", "delay 5ms loss 1%"} {
		for _, s := range []stream{{Kind: udat.DTORDMAWrite}, {Kind: udat.DTORDMAWrite, RetryCount: 7, ACKTimeout: 19}} {
			name := fmt.Sprintf("%s retry=%d ack=%d", cmp.Or(netem, "no loss"), s.attr(0).RetryCount, s.attr(0).ACKTimeout)
			t.Run(name, func(t *testing.T) {
				logCountersAtEnd(t)
				if netem != "" {
					tc(t, append([]string{"qdisc", "add", "dev", "eth0", "root", "netem"}, strings.Fields(netem)...)...)
					t.Cleanup(func() { tc(t, "qdisc", "del", "dev", "eth0", "root") })
				}
				src, sink := streamPair(t, s)
				require.NoError(t, src.runFor(t, 3*time.Second, nil))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, src.finish(ctx))
				res := sink.finish(t, time.Minute)
				assert.Equal(t, 1, res.Counts["write regions verified"])
				requireAccounted(t, "source (A)", src.counts, len(src.posted))
				t.Logf("RATE %-14s retry %d ack %2d: %6.2f MB/s (%d writes of %d B in %v)", cmp.Or(netem, "no loss"),
					s.attr(0).RetryCount, s.attr(0).ACKTimeout, float64(src.bytes)/src.stoppedAfter.Seconds()/1e6,
					src.counts["write ok"], streamBlock, src.stoppedAfter.Round(time.Millisecond))
			})
		}
	}
}

func tc(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("tc", args...).CombinedOutput()
	require.NoError(t, err, "tc %s: %s", strings.Join(args, " "), out)
}

// TestConnectionFailures: an address nobody has, a port nobody listens
// on, and (in the pair) a peer that dies between the request and the
// accept. Each ends in a connection event within the connect timeout.
func TestConnectionFailures(t *testing.T) {
	connect := func(t *testing.T, addr string, port uint16, timeout time.Duration) udat.EventNumber {
		t.Helper()
		e, err := openEndpoint(stream{}, 4096, 1)
		require.NoError(t, err)
		defer e.close()
		start := time.Now()
		require.NoError(t, e.ep.Connect(mustAddr(t, addr), udat.ConnQual(port), udat.Timeout(timeout/time.Microsecond), nil, udat.QoSBestEffort, udat.ConnectDefault))
		ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
		defer cancel()
		ev, _, err := e.conn.WaitContext(ctx, 1)
		require.NoError(t, err, "no connection event")
		t.Logf("%v after %v", ev.Number, time.Since(start).Round(time.Millisecond))
		return ev.Number
	}
	t.Run("an address nobody has", func(t *testing.T) {
		selfAddr(t)
		ev := connect(t, "192.0.2.99", nextPort(), 5*time.Second)
		assert.Contains(t, []udat.EventNumber{udat.EventConnectionUnreachable, udat.EventConnectionTimedOut}, ev)
	})
	t.Run("no listener on the port", func(t *testing.T) {
		ev := connect(t, peerAddr(t).String(), nextPort(), 10*time.Second)
		assert.Equal(t, udat.EventConnectionNonPeerRejected, ev)
	})
	t.Run("the peer dies before it accepts", func(t *testing.T) {
		requirePair(t)
		port := nextPort()
		startRole(t, request{Role: "hold-request", Port: port})
		e, err := openEndpoint(stream{}, 4096, 1)
		require.NoError(t, err)
		defer e.close()
		const timeout = 8 * time.Second
		require.NoError(t, e.ep.Connect(peerAddr(t), udat.ConnQual(port), udat.Timeout(timeout/time.Microsecond), nil, udat.QoSBestEffort, udat.ConnectDefault))
		time.Sleep(time.Second)
		t.Cleanup(func() { rebootPeer(t) })
		killedAt := time.Now()
		hostFault(t, "kill B")
		ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
		defer cancel()
		ev, _, err := e.conn.WaitContext(ctx, 1)
		require.NoError(t, err, "no connection event")
		t.Logf("%v %v after the kill", ev.Number, time.Since(killedAt).Round(time.Millisecond))
		assert.Contains(t, []udat.EventNumber{udat.EventConnectionTimedOut, udat.EventConnectionUnreachable, udat.EventConnectionNonPeerRejected}, ev.Number)
	})
}

// TestPassiveSideProbes kills the host of the active side of one-sided RDMA
// (B writes into A's memory). A has nothing outstanding, so nothing tells it;
// as the README advises, it posts a small RDMA read of B's memory now and
// then, and the first one after the kill fails within the bound, the
// connection breaks, and A's receives are flushed.
func TestPassiveSideProbes(t *testing.T) {
	requirePair(t)
	s := stream{Kind: udat.DTORDMAWrite}
	e, err := openEndpoint(s, sinkSize, sinkRecvs)
	require.NoError(t, err)
	t.Cleanup(e.close)
	for k := range sinkRecvs {
		require.NoError(t, e.postRecv(k))
	}
	e.crEVD, err = e.ia.CreateEVD(4, udat.EVDCRFlag)
	require.NoError(t, err)
	port := nextPort()
	e.psp, err = e.ia.CreatePSP(udat.ConnQual(port), e.crEVD, udat.PSPConsumerFlag)
	require.NoError(t, err)
	startRole(t, request{Role: "stream-source", Port: port, Addr: selfAddr(t).String(), Args: roleArgs{Stream: s}})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ev, _, err := e.crEVD.WaitContext(ctx, 1)
	require.NoError(t, err)
	require.NotNil(t, ev.CR.CR, "got %v, want a connection request", ev.Number)
	q, err := ev.CR.CR.Query()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(q.PrivateData), 16, "the source's buffer") // rdma_cm pads it
	peer := udat.RMRTriplet{VirtualAddress: binary.LittleEndian.Uint64(q.PrivateData), SegmentLength: 8,
		RMRContext: binary.LittleEndian.Uint32(q.PrivateData[12:])}
	require.NoError(t, ev.CR.CR.Accept(e.ep, e.triplet()))
	ev, _, err = e.conn.WaitContext(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, udat.EventConnectionEstablished, ev.Number)

	// probe reads 8 bytes of B's buffer and waits for the read.
	probes := 0
	probe := func(d time.Duration) udat.DTOStatus {
		t.Helper()
		probes++
		cookie := uint64(probes)
		require.NoError(t, e.ep.PostRDMARead([]udat.LMRTriplet{e.lmr.Triplet(sinkSource, 8)}, cookie, peer, udat.CompletionDefault))
		e.posted[cookie] = udat.DTORDMARead
		e.counts["read posted"]++
		wctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		ev, _, err := e.req.WaitContext(wctx, 1)
		require.NoError(t, err, "probe %d did not complete within %v", probes, d)
		require.NoError(t, e.account(ev.DTO))
		return ev.DTO.Status
	}
	time.Sleep(time.Second) // B writes into A's memory
	require.Equal(t, udat.DTOSuccess, probe(10*time.Second), "a probe while B lives")

	t.Cleanup(func() { rebootPeer(t) })
	hostFault(t, "kill B")
	// With nothing outstanding, A hears nothing, however long it waits.
	budget := s.budget()
	time.Sleep(2 * budget)
	_, err = e.conn.Dequeue()
	require.ErrorIs(t, err, udat.ErrQueueEmpty, "A learned of B's death without a probe")
	const interval = 100 * time.Millisecond
	bound := budget + interval + detectSlack
	probing := time.Now()
	status := udat.DTOSuccess
	for status == udat.DTOSuccess && time.Since(probing) < bound+5*time.Second {
		time.Sleep(interval)
		status = probe(bound + 5*time.Second)
	}
	detect := time.Since(probing)
	t.Logf("a probe failed %v after A began probing (bound %v): %v, after %d probes", detect.Round(time.Millisecond), bound, status, probes)
	require.NotEqual(t, udat.DTOSuccess, status, "every probe succeeded")
	assert.Less(t, detect, bound, "detection time")

	ev, _, err = e.conn.WaitContext(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, udat.EventConnectionBroken, ev.Number)
	for len(e.posted) > 0 {
		ev, _, err := e.rcv.WaitContext(ctx, 1)
		require.NoError(t, err, "%d receives not flushed", len(e.posted))
		require.NoError(t, e.account(ev.DTO))
	}
	logCounts(t, "passive side (A)", e.counts)
	requireAccounted(t, "passive side (A)", e.counts, len(e.posted))
	assert.Equal(t, sinkRecvs, e.counts["recv flushed"])
}

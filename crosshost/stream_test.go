package crosshost

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// A stream: a source keeps a window of DTOs of one kind in flight to a sink
// on the other host, until it is told to stop or the connection breaks, and
// both sides account for every DTO they posted: each completes exactly once,
// successfully or flushed or with an error. Sends carry a sequence number
// and a pattern the sink checks; RDMA writes put a pattern in the sink's
// target region, which the sink checks at the end; RDMA reads fetch the
// sink's pattern, which the source checks after every read.

const (
	streamBlock  = 4096 // bytes per DTO
	streamWindow = 16   // DTOs the source keeps in flight
	sinkRecvs    = 32   // receives the sink keeps posted
	sourceRecvs  = 8    // receives the source posts (never consumed: they must be flushed)
	endMarker    = ^uint64(0)

	// Cookies: a request's is seq<<8 | window slot; a receive's has
	// recvCookie set, its slot at bit 48 and a count below; the end marker's
	// is endCookie.
	recvCookie = 1 << 63
	endCookie  = 1 << 62
)

// stream configures a stream's two sides.
type stream struct {
	Kind       udat.DTOOp `json:"kind"` // DTOSend, DTORDMAWrite or DTORDMARead
	SRQ        bool       `json:"srq,omitempty"`
	RetryCount int        `json:"retry_count,omitempty"`
	ACKTimeout int        `json:"ack_timeout,omitempty"`
}

func (s stream) attr(recvs int) *udat.EPAttr {
	a := &udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxRecvDTOs: recvs, MaxRequestDTOs: streamWindow + 1,
		MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 8, MaxRDMAReadOut: 8,
		RetryCount: s.RetryCount, ACKTimeout: s.ACKTimeout,
	}
	if deviceIWARP() {
		a.StallTimeout = iwarpStall
	}
	return a
}

// budget is how long after the peer falls silent a stream's DTOs fail: the
// device's own limit (DeadPeerTimeout) on IB, the watchdog's on iWARP.
func (s stream) budget() time.Duration {
	a := s.attr(0)
	if a.StallTimeout > 0 {
		return a.StallTimeout
	}
	return a.DeadPeerTimeout()
}

// skipUnpacedSends ends the test of a send stream on iWARP. The source
// keeps a window of sends in flight, and a send completes when it lands,
// not when the sink has reposted the receive it took: without RNR retry a
// sink that falls behind breaks the connection.
func skipUnpacedSends(t *testing.T, s stream) {
	t.Helper()
	if s.Kind == udat.DTOSend && deviceIWARP() {
		t.Skip("not applicable: " + devtest.Device() + " is iWARP, which has no receiver-not-ready retry for a send stream without flow control")
	}
}

// iwarpStall is a stream's StallTimeout on iWARP, where TCP retransmits
// for minutes before it gives up: the watchdog bounds a stall instead.
const iwarpStall = 2 * time.Second

// deviceIWARP reports whether the device is iWARP: udat offers the IB
// extension on InfiniBand and RoCE, none on iWARP.
var deviceIWARP = sync.OnceValue(func() bool {
	ia, err := udat.OpenIA(devtest.Device(), 4)
	if err != nil {
		return false
	}
	defer ia.Close(udat.CloseAbruptFlag)
	a, _, err := ia.Query()
	return err == nil && a.ExtensionSupported == udat.ExtensionNone
})

// endpoint is what both sides of a stream have.
type endpoint struct {
	ia                    *udat.IA
	pz                    *udat.PZ
	lmr                   *udat.LMR
	buf                   []byte
	req, rcv, conn, crEVD *udat.EVD
	srq                   *udat.SRQ
	ep                    *udat.EP
	psp                   *udat.PSP

	posted  map[uint64]udat.DTOOp // cookies not completed yet
	counts  map[string]int
	nextRcv uint64
}

func openEndpoint(s stream, size, recvs int) (*endpoint, error) {
	e := &endpoint{posted: map[uint64]udat.DTOOp{}, counts: map[string]int{}}
	var err error
	step := func(what string, f func() error) {
		if err == nil {
			if err = f(); err != nil {
				err = fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	step("open the IA", func() (err error) { e.ia, err = udat.OpenIA(devtest.Device(), 32); return })
	step("create the PZ", func() (err error) { e.pz, err = e.ia.CreatePZ(); return })
	step("allocate the LMR", func() (err error) { e.lmr, err = e.ia.AllocLMR(e.pz, size, udat.MemPrivAll); return })
	step("create the EVDs", func() (err error) {
		if e.req, err = e.ia.CreateEVD(2*streamWindow, udat.EVDDTOFlag); err != nil {
			return err
		}
		if e.rcv, err = e.ia.CreateEVD(2*recvs, udat.EVDDTOFlag); err != nil {
			return err
		}
		e.conn, err = e.ia.CreateEVD(8, udat.EVDConnectionFlag)
		return err
	})
	step("create the EP", func() (err error) {
		if s.SRQ {
			if e.srq, err = e.ia.CreateSRQ(e.pz, udat.SRQAttr{MaxRecvDTOs: recvs, MaxRecvIOV: 1}); err != nil {
				return err
			}
			e.ep, err = e.ia.CreateEPWithSRQ(e.pz, e.rcv, e.req, e.conn, e.srq, s.attr(0))
			return err
		}
		e.ep, err = e.ia.CreateEP(e.pz, e.rcv, e.req, e.conn, s.attr(recvs))
		return err
	})
	if err != nil {
		e.close()
		return nil, err
	}
	e.buf = e.lmr.Bytes()
	return e, nil
}

func (e *endpoint) close() {
	if e.ia != nil {
		e.ia.Close(udat.CloseAbruptFlag)
	}
}

// postRecv posts a receive into slot k of the message area at the start of
// the buffer.
func (e *endpoint) postRecv(k int) error {
	c := recvCookie | uint64(k)<<48 | e.nextRcv
	e.nextRcv++
	iov := []udat.LMRTriplet{e.lmr.Triplet(k*streamBlock, streamBlock)}
	var err error
	if e.srq != nil {
		err = e.srq.PostRecv(iov, c)
	} else {
		err = e.ep.PostRecv(iov, c, udat.CompletionDefault)
	}
	if err == nil {
		e.posted[c] = udat.DTOReceive
		e.counts["recv posted"]++
	}
	return err
}

// account records one completion and reports an error for a cookie that
// was not outstanding (a second or unknown completion).
func (e *endpoint) account(d udat.DTOCompletionData) error {
	op, ok := e.posted[d.Cookie]
	if !ok {
		return fmt.Errorf("completion of cookie %#x, which is not outstanding (status %v)", d.Cookie, d.Status)
	}
	delete(e.posted, d.Cookie)
	name := opName(op)
	switch d.Status {
	case udat.DTOSuccess:
		e.counts[name+" ok"]++
	case udat.DTOErrFlushed:
		e.counts[name+" flushed"]++
	default:
		e.counts[name+" "+d.Status.String()]++
	}
	return nil
}

func opName(op udat.DTOOp) string {
	switch op {
	case udat.DTOSend:
		return "send"
	case udat.DTORDMAWrite:
		return "write"
	case udat.DTORDMARead:
		return "read"
	}
	return "recv"
}

// triplet describes the buffer to the peer: va, length, rmr_context.
func (e *endpoint) triplet() []byte {
	pd := make([]byte, 16)
	binary.LittleEndian.PutUint64(pd, e.lmr.Triplet(0, len(e.buf)).VirtualAddress)
	binary.LittleEndian.PutUint32(pd[8:], uint32(len(e.buf)))
	binary.LittleEndian.PutUint32(pd[12:], e.lmr.RMRContext())
	return pd
}

// The sink's buffer: sinkRecvs receive slots, then the target region the
// source writes and the source region it reads, streamWindow blocks each.
const (
	sinkTarget = sinkRecvs * streamBlock
	sinkSource = sinkTarget + streamWindow*streamBlock
	sinkSize   = sinkSource + streamWindow*streamBlock
)

func streamPattern(seq uint64, i int) byte { return byte(seq*31 + uint64(i)*7 + 1) }

// runSink is the sink role: it listens on req.Port, accepts one stream,
// checks what arrives, and when the connection ends accounts for every
// receive it posted.
func runSink(ctx context.Context, req request, ready func(), rl *roleLog) error {
	s := req.Args.Stream
	e, err := openEndpoint(s, sinkSize, sinkRecvs)
	if err != nil {
		return err
	}
	defer e.close()
	defer func() {
		for k, v := range e.counts {
			rl.count(k, v)
		}
	}()
	for i := range streamWindow * streamBlock {
		e.buf[sinkSource+i] = streamPattern(0, i)
	}
	for k := range sinkRecvs {
		if err := e.postRecv(k); err != nil {
			return fmt.Errorf("post a receive: %w", err)
		}
	}
	if e.crEVD, err = e.ia.CreateEVD(4, udat.EVDCRFlag); err != nil {
		return err
	}
	if e.psp, err = e.ia.CreatePSP(udat.ConnQual(req.Port), e.crEVD, udat.PSPConsumerFlag); err != nil {
		return err
	}
	ready()
	ev, _, err := e.crEVD.WaitContext(ctx, 1)
	if err != nil {
		return fmt.Errorf("wait for the connection request: %w", err)
	}
	if ev.CR.CR == nil {
		return fmt.Errorf("got %v, want a connection request", ev.Number)
	}
	if err := ev.CR.CR.Accept(e.ep, e.triplet()); err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	var end uint64 // the source's count of sends, from its end marker
	ended, gone := false, time.Time{}
	for {
		if gone.IsZero() {
			if ev, err := e.conn.Dequeue(); err == nil {
				rl.logf("sink: %v", ev.Number)
				if ev.Number != udat.EventConnectionEstablished {
					gone = time.Now()
					e.counts["conn "+ev.Number.String()]++
				}
			}
		}
		if !gone.IsZero() && len(e.posted) == 0 {
			break
		}
		if !gone.IsZero() && time.Since(gone) > 30*time.Second {
			return fmt.Errorf("%d receives still outstanding 30 s after the connection ended", len(e.posted))
		}
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		ev, _, err := e.rcv.WaitContext(wctx, 1)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if !gone.IsZero() && e.srq != nil {
				// The SRQ keeps its receives, but those that completed
				// before the disconnect may still be in the EVD: the
				// connection event comes on another EVD, in no order
				// with them. Done once the EVD stays empty.
				break
			}
			continue
		}
		d := ev.DTO
		if err := e.account(d); err != nil {
			return err
		}
		if d.Status != udat.DTOSuccess {
			continue
		}
		k := int(d.Cookie >> 48 & 0xff)
		msg := e.buf[k*streamBlock : (k+1)*streamBlock]
		seq := binary.LittleEndian.Uint64(msg)
		if seq == endMarker {
			end, ended = binary.LittleEndian.Uint64(msg[8:]), true
			if s.Kind == udat.DTORDMAWrite {
				if err := checkPattern(e.buf[sinkTarget:sinkSource], 0, 0); err != nil {
					return fmt.Errorf("the RDMA-written target region: %w", err)
				}
				e.counts["write regions verified"]++
			}
		} else {
			if d.TransferredLength != streamBlock {
				return fmt.Errorf("message %d: %d bytes, want %d", seq, d.TransferredLength, streamBlock)
			}
			if err := checkPattern(msg[8:d.TransferredLength], seq, 0); err != nil {
				return fmt.Errorf("message %d: %w", seq, err)
			}
			e.counts["msgs verified"]++
		}
		if gone.IsZero() {
			if err := e.postRecv(k); err != nil && gone.IsZero() {
				return fmt.Errorf("repost a receive: %w", err)
			}
		}
	}
	if e.srq != nil {
		e.counts["recv left on the SRQ"] = len(e.posted)
	}
	if ended && s.Kind == udat.DTOSend && uint64(e.counts["msgs verified"]) != end {
		return fmt.Errorf("the source sent %d messages, %d arrived", end, e.counts["msgs verified"])
	}
	return nil
}

// checkPattern checks that b holds seq's pattern from byte off on.
func checkPattern(b []byte, seq uint64, off int) error {
	for i, c := range b {
		if want := streamPattern(seq, off+i); c != want {
			return fmt.Errorf("byte %d is %#02x, want %#02x", i, c, want)
		}
	}
	return nil
}

// source is the test's side of a stream.
type source struct {
	*endpoint
	s        stream
	peerVA   uint64
	peerRMR  uint32
	seq      uint64
	inflight int // requests posted and not completed
	bytes    int64

	// The first failed completion, when the last request completed, and
	// the connection event.
	firstErr     time.Time
	firstStatus  udat.DTOStatus
	connEvent    udat.EventNumber
	connEventAt  time.Time
	drainedAt    time.Time
	connectedAt  time.Time
	stoppedAfter time.Duration
}

// The source's buffer: streamWindow blocks it sends or writes from, and
// streamWindow blocks its reads land in, after its receive slots.
const (
	srcData = sourceRecvs * streamBlock
	srcRead = srcData + streamWindow*streamBlock
	srcSize = srcRead + streamWindow*streamBlock
)

// connectSource opens the source, posts its receives and connects.
func connectSource(ctx context.Context, s stream, addr netip.Addr, port uint16) (*source, error) {
	e, err := openEndpoint(s, srcSize, sourceRecvs)
	if err != nil {
		return nil, err
	}
	src := &source{endpoint: e, s: s}
	for k := range sourceRecvs {
		if err := e.postRecv(k); err != nil {
			e.close()
			return nil, err
		}
	}
	for i := range streamWindow * streamBlock {
		e.buf[srcData+i] = streamPattern(0, i)
	}
	// The private data describe the source's buffer, for a passive side
	// that reads it (TestPassiveSideProbes).
	if err := e.ep.Connect(addr, udat.ConnQual(port), udat.Timeout(20*time.Second/time.Microsecond), e.triplet(), udat.QoSBestEffort, udat.ConnectDefault); err != nil {
		e.close()
		return nil, err
	}
	ev, _, err := e.conn.WaitContext(ctx, 1)
	if err == nil && ev.Number != udat.EventConnectionEstablished {
		err = fmt.Errorf("connection event %v", ev.Number)
	}
	if err != nil {
		e.close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	pd := ev.Conn.PrivateData
	src.peerVA = binary.LittleEndian.Uint64(pd)
	src.peerRMR = binary.LittleEndian.Uint32(pd[12:])
	src.connectedAt = time.Now()
	return src, nil
}

// post posts the next DTO into window slot w.
func (src *source) post(w int) error {
	seq := src.seq
	src.seq++
	cookie := seq<<8 | uint64(w)
	data := src.lmr.Triplet(srcData+w*streamBlock, streamBlock)
	var err error
	switch src.s.Kind {
	case udat.DTOSend:
		b := src.buf[srcData+w*streamBlock : srcData+(w+1)*streamBlock]
		binary.LittleEndian.PutUint64(b, seq)
		for i := range b[8:] {
			b[8+i] = streamPattern(seq, i)
		}
		err = src.ep.PostSend([]udat.LMRTriplet{data}, cookie, udat.CompletionDefault)
	case udat.DTORDMAWrite:
		remote := udat.RMRTriplet{VirtualAddress: src.peerVA + sinkTarget + uint64(w*streamBlock), SegmentLength: streamBlock, RMRContext: src.peerRMR}
		err = src.ep.PostRDMAWrite([]udat.LMRTriplet{data}, cookie, remote, udat.CompletionDefault)
	case udat.DTORDMARead:
		clear(src.buf[srcRead+w*streamBlock : srcRead+(w+1)*streamBlock])
		remote := udat.RMRTriplet{VirtualAddress: src.peerVA + sinkSource + uint64(w*streamBlock), SegmentLength: streamBlock, RMRContext: src.peerRMR}
		err = src.ep.PostRDMARead([]udat.LMRTriplet{src.lmr.Triplet(srcRead+w*streamBlock, streamBlock)}, cookie, remote, udat.CompletionDefault)
	}
	if err == nil {
		src.posted[cookie] = src.s.Kind
		src.inflight++
		src.counts[opName(src.s.Kind)+" posted"]++
	}
	return err
}

// run streams until stop is closed or a DTO fails, then waits (at most
// drain) until every DTO it posted has completed and the connection event
// has come. It returns an error only for what breaks the accounting.
func (src *source) run(ctx context.Context, stop <-chan struct{}, drain time.Duration) error {
	for w := range streamWindow {
		if err := src.post(w); err != nil {
			return err
		}
	}
	start := time.Now()
	stopping := false
	for src.inflight > 0 {
		if !stopping {
			select {
			case <-stop:
				stopping = true
				src.stoppedAfter = time.Since(start)
			default:
			}
		}
		wctx, cancel := context.WithTimeout(ctx, drain)
		ev, _, err := src.req.WaitContext(wctx, 1)
		cancel()
		if err != nil {
			return fmt.Errorf("%d DTOs outstanding, none completed within %v: %w", src.inflight, drain, err)
		}
		d := ev.DTO
		if err := src.account(d); err != nil {
			return err
		}
		src.inflight--
		if d.Status != udat.DTOSuccess {
			if src.firstErr.IsZero() {
				src.firstErr, src.firstStatus = time.Now(), d.Status
			}
			stopping = true
			continue
		}
		src.bytes += streamBlock
		w := int(d.Cookie & 0xff)
		if src.s.Kind == udat.DTORDMARead {
			if err := checkPattern(src.buf[srcRead+w*streamBlock:srcRead+(w+1)*streamBlock], 0, w*streamBlock); err != nil {
				return fmt.Errorf("RDMA read %d: %w", d.Cookie>>8, err)
			}
			src.counts["reads verified"]++
		}
		if !stopping {
			if err := src.post(w); err != nil {
				return err
			}
		}
	}
	src.drainedAt = time.Now()
	if src.firstErr.IsZero() {
		return nil
	}
	// A failed stream: the connection event must follow.
	wctx, cancel := context.WithTimeout(ctx, drain)
	defer cancel()
	ev, _, err := src.conn.WaitContext(wctx, 1)
	if err != nil {
		return fmt.Errorf("no connection event after a failed DTO: %w", err)
	}
	src.connEvent, src.connEventAt = ev.Number, time.Now()
	return nil
}

// finish ends a stream that did not fail: the end marker, then a
// disconnect; the source's own receives must all come back flushed.
func (src *source) finish(ctx context.Context) error {
	b := src.buf[srcData : srcData+16]
	binary.LittleEndian.PutUint64(b, endMarker)
	binary.LittleEndian.PutUint64(b[8:], uint64(src.counts["send posted"]))
	src.posted[endCookie] = udat.DTOSend
	src.counts["send posted"]++
	if err := src.ep.PostSend([]udat.LMRTriplet{src.lmr.Triplet(srcData, 16)}, endCookie, udat.CompletionDefault); err != nil {
		return err
	}
	ev, _, err := src.req.WaitContext(ctx, 1)
	if err != nil {
		return err
	}
	if err := src.account(ev.DTO); err != nil || ev.DTO.Status != udat.DTOSuccess {
		return errors.Join(err, fmt.Errorf("end marker: %v", ev.DTO.Status))
	}
	if err := src.ep.Disconnect(udat.CloseGracefulFlag); err != nil {
		return err
	}
	return src.awaitEnd(ctx, 20*time.Second)
}

// awaitEnd waits for the connection event and for the source's receives
// to come back flushed (with an SRQ they stay on it).
func (src *source) awaitEnd(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if src.connEventAt.IsZero() {
		ev, _, err := src.conn.WaitContext(ctx, 1)
		if err != nil {
			return fmt.Errorf("no connection event: %w", err)
		}
		src.connEvent, src.connEventAt = ev.Number, time.Now()
	}
	for len(src.posted) > 0 && src.srq == nil {
		ev, _, err := src.rcv.WaitContext(ctx, 1)
		if err != nil {
			return fmt.Errorf("%d receives not flushed: %w", len(src.posted), err)
		}
		if err := src.account(ev.DTO); err != nil {
			return err
		}
	}
	if src.srq != nil {
		src.counts["recv left on the SRQ"] = len(src.posted)
	}
	return nil
}

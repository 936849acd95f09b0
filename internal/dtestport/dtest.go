package dtestport

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// The dtest protocol (dtest.c, default mode: no -w, -W or -D), as both
// sides run it:
//
//  1. The server sends the TCP connection message (ConnMsg) to the client.
//  2. Each side registers rbuf and sbuf, buf_len (-b) times 103 bytes
//     each, and posts 3 receives of RMRSize bytes (cookies 0, 1, 2).
//  3. The server listens on DtestConnQual; the client connects with 48
//     bytes of private data 1..48; the server checks them and accepts
//     with each byte plus one (2..49), which the client checks.
//  4. Each side sends the RMR of rbuf[:buf_len] (a signalled send, cookie
//     0xaaaa, its completion checked) and receives the peer's (cookie 0).
//  5. RDMA write: each writes sbuf[:buf_len], which starts with the
//     NUL-terminated "server RDMA write data..." or "client RDMA write
//     data..." and continues with 'b's, to the peer's rbuf, -B times
//     (1000), every 10th signalled with cookie i. Then the client sends
//     its RMR again (completion suppressed) and the server, having
//     received it (cookie 1), sends its own back.
//  6. RDMA read, when the provider says DAT_IB_RDMA_READ: each sets sbuf
//     to "blah, blah, blah\n" and rbuf to "server RDMA read data..." (or
//     client), reads the peer's rbuf[:buf_len] into sbuf 4 times (cookie
//     0x9999 each, signalled), then sends its RMR (suppressed) and
//     receives the peer's (cookie 2). The C program sets its rbuf while
//     the peer may already read it: a reader sees either the read text or
//     what it wrote there in step 5.
//  7. Ping-pong: each posts 100 receives of buf_len at rbuf+i*buf_len
//     (cookies 0..99) and sleeps a second; the client sends buf_len from
//     sbuf+i*buf_len with first byte 0x55 and waits for the reply; the
//     server replies to each with first byte 0xaa. Sends are suppressed.
//  8. The client disconnects; both wait for the DISCONNECTED event.
const (
	DtestConnQual = 45248
	dtestMsgBurst = 100
	dtestMsgBufs  = 3
	dtestReads    = 4
	dtestPDLen    = 48
	dtestPass     = "DAPL Test Complete. PASSED"
)

// DtestOpts are the options both sides must agree on: -b and -B.
type DtestOpts struct {
	BufLen int // -b, bytes
	Burst  int // -B, RDMA writes
}

// DtestPass is what the C dtest prints when it passed.
const DtestPass = dtestPass

// dtest is one side.
type dtest struct {
	ctx    context.Context
	server bool
	o      DtestOpts
	logf   func(string, ...any)

	ia                    *udat.IA
	pz                    *udat.PZ
	rbuf, sbuf, msg       *udat.LMR
	req, rcv, conn, crEVD *udat.EVD
	ep                    *udat.EP
	psp                   *udat.PSP
	rdmaRead              bool
	peer                  udat.RMRTriplet
	recvIdx               int
}

// DtestServer runs the server on device: it listens for the TCP exchange
// (ready is called once it does, for the test to start the C client) and
// then serves one client.
func DtestServer(ctx context.Context, device string, o DtestOpts, logf func(string, ...any), ready func()) error {
	d := &dtest{ctx: ctx, server: true, o: o, logf: logf}
	defer d.close()
	return run(func() {
		d.open(device)
		d.psp = listenPSP(d.ia, DtestConnQual, d.crEVD)
		l, err := Listen()
		check(err, "TCP")
		defer l.Close()
		ready()
		_, err = l.Exchange(ctx, ConnMsg{Addr: d.ia.Address(), Provider: Provider}, false)
		check(err, "TCP exchange")
		d.connect(netip.Addr{})
		d.protocol()
		d.teardown()
	})
}

// DtestClient runs the client on device against the server at host.
func DtestClient(ctx context.Context, device string, host netip.Addr, o DtestOpts, logf func(string, ...any)) error {
	d := &dtest{ctx: ctx, o: o, logf: logf}
	defer d.close()
	return run(func() {
		d.open(device)
		m, err := Dial(ctx, host, nil)
		check(err, "TCP exchange")
		if m.Provider != Provider {
			fail("the server's provider %q, want %q", m.Provider, Provider)
		}
		d.connect(m.Addr)
		d.protocol()
		d.teardown()
	})
}

func (d *dtest) name() string {
	if d.server {
		return "server"
	}
	return "client"
}

func (d *dtest) open(device string) {
	var err error
	d.ia, err = udat.OpenIA(device, 8)
	check(err, "open the IA")
	_, pa, err := d.ia.Query()
	check(err, "query the IA")
	for _, a := range pa.ProviderSpecificAttr {
		if a.Name == "DAT_IB_RDMA_READ" && a.Value == "TRUE" {
			d.rdmaRead = true
		}
	}
	d.pz, err = d.ia.CreatePZ()
	check(err, "create the PZ")
	size := d.o.BufLen * (dtestMsgBufs + dtestMsgBurst)
	d.rbuf, err = d.ia.AllocLMR(d.pz, size, udat.MemPrivAll)
	check(err, "register rbuf")
	d.sbuf, err = d.ia.AllocLMR(d.pz, size, udat.MemPrivAll)
	check(err, "register sbuf")
	fillBytes(d.rbuf.Bytes()[:d.o.BufLen], 'a')
	fillBytes(d.sbuf.Bytes()[:d.o.BufLen], 'b')
	// The RMR messages: [0, 16) the one sent, 64+16*i the 3 received.
	d.msg, err = d.ia.AllocLMR(d.pz, 4096, udat.MemPrivLocalRead|udat.MemPrivLocalWrite)
	check(err, "register the message buffers")
	d.req, err = d.ia.CreateEVD(256, udat.EVDDTOFlag)
	check(err, "create the request EVD")
	d.rcv, err = d.ia.CreateEVD(256, udat.EVDDTOFlag)
	check(err, "create the receive EVD")
	d.conn, err = d.ia.CreateEVD(8, udat.EVDConnectionFlag)
	check(err, "create the connection EVD")
	d.crEVD, err = d.ia.CreateEVD(8, udat.EVDCRFlag)
	check(err, "create the CR EVD")
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxMessageSize: uint32(d.o.BufLen), MaxRDMASize: uint32(d.o.BufLen),
		QoS: udat.QoSBestEffort, RecvCompletionFlags: udat.CompletionDefault, RequestCompletionFlags: udat.CompletionDefault,
		MaxRecvDTOs: dtestMsgBufs + dtestMsgBurst, MaxRequestDTOs: dtestMsgBufs + dtestReads + dtestMsgBurst,
		MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: dtestReads, MaxRDMAReadOut: dtestReads,
	}
	d.ep, err = d.ia.CreateEP(d.pz, d.rcv, d.req, d.conn, &attr)
	check(err, "create the EP")
	d.postRMRRecvs()
}

// postRMRRecvs posts the receives for the peer's RMR messages, before
// connecting.
func (d *dtest) postRMRRecvs() {
	for i := range dtestMsgBufs {
		check(d.ep.PostRecv([]udat.LMRTriplet{d.msg.Triplet(64+RMRSize*i, RMRSize)}, uint64(i), udat.CompletionDefault), "post an RMR receive")
	}
}

func fillBytes(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// connect is step 3 and 4.
func (d *dtest) connect(server netip.Addr) {
	pd := make([]byte, dtestPDLen)
	for i := range pd {
		pd[i] = byte(i + 1)
	}
	if d.server {
		ev := waitEvent(d.ctx, d.crEVD, "the connection request")
		if ev.Number != udat.EventConnectionRequest || ev.CR.ConnQual != DtestConnQual || ev.CR.PSP != d.psp {
			fail("connection request: %v on %d, want a request on %d at our PSP", ev.Number, ev.CR.ConnQual, DtestConnQual)
		}
		cp, err := ev.CR.CR.Query()
		check(err, "query the CR")
		if len(cp.PrivateData) < dtestPDLen || !bytes.Equal(cp.PrivateData[:dtestPDLen], pd) {
			ev.CR.CR.Reject(nil)
			fail("the request's private data %v, want 1..48", cp.PrivateData)
		}
		back := make([]byte, dtestPDLen)
		for i := range back {
			back[i] = byte(i + 2)
		}
		check(ev.CR.CR.Accept(d.ep, back), "accept")
		waitConn(d.ctx, d.conn, udat.EventConnectionEstablished, "the connection")
	} else {
		ev := connectListening(d.ctx, d.ep, d.conn, server, DtestConnQual, 100_000_000, pd, func() {
			takeFlushed(d.ctx, d.rcv, dtestMsgBufs)
			d.postRMRRecvs()
		})
		got := ev.Conn.PrivateData
		for i := range dtestPDLen {
			if i >= len(got) || got[i] != byte(i+2) {
				fail("the accept's private data %v, want 2..49", got)
			}
		}
	}
	d.logf("Go dtest %s: connected", d.name())
	if d.server {
		// The client's message before ours (C's server sends at once):
		// soft-iWARP's active side fails a connection whose first data
		// arrives before it has taken the MPA reply (EPROTO in
		// siw_recv_mpa_rr, the C client's CONN_ERR), and the client's
		// first send proves it has.
		d.recvRMR()
		d.sendRMR(true)
		return
	}
	d.sendRMR(true)
	d.recvRMR()
}

// sendRMR sends the RMR of rbuf[:buf_len].
func (d *dtest) sendRMR(signalled bool) {
	EncodeRMR(d.msg.Bytes()[:RMRSize], d.rbuf.RMRTriplet(0, d.o.BufLen))
	flags := udat.CompletionSuppress
	if signalled {
		flags = udat.CompletionDefault
	}
	check(d.ep.PostSend([]udat.LMRTriplet{d.msg.Triplet(0, RMRSize)}, 0xaaaa, flags), "send the RMR")
	if signalled {
		waitDTO(d.ctx, d.req, "the RMR send", 0xaaaa, RMRSize)
	}
}

// recvRMR receives the peer's next RMR message and checks it names a
// buffer of buf_len.
func (d *dtest) recvRMR() {
	waitDTO(d.ctx, d.rcv, fmt.Sprintf("RMR message %d", d.recvIdx), uint64(d.recvIdx), RMRSize)
	r := DecodeRMR(d.msg.Bytes()[64+RMRSize*d.recvIdx:])
	if r.SegmentLength != uint32(d.o.BufLen) || r.VirtualAddress == 0 {
		fail("the peer's RMR %+v, want a buffer of %d bytes", r, d.o.BufLen)
	}
	if d.recvIdx > 0 && r != d.peer {
		fail("the peer's RMR %+v changed from %+v", r, d.peer)
	}
	d.peer = r
	d.recvIdx++
}

func (d *dtest) text(what string) []byte {
	return append([]byte(d.name()+" RDMA "+what+" data..."), 0)
}

func (d *dtest) peerText(what string) []byte {
	name := "client"
	if !d.server {
		name = "server"
	}
	return append([]byte(name+" RDMA "+what+" data..."), 0)
}

func (d *dtest) protocol() {
	// 5. RDMA write.
	sb := d.sbuf.Bytes()
	copy(sb, d.text("write"))
	src := []udat.LMRTriplet{d.sbuf.Triplet(0, d.o.BufLen)}
	for i := range d.o.Burst {
		flags := udat.CompletionSuppress
		if (i+1)%10 == 0 {
			flags = udat.CompletionDefault
		}
		check(d.ep.PostRDMAWrite(src, uint64(i), d.peer, flags), "RDMA write")
		if flags == udat.CompletionDefault {
			waitDTO(d.ctx, d.req, fmt.Sprintf("RDMA write %d", i), uint64(i), d.o.BufLen)
		}
	}
	if d.server {
		d.recvRMR()
		d.sendRMR(false)
	} else {
		d.sendRMR(false)
		d.recvRMR()
	}
	rb := d.rbuf.Bytes()[:d.o.BufLen]
	written := make([]byte, d.o.BufLen)
	fillBytes(written, 'b')
	copy(written, d.peerText("write"))
	if !bytes.Equal(rb, written) {
		fail("rbuf after the peer's RDMA writes: %q..., want %q followed by 'b's", prefix(rb), d.peerText("write"))
	}
	d.logf("Go dtest %s: the peer's %d RDMA writes of %d bytes checked", d.name(), d.o.Burst, d.o.BufLen)

	// 6. RDMA read.
	if d.rdmaRead {
		copy(sb, "blah, blah, blah\n\x00")
		copy(rb, d.text("read"))
		dst := []udat.LMRTriplet{d.sbuf.Triplet(0, d.o.BufLen)}
		for i := range dtestReads {
			check(d.ep.PostRDMARead(dst, 0x9999, d.peer, udat.CompletionDefault), "RDMA read")
			waitDTO(d.ctx, d.req, fmt.Sprintf("RDMA read %d", i), 0x9999, d.o.BufLen)
		}
		// The peer's rbuf holds what this side wrote in step 5, and
		// its read text once it has set it: a read that overlaps the
		// setting may take some bytes of each (seen on soft-iWARP).
		mine := make([]byte, d.o.BufLen)
		fillBytes(mine, 'b')
		copy(mine, d.text("write"))
		set := bytes.Clone(mine)
		copy(set, d.peerText("read"))
		if got := sb[:d.o.BufLen]; !eitherBytes(got, set, mine) {
			fail("RDMA read of the peer's rbuf: %q..., want the bytes of %q or %q then 'b's", prefix(got), d.peerText("read"), d.text("write"))
		}
		d.sendRMR(false)
		d.recvRMR()
		d.logf("Go dtest %s: %d RDMA reads of %d bytes checked", d.name(), dtestReads, d.o.BufLen)

		// 7. Ping-pong (dtest runs it only after the reads).
		d.pingPong()
	}

	// 8. Disconnect.
	if !d.server {
		check(d.ep.Disconnect(udat.CloseDefault), "disconnect")
	}
	waitConn(d.ctx, d.conn, udat.EventConnectionDisconnected, "the disconnection")
	d.logf("Go dtest %s: disconnected", d.name())
}

func (d *dtest) pingPong() {
	n := d.o.BufLen
	for i := range dtestMsgBurst {
		check(d.ep.PostRecv([]udat.LMRTriplet{d.rbuf.Triplet(i*n, n)}, uint64(i), udat.CompletionDefault), "post a ping-pong receive")
	}
	time.Sleep(time.Second) // as C: the peer posts its receives meanwhile
	sb, rb := d.sbuf.Bytes(), d.rbuf.Bytes()
	send := func(i int, first byte) {
		sb[i*n] = first
		check(d.ep.PostSend([]udat.LMRTriplet{d.sbuf.Triplet(i*n, n)}, 0xaaaa, udat.CompletionSuppress), "ping-pong send")
	}
	recv := func(i int, first byte) {
		waitDTO(d.ctx, d.rcv, fmt.Sprintf("ping-pong message %d", i), uint64(i), n)
		if rb[i*n] != first {
			fail("ping-pong message %d starts with %#x, want %#x", i, rb[i*n], first)
		}
	}
	for i := range dtestMsgBurst {
		if d.server {
			recv(i, 0x55)
			send(i, 0xaa)
		} else {
			send(i, 0x55)
			recv(i, 0xaa)
		}
	}
	d.logf("Go dtest %s: %d ping-pong messages of %d bytes checked", d.name(), dtestMsgBurst, n)
}

func prefix(b []byte) string {
	s := string(b[:min(len(b), 40)])
	return strings.ToValidUTF8(s, "?")
}

// teardown frees everything, each free checked, as dtest does after a
// pass; close frees what is left after a failure.
func (d *dtest) teardown() {
	check(d.ep.Free(), "free the EP")
	d.ep = nil
	if d.psp != nil {
		check(d.psp.Free(), "free the PSP")
		d.psp = nil
	}
	for _, e := range []*udat.EVD{d.rcv, d.req, d.conn, d.crEVD} {
		if ev, err := e.Dequeue(); udat.CodeOf(err).Type() != udat.QueueEmpty {
			fail("an event left: %v %+v (%v)", ev.Number, ev.DTO, err)
		}
	}
	for _, l := range []**udat.LMR{&d.rbuf, &d.sbuf, &d.msg} {
		check((*l).Free(), "free an LMR")
		*l = nil
	}
	freeBase([]**udat.EVD{&d.req, &d.rcv, &d.conn, &d.crEVD}, &d.pz, &d.ia, udat.CloseAbruptFlag)
}

func (d *dtest) close() {
	closeAll(d.ia, d.ep, d.psp, d.rbuf, d.sbuf, d.msg, d.req, d.rcv, d.conn, d.crEVD, d.pz)
}

// eitherBytes reports whether every byte of got is a's or b's at its place.
func eitherBytes(got, a, b []byte) bool {
	if len(got) != len(a) || len(got) != len(b) {
		return false
	}
	for i, c := range got {
		if c != a[i] && c != b[i] {
			return false
		}
	}
	return true
}

package dtestport

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// The dtestx protocol (dtestx.c), RC (no -u): the IB extensions.
//
//  1. TCP: the server sends its ConnMsg, the client answers with its own.
//  2. Each side registers 10 buffers of -b bytes (256), privileges all and
//     remote atomic: [0] the RDMA source, [1] the RDMA target, [2] the
//     RMR message sent, [3..9] receives (cookies 3..9), and an 8-byte
//     atomic result buffer. One EVD takes both DTO queues.
//  3. The server listens on DtestxServerQual; the client connects with 4
//     bytes of private data, the big-endian index of the server's EP (0);
//     the server accepts with the same 4 bytes.
//  4. Each sends the RMR of its buffer [1] (completion suppressed) and
//     receives the peer's into buffer [3] (cookie 3, 16 bytes).
//  5. RDMA write with immediate data: each writes its buffer [0] ("Server
//     data" or "Client written data", NUL-terminated) to the peer's [1]
//     with immediate data 0x1111 (server) or 0x7777 (client), cookie
//     0x9999, and takes two IB DTO events in either order: its write's
//     (RDMA_WRITE_IMMED, -b bytes, cookie 0x9999) and the peer's
//     (RDMA_WRITE_IMMED_DATA, -b bytes, cookie 4, the peer's value).
//  6. Compare-and-swap on the peer's buffer [1] (the whole triplet the
//     peer sent): each sets its own [1] to a value (server 0x12345, client
//     0x54321), sleeps a second, and swaps: the server compares 0x654321
//     (no swap), the client 0x12345 and swaps in 0x98765. After 2 s the
//     server must hold 0x54321 in its result and 0x98765 in [1], the
//     client 0x12345 and 0x54321.
//  7. Fetch-and-add: the server sets its [1] to 0x10, the client to 0x100;
//     after a second each adds (server 0x100, client 0x10) to the peer's,
//     twice, a second apart. Then the server must hold 0x200 in its result
//     and 0x30 in [1], the client 0x20 and 0x300.
//  8. Both disconnect and wait for a connection event.
const (
	DtestxServerQual = 31112
	DtestxPass       = "IB extension test - immed/atomic test PASSED"

	dtxBufs     = 10
	dtxSndRDMA  = 0
	dtxRcvRDMA  = 1
	dtxSendBuf  = 2
	dtxRecvBuf  = 3
	dtxImmServ  = 0x1111
	dtxImmCli   = 0x7777
	dtxWriteCk  = 0x9999
	dtxAtomicCk = 3333
	dtxFAACk    = 0x7777
)

type dtestx struct {
	ctx    context.Context
	server bool
	size   int
	logf   func(string, ...any)

	ia                   *udat.IA
	pz                   *udat.PZ
	buf                  [dtxBufs]*udat.LMR
	atomic               *udat.LMR
	crEVD, conn, dto     *udat.EVD
	ep                   *udat.EP
	psp                  *udat.PSP
	peer                 udat.RMRTriplet
	cmpAndSwap, fetchAdd bool
}

// DtestxServer runs dtestx's server (RC) on device; ready is called once
// it listens for the TCP exchange.
func DtestxServer(ctx context.Context, device string, size int, logf func(string, ...any), ready func()) error {
	x := &dtestx{ctx: ctx, server: true, size: size, logf: logf}
	defer x.close()
	return run(func() {
		x.open(device)
		x.psp = listenPSP(x.ia, DtestxServerQual, x.crEVD)
		l, err := Listen()
		check(err, "TCP")
		defer l.Close()
		ready()
		peer, err := l.Exchange(ctx, ConnMsg{Addr: x.ia.Address(), Provider: Provider}, true)
		check(err, "TCP exchange")
		if peer.Provider != Provider {
			fail("the client's provider %q, want %q", peer.Provider, Provider)
		}
		x.connect(netip.Addr{})
		x.protocol()
	})
}

// DtestxClient runs dtestx's client (RC) on device against host.
func DtestxClient(ctx context.Context, device string, host netip.Addr, size int, logf func(string, ...any)) error {
	x := &dtestx{ctx: ctx, size: size, logf: logf}
	defer x.close()
	return run(func() {
		x.open(device)
		m, err := Dial(ctx, host, &ConnMsg{Addr: x.ia.Address(), Provider: Provider})
		check(err, "TCP exchange")
		if m.Provider != Provider {
			fail("the server's provider %q, want %q", m.Provider, Provider)
		}
		x.connect(m.Addr)
		x.protocol()
	})
}

func (x *dtestx) name() string {
	if x.server {
		return "Server"
	}
	return "Client"
}

func (x *dtestx) open(device string) {
	var err error
	x.ia, err = udat.OpenIA(device, 8)
	check(err, "open the IA")
	_, pa, err := x.ia.Query()
	check(err, "query the IA")
	for _, a := range pa.ProviderSpecificAttr {
		switch a.Name {
		case "DAT_IB_CMP_AND_SWAP":
			x.cmpAndSwap = a.Value == "TRUE"
		case "DAT_IB_FETCH_AND_ADD":
			x.fetchAdd = a.Value == "TRUE"
		}
	}
	x.pz, err = x.ia.CreatePZ()
	check(err, "create the PZ")
	x.crEVD, err = x.ia.CreateEVD(2, udat.EVDCRFlag)
	check(err, "create the CR EVD")
	x.conn, err = x.ia.CreateEVD(2, udat.EVDConnectionFlag)
	check(err, "create the connection EVD")
	x.dto, err = x.ia.CreateEVD(10, udat.EVDDTOFlag)
	check(err, "create the DTO EVD")
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxRDMASize: 0x10000, QoS: udat.QoSBestEffort,
		RecvCompletionFlags: udat.CompletionDefault, RequestCompletionFlags: udat.CompletionDefault,
		MaxRecvDTOs: dtxBufs, MaxRequestDTOs: dtxBufs, MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 4, MaxRDMAReadOut: 4,
	}
	x.ep, err = x.ia.CreateEP(x.pz, x.dto, x.dto, x.conn, &attr)
	check(err, "create the EP")
	for i := range x.buf {
		x.buf[i], err = x.ia.AllocLMR(x.pz, x.size, udat.MemPrivAll|udat.MemPrivIBRemoteAtomic)
		check(err, "register a buffer")
	}
	x.atomic, err = x.ia.AllocLMR(x.pz, 8, udat.MemPrivAll|udat.MemPrivIBRemoteAtomic)
	check(err, "register the atomic result buffer")
	x.postRecvs()
	copy(x.buf[dtxRcvRDMA].Bytes(), "blah, blah, blah\n\x00")
}

// postRecvs posts the receives of buffers [3] on, before connecting.
func (x *dtestx) postRecvs() {
	for i := dtxRecvBuf; i < dtxBufs; i++ {
		check(x.ep.PostRecv([]udat.LMRTriplet{x.buf[i].Triplet(0, x.size)}, uint64(i), udat.CompletionDefault), "post a receive")
	}
}

// text is what each side writes from its buffer [0].
func dtxText(server bool) []byte {
	if server {
		return []byte("Server data\x00")
	}
	return []byte("Client written data\x00")
}

func (x *dtestx) connect(server netip.Addr) {
	copy(x.buf[dtxSndRDMA].Bytes(), dtxText(x.server))
	if x.server {
		ev := waitEvent(x.ctx, x.crEVD, "the connection request")
		if ev.Number != udat.EventConnectionRequest || ev.CR.ConnQual != DtestxServerQual || ev.CR.PSP != x.psp {
			fail("connection request: %v on %d, want one on %d at our PSP", ev.Number, ev.CR.ConnQual, DtestxServerQual)
		}
		cp, err := ev.CR.CR.Query()
		check(err, "query the CR")
		if len(cp.PrivateData) < 4 || binary.BigEndian.Uint32(cp.PrivateData) != 0 {
			fail("the request's private data %v, want EP index 0", cp.PrivateData)
		}
		check(ev.CR.CR.Accept(x.ep, cp.PrivateData[:4]), "accept")
	} else {
		connectListening(x.ctx, x.ep, x.conn, server, DtestxServerQual, 30_000_000, []byte{0, 0, 0, 0}, func() {
			takeFlushed(x.ctx, x.dto, dtxBufs-dtxRecvBuf)
			x.postRecvs()
		})
	}
	if x.server {
		waitConn(x.ctx, x.conn, udat.EventConnectionEstablished, "the connection")
	}
	EncodeRMR(x.buf[dtxSendBuf].Bytes(), x.buf[dtxRcvRDMA].RMRTriplet(0, x.size))
	check(x.ep.PostSend([]udat.LMRTriplet{x.buf[dtxSendBuf].Triplet(0, RMRSize)}, 0, udat.CompletionSuppress), "send the RMR")
	waitDTO(x.ctx, x.dto, "the peer's RMR", dtxRecvBuf, RMRSize)
	x.peer = DecodeRMR(x.buf[dtxRecvBuf].Bytes())
	if x.peer.SegmentLength != uint32(x.size) || x.peer.VirtualAddress == 0 {
		fail("the peer's RMR %+v, want a buffer of %d bytes", x.peer, x.size)
	}
	x.logf("Go dtestx %s: connected, peer RMR %+v", x.name(), x.peer)
}

func (x *dtestx) protocol() {
	x.immediate()
	if x.cmpAndSwap {
		x.cmpSwap()
	}
	if x.fetchAdd {
		x.fetchAndAdd()
	}
	check(x.ep.Disconnect(udat.CloseDefault), "disconnect")
	ev := waitEvent(x.ctx, x.conn, "the disconnection")
	if ev.Number != udat.EventConnectionDisconnected {
		fail("disconnection: event %v", ev.Number)
	}
	x.teardown()
}

func (x *dtestx) immediate() {
	mine, want := uint32(dtxImmCli), uint32(dtxImmServ)
	if x.server {
		mine, want = want, mine
	}
	check(x.ep.PostRDMAWriteImmed([]udat.LMRTriplet{x.buf[dtxSndRDMA].Triplet(0, x.size)}, dtxWriteCk, x.peer, mine, udat.CompletionDefault), "RDMA write with immediate data")
	var sent, got bool
	for range 2 {
		ev := waitEvent(x.ctx, x.dto, "an RDMA write with immediate data")
		if ev.Number != udat.EventIBDTO || ev.DTO.Status != udat.DTOSuccess {
			fail("RDMA write with immediate data: event %v status %v, want an IB DTO event", ev.Number, ev.DTO.Status)
		}
		switch ev.IB.Type {
		case udat.IBRDMAWriteImmed:
			if sent || ev.DTO.TransferredLength != uint64(x.size) || ev.DTO.Cookie != dtxWriteCk {
				fail("the write's completion: length %d cookie %#x (again: %v)", ev.DTO.TransferredLength, ev.DTO.Cookie, sent)
			}
			sent = true
		case udat.IBRDMAWriteImmedData:
			if got || ev.DTO.TransferredLength != uint64(x.size) || ev.DTO.Cookie != dtxRecvBuf+1 || ev.IB.ImmedData != want {
				fail("the peer's write: length %d cookie %d immediate %#x, want %d, %d, %#x (again: %v)",
					ev.DTO.TransferredLength, ev.DTO.Cookie, ev.IB.ImmedData, x.size, dtxRecvBuf+1, want, got)
			}
			got = true
		default:
			fail("RDMA write with immediate data: extension type %v", ev.IB.Type)
		}
	}
	peerText := dtxText(!x.server)
	if b := x.buf[dtxRcvRDMA].Bytes(); !bytes.HasPrefix(b, peerText) {
		fail("the peer's RDMA write: buffer holds %q, want %q", prefix(b), peerText)
	}
	x.logf("Go dtestx %s: received immediate data %#x and %q", x.name(), want, peerText)
}

func (x *dtestx) target() []byte { return x.buf[dtxRcvRDMA].Bytes()[:8] }

func (x *dtestx) result() uint64 { return binary.NativeEndian.Uint64(x.atomic.Bytes()) }

func (x *dtestx) waitAtomic(t udat.IBExtType, cookie uint64, what string) {
	ev := waitEvent(x.ctx, x.dto, what)
	if ev.Number != udat.EventIBDTO || ev.DTO.Status != udat.DTOSuccess || ev.IB.Type != t || ev.DTO.Cookie != cookie {
		fail("%s: event %v status %v type %v cookie %d, want %v", what, ev.Number, ev.DTO.Status, ev.IB.Type, ev.DTO.Cookie, t)
	}
}

func (x *dtestx) sleep(d time.Duration) {
	select {
	case <-time.After(d):
	case <-x.ctx.Done():
		fail("the C side ended: %v", context.Cause(x.ctx))
	}
}

func (x *dtestx) cmpSwap() {
	local := x.atomic.Triplet(0, 8)
	tgt := x.target()
	var err error
	if x.server {
		binary.NativeEndian.PutUint64(tgt, 0x12345)
		x.sleep(time.Second)
		err = x.ep.PostCmpAndSwap(0x654321, 0x6789A, local, dtxAtomicCk, x.peer, udat.CompletionDefault)
	} else {
		binary.NativeEndian.PutUint64(tgt, 0x54321)
		x.sleep(time.Second)
		err = x.ep.PostCmpAndSwap(0x12345, 0x98765, local, dtxAtomicCk, x.peer, udat.CompletionDefault)
	}
	check(err, "compare-and-swap")
	x.waitAtomic(udat.IBCmpAndSwap, dtxAtomicCk, "compare-and-swap")
	x.sleep(2 * time.Second)
	res, mineNow := x.result(), binary.NativeEndian.Uint64(tgt)
	wantRes, wantMine := uint64(0x12345), uint64(0x54321)
	if x.server {
		wantRes, wantMine = 0x54321, 0x98765
	}
	if res != wantRes || mineNow != wantMine {
		fail("compare-and-swap: original %#x, own target %#x; want %#x and %#x", res, mineNow, wantRes, wantMine)
	}
	x.logf("Go dtestx %s: compare-and-swap got %#x, own target %#x", x.name(), res, mineNow)
}

func (x *dtestx) fetchAndAdd() {
	local := x.atomic.Triplet(0, 8)
	tgt := x.target()
	add, first := uint64(0x10), uint64(0x10) // the client adds 0x10 to the server's 0x10
	if x.server {
		for binary.NativeEndian.Uint64(tgt) != 0x98765 {
			x.sleep(time.Second)
		}
		binary.NativeEndian.PutUint64(tgt, 0x10)
		add, first = 0x100, 0x100
	} else {
		binary.NativeEndian.PutUint64(tgt, 0x100)
	}
	x.sleep(time.Second)
	check(x.ep.PostFetchAndAdd(add, local, dtxFAACk, x.peer, udat.CompletionDefault), "fetch-and-add")
	x.waitAtomic(udat.IBFetchAndAdd, dtxFAACk, "fetch-and-add")
	if got := x.result(); got != first {
		fail("fetch-and-add: the peer's original %#x, want %#x", got, first)
	}
	x.sleep(time.Second)
	check(x.ep.PostFetchAndAdd(add, local, dtxFAACk, x.peer, udat.CompletionDefault), "second fetch-and-add")
	x.waitAtomic(udat.IBFetchAndAdd, dtxFAACk, "second fetch-and-add")
	x.sleep(time.Second)
	res, mineNow := x.result(), binary.NativeEndian.Uint64(tgt)
	wantRes, wantMine := uint64(0x20), uint64(0x300)
	if x.server {
		wantRes, wantMine = 0x200, 0x30
	}
	if res != wantRes || mineNow != wantMine {
		fail("fetch-and-add: original %#x, own target %#x; want %#x and %#x", res, mineNow, wantRes, wantMine)
	}
	x.logf("Go dtestx %s: fetch-and-add got %#x, own target %#x", x.name(), res, mineNow)
}

// teardown frees everything as dtestx does, each free checked.
func (x *dtestx) teardown() {
	if x.psp != nil {
		check(x.psp.Free(), "free the PSP")
		x.psp = nil
	}
	check(x.ep.Free(), "free the EP")
	x.ep = nil
	// The receives never consumed (5..9) come back flushed.
	left := 0
	for {
		ev, err := x.dto.Dequeue()
		if err != nil {
			break
		}
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOErrFlushed || ev.DTO.Cookie < dtxRecvBuf+2 {
			fail("an event left: %v %+v", ev.Number, ev.DTO)
		}
		left++
	}
	if left > dtxBufs-dtxRecvBuf-2 {
		fail("%d flushed receives, want at most %d", left, dtxBufs-dtxRecvBuf-2)
	}
	for i := range x.buf {
		check(x.buf[i].Free(), "free a buffer")
		x.buf[i] = nil
	}
	check(x.atomic.Free(), "free the atomic buffer")
	x.atomic = nil
	freeBase([]**udat.EVD{&x.dto, &x.conn, &x.crEVD}, &x.pz, &x.ia, udat.CloseDefault)
}

func (x *dtestx) close() {
	objs := append([]freer{x.psp, x.ep}, freers(x.buf[:])...)
	closeAll(x.ia, append(objs, x.atomic, x.dto, x.conn, x.crEVD, x.pz)...)
}

// Package gopeer is the Go side of the datpeer protocol (package datpeer)
// over udat: a Peer that runs either role. The udat interop tests run it
// against the C datpeer in one VM, the cross-host tests against the C
// datpeer and against itself across two.
package gopeer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"
	"unsafe"

	"github.com/udapl-go/udapl/internal/datpeer"
	"github.com/udapl-go/udapl/udat"
)

// Opts vary the protocol. Only Ext is known to the C datpeer (its -x); the
// others hold where Go peers take part.
type Opts struct {
	SRQ               bool `json:"srq,omitempty"`                // receives on an SRQ
	ServerDisconnects bool `json:"server_disconnects,omitempty"` // step 8 from the server
	Reject            bool `json:"reject,omitempty"`             // the client asks to be rejected
	Ext               bool `json:"ext,omitempty"`                // the IB extensions phase (X)
}

// failure carries an error out of a protocol step (see Run).
type failure struct{ err error }

// Peer is one side of a datpeer-protocol connection. Every step returns
// its failure as Run's error instead of failing a test, because a peer in
// the cross-host tests' second VM has no test to fail.
type Peer struct {
	ctx  context.Context
	role byte
	opts Opts
	logf func(format string, args ...any)

	ia                    *udat.IA
	pz                    *udat.PZ
	lmr                   *udat.LMR
	buf                   []byte
	va                    uint64
	req, rcv, conn, crEVD *udat.EVD
	srq                   *udat.SRQ
	ep                    *udat.EP
	psp                   *udat.PSP
	qual                  udat.ConnQual

	peer       datpeer.Triplet
	nextRecv   int
	nextCookie uint64
}

// Run opens a peer of role (datpeer.RoleClient or RoleServer) on device
// as datpeer's setup does, runs f with it, and frees it, checking that the
// receives never consumed complete as flushed and that nothing else is
// left. The first failed step ends f with its error; every wait gives up
// when ctx ends.
func Run(ctx context.Context, device string, role byte, opts Opts, logf func(string, ...any), f func(g *Peer)) (err error) {
	g := &Peer{ctx: ctx, role: role, opts: opts, logf: logf, nextCookie: 100}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
		g.close()
	}()
	g.open(device)
	f(g)
	g.teardown()
	return nil
}

func (g *Peer) fail(format string, args ...any) {
	panic(failure{fmt.Errorf(format, args...)})
}

func (g *Peer) check(err error, what string) {
	if err != nil {
		g.fail("%s: %w", what, err)
	}
}

// Addr is the address of the peer's IA.
func (g *Peer) Addr() netip.Addr { return g.ia.Address() }

// open creates the buffer, the EVDs and the EP, and posts the 8 receives.
func (g *Peer) open(device string) {
	var err error
	g.ia, err = udat.OpenIA(device, 32)
	g.check(err, "open the IA")
	g.pz, err = g.ia.CreatePZ()
	g.check(err, "create the PZ")
	priv := udat.MemPrivAll
	if g.opts.Ext {
		priv |= udat.MemPrivIBRemoteAtomic // the peer's atomics
	}
	g.lmr, err = g.ia.AllocLMR(g.pz, datpeer.BufSize, priv)
	g.check(err, "allocate the LMR")
	g.buf = g.lmr.Bytes()
	clear(g.buf)
	datpeer.Fill(g.region(2), g.role)
	g.check(g.ia.SyncRDMARead([]udat.LMRTriplet{g.lmr.Triplet(2*datpeer.Region, datpeer.Region)}), "sync region [2]")
	g.va = g.lmr.Triplet(0, datpeer.BufSize).VirtualAddress
	// The peer writes to the address in the private data: the buffer's own.
	if len(g.buf) != datpeer.BufSize || g.va != uint64(uintptr(unsafe.Pointer(&g.buf[0]))) {
		g.fail("the LMR's %d bytes at %#x are not its buffer's %d at %p", datpeer.BufSize, g.va, len(g.buf), g.buf)
	}
	lp, err := g.lmr.Query()
	g.check(err, "query the LMR")
	if lp.RegisteredAddress != g.va || lp.RMRContext != g.lmr.RMRContext() || lp.MemPriv != priv {
		g.fail("the LMR's parameters %+v, want address %#x rmr_context %#x privileges %v", lp, g.va, g.lmr.RMRContext(), priv)
	}
	g.req, err = g.ia.CreateEVD(16, udat.EVDDTOFlag)
	g.check(err, "create the request EVD")
	g.rcv, err = g.ia.CreateEVD(16, udat.EVDDTOFlag)
	g.check(err, "create the receive EVD")
	g.conn, err = g.ia.CreateEVD(8, udat.EVDConnectionFlag)
	g.check(err, "create the connection EVD")
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxMessageSize: datpeer.BufSize, MaxRDMASize: datpeer.BufSize, QoS: udat.QoSBestEffort,
		RecvCompletionFlags: udat.CompletionDefault, RequestCompletionFlags: udat.CompletionDefault,
		MaxRecvDTOs: datpeer.NumRecv, MaxRequestDTOs: 8, MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 4, MaxRDMAReadOut: 4,
	}
	if g.opts.SRQ {
		g.srq, err = g.ia.CreateSRQ(g.pz, udat.SRQAttr{MaxRecvDTOs: datpeer.NumRecv, MaxRecvIOV: 1})
		g.check(err, "create the SRQ")
		g.ep, err = g.ia.CreateEPWithSRQ(g.pz, g.rcv, g.req, g.conn, g.srq, &attr)
	} else {
		g.ep, err = g.ia.CreateEP(g.pz, g.rcv, g.req, g.conn, &attr)
	}
	g.check(err, "create the EP")
	for k := range datpeer.NumRecv {
		iov := []udat.LMRTriplet{g.lmr.Triplet(datpeer.RecvSlot*(k+1), datpeer.RecvSlot)}
		if g.srq != nil {
			err = g.srq.PostRecv(iov, uint64(k))
		} else {
			err = g.ep.PostRecv(iov, uint64(k), udat.CompletionDefault)
		}
		g.check(err, "post a receive")
	}
	g.logf("Go %c: buffer at %#x, rmr_context %#x; %d receives posted", g.role, g.va, g.lmr.RMRContext(), datpeer.NumRecv)
}

// teardown frees the EP and checks that the receives never consumed
// complete as flushed, each once, and that no other event is left; then
// it frees the rest, each free checked.
func (g *Peer) teardown() {
	if g.srq != nil {
		return // the receives stay on the SRQ; close frees it all
	}
	g.check(g.ep.Free(), "free the EP")
	g.ep = nil
	if g.psp != nil {
		g.check(g.psp.Free(), "free the PSP")
		g.psp = nil
	}
	left := map[uint64]bool{}
	for k := g.nextRecv; k < datpeer.NumRecv; k++ {
		left[uint64(k)] = true
	}
	for len(left) > 0 {
		ev := g.wait(g.rcv, datpeer.Wait, "a flushed receive")
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOErrFlushed || !left[ev.DTO.Cookie] {
			g.fail("flushed receive: got %v status %v cookie %d, want one of %v", ev.Number, ev.DTO.Status, ev.DTO.Cookie, left)
		}
		delete(left, ev.DTO.Cookie)
	}
	for _, e := range []*udat.EVD{g.rcv, g.req, g.conn} {
		if ev, err := e.Dequeue(); udat.CodeOf(err).Type() != udat.QueueEmpty {
			g.fail("an event left: %v %+v (%v)", ev.Number, ev.DTO, err)
		}
	}
	g.check(g.lmr.Free(), "free the LMR")
	for _, e := range []*udat.EVD{g.req, g.rcv, g.conn, g.crEVD} {
		if e != nil {
			g.check(e.Free(), "free an EVD")
		}
	}
	g.check(g.pz.Free(), "free the PZ")
	ia := g.ia
	g.ia = nil
	g.check(ia.Close(udat.CloseGracefulFlag), "close the IA")
}

// close frees what teardown has not (everything, after a failure).
func (g *Peer) close() {
	if g.ep != nil {
		g.ep.Free()
	}
	if g.psp != nil {
		g.psp.Free()
	}
	if g.srq != nil {
		g.srq.Free()
	}
	if g.ia != nil {
		g.ia.Close(udat.CloseAbruptFlag)
	}
}

func (g *Peer) region(r int) []byte { return g.buf[r*datpeer.Region : (r+1)*datpeer.Region] }

func (g *Peer) privateData(tag string) []byte {
	return datpeer.PrivateData(datpeer.Triplet{VA: g.va, Len: datpeer.BufSize, RMRCtx: g.lmr.RMRContext()}, tag)
}

// parsePeer reads the peer's triplet and checks the tag that follows it.
func (g *Peer) parsePeer(pd []byte, wantTag, what string) {
	t, tag, err := datpeer.ParsePrivateData(pd)
	g.check(err, what)
	if tag != wantTag {
		g.fail("%s: tag %q, want %q", what, tag, wantTag)
	}
	g.peer = t
	g.logf("%s: %d bytes of private data: peer va %#x rmr_context %#x tag %q", what, len(pd), t.VA, t.RMRCtx, tag)
}

func (g *Peer) wait(e *udat.EVD, d time.Duration, what string) udat.Event {
	ctx, cancel := context.WithTimeout(g.ctx, d)
	defer cancel()
	ev, _, err := e.WaitContext(ctx, 1)
	if err != nil && g.ctx.Err() != nil {
		err = fmt.Errorf("%w (given up: %w)", err, context.Cause(g.ctx))
	}
	g.check(err, fmt.Sprintf("wait (%v) for %s", d, what))
	return ev
}

// waitConn waits for connection event want on this peer's EP.
func (g *Peer) waitConn(want udat.EventNumber, what string) udat.Event {
	ev := g.wait(g.conn, datpeer.Wait, what)
	if ev.Number != want || ev.Conn.EP != g.ep {
		g.fail("%s: got event %v of EP %p, want %v of %p", what, ev.Number, ev.Conn.EP, want, g.ep)
	}
	return ev
}

func (g *Peer) requireState(want udat.EPState, what string) {
	s, _, _, err := g.ep.GetStatus()
	g.check(err, what)
	if s != want {
		g.fail("%s: EP state %v, want %v", what, s, want)
	}
}

// waitDTO waits for the completion of one DTO and checks it succeeded.
func (g *Peer) waitDTO(e *udat.EVD, cookie uint64, op udat.DTOOp, length int, what string) {
	g.checkDTO(g.wait(e, datpeer.Wait, what), cookie, op, length, what)
}

// checkDTO checks that ev is the successful completion of one DTO.
func (g *Peer) checkDTO(ev udat.Event, cookie uint64, op udat.DTOOp, length int, what string) {
	want := udat.DTOCompletionData{EP: g.ep, Cookie: cookie, Status: udat.DTOSuccess, TransferredLength: uint64(length), Op: op}
	if ev.Number != udat.EventDTOCompletion || ev.DTO != want {
		g.fail("%s: got %v %+v, want %+v", what, ev.Number, ev.DTO, want)
	}
}

// waitIB waits for the extended completion of one DTO and checks it.
func (g *Peer) waitIB(e *udat.EVD, cookie uint64, op udat.DTOOp, x udat.IBExtensionData, length int, what string) {
	ev := g.wait(e, datpeer.Wait, what)
	want := udat.DTOCompletionData{EP: g.ep, Cookie: cookie, Status: udat.DTOSuccess, TransferredLength: uint64(length), Op: op}
	if ev.Number != udat.EventIBDTO || ev.DTO != want || ev.IB != x {
		g.fail("%s: got %v %+v %+v, want %+v %+v", what, ev.Number, ev.DTO, ev.IB, want, x)
	}
}

func (g *Peer) cookie() uint64 {
	g.nextCookie++
	return g.nextCookie - 1
}

// send sends word in a 64-byte message and waits for its completion; in
// the X phase with immediate data datpeer.MsgImmed|role.
func (g *Peer) send(word string, withImmed bool) {
	g.waitDTO(g.req, g.postSend(word, withImmed), udat.DTOSend, datpeer.MsgSize, g.sendWhat(word, withImmed))
}

// sendBeforeDisconnect is send for this side's last message when the peer
// disconnects once it has it: the send may complete flushed, though the
// peer received it (and checks that it did). Soft-RoCE queues the peer's
// acknowledgement for its completer, which runs apart from the receive
// path, and drops what is still queued when the QP enters the error state
// (rxe_completer, drain_resp_pkts): the peer's disconnect can overtake it
// (Linux 6.12 in CI). An adapter acknowledges in order.
func (g *Peer) sendBeforeDisconnect(word string) {
	cookie, what := g.postSend(word, false), g.sendWhat(word, false)
	ev := g.wait(g.req, datpeer.Wait, what)
	flushed := udat.DTOCompletionData{EP: g.ep, Cookie: cookie, Status: udat.DTOErrFlushed, Op: udat.DTOSend}
	if ev.Number == udat.EventDTOCompletion && ev.DTO == flushed {
		g.logf("%s: flushed by the peer's disconnect, its acknowledgement not yet taken", what)
		return
	}
	g.checkDTO(ev, cookie, udat.DTOSend, datpeer.MsgSize, what)
}

// sendWhat names a send of word in failures.
func (g *Peer) sendWhat(word string, withImmed bool) string {
	return fmt.Sprintf("send %q (with immediate data: %v)", word, withImmed)
}

// postSend posts word in a 64-byte message and returns its cookie.
func (g *Peer) postSend(word string, withImmed bool) uint64 {
	msg := g.buf[:datpeer.MsgSize]
	clear(msg)
	copy(msg, word)
	cookie := g.cookie()
	what := g.sendWhat(word, withImmed)
	iov := []udat.LMRTriplet{g.lmr.Triplet(0, datpeer.MsgSize)}
	if withImmed {
		g.check(g.ep.PostSendImmed(iov, cookie, datpeer.MsgImmed|uint32(g.role), udat.CompletionDefault), what)
	} else {
		g.check(g.ep.PostSend(iov, cookie, udat.CompletionDefault), what)
	}
	return cookie
}

func (g *Peer) recv(word string) {
	k := g.nextRecv
	g.nextRecv++
	what := fmt.Sprintf("receive %q", word)
	if k >= datpeer.NumRecv {
		g.fail("%s: out of receive slots", what)
	}
	g.waitDTO(g.rcv, uint64(k), udat.DTOReceive, datpeer.MsgSize, what)
	want := make([]byte, datpeer.MsgSize)
	copy(want, word)
	off := datpeer.RecvSlot * (k + 1)
	if got := g.buf[off : off+datpeer.MsgSize]; !bytes.Equal(got, want) {
		g.fail("%s: slot %d holds %q", what, k, got)
	}
}

// remote is the peer's region r.
func (g *Peer) remote(r int, length uint32) udat.RMRTriplet {
	return udat.RMRTriplet{VirtualAddress: g.peer.VA + uint64(r)*datpeer.Region, SegmentLength: length, RMRContext: g.peer.RMRCtx}
}

// rdmaWrite writes this side's pattern, region [2], to the peer's [1].
func (g *Peer) rdmaWrite() {
	cookie := g.cookie()
	g.check(g.ep.PostRDMAWrite([]udat.LMRTriplet{g.lmr.Triplet(2*datpeer.Region, datpeer.Region)}, cookie, g.remote(1, datpeer.Region), udat.CompletionDefault), "RDMA write")
	g.waitDTO(g.req, cookie, udat.DTORDMAWrite, datpeer.Region, "RDMA write")
}

// rdmaRead reads the peer's region [2] into region [1].
func (g *Peer) rdmaRead() {
	cookie := g.cookie()
	g.check(g.ep.PostRDMARead([]udat.LMRTriplet{g.lmr.Triplet(datpeer.Region, datpeer.Region)}, cookie, g.remote(2, datpeer.Region), udat.CompletionDefault), "RDMA read")
	g.waitDTO(g.req, cookie, udat.DTORDMARead, datpeer.Region, "RDMA read")
}

// writeImmed writes region [2] to the peer's region [1] with immediate
// data datpeer.ImmedBase|role (step X1 or X3).
func (g *Peer) writeImmed() {
	cookie := g.cookie()
	g.check(g.ep.PostRDMAWriteImmed([]udat.LMRTriplet{g.lmr.Triplet(2*datpeer.Region, datpeer.Region)}, cookie, g.remote(1, datpeer.Region), datpeer.ImmedBase|uint32(g.role), udat.CompletionDefault),
		"RDMA write with immediate data")
	g.waitIB(g.req, cookie, udat.DTOIBRDMAWriteImmed, udat.IBExtensionData{Type: udat.IBRDMAWriteImmed}, datpeer.Region, "RDMA write with immediate data")
}

// recvWriteImmed waits for the receive that the peer's RDMA write with
// immediate data consumes and checks the data it wrote.
func (g *Peer) recvWriteImmed(peer byte) {
	k := g.nextRecv
	g.nextRecv++
	g.waitIB(g.rcv, uint64(k), udat.DTOIBRecvImmed, udat.IBExtensionData{Type: udat.IBRDMAWriteImmedData, ImmedData: datpeer.ImmedBase | uint32(peer)},
		datpeer.Region, "the receive of the peer's RDMA write with immediate data")
	g.checkRegion1(peer, "the peer's RDMA write with immediate data", false)
}

// atomic posts a fetch-and-add of v (swap < 0) or a compare-and-swap of v
// for swap on the peer's word W and checks the old value it returns.
func (g *Peer) atomic(v uint64, swap int64, wantOld uint64) {
	cookie := g.cookie()
	local := g.lmr.Triplet(datpeer.AtomicSlot, 8)
	res := g.buf[datpeer.AtomicSlot : datpeer.AtomicSlot+8]
	for i := range res {
		res[i] = 0xff
	}
	if swap < 0 {
		g.check(g.ep.PostFetchAndAdd(v, local, cookie, g.remote(1, 8), udat.CompletionDefault), "fetch-and-add")
		g.waitIB(g.req, cookie, udat.DTOIBFetchAdd, udat.IBExtensionData{Type: udat.IBFetchAndAdd}, 8, "fetch-and-add")
	} else {
		g.check(g.ep.PostCmpAndSwap(v, uint64(swap), local, cookie, g.remote(1, 8), udat.CompletionDefault), "compare-and-swap")
		g.waitIB(g.req, cookie, udat.DTOIBCmpSwap, udat.IBExtensionData{Type: udat.IBCmpAndSwap}, 8, "compare-and-swap")
	}
	if old := binary.NativeEndian.Uint64(res); old != wantOld {
		g.fail("atomic %d/%d: the old value of the peer's word is %d, want %d", v, swap, old, wantOld)
	}
}

// checkRegion1 checks region [1] byte for byte against role's pattern,
// then clears it when clearAfter is set.
func (g *Peer) checkRegion1(role byte, what string, clearAfter bool) {
	g.check(g.ia.SyncRDMAWrite([]udat.LMRTriplet{g.lmr.Triplet(datpeer.Region, datpeer.Region)}), what)
	got := g.region(1)
	for i, b := range got {
		if want := datpeer.Pattern(role, i); b != want {
			g.fail("%s: byte %d is %#02x, want %#02x (pattern of %q)", what, i, b, want, role)
		}
	}
	if clearAfter {
		clear(got)
	}
}

// disconnect ends the connection from this side (step 8).
func (g *Peer) disconnect() {
	g.check(g.ep.Disconnect(udat.CloseGracefulFlag), "disconnect")
	g.waitDisconnected("DISCONNECTED")
}

func (g *Peer) waitDisconnected(what string) {
	g.waitConn(udat.EventConnectionDisconnected, what)
	g.requireState(udat.EPStateDisconnected, what)
}

// RunClient connects to the server at addr:q and runs the client's steps
// 1 to 8 (or asks to be rejected, with Opts.Reject).
func (g *Peer) RunClient(addr netip.Addr, q udat.ConnQual) {
	tag := datpeer.TagClient
	if g.opts.Reject {
		tag = datpeer.TagReject
	}
	g.check(g.ep.Connect(addr, q, udat.Timeout(datpeer.Wait/time.Microsecond), g.privateData(tag), udat.QoSBestEffort, udat.ConnectDefault), "connect")
	if g.opts.Reject {
		ev := g.waitConn(udat.EventConnectionPeerRejected, "PEER_REJECTED")
		g.checkReject(ev.Conn.PrivateData)
		g.requireState(udat.EPStateDisconnected, "rejected")
		return
	}
	ev := g.waitConn(udat.EventConnectionEstablished, "ESTABLISHED")
	g.parsePeer(ev.Conn.PrivateData, datpeer.TagServer, "accept")
	g.requireState(udat.EPStateConnected, "ESTABLISHED")

	g.send("ping", false)
	g.recv("pong")
	g.rdmaWrite()
	g.send("wrote", false)
	g.rdmaRead()
	g.checkRegion1(datpeer.RoleServer, "RDMA read of the server's region [2]", true)
	g.send("read", false)
	g.recv("wrote")
	g.checkRegion1(datpeer.RoleServer, "the server's RDMA write", false)
	g.recv("read")
	if g.opts.Ext {
		g.writeImmed()
		g.recv("atomic")
		g.atomic(5, -1, 1000)
		g.atomic(1005, 7, 1005)
		g.atomic(1, 9, 7)
		clear(g.region(1))
		g.send("swapped", true)
		g.recvWriteImmed(datpeer.RoleServer)
	}
	if g.opts.ServerDisconnects {
		g.sendBeforeDisconnect("done")
	} else {
		g.send("done", false)
	}
	g.recv("bye")
	if g.opts.ServerDisconnects {
		g.waitDisconnected("the server's DISCONNECTED")
	} else {
		g.send("over", false) // the side that disconnects sends last (datpeer.c, step 7)
		g.disconnect()
	}
	g.logf("client: every step passed")
}

// checkReject checks the private data of a reject.
func (g *Peer) checkReject(pd []byte) {
	words, err := datpeer.ParseReject(pd)
	g.check(err, "PEER_REJECTED")
	g.logf("rejected with private data %q", words)
}

// Listen creates the server's PSP on q.
func (g *Peer) Listen(q udat.ConnQual) {
	var err error
	g.crEVD, err = g.ia.CreateEVD(8, udat.EVDCRFlag)
	g.check(err, "create the CR EVD")
	g.psp, err = g.ia.CreatePSP(q, g.crEVD, udat.PSPConsumerFlag)
	g.check(err, "create the PSP")
	g.qual = q
	g.logf("Go server listening on conn_qual %d (rdma_cm port %d)", q, udat.ConnQualPort(q))
}

// RunServer waits for the client's request and runs the server's steps 1
// to 8, or rejects a client that asks for it.
func (g *Peer) RunServer() {
	ev := g.wait(g.crEVD, datpeer.CRWait, "the connection request")
	if ev.Number != udat.EventConnectionRequest || ev.CR.CR == nil || ev.CR.PSP != g.psp || ev.CR.RSP != nil || ev.CR.ConnQual != g.qual {
		g.fail("connection request: got event %v %+v, want one of PSP %p on %d", ev.Number, ev.CR, g.psp, g.qual)
	}
	cr := ev.CR.CR
	p, err := cr.Query()
	g.check(err, "query the CR")
	if p.LocalEP != nil {
		g.fail("connection request: local EP %p, want none", p.LocalEP)
	}
	g.logf("server: connection request from %v", p.RemoteAddr)
	if _, tag, _ := datpeer.ParsePrivateData(p.PrivateData); tag == datpeer.TagReject {
		g.check(cr.Reject([]byte(datpeer.RejectByGo)), "reject")
		if ev, err := g.conn.Dequeue(); udat.CodeOf(err).Type() != udat.QueueEmpty {
			g.fail("a connection event after the reject: %v (%v)", ev.Number, err)
		}
		g.requireState(udat.EPStateUnconnected, "rejected")
		g.logf("server: rejected the request as asked")
		return
	}
	g.parsePeer(p.PrivateData, datpeer.TagClient, "connection request")
	g.check(cr.Accept(g.ep, g.privateData(datpeer.TagServer)), "accept")
	ev = g.waitConn(udat.EventConnectionEstablished, "ESTABLISHED")
	if len(ev.Conn.PrivateData) != 0 {
		g.fail("ESTABLISHED: the passive side's event carries %d bytes of private data", len(ev.Conn.PrivateData))
	}
	g.requireState(udat.EPStateConnected, "ESTABLISHED")

	g.recv("ping")
	g.send("pong", false)
	g.recv("wrote")
	g.checkRegion1(datpeer.RoleClient, "the client's RDMA write", true)
	g.recv("read")
	g.rdmaWrite()
	g.send("wrote", false)
	g.rdmaRead()
	g.checkRegion1(datpeer.RoleClient, "RDMA read of the client's region [2]", g.opts.Ext)
	g.send("read", false)
	if g.opts.Ext {
		g.recvWriteImmed(datpeer.RoleClient)
		w := g.region(1)
		clear(w)
		binary.NativeEndian.PutUint64(w, 1000)
		g.send("atomic", true)
		g.recv("swapped")
		if v := binary.NativeEndian.Uint64(w); v != 7 {
			g.fail("the word after the client's atomics is %d, want 7", v)
		}
		g.writeImmed()
	}
	g.recv("done")
	if g.opts.ServerDisconnects {
		g.send("bye", false)
		g.disconnect()
	} else {
		g.sendBeforeDisconnect("bye")
		g.recv("over")
		g.waitDisconnected("the client's DISCONNECTED")
	}
	g.logf("server: every step passed")
}

package crosshost

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// The Go side of the datpeer protocol (documented at the top of
// testdata/datpeer/datpeer.c), written for the cross-host tests: every step
// returns an error instead of failing a test, because in VM B there is no
// test. A Go client and a Go server talk to each other, or to the C datpeer,
// across the link: connect with private data, send/receive, RDMA write and
// RDMA read both ways with the data checked byte for byte, reject, and a
// disconnect from either side.

const (
	dpRegion     = 4096
	dpBufSize    = 3 * dpRegion
	dpMsgSize    = 64
	dpRecvSlot   = 256
	dpNumRecv    = 8
	dpTripletLen = 16
	dpTagClient  = "udapl-c"
	dpTagServer  = "udapl-s"
	dpTagReject  = "reject-me"
	dpRejectByGo = "rejected-by-go"
	dpRoleServer = 'S'
	dpRoleClient = 'C'

	dpWait   = 20 * time.Second
	dpCRWait = 60 * time.Second
)

// dpOpts vary the protocol where only Go peers take part.
type dpOpts struct {
	SRQ               bool `json:"srq,omitempty"`                // receives on an SRQ
	ServerDisconnects bool `json:"server_disconnects,omitempty"` // step 8 from the server
	Reject            bool `json:"reject,omitempty"`             // the client asks to be rejected
}

// dpFailure carries an error out of a protocol step (see dpRun).
type dpFailure struct{ err error }

// dpPeer is one side of a datpeer-protocol connection.
type dpPeer struct {
	ctx  context.Context
	role byte
	opts dpOpts
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

	peerVA     uint64
	peerRMR    uint32
	nextRecv   int
	nextCookie uint64
}

// dpRun runs f with a new peer and tears the peer down; a failed step ends
// f with its error.
func dpRun(ctx context.Context, role byte, opts dpOpts, logf func(string, ...any), f func(g *dpPeer)) (err error) {
	g := &dpPeer{ctx: ctx, role: role, opts: opts, logf: logf, nextCookie: 100}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(dpFailure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
		g.close()
	}()
	g.open()
	f(g)
	return nil
}

func (g *dpPeer) fail(format string, args ...any) {
	panic(dpFailure{fmt.Errorf(format, args...)})
}

func (g *dpPeer) check(err error, what string) {
	if err != nil {
		g.fail("%s: %w", what, err)
	}
}

// open creates the buffer, the EVDs and the EP, and posts the 8 receives.
func (g *dpPeer) open() {
	var err error
	g.ia, err = udat.OpenIA(devtest.Device(), 32)
	g.check(err, "open the IA")
	g.pz, err = g.ia.CreatePZ()
	g.check(err, "create the PZ")
	g.lmr, err = g.ia.AllocLMR(g.pz, dpBufSize, udat.MemPrivAll)
	g.check(err, "allocate the LMR")
	g.buf = g.lmr.Bytes()
	clear(g.buf)
	dpFill(g.region(2), g.role)
	g.va = g.lmr.Triplet(0, dpBufSize).VirtualAddress
	g.req, err = g.ia.CreateEVD(16, udat.EVDDTOFlag)
	g.check(err, "create the request EVD")
	g.rcv, err = g.ia.CreateEVD(16, udat.EVDDTOFlag)
	g.check(err, "create the receive EVD")
	g.conn, err = g.ia.CreateEVD(8, udat.EVDConnectionFlag)
	g.check(err, "create the connection EVD")
	attr := udat.EPAttr{
		ServiceType: udat.ServiceTypeRC, MaxRecvDTOs: dpNumRecv, MaxRequestDTOs: 8,
		MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: 4, MaxRDMAReadOut: 4,
	}
	if g.opts.SRQ {
		g.srq, err = g.ia.CreateSRQ(g.pz, udat.SRQAttr{MaxRecvDTOs: dpNumRecv, MaxRecvIOV: 1})
		g.check(err, "create the SRQ")
		g.ep, err = g.ia.CreateEPWithSRQ(g.pz, g.rcv, g.req, g.conn, g.srq, &attr)
	} else {
		g.ep, err = g.ia.CreateEP(g.pz, g.rcv, g.req, g.conn, &attr)
	}
	g.check(err, "create the EP")
	for k := range dpNumRecv {
		iov := []udat.LMRTriplet{g.lmr.Triplet(dpRecvSlot*(k+1), dpRecvSlot)}
		if g.srq != nil {
			err = g.srq.PostRecv(iov, uint64(k))
		} else {
			err = g.ep.PostRecv(iov, uint64(k), udat.CompletionDefault)
		}
		g.check(err, "post a receive")
	}
}

// close frees everything; the receives not consumed complete as flushed.
func (g *dpPeer) close() {
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

func (g *dpPeer) region(r int) []byte { return g.buf[r*dpRegion : (r+1)*dpRegion] }

func (g *dpPeer) privateData(tag string) []byte {
	pd := make([]byte, dpTripletLen, dpTripletLen+len(tag))
	binary.LittleEndian.PutUint64(pd[0:], g.va)
	binary.LittleEndian.PutUint32(pd[8:], dpBufSize)
	binary.LittleEndian.PutUint32(pd[12:], g.lmr.RMRContext())
	return append(pd, tag...)
}

// parsePeer reads the peer's triplet and checks the tag that follows it
// (up to the first NUL; the transport pads the field with zeros).
func (g *dpPeer) parsePeer(pd []byte, wantTag, what string) {
	if len(pd) < dpTripletLen {
		g.fail("%s: %d bytes of private data, want a triplet", what, len(pd))
	}
	g.peerVA = binary.LittleEndian.Uint64(pd[0:])
	length := binary.LittleEndian.Uint32(pd[8:])
	g.peerRMR = binary.LittleEndian.Uint32(pd[12:])
	tag := dpCString(pd[dpTripletLen:])
	if length != dpBufSize || g.peerVA == 0 || tag != wantTag {
		g.fail("%s: peer va %#x len %d tag %q, want len %d tag %q", what, g.peerVA, length, tag, dpBufSize, wantTag)
	}
	for i, b := range pd[dpTripletLen+len(tag):] {
		if b != 0 {
			g.fail("%s: private data byte %d after the tag is %#x", what, dpTripletLen+len(tag)+i, b)
		}
	}
}

func (g *dpPeer) wait(e *udat.EVD, d time.Duration, what string) udat.Event {
	ctx, cancel := context.WithTimeout(g.ctx, d)
	defer cancel()
	ev, _, err := e.WaitContext(ctx, 1)
	g.check(err, "wait for "+what)
	return ev
}

func (g *dpPeer) waitConn(want udat.EventNumber, what string) udat.Event {
	ev := g.wait(g.conn, dpWait, what)
	if ev.Number != want {
		g.fail("%s: got event %v", what, ev.Number)
	}
	return ev
}

func (g *dpPeer) waitDTO(e *udat.EVD, cookie uint64, op udat.DTOOp, length int, what string) {
	ev := g.wait(e, dpWait, what)
	d := ev.DTO
	if ev.Number != udat.EventDTOCompletion || d.Status != udat.DTOSuccess || d.Cookie != cookie ||
		d.TransferredLength != uint64(length) || d.Op != op {
		g.fail("%s: got %v status %v cookie %d length %d op %v, want success cookie %d length %d op %v",
			what, ev.Number, d.Status, d.Cookie, d.TransferredLength, d.Op, cookie, length, op)
	}
}

func (g *dpPeer) send(word string) {
	msg := g.buf[:dpMsgSize]
	clear(msg)
	copy(msg, word)
	cookie := g.nextCookie
	g.nextCookie++
	what := fmt.Sprintf("send %q", word)
	g.check(g.ep.PostSend([]udat.LMRTriplet{g.lmr.Triplet(0, dpMsgSize)}, cookie, udat.CompletionDefault), what)
	g.waitDTO(g.req, cookie, udat.DTOSend, dpMsgSize, what)
}

func (g *dpPeer) recv(word string) {
	k := g.nextRecv
	g.nextRecv++
	what := fmt.Sprintf("receive %q", word)
	g.waitDTO(g.rcv, uint64(k), udat.DTOReceive, dpMsgSize, what)
	off := dpRecvSlot * (k + 1)
	got := g.buf[off : off+dpMsgSize]
	for i, b := range got {
		var want byte
		if i < len(word) {
			want = word[i]
		}
		if b != want {
			g.fail("%s: slot %d holds %q", what, k, got)
		}
	}
}

// rdmaWrite writes this side's pattern, region [2], to the peer's [1].
func (g *dpPeer) rdmaWrite() {
	cookie := g.nextCookie
	g.nextCookie++
	remote := udat.RMRTriplet{VirtualAddress: g.peerVA + dpRegion, SegmentLength: dpRegion, RMRContext: g.peerRMR}
	g.check(g.ep.PostRDMAWrite([]udat.LMRTriplet{g.lmr.Triplet(2*dpRegion, dpRegion)}, cookie, remote, udat.CompletionDefault), "RDMA write")
	g.waitDTO(g.req, cookie, udat.DTORDMAWrite, dpRegion, "RDMA write")
}

// rdmaRead reads the peer's region [2] into region [1].
func (g *dpPeer) rdmaRead() {
	cookie := g.nextCookie
	g.nextCookie++
	remote := udat.RMRTriplet{VirtualAddress: g.peerVA + 2*dpRegion, SegmentLength: dpRegion, RMRContext: g.peerRMR}
	g.check(g.ep.PostRDMARead([]udat.LMRTriplet{g.lmr.Triplet(dpRegion, dpRegion)}, cookie, remote, udat.CompletionDefault), "RDMA read")
	g.waitDTO(g.req, cookie, udat.DTORDMARead, dpRegion, "RDMA read")
}

// checkRegion1 checks region [1] byte for byte against role's pattern.
func (g *dpPeer) checkRegion1(role byte, what string, clearAfter bool) {
	g.check(g.ia.SyncRDMAWrite([]udat.LMRTriplet{g.lmr.Triplet(dpRegion, dpRegion)}), what)
	got := g.region(1)
	for i, b := range got {
		if want := dpPattern(role, i); b != want {
			g.fail("%s: byte %d is %#02x, want %#02x (pattern of %q)", what, i, b, want, role)
		}
	}
	if clearAfter {
		clear(got)
	}
}

// disconnect ends the connection from this side (step 8).
func (g *dpPeer) disconnect() {
	g.check(g.ep.Disconnect(udat.CloseGracefulFlag), "disconnect")
	g.waitConn(udat.EventConnectionDisconnected, "DISCONNECTED")
}

// runClient connects to the server at addr:q and runs the client's steps.
func (g *dpPeer) runClient(addr netip.Addr, q udat.ConnQual) {
	tag := dpTagClient
	if g.opts.Reject {
		tag = dpTagReject
	}
	g.check(g.ep.Connect(addr, q, udat.Timeout(dpWait/time.Microsecond), g.privateData(tag), udat.QoSBestEffort, udat.ConnectDefault), "connect")
	if g.opts.Reject {
		ev := g.waitConn(udat.EventConnectionPeerRejected, "PEER_REJECTED")
		g.logf("rejected; the reject's private data starts %q", dpCString(ev.Conn.PrivateData))
		return
	}
	ev := g.waitConn(udat.EventConnectionEstablished, "ESTABLISHED")
	g.parsePeer(ev.Conn.PrivateData, dpTagServer, "accept")

	g.send("ping")
	g.recv("pong")
	g.rdmaWrite()
	g.send("wrote")
	g.rdmaRead()
	g.checkRegion1(dpRoleServer, "RDMA read of the server's region [2]", true)
	g.send("read")
	g.recv("wrote")
	g.checkRegion1(dpRoleServer, "the server's RDMA write", false)
	g.recv("read")
	g.send("done")
	g.recv("bye")
	if g.opts.ServerDisconnects {
		g.waitConn(udat.EventConnectionDisconnected, "the server's DISCONNECTED")
	} else {
		g.disconnect()
	}
	g.logf("client: every step passed")
}

// listen creates the server's PSP on q.
func (g *dpPeer) listen(q udat.ConnQual) {
	var err error
	g.crEVD, err = g.ia.CreateEVD(8, udat.EVDCRFlag)
	g.check(err, "create the CR EVD")
	g.psp, err = g.ia.CreatePSP(q, g.crEVD, udat.PSPConsumerFlag)
	g.check(err, "create the PSP")
}

// runServer waits for the client's request and runs the server's steps
// (or rejects a client that asks for it).
func (g *dpPeer) runServer() {
	ev := g.wait(g.crEVD, dpCRWait, "the connection request")
	if ev.Number != udat.EventConnectionRequest || ev.CR.CR == nil {
		g.fail("connection request: got event %v", ev.Number)
	}
	cr := ev.CR.CR
	p, err := cr.Query()
	g.check(err, "query the CR")
	if dpCString(p.PrivateData[min(dpTripletLen, len(p.PrivateData)):]) == dpTagReject {
		g.check(cr.Reject([]byte(dpRejectByGo)), "reject")
		g.logf("server: rejected the request from %v as asked", p.RemoteAddr)
		return
	}
	g.parsePeer(p.PrivateData, dpTagClient, "connection request")
	g.check(cr.Accept(g.ep, g.privateData(dpTagServer)), "accept")
	g.waitConn(udat.EventConnectionEstablished, "ESTABLISHED")

	g.recv("ping")
	g.send("pong")
	g.recv("wrote")
	g.checkRegion1(dpRoleClient, "the client's RDMA write", true)
	g.recv("read")
	g.rdmaWrite()
	g.send("wrote")
	g.rdmaRead()
	g.checkRegion1(dpRoleClient, "RDMA read of the client's region [2]", false)
	g.send("read")
	g.recv("done")
	g.send("bye")
	if g.opts.ServerDisconnects {
		g.disconnect()
	} else {
		g.waitConn(udat.EventConnectionDisconnected, "the client's DISCONNECTED")
	}
	g.requireFlushedRecvs()
	g.logf("server: every step passed")
}

// requireFlushedRecvs frees the EP and checks that the receives never
// consumed complete as flushed, each once.
func (g *dpPeer) requireFlushedRecvs() {
	if g.srq != nil {
		return // they stay on the SRQ
	}
	g.check(g.ep.Free(), "free the EP")
	g.ep = nil
	left := map[uint64]bool{}
	for k := g.nextRecv; k < dpNumRecv; k++ {
		left[uint64(k)] = true
	}
	for len(left) > 0 {
		ev := g.wait(g.rcv, dpWait, "a flushed receive")
		if ev.DTO.Status != udat.DTOErrFlushed || !left[ev.DTO.Cookie] {
			g.fail("flushed receive: got %v status %v cookie %d, want one of %v", ev.Number, ev.DTO.Status, ev.DTO.Cookie, left)
		}
		delete(left, ev.DTO.Cookie)
	}
	if ev, err := g.rcv.Dequeue(); udat.CodeOf(err).Type() != udat.QueueEmpty {
		g.fail("an extra receive completion: %+v (%v)", ev.DTO, err)
	}
}

func dpPattern(role byte, i int) byte { return byte(i*7 + int(role)) }

func dpFill(b []byte, role byte) {
	for i := range b {
		b[i] = dpPattern(role, i)
	}
}

func dpCString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

package main

import (
	"encoding/binary"
	"fmt"

	"github.com/udapl-go/udapl/udat"
)

// The wire protocol between client and server.
//
// The client describes the test in the private data of its connect request
// (request, 48 bytes, within the 56 a connect may carry). The server answers
// in the accept's private data (reply) with the client's nonce, so the
// client can check that private data went both ways unchanged. Then the
// two sides talk in control messages (ctrlSize bytes, send/recv), the first
// of which, msgHello, carries each side's RMR triplet.

const (
	reqMagic   = "UDT1"
	reqLen     = 48
	replyMagic = "UDT1ok"
	replyLen   = 40
	ctrlMagic  = 0x4d544455 // "UDTM", little endian
	ctrlSize   = 128
)

// request is the connect private data.
type request struct {
	test     byte // 'Q', 'P' or 'T'
	op       opKind
	lat      bool
	block    bool
	credits  bool // a send bandwidth run with credits (credits.go)
	epIndex  uint16
	eps      uint16 // endpoints in the session
	session  uint32
	nonce    uint32
	size     uint32
	iters    uint32
	latIters uint32
	depth    uint16
	signal   uint16
	segs     uint16
}

func (r *request) marshal() []byte {
	b := make([]byte, reqLen)
	copy(b, reqMagic)
	b[4] = r.test
	b[5] = byte(r.op)
	if r.lat {
		b[6] |= 1
	}
	if r.block {
		b[6] |= 2
	}
	if r.credits {
		b[6] |= 4
	}
	le := binary.LittleEndian
	le.PutUint16(b[8:], r.epIndex)
	le.PutUint16(b[10:], r.eps)
	le.PutUint32(b[12:], r.session)
	le.PutUint32(b[16:], r.nonce)
	le.PutUint32(b[20:], r.size)
	le.PutUint32(b[24:], r.iters)
	le.PutUint32(b[28:], r.latIters)
	le.PutUint16(b[32:], r.depth)
	le.PutUint16(b[34:], r.signal)
	le.PutUint16(b[36:], r.segs)
	return b
}

func parseRequest(b []byte) (request, error) {
	var r request
	if len(b) < reqLen || string(b[:4]) != reqMagic {
		return r, fmt.Errorf("not a udattest connection request (%d bytes of private data)", len(b))
	}
	le := binary.LittleEndian
	r.test = b[4]
	r.op = opKind(b[5])
	r.lat = b[6]&1 != 0
	r.block = b[6]&2 != 0
	r.credits = b[6]&4 != 0
	r.epIndex = le.Uint16(b[8:])
	r.eps = le.Uint16(b[10:])
	r.session = le.Uint32(b[12:])
	r.nonce = le.Uint32(b[16:])
	r.size = le.Uint32(b[20:])
	r.iters = le.Uint32(b[24:])
	r.latIters = le.Uint32(b[28:])
	r.depth = le.Uint16(b[32:])
	r.signal = le.Uint16(b[34:])
	r.segs = le.Uint16(b[36:])
	switch {
	case r.test != 'Q' && r.test != 'P' && r.test != 'T':
		return r, fmt.Errorf("unknown test %q", r.test)
	case r.op > opRead:
		return r, fmt.Errorf("unknown operation %d", r.op)
	case r.size == 0 || r.size > 1<<30:
		return r, fmt.Errorf("bad size %d", r.size)
	case r.depth == 0 || r.signal == 0 || r.segs == 0 || r.eps == 0 || r.epIndex >= r.eps:
		return r, fmt.Errorf("bad parameters")
	case r.credits && (r.test != 'P' || r.op != opSend || r.lat):
		return r, fmt.Errorf("credits are for the send bandwidth test only")
	}
	return r, nil
}

// reply is the accept private data: the magic, then the nonce the client
// sent, and text.
func makeReply(nonce uint32) []byte {
	b := make([]byte, replyLen)
	copy(b, replyMagic)
	binary.LittleEndian.PutUint32(b[8:], nonce)
	copy(b[12:], "udattest server")
	return b
}

func checkReply(b []byte, nonce uint32) error {
	if len(b) < 12 || string(b[:len(replyMagic)]) != replyMagic {
		return fmt.Errorf("the peer's accept private data is not a udattest reply (%d bytes)", len(b))
	}
	if got := binary.LittleEndian.Uint32(b[8:]); got != nonce {
		return fmt.Errorf("the peer echoed nonce %#x, sent %#x", got, nonce)
	}
	return nil
}

// Control message types.
const (
	msgHello  = 1 // RMR triplet of the sender's data region, a = its -timeout in ms
	msgVerify = 2 // check region [a, a+b) has CRC c; reply msgResult
	msgFill   = 3 // fill region [a, a+b) with pattern seed c; reply msgResult
	msgEcho   = 4 // send the message back
	msgDone   = 5 // the test is over; reply msgResult, then disconnect
	msgResult = 6 // a = 1 on success, c = the server's CRC
	// msgProgress: the client's sign of life during a run that leaves the
	// server idle; a = operations done. No answer. Sent only to a server
	// whose hello gave its -timeout.
	msgProgress = 7
)

// ctrl is a control message.
type ctrl struct {
	typ     uint32
	seq     uint32
	rmr     udat.RMRTriplet
	a, b, c uint64
	payload [ctrlSize - 56]byte
}

func (m *ctrl) marshal(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], ctrlMagic)
	le.PutUint32(b[4:], m.typ)
	le.PutUint32(b[8:], m.seq)
	le.PutUint64(b[16:], m.rmr.VirtualAddress)
	le.PutUint32(b[24:], m.rmr.SegmentLength)
	le.PutUint32(b[28:], m.rmr.RMRContext)
	le.PutUint64(b[32:], m.a)
	le.PutUint64(b[40:], m.b)
	le.PutUint64(b[48:], m.c)
	copy(b[56:ctrlSize], m.payload[:])
}

func parseCtrl(b []byte) (ctrl, error) {
	var m ctrl
	if len(b) < ctrlSize || binary.LittleEndian.Uint32(b) != ctrlMagic {
		return m, fmt.Errorf("bad control message (%d bytes)", len(b))
	}
	le := binary.LittleEndian
	m.typ = le.Uint32(b[4:])
	m.seq = le.Uint32(b[8:])
	m.rmr = udat.RMRTriplet{VirtualAddress: le.Uint64(b[16:]), SegmentLength: le.Uint32(b[24:]), RMRContext: le.Uint32(b[28:])}
	m.a, m.b, m.c = le.Uint64(b[32:]), le.Uint64(b[40:]), le.Uint64(b[48:])
	copy(m.payload[:], b[56:ctrlSize])
	return m, nil
}

// fillPattern writes a pattern derived from seed into b: every byte depends
// on seed and its position, so misplaced or stale data shows.
func fillPattern(b []byte, seed uint64) {
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range b {
		if i&7 == 0 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		b[i] = byte(x >> (8 * (i & 7)))
	}
}

// checkPattern returns the offset of the first byte of b that differs from
// fillPattern(seed), or -1.
func checkPattern(b []byte, seed uint64) int {
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range b {
		if i&7 == 0 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		if b[i] != byte(x>>(8*(i&7))) {
			return i
		}
	}
	return -1
}

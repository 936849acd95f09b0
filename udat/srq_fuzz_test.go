//go:build linux && cgo

package udat

// FuzzSRQPostRecv fuzzes the receive posts of srq.go, SRQ.PostRecv and
// SRQ.PostRecvs, over the connection of the device fuzzing harness
// (fuzz_fixture_test.go, which tells how an input is decoded and checked).

import (
	"fmt"
	"testing"
)

// FuzzSRQPostRecv posts receives to the SRQ of the server EP with
// SRQ.PostRecv or SRQ.PostRecvs, or to that EP itself (refused); the client
// then sends a message into each. data is [mode:u8 batch:u8 per receive:
// flags:u8 iov...].
func FuzzSRQPostRecv(f *testing.F) {
	h := newFuzzHolder(f, fuzzEnvOpts{srq: true})
	in := recvInput // [mode batch recvs...]
	addRecvSeeds(f, []recvSeed{
		{64, in(0, 0, rv(0, iovSeed(sOwn(0, 64))))},
		{0, in(0, 0, rv(0, iovSeed()))},
		{1000, in(0, 0, rv(0, iovSeed(sOwn(0, 100), sOwn(200, 100), sOwn(400, 1000))))},
		{1000, in(0, 0, rv(0, iovSeed(sOwn(0, 100), sOwn(200, 100), sOwn(400, 100), sOwn(800, 100))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherPeer, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherRO, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherForeign, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherStale, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sRaw(fuzzLMRSize-64, 128))))},
		{100, in(1, 1, rv(uint8(CompletionUnsignalled), iovSeed(sOwn(0, 128))))},
		{32, in(1, 3, rv(0, iovSeed(sOwn(0, 32))), rv(0, iovSeed(sOwn(64, 64))), rv(0, iovSeed(sOwn(256, 48))))},
		{32, in(1, 3, rv(0, iovSeed(sOwn(0, 32))), rv(0, iovSeed(sAny(0, 8, 0))), rv(0, iovSeed(sOwn(256, 48))))},
		{32, in(2, 0, rv(0, iovSeed(sOwn(0, 32))))},
		{32, in(2, 0, rv(0xFF, iovSeed(sOwn(0, 32))))},
	})
	f.Fuzz(func(t *testing.T, cookie uint64, msg uint16, data []byte) {
		e := h.get(t)
		d := &fuzzBytes{data}
		mode := d.u8() % 3 // SRQ.PostRecv, SRQ.PostRecvs, the server EP's PostRecv
		batch := int(d.u8()%3) + 1
		if mode != 1 {
			batch = 1
		}
		limit := e.srqIOV
		if mode == 2 {
			limit = e.attr[1].MaxRecvIOV
		}
		recvs := make([]Recv, batch)
		for k := range recvs {
			recvs[k].Flags = CompletionFlags(d.u8())
			if mode == 0 {
				recvs[k].Flags = CompletionDefault // SRQ.PostRecv takes none
			}
			recvs[k].LocalIOV = e.decodeIOV(d, 1, limit)
			recvs[k].Cookie = cookie + uint64(k)
		}
		call := fmt.Sprintf("SRQ receives (mode %d): %+v", mode, recvs)
		e.runRecvs(t, call, 1, mode != 2, recvs, msg, func() (int, error) {
			switch mode {
			case 0:
				return postedOne(e.srq.PostRecv(recvs[0].LocalIOV, recvs[0].Cookie))
			case 1:
				return e.srq.PostRecvs(recvs)
			}
			return postedOne(e.side(1).ep.PostRecv(recvs[0].LocalIOV, recvs[0].Cookie, recvs[0].Flags))
		})
	})
}

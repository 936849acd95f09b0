//go:build linux && cgo

package udat

// FuzzPostRecv fuzzes the receive posts of post.go, EP.PostRecv and
// EP.PostRecvs, over the connection of the device fuzzing harness
// (fuzz_fixture_test.go, which tells how an input is decoded and checked).

import (
	"fmt"
	"testing"
)

// FuzzPostRecv posts receives with EP.PostRecv or, in batches of up to
// three, EP.PostRecvs; the peer then sends a message into each.
// data is [side:u8 batch:u8 per receive: flags:u8 iov...].
func FuzzPostRecv(f *testing.F) {
	h := newFuzzHolder(f, fuzzEnvOpts{})
	in := recvInput // [side batch recvs...]
	addRecvSeeds(f, []recvSeed{
		{64, in(0, 0, rv(0, iovSeed(sOwn(0, 64))))},
		{4096, in(1, 0, rv(0, iovSeed(sOwn(100, 1000), sOwn(3000, 5000))))},
		{0, in(0, 0, rv(0, iovSeed()))},
		{9, in(1, 0, rv(0, iovSeed(sOwn(0, 4), sZero(1, 2), sOwn(8, 4), sOwn(16, 4))))},
		{100, in(0, 0, rv(uint8(CompletionUnsignalled), iovSeed(sOwn(0, 128))))},
		{100, in(1, 0, rv(uint8(CompletionUnsignalled), iovSeed(sOwn(0, 128))))},
		{100, in(0, 0, rv(uint8(CompletionSuppress), iovSeed(sOwn(0, 128))))},
		{100, in(1, 0, rv(0, iovSeed(sOther(otherPeer, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherRO, 0, 128))))},
		{100, in(1, 0, rv(0, iovSeed(sOther(otherWO, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sOther(otherForeign, 0, 128))))},
		{100, in(1, 0, rv(0, iovSeed(sOther(otherStale, 0, 128))))},
		{100, in(0, 0, rv(0, iovSeed(sRaw(-4, 128))))},
		{100, in(1, 0, rv(0, iovSeed(sAny(1, 1, 1))))},
		{100, in(0, 0, rv(0, iovSeed(sOwn(0, 8), sOwn(8, 8), sOwn(16, 8))))},
		{65535, in(1, 0, rv(0, iovSeed(sWhole())))},
		{32, in(0, 3, rv(0, iovSeed(sOwn(0, 32))), rv(0, iovSeed(sOwn(64, 32))), rv(0, iovSeed(sOwn(128, 32))))},
		{32, in(1, 2, rv(0, iovSeed(sOwn(0, 32))), rv(0, iovSeed(sOther(otherNone, 0, 8))), rv(0, iovSeed(sOwn(0, 32))))},
	})
	f.Fuzz(func(t *testing.T, cookie uint64, msg uint16, data []byte) {
		e := h.get(t)
		d := &fuzzBytes{data}
		i := int(d.u8() & 1)
		batch := int(d.u8() % 4) // 0: one PostRecv; else PostRecvs of that many
		recvs := make([]Recv, max(batch, 1))
		for k := range recvs {
			recvs[k].Flags = CompletionFlags(d.u8())
			recvs[k].LocalIOV = e.decodeIOV(d, i, e.attr[i].MaxRecvIOV)
			recvs[k].Cookie = cookie + uint64(k)
		}
		ep := e.side(i).ep
		call := fmt.Sprintf("receives on the %s (batch %d): %+v", sideName(i), batch, recvs)
		e.runRecvs(t, call, i, false, recvs, msg, func() (int, error) {
			if batch == 0 {
				return postedOne(ep.PostRecv(recvs[0].LocalIOV, recvs[0].Cookie, recvs[0].Flags))
			}
			return ep.PostRecvs(recvs)
		})
	})
}

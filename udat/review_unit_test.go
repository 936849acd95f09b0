package udat

// Host-only unit tests from the lifecycle review.

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sequence numbers wrap around after 2^32 DTOs. A ring whose size does not
// divide 2^32 (any size but a power of two) mapped the sequence numbers
// just before and after the wrap onto the same slot while both were
// pending, so one DTO's cookie overwrote another's.
func TestFIFORingWrapOddSize(t *testing.T) {
	for _, size := range []int{3, 5, 100} {
		r := newFIFORing(size, 1, wrKindSend)
		start := ^uint32(0) - uint32(size/2)
		r.head, r.tail = start, start
		seqs := make([]uint32, size)
		for i := range seqs {
			require.False(t, r.full())
			seqs[i] = r.reserve(uint64(i), 0, DTOSend, true)
		}
		require.True(t, r.full(), "size %d", size)
		for i, seq := range seqs {
			slot, ok := take(r, r.owner, seq)
			require.True(t, ok, "size %d, DTO %d", size, i)
			require.Equal(t, uint64(i), slot.cookie, "size %d: every DTO keeps its cookie", size)
		}
		require.Zero(t, r.outstanding())
	}
}

// A handle the library did not create (the zero value of an object type,
// new(EP) or &EP{}) is as invalid as a nil or freed one: every call on it,
// or with it as an argument, returns DAT_INVALID_HANDLE and never panics.
func TestZeroValueHandles(t *testing.T) {
	ia, pz, lmr, rmr, evd := new(IA), new(PZ), new(LMR), new(RMR), new(EVD)
	ep, psp, rsp, cr, srq := new(EP), new(PSP), new(RSP), new(CR), new(SRQ)
	iov := []LMRTriplet{{VirtualAddress: 4096, SegmentLength: 8, LMRContext: 1}}
	rt := RMRTriplet{VirtualAddress: 4096, SegmentLength: 8, RMRContext: 1}
	e2 := func(_ any, err error) error { return err }
	e3 := func(_, _ any, err error) error { return err }
	calls := map[string]func() error{
		"IA.Query":           func() error { _, _, err := ia.Query(); return err },
		"IA.CreatePZ":        func() error { return e2(ia.CreatePZ()) },
		"IA.CreateEVD":       func() error { return e2(ia.CreateEVD(8, EVDDTOFlag)) },
		"IA.CreateEP":        func() error { return e2(ia.CreateEP(pz, nil, nil, nil, nil)) },
		"IA.CreateEPWithSRQ": func() error { return e2(ia.CreateEPWithSRQ(pz, nil, nil, nil, srq, nil)) },
		"IA.CreateLMR":       func() error { return e2(ia.CreateLMR(pz, make([]byte, 8), MemPrivAll, VATypeVA)) },
		"IA.AllocLMR":        func() error { return e2(ia.AllocLMR(pz, 8, MemPrivAll)) },
		"IA.CreatePSP":       func() error { return e2(ia.CreatePSP(1, evd, PSPConsumerFlag)) },
		"IA.CreatePSPAny":    func() error { return e3(ia.CreatePSPAny(evd, PSPConsumerFlag)) },
		"IA.CreateRSP":       func() error { return e2(ia.CreateRSP(1, ep, evd)) },
		"IA.CreateSRQ":       func() error { return e2(ia.CreateSRQ(pz, SRQAttr{MaxRecvDTOs: 1})) },
		"IA.SyncRDMARead":    func() error { return ia.SyncRDMARead(iov) },
		"IA.SyncRDMAWrite":   func() error { return ia.SyncRDMAWrite(iov) },
		"PZ.Query":           func() error { return e2(pz.Query()) },
		"PZ.CreateRMR":       func() error { return e2(pz.CreateRMR()) },
		"LMR.Query":          func() error { return e2(lmr.Query()) },
		"RMR.Query":          func() error { return e2(rmr.Query()) },
		"RMR.Bind":           func() error { return e2(rmr.Bind(lmr, iov[0], MemPrivRemoteRead, VATypeVA, ep, 1, 0)) },
		"EVD.Wait":           func() error { return e3(evd.Wait(0, 1)) },
		"EVD.WaitContext":    func() error { return e3(evd.WaitContext(context.Background(), 1)) },
		"EVD.Dequeue":        func() error { return e2(evd.Dequeue()) },
		"EVD.PostSE":         func() error { return evd.PostSE(Event{Number: EventSoftware}) },
		"EVD.Resize":         func() error { return evd.Resize(4) },
		"EVD.Query":          func() error { return e2(evd.Query()) },
		"EVD.Enable":         func() error { return evd.Enable() },
		"EVD.SetUnwaitable":  func() error { return evd.SetUnwaitable() },
		"EP.PostSend":        func() error { return ep.PostSend(iov, 1, 0) },
		"EP.PostRecv":        func() error { return ep.PostRecv(iov, 1, 0) },
		"EP.PostRDMARead":    func() error { return ep.PostRDMARead(iov, 1, rt, 0) },
		"EP.PostRDMAWrite":   func() error { return ep.PostRDMAWrite(iov, 1, rt, 0) },
		"EP.Connect": func() error {
			return ep.Connect(netip.MustParseAddr("192.0.2.1"), 1, 0, nil, 0, 0)
		},
		"EP.DupConnect":     func() error { return ep.DupConnect(ep, 0, nil, 0) },
		"EP.Disconnect":     func() error { return ep.Disconnect(CloseAbruptFlag) },
		"EP.Query":          func() error { return e2(ep.Query()) },
		"EP.Modify":         func() error { return ep.Modify(0, EPParam{}) },
		"EP.GetStatus":      func() error { _, _, _, err := ep.GetStatus(); return err },
		"EP.RecvQuery":      func() error { return e3(ep.RecvQuery()) },
		"EP.SetWatermark":   func() error { return ep.SetWatermark(1, 1) },
		"EP.Reset":          func() error { return ep.Reset() },
		"PSP.Query":         func() error { return e2(psp.Query()) },
		"RSP.Query":         func() error { return e2(rsp.Query()) },
		"CR.Query":          func() error { return e2(cr.Query()) },
		"CR.Accept":         func() error { return cr.Accept(ep, nil) },
		"CR.Reject":         func() error { return cr.Reject(nil) },
		"CR.Handoff":        func() error { return cr.Handoff(1) },
		"SRQ.PostRecv":      func() error { return srq.PostRecv(iov, 1) },
		"SRQ.Query":         func() error { return e2(srq.Query()) },
		"SRQ.Resize":        func() error { return srq.Resize(4) },
		"SRQ.SetLW":         func() error { return srq.SetLW(1) },
		"GetHandleType":     func() error { return e2(GetHandleType(ep)) },
		"ConsumerContext":   func() error { return e2(GetConsumerContext(srq)) },
		"EP.Free":           func() error { return ep.Free() },
		"EVD.Free":          func() error { return evd.Free() },
		"LMR.Free":          func() error { return lmr.Free() },
		"RMR.Free":          func() error { return rmr.Free() },
		"PSP.Free":          func() error { return psp.Free() },
		"RSP.Free":          func() error { return rsp.Free() },
		"SRQ.Free":          func() error { return srq.Free() },
		"PZ.Free":           func() error { return pz.Free() },
		"IA.Close":          func() error { return ia.Close(CloseAbruptFlag) },
		"IA.Close graceful": func() error { return ia.Close(CloseGracefulFlag) },
	}
	for name, call := range calls {
		var err error
		if !assert.NotPanics(t, func() { err = call() }, name) {
			continue
		}
		assert.Equalf(t, InvalidHandle.String(), CodeOf(err).Type().String(), "%s: %v", name, err)
	}
}

package udat

// Every exported method and function given a nil handle returns
// DAT_INVALID_HANDLE with the handle's subtype, and never panics. No device
// is needed.

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNilHandles(t *testing.T) {
	var (
		ia  *IA
		pz  *PZ
		lmr *LMR
		rmr *RMR
		evd *EVD
		ep  *EP
		psp *PSP
		rsp *RSP
		cr  *CR
		srq *SRQ
		cno *CNO
	)
	iov := []LMRTriplet{{VirtualAddress: 4096, SegmentLength: 8, LMRContext: 1}}
	rt := RMRTriplet{VirtualAddress: 4096, SegmentLength: 8, RMRContext: 1}
	e2 := func(_ any, err error) error { return err }
	e3 := func(_, _ any, err error) error { return err }
	cases := []struct {
		name string
		code Return
		call func() error
	}{
		{"IA.Query", InvalidHandleIA, func() error { _, _, err := ia.Query(); return err }},
		{"IA.Close", InvalidHandleIA, func() error { return ia.Close(CloseAbruptFlag) }},
		{"IA.CreatePZ", InvalidHandleIA, func() error { return e2(ia.CreatePZ()) }},
		{"IA.CreateEVD", InvalidHandleIA, func() error { return e2(ia.CreateEVD(8, EVDDTOFlag)) }},
		{"IA.CreateEVDWithCNO", InvalidHandleIA, func() error { return e2(ia.CreateEVDWithCNO(8, cno, EVDDTOFlag)) }},
		{"IA.CreateCNO", InvalidHandleIA, func() error { return e2(ia.CreateCNO(nil)) }},
		{"CNO.ModifyAgent", InvalidHandleCNO, func() error { return cno.ModifyAgent(nil) }},
		{"CNO.Query", InvalidHandleCNO, func() error { return e2(cno.Query()) }},
		{"CNO.Wait", InvalidHandleCNO, func() error { return e2(cno.Wait(0)) }},
		{"CNO.WaitContext", InvalidHandleCNO, func() error { return e2(cno.WaitContext(context.Background())) }},
		{"CNO.Free", InvalidHandleCNO, func() error { return cno.Free() }},
		{"EVD.ModifyCNO", NoSubtype, func() error { return evd.ModifyCNO(nil) }},
		{"IA.CreateEP", InvalidHandleIA, func() error { return e2(ia.CreateEP(pz, nil, nil, nil, nil)) }},
		{"IA.CreateEPWithSRQ", InvalidHandleSRQ, func() error { return e2(ia.CreateEPWithSRQ(pz, nil, nil, nil, srq, nil)) }},
		{"IA.CreateLMR", InvalidHandleIA, func() error { return e2(ia.CreateLMR(pz, make([]byte, 8), MemPrivAll, VATypeVA)) }},
		{"IA.AllocLMR", InvalidHandleIA, func() error { return e2(ia.AllocLMR(pz, 8, MemPrivAll)) }},
		{"IA.CreatePSP", InvalidHandleIA, func() error { return e2(ia.CreatePSP(1, evd, PSPConsumerFlag)) }},
		{"IA.CreatePSPAny", InvalidHandleIA, func() error { return e3(ia.CreatePSPAny(evd, PSPConsumerFlag)) }},
		{"IA.CreateRSP", InvalidHandleIA, func() error { return e2(ia.CreateRSP(1, ep, evd)) }},
		{"IA.CreateSRQ", InvalidHandleIA, func() error { return e2(ia.CreateSRQ(pz, SRQAttr{MaxRecvDTOs: 1})) }},
		{"IA.SyncRDMARead", InvalidHandleIA, func() error { return ia.SyncRDMARead(iov) }},
		{"IA.SyncRDMAWrite", InvalidHandleIA, func() error { return ia.SyncRDMAWrite(iov) }},
		{"PZ.Query", InvalidHandlePZ, func() error { return e2(pz.Query()) }},
		{"PZ.Free", InvalidHandlePZ, func() error { return pz.Free() }},
		{"PZ.CreateRMR", InvalidHandlePZ, func() error { return e2(pz.CreateRMR()) }},
		{"LMR.Query", InvalidHandleLMR, func() error { return e2(lmr.Query()) }},
		{"LMR.Free", InvalidHandleLMR, func() error { return lmr.Free() }},
		{"RMR.Query", InvalidHandleRMR, func() error { return e2(rmr.Query()) }},
		{"RMR.Bind", InvalidHandleRMR, func() error { return e2(rmr.Bind(lmr, iov[0], MemPrivRemoteRead, VATypeVA, ep, 1, 0)) }},
		{"RMR.Free", InvalidHandleRMR, func() error { return rmr.Free() }},
		{"EVD.Wait", NoSubtype, func() error { return e3(evd.Wait(0, 1)) }},
		{"EVD.WaitContext", NoSubtype, func() error { return e3(evd.WaitContext(context.Background(), 1)) }},
		{"EVD.WaitInto", NoSubtype, func() error { _, err := evd.WaitInto(0, 1, &Event{}); return err }},
		{"EVD.Dequeue", NoSubtype, func() error { return e2(evd.Dequeue()) }},
		{"EVD.DequeueInto", NoSubtype, func() error { return evd.DequeueInto(&Event{}) }},
		{"EVD.PostSE", NoSubtype, func() error { return evd.PostSE(Event{Number: EventSoftware}) }},
		{"EVD.Resize", NoSubtype, func() error { return evd.Resize(4) }},
		{"EVD.Query", NoSubtype, func() error { return e2(evd.Query()) }},
		{"EVD.Enable", NoSubtype, func() error { return evd.Enable() }},
		{"EVD.Disable", NoSubtype, func() error { return evd.Disable() }},
		{"EVD.SetUnwaitable", NoSubtype, func() error { return evd.SetUnwaitable() }},
		{"EVD.ClearUnwaitable", NoSubtype, func() error { return evd.ClearUnwaitable() }},
		{"EVD.Free", NoSubtype, func() error { return evd.Free() }},
		{"EP.PostSend", InvalidHandleEP, func() error { return ep.PostSend(iov, 1, 0) }},
		{"EP.PostRecv", InvalidHandleEP, func() error { return ep.PostRecv(iov, 1, 0) }},
		{"EP.PostRDMARead", InvalidHandleEP, func() error { return ep.PostRDMARead(iov, 1, rt, 0) }},
		{"EP.PostRDMAWrite", InvalidHandleEP, func() error { return ep.PostRDMAWrite(iov, 1, rt, 0) }},
		{"EP.PostRequests", InvalidHandleEP, func() error { return e2(ep.PostRequests([]Request{{LocalIOV: iov}})) }},
		{"EP.PostRecvs", InvalidHandleEP, func() error { return e2(ep.PostRecvs([]Recv{{LocalIOV: iov}})) }},
		{"EP.Connect", InvalidHandleEP, func() error {
			return ep.Connect(netip.MustParseAddr("192.0.2.1"), 1, 0, nil, 0, 0)
		}},
		{"EP.DupConnect", InvalidHandleEP, func() error { return ep.DupConnect(ep, 0, nil, 0) }},
		{"EP.Disconnect", InvalidHandleEP, func() error { return ep.Disconnect(CloseAbruptFlag) }},
		{"EP.Query", InvalidHandleEP, func() error { return e2(ep.Query()) }},
		{"EP.Modify", InvalidHandleEP, func() error { return ep.Modify(0, EPParam{}) }},
		{"EP.GetStatus", InvalidHandleEP, func() error { _, _, _, err := ep.GetStatus(); return err }},
		{"EP.RecvQuery", InvalidHandleEP, func() error { return e3(ep.RecvQuery()) }},
		{"EP.SetWatermark", InvalidHandleEP, func() error { return ep.SetWatermark(1, 1) }},
		{"EP.Reset", InvalidHandleEP, func() error { return ep.Reset() }},
		{"EP.Free", InvalidHandleEP, func() error { return ep.Free() }},
		{"PSP.Query", InvalidHandlePSP, func() error { return e2(psp.Query()) }},
		{"PSP.Free", InvalidHandlePSP, func() error { return psp.Free() }},
		{"RSP.Query", InvalidHandleRSP, func() error { return e2(rsp.Query()) }},
		{"RSP.Free", InvalidHandleRSP, func() error { return rsp.Free() }},
		{"CR.Query", InvalidHandleCR, func() error { return e2(cr.Query()) }},
		{"CR.Accept", InvalidHandleCR, func() error { return cr.Accept(ep, nil) }},
		{"CR.Reject", InvalidHandleCR, func() error { return cr.Reject(nil) }},
		{"CR.Handoff", InvalidHandleCR, func() error { return cr.Handoff(1) }},
		{"SRQ.PostRecv", InvalidHandleSRQ, func() error { return srq.PostRecv(iov, 1) }},
		{"SRQ.PostRecvs", InvalidHandleSRQ, func() error { return e2(srq.PostRecvs([]Recv{{LocalIOV: iov}})) }},
		{"SRQ.Query", InvalidHandleSRQ, func() error { return e2(srq.Query()) }},
		{"SRQ.Resize", InvalidHandleSRQ, func() error { return srq.Resize(4) }},
		{"SRQ.SetLW", InvalidHandleSRQ, func() error { return srq.SetLW(1) }},
		{"SRQ.Free", InvalidHandleSRQ, func() error { return srq.Free() }},
		{"GetHandleType(nil)", NoSubtype, func() error { return e2(GetHandleType(nil)) }},
		{"GetHandleType(nil EP)", NoSubtype, func() error { return e2(GetHandleType(ep)) }},
		{"SetConsumerContext(nil)", NoSubtype, func() error { return SetConsumerContext(nil, 1) }},
		{"GetConsumerContext(nil SRQ)", NoSubtype, func() error { return e2(GetConsumerContext(srq)) }},
	}
	for _, h := range []Handle{ia, pz, lmr, rmr, evd, ep, psp, rsp, cr, srq, cno} {
		cases = append(cases,
			struct {
				name string
				code Return
				call func() error
			}{"HandleType", anySubtype, func() error { return e2(h.HandleType()) }},
			struct {
				name string
				code Return
				call func() error
			}{"SetConsumerContext", anySubtype, func() error { return h.SetConsumerContext(1) }},
			struct {
				name string
				code Return
				call func() error
			}{"ConsumerContext", anySubtype, func() error { return e2(h.ConsumerContext()) }})
	}
	for _, c := range cases {
		var err error
		require.NotPanics(t, func() { err = c.call() }, c.name)
		if c.code == anySubtype {
			requireType(t, err, InvalidHandle, c.name)
			continue
		}
		requireCode(t, err, InvalidHandle|c.code, c.name)
	}
	// Accessors of nil objects return zero values.
	require.Nil(t, lmr.Bytes())
	require.Zero(t, lmr.Context())
	require.Zero(t, lmr.RMRContext())
	require.Equal(t, LMRTriplet{}, lmr.Triplet(0, 1))
	require.Nil(t, ia.AsyncEVD())
	select {
	case <-cno.Ready():
	default:
		t.Fatal("a nil CNO's Ready channel is closed, so a select does not hang")
	}
	require.False(t, ia.Address().IsValid())
}

func TestOpenIABadName(t *testing.T) {
	_, err := OpenIA("", 8)
	requireCode(t, err, InvalidParameter|InvalidArg1)
	_, err = OpenIA("rxe0", -1)
	requireCode(t, err, InvalidParameter|InvalidArg2)
}

const anySubtype Return = 0xffff

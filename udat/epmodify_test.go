//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// evdDepth returns the CQ room an EVD holds for its EPs' queues.
func evdDepth(e *EVD) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.use.depth
}

// requireQueues checks that ep reports the queues its queue pair really
// got, and at least req request and recv receive DTOs, as asked: a device
// may grant more (Linux 6.12's Soft-RoCE rounds a queue up to its ring
// size, 2^k-1: 65 asked, 127 granted; 6.1's grants what is asked), and the
// EP then takes it. It returns the EP's request and receive DTO counts. An
// EP with an SRQ (recv < 0) has no receive queue of its own.
func requireQueues(t testing.TB, ep *EP, req, recv int) (gotReq, gotRecv int) {
	t.Helper()
	q, err := ep.Query()
	require.NoError(t, err)
	c := ep.qp.Cap()
	require.GreaterOrEqual(t, q.Attr.MaxRequestDTOs, req, "request DTOs: at least as asked")
	require.Equal(t, c.MaxSendWR-1, q.Attr.MaxRequestDTOs, "request DTOs: the QP's send queue less the flush marker")
	if recv >= 0 {
		require.GreaterOrEqual(t, q.Attr.MaxRecvDTOs, recv, "receive DTOs: at least as asked")
		require.Equal(t, c.MaxRecvWR, q.Attr.MaxRecvDTOs, "receive DTOs: the QP's receive queue")
	}
	return q.Attr.MaxRequestDTOs, q.Attr.MaxRecvDTOs
}

// newPairSendQueue connects a pair whose client EP asks for only n request
// DTOs, and returns it with the room the client's send queue got (checked
// by requireQueues: at least n).
func newPairSendQueue(t testing.TB, n int) (p *pair, room int) {
	t.Helper()
	attr := DefaultEPAttr()
	attr.MaxRequestDTOs = n
	p = newPair(t, pairOpts{clientAttr: &attr})
	room, _ = requireQueues(t, p.client.ep, n, 0)
	return p, room
}

// dat_ep_modify on an UNCONNECTED EP changes its PZ, EVDs, DTO counts and
// IOV sizes: the EP gets a new queue pair, the CQ room moves from the old
// EVD to the new one, the old PZ and EVDs are free again, and the EP then
// connects and transfers through its new EVD and PZ.
func TestEPModifyUnconnected(t *testing.T) {
	ia := openIA(t)
	pz1, pz2 := mustPZ(t, ia), mustPZ(t, ia)
	evdA, err := ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	evdB, err := ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	conn1, err := ia.CreateEVD(4, EVDConnectionFlag)
	require.NoError(t, err)
	conn2, err := ia.CreateEVD(4, EVDConnectionFlag)
	require.NoError(t, err)
	ep, err := ia.CreateEP(pz1, evdA, evdA, conn1, nil)
	require.NoError(t, err)
	before, err := ep.Query()
	require.NoError(t, err)
	// The default 64 and 64, and the flush marker.
	req, recv := requireQueues(t, ep, 64, 64)
	require.Equal(t, req+1+recv, evdDepth(evdA))
	require.Zero(t, evdDepth(evdB))
	oldQPN := ep.qpn

	var p EPParam
	p.PZ, p.RecvEVD, p.RequestEVD, p.ConnectEVD = pz2, evdB, evdB, conn2
	p.Attr = before.Attr
	p.Attr.MaxRecvDTOs, p.Attr.MaxRequestDTOs, p.Attr.MaxRecvIOV, p.Attr.MaxRequestIOV = 8, 16, 2, 2
	p.Attr.MaxRDMAReadIOV, p.Attr.MaxRDMAWriteIOV = 1, 2
	p.Attr.RequestCompletionFlags = CompletionUnsignalled
	p.Attr.MaxRDMAReadIn, p.Attr.MaxRDMAReadOut = 2, 2
	mask := EPFieldPZ | EPFieldRecvEVD | EPFieldRequestEVD | EPFieldConnectEVD | EPFieldMaxRecvDTOs |
		EPFieldMaxRequestDTOs | EPFieldMaxRecvIOV | EPFieldMaxRequestIOV | EPFieldMaxRDMAReadIOV |
		EPFieldMaxRDMAWriteIOV | EPFieldRequestCompletionFlag | EPFieldMaxRDMAReadIn | EPFieldMaxRDMAReadOut
	require.NoError(t, ep.Modify(mask, p))

	q, err := ep.Query()
	require.NoError(t, err)
	require.Same(t, pz2, q.PZ)
	require.Same(t, evdB, q.RecvEVD)
	require.Same(t, evdB, q.RequestEVD)
	require.Same(t, conn2, q.ConnectEVD)
	req, recv = requireQueues(t, ep, 16, 8)
	require.Less(t, req, before.Attr.MaxRequestDTOs, "the queues shrank")
	require.Less(t, recv, before.Attr.MaxRecvDTOs)
	require.Equal(t, ep.qp.Cap().MaxRecvSGE, q.Attr.MaxRecvIOV)
	require.GreaterOrEqual(t, q.Attr.MaxRecvIOV, 2)
	require.Equal(t, ep.qp.Cap().MaxSendSGE, q.Attr.MaxRequestIOV)
	require.GreaterOrEqual(t, q.Attr.MaxRequestIOV, 2)
	require.Equal(t, CompletionUnsignalled, q.Attr.RequestCompletionFlags)
	require.Equal(t, 2, q.Attr.MaxRDMAReadIn)
	require.Equal(t, before.Attr.MaxMessageSize, q.Attr.MaxMessageSize)
	require.NotEqual(t, oldQPN, ep.qpn, "a new queue pair")
	require.Same(t, ep, ia.lookupEP(ep.qpn))
	require.Nil(t, ia.lookupEP(oldQPN))
	require.Zero(t, evdDepth(evdA), "the room moved out of the old EVD")
	require.Equal(t, req+1+recv, evdDepth(evdB))
	// Nothing uses the old objects any more.
	require.NoError(t, evdA.Free())
	require.NoError(t, conn1.Free())
	require.NoError(t, pz1.Free())

	// The modified EP connects and works through its new PZ and EVD.
	mem, err := ia.AllocLMR(pz2, 4096, MemPrivAll)
	require.NoError(t, err)
	c := side{ep: ep, req: evdB, recv: evdB, conn: conn2, lmr: mem}
	pr := &pair{ia: ia, pz: pz2, client: c}
	pr.server = newSide(t, ia, pz2, pairOpts{}, nil, nil)
	postRecvs(t, pr.server, 0, 64, 1, 7)
	pr.connect(t)
	copy(mem.Bytes(), "modified")
	require.NoError(t, ep.PostSend([]LMRTriplet{mem.Triplet(0, 8)}, 3, CompletionDefault))
	d := waitDTO(t, evdB)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(3), d.Cookie)
	d = waitDTO(t, pr.server.recv)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, "modified", string(pr.server.lmr.Bytes()[:8]))

	// Connected: nothing may change any more.
	err = ep.Modify(EPFieldQoS, p)
	requireCode(t, err, InvalidState|InvalidStateEPConnected)
	err = ep.Modify(EPFieldMaxRecvDTOs, p)
	requireCode(t, err, InvalidState|InvalidStateEPConnected)
	require.NoError(t, ep.Modify(0, p), "an empty mask changes nothing")
	disconnectPair(t, pr)
	require.NoError(t, ep.Free())
	require.Zero(t, evdDepth(evdB), "the freed EP gave its room back")
}

// dat_ep_modify refuses what the man page does not allow, and then changes
// nothing.
func TestEPModifyErrors(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	dto, err := ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	conn, err := ia.CreateEVD(4, EVDConnectionFlag)
	require.NoError(t, err)
	ep, err := ia.CreateEP(pz, dto, dto, conn, nil)
	require.NoError(t, err)
	before, err := ep.Query()
	require.NoError(t, err)
	depth := evdDepth(dto)
	p := before

	for _, m := range []EPParamMask{EPFieldIAHandle, EPFieldEPState, EPFieldLocalIAAddress, EPFieldLocalPortQual,
		EPFieldRemoteIAAddress, EPFieldRemotePortQual, EPFieldSRQ, EPFieldNumTransportAttr,
		EPFieldProviderSpecificAttr, 1 << 31, EPFieldAll} {
		requireCode(t, ep.Modify(m, p), InvalidParameter|InvalidArg2, "mask %#x", m)
	}
	bad := func(mask EPParamMask, edit func(p *EPParam)) {
		t.Helper()
		q := before
		edit(&q)
		requireCode(t, ep.Modify(mask, q), InvalidParameter|InvalidArg3, "mask %#x", mask)
	}
	a, _, err := ia.Query()
	require.NoError(t, err)
	bad(EPFieldMaxRecvDTOs, func(p *EPParam) { p.Attr.MaxRecvDTOs = a.MaxDTOPerEP + 1 })
	bad(EPFieldMaxRequestDTOs, func(p *EPParam) { p.Attr.MaxRequestDTOs = -1 })
	bad(EPFieldMaxRecvIOV, func(p *EPParam) { p.Attr.MaxRecvIOV = a.MaxIOVSegmentsPerDTO + 1 })
	bad(EPFieldMaxRDMAReadIn, func(p *EPParam) { p.Attr.MaxRDMAReadIn = 256 })
	bad(EPFieldServiceType, func(p *EPParam) { p.Attr.ServiceType = 7 })
	bad(EPFieldRecvCompletionFlags, func(p *EPParam) { p.Attr.RecvCompletionFlags = CompletionBarrierFence })
	bad(EPFieldRequestCompletionFlag, func(p *EPParam) { p.Attr.RequestCompletionFlags = CompletionSolicitedWait })
	bad(EPFieldRecvEVD, func(p *EPParam) { p.RecvEVD = conn })
	bad(EPFieldConnectEVD, func(p *EPParam) { p.ConnectEVD = dto })
	bad(EPFieldPZ, func(p *EPParam) { p.PZ = nil })
	other := openIA(t)
	bad(EPFieldPZ, func(p *EPParam) { p.PZ = mustPZ(t, other) })
	freed := mustPZ(t, ia)
	require.NoError(t, freed.Free())
	bad(EPFieldPZ, func(p *EPParam) { p.PZ = freed })

	after, err := ep.Query()
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused Modify changes nothing")
	require.Equal(t, depth, evdDepth(dto))

	// Posted receives stay: a change that needs a new queue pair waits
	// until none is posted; one that does not goes ahead.
	mem, err := ia.AllocLMR(pz, 4096, MemPrivAll)
	require.NoError(t, err)
	require.NoError(t, ep.PostRecv([]LMRTriplet{mem.Triplet(0, 64)}, 1, CompletionDefault))
	p.Attr.MaxRecvDTOs = 4
	requireCode(t, ep.Modify(EPFieldMaxRecvDTOs, p), InvalidState|InvalidStateEPUnconnected)
	p.Attr.QoS = QoSBestEffort
	p.Attr.MaxRDMAReadOut = 1
	require.NoError(t, ep.Modify(EPFieldQoS|EPFieldMaxRDMAReadOut, p))
	q, err := ep.Query()
	require.NoError(t, err)
	require.Equal(t, 1, q.Attr.MaxRDMAReadOut)
	require.Equal(t, before.Attr.MaxRecvDTOs, q.Attr.MaxRecvDTOs)
	n, _, err := ep.RecvQuery()
	require.NoError(t, err)
	require.Equal(t, 1, n, "the posted receive is still there")
	require.NoError(t, ep.Free())
	d := waitDTO(t, dto)
	require.Equal(t, DTOErrFlushed, d.Status)
	require.Equal(t, uint64(1), d.Cookie)
	requireCode(t, ep.Modify(EPFieldQoS, p), InvalidHandle|InvalidHandleEP)

	// An EP of an RSP (RESERVED) takes EVD and size changes but not a PZ.
	rep, err := ia.CreateEP(pz, dto, dto, conn, nil)
	require.NoError(t, err)
	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	rsp, err := ia.CreateRSP(nextConnQual(), rep, crEVD)
	require.NoError(t, err)
	rp, err := rep.Query()
	require.NoError(t, err)
	require.Equal(t, EPStateReserved, rp.State)
	requireCode(t, rep.Modify(EPFieldPZ, rp), InvalidState|InvalidStateEPReserved)
	was := rp.Attr.MaxRequestDTOs
	rp.Attr.MaxRequestDTOs = 8
	require.NoError(t, rep.Modify(EPFieldMaxRequestDTOs, rp))
	req, _ := requireQueues(t, rep, 8, 0)
	require.Less(t, req, was, "the send queue shrank")
	require.NoError(t, rsp.Free())
	require.NoError(t, rep.Free())
}

// An EP that uses an SRQ keeps the SRQ's PZ and receive sizes.
func TestEPModifyWithSRQ(t *testing.T) {
	ia := openIA(t)
	a, _, err := ia.Query()
	require.NoError(t, err)
	if a.MaxSRQs == 0 {
		t.Skip("the device has no SRQs")
	}
	pz := mustPZ(t, ia)
	srq, err := ia.CreateSRQ(pz, SRQAttr{MaxRecvDTOs: 16, MaxRecvIOV: 1})
	require.NoError(t, err)
	dto, err := ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	ep, err := ia.CreateEPWithSRQ(pz, dto, dto, nil, srq, nil)
	require.NoError(t, err)
	p, err := ep.Query()
	require.NoError(t, err)
	p.PZ = mustPZ(t, ia)
	requireCode(t, ep.Modify(EPFieldPZ, p), InvalidParameter|InvalidArg3)
	p.Attr.MaxRecvDTOs = 4
	requireCode(t, ep.Modify(EPFieldMaxRecvDTOs, p), InvalidParameter|InvalidArg3)
	was := p.Attr.MaxRequestDTOs
	p.Attr.MaxRequestDTOs = 4
	require.NoError(t, ep.Modify(EPFieldMaxRequestDTOs, p))
	q, err := ep.Query()
	require.NoError(t, err)
	req, _ := requireQueues(t, ep, 4, -1)
	require.Less(t, req, was, "the send queue shrank")
	require.Same(t, srq, q.SRQ)

	// dat_ep_set_watermark on a live EP.
	require.NoError(t, ep.SetWatermark(int(WatermarkInfinite), int(WatermarkInfinite)))
	requireCode(t, ep.SetWatermark(4, 8), ModelNotSupported)
	plain, err := ia.CreateEP(pz, dto, dto, nil, nil)
	require.NoError(t, err)
	requireCode(t, plain.SetWatermark(int(WatermarkInfinite), int(WatermarkInfinite)), InvalidParameter|InvalidArg1)
	require.NoError(t, plain.Free())
	require.NoError(t, ep.Free())
	requireCode(t, ep.SetWatermark(int(WatermarkInfinite), int(WatermarkInfinite)), InvalidHandle|InvalidHandleEP)
}

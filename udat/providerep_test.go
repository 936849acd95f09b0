//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// DAT_PSP_PROVIDER_FLAG: the PSP creates the EP of each request, with no PZ
// and no EVDs and the requester's RDMA read depths. The Consumer gives it a
// PZ and EVDs with dat_ep_modify and accepts with it; a rejected request
// takes its EP along.
func TestPSPProviderFlag(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	qual := nextConnQual()
	psp, err := ia.CreatePSP(qual, crEVD, PSPProviderFlag)
	require.NoError(t, err)
	pq, err := psp.Query()
	require.NoError(t, err)
	require.Equal(t, PSPProviderFlag, pq.Flags)

	// request connects a new client EP of attr, with private data pd, and
	// returns it with the request the PSP made of it, queried.
	request := func(attr *EPAttr, pd []byte) (side, *CR, CRParam) {
		t.Helper()
		client := newSide(t, ia, pz, pairOpts{}, attr, nil)
		require.NoError(t, client.ep.Connect(ia.Address(), qual, waitUS, pd, QoSBestEffort, ConnectDefault))
		ev := waitEvent(t, crEVD)
		require.Equal(t, EventConnectionRequest, ev.Number)
		crp, err := ev.CR.CR.Query()
		require.NoError(t, err)
		return client, ev.CR.CR, crp
	}

	ca := DefaultEPAttr()
	ca.MaxRDMAReadIn, ca.MaxRDMAReadOut = 3, 2
	client, cr, crp := request(&ca, []byte("provider"))
	require.Equal(t, "provider", string(crp.PrivateData[:8]))
	ep := crp.LocalEP
	require.NotNil(t, ep, "the PSP created the EP")
	q, err := ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPStateTentativeConnectionPending, q.State)
	require.Nil(t, q.PZ)
	require.Nil(t, q.RecvEVD)
	require.Nil(t, q.RequestEVD)
	require.Nil(t, q.ConnectEVD)
	require.Equal(t, 2, q.Attr.MaxRDMAReadIn, "the reads the requester issues")
	require.Equal(t, 3, q.Attr.MaxRDMAReadOut, "the reads the requester takes")
	// No EVD, no PZ: nothing can be posted yet, and it cannot be accepted.
	requireCode(t, cr.Accept(nil, nil), InvalidState|InvalidStateEPEVDConnect)
	requireType(t, ep.PostRecv([]LMRTriplet{client.lmr.Triplet(0, 8)}, 1, CompletionDefault), InvalidState)

	dto, err := ia.CreateEVD(16, EVDDTOFlag)
	require.NoError(t, err)
	conn, err := ia.CreateEVD(4, EVDConnectionFlag)
	require.NoError(t, err)
	q.RecvEVD, q.RequestEVD, q.ConnectEVD = dto, dto, conn
	require.NoError(t, ep.Modify(EPFieldRecvEVD|EPFieldRequestEVD|EPFieldConnectEVD, q))
	requireCode(t, cr.Accept(nil, nil), InvalidState|InvalidStateEPUnconfTentative)
	q.PZ = pz
	require.NoError(t, ep.Modify(EPFieldPZ, q))
	q, err = ep.Query()
	require.NoError(t, err)
	require.Same(t, pz, q.PZ)
	require.Same(t, dto, q.RecvEVD)
	require.Equal(t, EPStateTentativeConnectionPending, q.State)
	mem, err := ia.AllocLMR(pz, 4096, MemPrivAll)
	require.NoError(t, err)
	require.NoError(t, ep.PostRecv([]LMRTriplet{mem.Triplet(0, 64)}, 11, CompletionDefault))
	other := mustPZ(t, ia)
	requireCode(t, cr.Accept(&EP{}, nil), InvalidHandle|InvalidHandleEP, "only the PSP's EP")
	_ = other

	require.NoError(t, cr.Accept(nil, []byte("ok")))
	require.Equal(t, EventConnectionEstablished, waitEvent(t, client.conn).Number)
	require.Equal(t, EventConnectionEstablished, waitEvent(t, conn).Number)
	copy(client.lmr.Bytes(), "via provider EP")
	require.NoError(t, client.ep.PostSend([]LMRTriplet{client.lmr.Triplet(0, 15)}, 1, CompletionDefault))
	require.Equal(t, DTOSuccess, waitDTO(t, client.req).Status)
	d := waitDTO(t, dto)
	require.Equal(t, DTOSuccess, d.Status)
	require.Equal(t, uint64(11), d.Cookie)
	require.Equal(t, "via provider EP", string(mem.Bytes()[:15]))
	q, err = ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPStateConnected, q.State)
	require.Equal(t, PortQual(qual), q.LocalPortQual)

	// Rejected: the requester hears so and the provider's EP is gone.
	client2, cr2, crp2 := request(nil, nil)
	ep2 := crp2.LocalEP
	require.NotNil(t, ep2)
	require.NotSame(t, ep, ep2)
	require.NoError(t, cr2.Reject([]byte("no")))
	require.Equal(t, EventConnectionPeerRejected, waitEvent(t, client2.conn).Number)
	_, err = ep2.Query()
	requireCode(t, err, InvalidHandle|InvalidHandleEP, "Reject freed the provider's EP")

	// A request left pending holds its EP: the IA is busy until the
	// request goes.
	_, _, crp3 := request(nil, nil)
	require.NotNil(t, crp3.LocalEP)
	require.NoError(t, psp.Free())
	require.NoError(t, ia.Close(CloseAbruptFlag), "an abrupt close frees the request and its EP")
	_, err = crp3.LocalEP.Query()
	requireCode(t, err, InvalidHandle|InvalidHandleEP)
}

//go:build linux && cgo

package udat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// dat_ia_open by device, by its network interface, by its address, and by
// a provider name of the dat.conf file that DAT_OVERRIDE names.
func TestOpenIANames(t *testing.T) {
	ia := openIA(t)
	a, pa, err := ia.Query()
	require.NoError(t, err)
	require.Equal(t, deviceName(t), a.AdapterName)
	require.NotEmpty(t, a.NetDev)
	require.Equal(t, ia.Address(), a.Address)
	require.Positive(t, a.MaxEPs)
	require.Positive(t, a.MaxEVDQLen)
	require.True(t, pa.IsThreadSafe)
	require.Equal(t, ia.privateData.connect, pa.MaxPrivateDataSize) // TestPrivateDataLimits

	for _, name := range []string{a.NetDev, a.Address.String()} {
		ia2, err := OpenIA(name, 4)
		require.NoError(t, err, name)
		a2, _, err := ia2.Query()
		require.NoError(t, err)
		require.Equal(t, a.AdapterName, a2.AdapterName, name)
		require.NoError(t, ia2.Close(CloseGracefulFlag))
	}

	conf := filepath.Join(t.TempDir(), "dat.conf")
	line := "ofa-v2-cma-roe-" + a.NetDev + ` u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "` + a.NetDev + ` 0" ""` + "\n"
	require.NoError(t, os.WriteFile(conf, []byte("# test\n"+line), 0o644))
	t.Setenv("DAT_OVERRIDE", conf)
	ps, err := Providers()
	require.NoError(t, err)
	require.Len(t, ps, 1)
	ia3, err := OpenIA(ps[0].Name, 4)
	require.NoError(t, err)
	a3, _, err := ia3.Query()
	require.NoError(t, err)
	require.Equal(t, a.AdapterName, a3.AdapterName)
	require.NoError(t, ia3.Close(CloseGracefulFlag))

	_, err = OpenIA("no-such-provider", 4)
	requireCode(t, err, ProviderNotFound)
}

// dat_pz_free and dat_lmr_free refuse while in use; dat_lmr_query.
func TestPZAndLMRLifecycle(t *testing.T) {
	ia := openIA(t)
	pz := mustPZ(t, ia)
	pq, err := pz.Query()
	require.NoError(t, err)
	require.Equal(t, ia, pq.IA)
	buf := make([]byte, 8192)
	lmr, err := ia.CreateLMR(pz, buf, MemPrivLocalRead|MemPrivLocalWrite|MemPrivRemoteRead, VATypeVA)
	require.NoError(t, err)
	lq, err := lmr.Query()
	require.NoError(t, err)
	require.Equal(t, pz, lq.PZ)
	require.Equal(t, uint64(8192), lq.Length)
	require.Equal(t, lmr.Context(), lq.LMRContext)
	require.Equal(t, lmr.RMRContext(), lq.RMRContext)
	require.Equal(t, MemPrivLocalRead|MemPrivLocalWrite|MemPrivRemoteRead, lq.MemPriv)
	require.Equal(t, lmr.Triplet(0, 0).VirtualAddress, lq.RegisteredAddress)
	requireCode(t, pz.Free(), InvalidState|InvalidStatePZInUse)

	// A receive pending on the LMR does not keep it, as in C: the receive
	// still completes once, flushed, when its EP goes.
	sd := newSide(t, ia, pz, pairOpts{}, nil, nil)
	require.NoError(t, sd.ep.PostRecv([]LMRTriplet{lmr.Triplet(0, 64)}, 1, 0))
	require.NoError(t, lmr.Free())
	requireCode(t, lmr.Free(), InvalidHandle|InvalidHandleLMR)
	require.NoError(t, sd.ep.Free())
	d := waitDTO(t, sd.recv)
	require.Equal(t, DTOCompletionData{EP: sd.ep, Cookie: 1, Status: DTOErrFlushed, Op: DTOReceive}, d)
	requireEmpty(t, sd.recv)
	_, err = lmr.Query()
	requireCode(t, err, InvalidHandle|InvalidHandleLMR)

	_, err = ia.CreateLMR(pz, nil, MemPrivAll, VATypeVA)
	requireCode(t, err, InvalidParameter|InvalidArg3)
	_, err = ia.CreateLMR(pz, buf, 0x100, VATypeVA)
	requireCode(t, err, InvalidParameter|InvalidArg6)
	_, err = ia.CreateLMR(pz, buf, MemPrivAll, VATypeZB)
	requireCode(t, err, InvalidParameter|InvalidArg7)
	_, err = ia.AllocLMR(pz, 0, MemPrivAll)
	requireCode(t, err, InvalidParameter|InvalidArg4)
	require.NoError(t, ia.SyncRDMARead([]LMRTriplet{sd.lmr.Triplet(0, 8)}))
	require.NoError(t, ia.SyncRDMAWrite([]LMRTriplet{sd.lmr.Triplet(0, 8)}))
	requireCode(t, ia.SyncRDMAWrite([]LMRTriplet{sd.lmr.Triplet(1<<20, 8)}), InvalidParameter|InvalidArg2)
	require.NoError(t, sd.lmr.Free())
	for _, e := range []*EVD{sd.req, sd.conn} {
		require.NoError(t, e.Free())
	}
	require.NoError(t, pz.Free())
	requireCode(t, pz.Free(), InvalidHandle|InvalidHandlePZ)
	require.NoError(t, ia.Close(CloseGracefulFlag))
}

// dat_get_handle_type and the consumer context, on every kind of object.
func TestHandleTypesAndConsumerContext(t *testing.T) {
	p := newPair(t, pairOpts{})
	ia := p.ia
	srq, err := ia.CreateSRQ(p.pz, SRQAttr{MaxRecvDTOs: 4})
	require.NoError(t, err)
	crEVD, err := ia.CreateEVD(4, EVDCRFlag)
	require.NoError(t, err)
	lone := newSide(t, ia, p.pz, pairOpts{}, nil, nil)
	rsp, err := ia.CreateRSP(nextConnQual(), lone.ep, crEVD)
	require.NoError(t, err)
	c2 := newSide(t, ia, p.pz, pairOpts{}, nil, nil)
	require.NoError(t, c2.ep.Connect(ia.Address(), p.qual, waitUS, nil, 0, 0))
	cr := waitEvent(t, p.cr).CR.CR
	handles := map[Handle]HandleType{
		ia: HandleTypeIA, p.pz: HandleTypePZ, p.client.lmr: HandleTypeLMR, p.client.req: HandleTypeEVD,
		p.client.ep: HandleTypeEP, p.psp: HandleTypePSP, rsp: HandleTypeRSP, cr: HandleTypeCR, srq: HandleTypeSRQ,
	}
	if rmr, err := p.pz.CreateRMR(); err == nil {
		handles[rmr] = HandleTypeRMR
	}
	for h, want := range handles {
		got, err := GetHandleType(h)
		require.NoError(t, err)
		require.Equal(t, want, got)
		v, err := GetConsumerContext(h)
		require.NoError(t, err)
		require.Nil(t, v)
		require.NoError(t, SetConsumerContext(h, want.String()))
		v, err = h.ConsumerContext()
		require.NoError(t, err)
		require.Equal(t, want.String(), v)
	}
	require.NoError(t, cr.Reject(nil))
	_, err = GetHandleType(cr)
	requireCode(t, err, InvalidHandle|InvalidHandleCR)
	requireCode(t, cr.SetConsumerContext(1), InvalidHandle|InvalidHandleCR)
}

// dat_rmr_create, dat_rmr_bind, dat_rmr_query, dat_rmr_free: a memory window
// exposes part of an LMR; the peer writes through its rmr_context. A device
// without memory windows refuses with DAT_MODEL_NOT_SUPPORTED.
func TestRMR(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	a, _, err := p.ia.Query()
	require.NoError(t, err)
	rmr, err := p.pz.CreateRMR()
	if a.MaxRMRs == 0 {
		requireCode(t, err, ModelNotSupported)
		return
	}
	require.NoError(t, err)
	win := s.lmr.Triplet(8192, 256)
	ctx, err := rmr.Bind(s.lmr, win, MemPrivRemoteWrite|MemPrivRemoteRead, VATypeVA, s.ep, 77, CompletionDefault)
	require.NoError(t, err)
	ev := waitEvent(t, s.req)
	require.Equal(t, EventRMRBindCompletion, ev.Number)
	require.Equal(t, rmr, ev.RMR.RMR)
	require.Equal(t, uint64(77), ev.RMR.Cookie)
	require.Equal(t, DTOSuccess, ev.RMR.Status)
	rq, err := rmr.Query()
	require.NoError(t, err)
	require.Equal(t, ctx, rq.RMRContext)
	require.Equal(t, win, rq.LMRTriplet)
	requireCode(t, s.lmr.Free(), InvalidState|InvalidStateLMRInUse, "an RMR is bound to it")

	copy(c.lmr.Bytes(), "through the window")
	remote := RMRTriplet{VirtualAddress: win.VirtualAddress, SegmentLength: 256, RMRContext: ctx}
	require.NoError(t, c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(0, 18)}, 1, remote, 0))
	require.Equal(t, DTOSuccess, waitDTO(t, c.req).Status)
	requireLanded(t, p.ia, []byte("through the window"), s.lmr.Bytes()[8192:8192+18], "RDMA write through the window")

	// (Soft-RoCE checks RDMA through a window against the whole memory
	// region rather than the window, so accesses outside the window are not
	// tested here.)

	// Unbind: a triplet of length zero.
	_, err = rmr.Bind(nil, LMRTriplet{}, 0, VATypeVA, s.ep, 78, 0)
	require.NoError(t, err)
	ev = waitEvent(t, s.req)
	require.Equal(t, EventRMRBindCompletion, ev.Number)
	require.Equal(t, uint64(78), ev.RMR.Cookie)
	require.NoError(t, s.lmr.Free(), "no RMR is bound to the LMR any more")

	_, err = rmr.Bind(c.lmr, c.lmr.Triplet(len(c.lmr.Bytes())-8, 16), MemPrivRemoteRead, VATypeVA, c.ep, 1, 0)
	requireCode(t, err, InvalidParameter|InvalidArg3)
	_, err = rmr.Bind(c.lmr, c.lmr.Triplet(0, 16), MemPrivRemoteRead, VATypeZB, c.ep, 1, 0)
	requireCode(t, err, InvalidParameter|InvalidArg5)
	require.NoError(t, rmr.Free())
	requireCode(t, rmr.Free(), InvalidHandle|InvalidHandleRMR)
}

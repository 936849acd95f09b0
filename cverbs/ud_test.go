//go:build linux && cgo

package cverbs

// Device tests of ud.go: a UD QP pair whose peers are resolved through
// rdma_cm's RDMA_PS_UDP port space (SIDR), datagrams both ways with the GRH
// and the sender's QP, and address handles.

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newUDEnd makes an end with a UD QP in RTS.
func (r *rig) newUDEnd(t testing.TB) *end {
	t.Helper()
	e := r.newEnd(t, endOpts{})
	qp, err := r.pd.NewUDQP(e.initAttr(nil))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, qp.Close()) })
	require.NoError(t, qp.ToRTSUD(r.port, UDPQKey))
	st, err := qp.State()
	require.NoError(t, err)
	require.Equal(t, QPRTS, st)
	e.qp = qp
	return e
}

func TestUDSIDRAndDatagrams(t *testing.T) {
	r := newRig(t)
	r.skipIfIWARP(t, "no UD QPs and no SIDR (RDMA_PS_UDP)")
	ctx := context.Background()
	sch, cch := newChannel(t), newChannel(t)
	listen, err := sch.CreateUDID()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, listen.Close()) })
	lap := netip.AddrPortFrom(netip.MustParseAddr(testIP), 7471)
	require.NoError(t, listen.BindAddr(lap))
	require.NoError(t, listen.Listen(8))
	a, b := r.newUDEnd(t), r.newUDEnd(t)

	cid, err := cch.CreateUDID()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cid.Close()) })
	require.NoError(t, resolve(ctx, cch, cid, netip.AddrPortFrom(lap.Addr(), 0), lap))
	require.NoError(t, cid.Connect(ConnParam{PrivateData: []byte("sidr req"), QPNum: a.qp.Num()}))
	req, err := expectEvent(ctx, sch, CMEventConnectRequest)
	require.NoError(t, err)
	require.True(t, req.UD)
	require.Equal(t, "sidr req", string(req.PrivateData[:8]))
	t.Cleanup(func() { assert.NoError(t, req.ID.Close()) })
	require.NoError(t, req.ID.Accept(ConnParam{PrivateData: []byte("sidr rep"), QPNum: b.qp.Num()}))
	est, err := expectEvent(ctx, cch, CMEventEstablished)
	require.NoError(t, err)
	require.True(t, est.UD)
	require.Equal(t, b.qp.Num(), est.QPNum, "SIDR tells the active side the passive QP")
	require.Equal(t, uint32(UDPQKey), est.QKey)
	require.Equal(t, "sidr rep", string(est.PrivateData[:8]))
	require.True(t, est.AHAttr.IsGlobal, "RoCE needs a GRH")
	require.Equal(t, r.gid, est.AHAttr.GRH.DGID)

	toB, err := r.pd.CreateAH(est.AHAttr)
	require.NoError(t, err)
	toA, err := r.pd.CreateAH(AHAttr{PortNum: r.port, IsGlobal: true,
		GRH: GlobalRoute{DGID: r.gid, SGIDIndex: uint8(r.gidIdx), HopLimit: 64}})
	require.NoError(t, err)

	for _, dir := range []struct {
		from, to *end
		ah       *AH
	}{{a, b, toB}, {b, a, toA}} {
		copy(dir.from.buf.b, "a datagram")
		_, err := dir.to.qp.PostRecv([]RecvWR{{ID: 1, SGL: []SGE{dir.to.buf.sge(4096, GRHSize+10)}}})
		require.NoError(t, err)
		_, err = dir.from.qp.PostSend([]SendWR{{ID: 2, Op: OpSend, Flags: SendSignaled, SGL: []SGE{dir.from.buf.sge(0, 10)},
			AH: dir.ah, RemoteQPN: dir.to.qp.Num(), RemoteQKey: UDPQKey}})
		require.NoError(t, err)
		mustPollOK(t, dir.from.scq, 1, WCSend)
		wcs := mustPollOK(t, dir.to.rcq, 1, WCRecv)
		require.Equal(t, uint32(GRHSize+10), wcs[0].ByteLen)
		require.Equal(t, dir.from.qp.Num(), wcs[0].SrcQP)
		require.Equal(t, "a datagram", string(dir.to.buf.b[4096+GRHSize:4096+GRHSize+10]))
	}

	// A destroyed AH is refused before anything is posted.
	require.NoError(t, toB.Close())
	require.NoError(t, toB.Close(), "closing twice does nothing")
	_, err = a.qp.PostSend([]SendWR{{ID: 3, Op: OpSend, Flags: SendSignaled, AH: toB, RemoteQPN: b.qp.Num(), RemoteQKey: UDPQKey}})
	require.True(t, errors.Is(err, ErrClosed), "err %v", err)
	requireQuiet(t, a.scq, 50*time.Millisecond)

	// A UD QP takes only sends, each with an address handle: without one
	// the provider would follow a null pointer. An RC QP takes none.
	for _, wr := range []SendWR{
		{ID: 4, Op: OpSend, Flags: SendSignaled, RemoteQPN: b.qp.Num(), RemoteQKey: UDPQKey},
		{ID: 5, Op: OpRDMAWrite, Flags: SendSignaled},
		{ID: 6, Op: OpRDMAWrite, Flags: SendSignaled, AH: toA, RemoteQPN: b.qp.Num(), RemoteQKey: UDPQKey},
	} {
		_, err = a.qp.PostSend([]SendWR{wr})
		require.True(t, errors.Is(err, syscall.EINVAL), "wr %d: err %v", wr.ID, err)
	}
	sb, err := a.qp.BeginSend()
	require.NoError(t, err)
	require.True(t, errors.Is(sb.SetOne(0, 7, OpSend, SendSignaled, nil, 0, 0, 0), syscall.EINVAL), "SetOne has no address handle")
	sb.Cancel()
	requireQuiet(t, a.scq, 50*time.Millisecond)
	rc := r.newQPEnd(t, endOpts{})
	_, err = rc.qp.PostSend([]SendWR{{ID: 8, Op: OpSend, Flags: SendSignaled, AH: toA, RemoteQPN: b.qp.Num(), RemoteQKey: UDPQKey}})
	require.True(t, errors.Is(err, syscall.EINVAL), "an RC QP refuses an address handle: err %v", err)
	require.NoError(t, toA.Close())
	var nilAH *AH
	require.NoError(t, nilAH.Close())
}

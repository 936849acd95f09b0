//go:build !linux || !cgo

package cverbs

// Host tests of the build without RDMA support (cverbs_other.go).

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireUnsupported checks that err is an *OpError naming op that wraps
// ErrUnsupported and errors.ErrUnsupported.
func requireUnsupported(t *testing.T, err error, op string) {
	t.Helper()
	var oe *OpError
	require.ErrorAs(t, err, &oe, "want *OpError, got %T %v", err, err)
	assert.Equal(t, op, oe.Op)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// Nothing can be opened or created.
func TestOtherNothingOpens(t *testing.T) {
	devs, err := Devices()
	requireUnsupported(t, err, "ibv_get_device_list")
	assert.Nil(t, devs)
	c, err := Open("rxe0")
	requireUnsupported(t, err, "ibv_open_device")
	assert.Nil(t, c)
	ch, err := NewEventChannel()
	requireUnsupported(t, err, "rdma_create_event_channel")
	assert.Nil(t, ch)
}

// Every method fails cleanly on nil and zero-value handles: verbs with
// ErrUnsupported, Close with nil, accessors with zero values.
func TestOtherHandles(t *testing.T) {
	for _, h := range []struct {
		c   *Context
		pd  *PD
		mr  *MR
		mw  *MW
		ch  *CompChannel
		cq  *CQ
		qp  *QP
		srq *SRQ
		ech *EventChannel
		id  *CMID
	}{
		{}, // nil handles
		{&Context{}, &PD{}, &MR{}, &MW{}, &CompChannel{}, &CQ{}, &QP{}, &SRQ{}, &EventChannel{}, &CMID{}},
	} {
		for _, cl := range []interface{ Close() error }{h.c, h.pd, h.mr, h.mw, h.ch, h.cq, h.qp, h.srq, h.ech, h.id} {
			require.NoError(t, cl.Close())
		}
		ctx := context.Background()
		ap := netip.MustParseAddrPort("192.0.2.1:7471")
		for op, call := range map[string]func() error{
			"ibv_query_device":             func() error { _, err := h.c.QueryDevice(); return err },
			"ibv_query_port":               func() error { _, err := h.c.QueryPort(1); return err },
			"ibv_query_gid":                func() error { _, err := h.c.QueryGID(1, 0); return err },
			"ibv_query_gid_ex":             func() error { _, err := h.c.QueryGIDEntry(1, 0); return err },
			"netdev":                       func() error { _, err := h.c.NetDev(1); return err },
			"ibv_get_async_event":          func() error { _, err := h.c.WaitAsyncEvent(ctx); return err },
			"ibv_alloc_pd":                 func() error { _, err := h.c.AllocPD(); return err },
			"ibv_create_comp_channel":      func() error { _, err := h.c.NewCompChannel(); return err },
			"ibv_create_cq":                func() error { _, err := h.c.NewCQ(16, h.ch); return err },
			"ibv_reg_mr":                   func() error { _, err := h.pd.RegMR(nil, 0, AccessLocalWrite); return err },
			"ibv_alloc_mw":                 func() error { _, err := h.pd.AllocMW(); return err },
			"ibv_create_qp":                func() error { _, err := h.pd.NewQP(QPInitAttr{SendCQ: h.cq}); return err },
			"ibv_create_srq":               func() error { _, err := h.pd.NewSRQ(SRQInitAttr{MaxWR: 4}); return err },
			"ibv_get_cq_event":             func() error { _, err := h.ch.Wait(ctx); return err },
			"ibv_resize_cq":                func() error { return h.cq.Resize(8) },
			"ibv_req_notify_cq":            func() error { return h.cq.ReqNotify(false) },
			"ibv_poll_cq":                  func() error { _, err := h.cq.Poll(make([]WC, 4)); return err },
			"ibv_post_send":                func() error { _, err := h.qp.PostSend([]SendWR{{}}); return err },
			"ibv_post_recv":                func() error { _, err := h.qp.PostRecv([]RecvWR{{}}); return err },
			"ibv_bind_mw":                  func() error { _, err := h.qp.BindMW(h.mw, h.mr, 0, 0, 0, 0); return err },
			"ibv_query_qp":                 func() error { _, err := h.qp.State(); return err },
			"ibv_modify_qp(INIT)":          func() error { return h.qp.ToInit(1, 0) },
			"ibv_modify_qp(RTR)":           func() error { return h.qp.ToRTR(RTRAttr{MTU: 1024}) },
			"ibv_modify_qp(RTS)":           func() error { return h.qp.ToRTS(RTSAttr{}) },
			"ibv_modify_qp(ERR)":           func() error { return h.qp.ToError() },
			"ibv_modify_qp(RESET)":         func() error { return h.qp.ToReset() },
			"ibv_post_srq_recv":            func() error { _, err := h.srq.PostRecv([]RecvWR{{}}); return err },
			"ibv_modify_srq(MAX_WR)":       func() error { return h.srq.Resize(8) },
			"ibv_modify_srq(LIMIT)":        func() error { return h.srq.SetLimit(1) },
			"ibv_query_srq":                func() error { _, err := h.srq.Query(); return err },
			"rdma_get_cm_event":            func() error { _, err := h.ech.GetEvent(ctx); return err },
			"rdma_create_id":               func() error { _, err := h.ech.CreateID(); return err },
			"rdma_bind_addr":               func() error { return h.id.BindAddr(ap) },
			"rdma_listen":                  func() error { return h.id.Listen(1) },
			"rdma_resolve_addr":            func() error { return h.id.ResolveAddr(netip.AddrPort{}, ap, 0) },
			"rdma_resolve_route":           func() error { return h.id.ResolveRoute(0) },
			"rdma_set_option(ACK_TIMEOUT)": func() error { return h.id.SetACKTimeout(14) },
			"rdma_create_qp":               func() error { _, err := h.id.NewQP(h.pd, QPInitAttr{SendCQ: h.cq}); return err },
			"rdma_connect":                 func() error { return h.id.Connect(ConnParam{}) },
			"rdma_accept":                  func() error { return h.id.Accept(ConnParam{}) },
			"rdma_reject":                  func() error { return h.id.Reject(nil) },
			"rdma_disconnect":              func() error { return h.id.Disconnect() },
			"rdma_migrate_id":              func() error { return h.id.Migrate(h.ech) },
			"rdma_init_qp_attr":            func() error { return h.id.ModifyQP(h.qp, QPInit) },
			"rdma_establish":               func() error { return h.id.Establish() },
		} {
			requireUnsupported(t, call(), op)
		}
		assert.Equal(t, "", h.c.Name())
		assert.Nil(t, h.pd.Context())
		assert.Zero(t, h.cq.CQE())
		assert.Zero(t, h.qp.Num())
		assert.Equal(t, QPCap{}, h.qp.Cap())
		assert.Nil(t, h.qp.SRQ())
		assert.Equal(t, netip.AddrPort{}, h.id.LocalAddr())
		assert.Equal(t, netip.AddrPort{}, h.id.PeerAddr())
		assert.Equal(t, "", h.id.DeviceName())
		assert.Zero(t, h.id.PortNum())
		assert.Nil(t, h.id.QP())
	}
}

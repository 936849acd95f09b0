//go:build !linux || !cgo

package cverbs

// Without Linux and cgo there are no verbs: this file gives the package the
// API of its cgo files, where each function and method is documented, with
// every verb failing with an *OpError that wraps ErrUnsupported (and so
// errors.ErrUnsupported). Nothing can be opened or created, so every handle
// is nil or a zero value: Close succeeds and the accessors return zero
// values, as they do in the cgo build for a closed object.
//
// A function or method added to the cgo files gets its one-line stub here,
// under a doc line that says what it does in this build; a type, field or
// constant goes in the untagged *_types.go files, shared by both builds.
// TestAPIParity checks that the two builds export the same functions and
// methods.

import (
	"context"
	"net/netip"
	"time"
	"unsafe"
)

// unsupported is the error of verb op in this build.
func unsupported(op string) error { return &OpError{Op: op, Err: ErrUnsupported} }

// The cgo state of the handle types: none in this build. The shared
// *_types.go files hold a field of each, which only the cgo build uses.
// (staticcheck's line directive would cover one type, hence file-ignore.)
//
//lint:file-ignore U1000 the shared handle types need these types to compile
type (
	cgoContext      struct{}
	cgoPD           struct{}
	cgoMR           struct{}
	cgoMW           struct{}
	cgoCompChannel  struct{}
	cgoCQ           struct{}
	cgoQP           struct{}
	cgoSRQ          struct{}
	cgoEventChannel struct{}
	cgoCMID         struct{}
	cgoAH           struct{}
)

// device.go

// Devices fails with ErrUnsupported in this build.
func Devices() ([]DeviceInfo, error) { return nil, unsupported("ibv_get_device_list") }

// Open fails with ErrUnsupported in this build.
func Open(name string) (*Context, error) { return nil, unsupported("ibv_open_device") }

// Name returns "" in this build.
func (c *Context) Name() string { return "" }

// Close does nothing in this build and returns nil: nothing was opened.
func (c *Context) Close() error { return nil }

// QueryDevice fails with ErrUnsupported in this build.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	return DeviceAttr{}, unsupported("ibv_query_device")
}

// QueryPort fails with ErrUnsupported in this build.
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	return PortAttr{}, unsupported("ibv_query_port")
}

// QueryGID fails with ErrUnsupported in this build.
func (c *Context) QueryGID(port uint8, index int) ([16]byte, error) {
	return [16]byte{}, unsupported("ibv_query_gid")
}

// QueryGIDEntry fails with ErrUnsupported in this build.
func (c *Context) QueryGIDEntry(port uint8, index int) (GIDEntry, error) {
	return GIDEntry{}, unsupported("ibv_query_gid_ex")
}

// NetDev fails with ErrUnsupported in this build.
func (c *Context) NetDev(port uint8) (string, error) { return "", unsupported("netdev") }

// WaitAsyncEvent fails with ErrUnsupported in this build.
func (c *Context) WaitAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	return AsyncEvent{}, unsupported("ibv_get_async_event")
}

// ServeAsync fails with ErrUnsupported in this build.
func (c *Context) ServeAsync(ctx context.Context, handle func(AsyncEvent)) error {
	return unsupported("ibv_get_async_event")
}

// DrainAsync fails with ErrUnsupported in this build.
func (c *Context) DrainAsync(handle func(AsyncEvent)) error {
	return unsupported("ibv_get_async_event")
}

// pd.go

// AllocPD fails with ErrUnsupported in this build.
func (c *Context) AllocPD() (*PD, error) { return nil, unsupported("ibv_alloc_pd") }

// Context returns nil in this build.
func (pd *PD) Context() *Context { return nil }

// Close does nothing in this build and returns nil: nothing was opened.
func (pd *PD) Close() error { return nil }

// RegMR fails with ErrUnsupported in this build.
func (pd *PD) RegMR(addr unsafe.Pointer, length int, access Access) (*MR, error) {
	return nil, unsupported("ibv_reg_mr")
}

// Close does nothing in this build and returns nil: nothing was opened.
func (mr *MR) Close() error { return nil }

// AllocMW fails with ErrUnsupported in this build.
func (pd *PD) AllocMW() (*MW, error) { return nil, unsupported("ibv_alloc_mw") }

// Close does nothing in this build and returns nil: nothing was opened.
func (mw *MW) Close() error { return nil }

// BindMW fails with ErrUnsupported in this build.
func (qp *QP) BindMW(mw *MW, mr *MR, addr uint64, length uint64, access Access, wrID uint64) (rkey uint32, err error) {
	return 0, unsupported("ibv_bind_mw")
}

// cq.go

// NewCompChannel fails with ErrUnsupported in this build.
func (c *Context) NewCompChannel() (*CompChannel, error) {
	return nil, unsupported("ibv_create_comp_channel")
}

// Close does nothing in this build and returns nil: nothing was opened.
func (ch *CompChannel) Close() error { return nil }

// Wait fails with ErrUnsupported in this build.
func (ch *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}

// WaitBlocking fails with ErrUnsupported in this build.
func (ch *CompChannel) WaitBlocking(ctx context.Context) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}

// WaitBlockingUntil fails with ErrUnsupported in this build.
func (ch *CompChannel) WaitBlockingUntil(ctx context.Context, deadline time.Time) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}

// Interrupt does nothing in this build.
func (ch *CompChannel) Interrupt() {}

// NewCQ fails with ErrUnsupported in this build.
func (c *Context) NewCQ(cqe int, ch *CompChannel) (*CQ, error) {
	return nil, unsupported("ibv_create_cq")
}

// CQE returns 0 in this build.
func (cq *CQ) CQE() int { return 0 }

// Close does nothing in this build and returns nil: nothing was opened.
func (cq *CQ) Close() error { return nil }

// Resize fails with ErrUnsupported in this build.
func (cq *CQ) Resize(cqe int) error { return unsupported("ibv_resize_cq") }

// ReqNotify fails with ErrUnsupported in this build.
func (cq *CQ) ReqNotify(solicitedOnly bool) error { return unsupported("ibv_req_notify_cq") }

// Poll fails with ErrUnsupported in this build.
func (cq *CQ) Poll(wc []WC) (int, error) { return 0, unsupported("ibv_poll_cq") }

// PollSerial fails with ErrUnsupported in this build, as Poll does.
func (cq *CQ) PollSerial(wc []WC) (int, error) { return cq.Poll(wc) }

// PollArm fails with ErrUnsupported in this build.
func (cq *CQ) PollArm(wc []WC, need int, solicitedOnly bool) (int, bool, error) {
	return 0, false, unsupported("ibv_poll_cq")
}

// post.go

// PostSend fails with ErrUnsupported in this build.
func (qp *QP) PostSend(wrs []SendWR) (n int, err error) { return 0, unsupported("ibv_post_send") }

// PostRecv fails with ErrUnsupported in this build.
func (qp *QP) PostRecv(wrs []RecvWR) (n int, err error) { return 0, unsupported("ibv_post_recv") }

// PostRecv fails with ErrUnsupported in this build.
func (srq *SRQ) PostRecv(wrs []RecvWR) (n int, err error) { return 0, unsupported("ibv_post_srq_recv") }

// BeginSend fails with ErrUnsupported in this build.
func (qp *QP) BeginSend() (SendBatch, error) { return SendBatch{}, unsupported("ibv_post_send") }

// PostSendOne fails with ErrUnsupported in this build.
func (qp *QP) PostSendOne(id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	return unsupported("ibv_post_send")
}

// Cap returns 0 in this build.
func (b SendBatch) Cap() int { return 0 }

// SGL returns nil in this build.
func (b SendBatch) SGL(i int) []SGE { return nil }

// Set fails with ErrUnsupported in this build.
func (b SendBatch) Set(i int, wr *SendWR) error { return unsupported("ibv_post_send") }

// SetOne fails with ErrUnsupported in this build.
func (b SendBatch) SetOne(i int, id uint64, op SendOp, flags SendFlags, sgl []SGE, remoteAddr uint64, rkey, imm uint32) error {
	return unsupported("ibv_post_send")
}

// SetSGE fails with ErrUnsupported in this build.
func (b SendBatch) SetSGE(i int, id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	return unsupported("ibv_post_send")
}

// Post fails with ErrUnsupported in this build.
func (b SendBatch) Post(n int) (int, error) { return 0, unsupported("ibv_post_send") }

// Cancel does nothing in this build.
func (b SendBatch) Cancel() {}

// BeginRecv fails with ErrUnsupported in this build.
func (qp *QP) BeginRecv() (RecvBatch, error) { return RecvBatch{}, unsupported("ibv_post_recv") }

// BeginRecv fails with ErrUnsupported in this build.
func (srq *SRQ) BeginRecv() (RecvBatch, error) { return RecvBatch{}, unsupported("ibv_post_srq_recv") }

// Cap returns 0 in this build.
func (b RecvBatch) Cap() int { return 0 }

// SGL returns nil in this build.
func (b RecvBatch) SGL(i int) []SGE { return nil }

// Set fails with ErrUnsupported in this build.
func (b RecvBatch) Set(i int, wr *RecvWR) error { return unsupported("ibv_post_recv") }

// Post fails with ErrUnsupported in this build.
func (b RecvBatch) Post(n int) (int, error) { return 0, unsupported("ibv_post_recv") }

// Cancel does nothing in this build.
func (b RecvBatch) Cancel() {}

// PostRecvOne fails with ErrUnsupported in this build.
func (qp *QP) PostRecvOne(id uint64, sge SGE) error { return unsupported("ibv_post_recv") }

// qp.go

// NewQP fails with ErrUnsupported in this build.
func (pd *PD) NewQP(attr QPInitAttr) (*QP, error) { return nil, unsupported("ibv_create_qp") }

// Num returns 0 in this build.
func (qp *QP) Num() uint32 { return 0 }

// Direct returns false in this build.
func (qp *QP) Direct() bool { return false }

// Direct returns false in this build.
func (srq *SRQ) Direct() bool { return false }

// Direct returns false in this build.
func (cq *CQ) Direct() bool { return false }

// Cap returns a zero QPCap in this build.
func (qp *QP) Cap() QPCap { return QPCap{} }

// SRQ returns nil in this build.
func (qp *QP) SRQ() *SRQ { return nil }

// Close does nothing in this build and returns nil: nothing was opened.
func (qp *QP) Close() error { return nil }

// State fails with ErrUnsupported in this build.
func (qp *QP) State() (QPState, error) { return 0, unsupported("ibv_query_qp") }

// QueryRTS fails with ErrUnsupported in this build.
func (qp *QP) QueryRTS() (RTSAttr, error) { return RTSAttr{}, unsupported("ibv_query_qp") }

// ToInit fails with ErrUnsupported in this build.
func (qp *QP) ToInit(port uint8, access Access) error { return unsupported("ibv_modify_qp(INIT)") }

// ToRTR fails with ErrUnsupported in this build.
func (qp *QP) ToRTR(a RTRAttr) error { return unsupported("ibv_modify_qp(RTR)") }

// ToRTS fails with ErrUnsupported in this build.
func (qp *QP) ToRTS(a RTSAttr) error { return unsupported("ibv_modify_qp(RTS)") }

// ToError fails with ErrUnsupported in this build.
func (qp *QP) ToError() error { return unsupported("ibv_modify_qp(ERR)") }

// ToReset fails with ErrUnsupported in this build.
func (qp *QP) ToReset() error { return unsupported("ibv_modify_qp(RESET)") }

// srq.go

// NewSRQ fails with ErrUnsupported in this build.
func (pd *PD) NewSRQ(a SRQInitAttr) (*SRQ, error) { return nil, unsupported("ibv_create_srq") }

// Resize fails with ErrUnsupported in this build.
func (srq *SRQ) Resize(maxWR int) error { return unsupported("ibv_modify_srq(MAX_WR)") }

// SetLimit fails with ErrUnsupported in this build.
func (srq *SRQ) SetLimit(limit int) error { return unsupported("ibv_modify_srq(LIMIT)") }

// Query fails with ErrUnsupported in this build.
func (srq *SRQ) Query() (SRQAttr, error) { return SRQAttr{}, unsupported("ibv_query_srq") }

// Close does nothing in this build and returns nil: nothing was opened.
func (srq *SRQ) Close() error { return nil }

// cm.go and cmext.go

// NewEventChannel fails with ErrUnsupported in this build.
func NewEventChannel() (*EventChannel, error) { return nil, unsupported("rdma_create_event_channel") }

// Close does nothing in this build and returns nil: nothing was opened.
func (ch *EventChannel) Close() error { return nil }

// GetEvent fails with ErrUnsupported in this build.
func (ch *EventChannel) GetEvent(ctx context.Context) (CMEvent, error) {
	return CMEvent{}, unsupported("rdma_get_cm_event")
}

// CreateID fails with ErrUnsupported in this build.
func (ch *EventChannel) CreateID() (*CMID, error) { return nil, unsupported("rdma_create_id") }

// CreateIDForQP fails with ErrUnsupported in this build.
func (ch *EventChannel) CreateIDForQP(addr netip.AddrPort, ackTimeout uint8, qp *QP) (*CMID, error) {
	return nil, unsupported("rdma_create_id")
}

// Close does nothing in this build and returns nil: nothing was opened.
func (id *CMID) Close() error { return nil }

// BindAddr fails with ErrUnsupported in this build.
func (id *CMID) BindAddr(addr netip.AddrPort) error { return unsupported("rdma_bind_addr") }

// Listen fails with ErrUnsupported in this build.
func (id *CMID) Listen(backlog int) error { return unsupported("rdma_listen") }

// LocalAddr returns a zero netip.AddrPort in this build.
func (id *CMID) LocalAddr() netip.AddrPort { return netip.AddrPort{} }

// PeerAddr returns a zero netip.AddrPort in this build.
func (id *CMID) PeerAddr() netip.AddrPort { return netip.AddrPort{} }

// ResolveAddr fails with ErrUnsupported in this build.
func (id *CMID) ResolveAddr(src, dst netip.AddrPort, timeout time.Duration) error {
	return unsupported("rdma_resolve_addr")
}

// ResolveRoute fails with ErrUnsupported in this build.
func (id *CMID) ResolveRoute(timeout time.Duration) error { return unsupported("rdma_resolve_route") }

// SetACKTimeout fails with ErrUnsupported in this build.
func (id *CMID) SetACKTimeout(timeout uint8) error {
	return unsupported("rdma_set_option(ACK_TIMEOUT)")
}

// DeviceName returns "" in this build.
func (id *CMID) DeviceName() string { return "" }

// PortNum returns 0 in this build.
func (id *CMID) PortNum() uint8 { return 0 }

// QP returns nil in this build.
func (id *CMID) QP() *QP { return nil }

// NewQP fails with ErrUnsupported in this build.
func (id *CMID) NewQP(pd *PD, attr QPInitAttr) (*QP, error) {
	return nil, unsupported("rdma_create_qp")
}

// Connect fails with ErrUnsupported in this build.
func (id *CMID) Connect(p ConnParam) error { return unsupported("rdma_connect") }

// Accept fails with ErrUnsupported in this build.
func (id *CMID) Accept(p ConnParam) error { return unsupported("rdma_accept") }

// Reject fails with ErrUnsupported in this build.
func (id *CMID) Reject(privateData []byte) error { return unsupported("rdma_reject") }

// Disconnect fails with ErrUnsupported in this build.
func (id *CMID) Disconnect() error { return unsupported("rdma_disconnect") }

// Migrate fails with ErrUnsupported in this build.
func (id *CMID) Migrate(ch *EventChannel) error { return unsupported("rdma_migrate_id") }

// ModifyQP fails with ErrUnsupported in this build.
func (id *CMID) ModifyQP(qp *QP, state QPState) error { return unsupported("rdma_init_qp_attr") }

// Establish fails with ErrUnsupported in this build.
func (id *CMID) Establish() error { return unsupported("rdma_establish") }

// ud.go

// CreateUDID fails with ErrUnsupported in this build.
func (ch *EventChannel) CreateUDID() (*CMID, error) {
	return nil, unsupported("rdma_create_id(RDMA_PS_UDP)")
}

// NewUDQP fails with ErrUnsupported in this build.
func (pd *PD) NewUDQP(attr QPInitAttr) (*QP, error) { return nil, unsupported("ibv_create_qp(UD)") }

// ToRTSUD fails with ErrUnsupported in this build.
func (qp *QP) ToRTSUD(port uint8, qkey uint32) error { return unsupported("ibv_modify_qp(UD RTS)") }

// CreateAH fails with ErrUnsupported in this build.
func (pd *PD) CreateAH(attr AHAttr) (*AH, error) { return nil, unsupported("ibv_create_ah") }

// Close does nothing in this build and returns nil: nothing was opened.
func (ah *AH) Close() error { return nil }

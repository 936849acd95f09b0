//go:build !linux || !cgo

package cverbs

// Without Linux and cgo there are no verbs: this file gives the package the
// API of its cgo files, where each function and method is documented, with
// every verb failing with an *OpError that wraps ErrUnsupported (and so
// errors.ErrUnsupported). Nothing can be opened or created, so every handle
// is nil or a zero value: Close succeeds and the accessors return zero
// values, as they do in the cgo build for a closed object.
//
// A function or method added to the cgo files gets its one-line stub here;
// a type, field or constant goes in the untagged *_types.go files, shared by
// both builds. TestAPIParity checks that the two builds export the same
// functions and methods.

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

func Devices() ([]DeviceInfo, error)     { return nil, unsupported("ibv_get_device_list") }
func Open(name string) (*Context, error) { return nil, unsupported("ibv_open_device") }
func (c *Context) Name() string          { return "" }
func (c *Context) Close() error          { return nil }
func (c *Context) QueryDevice() (DeviceAttr, error) {
	return DeviceAttr{}, unsupported("ibv_query_device")
}
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	return PortAttr{}, unsupported("ibv_query_port")
}
func (c *Context) QueryGID(port uint8, index int) ([16]byte, error) {
	return [16]byte{}, unsupported("ibv_query_gid")
}
func (c *Context) QueryGIDEntry(port uint8, index int) (GIDEntry, error) {
	return GIDEntry{}, unsupported("ibv_query_gid_ex")
}
func (c *Context) NetDev(port uint8) (string, error) { return "", unsupported("netdev") }
func (c *Context) WaitAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	return AsyncEvent{}, unsupported("ibv_get_async_event")
}

// pd.go

func (c *Context) AllocPD() (*PD, error) { return nil, unsupported("ibv_alloc_pd") }
func (pd *PD) Context() *Context         { return nil }
func (pd *PD) Close() error              { return nil }
func (pd *PD) RegMR(addr unsafe.Pointer, length int, access Access) (*MR, error) {
	return nil, unsupported("ibv_reg_mr")
}
func (mr *MR) Close() error          { return nil }
func (pd *PD) AllocMW() (*MW, error) { return nil, unsupported("ibv_alloc_mw") }
func (mw *MW) Close() error          { return nil }
func (qp *QP) BindMW(mw *MW, mr *MR, addr uint64, length uint64, access Access, wrID uint64) (rkey uint32, err error) {
	return 0, unsupported("ibv_bind_mw")
}

// cq.go

func (c *Context) NewCompChannel() (*CompChannel, error) {
	return nil, unsupported("ibv_create_comp_channel")
}
func (ch *CompChannel) Close() error { return nil }
func (ch *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}
func (ch *CompChannel) WaitBlocking(ctx context.Context) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}
func (ch *CompChannel) WaitBlockingUntil(ctx context.Context, deadline time.Time) (*CQ, error) {
	return nil, unsupported("ibv_get_cq_event")
}
func (ch *CompChannel) Interrupt() {}
func (c *Context) NewCQ(cqe int, ch *CompChannel) (*CQ, error) {
	return nil, unsupported("ibv_create_cq")
}
func (cq *CQ) CQE() int                           { return 0 }
func (cq *CQ) Close() error                       { return nil }
func (cq *CQ) Resize(cqe int) error               { return unsupported("ibv_resize_cq") }
func (cq *CQ) ReqNotify(solicitedOnly bool) error { return unsupported("ibv_req_notify_cq") }
func (cq *CQ) Poll(wc []WC) (int, error)          { return 0, unsupported("ibv_poll_cq") }
func (cq *CQ) PollSerial(wc []WC) (int, error)    { return cq.Poll(wc) }
func (cq *CQ) PollArm(wc []WC, need int, solicitedOnly bool) (int, bool, error) {
	return 0, false, unsupported("ibv_poll_cq")
}

// post.go

func (qp *QP) PostSend(wrs []SendWR) (n int, err error)   { return 0, unsupported("ibv_post_send") }
func (qp *QP) PostRecv(wrs []RecvWR) (n int, err error)   { return 0, unsupported("ibv_post_recv") }
func (srq *SRQ) PostRecv(wrs []RecvWR) (n int, err error) { return 0, unsupported("ibv_post_srq_recv") }
func (qp *QP) BeginSend() (SendBatch, error)              { return SendBatch{}, unsupported("ibv_post_send") }
func (qp *QP) PostSendOne(id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	return unsupported("ibv_post_send")
}
func (b SendBatch) Cap() int                    { return 0 }
func (b SendBatch) SGL(i int) []SGE             { return nil }
func (b SendBatch) Set(i int, wr *SendWR) error { return unsupported("ibv_post_send") }
func (b SendBatch) SetOne(i int, id uint64, op SendOp, flags SendFlags, sgl []SGE, remoteAddr uint64, rkey, imm uint32) error {
	return unsupported("ibv_post_send")
}
func (b SendBatch) SetSGE(i int, id uint64, op SendOp, flags SendFlags, sge SGE, remoteAddr uint64, rkey uint32) error {
	return unsupported("ibv_post_send")
}
func (b SendBatch) Post(n int) (int, error)         { return 0, unsupported("ibv_post_send") }
func (b SendBatch) Cancel()                         {}
func (qp *QP) BeginRecv() (RecvBatch, error)        { return RecvBatch{}, unsupported("ibv_post_recv") }
func (srq *SRQ) BeginRecv() (RecvBatch, error)      { return RecvBatch{}, unsupported("ibv_post_srq_recv") }
func (b RecvBatch) Cap() int                        { return 0 }
func (b RecvBatch) SGL(i int) []SGE                 { return nil }
func (b RecvBatch) Set(i int, wr *RecvWR) error     { return unsupported("ibv_post_recv") }
func (b RecvBatch) Post(n int) (int, error)         { return 0, unsupported("ibv_post_recv") }
func (b RecvBatch) Cancel()                         {}
func (qp *QP) PostRecvOne(id uint64, sge SGE) error { return unsupported("ibv_post_recv") }

// qp.go

func (pd *PD) NewQP(attr QPInitAttr) (*QP, error)     { return nil, unsupported("ibv_create_qp") }
func (qp *QP) Num() uint32                            { return 0 }
func (qp *QP) Direct() bool                           { return false }
func (srq *SRQ) Direct() bool                         { return false }
func (cq *CQ) Direct() bool                           { return false }
func (qp *QP) Cap() QPCap                             { return QPCap{} }
func (qp *QP) SRQ() *SRQ                              { return nil }
func (qp *QP) Close() error                           { return nil }
func (qp *QP) State() (QPState, error)                { return 0, unsupported("ibv_query_qp") }
func (qp *QP) QueryRTS() (RTSAttr, error)             { return RTSAttr{}, unsupported("ibv_query_qp") }
func (qp *QP) ToInit(port uint8, access Access) error { return unsupported("ibv_modify_qp(INIT)") }
func (qp *QP) ToRTR(a RTRAttr) error                  { return unsupported("ibv_modify_qp(RTR)") }
func (qp *QP) ToRTS(a RTSAttr) error                  { return unsupported("ibv_modify_qp(RTS)") }
func (qp *QP) ToError() error                         { return unsupported("ibv_modify_qp(ERR)") }
func (qp *QP) ToReset() error                         { return unsupported("ibv_modify_qp(RESET)") }

// srq.go

func (pd *PD) NewSRQ(a SRQInitAttr) (*SRQ, error) { return nil, unsupported("ibv_create_srq") }
func (srq *SRQ) Resize(maxWR int) error           { return unsupported("ibv_modify_srq(MAX_WR)") }
func (srq *SRQ) SetLimit(limit int) error         { return unsupported("ibv_modify_srq(LIMIT)") }
func (srq *SRQ) Query() (SRQAttr, error)          { return SRQAttr{}, unsupported("ibv_query_srq") }
func (srq *SRQ) Close() error                     { return nil }

// cm.go and cmext.go

func NewEventChannel() (*EventChannel, error) { return nil, unsupported("rdma_create_event_channel") }
func (ch *EventChannel) Close() error         { return nil }
func (ch *EventChannel) GetEvent(ctx context.Context) (CMEvent, error) {
	return CMEvent{}, unsupported("rdma_get_cm_event")
}
func (ch *EventChannel) CreateID() (*CMID, error)   { return nil, unsupported("rdma_create_id") }
func (id *CMID) Close() error                       { return nil }
func (id *CMID) BindAddr(addr netip.AddrPort) error { return unsupported("rdma_bind_addr") }
func (id *CMID) Listen(backlog int) error           { return unsupported("rdma_listen") }
func (id *CMID) LocalAddr() netip.AddrPort          { return netip.AddrPort{} }
func (id *CMID) PeerAddr() netip.AddrPort           { return netip.AddrPort{} }
func (id *CMID) ResolveAddr(src, dst netip.AddrPort, timeout time.Duration) error {
	return unsupported("rdma_resolve_addr")
}
func (id *CMID) ResolveRoute(timeout time.Duration) error { return unsupported("rdma_resolve_route") }
func (id *CMID) SetACKTimeout(timeout uint8) error {
	return unsupported("rdma_set_option(ACK_TIMEOUT)")
}
func (id *CMID) DeviceName() string { return "" }
func (id *CMID) PortNum() uint8     { return 0 }
func (id *CMID) QP() *QP            { return nil }
func (id *CMID) NewQP(pd *PD, attr QPInitAttr) (*QP, error) {
	return nil, unsupported("rdma_create_qp")
}
func (id *CMID) Connect(p ConnParam) error            { return unsupported("rdma_connect") }
func (id *CMID) Accept(p ConnParam) error             { return unsupported("rdma_accept") }
func (id *CMID) Reject(privateData []byte) error      { return unsupported("rdma_reject") }
func (id *CMID) Disconnect() error                    { return unsupported("rdma_disconnect") }
func (id *CMID) Migrate(ch *EventChannel) error       { return unsupported("rdma_migrate_id") }
func (id *CMID) ModifyQP(qp *QP, state QPState) error { return unsupported("rdma_init_qp_attr") }
func (id *CMID) Establish() error                     { return unsupported("rdma_establish") }

// ud.go

func (ch *EventChannel) CreateUDID() (*CMID, error) {
	return nil, unsupported("rdma_create_id(RDMA_PS_UDP)")
}
func (pd *PD) NewUDQP(attr QPInitAttr) (*QP, error)  { return nil, unsupported("ibv_create_qp(UD)") }
func (qp *QP) ToRTSUD(port uint8, qkey uint32) error { return unsupported("ibv_modify_qp(UD RTS)") }
func (pd *PD) CreateAH(attr AHAttr) (*AH, error)     { return nil, unsupported("ibv_create_ah") }
func (ah *AH) Close() error                          { return nil }

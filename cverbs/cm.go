//go:build linux && cgo

package cverbs

/*
#cgo noescape cverbs_resolve_addr
#cgo nocallback cverbs_resolve_addr
#cgo noescape cverbs_next_cm_event
#cgo nocallback cverbs_next_cm_event
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// cgoEventChannel is the state of an EventChannel in the cgo build.
type cgoEventChannel struct {
	mu     sync.RWMutex // shared by users of ch, exclusive in Close
	ch     *C.struct_rdma_event_channel
	w      *fdWaiter
	closed atomic.Bool
	nids   atomic.Int64 // live ids on the channel
	// ce is where next copies an event: C memory, so that no cgo
	// pointer check looks at it, used under take.
	ce *C.struct_cverbs_cm_event
	// take is held while an event is taken (GetEvent), or taken and
	// handled (Serve, Poll): whoever takes them, the events are handled
	// one at a time, in order.
	take sync.Mutex
}

// NewEventChannel creates an rdma_cm event channel.
func NewEventChannel() (*EventChannel, error) {
	const op = "rdma_create_event_channel"
	ch, err := C.rdma_create_event_channel()
	if ch == nil {
		return nil, errnoErr(op, err)
	}
	w, err := newFDWaiter(op, ch.fd, "rdma_cm")
	if err != nil {
		C.rdma_destroy_event_channel(ch)
		return nil, err
	}
	ce := (*C.struct_cverbs_cm_event)(C.calloc(1, C.sizeof_struct_cverbs_cm_event))
	if ce == nil {
		w.close()
		C.rdma_destroy_event_channel(ch)
		return nil, errnoErr(op, syscall.ENOMEM)
	}
	return &EventChannel{cgoEventChannel{ch: ch, w: w, ce: ce}}, nil
}

// Close destroys the channel, waking any GetEvent with ErrClosed. It fails
// with EBUSY, leaving the channel working, while ids (including child ids
// from connect requests) still use it: librdmacm would keep using its fd.
func (ch *EventChannel) Close() error {
	if ch == nil {
		return nil
	}
	if ch.nids.Load() > 0 {
		return opErr("rdma_destroy_event_channel", int(syscall.EBUSY))
	}
	if !ch.closed.Swap(true) {
		ch.w.close() // before the channel's own fd goes away
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.ch == nil {
		return nil
	}
	C.rdma_destroy_event_channel(ch.ch)
	ch.ch = nil
	C.free(unsafe.Pointer(ch.ce))
	ch.ce = nil
	return nil
}

func (ch *EventChannel) lock(op string) (*C.struct_rdma_event_channel, error) {
	if ch == nil {
		return nil, closedErr(op)
	}
	ch.mu.RLock()
	if ch.ch == nil || ch.closed.Load() {
		ch.mu.RUnlock()
		return nil, closedErr(op)
	}
	return ch.ch, nil
}

// GetEvent waits through the netpoller for the next event on the channel,
// copies it, acknowledges it (rdma_ack_cm_event) and returns the copy. It
// returns ctx.Err() when ctx ends first.
func (ch *EventChannel) GetEvent(ctx context.Context) (CMEvent, error) {
	const op = "rdma_get_cm_event"
	cch, err := ch.lock(op)
	if err != nil {
		return CMEvent{}, err
	}
	defer ch.mu.RUnlock()
	var ev CMEvent
	var evErr error
	err = ch.w.wait(ctx, op, func() bool {
		ch.take.Lock()
		ok, err := ch.next(cch, &ev)
		ch.take.Unlock()
		evErr = err
		return ok || err != nil
	})
	if err != nil {
		return CMEvent{}, err
	}
	return ev, evErr
}

// Serve hands every event of the channel to handle, in order, until ctx
// ends (it returns ctx.Err()), the channel is closed (ErrClosed) or an
// event cannot be taken (its error; the event is lost, as with GetEvent).
// It is GetEvent in a loop without the loop's costs: the wait is set up
// once (its turn, deadline and watch on ctx), not for every event, and
// nothing is allocated per event but its private data. handle runs
// outside the channel's lock, so it may create, use and close ids.
func (ch *EventChannel) Serve(ctx context.Context, handle func(CMEvent)) error {
	const op = "rdma_get_cm_event"
	if ch == nil {
		return closedErr(op)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	w := ch.w
	release, err := w.begin(ctx, op)
	if err != nil {
		return err
	}
	defer w.end(release)
	var (
		cch   *C.struct_rdma_event_channel
		ev    CMEvent
		got   bool
		evErr error
	)
	// take is held from the event's taking to the end of its handling.
	try := func(uintptr) bool {
		ch.take.Lock()
		got, evErr = ch.next(cch, &ev)
		if !got {
			ch.take.Unlock()
		}
		return got || evErr != nil
	}
	for {
		var err error
		if cch, err = ch.lock(op); err != nil {
			return err
		}
		err = w.rc.Read(try)
		ch.mu.RUnlock()
		if err != nil {
			return w.mapErr(ctx, op, err)
		}
		if !got {
			return evErr
		}
		handle(ev)
		ch.take.Unlock()
		ev = CMEvent{}
		if evErr != nil {
			return evErr // its ack failed: the channel is not sound
		}
	}
}

// Poll hands the events already on the channel to handle, in order,
// without waiting, in the caller's goroutine, and returns how many it
// handled. A goroutine that polls for them without blocking needs then no
// other goroutine to run (Serve's, which the runtime wakes only when it
// polls the network: with every P busy polling, as late as the scheduler
// preempts one). It returns 0 at once when another goroutine is taking
// events (Serve or Poll), which handles them, and when the channel is
// closed or an event cannot be taken (Serve then returns that error).
func (ch *EventChannel) Poll(handle func(CMEvent)) int {
	if ch == nil || !ch.take.TryLock() {
		return 0
	}
	defer ch.take.Unlock()
	for n := 0; ; n++ {
		// Not RLock: Serve may hold the read lock while it waits for
		// take, and a Close waiting for the lock would hold up RLock.
		if !ch.mu.TryRLock() {
			return n
		}
		if ch.ch == nil || ch.closed.Load() {
			ch.mu.RUnlock()
			return n
		}
		var ev CMEvent
		ok, err := ch.next(ch.ch, &ev)
		ch.mu.RUnlock()
		if !ok {
			return n
		}
		handle(ev)
		if err != nil {
			return n + 1
		}
	}
}

// next takes the next event of the channel, acknowledged, into ev: ok is
// false when there is none (EAGAIN, err nil) or when it could not be
// taken (err); with ok, err is set when its ack failed. An event of an id
// closed after the event was taken is skipped. Caller holds ch.mu (read)
// and take, which the event buffer goes with.
func (ch *EventChannel) next(cch *C.struct_rdma_event_channel, ev *CMEvent) (ok bool, err error) {
	ce := ch.ce
	for {
		rc := C.cverbs_next_cm_event(cch, ce)
		if rc == C.EAGAIN {
			return false, nil
		}
		if rc != 0 {
			return false, opErr("rdma_get_cm_event", int(rc))
		}
		*ev = CMEvent{
			Type:               CMEventType(ce._type),
			Status:             int(ce.status),
			ResponderResources: uint8(ce.responder_resources),
			InitiatorDepth:     uint8(ce.initiator_depth),
			QPNum:              uint32(ce.qp_num),
			SRQ:                ce.srq != 0,
			UD:                 ce.ud != 0,
			QKey:               uint32(ce.qkey),
		}
		if ev.UD {
			ev.AHAttr = ahAttrFromC(&ce.ah_attr)
		}
		if n := int(ce.private_data_len); n > 0 {
			ev.PrivateData = C.GoBytes(unsafe.Pointer(&ce.private_data[0]), C.int(n))
		}
		if ce.ack_err != 0 {
			err = opErr("rdma_ack_cm_event", int(ce.ack_err))
		}
		// The event is acked: its ids may be destroyed by now and their
		// addresses taken by new ones. The key each id carries in its
		// context (newCMID) is never reused, so the id registered at the
		// address is the event's only if its key matches.
		if ev.Type == CMEventConnectRequest {
			ev.ID = newCMID(ce.id, ch) // new: nobody else has it yet
			ev.ListenID = cmidByKey(ce.listen_id, ce.listen_key)
			return true, err
		}
		if ce.id == nil {
			return true, err
		}
		if ev.ID = cmidByKey(ce.id, ce.id_key); ev.ID != nil {
			return true, err
		}
		if ce.id_key == 0 {
			ev.ID = newCMID(ce.id, ch) // not made here; wrap it rather than lose it
			return true, err
		}
		// Its id was closed meanwhile: nobody waits for the event.
		if err != nil {
			return false, err
		}
	}
}

// cmidKeys numbers the ids newCMID wraps; a key is never reused.
var cmidKeys atomic.Uint64

// cmidByKey returns the id registered at cid if it is the one with key.
func cmidByKey(cid *C.struct_rdma_cm_id, key C.uintptr_t) *CMID {
	id := cmidRegistry.get(unsafe.Pointer(cid))
	if id == nil || id.key != uintptr(key) {
		return nil
	}
	return id
}

// cgoCMID is the state of a CMID in the cgo build.
type cgoCMID struct {
	// Lock order: mu, then the QP's locks.
	mu  sync.Mutex
	id  *C.struct_rdma_cm_id
	ch  *EventChannel
	qp  *QP     // made by NewQP, destroyed by Close
	key uintptr // also in the id's context: see EventChannel.next
}

func newCMID(cid *C.struct_rdma_cm_id, ch *EventChannel) *CMID {
	id := &CMID{cgoCMID: cgoCMID{id: cid, ch: ch, key: uintptr(cmidKeys.Add(1))}}
	// librdmacm leaves an id's context to its user (a connect request's
	// child inherits its listener's); the events of the channel carry it.
	*(*uintptr)(unsafe.Pointer(&cid.context)) = id.key
	ch.nids.Add(1)
	cmidRegistry.add(unsafe.Pointer(cid), id)
	return id
}

// CreateID creates an rdma_cm id whose events arrive on ch.
func (ch *EventChannel) CreateID() (*CMID, error) {
	const op = "rdma_create_id"
	cch, err := ch.lock(op)
	if err != nil {
		return nil, err
	}
	defer ch.mu.RUnlock()
	var cid *C.struct_rdma_cm_id
	if rc := C.cverbs_create_id(cch, &cid); rc != 0 {
		return nil, opErr(op, int(rc))
	}
	return newCMID(cid, ch), nil
}

// CreateIDForQP creates the rdma_cm id that an active connection of the
// external QP qp will use, readied in one call into C as librdmacm's
// rdma_create_qp readies its own: bound to addr (port 0 picks one), with
// the ACK timeout exponent ackTimeout (SetACKTimeout), and qp moved to
// QPInit with the id's attributes (ModifyQP). ResolveAddr then needs no
// source, ResolveRoute no ACK timeout and Connect no INIT. The error's Op
// names the step that failed; no id is left then.
func (ch *EventChannel) CreateIDForQP(addr netip.AddrPort, ackTimeout uint8, qp *QP) (*CMID, error) {
	const op = "rdma_create_id"
	var ss C.struct_sockaddr_storage
	if !sockaddr(addr, &ss) {
		return nil, opErr("rdma_bind_addr", int(syscall.EINVAL))
	}
	if ackTimeout > 31 {
		return nil, opErr(OpSetACKTimeout, int(syscall.EINVAL))
	}
	cch, err := ch.lock(op)
	if err != nil {
		return nil, err
	}
	defer ch.mu.RUnlock()
	cqp, err := qp.lock(op)
	if err != nil {
		return nil, err
	}
	defer qp.mu.Unlock()
	var cid *C.struct_rdma_cm_id
	var step C.int
	if rc := C.cverbs_create_id_for_qp(cch, &cid, &ss, C.uint8_t(ackTimeout), cqp, &step); rc != 0 {
		return nil, opErr([...]string{op, "rdma_bind_addr", OpSetACKTimeout, cmModifyOp(QPInit)}[step], int(rc))
	}
	return newCMID(cid, ch), nil
}

func (id *CMID) lock(op string) (*C.struct_rdma_cm_id, error) {
	if id == nil {
		return nil, closedErr(op)
	}
	id.mu.Lock()
	if id.id == nil {
		id.mu.Unlock()
		return nil, closedErr(op)
	}
	return id.id, nil
}

// Close destroys the QP made by NewQP, if any, then the id
// (rdma_destroy_id). Closing the child id of an unanswered connect request
// rejects it.
func (id *CMID) Close() error {
	if id == nil {
		return nil
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.id == nil {
		return nil
	}
	if id.qp != nil {
		if err := id.qp.Close(); err != nil {
			return err
		}
		id.qp = nil
	}
	cid := id.id
	if rc := C.cverbs_destroy_id(cid); rc != 0 {
		return opErr("rdma_destroy_id", int(rc))
	}
	id.id = nil
	id.ch.nids.Add(-1)
	cmidRegistry.del(unsafe.Pointer(cid), id)
	return nil
}

// sockaddr converts ap into ss; it returns false for an invalid ap. It
// writes Linux's struct sockaddr_in or sockaddr_in6 itself, as
// cverbs_sockaddr does, without a call into C.
func sockaddr(ap netip.AddrPort, ss *C.struct_sockaddr_storage) bool {
	a := ap.Addr()
	if !a.IsValid() {
		return false
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	var scope uint32
	if z := a.Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			scope = uint32(ifi.Index)
		} else if n, err := strconv.ParseUint(z, 10, 32); err == nil {
			scope = uint32(n)
		} else {
			return false
		}
	}
	b := (*[C.sizeof_struct_sockaddr_storage]byte)(unsafe.Pointer(ss))
	clear(b[:])
	// family (host order) at 0, port (network order) at 2; sockaddr_in:
	// the address at 4; sockaddr_in6: flowinfo at 4, the address at 8, the
	// scope id (host order) at 24.
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	if a.Is4() {
		binary.NativeEndian.PutUint16(b[0:], C.AF_INET)
		a4 := a.As4()
		copy(b[4:8], a4[:])
		return true
	}
	binary.NativeEndian.PutUint16(b[0:], C.AF_INET6)
	a16 := a.As16()
	copy(b[8:24], a16[:])
	binary.NativeEndian.PutUint32(b[24:], scope)
	return true
}

func addrPort(n C.int, raw *[16]byte, port C.uint16_t, scope C.uint32_t) netip.AddrPort {
	var a netip.Addr
	switch n {
	case 4:
		a = netip.AddrFrom4([4]byte(raw[:4]))
	case 16:
		a = netip.AddrFrom16(*raw)
		if scope != 0 {
			zone := strconv.Itoa(int(scope))
			if ifi, err := net.InterfaceByIndex(int(scope)); err == nil {
				zone = ifi.Name
			}
			a = a.WithZone(zone)
		}
	default:
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(a, uint16(port))
}

// BindAddr binds the id to a local address and port (port 0 picks one).
func (id *CMID) BindAddr(addr netip.AddrPort) error {
	const op = "rdma_bind_addr"
	var ss C.struct_sockaddr_storage
	if !sockaddr(addr, &ss) {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_bind_addr(cid, &ss)))
}

// Listen starts listening for connect requests on the bound address.
func (id *CMID) Listen(backlog int) error {
	const op = "rdma_listen"
	if backlog < 0 || backlog > 1<<16 {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_listen(cid, C.int(backlog))))
}

// LocalAddr returns the id's local address, or the zero AddrPort if it has
// none or is closed.
func (id *CMID) LocalAddr() netip.AddrPort {
	cid, err := id.lock("rdma_get_local_addr")
	if err != nil {
		return netip.AddrPort{}
	}
	defer id.mu.Unlock()
	var raw [16]byte
	var port C.uint16_t
	var scope C.uint32_t
	n := C.cverbs_local_addr(cid, (*C.uint8_t)(unsafe.Pointer(&raw[0])), &port, &scope)
	return addrPort(n, &raw, port, scope)
}

// PeerAddr returns the id's remote address, or the zero AddrPort if it has
// none or is closed.
func (id *CMID) PeerAddr() netip.AddrPort {
	cid, err := id.lock("rdma_get_peer_addr")
	if err != nil {
		return netip.AddrPort{}
	}
	defer id.mu.Unlock()
	var raw [16]byte
	var port C.uint16_t
	var scope C.uint32_t
	n := C.cverbs_peer_addr(cid, (*C.uint8_t)(unsafe.Pointer(&raw[0])), &port, &scope)
	return addrPort(n, &raw, port, scope)
}

// defaultResolveTimeout is used when ResolveAddr or ResolveRoute get 0.
const defaultResolveTimeout = 2 * time.Second

func timeoutMS(d time.Duration) (C.int, bool) {
	if d < 0 || d > time.Duration(1<<31-1)*time.Millisecond {
		return 0, false
	}
	if d == 0 {
		d = defaultResolveTimeout
	}
	return C.int(max(d.Milliseconds(), 1)), true
}

// ResolveAddr resolves dst (and binds to src unless src is the zero value);
// CMEventAddrResolved or CMEventAddrError follows. A zero timeout means 2 s.
func (id *CMID) ResolveAddr(src, dst netip.AddrPort, timeout time.Duration) error {
	const op = "rdma_resolve_addr"
	var sss, dss C.struct_sockaddr_storage
	var psrc *C.struct_sockaddr_storage
	if src.IsValid() {
		if !sockaddr(src, &sss) {
			return opErr(op, int(syscall.EINVAL))
		}
		psrc = &sss
	}
	ms, ok := timeoutMS(timeout)
	if !ok || !sockaddr(dst, &dss) {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_resolve_addr(cid, psrc, &dss, ms)))
}

// ResolveRoute resolves the route to the resolved address;
// CMEventRouteResolved or CMEventRouteError follows. A zero timeout means 2 s.
func (id *CMID) ResolveRoute(timeout time.Duration) error {
	const op = "rdma_resolve_route"
	ms, ok := timeoutMS(timeout)
	if !ok {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_resolve_route(cid, ms)))
}

// SetACKTimeout sets the local ACK timeout of the id's connection
// (rdma_set_option RDMA_OPTION_ID_ACK_TIMEOUT): 4.096 us * 2^timeout, 0 for
// none. Set it before ResolveRoute on the active side (on RoCE the route's
// packet lifetime, and so the CM's own timeouts, follow from it too) and
// before Accept on the passive side; ModifyQP(QPRTS) applies it to the QP.
func (id *CMID) SetACKTimeout(timeout uint8) error {
	const op = "rdma_set_option(ACK_TIMEOUT)"
	if timeout > 31 {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_set_ack_timeout(cid, C.uint8_t(timeout))))
}

// DeviceName returns the name of the device the id is bound to, or "" if it
// is not bound (yet) or closed.
func (id *CMID) DeviceName() string {
	cid, err := id.lock("rdma_cm_id.verbs")
	if err != nil {
		return ""
	}
	defer id.mu.Unlock()
	v := C.cverbs_cm_verbs(cid)
	if v == nil {
		return ""
	}
	return C.GoString(C.cverbs_context_name(v))
}

// PortNum returns the device port the id is bound to (0 if none).
func (id *CMID) PortNum() uint8 {
	cid, err := id.lock("rdma_cm_id.port_num")
	if err != nil {
		return 0
	}
	defer id.mu.Unlock()
	return uint8(C.cverbs_cm_port(cid))
}

// QP returns the QP made by NewQP, or nil.
func (id *CMID) QP() *QP {
	if id == nil {
		return nil
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.qp
}

// NewQP creates the id's RC QP (rdma_create_qp) from pd, which must belong
// to the device the id is bound to. rdma_cm moves it through its states
// during Connect/Accept. The *QP posts like any other; CMID.Close destroys
// it.
func (id *CMID) NewQP(pd *PD, attr QPInitAttr) (*QP, error) {
	const op = "rdma_create_qp"
	var init C.struct_ibv_qp_init_attr
	if err := qpInitAttr(op, &attr, &init); err != nil {
		return nil, err
	}
	cid, err := id.lock(op)
	if err != nil {
		return nil, err
	}
	defer id.mu.Unlock()
	if id.qp != nil && id.qp.alive() {
		return nil, opErr(op, int(syscall.EEXIST))
	}
	p, err := pd.lock(op)
	if err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	if rc := C.cverbs_cm_create_qp(cid, p, &init); rc != 0 {
		return nil, opErr(op, int(rc))
	}
	cqp := C.cverbs_cm_qp(cid)
	qp, ok := newQP(cqp, &init, pd, attr.SRQ)
	if !ok {
		C.cverbs_cm_destroy_qp(cid)
		return nil, opErr(op, int(syscall.ENOMEM))
	}
	qp.cmid = cid
	id.qp = qp
	return qp, nil
}

func (id *CMID) connect(op string, accept bool, p *ConnParam) error {
	if !p.valid() {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	rc := C.cverbs_connect(cid, cbool(accept), p.privateData(), C.uint8_t(len(p.PrivateData)),
		C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth),
		C.uint8_t(p.RetryCount), C.uint8_t(p.RNRRetryCount), cbool(p.FlowControl), cbool(p.SRQ), C.uint32_t(p.QPNum))
	return opErr(op, int(rc))
}

// valid reports whether p fits the connection manager: 255 bytes of
// private data at most, a 24-bit QP number.
func (p *ConnParam) valid() bool { return len(p.PrivateData) <= 255 && p.QPNum < 1<<24 }

// privateData points at p's private data for C, nil when there is none.
func (p *ConnParam) privateData() unsafe.Pointer {
	if len(p.PrivateData) == 0 {
		return nil
	}
	return unsafe.Pointer(&p.PrivateData[0])
}

// Connect sends a connect request (rdma_connect) after the route is
// resolved; CMEventEstablished (id with a QP) or CMEventConnectResponse
// (external QP), CMEventRejected, CMEventUnreachable or CMEventConnectError
// follows.
func (id *CMID) Connect(p ConnParam) error { return id.connect("rdma_connect", false, &p) }

// Accept accepts the connect request of a child id (rdma_accept);
// CMEventEstablished follows.
func (id *CMID) Accept(p ConnParam) error { return id.connect("rdma_accept", true, &p) }

// Reject rejects the connect request of a child id with optional private
// data (at most 148 bytes on InfiniBand/RoCE).
func (id *CMID) Reject(privateData []byte) error {
	const op = "rdma_reject"
	if len(privateData) > 255 {
		return opErr(op, int(syscall.EINVAL))
	}
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	var pd unsafe.Pointer
	if len(privateData) > 0 {
		pd = unsafe.Pointer(&privateData[0])
	}
	return opErr(op, int(C.cverbs_reject(cid, pd, C.uint8_t(len(privateData)))))
}

// Disconnect disconnects the connection (rdma_disconnect); both sides get
// CMEventDisconnected. A QP made by NewQP is moved to ERR.
func (id *CMID) Disconnect() error {
	const op = "rdma_disconnect"
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	return opErr(op, int(C.cverbs_disconnect(cid)))
}

// Migrate moves the id to another event channel (rdma_migrate_id); later
// events of the id arrive there.
func (id *CMID) Migrate(ch *EventChannel) error {
	const op = "rdma_migrate_id"
	cch, err := ch.lock(op)
	if err != nil {
		return err
	}
	defer ch.mu.RUnlock()
	cid, err := id.lock(op)
	if err != nil {
		return err
	}
	defer id.mu.Unlock()
	if rc := C.cverbs_migrate_id(cid, cch); rc != 0 {
		return opErr(op, int(rc))
	}
	id.ch.nids.Add(-1)
	ch.nids.Add(1)
	id.ch = ch
	return nil
}

// sockaddrC converts ap as cverbs_sockaddr does, in C (for tests: sockaddr
// writes the same bytes).
func sockaddrC(ap netip.AddrPort) (goBytes, cBytes []byte, ok bool) {
	var gs, cs C.struct_sockaddr_storage
	if !sockaddr(ap, &gs) {
		return nil, nil, false
	}
	a := ap.Addr()
	if a.Is4In6() {
		a = a.Unmap()
	}
	raw := a.AsSlice()
	var scope uint32
	if a.Is6() {
		scope = binary.NativeEndian.Uint32((*[C.sizeof_struct_sockaddr_storage]byte)(unsafe.Pointer(&gs))[24:])
	}
	C.cverbs_sockaddr(&cs, (*C.uint8_t)(unsafe.Pointer(&raw[0])), C.int(len(raw)), C.uint16_t(ap.Port()), C.uint32_t(scope))
	return C.GoBytes(unsafe.Pointer(&gs), C.sizeof_struct_sockaddr_storage),
		C.GoBytes(unsafe.Pointer(&cs), C.sizeof_struct_sockaddr_storage), true
}

// roundTripSockaddr converts ap to a C sockaddr and back (for tests).
func roundTripSockaddr(ap netip.AddrPort) netip.AddrPort {
	var ss C.struct_sockaddr_storage
	if !sockaddr(ap, &ss) {
		return netip.AddrPort{}
	}
	var raw [16]byte
	var port C.uint16_t
	var scope C.uint32_t
	n := C.cverbs_sockaddr_parse((*C.struct_sockaddr)(unsafe.Pointer(&ss)),
		(*C.uint8_t)(unsafe.Pointer(&raw[0])), &port, &scope)
	return addrPort(n, &raw, port, scope)
}

//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Devices lists the RDMA devices known to libibverbs.
func Devices() ([]DeviceInfo, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, errnoErr("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(list)
	out := make([]DeviceInfo, 0, int(n))
	for i := 0; i < int(n); i++ {
		d := C.cverbs_device_at(list, C.int(i))
		out = append(out, DeviceInfo{
			Name: C.GoString(C.ibv_get_device_name(d)),
			GUID: uint64(C.cverbs_device_guid(d)),
		})
	}
	return out, nil
}

// cgoContext is the state of a Context in the cgo build.
type cgoContext struct {
	// mu is held shared by every call that uses ctx and exclusively by Close.
	mu  sync.RWMutex
	ctx *C.struct_ibv_context
	// fromCM marks a context owned by librdmacm (rdma_get_devices), which
	// stays open for the life of the process and must not be closed here.
	fromCM bool
	name   string
	// siwGuard is the CQ guardSIW made for a context of its own.
	siwGuard *CQ

	asyncMu sync.Mutex
	async   *fdWaiter
	closed  atomic.Bool
	// takeMu is held while an asynchronous event is taken and, in
	// ServeAsync and DrainAsync, handled.
	takeMu sync.Mutex
}

// Open opens the device called name. It takes the context from
// rdma_get_devices, so the PDs and CQs made from it can be used with rdma_cm
// ids bound to that device (id->verbs is the same context); if librdmacm
// cannot list devices it falls back to ibv_open_device.
func Open(name string) (*Context, error) {
	var n C.int
	if list := C.rdma_get_devices(&n); list != nil {
		defer C.rdma_free_devices(list)
		for i := 0; i < int(n); i++ {
			c := C.cverbs_context_at(list, C.int(i))
			if c != nil && C.GoString(C.cverbs_context_name(c)) == name {
				ctx := &Context{cgoContext{ctx: c, fromCM: true, name: name}}
				ctx.guardSIW()
				return ctx, nil
			}
		}
	}
	var dn C.int
	devs, err := C.ibv_get_device_list(&dn)
	if devs == nil {
		return nil, errnoErr("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(devs)
	for i := 0; i < int(dn); i++ {
		d := C.cverbs_device_at(devs, C.int(i))
		if C.GoString(C.ibv_get_device_name(d)) != name {
			continue
		}
		c, err := C.ibv_open_device(d)
		if c == nil {
			return nil, errnoErr("ibv_open_device", err)
		}
		ctx := &Context{cgoContext{ctx: c, name: name}}
		ctx.guardSIW()
		return ctx, nil
	}
	return nil, &OpError{Op: "ibv_open_device " + strconv.Quote(name), Err: syscall.ENODEV}
}

// Name returns the device name given to Open.
func (c *Context) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Close closes the device. A context shared with librdmacm stays open in C;
// this Context is unusable afterwards either way.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	c.asyncMu.Lock()
	c.closed.Store(true)
	w := c.async
	c.asyncMu.Unlock()
	w.close() // wakes WaitAsyncEvent callers so the write lock below is reachable
	c.siwGuard.Close()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil
	}
	if !c.fromCM {
		if rc := C.ibv_close_device(c.ctx); rc != 0 {
			return opErr("ibv_close_device", int(rc))
		}
	}
	c.ctx = nil
	return nil
}

// lock takes the shared lock and returns the C context, or an error if c is
// closed; on success the caller must call c.mu.RUnlock.
func (c *Context) lock(op string) (*C.struct_ibv_context, error) {
	if c == nil {
		return nil, closedErr(op)
	}
	c.mu.RLock()
	if c.ctx == nil {
		c.mu.RUnlock()
		return nil, closedErr(op)
	}
	return c.ctx, nil
}

// QueryDevice returns the device attributes.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	const op = "ibv_query_device"
	ctx, err := c.lock(op)
	if err != nil {
		return DeviceAttr{}, err
	}
	defer c.mu.RUnlock()
	var a C.struct_ibv_device_attr
	if rc := C.ibv_query_device(ctx, &a); rc != 0 {
		return DeviceAttr{}, opErr(op, int(rc))
	}
	return DeviceAttr{
		FWVer:           C.GoString(&a.fw_ver[0]),
		NodeGUID:        beToHost64(uint64(a.node_guid)),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		HWVer:           uint32(a.hw_ver),
		MaxMRSize:       uint64(a.max_mr_size),
		DeviceCapFlags:  uint32(a.device_cap_flags),
		AtomicCap:       int(a.atomic_cap),
		MaxQP:           int(a.max_qp),
		MaxQPWR:         int(a.max_qp_wr),
		MaxSGE:          int(a.max_sge),
		MaxSGERd:        int(a.max_sge_rd),
		MaxCQ:           int(a.max_cq),
		MaxCQE:          int(a.max_cqe),
		MaxMR:           int(a.max_mr),
		MaxPD:           int(a.max_pd),
		MaxQPRdAtom:     int(a.max_qp_rd_atom),
		MaxQPInitRdAtom: int(a.max_qp_init_rd_atom),
		MaxMW:           int(a.max_mw),
		MaxSRQ:          int(a.max_srq),
		MaxSRQWR:        int(a.max_srq_wr),
		MaxSRQSGE:       int(a.max_srq_sge),
		PhysPortCnt:     int(a.phys_port_cnt),
	}, nil
}

// beToHost64 converts a big-endian (__be64) value read as a native integer.
func beToHost64(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

// mtuBytes converts an enum ibv_mtu to bytes (IBV_MTU_256 = 1 ... 4096 = 5).
func mtuBytes(m C.enum_ibv_mtu) int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << uint(m)
}

// mtuEnum converts bytes to enum ibv_mtu; 0 when bytes is not a valid MTU.
func mtuEnum(bytes int) C.enum_ibv_mtu {
	for m := C.enum_ibv_mtu(1); m <= 5; m++ {
		if 128<<uint(m) == bytes {
			return m
		}
	}
	return 0
}

// QueryPort returns the attributes of port (1-based).
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	const op = "ibv_query_port"
	ctx, err := c.lock(op)
	if err != nil {
		return PortAttr{}, err
	}
	defer c.mu.RUnlock()
	var a C.struct_ibv_port_attr
	if rc := C.cverbs_query_port(ctx, C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, opErr(op, int(rc))
	}
	return PortAttr{
		State:      PortState(a.state),
		MaxMTU:     mtuBytes(a.max_mtu),
		ActiveMTU:  mtuBytes(a.active_mtu),
		GIDTblLen:  int(a.gid_tbl_len),
		LID:        uint16(a.lid),
		LinkLayer:  int(a.link_layer),
		MaxMsgSize: uint32(a.max_msg_sz),
		PortCap:    uint32(a.port_cap_flags),
	}, nil
}

// QueryGID returns entry index of the port's GID table.
func (c *Context) QueryGID(port uint8, index int) ([16]byte, error) {
	const op = "ibv_query_gid"
	var gid [16]byte
	if index < 0 {
		return gid, opErr(op, int(syscall.EINVAL))
	}
	ctx, err := c.lock(op)
	if err != nil {
		return gid, err
	}
	defer c.mu.RUnlock()
	var g C.union_ibv_gid
	if rc, err := C.ibv_query_gid(ctx, C.uint8_t(port), C.int(index), &g); rc != 0 {
		return gid, errnoErr(op, err)
	}
	copy(gid[:], unsafe.Slice((*byte)(unsafe.Pointer(&g)), 16))
	return gid, nil
}

// QueryGIDEntry returns a GID table entry with its type and netdev. An
// unpopulated entry gives an error wrapping ENODATA.
func (c *Context) QueryGIDEntry(port uint8, index int) (GIDEntry, error) {
	const op = "ibv_query_gid_ex"
	if index < 0 {
		return GIDEntry{}, opErr(op, int(syscall.EINVAL))
	}
	ctx, err := c.lock(op)
	if err != nil {
		return GIDEntry{}, err
	}
	defer c.mu.RUnlock()
	var e C.struct_ibv_gid_entry
	if rc := C.cverbs_query_gid_ex(ctx, C.uint32_t(port), C.uint32_t(index), &e); rc != 0 {
		return GIDEntry{}, opErr(op, int(rc))
	}
	g := GIDEntry{
		Index:   int(e.gid_index),
		Port:    uint8(e.port_num),
		Type:    GIDType(e.gid_type),
		IfIndex: int(e.ndev_ifindex),
	}
	copy(g.GID[:], unsafe.Slice((*byte)(unsafe.Pointer(&e.gid)), 16))
	return g, nil
}

// Transport returns the device's transport (the transport_type of its
// ibv_device), TransportUnknown once c is closed.
func (c *Context) Transport() Transport {
	ctx, err := c.lock("transport_type")
	if err != nil {
		return TransportUnknown
	}
	defer c.mu.RUnlock()
	return Transport(ctx.device.transport_type)
}

// NetDev returns the network interface behind a RoCE or iWARP port. On
// RoCE it is the netdev of the port's GID table entries (or, on older
// kernels, of sysfs gid_attrs/ndevs). An iWARP port has neither (its GID
// table is not the RoCE GID cache): its GID 0 is the MAC address of its
// interface, zero-padded, and NetDev returns the interface with that
// hardware address (see macNetDev).
func (c *Context) NetDev(port uint8) (string, error) {
	const op = "netdev"
	pa, err := c.QueryPort(port)
	if err != nil {
		return "", err
	}
	for i := 0; i < pa.GIDTblLen; i++ {
		e, err := c.QueryGIDEntry(port, i)
		if err != nil || e.IfIndex == 0 {
			continue
		}
		var buf [C.IF_NAMESIZE + 1]C.char
		if p := C.if_indextoname(C.uint(e.IfIndex), &buf[0]); p != nil {
			return C.GoString(&buf[0]), nil
		}
	}
	// Older kernels: gid_attrs/ndevs/N in sysfs.
	dir := "/sys/class/infiniband/" + c.Name() + "/ports/" + strconv.Itoa(int(port)) + "/gid_attrs/ndevs/"
	for i := 0; i < pa.GIDTblLen && i < 256; i++ {
		b, err := os.ReadFile(dir + strconv.Itoa(i))
		if err != nil {
			continue
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	}
	if c.Transport() == TransportIWARP {
		if g, err := c.QueryGID(port, 0); err == nil {
			if nd := macNetDev(g); nd != "" {
				return nd, nil
			}
		}
	}
	return "", opErr(op, int(syscall.ENODEV))
}

// macNetDev returns the network interface whose hardware address is the
// MAC address in gid, the GID 0 of an iWARP port (the MAC, then ten zero
// bytes), or "" when gid is not such a GID or no interface has it.
//
// This is how rdma_cm itself maps an IP address to an iWARP device: it
// looks the hardware address of the address's interface up in the devices'
// GID tables (cma_acquire_dev_by_src_ip). So the addresses of the interface
// found are ones rdma_cm binds to this device, whatever the device: siw on
// a virtual interface (no sysfs device/net link) or an iWARP NIC. The
// kernel's own record of the netdev (rdma link, RDMA_NLDEV_ATTR_NDEV_NAME)
// would need a netlink client for no better answer. Interfaces stacked on
// the device's (VLANs, a bond's ports) may share its MAC address: then the
// one that is up with an address wins, and of those the one with the
// lowest index, which the interfaces stacked on it come after.
func macNetDev(gid [16]byte) string {
	mac := gid[:6]
	if bytes.Equal(mac, make([]byte, 6)) || !bytes.Equal(gid[6:], make([]byte, 10)) {
		return ""
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var best *net.Interface
	bestRank := 2
	for i := range ifs {
		ifi := &ifs[i]
		if !bytes.Equal(ifi.HardwareAddr, mac) {
			continue
		}
		rank := 1
		if ifi.Flags&net.FlagUp != 0 {
			if addrs, err := ifi.Addrs(); err == nil && len(addrs) > 0 {
				rank = 0
			}
		}
		if best == nil || rank < bestRank || rank == bestRank && ifi.Index < best.Index {
			best, bestRank = ifi, rank
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// WaitAsyncEvent waits for the next asynchronous event of the device through
// the netpoller, acknowledges it and returns a copy. It returns ctx.Err()
// when ctx ends first.
func (c *Context) WaitAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	var ev AsyncEvent
	var evErr error
	err := c.waitAsync(ctx, func(cctx *C.struct_ibv_context) bool {
		c.takeMu.Lock()
		defer c.takeMu.Unlock()
		var got bool
		got, evErr = takeAsync(cctx, &ev)
		return got || evErr != nil
	})
	if err != nil {
		return AsyncEvent{}, err
	}
	return ev, evErr
}

// ServeAsync hands every asynchronous event of the device to handle, in
// order, until ctx ends (it returns ctx.Err()), the context is closed
// (ErrClosed) or an event cannot be taken (its error). Each event is taken
// and handled under the lock DrainAsync takes: once DrainAsync returns,
// every event the device raised before it was called has been handled.
// handle must not close the context.
func (c *Context) ServeAsync(ctx context.Context, handle func(AsyncEvent)) error {
	var evErr error
	err := c.waitAsync(ctx, func(cctx *C.struct_ibv_context) bool {
		evErr = c.handleQueued(cctx, handle)
		return evErr != nil
	})
	if err != nil {
		return err
	}
	return evErr
}

// DrainAsync hands handle the asynchronous events the device has raised
// and ServeAsync has not handled yet, and waits for the one ServeAsync may
// be handling: a caller that has seen an effect of an event (a QP's
// connection closed after the QP failed) learns of the event first.
func (c *Context) DrainAsync(handle func(AsyncEvent)) error {
	const op = "ibv_get_async_event"
	cctx, err := c.lock(op)
	if err != nil {
		return err
	}
	defer c.mu.RUnlock()
	if _, err := c.asyncWaiter(op, cctx); err != nil {
		return err
	}
	return c.handleQueued(cctx, handle)
}

// handleQueued takes the device's queued events one by one and hands each
// to handle, under takeMu, until none is left.
func (c *Context) handleQueued(cctx *C.struct_ibv_context, handle func(AsyncEvent)) error {
	c.takeMu.Lock()
	defer c.takeMu.Unlock()
	for {
		var ev AsyncEvent
		if got, err := takeAsync(cctx, &ev); !got {
			return err
		}
		handle(ev)
	}
}

// waitAsync calls try with the device whenever its asynchronous events'
// file may be read, until try reports done, as fdWaiter.wait does.
func (c *Context) waitAsync(ctx context.Context, try func(*C.struct_ibv_context) bool) error {
	const op = "ibv_get_async_event"
	cctx, err := c.lock(op)
	if err != nil {
		return err
	}
	defer c.mu.RUnlock()
	w, err := c.asyncWaiter(op, cctx)
	if err != nil {
		return err
	}
	return w.wait(ctx, op, func() bool { return try(cctx) })
}

// asyncWaiter returns the waiter of the device's asynchronous events' file,
// made at the first call. Making it turns the file non-blocking (the
// duplicate shares its flags), which every take of an event relies on.
// Caller holds c.mu shared.
func (c *Context) asyncWaiter(op string, cctx *C.struct_ibv_context) (*fdWaiter, error) {
	c.asyncMu.Lock()
	defer c.asyncMu.Unlock()
	if c.closed.Load() {
		return nil, closedErr(op)
	}
	if c.async == nil {
		w, err := newFDWaiter(op, cctx.async_fd, c.name+"-async")
		if err != nil {
			return nil, err
		}
		c.async = w
	}
	return c.async, nil
}

// takeAsync takes the device's next asynchronous event into ev without
// waiting, and acknowledges it: got is false when there is none (or it
// could not be taken: err). Caller holds takeMu.
func takeAsync(cctx *C.struct_ibv_context, ev *AsyncEvent) (got bool, err error) {
	const op = "ibv_get_async_event"
	var ce C.struct_cverbs_async_event
	var raw C.struct_ibv_async_event
	rc := C.cverbs_get_async_event(cctx, &ce, &raw)
	if rc == C.EAGAIN {
		return false, nil
	}
	if rc != 0 {
		return false, opErr(op, int(rc))
	}
	// Resolve the objects before the ack: until then they cannot be
	// destroyed.
	*ev = AsyncEvent{
		Type:  AsyncEventType(ce._type),
		QPNum: uint32(ce.qp_num),
		QP:    qpRegistry.get(unsafe.Pointer(ce.qp)),
		SRQ:   srqRegistry.get(unsafe.Pointer(ce.srq)),
		CQ:    cqRegistry.get(unsafe.Pointer(ce.cq)),
		Port:  uint8(ce.port),
	}
	C.ibv_ack_async_event(&raw)
	return true, nil
}

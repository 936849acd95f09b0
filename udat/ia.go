package udat

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/udapl-go/udapl/cverbs"
)

// IA is an Interface Adapter: one opened RDMA device port, with its IP
// address, its asynchronous event EVD and the connection manager channel
// that serves every EP and service point created from it.
type IA struct {
	object

	name   string // the name OpenIA was given
	dev    string // RDMA device name
	netdev string
	port   uint8
	addr   netip.Addr
	// transport is the device's: what the IA offers besides RC follows
	// it (transport.go).
	transport cverbs.Transport
	// privateData is how much private data a connection message carries.
	privateData privateDataLimits

	vctx     *cverbs.Context
	devAttr  cverbs.DeviceAttr
	portAttr cverbs.PortAttr
	maxMsg   uint64 // maxMessageSize: read on every post
	// cqResizable: the device can resize a CQ (soft-iWARP cannot); see
	// cqsize.go.
	cqResizable bool
	// gidSlot is 1 + the GID table index localGID found last (0: none
	// yet), checked before each use: a UD resolution queries one entry,
	// not the table (1,024 on Soft-RoCE, a system call each).
	gidSlot  atomic.Int32
	ech      *cverbs.EventChannel
	asyncEVD *EVD

	cancel context.CancelFunc
	loops  sync.WaitGroup

	mu       sync.Mutex // children sets below, nullCQ
	pzs      map[*PZ]struct{}
	evds     map[*EVD]struct{}
	eps      map[*EP]struct{}
	psps     map[*PSP]struct{}
	rsps     map[*RSP]struct{}
	srqs     map[*SRQ]struct{}
	crs      map[*CR]struct{}
	cnos     map[*CNO]struct{}
	nullCQ   *cverbs.CQ // receive/send CQ for EPs created without that EVD
	provPZ   *PZ        // the PZ of provider-created EPs (providerep.go)
	closing  bool
	lmrMu    sync.RWMutex
	lmrByKey map[uint32]*LMR // lmr_context (lkey) -> LMR, for post-time checks
	epMu     sync.RWMutex
	epByQP   map[uint32]*EP // QP number -> EP, to route completions
	lmrHot   hotCache[LMR]  // see lookup.go
	epHot    hotCache[EP]
	srqByVer map[*cverbs.SRQ]*SRQ
	srqByOwn map[uint32]*SRQ
	// The EPs the progress watchdog looks at: those whose watch was armed
	// with a budget, until a later connection disarms it or the EP is
	// freed (watchdog.go). A slice, not a map: the watchdog walks it
	// every tick.
	watchMu sync.Mutex
	watched []*EP
}

// maxAsyncEVDQLen bounds the asynchronous EVD of a device that does not
// say how large its CQs may be.
const maxAsyncEVDQLen = 1 << 16

// OpenIA opens an Interface Adapter (dat_ia_open). name is an RDMA device
// ("rxe0"), the network interface of one ("d0"), or a provider name from the
// dat.conf file (DAT_OVERRIDE names another file than /etc/dat.conf), whose
// first IA parameter names the network interface or device. The IA creates
// its asynchronous EVD with room for asyncEVDQLen events (at most the
// device's largest CQ: DAT_INVALID_PARAMETER beyond); AsyncEVD returns it.
// In a build without RDMA support (not Linux, or cgo disabled) it fails
// with DAT_MODEL_NOT_SUPPORTED, an error for which
// errors.Is(err, errors.ErrUnsupported) holds.
func OpenIA(name string, asyncEVDQLen int) (*IA, error) {
	const op = "dat_ia_open"
	if name == "" {
		return nil, newError(op, InvalidParameter|InvalidArg1)
	}
	if asyncEVDQLen < 0 {
		return nil, newError(op, InvalidParameter|InvalidArg2)
	}
	if asyncEVDQLen == 0 {
		asyncEVDQLen = 8
	}
	vctx, port, netdev, err := openDevice(op, name)
	if err != nil {
		return nil, err
	}
	ia := &IA{
		object:   liveObject(),
		name:     name,
		dev:      vctx.Name(),
		netdev:   netdev,
		port:     port,
		vctx:     vctx,
		pzs:      map[*PZ]struct{}{},
		evds:     map[*EVD]struct{}{},
		eps:      map[*EP]struct{}{},
		psps:     map[*PSP]struct{}{},
		rsps:     map[*RSP]struct{}{},
		srqs:     map[*SRQ]struct{}{},
		crs:      map[*CR]struct{}{},
		cnos:     map[*CNO]struct{}{},
		lmrByKey: map[uint32]*LMR{},
		epByQP:   map[uint32]*EP{},
		srqByVer: map[*cverbs.SRQ]*SRQ{},
		srqByOwn: map[uint32]*SRQ{},
	}
	fail := func(e error) (*IA, error) {
		ia.teardown()
		return nil, e
	}
	if err := ia.readDevice(op); err != nil {
		return fail(err)
	}
	ia.cqResizable = cqResizable(vctx)
	// The asynchronous EVD is bounded like any other (its queue is
	// allocated whole): no larger than the device's largest CQ.
	if asyncEVDQLen > cmp.Or(ia.devAttr.MaxCQE, maxAsyncEVDQLen) {
		return fail(newError(op, InvalidParameter|InvalidArg2))
	}
	if ia.ech, err = cverbs.NewEventChannel(); err != nil {
		return fail(verbsErr(op, err, InsufficientResources))
	}
	ia.asyncEVD, err = newEVD(ia, asyncEVDQLen, EVDAsyncFlag)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ia.cancel = cancel
	ia.loops.Add(3)
	go serveLoop(ctx, &ia.loops, func(ctx context.Context) error { return ia.ech.Serve(ctx, ia.dispatchCM) })
	go serveLoop(ctx, &ia.loops, func(ctx context.Context) error { return ia.vctx.ServeAsync(ctx, ia.handleAsync) })
	go ia.watchProgress(ctx, &ia.loops)
	return ia, nil
}

// readDevice reads what the IA's attributes come from: the device's
// transport and limits, its port's, and the IA's address.
func (ia *IA) readDevice(op string) (err error) {
	ia.transport = ia.vctx.Transport()
	ia.privateData = privateDataLimitsOf(ia.transport)
	if ia.devAttr, err = ia.vctx.QueryDevice(); err != nil {
		return verbsErr(op, err, InternalError)
	}
	if ia.portAttr, err = ia.vctx.QueryPort(ia.port); err != nil {
		return verbsErr(op, err, InternalError)
	}
	ia.maxMsg = messageLimit(ia.portAttr)
	if ia.netdev != "" {
		ia.addr = ipv4Of(ia.netdev)
	}
	return nil
}

// openDevice finds the device, port and network interface for name.
func openDevice(op, name string) (*cverbs.Context, uint8, string, error) {
	// No devices at all (no RDMA in this kernel) is still "no such provider".
	devs, err := cverbs.Devices()
	if errors.Is(err, cverbs.ErrUnsupported) {
		// Built without RDMA support (not Linux, or cgo disabled). Not
		// errors.ErrUnsupported: a kernel without RDMA gives ENOSYS, which
		// matches it too, and that is "no such provider".
		e := newErrorDetail(op, ModelNotSupported, "RDMA needs Linux and cgo")
		e.cause = err
		return nil, 0, "", e
	}
	if err != nil {
		return nil, 0, "", newError(op, ProviderNotFound)
	}
	isDev := func(n string) bool {
		for _, d := range devs {
			if d.Name == n {
				return true
			}
		}
		return false
	}
	target := name
	if !isDev(target) {
		if p, ok := findProvider(name); ok {
			target = p
		} else if ip, err := netip.ParseAddr(name); err == nil {
			target = netdevOf(ip)
		}
	}
	if isDev(target) {
		c, err := cverbs.Open(target)
		if err != nil {
			return nil, 0, "", verbsErr(op, err, ProviderNotFound)
		}
		port := activePort(c)
		nd, _ := c.NetDev(port)
		return c, port, nd, nil
	}
	// A network interface: find the device port behind it.
	if _, err := net.InterfaceByName(target); err != nil {
		return nil, 0, "", newError(op, ProviderNotFound)
	}
	for _, d := range devs {
		c, err := cverbs.Open(d.Name)
		if err != nil {
			continue
		}
		attr, err := c.QueryDevice()
		if err == nil {
			for p := 1; p <= attr.PhysPortCnt && p < 256; p++ {
				if nd, err := c.NetDev(uint8(p)); err == nil && nd == target {
					return c, uint8(p), nd, nil
				}
			}
		}
		c.Close()
	}
	return nil, 0, "", newError(op, ProviderNotFound)
}

// findProvider looks name up in dat.conf and returns its first IA parameter
// (the netdev or device the provider entry is bound to).
func findProvider(name string) (string, bool) {
	ps, err := Providers()
	if err != nil {
		return "", false
	}
	for _, p := range ps {
		if p.Name != name {
			continue
		}
		nd := p.NetDev()
		if nd == "" {
			return "", false
		}
		// An entry may name an IP address: use the interface that has it.
		if ip, err := netip.ParseAddr(nd); err == nil {
			if ifn := netdevOf(ip); ifn != "" {
				return ifn, true
			}
		}
		return strings.TrimSpace(nd), true
	}
	return "", false
}

// netdevOf returns the network interface that has address ip.
func netdevOf(ip netip.Addr) string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ad, ok := netip.AddrFromSlice(ipn.IP); ok && ad.Unmap() == ip.Unmap() {
					return ifi.Name
				}
			}
		}
	}
	return ""
}

func activePort(c *cverbs.Context) uint8 {
	attr, err := c.QueryDevice()
	if err != nil {
		return 1
	}
	for p := 1; p <= attr.PhysPortCnt && p < 256; p++ {
		if pa, err := c.QueryPort(uint8(p)); err == nil && pa.State == cverbs.PortActive {
			return uint8(p)
		}
	}
	return 1
}

func ipv4Of(netdev string) netip.Addr {
	ifi, err := net.InterfaceByName(netdev)
	if err != nil {
		return netip.Addr{}
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if v4 := ipn.IP.To4(); v4 != nil {
				ad, _ := netip.AddrFromSlice(v4)
				return ad
			}
		}
	}
	return netip.Addr{}
}

func (ia *IA) check(op string) error {
	if ia == nil || ia.dead() {
		return badHandle(op, HandleTypeIA)
	}
	return nil
}

// Address returns the IP address of the IA (its ia_address_ptr).
func (ia *IA) Address() netip.Addr {
	if ia == nil {
		return netip.Addr{}
	}
	return ia.addr
}

// AsyncEVD returns the IA's asynchronous event EVD.
func (ia *IA) AsyncEVD() *EVD {
	if ia == nil {
		return nil
	}
	return ia.asyncEVD
}

// IAAttr describes an IA (the DAT_IA_ATTR fields that apply here). The
// values are those the C reference (OFA DAPL 2.x) reports for the same
// device: the device's ibv_device_attr limits and the port's max_msg_sz.
type IAAttr struct {
	AdapterName string
	VendorName  string
	// HardwareVersionMajor is the device's hardware version (hw_ver), as
	// in C; HardwareVersionMinor is 0, as in C (verbs has no minor
	// version).
	HardwareVersionMajor uint32
	HardwareVersionMinor uint32
	// VendorID is the device's IEEE vendor id (vendor_id). It is not a
	// DAT_IA_ATTR member: C does not report it.
	VendorID             uint32
	FirmwareVersion      string
	Address              netip.Addr
	NetDev               string
	Port                 uint8
	MaxEPs               int
	MaxDTOPerEP          int
	MaxRDMAReadPerEPIn   int
	MaxRDMAReadPerEPOut  int
	MaxEVDs              int
	MaxEVDQLen           int
	MaxIOVSegmentsPerDTO int
	MaxLMRs              int
	MaxLMRBlockSize      uint64
	// MaxLMRVirtualAddress and MaxRMRTargetAddress are the device's
	// max_mr_size, as in C.
	MaxLMRVirtualAddress uint64
	MaxPZs               int
	// MaxMessageSize and MaxRDMASize are the port's max_msg_sz.
	MaxMessageSize      uint32
	MaxRDMASize         uint32
	MaxRMRs             int
	MaxRMRTargetAddress uint64
	MaxSRQs             int
	MaxEPPerSRQ         int
	MaxRecvPerSRQ       int
	// MaxIOVSegmentsPerRDMARead and MaxIOVSegmentsPerRDMAWrite are the
	// largest IOVs of an RDMA read and write (the device's max_sge, and
	// its max_sge_rd for reads where that is smaller).
	MaxIOVSegmentsPerRDMARead  int
	MaxIOVSegmentsPerRDMAWrite int
	MaxRDMAReadIn              int
	MaxRDMAReadOut             int
	// ExtensionSupported is ExtensionIB on an InfiniBand or RoCE device:
	// the IB extensions of ext_ib.go, at ExtensionVersion
	// (IBExtensionVersion). On an iWARP device it is ExtensionNone, as in
	// C, which reports the version all the same.
	ExtensionSupported Extension
	ExtensionVersion   int
}

// NamedAttr is a provider attribute given by name (DAT_NAMED_ATTR).
type NamedAttr struct {
	Name, Value string
}

// EVDStreamIndex gives the row and column of an EVD flag in
// ProviderAttr.EVDStreamMergingSupported, as in the C array: software 0,
// CR 1, DTO 2, connection 3, RMR bind 4, asynchronous 5.
var EVDStreamIndex = [6]EVDFlags{EVDSoftwareFlag, EVDCRFlag, EVDDTOFlag, EVDConnectionFlag, EVDRMRBindFlag, EVDAsyncFlag}

// ProviderAttr describes the library as a DAT provider (DAT_PROVIDER_ATTR).
type ProviderAttr struct {
	ProviderName         string
	ProviderVersionMajor uint32
	ProviderVersionMinor uint32
	DAPLVersionMajor     uint32
	DAPLVersionMinor     uint32
	// LMRMemTypesSupported is MemTypeVirtual: LMRs register virtual
	// memory only (C claims MemTypeLMR|MemTypeSharedVirtual too).
	LMRMemTypesSupported MemType
	// IOVOwnershipOnReturn is IOVConsumer: the IOV of a post is the
	// Consumer's again when the call returns.
	IOVOwnershipOnReturn IOVOwnership
	// DATQoSSupported is QoSBestEffort, the only QoS.
	DATQoSSupported QoS
	CompletionFlags CompletionFlags
	IsThreadSafe    bool
	// MaxPrivateDataSize is the connect private data limit (56 bytes,
	// 251 on iWARP); MaxAcceptPrivateSize, not in DAT_PROVIDER_ATTR, the
	// accept one (160 bytes, 251 on iWARP).
	MaxPrivateDataSize   int
	MaxAcceptPrivateSize int
	SupportsMultipath    bool
	// EPCreator is PSPCreatesEPIfAsked: a PSP created with
	// PSPProviderFlag creates the EP of each request (C supports that
	// flag too, but reports PSPCreatesEPNever).
	EPCreator EPCreatorForPSP
	// OptimalBufferAlignment is OptimalAlignment (256), as in C.
	OptimalBufferAlignment int
	// PZSupport is PZUnique: a PZ belongs to one IA.
	PZSupport PZSupport
	// EVDStreamMergingSupported[i][j] says whether one EVD may take the
	// events of the streams EVDStreamIndex[i] and EVDStreamIndex[j]. Every
	// combination CreateEVD accepts is true: all but the asynchronous
	// stream, which only the IA's own EVD takes (C also refuses DTO with
	// connection events).
	EVDStreamMergingSupported [6][6]bool
	SRQSupported              bool
	SRQWatermarksSupported    bool
	SRQEPPZDifferenceAllowed  bool
	// SRQInfoSupported: SRQ.Query counts the receives posted and not
	// completed (AvailableDTOCount, OutstandingDTOCount); C reports false.
	SRQInfoSupported bool
	// EPRecvInfoSupported: EP.RecvQuery reports the receives of an EP
	// without SRQ; C reports false.
	EPRecvInfoSupported bool
	LMRSyncRequired     bool
	// ProviderSpecificAttr lists what the provider adds, named and
	// formatted as by OFA DAPL's openib providers (see ext_ib.go).
	ProviderSpecificAttr []NamedAttr
}

// Query returns the IA's attributes and the provider attributes
// (dat_ia_query).
func (ia *IA) Query() (IAAttr, ProviderAttr, error) {
	const op = "dat_ia_query"
	if err := ia.check(op); err != nil {
		return IAAttr{}, ProviderAttr{}, err
	}
	d := ia.devAttr
	maxMsg := uint32(ia.maxMessageSize())
	readSGE := ia.rdmaReadSGE()
	a := IAAttr{
		AdapterName:                ia.dev,
		VendorName:                 "udat",
		HardwareVersionMajor:       d.HWVer,
		VendorID:                   d.VendorID,
		FirmwareVersion:            d.FWVer,
		Address:                    ia.addr,
		NetDev:                     ia.netdev,
		Port:                       ia.port,
		MaxEPs:                     d.MaxQP,
		MaxDTOPerEP:                d.MaxQPWR,
		MaxRDMAReadPerEPIn:         d.MaxQPRdAtom,
		MaxRDMAReadPerEPOut:        d.MaxQPInitRdAtom,
		MaxEVDs:                    d.MaxCQ,
		MaxEVDQLen:                 d.MaxCQE,
		MaxIOVSegmentsPerDTO:       d.MaxSGE,
		MaxLMRs:                    d.MaxMR,
		MaxLMRBlockSize:            d.MaxMRSize,
		MaxLMRVirtualAddress:       d.MaxMRSize,
		MaxPZs:                     d.MaxPD,
		MaxMessageSize:             maxMsg,
		MaxRDMASize:                maxMsg,
		MaxRMRs:                    d.MaxMW,
		MaxRMRTargetAddress:        d.MaxMRSize,
		MaxSRQs:                    d.MaxSRQ,
		MaxEPPerSRQ:                d.MaxQP,
		MaxRecvPerSRQ:              d.MaxSRQWR,
		MaxIOVSegmentsPerRDMARead:  readSGE,
		MaxIOVSegmentsPerRDMAWrite: d.MaxSGE,
		MaxRDMAReadIn:              d.MaxQPRdAtom,
		MaxRDMAReadOut:             d.MaxQPInitRdAtom,
		ExtensionSupported:         ia.extension(),
		ExtensionVersion:           IBExtensionVersion,
	}
	p := ProviderAttr{
		ProviderName:         "udat-go",
		ProviderVersionMajor: 2,
		ProviderVersionMinor: 0,
		DAPLVersionMajor:     2,
		DAPLVersionMinor:     0,
		LMRMemTypesSupported: MemTypeVirtual,
		IOVOwnershipOnReturn: IOVConsumer,
		DATQoSSupported:      QoSBestEffort,
		CompletionFlags: CompletionSuppress | CompletionSolicitedWait | CompletionUnsignalled |
			CompletionBarrierFence | CompletionEVDThreshold,
		IsThreadSafe:             true,
		MaxPrivateDataSize:       ia.privateData.connect,
		MaxAcceptPrivateSize:     ia.privateData.accept,
		EPCreator:                PSPCreatesEPIfAsked,
		OptimalBufferAlignment:   OptimalAlignment,
		PZSupport:                PZUnique,
		SRQSupported:             d.MaxSRQ > 0,
		SRQWatermarksSupported:   d.MaxSRQ > 0,
		SRQEPPZDifferenceAllowed: false,
		SRQInfoSupported:         d.MaxSRQ > 0,
		EPRecvInfoSupported:      true,
		ProviderSpecificAttr:     ia.providerSpecificAttrs(),
	}
	for i, fi := range EVDStreamIndex {
		for j, fj := range EVDStreamIndex {
			p.EVDStreamMergingSupported[i][j] = (fi|fj)&EVDAsyncFlag == 0
		}
	}
	return a, p, nil
}

// Close closes the IA (dat_ia_close). With CloseGracefulFlag it fails with
// DAT_INVALID_STATE while any object created from the IA (other than its
// asynchronous EVD) is alive. With CloseAbruptFlag it frees every such object
// first; goroutines waiting on its EVDs return DAT_ABORT.
func (ia *IA) Close(flags CloseFlags) error {
	const op = "dat_ia_close"
	if err := ia.check(op); err != nil {
		return err
	}
	if flags != CloseAbruptFlag && flags != CloseGracefulFlag {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	ia.mu.Lock()
	if ia.closing {
		ia.mu.Unlock()
		return badHandle(op, HandleTypeIA)
	}
	if flags == CloseGracefulFlag {
		busy := len(ia.pzs)+len(ia.eps)+len(ia.psps)+len(ia.rsps)+len(ia.srqs)+len(ia.cnos) > 0
		for e := range ia.evds {
			if e != ia.asyncEVD {
				busy = true
			}
		}
		if busy {
			ia.mu.Unlock()
			return newError(op, InvalidState|InvalidStateIAInUse)
		}
	}
	ia.closing = true
	ia.mu.Unlock()
	if flags == CloseAbruptFlag {
		ia.freeChildren()
	}
	ia.freed.Store(true)
	ia.teardown()
	return nil
}

// freeChildren frees every object of the IA, children before parents.
func (ia *IA) freeChildren() {
	ia.mu.Lock()
	crs := keys(ia.crs)
	psps := keys(ia.psps)
	rsps := keys(ia.rsps)
	eps := keys(ia.eps)
	srqs := keys(ia.srqs)
	pzs := keys(ia.pzs)
	evds := keys(ia.evds)
	cnos := keys(ia.cnos)
	ia.mu.Unlock()
	for _, e := range evds {
		e.abort()
	}
	for _, c := range cnos {
		c.abort()
	}
	for _, c := range crs {
		c.Reject(nil)
	}
	for _, p := range psps {
		p.Free()
	}
	for _, r := range rsps {
		r.Free()
	}
	for _, ep := range eps {
		ep.free(true)
	}
	for _, s := range srqs {
		s.Free()
	}
	for _, pz := range pzs {
		pz.freeAll()
	}
	for _, e := range evds {
		if e != ia.asyncEVD {
			e.release()
		}
	}
	for _, c := range cnos {
		c.destroy()
	}
}

// children returns a snapshot of one of the IA's sets of children.
func children[K comparable](ia *IA, m map[K]struct{}) []K {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	return keys(m)
}

func keys[K comparable](m map[K]struct{}) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// teardown stops the IA's goroutines and closes its verbs objects.
func (ia *IA) teardown() {
	if ia.cancel != nil {
		ia.cancel()
	}
	ia.loops.Wait()
	if ia.asyncEVD != nil {
		ia.asyncEVD.abort()
		ia.asyncEVD.release()
	}
	ia.mu.Lock()
	if ia.nullCQ != nil {
		ia.nullCQ.Close()
		ia.nullCQ = nil
	}
	if ia.provPZ != nil {
		ia.provPZ.pd.Close()
		ia.provPZ = nil
	}
	ia.mu.Unlock()
	if ia.ech != nil {
		ia.ech.Close()
	}
	if ia.vctx != nil {
		ia.vctx.Close()
	}
}

// getNullCQ returns a CQ for the queue of an EP that has no EVD for it.
func (ia *IA) getNullCQ() (*cverbs.CQ, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if ia.nullCQ == nil {
		cq, err := ia.vctx.NewCQ(1, nil)
		if err != nil {
			return nil, err
		}
		ia.nullCQ = cq
	}
	return ia.nullCQ, nil
}

// addChild registers a child object; it fails once the IA is closing.
func addChild[T comparable](ia *IA, m map[T]struct{}, v T) bool {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if ia.closing {
		return false
	}
	m[v] = struct{}{}
	ia.countChild(v, 1)
	return true
}

func delChild[T comparable](ia *IA, m map[T]struct{}, v T) {
	ia.mu.Lock()
	_, had := m[v]
	delete(m, v)
	ia.mu.Unlock()
	if had {
		ia.countChild(v, -1)
	}
}

// rdmaReadSGE is the largest IOV of an RDMA read: the device's max_sge, or
// its max_sge_rd where that is smaller.
func (ia *IA) rdmaReadSGE() int {
	if r := ia.devAttr.MaxSGERd; r > 0 && r < ia.devAttr.MaxSGE {
		return r
	}
	return ia.devAttr.MaxSGE
}

// maxMessageSize is the largest DTO the device carries (messageLimit of
// its port, kept at open).
func (ia *IA) maxMessageSize() uint64 { return ia.maxMsg }

// messageLimit is the largest DTO a port carries: its max_msg_sz (2^31
// bytes when the device does not say).
func messageLimit(p cverbs.PortAttr) uint64 {
	if p.MaxMsgSize != 0 {
		return uint64(p.MaxMsgSize)
	}
	return 1 << 31
}

// pollCM hands the rdma_cm events already on the IA's channel to
// dispatchCM in the caller's goroutine, as a dequeue does that finds empty
// an EVD that takes them (EVD.pollOther): a program that polls that EVD
// without blocking would otherwise leave the IA's CM goroutine (serveLoop)
// no P to run on until the scheduler preempts it, as late as 10 ms after
// the event.
func (ia *IA) pollCM() { ia.ech.Poll(ia.dispatchCM) }

// serveLoop runs serve until ctx ends. The IA runs one for its rdma_cm
// events (EventChannel.Serve; dispatchCM hands each to its EP, CR or
// service point) and one for the device's asynchronous events
// (Context.ServeAsync; handleAsync makes DAT asynchronous events of them).
// A serve that fails is run again after a pause, so that an error cannot
// make it spin.
func serveLoop(ctx context.Context, wg *sync.WaitGroup, serve func(context.Context) error) {
	defer wg.Done()
	for {
		serve(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// handleAsync turns an asynchronous event of the device into what OFA DAPL
// 2.1 (openib_common) makes of it, where C is sound:
//
//   - a QP's fatal, request or access error, or its send queue drained:
//     DAT_ASYNC_ERROR_EP_BROKEN for its EP, whose connection breaks
//     (unless the connection manager reports its end in time, where the
//     device raises the event as a connection ends: IA.endsStreamWith);
//   - the last receive of an SRQ-attached QP in the error state: the same,
//     once per connection;
//   - a CQ error: DAT_ASYNC_ERROR_EVD_OVERFLOW for its EVD;
//   - the device's fatal error, and an error, LID, P_Key or SM change of
//     the IA's port: DAT_ASYNC_ERROR_IA_CATASTROPHIC;
//   - an SRQ's limit: its low watermark event (dat_srq_set_lw), and an SRQ
//     error DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR (C hands SRQ events to
//     its QP handler, which reads the SRQ as a QP);
//   - path migration, a port that became active, communication established,
//     client reregistration, a GID change, a WQ error: nothing (C posts an
//     event number it never sets for the first three, and ignores the rest).
//
// The IA's counters count them as C does.
func (ia *IA) handleAsync(ev cverbs.AsyncEvent) {
	switch ev.Type {
	case cverbs.EventSRQLimitReached:
		ia.mu.Lock()
		s := ia.srqByVer[ev.SRQ]
		ia.mu.Unlock()
		if s != nil {
			s.limitReached()
		}
	case cverbs.EventSRQErr:
		ia.mu.Lock()
		s := ia.srqByVer[ev.SRQ]
		ia.mu.Unlock()
		if s != nil {
			ia.postAsync(Event{Number: EventAsyncErrorProviderInternalError,
				Async: AsyncErrorData{Handle: s, Reason: SRQTransferToError}})
		}
	case cverbs.EventQPLastWQEReached:
		// An SRQ-attached QP in the error state has taken its last
		// receive: OFA DAPL reports it as the EP broken, and its programs
		// (dtestsrq) wait for that event after each disconnect, once.
		if ep := ia.lookupEP(ev.QPNum); ep != nil && ep.srq != nil && ep.lastWQE.CompareAndSwap(false, true) {
			ia.count(IACounterAsyncQPError)
			ia.postAsync(Event{Number: EventAsyncErrorEPBroken,
				Async: AsyncErrorData{Handle: ep, Reason: EPTransferToError}})
			// A disconnect the Consumer asked for flushed the QP: its
			// end is DISCONNECTED, from the connection manager (or
			// Disconnect's own deadline), as in C, not BROKEN.
			if ep.getState() != EPStateDisconnectPending {
				ep.markBroken()
			}
		}
	case cverbs.EventQPFatal, cverbs.EventQPReqErr, cverbs.EventQPAccessErr, cverbs.EventSQDrained:
		ia.count(IACounterAsyncQPError)
		if ep := ia.lookupEP(ev.QPNum); ep != nil {
			ia.postAsync(Event{Number: EventAsyncErrorEPBroken,
				Async: AsyncErrorData{Handle: ep, Reason: EPTransferToError}})
			if ia.endsStreamWith(ev.Type) {
				ep.flushedByDevice()
			} else {
				ep.markBroken()
			}
		}
	case cverbs.EventCQErr:
		ia.count(IACounterAsyncCQError)
		ia.postAsync(Event{Number: EventAsyncErrorEVDOverflow,
			Async: AsyncErrorData{Handle: ia.evdOfCQ(ev.CQ), Reason: EVDOverflowError}})
	case cverbs.EventPortErr, cverbs.EventLIDChange, cverbs.EventPKeyChange, cverbs.EventSMChange:
		if ev.Port != ia.port {
			return // another port's: not this IA's
		}
		fallthrough
	case cverbs.EventDeviceFatal:
		ia.count(IACounterAsyncError)
		ia.postAsync(Event{Number: EventAsyncErrorIACatastrophic,
			Async: AsyncErrorData{Handle: ia, Reason: IACatastrophicError}})
	case cverbs.EventPathMig, cverbs.EventPathMigErr, cverbs.EventPortActive:
		if ev.Port == ia.port || ev.Type != cverbs.EventPortActive {
			ia.count(IACounterAsyncError) // C counts them, and posts nothing sound
		}
	}
}

func (ia *IA) evdOfCQ(cq *cverbs.CQ) Handle {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	for e := range ia.evds {
		e.mu.Lock()
		mine := cq != nil && (e.cq == cq || e.scq == cq)
		e.mu.Unlock()
		if mine {
			return e
		}
	}
	return nil
}

func (ia *IA) postAsync(ev Event) {
	if e := ia.asyncEVD; e != nil {
		e.pushInternal(ev)
	}
}

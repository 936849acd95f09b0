package cverbs

// DeviceInfo describes an RDMA device found by Devices.
type DeviceInfo struct {
	Name string
	GUID uint64 // node GUID in host byte order
}

// DeviceAttr holds the device limits reported by ibv_query_device.
type DeviceAttr struct {
	FWVer           string
	NodeGUID        uint64 // host byte order
	VendorID        uint32
	VendorPartID    uint32
	HWVer           uint32 // the hardware version (hw_ver)
	MaxMRSize       uint64
	DeviceCapFlags  uint32 // IBV_DEVICE_* bits
	AtomicCap       int    // IBV_ATOMIC_NONE, _HCA or _GLOB
	MaxQP           int
	MaxQPWR         int
	MaxSGE          int
	MaxSGERd        int
	MaxCQ           int
	MaxCQE          int
	MaxMR           int
	MaxPD           int
	MaxQPRdAtom     int
	MaxQPInitRdAtom int
	MaxMW           int
	MaxSRQ          int
	MaxSRQWR        int
	MaxSRQSGE       int
	PhysPortCnt     int
}

// PortState is a port's logical state (enum ibv_port_state values).
type PortState int

// Port states.
const (
	PortNop         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

var portStateNames = [...]string{
	PortNop:         "no state change (NOP)",
	PortDown:        "down",
	PortInit:        "init",
	PortArmed:       "armed",
	PortActive:      "active",
	PortActiveDefer: "active defer",
}

// String returns the libibverbs name of the state (ibv_port_state_str).
func (s PortState) String() string { return enumString(portStateNames[:], int(s), "unknown") }

// Link layers (IBV_LINK_LAYER_* values) reported in PortAttr.LinkLayer.
const (
	LinkLayerUnspecified = 0
	LinkLayerInfiniBand  = 1
	LinkLayerEthernet    = 2
)

// PortAttr holds the port attributes reported by ibv_query_port.
type PortAttr struct {
	State      PortState
	MaxMTU     int // bytes
	ActiveMTU  int // bytes
	GIDTblLen  int
	LID        uint16
	LinkLayer  int // IBV_LINK_LAYER_*
	MaxMsgSize uint32
	PortCap    uint32 // IBV_PORT_* capability bits
}

// GIDType is the type of a GID table entry (enum ibv_gid_type values).
type GIDType int

// GID types.
const (
	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

// GIDEntry is one populated GID table entry (ibv_query_gid_ex).
type GIDEntry struct {
	GID     [16]byte
	Index   int
	Port    uint8
	Type    GIDType
	IfIndex int // netdev behind the entry (RoCE), 0 if none
}

// AsyncEventType is the type of an asynchronous event (enum ibv_event_type).
type AsyncEventType int

// Asynchronous event types.
const (
	EventCQErr            AsyncEventType = 0
	EventQPFatal          AsyncEventType = 1
	EventQPReqErr         AsyncEventType = 2
	EventQPAccessErr      AsyncEventType = 3
	EventCommEst          AsyncEventType = 4
	EventSQDrained        AsyncEventType = 5
	EventPathMig          AsyncEventType = 6
	EventPathMigErr       AsyncEventType = 7
	EventDeviceFatal      AsyncEventType = 8
	EventPortActive       AsyncEventType = 9
	EventPortErr          AsyncEventType = 10
	EventLIDChange        AsyncEventType = 11
	EventPKeyChange       AsyncEventType = 12
	EventSMChange         AsyncEventType = 13
	EventSRQErr           AsyncEventType = 14
	EventSRQLimitReached  AsyncEventType = 15
	EventQPLastWQEReached AsyncEventType = 16
	EventClientReregister AsyncEventType = 17
	EventGIDChange        AsyncEventType = 18
	EventWQFatal          AsyncEventType = 19
)

var asyncEventTypeNames = [...]string{
	EventCQErr:            "CQ error",
	EventQPFatal:          "local work queue catastrophic error",
	EventQPReqErr:         "invalid request local work queue error",
	EventQPAccessErr:      "local access violation work queue error",
	EventCommEst:          "communication established",
	EventSQDrained:        "send queue drained",
	EventPathMig:          "path migrated",
	EventPathMigErr:       "path migration request error",
	EventDeviceFatal:      "local catastrophic error",
	EventPortActive:       "port active",
	EventPortErr:          "port error",
	EventLIDChange:        "LID change",
	EventPKeyChange:       "P_Key change",
	EventSMChange:         "SM change",
	EventSRQErr:           "SRQ catastrophic error",
	EventSRQLimitReached:  "SRQ limit reached",
	EventQPLastWQEReached: "last WQE reached",
	EventClientReregister: "client reregistration",
	EventGIDChange:        "GID table change",
	EventWQFatal:          "WQ fatal",
}

// String returns the libibverbs description of the event type
// (ibv_event_type_str).
func (t AsyncEventType) String() string {
	return enumString(asyncEventTypeNames[:], int(t), "unknown")
}

// AsyncEvent is an asynchronous event of a device, copied out of
// struct ibv_async_event. Only the fields that apply to Type are set.
type AsyncEvent struct {
	Type  AsyncEventType
	QPNum uint32
	QP    *QP // the QP of a QP event, if it was made by this package
	SRQ   *SRQ
	CQ    *CQ
	Port  uint8
}

// Context is an opened RDMA device.
type Context struct{ cgoContext }

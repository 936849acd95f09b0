package cverbs

// CMEventType is the type of an rdma_cm event (enum rdma_cm_event_type).
type CMEventType int

// rdma_cm event types.
const (
	CMEventAddrResolved    CMEventType = 0
	CMEventAddrError       CMEventType = 1
	CMEventRouteResolved   CMEventType = 2
	CMEventRouteError      CMEventType = 3
	CMEventConnectRequest  CMEventType = 4
	CMEventConnectResponse CMEventType = 5
	CMEventConnectError    CMEventType = 6
	CMEventUnreachable     CMEventType = 7
	CMEventRejected        CMEventType = 8
	CMEventEstablished     CMEventType = 9
	CMEventDisconnected    CMEventType = 10
	CMEventDeviceRemoval   CMEventType = 11
	CMEventMulticastJoin   CMEventType = 12
	CMEventMulticastError  CMEventType = 13
	CMEventAddrChange      CMEventType = 14
	CMEventTimeWaitExit    CMEventType = 15
)

var cmEventTypeNames = [...]string{
	CMEventAddrResolved:    "RDMA_CM_EVENT_ADDR_RESOLVED",
	CMEventAddrError:       "RDMA_CM_EVENT_ADDR_ERROR",
	CMEventRouteResolved:   "RDMA_CM_EVENT_ROUTE_RESOLVED",
	CMEventRouteError:      "RDMA_CM_EVENT_ROUTE_ERROR",
	CMEventConnectRequest:  "RDMA_CM_EVENT_CONNECT_REQUEST",
	CMEventConnectResponse: "RDMA_CM_EVENT_CONNECT_RESPONSE",
	CMEventConnectError:    "RDMA_CM_EVENT_CONNECT_ERROR",
	CMEventUnreachable:     "RDMA_CM_EVENT_UNREACHABLE",
	CMEventRejected:        "RDMA_CM_EVENT_REJECTED",
	CMEventEstablished:     "RDMA_CM_EVENT_ESTABLISHED",
	CMEventDisconnected:    "RDMA_CM_EVENT_DISCONNECTED",
	CMEventDeviceRemoval:   "RDMA_CM_EVENT_DEVICE_REMOVAL",
	CMEventMulticastJoin:   "RDMA_CM_EVENT_MULTICAST_JOIN",
	CMEventMulticastError:  "RDMA_CM_EVENT_MULTICAST_ERROR",
	CMEventAddrChange:      "RDMA_CM_EVENT_ADDR_CHANGE",
	CMEventTimeWaitExit:    "RDMA_CM_EVENT_TIMEWAIT_EXIT",
}

// String returns librdmacm's name of the event type (rdma_event_str).
func (t CMEventType) String() string {
	return enumString(cmEventTypeNames[:], int(t), "UNKNOWN EVENT")
}

// CMEvent is an rdma_cm event copied out of struct rdma_cm_event (which is
// already acknowledged). For CMEventConnectRequest, ID is a new *CMID for the
// incoming connection (Accept, Reject or Close it) and ListenID the listener.
type CMEvent struct {
	Type               CMEventType
	ID                 *CMID
	ListenID           *CMID
	Status             int // negative errno, or the reject reason for CMEventRejected
	PrivateData        []byte
	ResponderResources uint8
	InitiatorDepth     uint8
	QPNum              uint32 // the peer's QP number (connect request/response)
	SRQ                bool   // the peer's QP uses an SRQ
	// UD is set for the events of an id in RDMA_PS_UDP (CreateUDID), which
	// carry param.ud: QPNum and QKey of the peer's UD QP and AHAttr, the
	// address vector to reach it (CMEventEstablished on the active side).
	UD     bool
	QKey   uint32
	AHAttr AHAttr
}

// ConnParam are the rdma_conn_param of Connect and Accept. QPNum is needed
// only when the id has no QP of its own (an external QP, see ModifyQP); SRQ
// then tells the peer whether that QP uses an SRQ.
type ConnParam struct {
	PrivateData        []byte
	ResponderResources uint8
	InitiatorDepth     uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	FlowControl        bool
	QPNum              uint32
	SRQ                bool
}

// EventChannel is an rdma_cm event channel. Its descriptor is non-blocking
// so GetEvent waits through the netpoller.
type EventChannel struct{ cgoEventChannel }

// CMID is an rdma_cm identifier (RDMA_PS_TCP, RC).
type CMID struct {
	// Context is free for the user.
	Context any

	cgoCMID
}

package cverbs

// Transport is the transport of a device (enum ibv_transport_type values),
// as Context.Transport reports it. InfiniBand and RoCE devices (rxe) are
// TransportIB; iWARP devices (siw) are TransportIWARP. An iWARP device has
// no UD QPs, no atomics and no immediate data, its QPs reach RTS only
// through rdma_cm, and its ports' GID tables hold the MAC address of their
// network interface rather than GIDs with network interface attributes.
type Transport int

// Transports.
const (
	TransportUnknown     Transport = -1
	TransportIB          Transport = 0
	TransportIWARP       Transport = 1
	TransportUSNIC       Transport = 2
	TransportUSNICUDP    Transport = 3
	TransportUnspecified Transport = 4
)

var transportNames = [...]string{
	TransportIB:          "InfiniBand",
	TransportIWARP:       "iWARP",
	TransportUSNIC:       "usNIC",
	TransportUSNICUDP:    "usNIC UDP",
	TransportUnspecified: "unspecified",
}

// String returns the name ibv_devinfo prints for the transport.
func (t Transport) String() string {
	return enumString(transportNames[:], int(t), "invalid transport")
}

package cverbs

// UDPQKey is RDMA_UDP_QKEY: the qkey of the UD QPs of rdma_cm's
// RDMA_PS_UDP port space, which the peers of a SIDR exchange use.
const UDPQKey = 0x01234567

// GRHSize is the size of the Global Routing Header a UD receive buffer gets
// in front of the datagram (struct ibv_grh), whether the packet had one or
// not.
const GRHSize = 40

// GlobalRoute is the global routing part of an address vector (struct
// ibv_global_route).
type GlobalRoute struct {
	DGID         [16]byte
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
}

// AHAttr is an address vector (struct ibv_ah_attr): where a UD datagram
// goes. On RoCE IsGlobal is required, with the GID index of the local
// address in GRH.SGIDIndex.
type AHAttr struct {
	GRH         GlobalRoute
	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	StaticRate  uint8
	IsGlobal    bool
	PortNum     uint8
}

// AH is an address handle (struct ibv_ah): the destination of UD sends
// (SendWR.AH).
type AH struct{ cgoAH }

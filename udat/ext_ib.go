package udat

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/udapl-go/udapl/cverbs"
)

// The InfiniBand extensions of OFA DAPL 2.x (dat_ib_extensions.h,
// DAT_IB_EXTENSION_VERSION 209): RDMA write with immediate data, the two
// atomics, and the extended completions that report them. A C program calls
// them through dat_extension_op; here they are methods of EP that
// PostRequests batches too. Sends with immediate data (which C can only
// receive) are a Go addition.

// IBExtensionVersion is DAT_IB_EXTENSION_VERSION: the version of the IB
// extensions IA.Query reports with ExtensionIB.
const IBExtensionVersion = 209

// EventIBDTO is DAT_IB_DTO_EVENT: the completion of an extended DTO. Its
// DTO field is filled as for EventDTOCompletion (Op is one of the DTOIB
// values) and its IB field says more.
const EventIBDTO EventNumber = 0x40000

// The extended DTO operations (DAT_IB_DTOS).
const (
	// DTOIBRDMAWriteImmed is DAT_IB_DTO_RDMA_WRITE_IMMED: an RDMA write
	// with immediate data, on the side that posted it.
	DTOIBRDMAWriteImmed DTOOp = DTOExtensionBase + iota
	// DTOIBRecvImmed is DAT_IB_DTO_RECV_IMMED: a receive consumed by the
	// peer's RDMA write with immediate data.
	DTOIBRecvImmed
	// DTOIBFetchAdd is DAT_IB_DTO_FETCH_ADD: an atomic fetch-and-add.
	DTOIBFetchAdd
	// DTOIBCmpSwap is DAT_IB_DTO_CMP_SWAP: an atomic compare-and-swap.
	DTOIBCmpSwap
	// DTOIBRecvMsgImmed is DAT_IB_DTO_RECV_MSG_IMMED: a receive of a
	// message sent with immediate data.
	DTOIBRecvMsgImmed
)

// MemPrivIBRemoteAtomic is DAT_IB_MEM_PRIV_REMOTE_ATOMIC: the peer may
// operate on the LMR's memory with the atomics.
const MemPrivIBRemoteAtomic = MemPrivExtensionBase

// IBExtType is a DAT_IB_EXT_TYPE value: what an EventIBDTO reports.
type IBExtType uint32

// Extended completion types.
const (
	// IBFetchAndAdd is DAT_IB_FETCH_AND_ADD.
	IBFetchAndAdd IBExtType = 0
	// IBCmpAndSwap is DAT_IB_CMP_AND_SWAP.
	IBCmpAndSwap IBExtType = 1
	// IBRDMAWriteImmed is DAT_IB_RDMA_WRITE_IMMED: the writer's side.
	IBRDMAWriteImmed IBExtType = 2
	// IBRDMAWriteImmedData is DAT_IB_RDMA_WRITE_IMMED_DATA: the target's
	// side, with ImmedData.
	IBRDMAWriteImmedData IBExtType = 3
	// IBRecvImmedData is DAT_IB_RECV_IMMED_DATA: a message received with
	// ImmedData.
	IBRecvImmedData IBExtType = 4
)

// IBStatus is a DAT_IB_STATUS value.
type IBStatus uint32

// Extended completion statuses.
const (
	// IBOpSuccess is DAT_OP_SUCCESS.
	IBOpSuccess IBStatus = 0
	// IBOpErr is DAT_IB_OP_ERR: the DTO did not succeed (its DTO status
	// says why).
	IBOpErr IBStatus = 1
)

// IBExtensionData is the extension data of an EventIBDTO
// (DAT_IB_EXTENSION_EVENT_DATA). ImmedData is meaningful for
// IBRDMAWriteImmedData and IBRecvImmedData.
type IBExtensionData struct {
	Type      IBExtType
	Status    IBStatus
	ImmedData uint32
	// RemoteAH is the peer of a UD event (ud.go): the new address handle
	// of EventIBUDConnectionEstablished, the sender's QPN of a DTOIBRecvUD.
	RemoteAH IBAddrHandle
	// CM is the connection state of the UD connection events (C's
	// context), for EP.UDCMFree.
	CM *UDCM
}

// PostRDMAWriteImmed writes localIOV to remote as PostRDMAWrite does and
// then delivers immed to the peer (dat_ib_post_rdma_write_immed). The write
// consumes one of the peer's receives, which completes as DTOIBRecvImmed
// with the immediate data; the writer's completion is an EventIBDTO with
// Op DTOIBRDMAWriteImmed.
func (ep *EP) PostRDMAWriteImmed(localIOV []LMRTriplet, cookie uint64, remote RMRTriplet, immed uint32, flags CompletionFlags) error {
	return ep.postOne(&Request{Op: DTOIBRDMAWriteImmed, LocalIOV: localIOV, Cookie: cookie, Remote: remote, Immed: immed, Flags: flags})
}

// PostSendImmed sends localIOV with immediate data as PostSend does; the
// peer's receive completes as DTOIBRecvMsgImmed with immed. This is an
// addition to the C extensions, which can receive such a message but not
// send one. The sender's completion is an ordinary send completion.
func (ep *EP) PostSendImmed(localIOV []LMRTriplet, cookie uint64, immed uint32, flags CompletionFlags) error {
	return ep.postOne(&Request{Op: DTOSend, LocalIOV: localIOV, Cookie: cookie, Immed: immed, WithImmed: true, Flags: flags})
}

// PostFetchAndAdd adds addValue to the 8 bytes at remote and stores their
// old value in local (dat_ib_post_fetch_and_add). local is one segment of
// 8 bytes of an LMR with the local write privilege; remote, 8-byte aligned,
// names at least 8 bytes of the peer's memory registered with
// MemPrivIBRemoteAtomic, and the atomic works on its first 8 (C passes a
// whole RMR triplet as it came from the peer; only its address and
// context count). The completion is an EventIBDTO with Op
// DTOIBFetchAdd and a transferred length of 8.
func (ep *EP) PostFetchAndAdd(addValue uint64, local LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	iov := [1]LMRTriplet{local}
	return ep.postOne(&Request{Op: DTOIBFetchAdd, LocalIOV: iov[:], Cookie: cookie, Remote: remote, Add: addValue, Flags: flags})
}

// PostCmpAndSwap compares the 8 bytes at remote with compareValue, stores
// swapValue there if they are equal, and in every case stores their old
// value in local (dat_ib_post_cmp_and_swap). The rules of PostFetchAndAdd
// apply; the completion's Op is DTOIBCmpSwap.
func (ep *EP) PostCmpAndSwap(compareValue, swapValue uint64, local LMRTriplet, cookie uint64, remote RMRTriplet, flags CompletionFlags) error {
	iov := [1]LMRTriplet{local}
	return ep.postOne(&Request{Op: DTOIBCmpSwap, LocalIOV: iov[:], Cookie: cookie, Remote: remote,
		Compare: compareValue, Swap: swapValue, Flags: flags})
}

// daplImmed converts between immediate data as DAT gives it and the
// host-order value of a verbs work request or completion, both ways. OFA
// DAPL stores the consumer's value in the big-endian imm_data field without
// converting it, and reads it back so, which puts host-order bytes on the
// wire: a Go peer has to do the same to agree with a C one.
func daplImmed(v uint32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	return binary.BigEndian.Uint32(b[:])
}

// atomicSize is the size of the operand of an atomic, in both memories.
const atomicSize = 8

// checkAtomic makes the checks the atomics add to those of every request:
// an 8-byte local buffer, an 8-byte aligned remote one of at least 8
// bytes, and a device and connection that do atomics. total is the local
// length.
func (ep *EP) checkAtomic(o *requestOp, req *Request, total uint64) error {
	if total != atomicSize {
		return newErrorDetail(o.name, InvalidParameter|o.iovArg, "an atomic's local buffer is 8 bytes")
	}
	if req.Remote.SegmentLength < atomicSize || req.Remote.VirtualAddress%atomicSize != 0 {
		return newErrorDetail(o.name, InvalidParameter|o.remoteArg, "an atomic's remote buffer is at least 8 bytes, 8-byte aligned")
	}
	if ep.ia.devAttr.AtomicCap == atomicNone || ep.attr.MaxRDMAReadOut == 0 {
		return newError(o.name, ModelNotSupported)
	}
	return nil
}

// atomicNone is IBV_ATOMIC_NONE: the device does no atomics.
const atomicNone = 0

// recvOpOf is the operation a successful receive completion reports: a
// plain receive, or one that carried immediate data.
func recvOpOf(wc *cverbs.WC) DTOOp {
	switch {
	case wc.Opcode == cverbs.WCRecvRDMAWithImm:
		return DTOIBRecvImmed
	case wc.Flags&cverbs.WCFlagWithImm != 0:
		return DTOIBRecvMsgImmed
	}
	return DTOReceive
}

// ibExtension is the extension data of the completion of an extended DTO
// (op is one of the DTOIB values).
func ibExtension(op DTOOp, status DTOStatus, immed uint32) IBExtensionData {
	x := IBExtensionData{Status: IBOpSuccess}
	if status != DTOSuccess {
		x.Status = IBOpErr
	}
	switch op {
	case DTOIBRDMAWriteImmed:
		x.Type = IBRDMAWriteImmed
	case DTOIBRecvImmed:
		x.Type, x.ImmedData = IBRDMAWriteImmedData, immed
	case DTOIBRecvMsgImmed:
		x.Type, x.ImmedData = IBRecvImmedData, immed
	case DTOIBFetchAdd:
		x.Type = IBFetchAndAdd
	case DTOIBCmpSwap:
		x.Type = IBCmpAndSwap
	case DTOIBSendUD:
		x.Type = IBUDSend
	case DTOIBRecvUD:
		x.Type = IBUDRecv
	case DTOIBRecvUDImmed:
		x.Type, x.ImmedData = IBUDRecv, immed
	}
	return x
}

// ibProviderAttrs are the provider-specific attributes IA.Query reports:
// the names, order and value formats of OFA DAPL's openib providers, which
// dtest and dtestsrq read (DAT_IB_RDMA_READ, DAT_IB_TRANSPORT_MTU), then the
// IB extensions the device supports.
func (ia *IA) ibProviderAttrs() []NamedAttr {
	attrs := []NamedAttr{
		{"DAT_IB_PROVIDER_NAME", "CMA"}, // connections go through rdma_cm, as with OFA's cma provider
		{"DAT_IB_DEVICE_NAME", ia.dev},
		{"DAT_IB_CONNECTIVITY_MODE", "DIRECT"},
		{"DAT_IB_RDMA_READ", "TRUE"},
		{"DAT_IB_NODE_GUID", hexGroups(binary.BigEndian.AppendUint64(nil, ia.devAttr.NodeGUID))},
	}
	if gid, err := ia.vctx.QueryGID(ia.port, 0); err == nil {
		attrs = append(attrs, NamedAttr{"DAT_IB_GID", hexGroups(gid[:])})
	}
	attrs = append(attrs,
		NamedAttr{"DAT_IB_TRANSPORT_MTU", strconv.Itoa(ia.portAttr.ActiveMTU)},
		NamedAttr{"DAT_IB_PORT_STATUS", strings.ReplaceAll(strings.ToUpper(ia.portAttr.State.String()), " ", "_")},
		NamedAttr{"DAT_IB_PORT_NUMBER", strconv.Itoa(int(ia.port))},
		NamedAttr{"DAT_EXTENSION_INTERFACE", "TRUE"},
	)
	if ia.devAttr.AtomicCap != atomicNone {
		attrs = append(attrs, NamedAttr{"DAT_IB_FETCH_AND_ADD", "TRUE"}, NamedAttr{"DAT_IB_CMP_AND_SWAP", "TRUE"})
	}
	return append(attrs, NamedAttr{"DAT_IB_IMMED_DATA", "TRUE"})
}

// hexGroups formats b as groups of four hex digits joined by colons, as
// OFA DAPL prints GUIDs and GIDs ("fe80:0000:...").
func hexGroups(b []byte) string {
	var sb strings.Builder
	for i := 0; i+1 < len(b); i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%02x%02x", b[i], b[i+1])
	}
	return sb.String()
}

package udat

import (
	"net"

	"github.com/udapl-go/udapl/cverbs"
)

// What an IA offers besides RC connections follows its device's transport.
// InfiniBand and RoCE devices (TransportIB: rxe) have UD QPs, immediate
// data and, when the device says so, atomics: the IB extensions of
// ext_ib.go. An iWARP device (siw) has none of them, and OFA DAPL's cma
// provider reports no extension for it (extension_supported 0, and FALSE
// for DAT_EXTENSION_INTERFACE, the atomics and DAT_IB_IMMED_DATA).

// ibTransport reports whether the IA's device is InfiniBand or RoCE.
func (ia *IA) ibTransport() bool { return ia.transport == cverbs.TransportIB }

// interruptedByQPError reports whether a completion status is an iWARP
// device's report of the DTO it was carrying out when its QP entered the
// error state: soft-iWARP ends that DTO with a local QP operation error and
// the others with a flush, whether the library moved the QP (the EP freed or
// disconnected) or the stream ended (a peer's disconnect, a lost link). It
// reports its own local errors otherwise (length, protection), so the DTO
// was flushed like the others, as on InfiniBand.
func (ia *IA) interruptedByQPError(s cverbs.WCStatus) bool {
	return s == cverbs.WCLocQPOpErr && !ia.ibTransport()
}

// endsStreamWith reports whether the device raises the QP event t as a
// connection ends, graceful or not, so that it tells no more than a
// flushed completion the library did not cause (EP.flushedByDevice): the
// connection manager has a moment to report the end. Soft-iWARP fails
// what it was sending as the stream closes, whoever closed it
// (siw_qp_sq_process): QP_FATAL for a send or RDMA write, QP_REQ_ERR for
// a read response; and it raises SQ_DRAINED whenever it flushes a send
// queue. (A read response it refuses, out of bounds or rights, is also
// QP_REQ_ERR and closes the stream: DISCONNECTED then, as in C.) A peer's
// access out of bounds or rights here is QP_ACCESS_ERR, which breaks the
// connection on any device.
func (ia *IA) endsStreamWith(t cverbs.AsyncEventType) bool {
	return !ia.ibTransport() && (t == cverbs.EventQPFatal || t == cverbs.EventQPReqErr || t == cverbs.EventSQDrained)
}

// hasUD reports whether the device has UD QPs, and so UD EPs and UD
// connection requests (RDMA_PS_UDP).
func (ia *IA) hasUD() bool { return ia.ibTransport() }

// hasImmediate reports whether the device carries immediate data.
func (ia *IA) hasImmediate() bool { return ia.ibTransport() }

// hasAtomics reports whether the device does the IB atomics.
func (ia *IA) hasAtomics() bool { return ia.ibTransport() && ia.devAttr.AtomicCap != atomicNone }

// hasRNRRetry reports whether a send waits, resent, for the peer to post a
// receive (IB's receiver-not-ready retry). On iWARP a send that finds no
// receive breaks the connection.
func (ia *IA) hasRNRRetry() bool { return ia.ibTransport() }

// privateDataLimits are the most private data, in bytes, a Consumer may
// give a connect, an accept and a reject (after DAT's reject header).
type privateDataLimits struct{ connect, accept, reject int }

// privateDataLimitsOf returns the limits of a transport. On InfiniBand and
// RoCE they are what the IB CM's REQ (92 bytes) and REP (196) leave after
// rdma_cm's 36-byte header, and its REJ (148) after DAT's reject header, as
// in C. On iWARP, MPA version 2 puts its 4-byte IRD and ORD header in the
// private data, whose length is one byte: 251 bytes are left (measured on
// soft-iWARP, Linux 6.1 and 6.12). C's cma provider allows 252 there, which
// the peer never receives: the connect is refused, the accept leaves the
// passive side ESTABLISHED and the active side UNREACHABLE.
func privateDataLimitsOf(t cverbs.Transport) privateDataLimits {
	if t == cverbs.TransportIB {
		return privateDataLimits{connect: 56, accept: 160, reject: 144}
	}
	const mpa = 255 - 4
	return privateDataLimits{connect: mpa, accept: mpa, reject: mpa - len(rejectHeader)}
}

// linkDown reports whether the IA's network interface has stopped running
// (taken down, its carrier lost, or gone). Only iWARP asks: its connection
// manager reports a connection that a link loss ended as an orderly end
// (soft-iWARP moves every QP to the error state as its interface goes
// down), where InfiniBand and RoCE fail the DTOs. An interface stops
// running as it starts going down, before soft-iWARP fails its QPs.
func (ia *IA) linkDown() bool {
	if ia.ibTransport() || ia.netdev == "" {
		return false
	}
	ifi, err := net.InterfaceByName(ia.netdev)
	return err != nil || ifi.Flags&net.FlagRunning == 0
}

// siwVendorID is soft-iWARP's vendor_id ("bmt").
const siwVendorID = 0x626d74

// solicitedNotifies reports whether the device wakes a CQ armed for
// solicited completions only when a solicited receive completes.
// Soft-iWARP never does: it matches a receive's completion against a
// solicited-only arm without the receive's solicited mark. There the
// solicited CQ is armed for every completion, so that a receive that
// asked for solicited wait wakes its waiter like any other: one woken
// early dequeues an event it did not wait for, one never woken would hang.
func (ia *IA) solicitedNotifies() bool { return ia.devAttr.VendorID != siwVendorID }

// completesLatePosts reports whether the device completes, flushed, the
// work requests posted to a QP in the error state. Soft-iWARP flushes its
// queues once, as the QP enters that state, and never completes what is
// posted later: a flush marker would never come back, and what the flush
// left is settled at once (EP.flushQueues).
func (ia *IA) completesLatePosts() bool { return ia.devAttr.VendorID != siwVendorID }

// completesInOrder reports whether a completion of the send queue proves
// that every request posted before it is done, as InfiniBand orders them.
// Soft-iWARP completes a send or RDMA write as soon as it has left
// (siw_qp_sq_process), while an RDMA read posted before it still waits for
// its response: there an unsignalled read would be taken as done, its
// buffer not yet written, by the completion of a later request. Such a
// read is posted signalled instead, its slot quiet (dtoSlot.quiet).
func (ia *IA) completesInOrder() bool { return ia.devAttr.VendorID != siwVendorID }

// fencesReads reports whether the device fences an RDMA read
// (IBV_SEND_FENCE). Soft-iWARP fences any other request, never a read:
// siw_activate_tx_from_sq refuses a fenced read with EINVAL when libsiw
// rings its doorbell, with the read left at the head of the send queue,
// which then stalls until the QP's flush. There a fenced read goes
// unfenced behind a fenced zero-length RDMA write of its own
// (postRequests), which waits for the earlier reads as the fence asks.
func (ia *IA) fencesReads() bool { return ia.devAttr.VendorID != siwVendorID }

// emptyRecvs reports whether the device takes a receive without segments,
// for a zero-byte message or an RDMA write with immediate data.
// Soft-iWARP refuses one.
func (ia *IA) emptyRecvs() bool { return ia.devAttr.VendorID != siwVendorID }

// errNoEmptyRecv is the error of a receive without segments on a device
// that takes none: its number of segments is refused.
func errNoEmptyRecv(op string) error {
	return newErrorDetail(op, InvalidParameter|InvalidArg2, "the device takes no receive without segments")
}

// extension returns the DAT extension the IA supports: the IB extension on
// InfiniBand and RoCE, none otherwise, as in C.
func (ia *IA) extension() Extension {
	if ia.ibTransport() {
		return ExtensionIB
	}
	return ExtensionNone
}

// The provider-specific attributes that say what the device can do, in
// the order C lists them.
var capabilityAttrs = [...]string{"DAT_EXTENSION_INTERFACE", "DAT_IB_FETCH_AND_ADD", "DAT_IB_CMP_AND_SWAP", "DAT_IB_IMMED_DATA"}

// providerSpecificAttrs returns the provider-specific attributes of
// ibProviderAttrs with the capability attributes (capabilityAttrs) set from
// the device, each TRUE or FALSE as C gives it: all four, in C's order, in
// the place of the first of them; then DAT_COUNTERS, TRUE on every device
// (counters.go), where a C library built with DAPL_COUNTERS lists it.
func (ia *IA) providerSpecificAttrs() []NamedAttr {
	has := map[string]bool{
		"DAT_EXTENSION_INTERFACE": ia.extension() != ExtensionNone,
		"DAT_IB_FETCH_AND_ADD":    ia.hasAtomics(),
		"DAT_IB_CMP_AND_SWAP":     ia.hasAtomics(),
		"DAT_IB_IMMED_DATA":       ia.hasImmediate(),
	}
	attrs := ia.ibProviderAttrs()
	out := make([]NamedAttr, 0, len(attrs)+len(capabilityAttrs))
	at := -1
	for _, a := range attrs {
		if _, ok := has[a.Name]; ok {
			if at < 0 {
				at = len(out)
			}
			continue
		}
		out = append(out, a)
	}
	if at < 0 {
		at = len(out)
	}
	caps := make([]NamedAttr, 0, len(capabilityAttrs))
	for _, name := range capabilityAttrs {
		v := "FALSE"
		if has[name] {
			v = "TRUE"
		}
		caps = append(caps, NamedAttr{name, v})
	}
	return append(append(out[:at], append(caps, out[at:]...)...), NamedAttr{countersAttr, "TRUE"})
}

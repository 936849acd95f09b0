package udat

import "github.com/udapl-go/udapl/cverbs"

// EPParamMask selects the fields of EPParam that Modify changes
// (DAT_EP_PARAM_MASK values).
type EPParamMask uint64

// EP parameter mask bits (DAT_EP_FIELD_*).
const (
	EPFieldIAHandle              EPParamMask = 0x00000001 // DAT_EP_FIELD_IA_HANDLE
	EPFieldEPState               EPParamMask = 0x00000002 // DAT_EP_FIELD_EP_STATE
	EPFieldComm                  EPParamMask = 0x00000004 // DAT_EP_FIELD_COMM
	EPFieldLocalIAAddress        EPParamMask = 0x00000008 // DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR
	EPFieldLocalPortQual         EPParamMask = 0x00000010 // DAT_EP_FIELD_LOCAL_PORT_QUAL
	EPFieldRemoteIAAddress       EPParamMask = 0x00000020 // DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR
	EPFieldRemotePortQual        EPParamMask = 0x00000040 // DAT_EP_FIELD_REMOTE_PORT_QUAL
	EPFieldPZ                    EPParamMask = 0x00000080 // DAT_EP_FIELD_PZ_HANDLE
	EPFieldRecvEVD               EPParamMask = 0x00000100 // DAT_EP_FIELD_RECV_EVD_HANDLE
	EPFieldRequestEVD            EPParamMask = 0x00000200 // DAT_EP_FIELD_REQUEST_EVD_HANDLE
	EPFieldConnectEVD            EPParamMask = 0x00000400 // DAT_EP_FIELD_CONNECT_EVD_HANDLE
	EPFieldSRQ                   EPParamMask = 0x00000800 // DAT_EP_FIELD_SRQ_HANDLE
	EPFieldServiceType           EPParamMask = 0x00001000 // DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE
	EPFieldMaxMessageSize        EPParamMask = 0x00002000 // DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE
	EPFieldMaxRDMASize           EPParamMask = 0x00004000 // DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE
	EPFieldQoS                   EPParamMask = 0x00008000 // DAT_EP_FIELD_EP_ATTR_QOS
	EPFieldRecvCompletionFlags   EPParamMask = 0x00010000 // DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS
	EPFieldRequestCompletionFlag EPParamMask = 0x00020000 // DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS
	EPFieldMaxRecvDTOs           EPParamMask = 0x00040000 // DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS
	EPFieldMaxRequestDTOs        EPParamMask = 0x00080000 // DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS
	EPFieldMaxRecvIOV            EPParamMask = 0x00100000 // DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV
	EPFieldMaxRequestIOV         EPParamMask = 0x00200000 // DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV
	EPFieldMaxRDMAReadIn         EPParamMask = 0x00400000 // DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN
	EPFieldMaxRDMAReadOut        EPParamMask = 0x00800000 // DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT
	EPFieldSRQSoftHW             EPParamMask = 0x01000000 // DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW
	EPFieldMaxRDMAReadIOV        EPParamMask = 0x02000000 // DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV
	EPFieldMaxRDMAWriteIOV       EPParamMask = 0x04000000 // DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV
	EPFieldNumTransportAttr      EPParamMask = 0x08000000 // DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR
	EPFieldTransportSpecificAttr EPParamMask = 0x10000000 // DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR
	EPFieldNumProviderAttr       EPParamMask = 0x20000000 // DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR
	EPFieldProviderSpecificAttr  EPParamMask = 0x40000000 // DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR
	EPFieldEPAttrAll             EPParamMask = 0x7FFFF000 // DAT_EP_FIELD_EP_ATTR_ALL
	EPFieldAll                   EPParamMask = 0x7FFFFFFF // DAT_EP_FIELD_ALL
)

const (
	// epFieldsFixed can never change: the IA, state, addresses and port
	// qualifiers, the SRQ, and the transport- and provider-specific
	// attributes, of which this provider has none.
	epFieldsFixed = EPFieldIAHandle | EPFieldEPState | EPFieldComm | EPFieldLocalIAAddress |
		EPFieldLocalPortQual | EPFieldRemoteIAAddress | EPFieldRemotePortQual | EPFieldSRQ |
		EPFieldNumTransportAttr | EPFieldTransportSpecificAttr | EPFieldNumProviderAttr |
		EPFieldProviderSpecificAttr
	// epFieldsQP are built into the queue pair: changing them makes a new
	// one.
	epFieldsQP = EPFieldPZ | EPFieldRecvEVD | EPFieldRequestEVD | EPFieldMaxRecvDTOs |
		EPFieldMaxRequestDTOs | EPFieldMaxRecvIOV | EPFieldMaxRequestIOV | EPFieldMaxRDMAReadIOV |
		EPFieldMaxRDMAWriteIOV | EPFieldRecvCompletionFlags
)

// Modify changes EP parameters (dat_ep_modify): the fields of p that mask
// selects. As the man page allows:
//
//   - the PZ while the EP is UNCONNECTED or TENTATIVE_CONNECTION_PENDING (a
//     PSPProviderFlag EP);
//   - the EVDs (nil: none), service type, sizes, QoS, completion flags, DTO
//     counts, IOV sizes, RDMA read depths and SRQ soft high watermark while
//     it is UNCONNECTED, RESERVED, PASSIVE_CONNECTION_PENDING or
//     TENTATIVE_CONNECTION_PENDING.
//
// Other states give DAT_INVALID_STATE; mask bits of fields that never change
// (IA, state, addresses, port qualifiers, SRQ, transport- and
// provider-specific attributes) and bad values give DAT_INVALID_PARAMETER
// (DAT_INVALID_ARG2 for the mask, DAT_INVALID_ARG3 for a value), as do
// receive counts or IOV sizes on an EP that uses an SRQ and a PZ other than
// its SRQ's. Values are checked as by CreateEP.
//
// The PZ, the receive and request EVDs, the DTO counts, the IOV sizes and
// solicited wait in RecvCompletionFlags are built into the EP's queue pair:
// changing one gives the EP a new queue pair, and moves the room its queues
// take from the old EVDs' completion queues to the new ones (see cqsize.go).
// That needs an EP with no DTO posted (DAT_INVALID_STATE otherwise: C drops
// posted receives there). On failure nothing changes. Like any call that
// changes an EP, Modify must not run concurrently with posts on it.
func (ep *EP) Modify(mask EPParamMask, p EPParam) error {
	const op = "dat_ep_modify"
	if err := ep.check(op); err != nil {
		return err
	}
	if mask&^EPFieldAll != 0 || mask&epFieldsFixed != 0 {
		return newError(op, InvalidParameter|InvalidArg2)
	}
	if mask&epFieldsQP != 0 {
		ep.reap() // completions waiting in the device free ring slots
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.freeing {
		return badHandle(op, HandleTypeEP)
	}
	s := ep.getState()
	quiescent := s == EPStateUnconnected || s == EPStateTentativeConnectionPending
	beforeConnect := quiescent || s == EPStateReserved || s == EPStatePassiveConnectionPending
	if (mask&EPFieldPZ != 0 && !quiescent) || (mask != 0 && !beforeConnect) {
		return newError(op, InvalidState|stateSubtype(s))
	}
	next, err := ep.modified(op, mask, p)
	if err != nil {
		return err
	}
	if next.needsQP(ep) {
		if err := ep.rebuild(op, &next); err != nil {
			return err
		}
	}
	ep.attr = next.attr
	if next.connEVD != ep.connEVD {
		if next.connEVD != nil {
			next.connEVD.ref(1)
		}
		if ep.connEVD != nil {
			ep.connEVD.ref(-1)
		}
		ep.connEVD = next.connEVD
	}
	return nil
}

// epConfig is what Modify can change.
type epConfig struct {
	pz                       *PZ
	recvEVD, reqEVD, connEVD *EVD
	attr                     EPAttr
}

// modified returns the EP's configuration with the changes mask asks for,
// checked. Caller holds ep.mu.
func (ep *EP) modified(op string, mask EPParamMask, p EPParam) (epConfig, error) {
	bad := newError(op, InvalidParameter|InvalidArg3)
	c := epConfig{pz: ep.pz, recvEVD: ep.recvEVD, reqEVD: ep.reqEVD, connEVD: ep.connEVD, attr: ep.attr}
	if mask&EPFieldPZ != 0 {
		if p.PZ == nil || p.PZ.dead() || p.PZ.ia != ep.ia || (ep.srq != nil && p.PZ != ep.srq.pz) {
			return c, bad
		}
		c.pz = p.PZ
	}
	evd := func(e *EVD, flag EVDFlags) bool {
		return e == nil || (!e.dead() && e.ia == ep.ia && e.flags&flag != 0)
	}
	if mask&EPFieldRecvEVD != 0 {
		if !evd(p.RecvEVD, EVDDTOFlag) {
			return c, bad
		}
		c.recvEVD = p.RecvEVD
	}
	if mask&EPFieldRequestEVD != 0 {
		if !evd(p.RequestEVD, EVDDTOFlag) {
			return c, bad
		}
		c.reqEVD = p.RequestEVD
	}
	if mask&EPFieldConnectEVD != 0 {
		if !evd(p.ConnectEVD, EVDConnectionFlag) {
			return c, bad
		}
		c.connEVD = p.ConnectEVD
	}
	if ep.srq != nil && mask&(EPFieldMaxRecvDTOs|EPFieldMaxRecvIOV) != 0 {
		return c, bad
	}
	a, q := &c.attr, p.Attr
	for _, f := range []struct {
		bit      EPParamMask
		dst, src any
	}{
		{EPFieldServiceType, &a.ServiceType, q.ServiceType},
		{EPFieldMaxMessageSize, &a.MaxMessageSize, q.MaxMessageSize},
		{EPFieldMaxRDMASize, &a.MaxRDMASize, q.MaxRDMASize},
		{EPFieldQoS, &a.QoS, q.QoS},
		{EPFieldRecvCompletionFlags, &a.RecvCompletionFlags, q.RecvCompletionFlags},
		{EPFieldRequestCompletionFlag, &a.RequestCompletionFlags, q.RequestCompletionFlags},
		{EPFieldMaxRecvDTOs, &a.MaxRecvDTOs, q.MaxRecvDTOs},
		{EPFieldMaxRequestDTOs, &a.MaxRequestDTOs, q.MaxRequestDTOs},
		{EPFieldMaxRecvIOV, &a.MaxRecvIOV, q.MaxRecvIOV},
		{EPFieldMaxRequestIOV, &a.MaxRequestIOV, q.MaxRequestIOV},
		{EPFieldMaxRDMAReadIn, &a.MaxRDMAReadIn, q.MaxRDMAReadIn},
		{EPFieldMaxRDMAReadOut, &a.MaxRDMAReadOut, q.MaxRDMAReadOut},
		{EPFieldSRQSoftHW, &a.SRQSoftHW, q.SRQSoftHW},
		{EPFieldMaxRDMAReadIOV, &a.MaxRDMAReadIOV, q.MaxRDMAReadIOV},
		{EPFieldMaxRDMAWriteIOV, &a.MaxRDMAWriteIOV, q.MaxRDMAWriteIOV},
	} {
		if mask&f.bit != 0 {
			setField(f.dst, f.src)
		}
	}
	if err := ep.ia.checkEPAttr(op, a, InvalidArg3); err != nil {
		return c, err
	}
	return c, nil
}

// setField stores src in *dst, both of one of EPAttr's field types.
func setField(dst, src any) {
	switch d := dst.(type) {
	case *int:
		*d = src.(int)
	case *uint32:
		*d = src.(uint32)
	case *QoS:
		*d = src.(QoS)
	case *ServiceType:
		*d = src.(ServiceType)
	case *CompletionFlags:
		*d = src.(CompletionFlags)
	}
}

// needsQP reports whether the EP needs a new queue pair for c.
func (c *epConfig) needsQP(ep *EP) bool {
	a, b := c.attr, ep.attr
	return c.pz != ep.pz || c.recvEVD != ep.recvEVD || c.reqEVD != ep.reqEVD ||
		a.MaxRecvDTOs != b.MaxRecvDTOs || a.MaxRequestDTOs != b.MaxRequestDTOs ||
		a.MaxRecvIOV != b.MaxRecvIOV || a.MaxRequestIOV != b.MaxRequestIOV ||
		a.MaxRDMAReadIOV != b.MaxRDMAReadIOV || a.MaxRDMAWriteIOV != b.MaxRDMAWriteIOV ||
		(a.RecvCompletionFlags^b.RecvCompletionFlags)&CompletionSolicitedWait != 0
}

// rebuild gives the EP a new queue pair for c, with room in c's EVDs, and
// frees the old one and its room. On failure nothing changes. c.attr
// becomes what the new queue pair got. Caller holds ep.mu.
func (ep *EP) rebuild(op string, c *epConfig) error {
	ep.sq.mu.Lock()
	sqIdle := ep.sq.idle()
	ep.sq.mu.Unlock()
	ep.rq.mu.Lock()
	rqIdle := ep.rq.idle()
	ep.rq.mu.Unlock()
	if !sqIdle || !rqIdle {
		return newErrorDetail(op, InvalidState|stateSubtype(ep.getState()),
			"DTOs are posted: the change needs a new queue pair")
	}
	old := struct {
		pz              *PZ
		recvEVD, reqEVD *EVD
		srq             *SRQ
		attr            EPAttr
		qp              *cverbs.QP
		qpn             uint32
		sq, rq          *fifoRing
		maxInline       uint64
	}{ep.pz, ep.recvEVD, ep.reqEVD, ep.srq, ep.attr, ep.qp, ep.qpn, ep.sq, ep.rq, ep.maxInline}
	// The new queues take their room before the old give theirs back, so
	// that a failure leaves the old room in place.
	ep.pz, ep.recvEVD, ep.reqEVD, ep.attr = c.pz, c.recvEVD, c.reqEVD, c.attr
	if err := ep.makeQP(op); err != nil {
		ep.pz, ep.recvEVD, ep.reqEVD, ep.attr = old.pz, old.recvEVD, old.reqEVD, old.attr
		ep.qp, ep.qpn, ep.sq, ep.rq, ep.maxInline = old.qp, old.qpn, old.sq, old.rq, old.maxInline
		return err
	}
	detachQueues(old.reqEVD, old.recvEVD, old.srq, old.attr)
	ia := ep.ia
	ia.epMu.Lock()
	delete(ia.epByQP, old.qpn)
	ia.epByQP[ep.qpn] = ep
	ia.epMu.Unlock()
	closeQP(old.qp, old.sq, old.rq)
	c.attr = ep.attr
	ep.pz.ref(1)
	old.pz.ref(-1)
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD} {
		if e != nil {
			e.ref(1)
		}
	}
	for _, e := range []*EVD{old.recvEVD, old.reqEVD} {
		if e != nil {
			e.ref(-1)
		}
	}
	return nil
}

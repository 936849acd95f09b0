package udat

import (
	"cmp"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/udapl-go/udapl/cverbs"
)

// EPAttr holds the attributes of an Endpoint (DAT_EP_ATTR). Counts of zero
// take the defaults of DefaultEPAttr.
type EPAttr struct {
	ServiceType ServiceType // ServiceTypeRC, or ServiceTypeIBUD (ud.go)
	// MaxMessageSize and MaxRDMASize are the largest DTO sizes the
	// Consumer needs (0: any). The EP carries what the device does (the
	// port's max_msg_sz): that is what EP.Query reports, and a larger
	// request is DAT_INVALID_PARAMETER.
	MaxMessageSize uint32
	MaxRDMASize    uint32
	QoS            QoS
	// RecvCompletionFlags configures how receive completions notify:
	// CompletionDefault, CompletionSolicitedWait (a waiter on the receive
	// EVD wakes only for receives of solicited sends), CompletionEVDThreshold
	// or CompletionUnsignalled (allows PostRecv with CompletionUnsignalled).
	RecvCompletionFlags CompletionFlags
	// RequestCompletionFlags is CompletionDefault or CompletionUnsignalled;
	// the latter allows CompletionUnsignalled on sends and RDMA.
	RequestCompletionFlags CompletionFlags
	MaxRecvDTOs            int
	MaxRequestDTOs         int
	MaxRecvIOV             int
	MaxRequestIOV          int
	MaxRDMAReadIn          int
	MaxRDMAReadOut         int
	SRQSoftHW              int
	// MaxRDMAReadIOV is bounded by the device's max_sge_rd, which may be
	// below its max_sge (IAAttr.MaxIOVSegmentsPerRDMARead): more is
	// DAT_INVALID_PARAMETER. 0 is MaxRequestIOV, or that bound if lower.
	MaxRDMAReadIOV  int
	MaxRDMAWriteIOV int
	// RetryCount (1-7, 0: DefaultRetryCount) is how many times in a row
	// the EP resends an unacknowledged packet before it reports the
	// connection broken. The active side's count is sent in the connection
	// request and used by both sides; the passive EP's only bounds its
	// StallTimeout. Soft-RoCE treats 7 as "forever". See DeadPeerTimeout.
	RetryCount int
	// ACKTimeout (1-31, 0: DefaultACKTimeout) is the exponent of the local
	// ACK timeout, 4.096 us * 2^ACKTimeout (ACKTimeoutDuration): how long
	// the EP waits for an acknowledgement before it resends. Each side uses
	// its own.
	ACKTimeout int
	// StallTimeout is how long a connected EP's send queue may go without
	// a completion, while the device works on DTOs that do not wait for the
	// peer's receives, before the EP gives up on it as the device should
	// have (watchdog.go): the oldest DTO fails with DTOErrTransport, the
	// rest are flushed and EventConnectionBroken follows. Each 4 KiB the
	// next completion waits for adds one ACK timeout. 0 is twice the
	// device's own limit (DeadPeerTimeout, from the retry count the
	// connection really uses, or the EP's own if lower), at least 1 s, and
	// no watch at all when both are 7; negative: no watch. A device
	// without an ACK timeout (iWARP, where TCP retransmits and gives up
	// only after minutes) has no limit of its own: there 0 is no watch,
	// and a positive StallTimeout bounds the stall as it is, with nothing
	// added per 4 KiB.
	StallTimeout time.Duration
}

// DefaultEPAttr returns the attributes an EP gets when CreateEP is given nil.
// Its MaxMessageSize and MaxRDMASize are 0: the EP carries the largest DTO
// the device does.
func DefaultEPAttr() EPAttr {
	return EPAttr{
		MaxRecvDTOs:     64,
		MaxRequestDTOs:  64,
		MaxRecvIOV:      4,
		MaxRequestIOV:   4,
		MaxRDMAReadIn:   4,
		MaxRDMAReadOut:  4,
		MaxRDMAWriteIOV: 4,
	}
}

// EP is an Endpoint: a reliable connected queue pair with its EVDs.
type EP struct {
	object
	ia      *IA
	pz      *PZ
	recvEVD *EVD
	reqEVD  *EVD
	connEVD *EVD
	srq     *SRQ
	attr    EPAttr
	qp      *cverbs.QP
	qpn     uint32
	// maxInline is the largest send or RDMA write posted inline.
	maxInline uint64
	sq        *fifoRing
	rq        *fifoRing
	state     atomic.Uint32 // EPState

	mu   sync.Mutex // connection state below
	cmid *cverbs.CMID
	// cmidReady: cmid was readied with the QP (epid.go), so its connect
	// needs no ACK timeout and no INIT.
	cmidReady bool
	// spare is the readied id of the next active connection (epid.go).
	spare   *cverbs.CMID
	dialing *cverbs.CMID // the id whose rdma_connect runs (sendConnect)
	// dialDeadline ends the active connection attempt (zero: no limit);
	// redials counts its new starts for want of a local port (redialLocked).
	dialDeadline time.Time
	redials      int
	remote       netip.AddrPort
	remoteQual   ConnQual
	localQual    ConnQual
	connPD       []byte
	// rdIn and rdOut are the RDMA read depths negotiated at connect
	// (valid when rdSet): what EP.Query reports then.
	rdIn, rdOut int
	rdSet       bool
	// The RTS attributes the QP got as it was readied for the connection
	// (cverbs CMID.ReadyQP), when rdma_cm gave them (rtsSet): armWatch
	// then need not query the QP.
	rts        cverbs.RTSAttr
	rtsSet     bool
	timer      *time.Timer
	terminated bool // the connection's final event has been posted
	rsp        *RSP
	cr         *CR
	softHW     int
	hardHW     int
	freeing    bool  // Free is under way
	ud         *udEP // a UD EP's peers (ud.go); nil for RC
	watch      stallWatch
	// deviceFlushed: a completion came back flushed that the library did
	// not cause (flushedByDevice); cleared by Reset.
	deviceFlushed atomic.Bool
	// lastWQE: the SRQ's last-WQE-reached event of this connection has
	// been reported (ia.handleAsync), or the EP is being freed; cleared by
	// Reset. Linux 6.12's Soft-RoCE raises it several times.
	lastWQE atomic.Bool
	// flushGen counts the Resets: a settle scheduled by a flush before
	// one has nothing left to settle.
	flushGen atomic.Uint64
}

// State returns the EP's current state.
func (ep *EP) getState() EPState { return EPState(ep.state.Load()) }

func (ep *EP) setState(s EPState) { ep.state.Store(uint32(s)) }

func (ep *EP) check(op string) error {
	if ep == nil || ep.dead() {
		return badHandle(op, HandleTypeEP)
	}
	return nil
}

// CreateEP creates an Endpoint (dat_ep_create). recvEVD and requestEVD must
// be DTO EVDs (nil: the EP cannot receive, or cannot send); connectEVD must be
// a connection EVD (nil: the EP cannot connect). attr nil means
// DefaultEPAttr. The EP starts UNCONNECTED, with its queue pair already able
// to take receives.
func (ia *IA) CreateEP(pz *PZ, recvEVD, requestEVD, connectEVD *EVD, attr *EPAttr) (*EP, error) {
	return ia.createEP("dat_ep_create", pz, recvEVD, requestEVD, connectEVD, nil, attr)
}

// CreateEPWithSRQ creates an Endpoint whose receives come from srq
// (dat_ep_create_with_srq). PostRecv is refused on such an EP.
func (ia *IA) CreateEPWithSRQ(pz *PZ, recvEVD, requestEVD, connectEVD *EVD, srq *SRQ, attr *EPAttr) (*EP, error) {
	const op = "dat_ep_create_with_srq"
	if err := srq.check(op); err != nil {
		return nil, err
	}
	return ia.createEP(op, pz, recvEVD, requestEVD, connectEVD, srq, attr)
}

func (ia *IA) createEP(op string, pz *PZ, recvEVD, reqEVD, connEVD *EVD, srq *SRQ, attrp *EPAttr) (*EP, error) {
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := pz.check(op); err != nil {
		return nil, err
	}
	if pz.ia != ia {
		return nil, badHandle(op, HandleTypePZ)
	}
	if recvEVD != nil {
		if err := recvEVD.checkRole(op, ia, EVDDTOFlag, InvalidHandleEVDRecv); err != nil {
			return nil, err
		}
	}
	if reqEVD != nil {
		if err := reqEVD.checkRole(op, ia, EVDDTOFlag, InvalidHandleEVDRequest); err != nil {
			return nil, err
		}
	}
	if connEVD != nil {
		if err := connEVD.checkRole(op, ia, EVDConnectionFlag, InvalidHandleEVDConn); err != nil {
			return nil, err
		}
	}
	attrArg := InvalidArg6
	if srq != nil {
		attrArg = InvalidArg7
		if srq.ia != ia {
			return nil, badHandle(op, HandleTypeSRQ)
		}
		if srq.pz != pz {
			return nil, newError(op, InvalidState|InvalidStateEPPZ)
		}
	}
	attr := DefaultEPAttr()
	if attrp != nil {
		attr = *attrp
	}
	attr = fillEPAttr(attr, ia.rdmaReadSGE())
	if srq != nil {
		attr.MaxRecvDTOs = 0
		attr.MaxRecvIOV = srq.maxIOV
	}
	if err := ia.checkEPAttr(op, &attr, attrArg); err != nil {
		return nil, err
	}
	if srq != nil && attr.ServiceType == ServiceTypeIBUD {
		return nil, newError(op, InvalidParameter|attrArg) // UD receives are the EP's own
	}
	ep := &EP{object: liveObject(), ia: ia, pz: pz, recvEVD: recvEVD, reqEVD: reqEVD, connEVD: connEVD, srq: srq, attr: attr,
		softHW: -1, hardHW: -1}
	if attr.ServiceType == ServiceTypeIBUD {
		ep.ud = &udEP{cms: map[*UDCM]struct{}{}, ahs: map[*AH]struct{}{}}
	}
	if err := ep.makeQP(op); err != nil {
		return nil, err
	}
	if !addChild(ia, ia.eps, ep) {
		ep.dropSpareLocked()
		ep.qp.Close()
		ep.detachCQs()
		return nil, badHandle(op, HandleTypeIA)
	}
	ep.setState(EPStateUnconnected)
	ia.epMu.Lock()
	ia.epByQP[ep.qpn] = ep
	ia.epMu.Unlock()
	pz.ref(1)
	for _, e := range []*EVD{recvEVD, reqEVD, connEVD} {
		if e != nil {
			e.ref(1)
		}
	}
	if srq != nil {
		srq.ref(1)
	}
	return ep, nil
}

// fillEPAttr replaces zero counts by the defaults; an RDMA read takes at
// most readSGE segments.
func fillEPAttr(a EPAttr, readSGE int) EPAttr {
	d := DefaultEPAttr()
	a.MaxRecvDTOs = cmp.Or(a.MaxRecvDTOs, d.MaxRecvDTOs)
	a.MaxRequestDTOs = cmp.Or(a.MaxRequestDTOs, d.MaxRequestDTOs)
	a.MaxRecvIOV = cmp.Or(a.MaxRecvIOV, d.MaxRecvIOV)
	a.MaxRequestIOV = cmp.Or(a.MaxRequestIOV, d.MaxRequestIOV)
	a.MaxRDMAReadIn = cmp.Or(a.MaxRDMAReadIn, d.MaxRDMAReadIn)
	a.MaxRDMAReadOut = cmp.Or(a.MaxRDMAReadOut, d.MaxRDMAReadOut)
	a.MaxRDMAReadIOV = cmp.Or(a.MaxRDMAReadIOV, min(a.MaxRequestIOV, cmp.Or(readSGE, a.MaxRequestIOV)))
	a.MaxRDMAWriteIOV = cmp.Or(a.MaxRDMAWriteIOV, a.MaxRequestIOV)
	a.fillRetransmit()
	return a
}

const (
	validRecvEPFlags    = CompletionSolicitedWait | CompletionEVDThreshold | CompletionUnsignalled
	validRequestEPFlags = CompletionUnsignalled | CompletionSuppress
)

func (ia *IA) checkEPAttr(op string, a *EPAttr, arg Return) error {
	d := ia.devAttr
	bad := (a.ServiceType != ServiceTypeRC && a.ServiceType != ServiceTypeIBUD) ||
		a.MaxRecvDTOs < 0 || a.MaxRequestDTOs < 0 ||
		a.MaxRecvIOV < 0 || a.MaxRequestIOV < 0 || a.MaxRDMAReadIOV < 0 || a.MaxRDMAWriteIOV < 0 ||
		a.MaxRDMAReadIn < 0 || a.MaxRDMAReadOut < 0 || a.MaxRDMAReadIn > 255 || a.MaxRDMAReadOut > 255 ||
		a.RecvCompletionFlags&^validRecvEPFlags != 0 ||
		a.RequestCompletionFlags&^validRequestEPFlags != 0 ||
		!a.validRetransmit()
	if d.MaxQPWR > 0 && (a.MaxRecvDTOs > d.MaxQPWR || a.MaxRequestDTOs > d.MaxQPWR) {
		bad = true
	}
	if d.MaxSGE > 0 && (a.MaxRecvIOV > d.MaxSGE || a.MaxRequestIOV > d.MaxSGE ||
		a.MaxRDMAReadIOV > ia.rdmaReadSGE() || a.MaxRDMAWriteIOV > d.MaxSGE) {
		bad = true
	}
	if d.MaxQPRdAtom > 0 && a.MaxRDMAReadIn > d.MaxQPRdAtom {
		bad = true
	}
	if d.MaxQPInitRdAtom > 0 && a.MaxRDMAReadOut > d.MaxQPInitRdAtom {
		bad = true
	}
	if limit := ia.maxMessageSize(); uint64(a.MaxMessageSize) > limit || uint64(a.MaxRDMASize) > limit {
		bad = true
	}
	if bad {
		return newError(op, InvalidParameter|arg)
	}
	// The sizes asked for are minimums: the EP carries what the device
	// does, and says so.
	a.MaxMessageSize = uint32(ia.maxMessageSize())
	a.MaxRDMASize = a.MaxMessageSize
	if a.ServiceType == ServiceTypeIBUD {
		// A datagram is one packet; a UD QP does no RDMA.
		if uint64(a.MaxMessageSize) > ia.udMaxMessage() {
			a.MaxMessageSize = uint32(ia.udMaxMessage())
		}
		a.MaxRDMASize = 0
	}
	return nil
}

func (ep *EP) maxRequestIOV() int {
	return max(ep.attr.MaxRequestIOV, ep.attr.MaxRDMAReadIOV, ep.attr.MaxRDMAWriteIOV, 1)
}

// qpAccess is the access a QP allows its peer before the connection manager
// sets it.
const qpAccess = cverbs.AccessLocalWrite | cverbs.AccessRemoteWrite | cverbs.AccessRemoteRead

// makeQP creates the EP's queue pair and rings and moves the QP to INIT.
func (ep *EP) makeQP(op string) (err error) {
	ia := ep.ia
	sendCQ, recvCQ, err := ep.attachCQs(op)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			ep.detachCQs()
		}
	}()
	init := cverbs.QPInitAttr{
		SendCQ:     sendCQ,
		RecvCQ:     recvCQ,
		MaxSendWR:  max(ep.attr.MaxRequestDTOs, 1) + 1, // and a flush marker
		MaxRecvWR:  max(ep.attr.MaxRecvDTOs, 1),
		MaxSendSGE: ep.maxRequestIOV(),
		MaxRecvSGE: max(ep.attr.MaxRecvIOV, 1),
	}
	if d := ia.devAttr.MaxQPWR; d > 0 && init.MaxSendWR > d {
		init.MaxSendWR = d // no room for the marker: retire falls back on its deadline
	}
	if ep.srq != nil {
		init.SRQ = ep.srq.vsrq
		init.MaxRecvWR = 0
		init.MaxRecvSGE = 0
	}
	// Small sends and RDMA writes go inline, as in the C reference: the
	// provider copies their data at post time and the adapter (or, on
	// Soft-RoCE, the kernel) does not fetch it through the LMR. A device
	// that refuses inline data gets a QP without.
	init.MaxInline = maxInline
	var qp *cverbs.QP
	if ep.isUD() {
		if qp, err = ep.makeUDQP(init); err != nil {
			return verbsErr(op, err, InsufficientResources|ResourceTEP)
		}
	} else {
		qp, err = ep.pz.pd.NewQP(init)
		if err != nil {
			init.MaxInline = 0
			qp, err = ep.pz.pd.NewQP(init)
		}
		if err != nil {
			return verbsErr(op, err, InsufficientResources|ResourceTEP)
		}
		if err := ep.initQP(qp); err != nil {
			qp.Close()
			return verbsErr(op, err, InternalError)
		}
	}
	ep.useQP(qp)
	return nil
}

// useQP makes qp the EP's queue pair, with new rings for its queues that
// carry the old ones' counts over.
func (ep *EP) useQP(qp *cverbs.QP) {
	ep.qp = qp
	ep.qpn = qp.Num()
	ep.maxInline = uint64(min(qp.Cap().MaxInline, maxInline))
	ep.takeCaps(qp.Cap())
	ep.sq = newFIFORing(max(ep.attr.MaxRequestDTOs, 1), ep.maxRequestIOV(), wrKindSend).inherit(ep.sq)
	ep.rq = newFIFORing(max(ep.attr.MaxRecvDTOs, 1), max(ep.attr.MaxRecvIOV, 1), wrKindRecv).inherit(ep.rq)
}

// takeCaps makes the EP's attributes what its new QP really got (a device
// may grant more than asked), so that EP.Query reports them and the EP
// accepts what the QP can take. The EVDs' CQs are sized for the new counts;
// where they cannot grow, the counts stay as asked.
func (ep *EP) takeCaps(c cverbs.QPCap) {
	a := ep.attr
	if ep.srq == nil {
		a.MaxRecvDTOs = max(a.MaxRecvDTOs, c.MaxRecvWR)
		a.MaxRecvIOV = max(a.MaxRecvIOV, c.MaxRecvSGE)
	}
	if c.MaxSendWR-1 > a.MaxRequestDTOs && c.MaxSendWR <= ep.ia.devAttr.MaxQPWR {
		a.MaxRequestDTOs = c.MaxSendWR - 1 // less the flush marker
	}
	a.MaxRequestIOV = max(a.MaxRequestIOV, c.MaxSendSGE)
	a.MaxRDMAWriteIOV = max(a.MaxRDMAWriteIOV, c.MaxSendSGE)
	a.MaxRDMAReadIOV = max(a.MaxRDMAReadIOV, min(c.MaxSendSGE, ep.ia.rdmaReadSGE()))
	old := ep.attr
	ep.attr = a
	if dr := ep.requestDepth() - old.MaxRequestDTOs - 1; dr > 0 && ep.reqEVD != nil {
		if _, err := ep.reqEVD.attach("", dr, nil, false); err != nil {
			ep.attr.MaxRequestDTOs = old.MaxRequestDTOs
		}
	}
	if dr := ep.recvDepth() - max(old.MaxRecvDTOs, 1); dr > 0 && ep.recvEVD != nil {
		if _, err := ep.recvEVD.attach("", dr, nil, ep.solicitedRecv()); err != nil {
			ep.attr.MaxRecvDTOs = old.MaxRecvDTOs
		}
	}
}

// The completions each queue of the EP may leave in its EVD's CQ (see
// cqsize.go): the requests and a flush marker, and the receives of the EP
// or of its SRQ.
func (ep *EP) requestDepth() int { return max(ep.attr.MaxRequestDTOs, 1) + 1 }
func (ep *EP) recvDepth() int    { return max(ep.attr.MaxRecvDTOs, 1) }

func (ep *EP) solicitedRecv() bool {
	return ep.attr.RecvCompletionFlags&CompletionSolicitedWait != 0
}

// attachCQs returns the CQs of the EP's request and receive EVDs, with room
// made there for the completions of its queues. An EP without one of those
// EVDs uses the IA's null CQ for that queue: it never posts to it.
func (ep *EP) attachCQs(op string) (sendCQ, recvCQ *cverbs.CQ, err error) {
	if ep.reqEVD != nil {
		sendCQ, err = ep.reqEVD.attach(op, ep.requestDepth(), nil, false)
	} else {
		sendCQ, err = ep.ia.getNullCQ()
		err = verbsErr(op, err, InsufficientResources|ResourceTEVD)
	}
	if err != nil {
		return nil, nil, err
	}
	if ep.recvEVD != nil {
		recvCQ, err = ep.recvEVD.attach(op, ep.recvDepth(), ep.srq, ep.solicitedRecv())
	} else {
		recvCQ, err = ep.ia.getNullCQ()
		err = verbsErr(op, err, InsufficientResources|ResourceTEVD)
	}
	if err != nil {
		ep.reqEVD.detach(ep.requestDepth(), nil, false)
		return nil, nil, err
	}
	return sendCQ, recvCQ, nil
}

// detachCQs gives back the room attachCQs made.
func (ep *EP) detachCQs() { detachQueues(ep.reqEVD, ep.recvEVD, ep.srq, ep.attr) }

// detachQueues gives back the room of an EP with these EVDs, SRQ and
// attributes (those of EP.requestDepth and EP.recvDepth).
func detachQueues(reqEVD, recvEVD *EVD, srq *SRQ, a EPAttr) {
	reqEVD.detach(max(a.MaxRequestDTOs, 1)+1, nil, false)
	recvEVD.detach(max(a.MaxRecvDTOs, 1), srq, a.RecvCompletionFlags&CompletionSolicitedWait != 0)
}

// EPParam is what dat_ep_query returns (DAT_EP_PARAM).
type EPParam struct {
	IA             *IA
	State          EPState
	LocalAddr      netip.Addr
	LocalPortQual  PortQual
	RemoteAddr     netip.Addr
	RemotePortQual PortQual
	PZ             *PZ
	RecvEVD        *EVD
	RequestEVD     *EVD
	ConnectEVD     *EVD
	SRQ            *SRQ
	Attr           EPAttr
}

// Query returns the EP's parameters (dat_ep_query). Attr holds what the EP
// really has: the counts and IOV sizes its queue pair was created with (at
// least those asked for), the largest DTO the device carries, and, once a
// connection was accepted or established, the RDMA read depths negotiated
// with the peer. LocalPortQual is the rdma_cm source port on the active side
// (from the start of Connect on) and the connection qualifier on the
// passive side; an EP that never connected has 0 (C binds a port at
// dat_ep_create already).
func (ep *EP) Query() (EPParam, error) {
	if err := ep.check("dat_ep_query"); err != nil {
		return EPParam{}, err
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	p := EPParam{IA: ep.ia, State: ep.getState(), LocalAddr: ep.ia.addr, LocalPortQual: ep.localQual,
		RemoteAddr: ep.remote.Addr(), RemotePortQual: ep.remoteQual, PZ: ep.consumerPZ(), RecvEVD: ep.recvEVD,
		RequestEVD: ep.reqEVD, ConnectEVD: ep.connEVD, SRQ: ep.srq, Attr: ep.attr}
	if id := ep.idleIDLocked(); p.LocalPortQual == 0 && id != nil {
		// The active side: the source port rdma_cm bound the request to.
		p.LocalPortQual = PortQual(id.LocalAddr().Port())
	}
	if ep.rdSet {
		p.Attr.MaxRDMAReadIn, p.Attr.MaxRDMAReadOut = ep.rdIn, ep.rdOut
	}
	return p, nil
}

// GetStatus returns the EP's state and whether its receive and request
// queues have no DTO in progress (dat_ep_get_status). Completions waiting in
// the device are taken in first, so the answer is that of the hardware. A
// suppressed or unsignalled DTO counts as in progress until the queue shows
// it is done: a later completion of the same queue, or the flush of a
// disconnect (see LMR.Free).
func (ep *EP) GetStatus() (state EPState, recvIdle, requestIdle bool, err error) {
	if err := ep.check("dat_ep_get_status"); err != nil {
		return 0, false, false, err
	}
	ep.reap()
	ep.rq.mu.Lock()
	recvIdle = ep.rq.idle()
	ep.rq.mu.Unlock()
	ep.sq.mu.Lock()
	requestIdle = ep.sq.idle()
	ep.sq.mu.Unlock()
	return ep.getState(), recvIdle, requestIdle, nil
}

// reap takes in the completions waiting in the device for the EP's EVDs.
func (ep *EP) reap() {
	ep.reqEVD.reap()
	if ep.recvEVD != ep.reqEVD {
		ep.recvEVD.reap()
	}
}

// RecvQuery reports the receive buffers of the EP (dat_ep_recv_query):
// nbufsAllocated is the number of receives posted and not completed by the
// device (dequeued or not), and
// bufsAllocSpan their total length. For an EP that uses an SRQ the numbers
// are not known and both are ValueUnknown.
func (ep *EP) RecvQuery() (nbufsAllocated, bufsAllocSpan int, err error) {
	if err := ep.check("dat_ep_recv_query"); err != nil {
		return 0, 0, err
	}
	if ep.srq != nil {
		return int(ValueUnknown), int(ValueUnknown), nil
	}
	ep.reap()
	ep.rq.mu.Lock()
	defer ep.rq.mu.Unlock()
	n, bytes := ep.rq.inProgress()
	return n, int(bytes), nil
}

// SetWatermark sets the soft and hard high watermarks of receive buffers an
// EP that uses an SRQ may hold (dat_ep_set_watermark). The verbs layer gives
// no way to enforce them: values other than WatermarkInfinite fail with
// DAT_MODEL_NOT_SUPPORTED.
func (ep *EP) SetWatermark(softHighWatermark, hardHighWatermark int) error {
	const op = "dat_ep_set_watermark"
	if err := ep.check(op); err != nil {
		return err
	}
	if ep.srq == nil {
		return newError(op, InvalidParameter|InvalidArg1)
	}
	if softHighWatermark != int(WatermarkInfinite) || hardHighWatermark != int(WatermarkInfinite) {
		return newError(op, ModelNotSupported)
	}
	ep.mu.Lock()
	ep.softHW, ep.hardHW = softHighWatermark, hardHighWatermark
	ep.mu.Unlock()
	return nil
}

// markBroken handles an error completion or a fatal QP event on a connected
// EP: it moves to DISCONNECTED at once, and the QP is moved to the error
// state (flushing the rest) and a BROKEN event posted shortly after.
func (ep *EP) markBroken() {
	for {
		s := ep.getState()
		if s != EPStateConnected && s != EPStateDisconnectPending && s != EPStateCompletionPending {
			return
		}
		if ep.state.CompareAndSwap(uint32(s), uint32(EPStateDisconnected)) {
			break
		}
	}
	go ep.breakConnection()
}

// deviceFlushGrace is how long a QP that entered the error state by itself
// leaves the connection manager to report the connection's end before the
// EP reports it broken.
const deviceFlushGrace = 500 * time.Millisecond

// flushedByDevice handles a flushed completion of a connected EP whose
// queues the library did not flush: the QP entered the error state by
// itself. Linux 6.12's Soft-RoCE does so when its port goes down, and an
// iWARP QP when its stream closes, also in a graceful disconnect. Unless
// the connection manager reports the end of the connection within
// deviceFlushGrace (DISCONNECTED then), the EP is broken.
func (ep *EP) flushedByDevice() {
	if ep.deviceFlushed.CompareAndSwap(false, true) {
		time.AfterFunc(deviceFlushGrace, ep.markBroken)
	}
}

func (ep *EP) breakConnection() {
	ep.flushQueues()
	ep.mu.Lock()
	id := ep.cmid
	post := !ep.terminated
	ep.terminated = true
	ep.mu.Unlock()
	if id != nil {
		id.Disconnect()
	}
	if post {
		ep.connEVD.countConn()
		ep.connEVD.pushInternal(Event{Number: EventConnectionBroken, Conn: ConnectionEventData{EP: ep}})
	}
}

// Reset returns a DISCONNECTED EP to UNCONNECTED so it can connect again
// (dat_ep_reset). DTOs still outstanding are completed as flushed first.
func (ep *EP) Reset() error {
	const op = "dat_ep_reset"
	if err := ep.check(op); err != nil {
		return err
	}
	ep.mu.Lock()
	if ep.freeing {
		ep.mu.Unlock()
		return badHandle(op, HandleTypeEP)
	}
	s := ep.getState()
	if s == EPStateUnconnected {
		ep.mu.Unlock()
		return nil
	}
	if s != EPStateDisconnected {
		ep.mu.Unlock()
		return newError(op, InvalidState|stateSubtype(s))
	}
	id := ep.takeIDLocked()
	if ep.timer != nil {
		ep.timer.Stop()
		ep.timer = nil
	}
	ep.mu.Unlock()
	if id != nil {
		ep.ia.unregisterCM(id)
		id.Close()
	}
	ep.flushQueues()
	ep.retire()
	if err := ep.renewQP(op); err != nil {
		return err
	}
	ep.mu.Lock()
	if ep.freeing {
		// Free began while the QP was being reset; it owns the EP now.
		ep.mu.Unlock()
		return badHandle(op, HandleTypeEP)
	}
	ep.setFlushing(false, nil)
	ep.flushGen.Add(1)
	ep.deviceFlushed.Store(false)
	ep.lastWQE.Store(false)
	ep.terminated = false
	ep.remote = netip.AddrPort{}
	ep.remoteQual, ep.localQual = 0, 0
	ep.rdSet = false
	ep.setState(EPStateUnconnected)
	ep.mu.Unlock()
	return nil
}

// renewQP readies the EP's QP for a new connection, once Reset has flushed
// it: back to INIT (a UD QP to RTS) on InfiniBand and RoCE. An iWARP QP
// connects once (soft-iWARP's connection manager refuses one that has been
// connected: EINVAL), so there the EP gets a new QP, as C's cma provider
// gives every EP it resets.
func (ep *EP) renewQP(op string) error {
	if !ep.ia.ibTransport() {
		ep.mu.Lock()
		defer ep.mu.Unlock()
		c := epConfig{pz: ep.pz, recvEVD: ep.recvEVD, reqEVD: ep.reqEVD, connEVD: ep.connEVD, attr: ep.attr}
		return ep.rebuild(op, &c)
	}
	if err := ep.qp.ToReset(); err != nil {
		return verbsErr(op, err, InternalError)
	}
	if ep.isUD() {
		return verbsErr(op, ep.qp.ToRTSUD(ep.ia.port, cverbs.UDPQKey), InternalError)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return verbsErr(op, ep.initQP(ep.qp), InternalError)
}

// retire waits a little for the completions of outstanding DTOs (the QP is
// in the error state, so they come back flushed), then reports those still
// missing as flushed and empties the rings. Later completions of the old
// work requests are recognised as stale and dropped.
func (ep *EP) retire() {
	if ep.ia.completesLatePosts() {
		ep.awaitFlushed() // elsewhere the flush is in the CQ already
	}
	ep.reap()
	ep.drainRing(ep.reqEVD, ep.sq, nil)
	ep.drainRing(ep.recvEVD, ep.rq, nil)
}

// awaitFlushed takes in completions until no DTO awaits one, for at most
// settleGrace, while an EVD can still poll them.
func (ep *EP) awaitFlushed() {
	deadline := time.Now().Add(settleGrace)
	for {
		ep.sq.mu.Lock()
		ns := ep.sq.pending()
		ep.sq.mu.Unlock()
		ep.rq.mu.Lock()
		nr := ep.rq.pending()
		ep.rq.mu.Unlock()
		if ns+nr == 0 || time.Now().After(deadline) || !ep.reqEVD.polling() && !ep.recvEVD.polling() {
			return
		}
		ep.reap()
		time.Sleep(time.Millisecond)
	}
}

// flushQueues moves the QP to the error state, so that the hardware flushes
// every DTO still outstanding, and settles the unsignalled ones. What the
// hardware leaves outstanding is flushed by settle.
func (ep *EP) flushQueues() {
	if ep.flushedIdle() {
		// Flushed before, nothing outstanding since: the QP is in the
		// error state already (only Reset takes it out, and flushing with
		// it), so no second ibv_modify_qp per disconnect and free.
		return
	}
	ep.setFlushing(true, ep.qp.ToError)
	gen := ep.flushGen.Load()
	if !ep.ia.completesLatePosts() {
		// What the device flushes is in the CQ now; it completes nothing
		// else. Settled here, before the connection's event is posted.
		ep.settle(gen)
		return
	}
	if ep.queuesIdle() {
		// Nothing outstanding: nothing to settle later either (a post
		// from now on completes as flushed at once), so no timer and
		// goroutine per disconnect and free.
		return
	}
	ep.postFlushMarker()
	ep.awaitMarker()
	time.AfterFunc(settleGrace, func() { ep.settle(gen) })
}

// flushedIdle reports whether both queues are flushing already, with no
// DTO outstanding.
func (ep *EP) flushedIdle() bool {
	ep.rq.mu.Lock()
	ep.sq.mu.Lock()
	done := ep.sq.flushing && ep.rq.flushing && ep.sq.idle() && ep.rq.idle()
	ep.sq.mu.Unlock()
	ep.rq.mu.Unlock()
	return done
}

// queuesIdle reports whether neither of the EP's queues has a DTO
// outstanding.
func (ep *EP) queuesIdle() bool {
	ep.rq.mu.Lock()
	ep.sq.mu.Lock()
	idle := ep.sq.idle() && ep.rq.idle()
	ep.sq.mu.Unlock()
	ep.rq.mu.Unlock()
	return idle
}

// markerWait bounds how long flushQueues waits for its flush marker: a
// device flushes a QP in the error state at once (Soft-RoCE on Linux 6.1,
// within the post) or from a work queue soon after (6.10 on). The
// unsignalled DTOs before the marker are then known done before the
// connection's event is posted, as C reports them.
const markerWait = 20 * time.Millisecond

// awaitMarker takes in the request EVD's completions until the flush
// markers posted have completed, for at most markerWait. The caller may
// hold mu (the lock order is EP, EVD, ring).
func (ep *EP) awaitMarker() {
	if ep.reqEVD == nil {
		return
	}
	for deadline := time.Now().Add(markerWait); ep.sq.holdsMarker() && time.Now().Before(deadline); {
		ep.reqEVD.reap()
		if ep.sq.holdsMarker() {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// settleGrace is how long the hardware has to complete the DTOs of a QP
// moved to the error state before the library completes the rest as
// flushed; none on a device that flushes only as the QP enters that state.
const settleGrace = 500 * time.Millisecond

// settle completes as flushed the DTOs still outstanding settleGrace after
// flushQueues, unless the EP was reset since (gen). A QP that entered the
// error state by itself before the library knew it may have taken work
// requests that its device never completes: soft-iWARP completes nothing
// posted after its QP left RTS, Soft-RoCE no receive. Late completions of
// what settle reports are stale and dropped (fifoRing.drain).
func (ep *EP) settle(gen uint64) {
	if ep.freed.Load() {
		return
	}
	ep.reap()
	unsettled := func(r *fifoRing) func() bool {
		return func() bool { return r.flushing && ep.flushGen.Load() == gen && (r.pending() > 0 || r.unsettled()) }
	}
	ep.drainRing(ep.reqEVD, ep.sq, unsettled(ep.sq))
	ep.drainRing(ep.recvEVD, ep.rq, unsettled(ep.rq))
}

// drainRing empties ring r (fifoRing.drain), when drain is nil or says so
// under the ring's lock, and reports what it held on e. The EVD's lock is
// taken before the ring's, as when completions are polled, so these events
// follow those polled before them.
func (ep *EP) drainRing(e *EVD, r *fifoRing, drain func() bool) {
	if e != nil {
		e.mu.Lock()
		defer e.mu.Unlock()
	}
	r.mu.Lock()
	var left []dtoSlot
	if drain == nil || drain() {
		left = r.drain()
	}
	r.mu.Unlock()
	for i := range left {
		if e == nil || e.dead() {
			var ev Event
			ep.slotEventTo(&ev, &left[i]) // an RMR bind still learns its outcome
			continue
		}
		ep.slotEventTo(e.pushSlotLocked(), &left[i])
	}
	if len(left) > 0 && e != nil && !e.dead() {
		e.wakeLocked()
	}
}

// setFlushing runs change (the QP's move to or out of the error state,
// or nothing) and marks both rings flushing or not, under both rings'
// locks. Posts read the mark and post under their ring's lock, so each DTO
// either reaches the QP before it enters the error state, and is flushed
// with the others, or completes as flushed at post: a work request posted
// to a QP already in the error state may never complete (Soft-RoCE flushes
// a receive queue only as the QP enters that state).
func (ep *EP) setFlushing(on bool, change func() error) {
	ep.rq.mu.Lock()
	ep.sq.mu.Lock()
	if change != nil {
		change()
	}
	ep.rq.flushing, ep.sq.flushing = on, on
	ep.sq.mu.Unlock()
	ep.rq.mu.Unlock()
}

// postFlushMarker settles the unsignalled requests of an EP whose QP is in
// the error state. The hardware reports an unsignalled request only if it
// fails (flushed, here), so whether one not reported yet succeeded or is
// still to be flushed is only known from a later completion of the send
// queue: the marker, a signalled zero-length RDMA write posted behind them
// (flushed too, and harmless had it reached the peer), provides one; a UD
// QP, which has no RDMA write, gets a datagram of its own (udMarker). It
// takes the ring's spare slot.
func (ep *EP) postFlushMarker() {
	r := ep.sq
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.unsettled() || !r.hasSpare() {
		return
	}
	marker := [1]cverbs.SendWR{{Op: cverbs.OpRDMAWrite, Flags: cverbs.SendSignaled}}
	if ep.isUD() && !ep.udMarker(&marker[0]) {
		return // the unsignalled datagrams count as sent (fifoRing.drain)
	}
	seq := r.reserve(0, 0, dtoMarker, true)
	marker[0].ID = r.wrid(seq)
	n, err := ep.qp.PostSend(marker[:])
	if err != nil || n != 1 {
		r.unreserve()
	}
}

// closeQP destroys qp, the queue pair of the rings sq and rq, with both
// rings locked: postFast and recvFast reach the QP under the ring's lock
// alone (cverbs.QP.PostSendOne and PostRecvOne take none), so a post in
// flight ends before the QP goes, and one after it finds the EP freed or
// given another QP.
func closeQP(qp *cverbs.QP, sq, rq *fifoRing) error {
	rq.mu.Lock() // in setFlushing's order
	defer rq.mu.Unlock()
	sq.mu.Lock()
	defer sq.mu.Unlock()
	return qp.Close()
}

// Free destroys the EP (dat_ep_free). A connected EP is disconnected
// abruptly first; DTOs still outstanding complete as flushed.
func (ep *EP) Free() error {
	const op = "dat_ep_free"
	if err := ep.check(op); err != nil {
		return err
	}
	return ep.free(false)
}

func (ep *EP) free(force bool) error {
	const op = "dat_ep_free"
	ep.mu.Lock()
	if ep.freed.Load() || ep.freeing {
		ep.mu.Unlock()
		return badHandle(op, HandleTypeEP)
	}
	ep.freeing = true
	ep.lastWQE.Store(true) // no EP_BROKEN for an EP its Consumer frees
	id := ep.takeIDLocked()
	ep.dropSpareLocked()
	if ep.timer != nil {
		ep.timer.Stop()
		ep.timer = nil
	}
	rsp := ep.rsp
	ep.rsp = nil
	ep.terminated = true
	ep.setState(EPStateDisconnected)
	ep.mu.Unlock()
	if rsp != nil {
		rsp.detach(ep)
	}
	if ep.isUD() {
		ep.closeUDCMs()
	}
	ep.flushQueues()
	if id != nil {
		id.Disconnect()
		ep.ia.unregisterCM(id)
		id.Close()
	}
	ep.retire()
	ep.freed.Store(true)
	ep.ia.epMu.Lock()
	if ep.ia.epByQP[ep.qpn] == ep {
		delete(ep.ia.epByQP, ep.qpn)
	}
	ep.ia.epMu.Unlock()
	ep.ia.forgetEP(ep)
	ep.setWatched(false)
	err := closeQP(ep.qp, ep.sq, ep.rq)
	if ep.isUD() {
		ep.closeUDAHs() // after the QP: no send uses them any more
	}
	delChild(ep.ia, ep.ia.eps, ep)
	ep.pz.ref(-1)
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD, ep.connEVD} {
		if e != nil {
			e.ref(-1)
		}
	}
	ep.detachCQs()
	if ep.srq != nil {
		ep.srq.ref(-1)
	}
	if err != nil && !force {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

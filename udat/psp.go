package udat

import (
	"math/rand/v2"
	"sync"

	"github.com/udapl-go/udapl/cverbs"
)

// PSP is a Public Service Point: it listens on a connection qualifier and
// turns each connection request into an EventConnectionRequest (with a CR)
// on its EVD.
type PSP struct {
	object
	ia       *IA
	connQual ConnQual
	evd      *EVD
	flags    PSPFlags
	id       *cverbs.CMID
	udID     *cverbs.CMID // the listener of UD connection requests (ud_cm.go), nil without UD
	mu       sync.Mutex
}

// listenBacklog 0 asks the kernel for its most connection requests waiting
// to be taken (rdma_ucm's max_backlog, 1024 unless set), as C's cma provider
// does. Past it, iWARP refuses a request and InfiniBand drops it for the
// active side to send again seconds later.
const listenBacklog = 0

// CreatePSP starts listening for connection requests on connQual
// (dat_psp_create). Requests arrive as EventConnectionRequest on evd, which
// must have EVDCRFlag. A connection qualifier already in use gives
// DAT_CONN_QUAL_IN_USE. It is rdma_cm's port, and the kernel gives each
// active connection (and each EP of C's cma provider) a port of its
// ephemeral range (ip_local_port_range, 32768-60999 unless set): a
// qualifier below that range is never taken that way. With
// PSPConsumerFlag the Consumer provides the EP when it accepts; with
// PSPProviderFlag the PSP creates one for each request (see providerep.go):
// CR.Query returns it as LocalEP.
func (ia *IA) CreatePSP(connQual ConnQual, evd *EVD, flags PSPFlags) (*PSP, error) {
	const op = "dat_psp_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	if err := evd.checkRole(op, ia, EVDCRFlag, InvalidHandleEVDCR); err != nil {
		return nil, err
	}
	if flags != PSPConsumerFlag && flags != PSPProviderFlag {
		return nil, newError(op, InvalidParameter|InvalidArg4)
	}
	p, err := ia.listen(op, connQual, evd, flags)
	if err == nil {
		ia.count(IACounterPSPCreate)
	}
	return p, err
}

// CreatePSPAny listens on a free connection qualifier of the library's
// choosing and returns it with the PSP (dat_psp_create_any).
func (ia *IA) CreatePSPAny(evd *EVD, flags PSPFlags) (*PSP, ConnQual, error) {
	const op = "dat_psp_create_any"
	if err := ia.check(op); err != nil {
		return nil, 0, err
	}
	if err := evd.checkRole(op, ia, EVDCRFlag, InvalidHandleEVDCR); err != nil {
		return nil, 0, err
	}
	if flags != PSPConsumerFlag && flags != PSPProviderFlag {
		return nil, 0, newError(op, InvalidParameter|InvalidArg4)
	}
	start := 0x8000 + rand.IntN(0x7000)
	for i := 0; i < 0x7000; i++ {
		q := ConnQual(0x8000 + (start-0x8000+i)%0x7000)
		p, err := ia.listen(op, q, evd, flags)
		if err == nil {
			ia.count(IACounterPSPCreateAny)
			return p, q, nil
		}
		if e, ok := err.(*Error); !ok || e.Code.Type() != ConnQualInUse {
			return nil, 0, err
		}
	}
	return nil, 0, newError(op, ConnQualInUse)
}

func (ia *IA) listen(op string, connQual ConnQual, evd *EVD, flags PSPFlags) (*PSP, error) {
	if !ia.addr.IsValid() {
		return nil, newError(op, InvalidAddress|InvalidAddressUnsupported)
	}
	p := &PSP{object: liveObject(), ia: ia, connQual: connQual, evd: evd, flags: flags}
	id, err := ia.listenCM(op, connQual, p, false)
	if err != nil {
		return nil, err
	}
	p.id = id
	// UD connection requests come on a listener of their own, in the
	// RDMA_PS_UDP port space, where the device has UD. An iWARP device has
	// none, and there the connection qualifier's UDP port may be another
	// socket's (rdma_cm listens on TCP ports on iWARP): C's cma provider
	// listens on RDMA_PS_TCP alone.
	var udID *cverbs.CMID
	if ia.hasUD() {
		if udID, err = ia.listenCM(op, connQual, p, true); err != nil {
			ia.unregisterCM(id)
			id.Close()
			return nil, err
		}
	}
	p.udID = udID
	if !addChild(ia, ia.psps, p) {
		ia.unregisterCM(id)
		id.Close()
		ia.unregisterCM(udID)
		udID.Close()
		return nil, badHandle(op, HandleTypeIA)
	}
	evd.ref(1)
	return p, nil
}

func (p *PSP) check(op string) error {
	if p == nil || p.dead() {
		return badHandle(op, HandleTypePSP)
	}
	return nil
}

// PSPParam is what dat_psp_query returns.
type PSPParam struct {
	IA       *IA
	ConnQual ConnQual
	EVD      *EVD
	Flags    PSPFlags
}

// Query returns the PSP's parameters (dat_psp_query).
func (p *PSP) Query() (PSPParam, error) {
	if err := p.check("dat_psp_query"); err != nil {
		return PSPParam{}, err
	}
	return PSPParam{IA: p.ia, ConnQual: p.connQual, EVD: p.evd, Flags: p.flags}, nil
}

// Free stops listening (dat_psp_free). Connection requests already
// delivered stay valid.
func (p *PSP) Free() error {
	const op = "dat_psp_free"
	if err := p.check(op); err != nil {
		return err
	}
	p.mu.Lock()
	if p.freed.Swap(true) {
		p.mu.Unlock()
		return badHandle(op, HandleTypePSP)
	}
	p.mu.Unlock()
	p.ia.unregisterCM(p.id)
	err := p.id.Close()
	p.ia.unregisterCM(p.udID)
	if uerr := p.udID.Close(); err == nil {
		err = uerr
	}
	delChild(p.ia, p.ia.psps, p)
	p.evd.ref(-1)
	if err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

// request turns an rdma_cm connection request into a CR and an event.
func (p *PSP) request(ev cverbs.CMEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead() {
		ev.ID.Reject(nil)
		ev.ID.Close()
		return
	}
	if ev.UD {
		p.udRequest(ev)
		return
	}
	var ep *EP
	if p.flags == PSPProviderFlag {
		var err error
		if ep, err = p.ia.newProviderEP(ev); err != nil {
			ev.ID.Reject(nil)
			ev.ID.Close()
			return
		}
	}
	cr := p.ia.newCR(ev, p.connQual)
	if cr == nil {
		if ep != nil {
			ep.free(true)
		}
		return
	}
	cr.psp = p
	if ep != nil {
		cr.localEP, cr.providerEP = ep, true
		ep.mu.Lock()
		ep.cr = cr
		ep.mu.Unlock()
	}
	p.evd.pushInternal(Event{Number: EventConnectionRequest,
		CR: CRArrivalData{PSP: p, LocalIAAddress: p.ia.addr, ConnQual: p.connQual, CR: cr}})
}

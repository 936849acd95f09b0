package udat

import (
	"cmp"

	"github.com/udapl-go/udapl/cverbs"
)

// Provider-created EPs (DAT_PSP_PROVIDER_FLAG): a PSP created with
// PSPProviderFlag creates an EP for each connection request and hands it
// over in the CR (CR.Query's LocalEP). As the man page says, that EP has no
// PZ and no EVDs (EP.Query reports nil), its RDMA read depths match the
// request, and it is TENTATIVE_CONNECTION_PENDING. The Consumer gives it a
// PZ and EVDs with EP.Modify and accepts with it (CR.Accept with nil or that
// EP); an EP still without PZ fails there with
// DAT_INVALID_STATE_EP_UNCONFTENTATIVE, one without connect EVD with
// DAT_INVALID_STATE_EP_EVD_CONNECT. Rejecting the request frees the EP, as
// in C. Once accepted, the EP is the Consumer's, like any other.
//
// Until then its queue pair lives in a protection domain of the IA's own, so
// that no LMR of the Consumer's can be used with it.

// providerPZ returns the IA's own PZ, created on first use.
func (ia *IA) providerPZ() (*PZ, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if ia.provPZ == nil {
		pd, err := ia.vctx.AllocPD()
		if err != nil {
			return nil, err
		}
		ia.provPZ = &PZ{object: liveObject(), ia: ia, pd: pd, internal: true,
			lmrs: map[*LMR]struct{}{}, rmrs: map[*RMR]struct{}{}}
	}
	return ia.provPZ, nil
}

// newProviderEP creates the EP for a connection request to a PSP with
// PSPProviderFlag.
func (ia *IA) newProviderEP(ev cverbs.CMEvent) (*EP, error) {
	const op = "dat_psp_create"
	pz, err := ia.providerPZ()
	if err != nil {
		return nil, verbsErr(op, err, InsufficientResources|ResourceProtectionDomain)
	}
	d := ia.devAttr
	attr := DefaultEPAttr()
	// The reads the requester will issue, and those it takes (the IB CM
	// reports them from this side's point of view).
	attr.MaxRDMAReadIn = min(int(ev.ResponderResources), cmp.Or(d.MaxQPRdAtom, 255))
	attr.MaxRDMAReadOut = min(int(ev.InitiatorDepth), cmp.Or(d.MaxQPInitRdAtom, 255))
	ep, err := ia.createEP(op, pz, nil, nil, nil, nil, &attr)
	if err != nil {
		return nil, err
	}
	ep.setState(EPStateTentativeConnectionPending)
	return ep, nil
}

// consumerPZ returns the EP's PZ as the Consumer sees it: nil while it is
// the IA's own.
func (ep *EP) consumerPZ() *PZ {
	if ep.pz.internal {
		return nil
	}
	return ep.pz
}

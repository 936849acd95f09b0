package udat

import (
	"sync"

	"github.com/udapl-go/udapl/cverbs"
)

// PZ is a Protection Zone (a verbs protection domain). LMRs, RMRs, EPs and
// SRQs belong to one PZ; an LMR can only be used by an EP or SRQ of its PZ.
type PZ struct {
	object
	ia *IA
	pd *cverbs.PD

	mu   sync.Mutex
	lmrs map[*LMR]struct{}
	rmrs map[*RMR]struct{}
	refs int // EPs and SRQs using the PZ

	internal bool // the IA's own, for provider-created EPs (providerep.go)
}

// CreatePZ creates a Protection Zone (dat_pz_create).
func (ia *IA) CreatePZ() (*PZ, error) {
	const op = "dat_pz_create"
	if err := ia.check(op); err != nil {
		return nil, err
	}
	pd, err := ia.vctx.AllocPD()
	if err != nil {
		return nil, verbsErr(op, err, InsufficientResources|ResourceProtectionDomain)
	}
	pz := &PZ{object: liveObject(), ia: ia, pd: pd, lmrs: map[*LMR]struct{}{}, rmrs: map[*RMR]struct{}{}}
	if !addChild(ia, ia.pzs, pz) {
		pd.Close()
		return nil, badHandle(op, HandleTypeIA)
	}
	return pz, nil
}

func (pz *PZ) check(op string) error {
	if pz == nil || pz.dead() {
		return badHandle(op, HandleTypePZ)
	}
	return nil
}

// PZParam is what dat_pz_query returns.
type PZParam struct {
	IA *IA
}

// Query returns the PZ's parameters (dat_pz_query).
func (pz *PZ) Query() (PZParam, error) {
	if err := pz.check("dat_pz_query"); err != nil {
		return PZParam{}, err
	}
	return PZParam{IA: pz.ia}, nil
}

// Free destroys the PZ (dat_pz_free). It fails with DAT_INVALID_STATE while
// an LMR, RMR, EP or SRQ uses it.
func (pz *PZ) Free() error {
	const op = "dat_pz_free"
	if err := pz.check(op); err != nil {
		return err
	}
	pz.mu.Lock()
	if len(pz.lmrs)+len(pz.rmrs)+pz.refs > 0 {
		pz.mu.Unlock()
		return newError(op, InvalidState|InvalidStatePZInUse)
	}
	if !pz.freed.CompareAndSwap(false, true) {
		pz.mu.Unlock()
		return badHandle(op, HandleTypePZ)
	}
	pz.mu.Unlock()
	delChild(pz.ia, pz.ia.pzs, pz)
	if err := pz.pd.Close(); err != nil {
		return verbsErr(op, err, InternalError)
	}
	return nil
}

// freeAll frees the PZ and its memory objects (abrupt IA close).
func (pz *PZ) freeAll() {
	pz.mu.Lock()
	rmrs := keys(pz.rmrs)
	lmrs := keys(pz.lmrs)
	pz.mu.Unlock()
	for _, r := range rmrs {
		r.Free()
	}
	for _, l := range lmrs {
		l.forceFree()
	}
	pz.mu.Lock()
	pz.refs = 0
	pz.mu.Unlock()
	pz.Free()
}

func (pz *PZ) ref(d int) {
	pz.mu.Lock()
	pz.refs += d
	pz.mu.Unlock()
}

package main

import (
	"math/rand/v2"
	"net/netip"

	"github.com/udapl-go/udapl/udat"
)

// client holds what every client run opens first: the IA, a PZ and the
// server's address.
type client struct {
	ia      *udat.IA
	pz      *udat.PZ
	addr    netip.Addr
	session uint32
}

func openClient(cfg *config) (*client, error) {
	addr, err := resolveHost(cfg.host)
	if err != nil {
		return nil, err
	}
	ia, err := udat.OpenIA(cfg.device, 16)
	if err != nil {
		return nil, openError(cfg.device, err)
	}
	procsFor(ia, cfg.op)
	pz, err := ia.CreatePZ()
	if err != nil {
		ia.Close(udat.CloseAbruptFlag)
		return nil, err
	}
	return &client{ia: ia, pz: pz, addr: addr, session: rand.Uint32()}, nil
}

func (cl *client) close() {
	cl.ia.Close(udat.CloseAbruptFlag)
}

// request describes the run to the server.
func (cl *client) request(test byte, cfg *config) request {
	return request{
		test:     test,
		op:       cfg.op,
		lat:      cfg.lat,
		block:    cfg.block,
		eps:      1,
		session:  cl.session,
		nonce:    rand.Uint32(),
		size:     uint32(cfg.size),
		iters:    uint32(cfg.iters),
		latIters: uint32(cfg.latIters),
		depth:    uint16(cfg.depth),
		signal:   uint16(cfg.signal),
		segs:     uint16(cfg.segs),
	}
}

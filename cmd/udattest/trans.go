package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/udapl-go/udapl/udat"
)

// The transaction test, like dapltest -T T: several EPs, each driven by its
// own goroutine, all in one IA and PZ. Each round on an EP mixes the
// operations and validates every byte:
//
//  1. RDMA write of a fresh pattern (2 segments); the server checks its CRC;
//  2. RDMA read of the same bytes back, compared with what was written;
//  3. the server fills its buffer with another pattern; RDMA read, checked;
//  4. a message echoed by the server, compared.

// dtosPerRound counts the DTOs of one round: write, verify (send, recv),
// read, fill (send, recv), read, echo (send, recv).
const dtosPerRound = 9

// runTrans is the client of the transaction test.
func runTrans(cfg *config, out io.Writer, showProgress bool) (*result, error) {
	res := &result{Tool: "udattest", Test: "trans", Op: "mixed", Size: cfg.size, Iters: cfg.iters,
		Wait: waitName(cfg.block), EPs: cfg.eps, Segs: 2}
	cl, err := openClient(cfg)
	if err != nil {
		return res, err
	}
	defer cl.close()
	if !cfg.jsonOnly {
		fmt.Fprintf(out, "udattest transaction test: %d EPs x %d rounds of %d B, IA %s (%s) -> %s port %d\n",
			cfg.eps, cfg.iters, cfg.size, cfg.device, cl.ia.Address(), cl.addr, cfg.port)
	}
	total := int64(cfg.eps) * int64(cfg.iters)
	p := startProgress(showProgress, progressOut, "transactions", total, 0)
	var rounds atomic.Int64
	start := time.Now()
	var g errgroup.Group
	for e := 0; e < cfg.eps; e++ {
		g.Go(func() error {
			if err := transEP(cl, cfg, e, &rounds, p); err != nil {
				return fmt.Errorf("EP %d: %w", e, err)
			}
			return nil
		})
	}
	err = g.Wait()
	p.finish()
	elapsed := time.Since(start)
	done := rounds.Load()
	res.setRate(done*dtosPerRound, 0, elapsed)
	res.MBps = round(float64(done)*3*float64(cfg.size)/elapsed.Seconds()/(1<<20), 3)
	if err != nil {
		return res, err
	}
	if !cfg.jsonOnly {
		fmt.Fprintf(out, "  %d rounds, %d DTOs in %.2f s: %.0f DTOs/s, %.2f MB/s of RDMA, every byte verified\n",
			done, res.Ops, elapsed.Seconds(), res.MsgRate, res.MBps)
	}
	res.Result = "PASSED"
	return res, nil
}

// transEP runs the rounds of endpoint e.
func transEP(cl *client, cfg *config, e int, rounds *atomic.Int64, p *progress) error {
	size := cfg.size
	lay := layout{nRecv: 8, slotSize: ctrlSize, dataLen: 2 * size, sendDepth: 8, segs: 2}
	c, err := newConn(cl.ia, cl.pz, lay, cfg.timeout)
	if err != nil {
		return err
	}
	defer c.close()
	c.block = cfg.block
	if err := c.postAllRecvs(); err != nil {
		return err
	}
	req := cl.request('T', cfg)
	req.eps, req.epIndex = uint16(cfg.eps), uint16(e)
	req.segs = 2
	if err := c.dial(cl.addr, cfg.port, &req); err != nil {
		return err
	}
	if err := c.hello(true); err != nil {
		return err
	}
	if c.peer.SegmentLength != uint32(size) {
		return fmt.Errorf("the server offers %d bytes, expected %d", c.peer.SegmentLength, size)
	}
	fail := func(err error) error {
		c.ep.Disconnect(udat.CloseAbruptFlag)
		return err
	}
	src, sink := c.data()[:size], c.data()[size:]
	for r := 0; r < cfg.iters; r++ {
		seed := uint64(cl.session)<<32 | uint64(e)<<20 | uint64(r)
		// 1. RDMA write, checked by the server.
		fillPattern(src, seed)
		if err := c.rdma(opWrite, 0, size, 2); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		}
		crc := crc32.ChecksumIEEE(src)
		if m, err := c.call(&ctrl{typ: msgVerify, b: uint64(size), c: uint64(crc)}); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		} else if m.a != 1 {
			return fail(fmt.Errorf("round %d: the server found CRC %08x after the RDMA write of CRC %08x", r, m.c, crc))
		}
		// 2. Read it back.
		clear(sink)
		if err := c.rdma(opRead, size, size, 1); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		}
		if !bytes.Equal(sink, src) {
			return fail(fmt.Errorf("round %d: RDMA read returned other bytes than the RDMA write wrote", r))
		}
		// 3. The server writes a pattern of its own; read and check it.
		seed2 := seed ^ 0x5bd1e995
		if m, err := c.call(&ctrl{typ: msgFill, b: uint64(size), c: seed2}); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		} else if m.a != 1 {
			return fail(fmt.Errorf("round %d: the server could not fill its buffer", r))
		}
		if err := c.rdma(opRead, size, size, min(2, c.readSegs)); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		}
		if i := checkPattern(sink, seed2); i >= 0 {
			return fail(fmt.Errorf("round %d: byte %d read differs from the server's", r, i))
		}
		// 4. Echo.
		m := ctrl{typ: msgEcho}
		fillPattern(m.payload[:], seed)
		if err := c.sendCtrl(&m); err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		}
		echo, err := c.recvCtrl()
		if err != nil {
			return fail(fmt.Errorf("round %d: %w", r, err))
		}
		if echo.typ != msgEcho || echo.seq != m.seq || !bytes.Equal(echo.payload[:], m.payload[:]) {
			return fail(fmt.Errorf("round %d: the echo differs from the message", r))
		}
		rounds.Add(1)
		p.add(1)
	}
	return c.finish()
}

// rdma runs one RDMA operation between bytes [off, off+n) of the data region
// (in segs segments) and the peer's buffer, and waits for it.
func (c *conn) rdma(op opKind, off, n, segs int) error {
	remote := c.peer
	remote.SegmentLength = uint32(n)
	if err := c.post(op, c.segments(off, n, segs), uint64(op), remote, udat.CompletionDefault); err != nil {
		return fmt.Errorf("post %s: %w", op.title(), err)
	}
	d, err := c.nextDTO(c.reqEVD, op.title())
	if err != nil {
		return err
	}
	if d.TransferredLength != uint64(n) {
		return fmt.Errorf("%s moved %d bytes, expected %d", op.title(), d.TransferredLength, n)
	}
	return nil
}

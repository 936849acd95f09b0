package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// The quick check, like dtest: one connection, every kind of DTO once,
// every byte verified.
const (
	quickDataLen = 64 << 10
	quickChunk   = 4 << 10
	quickPings   = 100
)

// stepper runs the named steps of the quick check and prints a line for
// each.
type stepper struct {
	w     io.Writer
	quiet bool
	err   error
}

func (s *stepper) step(name string, f func() (string, error)) {
	if s.err != nil {
		return
	}
	t0 := time.Now()
	detail, err := f()
	el := time.Since(t0)
	if err != nil {
		s.err = fmt.Errorf("%s: %w", name, err)
		if !s.quiet {
			fmt.Fprintf(s.w, "  %-28s FAILED  %v\n", name, err)
		}
		return
	}
	if !s.quiet {
		fmt.Fprintf(s.w, "  %-28s ok      %-52s %8s\n", name, detail, fmtDur(el))
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f us", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// runQuick is the client of the quick check.
func runQuick(cfg *config, out io.Writer) (*result, error) {
	res := &result{Tool: "udattest", Test: "quick", Size: quickDataLen, Iters: 1, Wait: waitName(cfg.block)}
	cl, err := openClient(cfg)
	if err != nil {
		return res, err
	}
	defer cl.close()
	s := &stepper{w: out, quiet: cfg.jsonOnly}
	if !s.quiet {
		fmt.Fprintf(out, "udattest quick check: IA %s (%s) -> %s port %d\n", cfg.device, cl.ia.Address(), cl.addr, cfg.port)
	}
	lay := layout{nRecv: 8, slotSize: ctrlSize, dataLen: quickDataLen, sendDepth: quickDataLen/quickChunk + 4, segs: 2}
	c, err := newConn(cl.ia, cl.pz, lay, cfg.timeout)
	if err != nil {
		return res, err
	}
	defer c.close()
	c.block = cfg.block
	start := time.Now()
	var ops int64
	req := cl.request('Q', cfg)
	req.size, req.iters = quickDataLen, 1

	s.step("connect with private data", func() (string, error) {
		if err := c.postAllRecvs(); err != nil {
			return "", err
		}
		if err := c.dial(cl.addr, cfg.port, &req); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d B sent, nonce %08x echoed", reqLen, req.nonce), nil
	})
	s.step("exchange RMR triplets", func() (string, error) {
		if err := c.hello(true); err != nil {
			return "", err
		}
		ops += 2
		if c.peer.SegmentLength != quickDataLen {
			return "", fmt.Errorf("the server offers %d bytes, expected %d", c.peer.SegmentLength, quickDataLen)
		}
		return fmt.Sprintf("server: %d KiB at %#x, rmr_context %#x", c.peer.SegmentLength>>10,
			c.peer.VirtualAddress, c.peer.RMRContext), nil
	})
	s.step("RDMA write burst", func() (string, error) {
		data := c.data()
		fillPattern(data, uint64(req.nonce))
		n := quickDataLen / quickChunk
		for i := 0; i < n; i++ {
			remote := c.peer
			remote.VirtualAddress += uint64(i * quickChunk)
			remote.SegmentLength = quickChunk
			if err := c.ep.PostRDMAWrite(c.segments(i*quickChunk, quickChunk, 2), uint64(i), remote, udat.CompletionDefault); err != nil {
				return "", fmt.Errorf("post write %d: %w", i, err)
			}
		}
		for i := 0; i < n; i++ {
			d, err := c.nextDTO(c.reqEVD, "RDMA write completion")
			if err != nil {
				return "", err
			}
			if d.Cookie != uint64(i) || d.TransferredLength != quickChunk {
				return "", fmt.Errorf("completion %d: cookie %d, %d bytes", i, d.Cookie, d.TransferredLength)
			}
		}
		crc := crc32.ChecksumIEEE(data)
		r, err := c.call(&ctrl{typ: msgVerify, a: 0, b: quickDataLen, c: uint64(crc)})
		if err != nil {
			return "", err
		}
		if r.a != 1 {
			return "", fmt.Errorf("the server found CRC %08x, the client wrote %08x", r.c, crc)
		}
		ops += int64(n) + 2
		return fmt.Sprintf("%d x %d KiB, 2 segments each, server CRC %08x matches", n, quickChunk>>10, crc), nil
	})
	s.step("RDMA read", func() (string, error) {
		seed := uint64(req.nonce) ^ 0xa5a5a5a5
		if r, err := c.call(&ctrl{typ: msgFill, a: 0, b: quickDataLen, c: seed}); err != nil {
			return "", err
		} else if r.a != 1 {
			return "", fmt.Errorf("the server could not fill its buffer")
		}
		data := c.data()
		clear(data)
		segs := min(2, c.readSegs)
		if err := c.ep.PostRDMARead(c.segments(0, quickDataLen, segs), 1, c.peer, udat.CompletionDefault); err != nil {
			return "", err
		}
		d, err := c.nextDTO(c.reqEVD, "RDMA read completion")
		if err != nil {
			return "", err
		}
		if d.TransferredLength != quickDataLen {
			return "", fmt.Errorf("read %d bytes, expected %d", d.TransferredLength, quickDataLen)
		}
		if i := checkPattern(data, seed); i >= 0 {
			return "", fmt.Errorf("byte %d differs from what the server wrote", i)
		}
		ops += 3
		return fmt.Sprintf("%d KiB into %d segment(s), every byte verified", quickDataLen>>10, segs), nil
	})
	s.step("message ping-pong", func() (string, error) {
		t0 := time.Now()
		for i := 0; i < quickPings; i++ {
			m := ctrl{typ: msgEcho}
			fillPattern(m.payload[:], uint64(i)+uint64(req.nonce)<<16)
			if err := c.sendCtrl(&m); err != nil {
				return "", err
			}
			r, err := c.recvCtrl()
			if err != nil {
				return "", err
			}
			if r.typ != msgEcho || r.seq != m.seq || !bytes.Equal(r.payload[:], m.payload[:]) {
				return "", fmt.Errorf("round trip %d: the echo differs from the message", i+1)
			}
		}
		ops += 2 * quickPings
		rtt := time.Since(t0) / quickPings
		return fmt.Sprintf("%d round trips of %d B, echo verified, %s each", quickPings, ctrlSize, fmtDur(rtt)), nil
	})
	s.step("disconnect", func() (string, error) {
		if err := c.finish(); err != nil {
			return "", err
		}
		ops += 2
		return "graceful, DAT_CONNECTION_EVENT_DISCONNECTED", nil
	})
	if s.err != nil {
		c.ep.Disconnect(udat.CloseAbruptFlag)
		return res, s.err
	}
	res.setRate(ops, 0, time.Since(start))
	res.MBps = 0
	res.Result = "PASSED"
	return res, nil
}

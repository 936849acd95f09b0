package main

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/udapl-go/udapl/udat"
)

// Flow control (credits) of the send bandwidth test (-T P -o send).
//
// The server keeps its receives posted and reposts them as they complete
// (sinkSends), but nothing else keeps the client from getting more sends
// ahead of the server's reposting than it has receives: soft-iWARP completes
// a send as soon as TCP has taken it, so a client that has the CPU (the
// deterministic VM has one) goes on posting while the server waits for
// it. On InfiniBand and RoCE a send that finds no receive is NAKed
// (receiver not ready) and sent again later: the run only slows down. iWARP
// has no such retry: the send ends the connection at once, and the run
// fails.
//
// With credits the server tells the client how many receives it has posted
// in all, the first ones included: it RDMA-writes the count into the
// client's credit word, a word of the client's data region behind the
// message, which is all the client's hello lets the server reach (its
// inbox). It writes once as the run starts, and then whenever it has
// reposted a quarter of its receives since its last write. The client posts
// send k only when the count is at least k: at most a compare per post with
// the count it last read, which it reads again only when the compare fails.
//
// Credits run by default only where the device has no receiver-not-ready
// retry (-credits auto): on RoCE the send rows of make bench compare with
// perftest's ib_send_bw, which has no credits, and a write per repost batch
// and a wait for credit would be costs only udattest's row pays. There an
// overrun costs an RNR NAK and a resend, not the run. -credits on runs
// them on any device (the tests do, on rxe0 too).

// creditLen is the size of the credit word.
const creditLen = 8

// cookieCredit marks the completion of the server's credit write.
const cookieCredit = 1 << 61

// maxCreditWrites is how many credit writes the server keeps in flight at
// most (its EP takes 8 requests, and the control messages after the run
// need one).
const maxCreditWrites = 4

// creditOff is where the credit word is in the client's data region: behind
// the message, on a cache line of its own.
func creditOff(size int) int { return alignUp(size, 64) }

// packCredit encodes a count of posted receives in the credit word: its low
// 32 bits, and their complement in the high half. Neither DAT nor verbs
// promises that the bytes of an RDMA write land all at once: a client that
// reads the word while a write lands could see some bytes of the old count
// and some of the new, a count larger than both. Such a word fails the
// check (unpackCredit) and the client keeps the count it had. 32 bits are
// enough: between two reads the count grows by at most the server's
// receives, which the client adds to what it knew.
func packCredit(n int) uint64 {
	c := uint32(n)
	return uint64(c) | uint64(^c)<<32
}

// unpackCredit returns the low 32 bits of the count in a credit word, and
// whether the word is whole. The zero word, the client's before the first
// write, is not.
func unpackCredit(w uint64) (uint32, bool) {
	c := uint32(w)
	return c, ^c == uint32(w>>32)
}

// rnrRetry reports whether the IA's device sends again a send that found
// no receive posted (InfiniBand's receiver-not-ready retry): InfiniBand and
// RoCE do, iWARP does not. udat does not name the transport, but it reports
// the IB extension on exactly those devices and none on iWARP
// (IAAttr.ExtensionSupported). If the IA cannot say, credits are the safe
// side: false.
func rnrRetry(ia *udat.IA) bool {
	a, _, err := ia.Query()
	return err == nil && a.ExtensionSupported == udat.ExtensionIB
}

// useCredits decides whether a performance run uses credits: only a send
// bandwidth run, and then as -credits says.
func useCredits(cfg *config, ia *udat.IA) bool {
	if cfg.op != opSend || cfg.lat {
		return false
	}
	switch cfg.credits {
	case "on":
		return true
	case "off":
		return false
	}
	return !rnrRetry(ia)
}

// withCreditWord makes room for the credit word in a client's layout for
// messages of size bytes.
func withCreditWord(lay layout, size int) layout {
	lay.dataLen = max(lay.dataLen, creditOff(size)+creditLen)
	return lay
}

// sendCredits is the client's side: how many sends the server has posted
// receives for.
type sendCredits struct {
	// word is the credit word, where the server's writes land; nil without
	// credits.
	word *uint64
	// known is the server's count as last read (math.MaxInt without
	// credits, so that the loops' compare never fails).
	known int
	// sent counts the sends of the run before the current loop: the
	// bandwidth loop's, for the latency samples and the control message
	// after them.
	sent int
}

// noCredits is a conn's sendCredits until a run turns credits on.
func noCredits() sendCredits { return sendCredits{known: math.MaxInt} }

// enableCredits turns credits on for the conn's run: the credit word is the
// inbox, the one part of the data region the hello offers the server. The
// layout must have room for it (withCreditWord).
func (c *conn) enableCredits(size int) {
	off := creditOff(size)
	c.inboxOff, c.inboxLen = off, creditLen
	c.credits = sendCredits{word: (*uint64)(unsafe.Pointer(&c.data()[off]))}
}

// covers reports whether the server has a receive posted for send number k
// (counted from 1 in the run), reading the word again when the count it
// knows does not cover k.
func (s *sendCredits) covers(k int) bool {
	if k <= s.known {
		return true
	}
	if c, ok := unpackCredit(atomic.LoadUint64(s.word)); ok {
		s.known += int(c - uint32(s.known))
	}
	return k <= s.known
}

// awaitCredit waits until the server has a receive posted for send number
// k, polling the credit word (a write raises no event), for at most the
// conn's timeout. Between two reads it gives up the CPU (osYield): the
// credit comes only once the server has run, and on one CPU (the
// deterministic VM) a client that spins keeps the server from running
// until the end of its time slice. Measured there, 64 B sends at depth 64,
// 3 runs of 20,000 each: with the yield 1,408, 434 and 4 fruitless reads
// of the word per run and 25.0k-25.4k msg/s, without it 18k-39k reads and
// 23.8k-25.0k msg/s.
func (c *conn) awaitCredit(k int) error {
	cr := &c.credits
	var deadline spinDeadline
	for i := 1; !cr.covers(k); i++ {
		osYield()
		c.yield.poll()
		if deadline.expired(i, 0xfff, c.timeout) {
			return fmt.Errorf("no credit for send %d from the server: %w", k, c.timedOut())
		}
	}
	return nil
}

// creditLimit returns how many sends of the run may be posted, at most
// want, when the count last read is short of it: it reads the count again
// and, when that covers no send beyond the posted ones, waits until it
// does.
func (c *conn) creditLimit(want, posted int) (int, error) {
	if err := c.awaitCredit(posted + 1); err != nil {
		return 0, err
	}
	return min(want, c.credits.known), nil
}

// creditWriter is the server's side: it RDMA-writes its count of posted
// receives into the client's credit word.
type creditWriter struct {
	c      *conn
	src    *uint64            // the source word, at the start of the data region
	iov    [1]udat.LMRTriplet // the source word's triplet
	remote udat.RMRTriplet    // the client's credit word
	// every is how many more receives must be posted before the next
	// write: a quarter of them, so that a client that keeps up finds a new
	// count before it has used up the last. A client that has used them
	// all still gets one: the server then takes all its messages and
	// reposts every receive, more than every since its last write.
	every   int
	written int // the count of the last write
	out     int // writes not yet reaped
}

// newCreditWriter prepares the writes to the credit word the client's hello
// gave (c.peer). The server's layout has room for the source word
// (serverLayout).
func newCreditWriter(c *conn) (*creditWriter, error) {
	if c.peer.SegmentLength < creditLen || c.lay.dataLen < creditLen {
		return nil, fmt.Errorf("credits: the client offers %d bytes for its credit word, the server has %d", c.peer.SegmentLength, c.lay.dataLen)
	}
	w := &creditWriter{c: c, remote: c.peer, every: max(1, c.lay.nRecv/4)}
	w.remote.SegmentLength = creditLen
	w.src = (*uint64)(unsafe.Pointer(&c.data()[0]))
	w.iov[0] = c.lmr.Triplet(c.lay.dataOff(), creditLen)
	return w, nil
}

// update tells the client the receives posted in all, when every more have
// been posted since the last write.
func (w *creditWriter) update(posted int) error {
	if posted-w.written < w.every {
		return nil
	}
	return w.write(posted)
}

// write writes posted to the client's credit word. A write still in flight
// may send the new count instead of its own: the count only grows, and
// the client checks each word it reads (unpackCredit).
func (w *creditWriter) write(posted int) error {
	if err := w.reap(w.out >= maxCreditWrites); err != nil {
		return err
	}
	atomic.StoreUint64(w.src, packCredit(posted))
	if err := w.c.ep.PostRDMAWrite(w.iov[:], cookieCredit, w.remote, udat.CompletionDefault); err != nil {
		return fmt.Errorf("write credit %d: %w", posted, err)
	}
	w.written = posted
	w.out++
	return nil
}

// reap takes the completions of the credit writes that are done, and
// waits for one first if wait.
func (w *creditWriter) reap(wait bool) error {
	c := w.c
	for w.out > 0 {
		var d udat.DTOCompletionData
		var err error
		if wait {
			d, err = c.nextDTO(c.reqEVD, "credit write")
			wait = false
		} else {
			err = c.reqEVD.DequeueInto(&c.ev)
			if err == udat.ErrQueueEmpty {
				return nil
			}
			d, err = c.checkDTO(&c.ev, err, "credit write")
		}
		if err != nil {
			return err
		}
		if d.Cookie != cookieCredit {
			return fmt.Errorf("credit write: completion of cookie %#x instead", d.Cookie)
		}
		w.out--
	}
	return nil
}

// finish waits for the credit writes in flight: the control messages that
// follow take their own completions from the request EVD.
func (w *creditWriter) finish() error {
	for w.out > 0 {
		if err := w.reap(true); err != nil {
			return err
		}
	}
	return nil
}

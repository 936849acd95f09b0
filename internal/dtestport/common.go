package dtestport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// RMRSize is a DAT_RMR_TRIPLET as the programs send it: the address (8
// bytes), the length and the rmr_context (4 each), each field in network
// byte order.
const RMRSize = 16

// EncodeRMR is r as the programs send it.
func EncodeRMR(b []byte, r udat.RMRTriplet) {
	binary.BigEndian.PutUint64(b[0:], r.VirtualAddress)
	binary.BigEndian.PutUint32(b[8:], r.SegmentLength)
	binary.BigEndian.PutUint32(b[12:], r.RMRContext)
}

// DecodeRMR reads one.
func DecodeRMR(b []byte) udat.RMRTriplet {
	return udat.RMRTriplet{
		VirtualAddress: binary.BigEndian.Uint64(b[0:]),
		SegmentLength:  binary.BigEndian.Uint32(b[8:]),
		RMRContext:     binary.BigEndian.Uint32(b[12:]),
	}
}

// Wait bounds one wait of the Go side for an event (the C programs wait
// for ever, or 5 s in dtestx).
const Wait = 30 * time.Second

// failure carries an error out of a protocol step; run recovers it.
type failure struct{ err error }

func fail(format string, args ...any) { panic(failure{fmt.Errorf(format, args...)}) }

// listenPSP creates a server's PSP on qual, before the TCP exchange: a C
// client connects as soon as the exchange is done, and a request that
// comes before the PSP is rejected.
func listenPSP(ia *udat.IA, qual udat.ConnQual, evd *udat.EVD) *udat.PSP {
	psp, err := ia.CreatePSP(qual, evd, udat.PSPConsumerFlag)
	check(err, "create the PSP")
	return psp
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %w", what, err)
	}
}

// run runs f, returning the failure a step raised as its error.
func run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fl, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = fl.err
		}
	}()
	f()
	return nil
}

// waitSlice is how long one dat_evd_wait of waitEvent blocks before it
// looks at ctx again.
const waitSlice = 250 * time.Millisecond

// waitEvent waits for one event on evd, giving up after Wait or when
// ctx ends (the C side failed). It waits as the C programs do, with
// dat_evd_wait's own timeout, in slices of waitSlice: a context with a
// deadline for every wait would cost the port allocations and a timer
// that C does not pay.
func waitEvent(ctx context.Context, evd *udat.EVD, what string) udat.Event {
	var ev udat.Event
	for waited := waitSlice; ; waited += waitSlice {
		_, err := evd.WaitInto(udat.Timeout(waitSlice/time.Microsecond), 1, &ev)
		if err == nil {
			return ev
		}
		if !errors.Is(err, udat.ErrTimeoutExpired) || ctx.Err() != nil || waited >= Wait {
			fail("waiting for %s: %w (%v)", what, err, context.Cause(ctx))
		}
	}
}

// waitDTO waits for a DTO completion (plain or IB) that succeeded, with
// cookie and length, and returns it.
func waitDTO(ctx context.Context, evd *udat.EVD, what string, cookie uint64, length int) udat.Event {
	ev := waitEvent(ctx, evd, what)
	if ev.Number != udat.EventDTOCompletion && ev.Number != udat.EventIBDTO {
		fail("%s: event %v, want a DTO completion", what, ev.Number)
	}
	d := ev.DTO
	if d.Status != udat.DTOSuccess || d.Cookie != cookie || (length >= 0 && d.TransferredLength != uint64(length)) {
		fail("%s: status %v cookie %#x length %d, want success, cookie %#x, length %d", what, d.Status, d.Cookie, d.TransferredLength, cookie, length)
	}
	return ev
}

// waitConn waits for the connection event want.
func waitConn(ctx context.Context, evd *udat.EVD, want udat.EventNumber, what string) udat.Event {
	ev := waitEvent(ctx, evd, what)
	if ev.Number != want {
		fail("%s: event %v, want %v", what, ev.Number, want)
	}
	return ev
}

// connectTries bounds how often connectListening tries.
const connectTries = 50

// connectListening connects ep to qual at server and waits for
// ESTABLISHED on conn, trying again, 20 ms apart, while the server is not
// listening yet (NON_PEER_REJECTED): a C server creates its PSP only after
// the TCP exchange that gave the client its address, so the client can
// come too early. Trying again takes a reset, which flushes the receives
// posted for the peer's first messages; rearm takes those flushed
// completions and posts the receives again.
func connectListening(ctx context.Context, ep *udat.EP, conn *udat.EVD, server netip.Addr, qual udat.ConnQual, timeout udat.Timeout, pd []byte, rearm func()) udat.Event {
	for try := 1; ; try++ {
		check(ep.Connect(server, qual, timeout, pd, udat.QoSBestEffort, udat.ConnectDefault), "connect")
		ev := waitEvent(ctx, conn, "the connection")
		if ev.Number != udat.EventConnectionNonPeerRejected || try == connectTries {
			if ev.Number != udat.EventConnectionEstablished {
				fail("the connection: event %v, want %v", ev.Number, udat.EventConnectionEstablished)
			}
			return ev
		}
		check(ep.Reset(), "reset the EP")
		rearm()
		select {
		case <-ctx.Done():
			fail("connecting: %v", context.Cause(ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// takeFlushed takes n flushed receive completions from evd: what a reset
// left of the receives posted before a connection.
func takeFlushed(ctx context.Context, evd *udat.EVD, n int) {
	for range n {
		ev := waitEvent(ctx, evd, "a receive flushed by the reset")
		if ev.Number != udat.EventDTOCompletion || ev.DTO.Status != udat.DTOErrFlushed {
			fail("after the reset: event %v status %v, want a flushed receive", ev.Number, ev.DTO.Status)
		}
	}
}

// freer is a DAT object a port frees at its end.
type freer interface{ Free() error }

// freers is s as freers.
func freers[T freer](s []T) []freer {
	out := make([]freer, len(s))
	for i, o := range s {
		out[i] = o
	}
	return out
}

// closeAll frees objs in order, then closes ia abruptly: a port's end, after
// success or failure. An object never made is a nil handle, whose Free only
// returns DAT_INVALID_HANDLE, so every field may be passed.
// freeBase frees the EVDs, then the PZ, and closes the IA with flags, as
// the C programs end, clearing each handle so that close has nothing left.
func freeBase(evds []**udat.EVD, pz **udat.PZ, ia **udat.IA, flags udat.CloseFlags) {
	for _, e := range evds {
		check((*e).Free(), "free an EVD")
		*e = nil
	}
	check((*pz).Free(), "free the PZ")
	*pz = nil
	a := *ia
	*ia = nil
	check(a.Close(flags), "close the IA")
}

func closeAll(ia *udat.IA, objs ...freer) {
	if ia == nil {
		return
	}
	for _, o := range objs {
		o.Free()
	}
	ia.Close(udat.CloseAbruptFlag)
}

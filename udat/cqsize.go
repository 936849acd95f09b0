package udat

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/udapl-go/udapl/cverbs"
)

// Completion queue sizing: no completion is ever lost to a full CQ.
//
// An EVD's event queue holds qlen events, but every DTO an EP can have
// outstanding may complete while nobody dequeues. So the completion queue
// behind an EVD holds, beyond qlen, one entry for each DTO that can complete
// into it: the request queues of the EPs that use it as request EVD
// (MaxRequestDTOs, plus a flush marker), the receive queues of those that
// use it as receive EVD (MaxRecvDTOs), and the receives of every SRQ those
// EPs take buffers from (its MaxRecvDTOs, once per SRQ). The CQ grows as EPs
// are created (and as SRQs grow), and an EP that would need a larger CQ than
// the device has is refused with DAT_INSUFFICIENT_RESOURCES. Completions
// the event queue has no room for wait in the CQ until Dequeue or Wait makes
// room: none is dropped, and DAT_ASYNC_ERROR_EVD_OVERFLOW cannot occur.
//
// The receives of EPs whose RecvCompletionFlags ask for solicited wait
// complete into a second CQ of the EVD, on the same completion channel,
// armed for solicited completions only (see EVD.Wait).
//
// Some devices cannot resize a CQ (soft-iWARP: ibv_resize_cq says
// EOPNOTSUPP). There a CQ is made once with fixedCQHeadroom entries beyond
// what it needs at creation, and an EP or SRQ that would need more is
// refused with DAT_INSUFFICIENT_RESOURCES: the EVD must then be created
// with a larger qlen.

// fixedCQHeadroom is the room for the DTOs of the EPs to come that a CQ
// gets on a device that cannot resize CQs: the request and receive queues
// of some 30 EPs of the default depths, in little memory (128 KiB on
// soft-iWARP).
const fixedCQHeadroom = 4096

// cqResizable reports whether the device can resize a CQ, by trying on a
// CQ of its own.
func cqResizable(vctx *cverbs.Context) bool {
	cq, err := vctx.NewCQ(1, nil)
	if err != nil {
		return true // let the first real resize tell
	}
	defer cq.Close()
	return !errors.Is(cq.Resize(cq.CQE()+1), syscall.EOPNOTSUPP)
}

// cqSize is the number of entries a new CQ that needs want gets.
func (ia *IA) cqSize(want int) int {
	if ia.cqResizable {
		return want
	}
	n := want + fixedCQHeadroom
	if m := ia.devAttr.MaxCQE; m > 0 {
		n = min(n, m)
	}
	return n
}

// cqUse counts the completions that may wait in one CQ of an EVD.
type cqUse struct {
	depth int          // the EPs' own queues
	srqs  map[*SRQ]int // SRQs whose receives complete here: EPs using each
}

// entries is the number of CQ entries u needs.
func (u *cqUse) entries() int {
	n := u.depth
	for s := range u.srqs {
		n += int(s.depth.Load())
	}
	return n
}

func (u *cqUse) add(depth int, srq *SRQ, d int) {
	u.depth += d * depth
	if srq == nil {
		return
	}
	if u.srqs == nil {
		u.srqs = map[*SRQ]int{}
	}
	u.srqs[srq] += d
	if u.srqs[srq] <= 0 {
		delete(u.srqs, srq)
	}
}

// cqFor returns the CQ of the EVD that the receives (or the requests) of
// an EP go to, and its use.
func (e *EVD) cqFor(solicited bool) (*cverbs.CQ, *cqUse) {
	if solicited {
		return e.scq, &e.suse
	}
	return e.cq, &e.use
}

// attach makes room in the EVD's CQ for a queue of depth DTOs (and the
// receives of srq, if not nil) and returns that CQ: the solicited one for
// the receives of an EP that uses solicited wait.
func (e *EVD) attach(op string, depth int, srq *SRQ, solicited bool) (*cverbs.CQ, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead() || e.cq == nil {
		return nil, newError(op, InvalidHandle)
	}
	if solicited && e.scq == nil {
		scq, err := e.ia.vctx.NewCQ(e.ia.cqSize(max(depth, 1)), e.ch)
		if err != nil {
			return nil, verbsErr(op, err, InsufficientResources|ResourceTEVD)
		}
		e.scq = scq
		if e.watch != nil {
			e.armLocked() // the CNO's watcher hears of it too
		}
	}
	cq, u := e.cqFor(solicited)
	u.add(depth, srq, 1)
	if err := e.fitLocked(cq, u); err != nil {
		u.add(depth, srq, -1)
		return nil, newErrorDetail(op, InsufficientResources|ResourceTEVD,
			fmt.Sprintf("the EVD cannot hold the completions of %d more DTOs: %v", depth, err))
	}
	return cq, nil
}

// detach gives back what attach reserved. The CQ keeps its size.
func (e *EVD) detach(depth int, srq *SRQ, solicited bool) {
	if e == nil {
		return
	}
	e.mu.Lock()
	_, u := e.cqFor(solicited)
	u.add(depth, srq, -1)
	e.mu.Unlock()
}

// fitLocked grows cq to what u and the event queue need. Caller holds mu.
func (e *EVD) fitLocked(cq *cverbs.CQ, u *cqUse) error {
	want := u.entries()
	if cq == e.cq {
		want = max(want, e.qlen)
	}
	if cq == nil || cq.CQE() >= want {
		return nil
	}
	if m := e.ia.devAttr.MaxCQE; m > 0 && want > m {
		return fmt.Errorf("%d CQ entries needed, the device has at most %d", want, m)
	}
	if !e.ia.cqResizable {
		return fmt.Errorf("%d CQ entries needed, the CQ has %d and the device cannot resize it: create the EVD with a larger qlen", want, cq.CQE())
	}
	return cq.Resize(want)
}

// refit grows the CQs of every EVD whose EPs take receives from srq, after
// srq grew.
func (ia *IA) refit(srq *SRQ) error {
	for _, e := range children(ia, ia.evds) {
		if err := e.refit(srq); err != nil {
			return err
		}
	}
	return nil
}

// refit grows the EVD's CQs that take receives from srq.
func (e *EVD) refit(srq *SRQ) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, solicited := range []bool{false, true} {
		if cq, u := e.cqFor(solicited); u.srqs[srq] > 0 {
			if err := e.fitLocked(cq, u); err != nil {
				return err
			}
		}
	}
	return nil
}

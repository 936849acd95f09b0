package udat

import "sync/atomic"

// The data path looks up an LMR for every segment it posts and an EP for
// every completion it polls. Both maps are written rarely (registration,
// EP creation and free) and read under an RWMutex; hot caches in front of
// them remember, per key, the object last found, so that a post or a poll
// of the usual few LMRs and EPs reads one atomic pointer instead of taking
// the lock and hashing. An entry is only trusted for a live object with the
// key looked up: a freed one (whose key a new object may reuse) sends the
// lookup to the map, as does a miss.
const hotSlots = 16

type hotCache[T any] [hotSlots]atomic.Pointer[T]

// epSlot and lmrSlot are where a key's object goes in its hot cache: the
// bits that tell apart the objects of a process. Devices number QPs in
// sequence (rxe, siw, mlx5 alike), and make a memory key of an index in
// sequence and one byte (key << 8 | byte): a QP number's low bits, and the
// index's, spread the usual few objects over the slots.
func epSlot(qpn uint32) uint32  { return qpn % hotSlots }
func lmrSlot(key uint32) uint32 { return (key >> 8) % hotSlots }

func (ia *IA) lookupEP(qpn uint32) *EP {
	if ep := ia.hotEP(qpn); ep != nil {
		return ep
	}
	return ia.lookupEPSlow(qpn)
}

func (ia *IA) lookupLMR(key uint32) *LMR {
	if l := ia.hotLMR(key); l != nil {
		return l
	}
	return ia.lookupLMRSlow(key)
}

// hotEP and hotLMR return the live object the hot cache holds for the key,
// or nil. They are inlined where the data path calls them, which then calls
// the slow lookup only on a miss: a hit costs no call, and no spills
// around one. They test freed alone, in place of dead(): the slow lookups
// cache only objects that were made, and made never changes.
func (ia *IA) hotEP(qpn uint32) *EP {
	if ep := ia.epHot[epSlot(qpn)].Load(); ep != nil && ep.qpn == qpn && !ep.freed.Load() {
		return ep
	}
	return nil
}

func (ia *IA) hotLMR(key uint32) *LMR {
	if l := ia.lmrHot[lmrSlot(key)].Load(); l != nil && l.lkey == key && !l.freed.Load() {
		return l
	}
	return nil
}

// lmrInSlot is hotLMR for the fast posts (postFast, recvFast): it returns
// what the hot cache holds in key's slot, nil or an LMR of any key, live
// or freed, for the caller to tell. They compare the key at once, and test
// freed under the ring's lock, as they must anyway.
func (ia *IA) lmrInSlot(key uint32) *LMR { return ia.lmrHot[lmrSlot(key)].Load() }

func (ia *IA) lookupEPSlow(qpn uint32) *EP {
	ia.epMu.RLock()
	ep := ia.epByQP[qpn]
	ia.epMu.RUnlock()
	if ep != nil && !ep.dead() {
		ia.epHot[epSlot(qpn)].Store(ep)
	}
	return ep
}

func (ia *IA) lookupLMRSlow(key uint32) *LMR {
	ia.lmrMu.RLock()
	l := ia.lmrByKey[key]
	ia.lmrMu.RUnlock()
	if l != nil && !l.dead() {
		ia.lmrHot[lmrSlot(key)].Store(l)
	}
	return l
}

// forgetEP and forgetLMR drop a freed object from the hot caches, so that
// they do not keep it from the garbage collector.
func (ia *IA) forgetEP(ep *EP)  { ia.epHot[epSlot(ep.qpn)].CompareAndSwap(ep, nil) }
func (ia *IA) forgetLMR(l *LMR) { ia.lmrHot[lmrSlot(l.lkey)].CompareAndSwap(l, nil) }

package udat

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Counters: dat_query_counters and dat_print_counters of the IB extension
// (dat_ib_extensions.h, DAT_IB_EXTENSION_VERSION 203 and up), the IA, EP
// and EVD counters of OFA DAPL 2.x. A C library has them only when built
// with DAPL_COUNTERS (configure --enable-counters, off by default; Debian's
// libdapl2 is built without them, and there both calls return
// DAT_NOT_IMPLEMENTED); this package always has them, and says so with the
// provider attribute DAT_COUNTERS (TRUE).
//
// The counters of the paths that post DTOs and take their completions are
// plain additions under the locks those paths hold already (dtoCounts,
// evdCounts). Which counters count is said at each kind below; the others
// stay 0, as most of them do in C's cma provider.

// countersAttr is the provider attribute that says the counters are kept
// (DAT_IB_ATTR_COUNTERS, DAT_ATTR_COUNTERS).
const countersAttr = "DAT_COUNTERS"

// IACounter names a counter of an IA (DAT_IA_COUNTERS, DCNT_IA_*).
// IACounterAll (DCNT_IA_ALL_COUNTERS) stands for all of them.
//
// Counted: the objects created and freed through the IA (PZ, LMR, RMR,
// PSP, PSP "any", RSP, EVD, EP, SRQ; the IA's own asynchronous EVD is not
// one of them, as in C), the connection requests that reached its service
// points (SP_CR) and how they ended (SP_CR_ACCEPTED, SP_CR_REJECTED: C
// counts neither), and the asynchronous errors of its device: QP errors
// (ASYNC_QP_ERROR), CQ errors (ASYNC_CQ_ERROR) and the device's own
// (ASYNC_ERROR). The memory counters (MEM_*), which C never counts, and the
// connection manager's, link and diagnostic counters (CM_*, LNK_*, DIAG_*),
// which C's cma provider fills only between dat_ib_start_counter and
// dat_ib_stop_counter from the kernel's statistics, stay 0.
type IACounter uint32

// The IA counters, in the order and with the values of DAT_IA_COUNTERS.
const (
	IACounterPZCreate IACounter = iota
	IACounterPZFree
	IACounterLMRCreate
	IACounterLMRFree
	IACounterRMRCreate
	IACounterRMRFree
	IACounterPSPCreate
	IACounterPSPCreateAny
	IACounterPSPFree
	IACounterRSPCreate
	IACounterRSPFree
	IACounterEVDCreate
	IACounterEVDFree
	IACounterEPCreate
	IACounterEPFree
	IACounterSRQCreate
	IACounterSRQFree
	IACounterSPCR
	IACounterSPCRAccepted
	IACounterSPCRRejected
	IACounterMemAlloc
	IACounterMemAllocData
	IACounterMemFree
	IACounterAsyncError
	IACounterAsyncQPError
	IACounterAsyncCQError
	IACounterCMListen
	IACounterCMREQTX
	IACounterCMREQRX
	IACounterCMREPTX
	IACounterCMREPRX
	IACounterCMRTUTX
	IACounterCMRTURX
	IACounterCMUserREJTX
	IACounterCMUserREJRX
	IACounterCMActiveEst
	IACounterCMPassiveEst
	IACounterCMAHREQTX
	IACounterCMAHREQRX
	IACounterCMAHResolved
	IACounterCMDREQTX
	IACounterCMDREQRX
	IACounterCMDREPTX
	IACounterCMDREPRX
	IACounterCMMRATX
	IACounterCMMRARX
	IACounterCMREQFullQPoll
	IACounterCMErr
	IACounterCMErrREQFullQ
	IACounterCMErrREQDup
	IACounterCMErrREQRetry
	IACounterCMErrREPDup
	IACounterCMErrREPRetry
	IACounterCMErrRTUDup
	IACounterCMErrRTURetry
	IACounterCMErrRefused
	IACounterCMErrReset
	IACounterCMErrTimeout
	IACounterCMErrREJTX
	IACounterCMErrREJRX
	IACounterCMErrDREQDup
	IACounterCMErrDREQRetry
	IACounterCMErrDREPDup
	IACounterCMErrDREPRetry
	IACounterCMErrMRADup
	IACounterCMErrMRARetry
	IACounterCMErrUnexpected
	IACounterLnkErrRcv
	IACounterLnkErrRcvRemPhys
	IACounterLnkErrRcvConstraint
	IACounterLnkErrXmtDiscards
	IACounterLnkErrXmtContraint
	IACounterLnkErrIntegrity
	IACounterLnkErrExcBufOverrun
	IACounterLnkWarnRcvSwRelay
	IACounterLnkWarnXmtWait
	IACounterDiagErrRQRAE
	IACounterDiagErrRQOOS
	IACounterDiagErrRQRIRE
	IACounterDiagErrRQUDSDPRD
	IACounterDiagErrSQRAE
	IACounterDiagErrSQOOS
	IACounterDiagErrSQRIRE
	IACounterDiagErrSQRREE
	IACounterDiagErrSQTREE

	IACounterAll // DCNT_IA_ALL_COUNTERS: every IA counter
)

// EPCounter names a counter of an EP (DAT_EP_COUNTERS, DCNT_EP_*).
// EPCounterAll (DCNT_EP_ALL_COUNTERS) stands for all of them.
//
// Counted: the calls to Connect and DupConnect (CONNECT) and to Disconnect
// (DISCONNECT) that pass the handle checks, as C counts them; the DTOs
// posted (POST_*, each with the bytes in its _DATA twin), flushed at post
// time or not, and the receives that completed successfully (RECV_*, with
// the bytes received), an SRQ's on the EP that took them. Reset keeps them.
type EPCounter uint32

// The EP counters, in the order and with the values of DAT_EP_COUNTERS.
const (
	EPCounterConnect EPCounter = iota
	EPCounterDisconnect
	EPCounterPostSend
	EPCounterPostSendData
	EPCounterPostSendUD
	EPCounterPostSendUDData
	EPCounterPostRecv
	EPCounterPostRecvData
	EPCounterPostWrite
	EPCounterPostWriteData
	EPCounterPostWriteImm
	EPCounterPostWriteImmData
	EPCounterPostRead
	EPCounterPostReadData
	EPCounterPostCmpSwap
	EPCounterPostFetchAdd
	EPCounterRecv
	EPCounterRecvData
	EPCounterRecvUD
	EPCounterRecvUDData
	EPCounterRecvImm
	EPCounterRecvImmData
	EPCounterRecvRDMAImm
	EPCounterRecvRDMAImmData

	EPCounterAll // DCNT_EP_ALL_COUNTERS: every EP counter
)

// EVDCounter names a counter of an EVD (DAT_EVD_COUNTERS, DCNT_EVD_*).
// EVDCounterAll (DCNT_EVD_ALL_COUNTERS) stands for all of them.
//
// Counted: the connection events posted to the EVD as an EP's connect EVD
// (CONN_CALLBACK: established, rejected, unreachable, timed out,
// disconnected; the UD ones too); the calls to Wait (WAIT), those that
// blocked (WAIT_BLOCKED), each arming of the CQs for a completion event
// (WAIT_NOTIFY); the calls to Dequeue (DEQUEUE), those that polled the CQ
// (DEQUEUE_POLL), found an event (DEQUEUE_FOUND) or none
// (DEQUEUE_NOT_FOUND). DEQUEUE_POLL_FOUND and DTO_CALLBACK stay 0
// (C never counts the first).
type EVDCounter uint32

// The EVD counters, in the order and with the values of DAT_EVD_COUNTERS.
const (
	EVDCounterWait EVDCounter = iota
	EVDCounterWaitBlocked
	EVDCounterWaitNotify
	EVDCounterDequeue
	EVDCounterDequeueFound
	EVDCounterDequeueNotFound
	EVDCounterDequeuePoll
	EVDCounterDequeuePollFound
	EVDCounterConnCallback
	EVDCounterDTOCallback

	EVDCounterAll // DCNT_EVD_ALL_COUNTERS: every EVD counter
)

// String returns the C name of c, e.g. "DCNT_IA_PZ_CREATE".
func (c IACounter) String() string { return enumString(c, iaCounterNames, "DAT_IA_COUNTERS") }

// String returns the C name of c, e.g. "DCNT_EP_POST_SEND".
func (c EPCounter) String() string { return enumString(c, epCounterNames, "DAT_EP_COUNTERS") }

// String returns the C name of c, e.g. "DCNT_EVD_WAIT".
func (c EVDCounter) String() string { return enumString(c, evdCounterNames, "DAT_EVD_COUNTERS") }

// Counter is a counter of an IA, an EP or an EVD: the counter argument of
// QueryCounters and PrintCounters, whose kind must be that of the handle.
type Counter interface {
	IACounter | EPCounter | EVDCounter
}

// QueryCounters returns counters of an IA, an EP or an EVD
// (dat_query_counters, dat_ib_query_counters): with the kind's All counter
// (IACounterAll, EPCounterAll, EVDCounterAll) every counter of h, else the
// one named. The values are indexed by counter number, as C fills the
// caller's array: the slice has the kind's All entries, and with a single
// counter only its entry is set (vals[EPCounterConnect] in both cases).
// With reset the counters read are set to 0.
//
// A nil or freed handle, or one of another kind than IA, EP or EVD, is
// DAT_INVALID_HANDLE (C gives DAT_INVALID_HANDLE for the other kinds); a
// counter of another kind than the handle's, or beyond its kind's All, is
// DAT_INVALID_PARAMETER | DAT_INVALID_ARG2 (C answers DAT_SUCCESS and
// writes nothing).
func QueryCounters[C Counter](h Handle, counter C, reset bool) ([]uint64, error) {
	return readCounters("dat_query_counters", h, counter, reset)
}

// PrintCounters writes counters of an IA, an EP or an EVD to standard
// output (dat_print_counters, dat_ib_print_counters), one line each as C
// prints them: " host:0xpid: DCNT_NAME = value \n". counter, reset and the
// errors are those of QueryCounters (C prints nothing for a handle of
// another kind and returns DAT_SUCCESS).
func PrintCounters[C Counter](h Handle, counter C, reset bool) error {
	return FprintCounters(os.Stdout, h, counter, reset)
}

// FprintCounters is PrintCounters writing to w.
func FprintCounters[C Counter](w io.Writer, h Handle, counter C, reset bool) error {
	const op = "dat_print_counters"
	vals, err := readCounters(op, h, counter, reset)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	pid := os.Getpid()
	for i, v := range vals {
		if i == int(counter) || int(counter) == len(vals) {
			if _, err := fmt.Fprintf(w, " %s:0x%x: %s = %d \n", host, pid, C(i), v); err != nil {
				return newError(op, InternalError)
			}
		}
	}
	return nil
}

// readCounters returns counter of h, or all its counters, indexed by
// counter, after checking h and that counter is one of its counters; with
// reset it zeroes what it read.
func readCounters[C Counter](op string, h Handle, counter C, reset bool) ([]uint64, error) {
	var o *object
	var t HandleType
	var ep *EP
	var evd *EVD
	switch v := h.(type) {
	case *IA:
		if v != nil {
			o = &v.object
		}
		t = HandleTypeIA
	case *EP:
		if v != nil {
			o, ep = &v.object, v
		}
		t = HandleTypeEP
	case *EVD:
		if v != nil {
			o, evd = &v.object, v
		}
		t = HandleTypeEVD
	default: // nil, or a handle without counters
		return nil, newError(op, InvalidHandle)
	}
	if o == nil || o.dead() {
		return nil, badHandle(op, t)
	}
	all := counterKinds[t]
	var kind HandleType
	switch any(counter).(type) {
	case IACounter:
		kind = HandleTypeIA
	case EPCounter:
		kind = HandleTypeEP
	case EVDCounter:
		kind = HandleTypeEVD
	}
	if kind != t || int(counter) > all {
		return nil, newError(op, InvalidParameter|InvalidArg2)
	}
	set := o.counters(all)
	vals := make([]uint64, all)
	for i := range vals {
		if i == int(counter) || int(counter) == all {
			vals[i] = set.read(i, reset)
		}
	}
	if ep != nil {
		ep.queueCounts(func(c *dtoCounts, table *[16]dtoCounter) {
			c.addTo(vals, table, EPCounter(counter), reset)
		})
	}
	if evd != nil {
		evd.lockedCounts(func(c *evdCounts) { c.addTo(vals, EVDCounter(counter), reset) })
	}
	return vals, nil
}

// counterKinds gives the number of counters of each kind of handle that
// has them.
var counterKinds = map[HandleType]int{
	HandleTypeIA:  int(IACounterAll),
	HandleTypeEP:  int(EPCounterAll),
	HandleTypeEVD: int(EVDCounterAll),
}

// counterSet holds the counters of an IA, EP or EVD.
type counterSet []atomic.Uint64

// counters returns the object's counters, n of them, made on first use:
// objects that nobody counts or queries carry only the nil pointer.
func (o *object) counters(n int) counterSet {
	if c := o.cnt.Load(); c != nil {
		return *c
	}
	c := make(counterSet, n)
	if o.cnt.CompareAndSwap(nil, &c) {
		return c
	}
	return *o.cnt.Load()
}

// read returns counter i, and sets it to 0 with reset.
func (c counterSet) read(i int, reset bool) uint64 {
	if reset {
		return c[i].Swap(0)
	}
	return c[i].Load()
}

// count adds 1 to IA counter c.
func (ia *IA) count(c IACounter) { ia.counters(int(IACounterAll))[c].Add(1) }

// count adds 1 to EP counter c.
func (ep *EP) count(c EPCounter) { ep.counters(int(EPCounterAll))[c].Add(1) }

// count adds 1 to EVD counter c.
func (e *EVD) count(c EVDCounter) { e.counters(int(EVDCounterAll))[c].Add(1) }

// countConn counts a connection event posted to the EVD as an EP's
// connect EVD (DCNT_EVD_CONN_CALLBACK). A nil EVD counts nothing.
func (e *EVD) countConn() {
	if e != nil {
		e.count(EVDCounterConnCallback)
	}
}

// countChild counts the creation (d 1) or freeing (d -1) of a child of
// the IA, for addChild and delChild. PSPs are counted where they are
// created, which knows whether the connection qualifier was the
// Consumer's or any; the IA's asynchronous EVD is none of the Consumer's.
func (ia *IA) countChild(v any, d int) {
	var c IACounter
	switch v := v.(type) {
	case *PZ:
		c = IACounterPZCreate
	case *EVD:
		if v == ia.asyncEVD {
			return
		}
		c = IACounterEVDCreate
	case *EP:
		c = IACounterEPCreate
	case *RSP:
		c = IACounterRSPCreate
	case *SRQ:
		c = IACounterSRQCreate
	case *CR:
		if d < 0 {
			return // counted as accepted or rejected
		}
		c = IACounterSPCR
	case *PSP:
		if d < 0 {
			ia.count(IACounterPSPFree)
		}
		return
	default:
		return
	}
	if d < 0 {
		c++ // each _FREE follows its _CREATE
	}
	ia.count(c)
}

// The DTO counters of an EP (DCNT_EP_POST_*, DCNT_EP_RECV_*) belong on the
// paths that post DTOs and take their completions, where an atomic counter
// would cost too much (two atomic adds: 25 ns a DTO). They are plain
// counts by DTO op (dtoCounts) that each queue's ring keeps under the lock
// it holds there, and that QueryCounters adds to the EP's other counters
// (queueCounts).

// dtoCounter maps a DTO op to its EP counter and the counter of its bytes
// (noCounter: none).
type dtoCounter struct{ n, bytes EPCounter }

const noCounter = EPCounterAll

// postCounters gives the counters of a DTO posted, by op (below 16), as C
// counts them after ibv_post_send or ibv_post_recv succeeded: the bytes of
// its local segments in the _DATA twin (none for atomics). A send with
// immediate data counts as a send, a receive of a UD EP as a receive;
// binds and flush markers (op 15 after masking) count nothing.
var postCounters = [16]dtoCounter{
	DTOSend:                  {EPCounterPostSend, EPCounterPostSendData},
	DTORDMAWrite:             {EPCounterPostWrite, EPCounterPostWriteData},
	DTORDMARead:              {EPCounterPostRead, EPCounterPostReadData},
	DTOReceive:               {EPCounterPostRecv, EPCounterPostRecvData},
	DTOReceiveWithInvalidate: {noCounter, noCounter},
	DTOBindMW:                {noCounter, noCounter},
	DTOLMRFMR:                {noCounter, noCounter},
	DTOLMRInvalidate:         {noCounter, noCounter},
	DTOIBRDMAWriteImmed:      {EPCounterPostWriteImm, EPCounterPostWriteImmData},
	DTOIBRecvImmed:           {noCounter, noCounter},
	DTOIBFetchAdd:            {EPCounterPostFetchAdd, noCounter},
	DTOIBCmpSwap:             {EPCounterPostCmpSwap, noCounter},
	DTOIBRecvMsgImmed:        {noCounter, noCounter},
	DTOIBSendUD:              {EPCounterPostSendUD, EPCounterPostSendUDData},
	DTOIBRecvUD:              {EPCounterPostRecv, EPCounterPostRecvData}, // a UD EP's receives
	DTOIBRecvUDImmed:         {noCounter, noCounter},
}

// recvCounters gives the counters of a receive completed successfully, by
// the op its completion reports (below 16), with the bytes received, as C
// counts them when it takes the completion: DCNT_EP_RECV (a plain
// message), DCNT_EP_RECV_IMM (a send with immediate data),
// DCNT_EP_RECV_RDMA_IMM (an RDMA write with immediate data),
// DCNT_EP_RECV_UD (a datagram).
var recvCounters = [16]dtoCounter{
	DTOSend:                  {noCounter, noCounter},
	DTORDMAWrite:             {noCounter, noCounter},
	DTORDMARead:              {noCounter, noCounter},
	DTOReceive:               {EPCounterRecv, EPCounterRecvData},
	DTOReceiveWithInvalidate: {noCounter, noCounter},
	DTOBindMW:                {noCounter, noCounter},
	DTOLMRFMR:                {noCounter, noCounter},
	DTOLMRInvalidate:         {noCounter, noCounter},
	DTOIBRDMAWriteImmed:      {noCounter, noCounter},
	DTOIBRecvImmed:           {EPCounterRecvRDMAImm, EPCounterRecvRDMAImmData},
	DTOIBFetchAdd:            {noCounter, noCounter},
	DTOIBCmpSwap:             {noCounter, noCounter},
	DTOIBRecvMsgImmed:        {EPCounterRecvImm, EPCounterRecvImmData},
	DTOIBSendUD:              {noCounter, noCounter},
	DTOIBRecvUD:              {EPCounterRecvUD, EPCounterRecvUDData},
	DTOIBRecvUDImmed:         {EPCounterRecvUD, EPCounterRecvUDData},
}

// dtoCounts counts the DTOs of one queue by op (masked to its low 4 bits),
// with their bytes. Its owner updates it under its own lock.
type dtoCounts struct {
	n, bytes [16]uint64
}

// add counts one DTO of op that moved length bytes: two plain additions,
// no branch.
func (c *dtoCounts) add(op DTOOp, length uint64) {
	i := op & 15
	c.n[i]++
	c.bytes[i] += length
}

// sub takes back an add: a DTO that was not posted after all.
func (c *dtoCounts) sub(op DTOOp, length uint64) {
	i := op & 15
	c.n[i]--
	c.bytes[i] -= length
}

// addTo adds the counts to vals, indexed by EPCounter, through table: every
// counter, or only counter one (not EPCounterAll). With reset, what it
// added is zeroed. Caller holds the lock of c's owner.
func (c *dtoCounts) addTo(vals []uint64, table *[16]dtoCounter, one EPCounter, reset bool) {
	for i, d := range table {
		if d.n != noCounter && (one == EPCounterAll || one == d.n) {
			vals[d.n] += c.n[i]
			if reset {
				c.n[i] = 0
			}
		}
		if d.bytes != noCounter && (one == EPCounterAll || one == d.bytes) {
			vals[d.bytes] += c.bytes[i]
			if reset {
				c.bytes[i] = 0
			}
		}
	}
}

// evdCounts are the counters an EVD keeps under its lock where it waits and
// dequeues, plain, indexed by EVDCounter; QueryCounters adds them to the
// EVD's other counters (lockedCounts).
type evdCounts [EVDCounterAll]uint64

// addTo adds the counts to vals: every counter, or only counter one (not
// EVDCounterAll). With reset, what it added is zeroed. Caller holds the
// EVD's lock.
func (c *evdCounts) addTo(vals []uint64, one EVDCounter, reset bool) {
	for i := range c {
		if one == EVDCounterAll || one == EVDCounter(i) {
			vals[i] += c[i]
			if reset {
				c[i] = 0
			}
		}
	}
}

// lockedCounts calls f with the EVD's evdCounts under its lock.
func (e *EVD) lockedCounts(f func(c *evdCounts)) {
	e.mu.Lock()
	f(&e.counts)
	e.mu.Unlock()
}

// queueCounts calls f with each dtoCounts of the EP's queues and the table
// that maps it to EP counters, under the lock that guards it: the DTOs
// posted on the send and receive queues (postCounters) and the messages
// received (recvCounters).
func (ep *EP) queueCounts(f func(c *dtoCounts, table *[16]dtoCounter)) {
	for _, r := range [...]*fifoRing{ep.sq, ep.rq} {
		if r == nil {
			continue
		}
		r.mu.Lock()
		f(&r.posted, &postCounters)
		if r == ep.rq {
			f(&r.received, &recvCounters)
		}
		r.mu.Unlock()
	}
}

//go:build linux && cgo

package udat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The counters on the device: the IA's objects, a connection's events, and
// the DTOs and EVD calls of a connected pair.

// The IA counts the objects created and freed through it, not its own
// asynchronous EVD, and says it keeps counters.
func TestCountersIA(t *testing.T) {
	ia := openIA(t)
	_, pa, err := ia.Query()
	require.NoError(t, err)
	require.Contains(t, pa.ProviderSpecificAttr, NamedAttr{"DAT_COUNTERS", "TRUE"})
	requireCounters(t, ia, IACounterAll, false, nil)
	requireCounters(t, ia.AsyncEVD(), EVDCounterAll, false, nil)

	pz := mustPZ(t, ia)
	dto, err := ia.CreateEVD(8, EVDDTOFlag)
	require.NoError(t, err)
	conn, err := ia.CreateEVD(8, EVDConnectionFlag)
	require.NoError(t, err)
	cr, err := ia.CreateEVD(8, EVDCRFlag)
	require.NoError(t, err)
	lmr, err := ia.AllocLMR(pz, 4096, MemPrivAll)
	require.NoError(t, err)
	lmr2, err := ia.CreateLMR(pz, make([]byte, 4096), MemPrivAll, VATypeVA)
	require.NoError(t, err)
	ep, err := ia.CreateEP(pz, dto, dto, conn, nil)
	require.NoError(t, err)
	ep2, err := ia.CreateEP(pz, dto, dto, conn, nil)
	require.NoError(t, err)
	srq, err := ia.CreateSRQ(pz, SRQAttr{MaxRecvDTOs: 4, MaxRecvIOV: 1})
	require.NoError(t, err)
	psp, err := ia.CreatePSP(nextConnQual(), cr, PSPConsumerFlag)
	require.NoError(t, err)
	pspAny, _, err := ia.CreatePSPAny(cr, PSPConsumerFlag)
	require.NoError(t, err)
	rsp, err := ia.CreateRSP(nextConnQual(), ep2, cr)
	require.NoError(t, err)
	_, err = ia.CreateEVD(0, EVDDTOFlag) // refused: not counted
	requireCode(t, err, InvalidParameter|InvalidArg2)
	rmrs := uint64(1)
	rmr, err := pz.CreateRMR()
	if ia.devAttr.MaxMW == 0 {
		requireCode(t, err, ModelNotSupported)
		rmrs = 0
	} else {
		require.NoError(t, err)
	}

	created := map[IACounter]uint64{
		IACounterPZCreate: 1, IACounterEVDCreate: 3, IACounterLMRCreate: 2, IACounterEPCreate: 2,
		IACounterSRQCreate: 1, IACounterPSPCreate: 1, IACounterPSPCreateAny: 1, IACounterRSPCreate: 1,
		IACounterRMRCreate: rmrs,
	}
	requireCounters(t, ia, IACounterAll, false, created)

	if rmr != nil {
		require.NoError(t, rmr.Free())
	}
	require.NoError(t, rsp.Free())
	require.NoError(t, pspAny.Free())
	require.NoError(t, psp.Free())
	require.NoError(t, srq.Free())
	require.NoError(t, ep.Free())
	require.NoError(t, lmr.Free())
	require.NoError(t, cr.Free())
	requireCode(t, cr.Free(), InvalidHandle) // freed twice: counted once
	freed := map[IACounter]uint64{
		IACounterRSPFree: 1, IACounterPSPFree: 2, IACounterSRQFree: 1, IACounterEPFree: 1,
		IACounterLMRFree: 1, IACounterEVDFree: 1, IACounterRMRFree: rmrs,
	}
	want := map[IACounter]uint64{}
	for _, m := range []map[IACounter]uint64{created, freed} {
		for c, v := range m {
			if v != 0 {
				want[c] = v
			}
		}
	}
	requireCounters(t, ia, IACounterAll, true, want)
	requireCounters(t, ia, IACounterAll, false, nil)

	require.NoError(t, ep2.Free())
	require.NoError(t, lmr2.Free())
	require.NoError(t, dto.Free())
	require.NoError(t, conn.Free())
	require.NoError(t, pz.Free())
	requireCounters(t, ia, IACounterAll, false, map[IACounter]uint64{
		IACounterEPFree: 1, IACounterLMRFree: 1, IACounterEVDFree: 2, IACounterPZFree: 1})

	var buf bytes.Buffer
	require.NoError(t, FprintCounters(&buf, ia, IACounterPZFree, false))
	require.True(t, strings.HasSuffix(buf.String(), ": DCNT_IA_PZ_FREE = 1 \n"), "printed %q", buf.String())
	_, err = QueryCounters(pz, IACounterAll, false)
	requireCode(t, err, InvalidHandle, "a PZ has no counters")
}

// A connection counts Connect and Disconnect on the EP that called them,
// its connection events on each side's connect EVD, and the request on the
// IA with how it ended.
func TestCountersConnection(t *testing.T) {
	p := newPair(t, pairOpts{})
	c, s := p.client, p.server
	requireCounters(t, c.ep, EPCounterAll, false, map[EPCounter]uint64{EPCounterConnect: 1})
	requireCounters(t, s.ep, EPCounterAll, false, nil)
	requireCounters(t, c.conn, EVDCounterConnCallback, false, map[EVDCounter]uint64{EVDCounterConnCallback: 1})
	requireCounters(t, s.conn, EVDCounterConnCallback, false, map[EVDCounter]uint64{EVDCounterConnCallback: 1})
	requireCounters(t, p.cr, EVDCounterConnCallback, false, nil) // a request is no connection event
	requireCounters(t, p.ia, IACounterSPCR, false, map[IACounter]uint64{IACounterSPCR: 1})
	requireCounters(t, p.ia, IACounterSPCRAccepted, false, map[IACounter]uint64{IACounterSPCRAccepted: 1})

	disconnectPair(t, p)
	requireCounters(t, c.ep, EPCounterAll, true, map[EPCounter]uint64{EPCounterConnect: 1, EPCounterDisconnect: 1})
	requireCounters(t, s.ep, EPCounterAll, false, nil)
	requireCounters(t, c.conn, EVDCounterConnCallback, false, map[EVDCounter]uint64{EVDCounterConnCallback: 2})
	requireCounters(t, s.conn, EVDCounterConnCallback, false, map[EVDCounter]uint64{EVDCounterConnCallback: 2})

	// A rejected request: the requester's EP counts its Connect, its
	// connect EVD the reject, the IA the request and its reject.
	require.NoError(t, c.ep.Reset())
	require.NoError(t, c.ep.Connect(p.ia.Address(), p.qual, waitUS, nil, QoSBestEffort, ConnectDefault))
	ev := waitEvent(t, p.cr)
	require.Equal(t, EventConnectionRequest, ev.Number)
	require.NoError(t, ev.CR.CR.Reject(nil))
	ev = waitEvent(t, c.conn)
	require.Equal(t, EventConnectionPeerRejected, ev.Number)
	requireCounters(t, c.ep, EPCounterAll, false, map[EPCounter]uint64{EPCounterConnect: 1})
	requireCounters(t, c.conn, EVDCounterConnCallback, false, map[EVDCounter]uint64{EVDCounterConnCallback: 3})
	ias, err := QueryCounters(p.ia, IACounterAll, false)
	require.NoError(t, err)
	assert.Equal(t, []uint64{2, 1, 1}, []uint64{ias[IACounterSPCR], ias[IACounterSPCRAccepted], ias[IACounterSPCRRejected]},
		"requests, accepted, rejected")
}

// An EP counts the DTOs posted on it, with their bytes, and the receives
// that completed, across a Reset; an EVD its waits and dequeues, as C.
func TestCountersDTOs(t *testing.T) {
	p := newPair(t, pairOpts{splitEVDs: true})
	c, s := p.client, p.server
	postRecvs(t, s, 0, 100, 2, 1)
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 40)}, 1, CompletionDefault))
	require.NoError(t, c.ep.PostSend([]LMRTriplet{c.lmr.Triplet(0, 30)}, 2, CompletionDefault))
	require.NoError(t, c.ep.PostRDMAWrite([]LMRTriplet{c.lmr.Triplet(0, 512)}, 3, s.lmr.RMRTriplet(4096, 512), CompletionDefault))
	// Batched, one of them refused: it is not counted.
	n, err := c.ep.PostRequests([]Request{
		{Op: DTORDMARead, LocalIOV: []LMRTriplet{c.lmr.Triplet(8192, 256)}, Cookie: 4, Remote: s.lmr.RMRTriplet(4096, 256)},
		{Op: DTORDMARead, LocalIOV: []LMRTriplet{c.lmr.Triplet(8192, 16)}, Cookie: 5, Remote: s.lmr.RMRTriplet(4096, 256)},
	})
	require.Equal(t, 1, n)
	requireCode(t, err, LengthError)
	for range 4 {
		waitDTO(t, c.req)
	}
	require.Equal(t, uint64(40), waitDTO(t, s.recv).TransferredLength)
	require.Equal(t, uint64(30), waitDTO(t, s.recv).TransferredLength)

	requireCounters(t, c.ep, EPCounterAll, false, map[EPCounter]uint64{
		EPCounterConnect:  1,
		EPCounterPostSend: 2, EPCounterPostSendData: 70,
		EPCounterPostWrite: 1, EPCounterPostWriteData: 512,
		EPCounterPostRead: 1, EPCounterPostReadData: 256,
	})
	requireCounters(t, s.ep, EPCounterAll, false, map[EPCounter]uint64{
		EPCounterPostRecv: 2, EPCounterPostRecvData: 200,
		EPCounterRecv: 2, EPCounterRecvData: 70,
	})
	// Four waits on the request EVD, each found its event queued or polled
	// for it; no dequeue yet.
	got, err := QueryCounters(c.req, EVDCounterAll, false)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), got[EVDCounterWait])
	assert.Zero(t, got[EVDCounterDequeue])

	var ev Event
	require.ErrorIs(t, c.req.DequeueInto(&ev), ErrQueueEmpty)
	requireCounters(t, c.req, EVDCounterDequeue, false, map[EVDCounter]uint64{EVDCounterDequeue: 1})
	got, err = QueryCounters(c.req, EVDCounterAll, false)
	require.NoError(t, err)
	assert.Equal(t, [3]uint64{1, 1, 0}, [3]uint64{got[EVDCounterDequeuePoll], got[EVDCounterDequeueNotFound], got[EVDCounterDequeueFound]},
		"an empty queue: polled, nothing found")

	// The counts survive a Reset, which makes new queues.
	disconnectPair(t, p)
	require.NoError(t, s.ep.Reset())
	requireCounters(t, s.ep, EPCounterRecvData, false, map[EPCounter]uint64{EPCounterRecvData: 70})
}

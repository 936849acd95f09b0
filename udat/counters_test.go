package udat

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Counters (counters.go). The tests named TestCountersUnit* need no
// device; the others open one.

// liveHandles returns an IA, an EP, an EVD and a PZ that are valid handles
// with no device behind them: enough for the counters, which live in the
// object.
func liveHandles() (*IA, *EP, *EVD, *PZ) {
	return &IA{object: liveObject()}, &EP{object: liveObject()}, &EVD{object: liveObject()}, &PZ{object: liveObject()}
}

// requireCounters queries counter of h and requires the values want,
// indexed by counter number (absent: 0).
func requireCounters[C Counter](t *testing.T, h Handle, counter C, reset bool, want map[C]uint64) {
	t.Helper()
	got, err := QueryCounters(h, counter, reset)
	require.NoError(t, err)
	all := counterKinds[kindOf(counter)]
	require.Len(t, got, all, "one value per counter of the kind, indexed by counter")
	exp := make([]uint64, all)
	for c, v := range want {
		exp[c] = v
	}
	require.Equal(t, exp, got, "counters of %T after querying %v (reset %v)", h, counter, reset)
}

func kindOf[C Counter](c C) HandleType {
	switch any(c).(type) {
	case IACounter:
		return HandleTypeIA
	case EPCounter:
		return HandleTypeEP
	}
	return HandleTypeEVD
}

// A handle of another kind than IA, EP or EVD, a nil or freed one, a
// counter of another kind than the handle's or beyond its All: the codes
// of QueryCounters and PrintCounters.
func TestCountersUnitBadInput(t *testing.T) {
	ia, ep, evd, pz := liveHandles()
	type call func() error
	query := func(h Handle, c IACounter) call {
		return func() error { _, err := QueryCounters(h, c, false); return err }
	}
	var buf bytes.Buffer
	for name, c := range map[string]struct {
		query, print call
		code         Return
	}{
		"nil handle": {query(nil, IACounterAll),
			func() error { return FprintCounters(&buf, nil, IACounterAll, false) }, ClassError | InvalidHandle},
		"nil IA": {query((*IA)(nil), IACounterAll),
			func() error { return FprintCounters(&buf, (*IA)(nil), IACounterAll, false) }, ClassError | InvalidHandle | InvalidHandleIA},
		"nil EP": {func() error { _, err := QueryCounters((*EP)(nil), EPCounterAll, false); return err },
			func() error { return FprintCounters(&buf, (*EP)(nil), EPCounterAll, false) }, ClassError | InvalidHandle | InvalidHandleEP},
		"zero EVD": {func() error { _, err := QueryCounters(&EVD{}, EVDCounterAll, false); return err },
			func() error { return FprintCounters(&buf, &EVD{}, EVDCounterAll, false) }, ClassError | InvalidHandle},
		"a PZ": {query(pz, IACounterAll),
			func() error { return FprintCounters(&buf, pz, IACounterAll, false) }, ClassError | InvalidHandle},
		"an EP counter of an IA": {func() error { _, err := QueryCounters(ia, EPCounterConnect, false); return err },
			func() error { return FprintCounters(&buf, ia, EPCounterAll, false) }, ClassError | InvalidParameter | InvalidArg2},
		"an IA counter of an EVD": {query(evd, IACounterPZCreate),
			func() error { return FprintCounters(&buf, evd, IACounterPZCreate, false) }, ClassError | InvalidParameter | InvalidArg2},
		"beyond EPCounterAll": {func() error { _, err := QueryCounters(ep, EPCounterAll+1, false); return err },
			func() error { return FprintCounters(&buf, ep, EPCounterAll+1, false) }, ClassError | InvalidParameter | InvalidArg2},
		"beyond IACounterAll": {query(ia, IACounter(1000)),
			func() error { return FprintCounters(&buf, ia, IACounter(1000), false) }, ClassError | InvalidParameter | InvalidArg2},
	} {
		t.Run(name, func(t *testing.T) {
			requireCode(t, c.query(), c.code, "QueryCounters")
			requireCode(t, c.print(), c.code, "FprintCounters")
		})
	}
	require.Zero(t, buf.Len(), "nothing printed for bad input")

	ia.freed.Store(true)
	_, err := QueryCounters(ia, IACounterAll, false)
	requireCode(t, err, InvalidHandle|InvalidHandleIA, "a freed IA")
	requireCode(t, PrintCounters(ia, IACounterAll, false), InvalidHandle|InvalidHandleIA, "a freed IA")
}

// QueryCounters returns one value per counter of the kind, indexed by
// counter: all of them for the kind's All, else only the one asked for; a
// reset zeroes what was read, and only that.
func TestCountersUnitQueryAndReset(t *testing.T) {
	ia, ep, evd, _ := liveHandles()
	requireCounters(t, ia, IACounterAll, false, nil)
	for range 3 {
		ia.count(IACounterPZCreate)
	}
	ia.count(IACounterEPFree)
	ia.count(IACounterDiagErrSQTREE) // the last one
	requireCounters(t, ia, IACounterEPFree, false, map[IACounter]uint64{IACounterEPFree: 1})
	requireCounters(t, ia, IACounterAll, false, map[IACounter]uint64{
		IACounterPZCreate: 3, IACounterEPFree: 1, IACounterDiagErrSQTREE: 1})
	requireCounters(t, ia, IACounterPZCreate, true, map[IACounter]uint64{IACounterPZCreate: 3})
	requireCounters(t, ia, IACounterAll, false, map[IACounter]uint64{IACounterEPFree: 1, IACounterDiagErrSQTREE: 1})
	requireCounters(t, ia, IACounterAll, true, map[IACounter]uint64{IACounterEPFree: 1, IACounterDiagErrSQTREE: 1})
	requireCounters(t, ia, IACounterAll, false, nil)

	ep.count(EPCounterConnect)
	ep.count(EPCounterDisconnect)
	ep.count(EPCounterDisconnect)
	requireCounters(t, ep, EPCounterAll, false, map[EPCounter]uint64{EPCounterConnect: 1, EPCounterDisconnect: 2})
	evd.countConn()
	(*EVD)(nil).countConn() // a nil connect EVD counts nothing
	requireCounters(t, evd, EVDCounterAll, true, map[EVDCounter]uint64{EVDCounterConnCallback: 1})
	requireCounters(t, evd, EVDCounterAll, false, nil)
}

// PrintCounters prints as C's dapl_print_counter: " host:0xpid: NAME =
// value \n", every counter for All, one line for one counter.
func TestCountersUnitPrint(t *testing.T) {
	_, ep, evd, _ := liveHandles()
	host, _ := os.Hostname()
	pre := fmt.Sprintf(" %s:0x%x: ", host, os.Getpid())
	ep.count(EPCounterConnect)

	var buf bytes.Buffer
	require.NoError(t, FprintCounters(&buf, ep, EPCounterConnect, false))
	require.Equal(t, pre+"DCNT_EP_CONNECT = 1 \n", buf.String())

	buf.Reset()
	require.NoError(t, FprintCounters(&buf, ep, EPCounterAll, true))
	lines := strings.SplitAfter(buf.String(), "\n")
	require.Len(t, lines, int(EPCounterAll)+1) // and "" after the last
	for c := range EPCounterAll {
		v := 0
		if c == EPCounterConnect {
			v = 1
		}
		require.Equal(t, fmt.Sprintf("%s%s = %d \n", pre, c, v), lines[c])
	}
	requireCounters(t, ep, EPCounterAll, false, nil) // reset by the print

	buf.Reset()
	require.NoError(t, FprintCounters(&buf, evd, EVDCounterDTOCallback, false))
	require.Equal(t, pre+"DCNT_EVD_DTO_CALLBACK = 0 \n", buf.String())
}

// The counters' names are C's; an unknown one prints its kind and number.
func TestCountersUnitNames(t *testing.T) {
	assert.Equal(t, "DCNT_IA_PZ_CREATE", IACounterPZCreate.String())
	assert.Equal(t, "DCNT_IA_ALL_COUNTERS", IACounterAll.String())
	assert.Equal(t, "DCNT_EP_RECV_RDMA_IMM_DATA", EPCounterRecvRDMAImmData.String())
	assert.Equal(t, "DCNT_EVD_DEQUEUE_POLL_FOUND", EVDCounterDequeuePollFound.String())
	assert.Equal(t, "DAT_EP_COUNTERS(99)", EPCounter(99).String())
	assert.Len(t, iaCounterNames, int(IACounterAll)+1)
	assert.Len(t, epCounterNames, int(EPCounterAll)+1)
	assert.Len(t, evdCounterNames, int(EVDCounterAll)+1)
}

// dtoCounts counts what C counts for each DTO op, with the bytes where C
// counts them, and gives every counter or one, reset or not.
func TestCountersUnitDTOs(t *testing.T) {
	var post, recv dtoCounts
	for _, p := range []struct {
		op DTOOp
		n  uint64
	}{
		{DTOSend, 10}, {DTOSend, 5}, {DTORDMAWrite, 100}, {DTORDMARead, 7}, {DTOReceive, 64},
		{DTOIBRDMAWriteImmed, 3}, {DTOIBFetchAdd, 8}, {DTOIBCmpSwap, 8}, {DTOIBSendUD, 20}, {DTOIBRecvUD, 36},
		{DTOBindMW, 4096}, {dtoMarker, 0}, // not counted
	} {
		post.add(p.op, p.n)
	}
	for _, r := range []struct {
		op DTOOp
		n  uint64
	}{
		{DTOReceive, 11}, {DTOIBRecvImmed, 12}, {DTOIBRecvMsgImmed, 13}, {DTOIBRecvUD, 14}, {DTOIBRecvUDImmed, 15},
		{DTOSend, 99}, // not a receive
	} {
		recv.add(r.op, r.n)
	}
	read := func(one EPCounter, reset bool) []uint64 {
		vals := make([]uint64, EPCounterAll)
		post.addTo(vals, &postCounters, one, reset)
		recv.addTo(vals, &recvCounters, one, reset)
		return vals
	}
	want := make([]uint64, EPCounterAll)
	for c, v := range map[EPCounter]uint64{
		EPCounterPostSend: 2, EPCounterPostSendData: 15,
		EPCounterPostWrite: 1, EPCounterPostWriteData: 100,
		EPCounterPostRead: 1, EPCounterPostReadData: 7,
		EPCounterPostRecv: 2, EPCounterPostRecvData: 100,
		EPCounterPostWriteImm: 1, EPCounterPostWriteImmData: 3,
		EPCounterPostFetchAdd: 1, EPCounterPostCmpSwap: 1,
		EPCounterPostSendUD: 1, EPCounterPostSendUDData: 20,
		EPCounterRecv: 1, EPCounterRecvData: 11,
		EPCounterRecvRDMAImm: 1, EPCounterRecvRDMAImmData: 12,
		EPCounterRecvImm: 1, EPCounterRecvImmData: 13,
		EPCounterRecvUD: 2, EPCounterRecvUDData: 29,
	} {
		want[c] = v
	}
	require.Equal(t, want, read(EPCounterAll, false))
	one := make([]uint64, EPCounterAll)
	one[EPCounterRecvUDData] = 29
	require.Equal(t, one, read(EPCounterRecvUDData, true))
	want[EPCounterRecvUDData] = 0
	require.Equal(t, want, read(EPCounterAll, true), "only the counter read was reset")
	require.Equal(t, make([]uint64, EPCounterAll), read(EPCounterAll, false))
}

// evdCounts gives every counter or one, reset or not.
func TestCountersUnitEVDCounts(t *testing.T) {
	var c evdCounts
	c[EVDCounterWait], c[EVDCounterDequeueFound], c[EVDCounterDTOCallback] = 3, 5, 7
	read := func(one EVDCounter, reset bool) []uint64 {
		vals := make([]uint64, EVDCounterAll)
		vals[EVDCounterConnCallback] = 1 // counted elsewhere: added to
		c.addTo(vals, one, reset)
		return vals
	}
	require.Equal(t, []uint64{3, 0, 0, 0, 5, 0, 0, 0, 1, 7}, read(EVDCounterAll, false))
	require.Equal(t, []uint64{0, 0, 0, 0, 5, 0, 0, 0, 1, 0}, read(EVDCounterDequeueFound, true))
	require.Equal(t, []uint64{3, 0, 0, 0, 0, 0, 0, 0, 1, 7}, read(EVDCounterAll, true))
	require.Equal(t, []uint64{0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, read(EVDCounterAll, false))
}

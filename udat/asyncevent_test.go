//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/cverbs"
)

// Every asynchronous event verbs can deliver becomes what OFA DAPL 2.1
// makes of it (handleAsync): the event on the async EVD, with its handle
// and reason, or none, and the IA's counters as C counts them. The
// events are handed in, as no device raises most of them on demand.
func TestAsyncEventsAsC(t *testing.T) {
	p := newPair(t, pairOpts{})
	ia := p.ia
	async := ia.AsyncEVD()
	port := ia.port
	for _, c := range []struct {
		name   string
		ev     cverbs.AsyncEvent
		want   EventNumber // 0: nothing is posted
		handle Handle
		reason AsyncErrorReason
		count  IACounter // IACounterAll: none
	}{
		{"port error", cverbs.AsyncEvent{Type: cverbs.EventPortErr, Port: port},
			EventAsyncErrorIACatastrophic, ia, IACatastrophicError, IACounterAsyncError},
		{"LID change", cverbs.AsyncEvent{Type: cverbs.EventLIDChange, Port: port},
			EventAsyncErrorIACatastrophic, ia, IACatastrophicError, IACounterAsyncError},
		{"P_Key change", cverbs.AsyncEvent{Type: cverbs.EventPKeyChange, Port: port},
			EventAsyncErrorIACatastrophic, ia, IACatastrophicError, IACounterAsyncError},
		{"SM change", cverbs.AsyncEvent{Type: cverbs.EventSMChange, Port: port},
			EventAsyncErrorIACatastrophic, ia, IACatastrophicError, IACounterAsyncError},
		{"device fatal", cverbs.AsyncEvent{Type: cverbs.EventDeviceFatal},
			EventAsyncErrorIACatastrophic, ia, IACatastrophicError, IACounterAsyncError},
		{"another port's error", cverbs.AsyncEvent{Type: cverbs.EventPortErr, Port: port + 1}, 0, nil, 0, IACounterAll},
		{"port active", cverbs.AsyncEvent{Type: cverbs.EventPortActive, Port: port}, 0, nil, 0, IACounterAsyncError},
		{"path migrated", cverbs.AsyncEvent{Type: cverbs.EventPathMig, QPNum: p.client.ep.qpn}, 0, nil, 0, IACounterAsyncError},
		{"path migration error", cverbs.AsyncEvent{Type: cverbs.EventPathMigErr, QPNum: p.client.ep.qpn}, 0, nil, 0, IACounterAsyncError},
		{"communication established", cverbs.AsyncEvent{Type: cverbs.EventCommEst, QPNum: p.client.ep.qpn}, 0, nil, 0, IACounterAll},
		{"client reregister", cverbs.AsyncEvent{Type: cverbs.EventClientReregister, Port: port}, 0, nil, 0, IACounterAll},
		{"GID change", cverbs.AsyncEvent{Type: cverbs.EventGIDChange, Port: port}, 0, nil, 0, IACounterAll},
		{"WQ fatal", cverbs.AsyncEvent{Type: cverbs.EventWQFatal}, 0, nil, 0, IACounterAll},
		// Last: it breaks the connection.
		{"send queue drained", cverbs.AsyncEvent{Type: cverbs.EventSQDrained, QPNum: p.client.ep.qpn},
			EventAsyncErrorEPBroken, p.client.ep, EPTransferToError, IACounterAsyncQPError},
	} {
		before, err := QueryCounters(ia, IACounterAll, false)
		require.NoError(t, err)
		ia.handleAsync(c.ev)
		if c.want == 0 {
			requireEmpty(t, async)
		} else {
			ev := waitEvent(t, async)
			require.Equal(t, c.want, ev.Number, c.name)
			require.Equal(t, c.handle, ev.Async.Handle, c.name)
			require.Equal(t, c.reason, ev.Async.Reason, c.name)
		}
		after, err := QueryCounters(ia, IACounterAll, false)
		require.NoError(t, err)
		if c.count != IACounterAll {
			before[c.count]++
		}
		require.Equal(t, before, after, "%s: the IA counts it as C does", c.name)
	}
	require.Equal(t, EventConnectionBroken, waitEvent(t, p.client.conn).Number, "a drained send queue breaks the connection")
}

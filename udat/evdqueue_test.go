package udat

// The EVD's queue keeps a DTO completion as its number and DTO data alone
// (deliver) and makes the event in the caller's Event when it is taken
// (popLocked): no field of an earlier event may show through, in the
// caller's Event or in a slot the queue hands out again; only fields the
// caller set in a DTO completion of its own stay (Event). Host test.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEVDQueueMixesDTOAndOtherEvents(t *testing.T) {
	e := &EVD{object: liveObject(), q: make([]Event, 1)}
	ep := &EP{object: liveObject()}
	queueDTO := func(cookie uint64) { // as deliver queues the usual completion
		p := e.tailLocked()
		p.Number = EventDTOCompletion
		p.DTO = DTOCompletionData{EP: ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: 64, Op: DTORDMAWrite}
		e.qn++
	}
	dto := func(cookie uint64) Event {
		return Event{Number: EventDTOCompletion, EVD: e,
			DTO: DTOCompletionData{EP: ep, Cookie: cookie, Status: DTOSuccess, TransferredLength: 64, Op: DTORDMAWrite}}
	}

	ev := Event{Number: EventSoftware, Software: "stale", Async: AsyncErrorData{Reason: 3}}
	queueDTO(1)
	e.popLocked(&ev)
	require.Equal(t, dto(1), ev, "a DTO completion overwrites the whole Event")
	require.Nil(t, e.q[0].DTO.EP, "the queue keeps no pointer to the EP")
	require.Nil(t, e.q[0].EVD)

	e.pushSlotLocked().Number = EventConnectionEstablished // the slot the DTO used
	e.popLocked(&ev)
	require.Equal(t, Event{Number: EventConnectionEstablished, EVD: e}, ev, "pushSlotLocked hands out a zero event")

	e.pushLocked(Event{Number: EventSoftware, Software: 5})
	e.popLocked(&ev)
	require.Equal(t, Event{Number: EventSoftware, EVD: e, Software: 5}, ev)

	// The queue grows past its length, in order, with both kinds.
	queueDTO(2)
	e.pushLocked(Event{Number: EventSoftware, Software: 6})
	queueDTO(3)
	require.Equal(t, 3, e.qn)
	for _, want := range []Event{dto(2), {Number: EventSoftware, EVD: e, Software: 6}, dto(3)} {
		e.popLocked(&ev)
		require.Equal(t, want, ev)
	}
	require.Zero(t, e.qn)

	// Over a DTO completion, a DTO completion writes Number, EVD and DTO
	// alone: what the caller set elsewhere stays.
	ev.Software = "mine"
	queueDTO(4)
	e.popLocked(&ev)
	want := dto(4)
	want.Software = "mine"
	require.Equal(t, want, ev)
}

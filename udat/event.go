package udat

import "net/netip"

// Event is one DAT event (DAT_EVENT). Number says which of the data fields
// is meaningful: DTO for EventDTOCompletion, RMR for EventRMRBindCompletion,
// CR for EventConnectionRequest, Conn for the connection events, Async for
// the asynchronous errors and Software for EventSoftware; EventIBDTO fills
// DTO and IB. Events are plain values: dequeuing one does not allocate.
//
// The calls that write an event into the caller's Event (EVD.DequeueInto,
// EVD.WaitInto, EVD.DequeueEvents) write all of it, with one exception: a
// DTO completion written over a DTO completion sets only Number, EVD and
// DTO. The other fields, zero in every DTO completion the library writes,
// keep what they hold, as the other members of C's event_data union do; a
// polling loop that reuses one Event then clears none of its 280 bytes.
type Event struct {
	Number   EventNumber
	EVD      *EVD
	DTO      DTOCompletionData
	IB       IBExtensionData // the event_extension_data of EventIBDTO
	RMR      RMRBindCompletionData
	CR       CRArrivalData
	Conn     ConnectionEventData
	Async    AsyncErrorData
	Software any
}

// DTOCompletionData describes a completed DTO
// (DAT_DTO_COMPLETION_EVENT_DATA).
type DTOCompletionData struct {
	EP     *EP
	Cookie uint64 // the user_cookie given when the DTO was posted
	Status DTOStatus
	// TransferredLength is the number of bytes received (receives, RDMA
	// reads) or posted (sends, RDMA writes). It is 0 when Status is not
	// DTOSuccess.
	TransferredLength uint64
	Op                DTOOp
	RMRContext        uint32
}

// RMRBindCompletionData describes a completed RMR bind
// (DAT_RMR_BIND_COMPLETION_EVENT_DATA).
type RMRBindCompletionData struct {
	RMR    *RMR
	Cookie uint64
	Status DTOStatus
}

// CRArrivalData describes a connection request (DAT_CR_ARRIVAL_EVENT_DATA).
// One of PSP and RSP is set: the service point the request arrived at.
type CRArrivalData struct {
	PSP            *PSP
	RSP            *RSP
	LocalIAAddress netip.Addr
	ConnQual       ConnQual
	CR             *CR
	Truncated      bool
}

// SP returns the service point of the request as a Handle.
func (d *CRArrivalData) SP() Handle {
	if d.PSP != nil {
		return d.PSP
	}
	if d.RSP != nil {
		return d.RSP
	}
	return nil
}

// ConnectionEventData goes with the connection events
// (DAT_CONNECTION_EVENT_DATA). PrivateData is the peer's private data on the
// active side's ESTABLISHED event and on PEER_REJECTED; nil otherwise.
type ConnectionEventData struct {
	EP          *EP
	PrivateData []byte
}

// AsyncErrorData goes with the asynchronous error events
// (DAT_ASYNCH_ERROR_EVENT_DATA): the object the error is about and a reason
// relative to its kind (IACatastrophicError, EPTransferToError,
// SRQLowWatermarkEvent, ...).
type AsyncErrorData struct {
	Handle Handle
	Reason AsyncErrorReason
}

// resetForDTO readies *ev for a DTO completion that sets Number, EVD and
// DTO: cleared, unless it holds a DTO completion already (see Event).
func (ev *Event) resetForDTO() {
	if ev.Number != EventDTOCompletion {
		*ev = Event{}
	}
}

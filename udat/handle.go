package udat

import (
	"sync"
	"sync/atomic"
)

// Handle is any DAT object: *IA, *PZ, *LMR, *RMR, *EVD, *EP, *PSP, *RSP, *CR,
// *SRQ or *CNO. It stands for DAT_HANDLE in the functions that accept any
// kind of handle (dat_get_handle_type, dat_set_consumer_context, ...).
type Handle interface {
	// HandleType reports the kind of object, as dat_get_handle_type does.
	// It fails with DAT_INVALID_HANDLE for a nil or freed handle.
	HandleType() (HandleType, error)
	// SetConsumerContext stores a value of the Consumer's choosing in the
	// object (dat_set_consumer_context).
	SetConsumerContext(v any) error
	// ConsumerContext returns the value stored by SetConsumerContext, or nil
	// (dat_get_consumer_context).
	ConsumerContext() (any, error)
	base() *object
}

// object is embedded in every DAT object: the flags that make a handle
// valid (made by the library) or invalid (freed), and the consumer context.
type object struct {
	made  bool // set at creation: a zero-value object is no handle
	freed atomic.Bool
	ctxMu sync.Mutex
	ctx   any
	// cnt holds the counters of an IA, EP or EVD (counters.go), made on
	// first use.
	cnt atomic.Pointer[counterSet]
}

// liveObject returns the object part of a new DAT object.
func liveObject() object { return object{made: true} }

func (o *object) base() *object { return o }

func (o *object) dead() bool { return !o.made || o.freed.Load() }

func (o *object) setContext(v any) {
	o.ctxMu.Lock()
	o.ctx = v
	o.ctxMu.Unlock()
}

func (o *object) getContext() any {
	o.ctxMu.Lock()
	defer o.ctxMu.Unlock()
	return o.ctx
}

// handleSubtype gives the DAT_INVALID_HANDLE subtype of each object kind.
func handleSubtype(t HandleType) Return {
	switch t {
	case HandleTypeIA:
		return InvalidHandleIA
	case HandleTypeEP:
		return InvalidHandleEP
	case HandleTypeLMR:
		return InvalidHandleLMR
	case HandleTypeRMR:
		return InvalidHandleRMR
	case HandleTypePZ:
		return InvalidHandlePZ
	case HandleTypePSP:
		return InvalidHandlePSP
	case HandleTypeRSP:
		return InvalidHandleRSP
	case HandleTypeCR:
		return InvalidHandleCR
	case HandleTypeSRQ:
		return InvalidHandleSRQ
	case HandleTypeCNO:
		return InvalidHandleCNO
	}
	return NoSubtype
}

func badHandle(op string, t HandleType) error {
	return newError(op, InvalidHandle|handleSubtype(t))
}

// GetHandleType returns the kind of object h is (dat_get_handle_type).
func GetHandleType(h Handle) (HandleType, error) {
	if isNilHandle(h) {
		return 0, newError("dat_get_handle_type", InvalidHandle)
	}
	return h.HandleType()
}

// SetConsumerContext stores v in the object h (dat_set_consumer_context).
func SetConsumerContext(h Handle, v any) error {
	if isNilHandle(h) {
		return newError("dat_set_consumer_context", InvalidHandle)
	}
	return h.SetConsumerContext(v)
}

// GetConsumerContext returns the value stored in h (dat_get_consumer_context).
func GetConsumerContext(h Handle) (any, error) {
	if isNilHandle(h) {
		return nil, newError("dat_get_consumer_context", InvalidHandle)
	}
	return h.ConsumerContext()
}

// isNilHandle reports whether h is nil or a typed nil pointer.
func isNilHandle(h Handle) bool {
	if h == nil {
		return true
	}
	switch v := h.(type) {
	case *IA:
		return v == nil
	case *PZ:
		return v == nil
	case *LMR:
		return v == nil
	case *RMR:
		return v == nil
	case *EVD:
		return v == nil
	case *EP:
		return v == nil
	case *PSP:
		return v == nil
	case *RSP:
		return v == nil
	case *CR:
		return v == nil
	case *SRQ:
		return v == nil
	case *CNO:
		return v == nil
	}
	return false
}

// The per-type Handle methods. Each checks its receiver, so that a nil or
// freed handle gives DAT_INVALID_HANDLE with the object's subtype.

func handleType(o *object, isNil bool, t HandleType, op string) (HandleType, error) {
	if isNil || o.dead() {
		return 0, badHandle(op, t)
	}
	return t, nil
}

func setCtx(o *object, isNil bool, t HandleType, v any) error {
	if isNil || o.dead() {
		return badHandle("dat_set_consumer_context", t)
	}
	o.setContext(v)
	return nil
}

func getCtx(o *object, isNil bool, t HandleType) (any, error) {
	if isNil || o.dead() {
		return nil, badHandle("dat_get_consumer_context", t)
	}
	return o.getContext(), nil
}

// HandleType returns HandleTypeIA (dat_get_handle_type); a nil or freed
// IA gives DAT_INVALID_HANDLE.
func (h *IA) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeIA, "dat_get_handle_type")
}

// HandleType returns HandleTypePZ (dat_get_handle_type); a nil or freed
// PZ gives DAT_INVALID_HANDLE.
func (h *PZ) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypePZ, "dat_get_handle_type")
}

// HandleType returns HandleTypeLMR (dat_get_handle_type); a nil or freed
// LMR gives DAT_INVALID_HANDLE.
func (h *LMR) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeLMR, "dat_get_handle_type")
}

// HandleType returns HandleTypeRMR (dat_get_handle_type); a nil or freed
// RMR gives DAT_INVALID_HANDLE.
func (h *RMR) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeRMR, "dat_get_handle_type")
}

// HandleType returns HandleTypeEVD (dat_get_handle_type); a nil or freed
// EVD gives DAT_INVALID_HANDLE.
func (h *EVD) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeEVD, "dat_get_handle_type")
}

// HandleType returns HandleTypeEP (dat_get_handle_type); a nil or freed
// EP gives DAT_INVALID_HANDLE.
func (h *EP) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeEP, "dat_get_handle_type")
}

// HandleType returns HandleTypePSP (dat_get_handle_type); a nil or freed
// PSP gives DAT_INVALID_HANDLE.
func (h *PSP) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypePSP, "dat_get_handle_type")
}

// HandleType returns HandleTypeRSP (dat_get_handle_type); a nil or freed
// RSP gives DAT_INVALID_HANDLE.
func (h *RSP) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeRSP, "dat_get_handle_type")
}

// HandleType returns HandleTypeCR (dat_get_handle_type); a nil or freed
// CR gives DAT_INVALID_HANDLE.
func (h *CR) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeCR, "dat_get_handle_type")
}

// HandleType returns HandleTypeSRQ (dat_get_handle_type); a nil or freed
// SRQ gives DAT_INVALID_HANDLE.
func (h *SRQ) HandleType() (HandleType, error) {
	return handleType(h.obj(), h == nil, HandleTypeSRQ, "dat_get_handle_type")
}

// SetConsumerContext stores v with the IA (dat_set_consumer_context); a
// nil or freed IA gives DAT_INVALID_HANDLE.
func (h *IA) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeIA, v) }

// SetConsumerContext stores v with the PZ (dat_set_consumer_context); a
// nil or freed PZ gives DAT_INVALID_HANDLE.
func (h *PZ) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypePZ, v) }

// SetConsumerContext stores v with the LMR (dat_set_consumer_context); a
// nil or freed LMR gives DAT_INVALID_HANDLE.
func (h *LMR) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeLMR, v) }

// SetConsumerContext stores v with the RMR (dat_set_consumer_context); a
// nil or freed RMR gives DAT_INVALID_HANDLE.
func (h *RMR) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeRMR, v) }

// SetConsumerContext stores v with the EVD (dat_set_consumer_context); a
// nil or freed EVD gives DAT_INVALID_HANDLE.
func (h *EVD) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeEVD, v) }

// SetConsumerContext stores v with the EP (dat_set_consumer_context); a
// nil or freed EP gives DAT_INVALID_HANDLE.
func (h *EP) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeEP, v) }

// SetConsumerContext stores v with the PSP (dat_set_consumer_context); a
// nil or freed PSP gives DAT_INVALID_HANDLE.
func (h *PSP) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypePSP, v) }

// SetConsumerContext stores v with the RSP (dat_set_consumer_context); a
// nil or freed RSP gives DAT_INVALID_HANDLE.
func (h *RSP) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeRSP, v) }

// SetConsumerContext stores v with the CR (dat_set_consumer_context); a
// nil or freed CR gives DAT_INVALID_HANDLE.
func (h *CR) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeCR, v) }

// SetConsumerContext stores v with the SRQ (dat_set_consumer_context); a
// nil or freed SRQ gives DAT_INVALID_HANDLE.
func (h *SRQ) SetConsumerContext(v any) error { return setCtx(h.obj(), h == nil, HandleTypeSRQ, v) }

// ConsumerContext returns what SetConsumerContext stored with the IA, nil
// if nothing (dat_get_consumer_context); a nil or freed IA gives
// DAT_INVALID_HANDLE.
func (h *IA) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeIA) }

// ConsumerContext returns what SetConsumerContext stored with the PZ, nil
// if nothing (dat_get_consumer_context); a nil or freed PZ gives
// DAT_INVALID_HANDLE.
func (h *PZ) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypePZ) }

// ConsumerContext returns what SetConsumerContext stored with the LMR, nil
// if nothing (dat_get_consumer_context); a nil or freed LMR gives
// DAT_INVALID_HANDLE.
func (h *LMR) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeLMR) }

// ConsumerContext returns what SetConsumerContext stored with the RMR, nil
// if nothing (dat_get_consumer_context); a nil or freed RMR gives
// DAT_INVALID_HANDLE.
func (h *RMR) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeRMR) }

// ConsumerContext returns what SetConsumerContext stored with the EVD, nil
// if nothing (dat_get_consumer_context); a nil or freed EVD gives
// DAT_INVALID_HANDLE.
func (h *EVD) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeEVD) }

// ConsumerContext returns what SetConsumerContext stored with the EP, nil
// if nothing (dat_get_consumer_context); a nil or freed EP gives
// DAT_INVALID_HANDLE.
func (h *EP) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeEP) }

// ConsumerContext returns what SetConsumerContext stored with the PSP, nil
// if nothing (dat_get_consumer_context); a nil or freed PSP gives
// DAT_INVALID_HANDLE.
func (h *PSP) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypePSP) }

// ConsumerContext returns what SetConsumerContext stored with the RSP, nil
// if nothing (dat_get_consumer_context); a nil or freed RSP gives
// DAT_INVALID_HANDLE.
func (h *RSP) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeRSP) }

// ConsumerContext returns what SetConsumerContext stored with the CR, nil
// if nothing (dat_get_consumer_context); a nil or freed CR gives
// DAT_INVALID_HANDLE.
func (h *CR) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeCR) }

// ConsumerContext returns what SetConsumerContext stored with the SRQ, nil
// if nothing (dat_get_consumer_context); a nil or freed SRQ gives
// DAT_INVALID_HANDLE.
func (h *SRQ) ConsumerContext() (any, error) { return getCtx(h.obj(), h == nil, HandleTypeSRQ) }

// obj returns the embedded object or nil for a nil receiver, so the helpers
// above never dereference a nil pointer.
func (h *IA) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *PZ) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *LMR) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *RMR) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *EVD) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *EP) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *PSP) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *RSP) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *CR) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}
func (h *SRQ) obj() *object {
	if h == nil {
		return nil
	}
	return &h.object
}

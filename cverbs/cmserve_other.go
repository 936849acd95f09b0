//go:build !linux || !cgo

package cverbs

import (
	"context"
	"time"
)

// Serve fails with ErrUnsupported in this build.
func (ch *EventChannel) Serve(ctx context.Context, handle func(CMEvent)) error {
	return unsupported("rdma_get_cm_event")
}

// ReadyQP fails with ErrUnsupported in this build.
func (id *CMID) ReadyQP(qp *QP, ackTimeout int, accept *ConnParam) (RTSAttr, bool, error) {
	return RTSAttr{}, false, unsupported("rdma_cm_ready_qp")
}

// ResolveRouteACK fails with ErrUnsupported in this build.
func (id *CMID) ResolveRouteACK(ackTimeout uint8, timeout time.Duration) error {
	return unsupported("rdma_resolve_route")
}

// ConnectQP fails with ErrUnsupported in this build.
func (id *CMID) ConnectQP(qp *QP, p ConnParam) error { return unsupported("rdma_connect") }

// Poll handles nothing in this build.
func (ch *EventChannel) Poll(handle func(CMEvent)) int { return 0 }

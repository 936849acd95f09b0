// Package cverbs is a thin cgo layer over rdma-core's libibverbs and
// librdmacm: devices, protection domains, memory regions and windows,
// completion queues and channels, RC queue pairs, shared receive queues and
// rdma_cm connection management.
//
// It knows nothing about DAT; package udat builds the DAT API on top of it.
//
// The data path is built for batches: work requests and scatter/gather lists
// are written into C arrays that each queue allocates once, and a whole batch
// is posted with one cgo call. A caller that checks its requests as it goes
// builds them there in place (QP.BeginSend, QP.BeginRecv, SRQ.BeginRecv: a
// SendBatch or RecvBatch); PostSend and PostRecv do the same from Go slices.
// Polling has the provider write straight into the caller's []WC, which is
// struct ibv_wc field for field. Neither path allocates Go memory, and C
// never keeps a Go pointer.
//
// On Soft-RoCE (rxe) the batch goes without the cgo call: Go writes the
// work requests into the queues librxe shares with the kernel, in the
// kernel's layout, rings the send doorbell with a write(2) of its own and
// reads completions from the CQ's queue (rxe.go; QP.Direct, SRQ.Direct and
// CQ.Direct say which objects do). The queues are found in librxe's
// objects as rdma-core 44 to 64 lay them out and checked before use; any
// other device or release takes the verbs, as does every object when the
// environment sets UDAPL_RXE_DIRECT=0.
//
// Waiting for completions or connection events goes through Go's netpoller:
// the channel file descriptors are non-blocking, so a waiting goroutine does
// not hold an OS thread, and every wait takes a context.Context. A waiter
// to which a wake-up's latency matters uses CompChannel.WaitBlocking
// (or WaitBlockingUntil, with a deadline and no timer) instead, which
// blocks its thread in the kernel as a C program does. A completion
// channel joins the netpoller only at its first Wait: once it has, every
// completion event also wakes the netpoller's thread.
//
// The verbs need Linux and cgo (the files built with linux && cgo). The
// types, constants and String methods are in the untagged *_types.go
// files, shared with the build for other platforms or CGO_ENABLED=0
// (cverbs_other.go), which has the same API and fails every verb with an
// *OpError wrapping ErrUnsupported. The constants are Go literals, which the
// tests of the cgo build compare with the C headers.
//
// Errors carry the verb's own return value as a syscall.Errno, wrapped with the
// operation name, so errors.Is(err, syscall.ENOMEM) works.
package cverbs

// Package udat is a uDAPL (DAT 1.2 API, DAT 2.0 numeric values) for Go,
// built on rdma-core through package cverbs.
//
// A C uDAPL programmer finds every DAT call under an obvious Go name: the
// handle becomes the receiver, OUT parameters become results, and
// DAT_RETURN becomes an error of type *Error that carries the DAT_RETURN
// code (errors.Is(err, ErrInvalidHandle) matches by type, errors.As gives the
// full code). Constants have the C numeric values. Handles are Go pointers; a
// nil or freed handle gives DAT_INVALID_HANDLE with the object's subtype, and
// no bad argument makes a call panic.
//
// # Platforms
//
// The package needs Linux, cgo and rdma-core to reach a device. A program
// that imports it builds anywhere else, or with CGO_ENABLED=0, with the
// same API: OpenIA then fails with DAT_MODEL_NOT_SUPPORTED, an error for
// which errors.Is(err, errors.ErrUnsupported) holds (Error.Unwrap), so no
// other object can be created and every method reports its usual error for
// a nil handle. Providers and ReadDatConf work as everywhere.
//
// # Concurrency
//
// Unlike the C reference, the library is thread safe: any call may be made
// from any goroutine. In particular, PostSend, PostRecv, PostRDMARead,
// PostRDMAWrite and SRQ.PostRecv may be called from many goroutines at once
// on one EP or SRQ; each queue has its own short lock and posting allocates
// nothing. Only one goroutine at a time may Wait on an EVD (as in DAT).
//
// # Data transfer
//
// Posting checks what the man pages promise at post time and the C
// reference leaves to the hardware: segments inside their LMR, LMR and EP in
// the same PZ, the local read or write privilege, enough room for an RDMA
// read, the number of segments, the completion flags, the device's largest
// message. Nothing is posted when a check fails. Sends and RDMA are valid on
// a CONNECTED or DISCONNECTED EP, receives in every state. Any completion
// error other than a flush breaks the connection: the EP becomes
// DISCONNECTED and EventConnectionBroken arrives on its connect EVD.
//
// # Completions
//
// Every posted DTO completes exactly once, with the status it really had,
// flushed if it must:
//
//   - A successful send, RDMA read or RDMA write posted with
//     CompletionSuppress or CompletionUnsignalled produces no event (the
//     work request is posted unsignalled, as in the C reference). It counts
//     as in progress (EP.GetStatus, LMR.Free) until the queue shows it
//     done: a later completion of the same queue, or the flush that a
//     disconnect brings (post a signalled DTO now and then so the queue
//     does not fill up). Every other DTO produces one event.
//   - The completions of one queue are reported in posting order. On a
//     DISCONNECTED EP a new DTO completes at once as flushed, but after the
//     flushes of the DTOs posted before it on the same queue.
//   - An EVD never loses a completion: the CQ behind it has room for every
//     DTO its EPs (and their SRQs) can have outstanding, whatever its qlen;
//     completions the event queue has no room for wait there until Dequeue
//     or Wait takes them. An EP that a CQ of the device cannot cover is
//     refused with DAT_INSUFFICIENT_RESOURCES (see cqsize.go). The C
//     reference sizes the CQ to qlen and drops what overflows.
//   - LMR.Free succeeds with DTOs still posted on the LMR, as in C (only a
//     bound RMR keeps it): each such DTO still completes once, flushed with
//     its queue or in error if the device reaches it first. EP.GetStatus
//     takes in the completions waiting in the device first.
//   - A waiter wakes for every completion except the non-solicited
//     receives of an EP whose RecvCompletionFlags is
//     CompletionSolicitedWait: those are queued without waking it, until a
//     solicited receive, an error, or any other event arrives (their
//     receive queue completes into a CQ of its own, armed for solicited
//     completions only). The C reference arms the whole CQ for solicited
//     completions, or, in the OFA DAPL 2.x releases, ignores the flag.
//   - A call that races the Free of its object either comes first or fails
//     with DAT_INVALID_HANDLE and the object's subtype.
//
// The IB extensions complete as EventIBDTO with the C DTO types and
// extension data, on both sides of an RDMA write with immediate data.
// Immediate data travel in OFA DAPL's byte order (the value as the host
// stores it), so C and Go peers read the value they were sent. Atomics need
// 8-byte buffers, the remote one 8-byte aligned (DAT_INVALID_PARAMETER
// otherwise, checked at post time), and target memory registered with
// MemPrivIBRemoteAtomic.
//
// A UD EP (ServiceTypeIBUD) resolves its peers through a PSP as an RC EP
// connects, and gets an address handle for each in
// EventIBUDConnectionEstablished; its datagrams (PostSendUD) are at most
// the port's MTU, and a UD receive buffer gets the 40-byte GRH (GRHSize)
// before the datagram. C's cma provider offers no UD, so UD EPs talk to Go
// peers only; see ud.go for the header the connections carry.
//
// Beyond DAT, EP.PostRequests, EP.PostRecvs and SRQ.PostRecvs post a batch
// of DTOs with one call into the provider (one cgo crossing per 128 DTOs;
// on Soft-RoCE none, and one system call, see package cverbs), with the
// checks of the single
// calls; they return how many were posted. EVD.DequeueEvents is their
// counterpart on the completion side: it takes a burst of events with one
// call. Sends and RDMA writes of up to 64 bytes are posted inline, as in
// the C reference.
//
// A busy-polling loop should take its events with DequeueInto (a waiting
// loop with WaitInto) into one Event it reuses (the event, 280 bytes, is
// then copied once), compare the error with ErrQueueEmpty (the very value
// is returned) and call runtime.Gosched every few milliseconds: a
// goroutine that the runtime finds inside a cgo call when it is due for
// preemption (after 10 ms without a yield) loses its P, and the runtime's
// monitor thread then wakes every 20 microseconds for a while.
//
// The I/O vector may be reused as soon as a post returns; the memory it names
// may not until the DTO completes. Memory comes from AllocLMR (page-aligned,
// outside the Go heap) or CreateLMR (a Go slice, pinned while the LMR
// exists). EVD.Dequeue, EVD.DequeueInto, EVD.DequeueEvents, EVD.WaitInto
// (also when it blocks) and the completion path allocate nothing.
//
// # Notification
//
// A CNO waits for many EVDs at once: an EVD associated with it (by
// CreateEVDWithCNO or EVD.ModifyCNO) triggers it when an event that would
// wake a waiter arrives while the EVD is enabled and nobody waits on the
// EVD itself; CNO.Wait returns that EVD, a hint: the consumer then dequeues
// from every EVD of the CNO. CNO.Ready gives a channel for select. A DTO EVD
// with a CNO is watched by a goroutine of the library, parked in the
// netpoller, so device completions trigger the CNO with nobody waiting or
// polling. As the man pages say (and the C reference does), a timeout gives
// DAT_QUEUE_EMPTY and the proxy agent is called once; an unwaitable EVD
// still triggers its CNO; freeing the last EVD of a CNO releases its waiters
// with a nil EVD.
//
// # Connections
//
// Connections use rdma_cm exactly like the cma provider of the C reference
// (OFA DAPL), so a Go program and a C uDAPL program connect to each other: see
// ConnQualPort and the notes in connect.go.
//
// The IA's goroutine takes the rdma_cm events as they come. A dequeue that
// finds empty an EVD of connection events or requests (and no completions)
// takes the pending ones itself: a loop that polls such an EVD without
// blocking needs no other goroutine to run, where, with every P busy
// polling, the IA's would wait for the scheduler to preempt one.
//
// A dead peer or a broken link is noticed: an EP resends an unacknowledged
// packet after its ACK timeout and gives up after RetryCount resends in a
// row, so the first outstanding DTO fails with DTOErrTransport, the others
// are flushed and EventConnectionBroken arrives, about
// EPAttr.DeadPeerTimeout (0.5 s with the defaults) after the last
// acknowledgement. The C reference connects with retry count 7, which
// Soft-RoCE treats as "retry forever". A watchdog ends a send queue that
// the device stops serving without an error (EPAttr.StallTimeout,
// watchdog.go). A side with nothing outstanding hears of a broken
// connection only from the peer's disconnect request; one that must know
// within a bound posts a small DTO now and then (retransmit.go).
//
// With PSPProviderFlag a PSP creates the EP of each request; the Consumer
// finds it in CR.Query, gives it a PZ and EVDs with EP.Modify and accepts
// with it, or rejects the request and the EP goes with it. EP.Modify changes
// what the man page allows before a connection; a change to the PZ, EVDs,
// DTO counts or IOV sizes gives the EP a new queue pair and needs an EP with
// no DTO posted.
//
// # Attributes
//
// IA.Query reports what the C reference reports for the same device (the
// device's limits, hw_ver as HardwareVersionMajor, the port's max_msg_sz as
// MaxMessageSize), and provider attributes that describe this package
// (EPCreator PSPCreatesEPIfAsked, thread safety, every completion flag).
// EP.Query reports what the EP really has: the counts and IOV sizes its
// queue pair got, and once connected the RDMA read depths negotiated with
// the peer and, on the active side, the rdma_cm source port.
//
// # The DAT calls and their Go forms
//
//	dat_ia_open                    OpenIA(name, asyncEVDQLen)
//	dat_ia_query                   (*IA).Query
//	dat_ia_close                   (*IA).Close(flags)
//	dat_registry_list_providers    Providers()
//	dat_strerror                   Strerror(code), (*Error).Error
//	dat_get_handle_type            GetHandleType(h), h.HandleType()
//	dat_set_consumer_context       SetConsumerContext(h, v), h.SetConsumerContext(v)
//	dat_get_consumer_context       GetConsumerContext(h), h.ConsumerContext()
//	dat_pz_create                  (*IA).CreatePZ
//	dat_pz_query                   (*PZ).Query
//	dat_pz_free                    (*PZ).Free
//	dat_lmr_create                 (*IA).CreateLMR(pz, buf, priv, vaType), (*IA).AllocLMR(pz, n, priv)
//	dat_lmr_query                  (*LMR).Query
//	dat_lmr_free                   (*LMR).Free
//	dat_lmr_sync_rdma_read         (*IA).SyncRDMARead
//	dat_lmr_sync_rdma_write        (*IA).SyncRDMAWrite
//	dat_rmr_create                 (*PZ).CreateRMR
//	dat_rmr_bind                   (*RMR).Bind
//	dat_rmr_query                  (*RMR).Query
//	dat_rmr_free                   (*RMR).Free
//	dat_evd_create                 (*IA).CreateEVD(qlen, flags), (*IA).CreateEVDWithCNO(qlen, cno, flags)
//	dat_evd_wait                   (*EVD).Wait(timeout, threshold), (*EVD).WaitInto(timeout, threshold, &event),
//	                               (*EVD).WaitContext(ctx, threshold)
//	dat_evd_dequeue                (*EVD).Dequeue, (*EVD).DequeueInto(&event)
//	(a burst of the above)         (*EVD).DequeueEvents(events)
//	dat_evd_post_se                (*EVD).PostSE
//	dat_evd_resize                 (*EVD).Resize
//	dat_evd_query                  (*EVD).Query
//	dat_evd_enable                 (*EVD).Enable
//	dat_evd_disable                (*EVD).Disable
//	dat_evd_set_unwaitable         (*EVD).SetUnwaitable
//	dat_evd_clear_unwaitable       (*EVD).ClearUnwaitable
//	dat_evd_free                   (*EVD).Free
//	dat_evd_modify_cno             (*EVD).ModifyCNO(cno) (nil: no CNO)
//	dat_cno_create                 (*IA).CreateCNO(agent)
//	dat_cno_modify_agent           (*CNO).ModifyAgent(agent)
//	dat_cno_query                  (*CNO).Query
//	dat_cno_wait                   (*CNO).Wait(timeout), (*CNO).WaitContext(ctx); for select: (*CNO).Ready()
//	dat_cno_free                   (*CNO).Free
//	dat_ep_create                  (*IA).CreateEP(pz, recvEVD, requestEVD, connectEVD, attr)
//	dat_ep_create_with_srq         (*IA).CreateEPWithSRQ(pz, recvEVD, requestEVD, connectEVD, srq, attr)
//	dat_ep_query                   (*EP).Query
//	dat_ep_modify                  (*EP).Modify(mask, param) (EPField* bits, DAT_EP_FIELD_* values)
//	dat_ep_connect                 (*EP).Connect(addr, connQual, timeout, privateData, qos, flags)
//	dat_ep_dup_connect             (*EP).DupConnect
//	dat_ep_disconnect              (*EP).Disconnect(flags)
//	dat_ep_post_send               (*EP).PostSend(iov, cookie, flags)
//	dat_ep_post_recv               (*EP).PostRecv(iov, cookie, flags)
//	dat_ep_post_rdma_read          (*EP).PostRDMARead(iov, cookie, remote, flags)
//	dat_ep_post_rdma_write         (*EP).PostRDMAWrite(iov, cookie, remote, flags)
//	(a batch of the above)         (*EP).PostRequests(reqs), (*EP).PostRecvs(recvs)
//	dat_ep_get_status              (*EP).GetStatus
//	dat_ep_reset                   (*EP).Reset
//	dat_ep_free                    (*EP).Free
//	dat_ep_recv_query              (*EP).RecvQuery
//	dat_ep_set_watermark           (*EP).SetWatermark
//	dat_psp_create                 (*IA).CreatePSP(connQual, evd, flags) (PSPProviderFlag: providerep.go)
//	dat_psp_create_any             (*IA).CreatePSPAny(evd, flags)
//	dat_psp_query                  (*PSP).Query
//	dat_psp_free                   (*PSP).Free
//	dat_rsp_create                 (*IA).CreateRSP(connQual, ep, evd)
//	dat_rsp_query                  (*RSP).Query
//	dat_rsp_free                   (*RSP).Free
//	dat_cr_query                   (*CR).Query
//	dat_cr_accept                  (*CR).Accept(ep, privateData)
//	dat_cr_reject                  (*CR).Reject(privateData)
//	dat_cr_handoff                 (*CR).Handoff (DAT_NOT_IMPLEMENTED, as in the C reference)
//	dat_srq_create                 (*IA).CreateSRQ(pz, attr)
//	dat_srq_post_recv              (*SRQ).PostRecv(iov, cookie); a batch: (*SRQ).PostRecvs(recvs)
//	dat_srq_query                  (*SRQ).Query
//	dat_srq_resize                 (*SRQ).Resize
//	dat_srq_set_lw                 (*SRQ).SetLW
//	dat_srq_free                   (*SRQ).Free
//
// The IB extensions (dat_ib_extensions.h, version 209; ext_ib.go):
//
//	dat_ib_post_rdma_write_immed   (*EP).PostRDMAWriteImmed(iov, cookie, remote, immed, flags)
//	dat_ib_post_fetch_and_add      (*EP).PostFetchAndAdd(add, local, cookie, remote, flags)
//	dat_ib_post_cmp_and_swap       (*EP).PostCmpAndSwap(cmp, swap, local, cookie, remote, flags)
//	(a send with immediate data)   (*EP).PostSendImmed(iov, cookie, immed, flags)
//	dat_ib_open_query              OpenQuery(name): handle, IA and provider attributes
//	dat_ib_close_query             (*IAQuery).Close
//	dat_query_counters             QueryCounters(h, counter, reset) (counters.go; DAT_COUNTERS)
//	dat_print_counters             PrintCounters(h, counter, reset), FprintCounters(w, h, counter, reset)
//	DCNT_IA_*, DCNT_EP_*, DCNT_EVD_*  IACounter*, EPCounter*, EVDCounter* (IACounterAll: DCNT_IA_ALL_COUNTERS)
//	DAT_IB_DTO_EVENT               Event.Number EventIBDTO, Event.DTO and Event.IB
//	DAT_IB_MEM_PRIV_REMOTE_ATOMIC  MemPrivIBRemoteAtomic
//
// Unreliable datagrams (ud.go, ud_cm.go; Go peers only):
//
//	DAT_IB_SERVICE_TYPE_UD         EPAttr.ServiceType = ServiceTypeIBUD
//	dat_ep_connect on a UD EP      (*EP).Connect: EventIBUDConnectionEstablished (IBUDRemoteAH)
//	DAT_IB_UD_CONNECTION_REQUEST_EVENT  EventIBUDConnectionRequest at a PSP; (*CR).Accept with a UD EP
//	DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED  EventIBUDConnectionEstablished: Event.IB.RemoteAH, Event.IB.CM
//	DAT_IB_UD_CONNECTION_REJECT_EVENT, _ERROR_EVENT  EventIBUDConnectionReject, EventIBUDConnectionError
//	DAT_IB_ADDR_HANDLE             IBAddrHandle{AH, QPN, IAAddr}
//	dat_ib_post_send_ud            (*EP).PostSendUD(iov, ah, cookie, flags); batched: Request{Op: DTOIBSendUD, AH: ah}
//	dat_ib_post_recv_ud            (*EP).PostRecv (buffers of GRHSize + the datagram)
//	dat_ib_ud_ah_free              (*EP).UDAHFree(ah)
//	dat_ib_ud_cm_free              (*EP).UDCMFree(cm)
//	DAT_IB_DTO_SEND_UD, _RECV_UD   DTOIBSendUD, DTOIBRecvUD, DTOIBRecvUDImmed (Event.IB.RemoteAH.QPN: the sender)
//
// Not provided: LMRs of DAT_MEM_TYPE_SHARED_VIRTUAL and DAT_MEM_TYPE_LMR
// (the C reference's openib providers return DAT_NOT_IMPLEMENTED for both),
// dat_csp_*, dat_cno_fd_create and dat_cno_trigger (DAT 2.0;
// DAT_MODEL_NOT_SUPPORTED in the C reference too), dat_ep_common_connect,
// and of the IB extensions the collectives and dat_ib_start_counter and
// dat_ib_stop_counter (the kernel's CM, link and diagnostic statistics). The
// provider side of the
// registry (dat_provider_init, dat_provider_fini,
// dat_registry_add_provider, dat_registry_remove_provider) has no use here:
// the package is registry and provider in one.
package udat

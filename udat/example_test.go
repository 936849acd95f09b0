//go:build linux && cgo

package udat_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/udapl-go/udapl/udat"
)

// A whole program: a passive side listens, an active side connects to it
// over the same device, and a message goes from one to the other.
func Example_sendReceive() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	pz, _ := ia.CreatePZ()

	// Each side: a DTO EVD, a connection EVD, an EP and some memory.
	newEP := func() (*udat.EP, *udat.EVD, *udat.EVD, *udat.LMR) {
		dto, _ := ia.CreateEVD(16, udat.EVDDTOFlag)
		conn, _ := ia.CreateEVD(4, udat.EVDConnectionFlag)
		ep, err := ia.CreateEP(pz, dto, dto, conn, nil)
		if err != nil {
			log.Fatal(err)
		}
		lmr, _ := ia.AllocLMR(pz, 4096, udat.MemPrivLocalRead|udat.MemPrivLocalWrite)
		return ep, dto, conn, lmr
	}
	server, sDTO, sConn, sMem := newEP()
	client, cDTO, cConn, cMem := newEP()

	// The server listens on connection qualifier 4791 and pre-posts a receive.
	crEVD, _ := ia.CreateEVD(4, udat.EVDCRFlag)
	if _, err := ia.CreatePSP(4791, crEVD, udat.PSPConsumerFlag); err != nil {
		log.Fatal(err)
	}
	server.PostRecv([]udat.LMRTriplet{sMem.Triplet(0, 64)}, 1, udat.CompletionDefault)

	// The client connects; the server accepts the request.
	client.Connect(ia.Address(), 4791, 10_000_000, []byte("hi"), udat.QoSBestEffort, udat.ConnectDefault)
	ev, _, _ := crEVD.Wait(10_000_000, 1)
	ev.CR.CR.Accept(server, nil)
	ev, _, _ = cConn.Wait(10_000_000, 1)
	fmt.Println("client:", ev.Number)
	ev, _, _ = sConn.Wait(10_000_000, 1)
	fmt.Println("server:", ev.Number)

	// Send.
	n := copy(cMem.Bytes(), "hello, DAT")
	client.PostSend([]udat.LMRTriplet{cMem.Triplet(0, n)}, 2, udat.CompletionDefault)
	ev, _, _ = cDTO.Wait(10_000_000, 1)
	fmt.Println("send:", ev.DTO.Status, "cookie", ev.DTO.Cookie)
	ev, _, _ = sDTO.Wait(10_000_000, 1)
	fmt.Printf("received %q, cookie %d\n", sMem.Bytes()[:ev.DTO.TransferredLength], ev.DTO.Cookie)

	client.Disconnect(udat.CloseGracefulFlag)
	ev, _, _ = cConn.Wait(10_000_000, 1)
	fmt.Println("client:", ev.Number)
	// Output:
	// client: DAT_CONNECTION_EVENT_ESTABLISHED
	// server: DAT_CONNECTION_EVENT_ESTABLISHED
	// send: DAT_DTO_SUCCESS cookie 2
	// received "hello, DAT", cookie 1
	// client: DAT_CONNECTION_EVENT_DISCONNECTED
}

// connected returns two connected EPs of ia, each with one EVD for
// everything DTO-related, and some memory registered for each.
func connected(ia *udat.IA, qual udat.ConnQual) (client, server *udat.EP, cEVD, sEVD *udat.EVD, cMem, sMem *udat.LMR) {
	pz, _ := ia.CreatePZ()
	mk := func() (*udat.EP, *udat.EVD, *udat.EVD, *udat.LMR) {
		dto, _ := ia.CreateEVD(64, udat.EVDDTOFlag)
		conn, _ := ia.CreateEVD(4, udat.EVDConnectionFlag)
		ep, _ := ia.CreateEP(pz, dto, dto, conn, nil)
		mem, _ := ia.AllocLMR(pz, 4096, udat.MemPrivAll)
		return ep, dto, conn, mem
	}
	client, cEVD, cConn, cMem := mk()
	server, sEVD, sConn, sMem := mk()
	crEVD, _ := ia.CreateEVD(4, udat.EVDCRFlag)
	ia.CreatePSP(qual, crEVD, udat.PSPConsumerFlag)
	client.Connect(ia.Address(), qual, 10_000_000, nil, udat.QoSBestEffort, udat.ConnectDefault)
	ev, _, err := crEVD.Wait(10_000_000, 1)
	if err != nil {
		log.Fatal(err)
	}
	ev.CR.CR.Accept(server, nil)
	cConn.Wait(10_000_000, 1)
	sConn.Wait(10_000_000, 1)
	return client, server, cEVD, sEVD, cMem, sMem
}

// RDMA read fetches a buffer of the peer, named by an RMR triplet the peer
// handed over (here directly; usually in a message).
func ExampleEP_PostRDMARead() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	client, _, cEVD, _, cMem, sMem := connected(ia, 4792)

	copy(sMem.Bytes()[100:], "remote data")
	remote := sMem.RMRTriplet(100, 11)
	err = client.PostRDMARead([]udat.LMRTriplet{cMem.Triplet(0, 64)}, 7, remote, udat.CompletionDefault)
	fmt.Println("post:", err)
	ev, _, _ := cEVD.Wait(10_000_000, 1)
	fmt.Println(ev.DTO.Op, ev.DTO.Status, ev.DTO.TransferredLength)
	fmt.Printf("%q\n", cMem.Bytes()[:11])

	// A local buffer shorter than the remote one is refused at once.
	err = client.PostRDMARead([]udat.LMRTriplet{cMem.Triplet(0, 4)}, 8, remote, udat.CompletionDefault)
	fmt.Println(errors.Is(err, udat.ErrLengthError), err)
	// Output:
	// post: <nil>
	// DAT_DTO_RDMA_READ DAT_DTO_SUCCESS 11
	// "remote data"
	// true udat: dat_ep_post_rdma_read: DAT_LENGTH_ERROR
}

// The IB extensions: an RDMA write that also hands the peer 32 bits of
// immediate data, which complete one of its receives (a receive without
// segments is enough). Both completions are EventIBDTO events.
func ExampleEP_PostRDMAWriteImmed() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	client, server, cEVD, sEVD, cMem, sMem := connected(ia, 4798)

	fmt.Println("receive:", server.PostRecv(nil, 9, udat.CompletionDefault))
	copy(cMem.Bytes(), "written")
	err = client.PostRDMAWriteImmed([]udat.LMRTriplet{cMem.Triplet(0, 7)}, 1, sMem.RMRTriplet(512, 7), 0x1234, udat.CompletionDefault)
	fmt.Println("post:", err)
	ev, _, _ := cEVD.Wait(10_000_000, 1)
	fmt.Println(ev.Number, ev.DTO.Op, ev.DTO.Status, ev.IB.Type)
	ev, _, _ = sEVD.Wait(10_000_000, 1)
	fmt.Println(ev.Number, ev.DTO.Op, ev.DTO.Cookie, ev.IB.Type)
	fmt.Printf("immediate %#x, %q written\n", ev.IB.ImmedData, sMem.Bytes()[512:512+ev.DTO.TransferredLength])
	// Output:
	// receive: <nil>
	// post: <nil>
	// DAT_IB_DTO_EVENT DAT_IB_DTO_RDMA_WRITE_IMMED DAT_DTO_SUCCESS DAT_IB_RDMA_WRITE_IMMED
	// DAT_IB_DTO_EVENT DAT_IB_DTO_RECV_IMMED 9 DAT_IB_RDMA_WRITE_IMMED_DATA
	// immediate 0x1234, "written" written
}

// The post-time checks report what the C reference leaves to the hardware.
func ExampleEP_PostSend_errors() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	client, _, _, _, cMem, _ := connected(ia, 4793)

	outside := cMem.Triplet(4090, 16) // runs past the end of the LMR
	fmt.Println(client.PostSend([]udat.LMRTriplet{outside}, 1, udat.CompletionDefault))

	otherPZ, _ := ia.CreatePZ()
	foreign, _ := ia.AllocLMR(otherPZ, 4096, udat.MemPrivAll)
	fmt.Println(client.PostSend([]udat.LMRTriplet{foreign.Triplet(0, 8)}, 1, udat.CompletionDefault))

	fmt.Println(client.PostSend(nil, 1, udat.CompletionUnsignalled))

	var nilEP *udat.EP
	err = nilEP.PostSend(nil, 1, udat.CompletionDefault)
	fmt.Println(errors.Is(err, udat.ErrInvalidHandle), err)
	// Output:
	// udat: dat_ep_post_send: DAT_INVALID_PARAMETER DAT_INVALID_ARG3
	// udat: dat_ep_post_send: DAT_PROTECTION_VIOLATION
	// udat: dat_ep_post_send: DAT_INVALID_PARAMETER DAT_INVALID_ARG5
	// true udat: dat_ep_post_send: DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP
}

// Receive buffers on an SRQ serve every EP created with it.
func ExampleSRQ_PostRecv() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	pz, _ := ia.CreatePZ()
	srq, _ := ia.CreateSRQ(pz, udat.SRQAttr{MaxRecvDTOs: 16, MaxRecvIOV: 1})
	mem, _ := ia.AllocLMR(pz, 4096, udat.MemPrivLocalWrite)
	for i := 0; i < 4; i++ {
		srq.PostRecv([]udat.LMRTriplet{mem.Triplet(i*64, 64)}, uint64(100+i))
	}

	dto, _ := ia.CreateEVD(16, udat.EVDDTOFlag)
	conn, _ := ia.CreateEVD(4, udat.EVDConnectionFlag)
	server, _ := ia.CreateEPWithSRQ(pz, dto, dto, conn, srq, nil)
	cDTO, _ := ia.CreateEVD(16, udat.EVDDTOFlag)
	cConn, _ := ia.CreateEVD(4, udat.EVDConnectionFlag)
	client, _ := ia.CreateEP(pz, cDTO, cDTO, cConn, nil)
	cMem, _ := ia.AllocLMR(pz, 4096, udat.MemPrivLocalRead)
	crEVD, _ := ia.CreateEVD(4, udat.EVDCRFlag)
	ia.CreatePSP(4794, crEVD, udat.PSPConsumerFlag)
	client.Connect(ia.Address(), 4794, 10_000_000, nil, udat.QoSBestEffort, udat.ConnectDefault)
	ev, _, _ := crEVD.Wait(10_000_000, 1)
	ev.CR.CR.Accept(server, nil)
	cConn.Wait(10_000_000, 1)
	conn.Wait(10_000_000, 1)

	copy(cMem.Bytes(), "via SRQ")
	client.PostSend([]udat.LMRTriplet{cMem.Triplet(0, 7)}, 1, udat.CompletionSuppress)
	ev, _, _ = dto.Wait(10_000_000, 1)
	fmt.Println(ev.DTO.EP == server, ev.DTO.Cookie, string(mem.Bytes()[:ev.DTO.TransferredLength]))
	q, _ := srq.Query()
	fmt.Println("still posted:", q.OutstandingDTOCount)
	// Output:
	// true 100 via SRQ
	// still posted: 3
}

// Software events carry any Go value.
func ExampleEVD_PostSE() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	evd, _ := ia.CreateEVD(4, udat.EVDSoftwareFlag)
	evd.PostSE(udat.Event{Number: udat.EventSoftware, Software: "wake up"})
	ev, nmore, _ := evd.Wait(udat.TimeoutInfinite, 1)
	fmt.Println(ev.Number, ev.Software, nmore)
	_, err = evd.Dequeue()
	fmt.Println(errors.Is(err, udat.ErrQueueEmpty))
	// Output:
	// DAT_SOFTWARE_EVENT wake up 0
	// true
}

// A waiting loop takes its events into one Event it reuses; nmore says how
// many more are queued.
func ExampleEVD_WaitInto() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	evd, _ := ia.CreateEVD(4, udat.EVDSoftwareFlag)
	for _, s := range []string{"one", "two"} {
		evd.PostSE(udat.Event{Number: udat.EventSoftware, Software: s})
	}
	var ev udat.Event
	for {
		nmore, err := evd.WaitInto(1_000_000, 1, &ev)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Software, nmore)
		if nmore == 0 {
			break
		}
	}
	// Output:
	// one 1
	// two 0
}

// A polling loop takes its events into one Event it reuses, and stops at
// the ErrQueueEmpty that DequeueInto returns itself.
func ExampleEVD_DequeueInto() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	evd, _ := ia.CreateEVD(4, udat.EVDSoftwareFlag)
	for _, s := range []string{"one", "two"} {
		evd.PostSE(udat.Event{Number: udat.EventSoftware, Software: s})
	}
	var ev udat.Event
	for {
		err := evd.DequeueInto(&ev)
		if err == udat.ErrQueueEmpty {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Number, ev.Software)
	}
	// Output:
	// DAT_SOFTWARE_EVENT one
	// DAT_SOFTWARE_EVENT two
}

// A batch of DTOs goes to the provider in one call: here an RDMA write and
// a send behind it, which the peer receives with a batch of receives.
func ExampleEP_PostRequests() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	client, server, cEVD, sEVD, cMem, sMem := connected(ia, 4796)

	n, err := server.PostRecvs([]udat.Recv{
		{LocalIOV: []udat.LMRTriplet{sMem.Triplet(0, 64)}, Cookie: 10},
		{LocalIOV: []udat.LMRTriplet{sMem.Triplet(64, 64)}, Cookie: 11},
	})
	fmt.Println("receives posted:", n, err)

	copy(cMem.Bytes(), "written")
	copy(cMem.Bytes()[64:], "sent")
	n, err = client.PostRequests([]udat.Request{
		{Op: udat.DTORDMAWrite, LocalIOV: []udat.LMRTriplet{cMem.Triplet(0, 7)}, Cookie: 1, Remote: sMem.RMRTriplet(1024, 7)},
		{Op: udat.DTOSend, LocalIOV: []udat.LMRTriplet{cMem.Triplet(64, 4)}, Cookie: 2},
	})
	fmt.Println("requests posted:", n, err)
	for range 2 {
		ev, _, _ := cEVD.Wait(10_000_000, 1)
		fmt.Println(ev.DTO.Op, ev.DTO.Cookie, ev.DTO.Status)
	}
	ev, _, _ := sEVD.Wait(10_000_000, 1)
	fmt.Printf("received %q (cookie %d), written %q\n",
		sMem.Bytes()[:ev.DTO.TransferredLength], ev.DTO.Cookie, sMem.Bytes()[1024:1031])

	// A refused request stops the batch: the ones before it are posted.
	n, err = client.PostRequests([]udat.Request{
		{Op: udat.DTORDMAWrite, LocalIOV: []udat.LMRTriplet{cMem.Triplet(0, 7)}, Cookie: 3, Remote: sMem.RMRTriplet(1024, 7)},
		{Op: udat.DTORDMAWrite, LocalIOV: []udat.LMRTriplet{cMem.Triplet(0, 7)}, Cookie: 4, Remote: sMem.RMRTriplet(1024, 3)},
	})
	fmt.Println("requests posted:", n, err)
	// Output:
	// receives posted: 2 <nil>
	// requests posted: 2 <nil>
	// DAT_DTO_RDMA_WRITE 1 DAT_DTO_SUCCESS
	// DAT_DTO_SEND 2 DAT_DTO_SUCCESS
	// received "sent" (cookie 10), written "written"
	// requests posted: 1 udat: dat_ep_post_rdma_write: DAT_LENGTH_ERROR
}

// One goroutine waits on two EVDs through a CNO. The CNO is a single
// trigger: a wake-up names one EVD that has events, and the waiter then
// takes the events of every EVD it watches.
func ExampleCNO_WaitContext() {
	ia, err := udat.OpenIA("rxe0", 8)
	if err != nil {
		log.Fatal(err)
	}
	defer ia.Close(udat.CloseAbruptFlag)
	client, server, cEVD, sEVD, cMem, sMem := connected(ia, 4797)
	cno, _ := ia.CreateCNO(nil)
	cEVD.ModifyCNO(cno)
	sEVD.ModifyCNO(cno)

	server.PostRecv([]udat.LMRTriplet{sMem.Triplet(0, 64)}, 1, udat.CompletionDefault)
	n := copy(cMem.Bytes(), "ping")
	client.PostSend([]udat.LMRTriplet{cMem.Triplet(0, n)}, 2, udat.CompletionDefault)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	names := map[*udat.EVD]string{cEVD: "client", sEVD: "server"}
	for got := 0; got < 2; {
		if _, err := cno.WaitContext(ctx); err != nil {
			log.Fatal(err)
		}
		for _, evd := range []*udat.EVD{cEVD, sEVD} {
			for ev, err := evd.Dequeue(); err == nil; ev, err = evd.Dequeue() {
				fmt.Println(names[evd], ev.DTO.Op, ev.DTO.Cookie, ev.DTO.Status)
				got++
			}
		}
	}
	// Unordered output:
	// client DAT_DTO_SEND 2 DAT_DTO_SUCCESS
	// server DAT_DTO_RECEIVE 1 DAT_DTO_SUCCESS
}

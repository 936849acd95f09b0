// Command dtestcmgo runs the Go port of dtestcm (internal/dtestport) as a
// program of its own, server or client, so that one role can be measured
// alone against the C dtestcm of dapl2-utils (for instance under callgrind,
// for the instructions per connection of issue 24 §5):
//
//	dtestcmgo -s [-D rxe0] [-p 45000] [-c 1000] [-b 100] [-w] [-u]
//	dtestcmgo -h HOST [-D rxe0] [-p 45000] [-c 1000] [-b 100] [-w] [-u]
//
// The options are the C program's (-c connections, -b burst, -w wait rather
// than poll, -u UD EPs: address resolutions, against a Go server only);
// polling, it runs with two Ps on a one-CPU machine (secondP).
// The C side runs with -P ofa-v2-cma-roe-d0 and
// DAT_OVERRIDE=testdata/datpeer/dat.conf.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"runtime"

	"github.com/udapl-go/udapl/internal/dtestport"
	"github.com/udapl-go/udapl/udat"
)

func main() {
	server := flag.Bool("s", false, "serve")
	host := flag.String("h", "", "the server's address (client)")
	dev := flag.String("D", "rxe0", "device")
	port := flag.Int("p", 45000, "connection qualifier")
	conns := flag.Int("c", 1000, "connections")
	burst := flag.Int("b", 100, "connections per burst")
	wait := flag.Bool("w", false, "wait for events (dat_evd_wait) rather than poll")
	ud := flag.Bool("u", false, "UD EPs: resolve addresses rather than connect")
	flag.Parse()
	if !*wait {
		secondP()
	}
	o := dtestport.DtestcmOpts{Conns: *conns, Burst: *burst, Port: udat.ConnQual(*port), Wait: *wait, UD: *ud}
	ctx := context.Background()
	logf := func(f string, a ...any) { log.Printf(f, a...) }
	if *server {
		err := dtestport.DtestcmServer(ctx, *dev, o, logf, func() { log.Printf("dtestcmgo: listening") })
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(dtestport.DtestcmPass)
		return
	}
	addr, err := netip.ParseAddr(*host)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dtestcmgo: -h wants an address:", err)
		os.Exit(2)
	}
	cps, err := dtestport.DtestcmClient(ctx, *dev, addr, o, logf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("CPS %.1f\n%s\n", cps, dtestport.DtestcmPass)
}

// secondP gives the runtime a second P on a one-CPU machine, unless
// GOMAXPROCS is set. A polling goroutine holds its P and its thread is
// always runnable: on one CPU it runs in its turn among the other busy
// tasks (the peer, the kernel's threads), and an rdma_cm event waits for
// that turn before the poller's next empty dequeue takes it. C's cma
// provider takes its events in a thread of its own that sleeps in poll(2),
// and the kernel runs a woken sleeper at once. With an idle second P the
// Go runtime has such a thread: the one asleep in the netpoller, which the
// event wakes and which takes that P to run the IA's connection-event
// goroutine. Waiting (-w), the waiter gives its P back, so it keeps one.
// Measured: docs/performance.md, "Connection setup".
func secondP() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
}

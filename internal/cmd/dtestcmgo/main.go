// Command dtestcmgo runs the Go port of dtestcm (internal/dtestport) as a
// program of its own, server or client, so that one role can be measured
// alone against the C dtestcm of dapl2-utils (for instance under callgrind,
// for the instructions per connection of issue 24 §5):
//
//	dtestcmgo -s [-D rxe0] [-p 45000] [-c 1000] [-b 100] [-w]
//	dtestcmgo -h HOST [-D rxe0] [-p 45000] [-c 1000] [-b 100] [-w]
//
// The options are the C program's (-c connections, -b burst, -w wait rather
// than poll); the C side runs with -P ofa-v2-cma-roe-d0 and
// DAT_OVERRIDE=testdata/datpeer/dat.conf.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"

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
	flag.Parse()
	o := dtestport.DtestcmOpts{Conns: *conns, Burst: *burst, Port: udat.ConnQual(*port), Wait: *wait}
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

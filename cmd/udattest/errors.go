package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/udapl-go/udapl/udat"
)

// The errors a user meets most, said plainly.

// openError explains a failed dat_ia_open.
func openError(name string, err error) error {
	devs := rdmaDevices()
	// Without any device, rdma-core's device list fails and dat_ia_open
	// reports DAT_MODEL_NOT_SUPPORTED: say what is really wrong.
	if len(devs) == 0 || errors.Is(err, udat.ErrProviderNotFound) {
		have := "this machine has no RDMA device"
		if len(devs) > 0 {
			have = "RDMA devices here: " + strings.Join(devs, ", ")
		}
		return fmt.Errorf("cannot open the IA %q: no such RDMA device, netdev or dat.conf provider (%s).\n"+
			"  Create a Soft-RoCE device with scripts/setup-rxe.sh, or run inside the test VM:\n"+
			"  scripts/vmtest.sh bin/udattest ...  (%v)", name, have, err)
	}
	return fmt.Errorf("cannot open the IA %q: %w", name, err)
}

// rdmaDevices lists the RDMA devices the kernel has.
func rdmaDevices() []string {
	ents, err := os.ReadDir("/sys/class/infiniband")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// listenError explains a failed dat_psp_create.
func listenError(port uint, err error) error {
	if errors.Is(err, udat.ErrConnQualInUse) || errors.Is(err, udat.ErrPortInUse) {
		return fmt.Errorf("port %d is already in use (is another udattest server running?); choose another with -p", port)
	}
	return fmt.Errorf("cannot listen on port %d: %w", port, err)
}

// connectError explains a connection that did not come up: err is the
// error of dat_ep_connect or of the wait, or num the event that ended it.
func connectError(addr netip.Addr, port uint, err error, num udat.EventNumber) error {
	where := fmt.Sprintf("%s port %d", addr, port)
	switch {
	case errors.Is(err, errTimeout) || num == udat.EventConnectionTimedOut:
		return fmt.Errorf("no answer from %s: timed out (is the address right and the peer up?)", where)
	case errors.Is(err, udat.ErrInvalidAddress) || num == udat.EventConnectionUnreachable:
		return fmt.Errorf("%s is unreachable: no route from this IA to that address", where)
	case num == udat.EventConnectionNonPeerRejected:
		return fmt.Errorf("connection to %s refused: no udattest server is listening there (start one with: udattest -s -p %d)", where, port)
	case num == udat.EventConnectionPeerRejected:
		return fmt.Errorf("the server at %s rejected the connection (an older or newer udattest?)", where)
	case err != nil:
		return fmt.Errorf("cannot connect to %s: %w", where, err)
	}
	return fmt.Errorf("cannot connect to %s: %v", where, num)
}

var lookupHost = net.LookupHost

// resolveHost turns -h HOST into an IP address.
func resolveHost(host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	addrs, err := lookupHost(host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, usagef("-h %q: not an IP address or a known host name", host)
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
			return ip, nil
		}
	}
	ip, err := netip.ParseAddr(addrs[0])
	if err != nil {
		return netip.Addr{}, usagef("-h %q: cannot use address %q", host, addrs[0])
	}
	return ip.Unmap(), nil
}

package crosshost

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/udapl-go/udapl/internal/datpeer"
	"github.com/udapl-go/udapl/internal/datpeer/gopeer"
	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// roleArgs are the knobs of the roles.
type roleArgs struct {
	DP      gopeer.Opts `json:"dp"`
	DatPeer string      `json:"datpeer,omitempty"` // the C datpeer binary
	Stream  stream      `json:"stream"`
	// BounceMS is how long bounce-source keeps its host's link down.
	BounceMS int `json:"bounce_ms,omitempty"`
	// Cmd is the shell command of role soak-sh (soak_peer_test.go).
	Cmd string `json:"cmd,omitempty"`
}

// A role is one side of a cross-host test, run by the peer agent in VM B
// (in one VM, by a goroutine). It calls ready once the test may go on
// (a server listens, a client starts), and ends with a result.
type role func(ctx context.Context, req request, ready func(), rl *roleLog) error

var roles = map[string]role{
	"go-server": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		return gopeer.Run(ctx, devtest.Device(), datpeer.RoleServer, req.Args.DP, rl.logf, func(g *gopeer.Peer) {
			g.Listen(udat.ConnQual(req.Port))
			ready()
			g.RunServer()
		})
	},
	"go-client": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		addr, err := netip.ParseAddr(req.Addr)
		if err != nil {
			return err
		}
		ready()
		return gopeer.Run(ctx, devtest.Device(), datpeer.RoleClient, req.Args.DP, rl.logf, func(g *gopeer.Peer) {
			g.RunClient(addr, udat.ConnQual(req.Port))
		})
	},
	"c-server": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		return runDatPeer(ctx, req.Args.DatPeer, ready, rl, "-s", "-p", strconv.Itoa(int(req.Port)))
	},
	"c-client": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		args := []string{"-c", "-h", req.Addr, "-p", strconv.Itoa(int(req.Port))}
		if req.Args.DP.Reject {
			args = append(args, "-r")
		}
		ready()
		return runDatPeer(ctx, req.Args.DatPeer, nil, rl, args...)
	},
	"stream-sink": runSink,
	// stream-source connects to a sink on the test's host and streams
	// until the role ends (or its host dies).
	"stream-source": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		src, err := dialSource(ctx, req, ready)
		if err != nil {
			return err
		}
		defer src.close()
		err = src.run(context.Background(), ctx.Done(), 10*time.Second)
		for k, v := range src.counts {
			rl.count(k, v)
		}
		return err
	},
	// hold-request listens and never answers the connection request.
	"hold-request": func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		e, err := openEndpoint(stream{}, 4096, 1)
		if err != nil {
			return err
		}
		defer e.close()
		if e.crEVD, err = e.ia.CreateEVD(4, udat.EVDCRFlag); err != nil {
			return err
		}
		if e.psp, err = e.ia.CreatePSP(udat.ConnQual(req.Port), e.crEVD, udat.PSPConsumerFlag); err != nil {
			return err
		}
		ready()
		if _, _, err := e.crEVD.WaitContext(ctx, 1); err == nil {
			rl.logf("holding the connection request")
		}
		<-ctx.Done()
		return nil
	},
}

// roleLog collects a role's log lines and counters for its result.
type roleLog struct {
	mu     sync.Mutex
	lines  []string
	counts map[string]int
}

func (l *roleLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *roleLog) count(name string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[name] += n
}

// runRole runs the role req names and returns its result.
func runRole(ctx context.Context, req request, ready func()) result {
	var rl roleLog
	r, ok := roles[req.Role]
	var err error
	if !ok {
		err = fmt.Errorf("no role %q", req.Role)
	} else {
		err = r(ctx, req, ready, &rl)
	}
	res := result{Log: rl.lines, Counts: rl.counts}
	if err != nil {
		res.Err = err.Error()
	}
	return res
}

// datPeerProvider is the dat.conf entry of the cma provider on the netdev
// under the device (d0 in one VM, eth0 in the pair), as the IA finds it:
// an iWARP port has no GID attributes to name it.
func datPeerProvider() (string, error) {
	ia, err := udat.OpenIA(devtest.Device(), 4)
	if err != nil {
		return "", err
	}
	defer ia.Close(udat.CloseAbruptFlag)
	a, _, err := ia.Query()
	if err != nil {
		return "", err
	}
	if a.NetDev == "" {
		return "", fmt.Errorf("no netdev found under %s", devtest.Device())
	}
	return "ofa-v2-cma-roe-" + a.NetDev, nil
}

// runDatPeer runs the C datpeer with args; ready (if not nil) is called at
// its "listening on conn_qual" line. It fails unless datpeer says PASSED.
func runDatPeer(ctx context.Context, bin string, ready func(), rl *roleLog, args ...string) error {
	prov, err := datPeerProvider()
	if err != nil {
		return err
	}
	cmd, cancel, err := datpeer.Command(ctx, bin, append([]string{"-P", prov}, args...)...)
	if err != nil {
		return err
	}
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	passed := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		rl.logf("datpeer: %s", line)
		if strings.Contains(line, "listening on conn_qual") && ready != nil {
			ready()
		}
		passed = passed || strings.Contains(line, ": PASSED")
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("datpeer %s: %w", strings.Join(args, " "), err)
	}
	if !passed {
		return fmt.Errorf("datpeer %s ended without PASSED", strings.Join(args, " "))
	}
	return nil
}

// dialSource starts a role that streams to a sink on the test's host: it
// reports ready, then connects to req.Addr.
func dialSource(ctx context.Context, req request, ready func()) (*source, error) {
	addr, err := netip.ParseAddr(req.Addr)
	if err != nil {
		return nil, err
	}
	ready()
	return connectSource(ctx, req.Args.Stream, addr, req.Port)
}

package crosshost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// The two hosts, as scripts/vmpair.sh sets them up. In one VM both ends are
// the same host, 192.0.2.1.
const (
	pairHostEnv     = "UDAPL_PAIR_HOST" // A or B
	pairDirEnv      = "UDAPL_PAIR_DIR"
	pairPeerEnv     = "UDAPL_PAIR_PEER"
	pairRequiredEnv = "UDAPL_PAIR_REQUIRED"

	peerBootWait = 3 * time.Minute // B boots in parallel with A; a reboot is slower when loaded
	pollEvery    = 20 * time.Millisecond
)

// TestMain runs the tests, or in VM B the peer agent.
func TestMain(m *testing.M) {
	if os.Getenv(pairHostEnv) == "B" {
		os.Exit(runAgent(os.Getenv(pairDirEnv)))
	}
	os.Exit(m.Run())
}

// inPair reports whether this test binary runs in VM A of a pair.
func inPair() bool { return os.Getenv(pairHostEnv) == "A" && os.Getenv(pairDirEnv) != "" }

// requirePair skips (or, under UDAPL_PAIR_REQUIRED=1, fails) a test that
// needs two hosts and a host that can hurt one of them.
func requirePair(t *testing.T) {
	t.Helper()
	devtest.Require(t)
	if inPair() {
		return
	}
	if os.Getenv(pairRequiredEnv) == "1" {
		t.Fatalf("this test needs the pair of VMs (scripts/vmpair.sh) and %s=1 is set", pairRequiredEnv)
	}
	t.Skip("needs the pair of VMs: make test-2host")
}

// peerAddr is the address of the host the roles run on.
func peerAddr(t testing.TB) netip.Addr {
	if inPair() {
		a, err := netip.ParseAddr(os.Getenv(pairPeerEnv))
		require.NoError(t, err, "%s", pairPeerEnv)
		return a
	}
	return selfAddr(t)
}

// request asks for one run of a role.
type request struct {
	Role string   `json:"role"`
	Port uint16   `json:"port"` // connection qualifier to listen on or connect to
	Addr string   `json:"addr"` // the address a client role connects to
	Args roleArgs `json:"args"`
}

// result is what a role reports when it ends.
type result struct {
	Err    string         `json:"err,omitempty"`
	Log    []string       `json:"log,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
}

// roleRun is a role started for a test.
type roleRun struct {
	name   string
	ready  func(ctx context.Context) error
	result func(ctx context.Context) (result, error)
	cancel func()
}

var (
	roleSeq atomic.Int64
	// peerGen counts the kills of VM B: the roles of an earlier B never
	// report.
	peerGen atomic.Int64
)

func mustAddr(t testing.TB, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	require.NoError(t, err)
	return a
}

// startRole starts role on the peer host (in one VM: in a goroutine) and
// waits until it is ready. The role is cancelled when the test ends.
func startRole(t *testing.T, req request) *roleRun {
	t.Helper()
	if req.Addr == "" {
		req.Addr = selfAddr(t).String()
	}
	var r *roleRun
	if inPair() {
		r = startRemoteRole(t, req)
	} else {
		r = startLocalRole(req)
	}
	t.Cleanup(r.cancel)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.ready(ctx); err != nil {
		res, _ := r.result(ctx)
		t.Fatalf("role %s did not get ready: %v; its result: %+v", r.name, err, res)
	}
	return r
}

// finish waits (at most d) for the role's result and fails the test if the
// role failed.
func (r *roleRun) finish(t *testing.T, d time.Duration) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := r.result(ctx)
	require.NoError(t, err, "waiting for role %s", r.name)
	for _, l := range res.Log {
		t.Logf("%s: %s", r.name, l)
	}
	require.Empty(t, res.Err, "role %s failed", r.name)
	return res
}

// selfAddr is the address of the host the tests run on: its rxe device's.
func selfAddr(t testing.TB) netip.Addr {
	t.Helper()
	a, err := deviceAddr()
	require.NoError(t, err, "open the RDMA device %q", devtest.Require(t))
	return a
}

var deviceAddr = sync.OnceValues(func() (netip.Addr, error) {
	ia, err := udat.OpenIA(devtest.Device(), 8)
	if err != nil {
		return netip.Addr{}, err
	}
	defer ia.Close(udat.CloseAbruptFlag)
	return ia.Address(), nil
})

// startLocalRole runs the role in a goroutine of this process.
func startLocalRole(req request) *roleRun {
	ctx, cancel := context.WithCancel(context.Background())
	readyc := make(chan struct{})
	done := make(chan result, 1)
	var once sync.Once
	go func() {
		done <- runRole(ctx, req, func() { once.Do(func() { close(readyc) }) })
	}()
	var res *result
	wait := func(ctx context.Context) (result, error) {
		if res != nil {
			return *res, nil
		}
		select {
		case r := <-done:
			res = &r
			return r, nil
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
	}
	return &roleRun{
		name: req.Role,
		ready: func(ctx context.Context) error {
			select {
			case <-readyc:
				return nil
			case r := <-done:
				res = &r
				return fmt.Errorf("the role ended: %s", r.Err)
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		result: wait,
		cancel: func() {
			cancel()
			ctx, c := context.WithTimeout(context.Background(), 30*time.Second)
			defer c()
			wait(ctx)
		},
	}
}

// pairDir is the directory the test, the agent and the host share.
func pairDir() string { return os.Getenv(pairDirEnv) }

// startRemoteRole writes the request for the agent in B.
func startRemoteRole(t *testing.T, req request) *roleRun {
	t.Helper()
	waitPeer(t)
	id := fmt.Sprintf("%d-%s", roleSeq.Add(1), strings.ReplaceAll(req.Role, "/", "_"))
	base := filepath.Join(pairDir(), "req", id)
	b, err := json.Marshal(req)
	require.NoError(t, err)
	require.NoError(t, writeFileAtomic(base+".json", b))
	var res *result
	gen := peerGen.Load()
	wait := func(ctx context.Context) (result, error) {
		if res != nil {
			return *res, nil
		}
		if peerGen.Load() != gen {
			return result{}, errors.New("VM B was killed")
		}
		err := pollFile(ctx, base+".result")
		if err != nil {
			return result{}, fmt.Errorf("no result from the peer agent: %w", err)
		}
		var r result
		b, err := os.ReadFile(base + ".result")
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			return result{}, err
		}
		res = &r
		return r, nil
	}
	return &roleRun{
		name: id,
		ready: func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			readyc := make(chan error, 2)
			go func() { readyc <- pollFile(ctx, base+".ready") }()
			go func() {
				if pollFile(ctx, base+".result") == nil {
					readyc <- errors.New("the role ended")
				}
			}()
			return <-readyc
		},
		result: wait,
		cancel: func() {
			if res != nil || peerGen.Load() != gen {
				return
			}
			writeFileAtomic(base+".cancel", nil)
			ctx, c := context.WithTimeout(context.Background(), 30*time.Second)
			defer c()
			wait(ctx)
		},
	}
}

// waitPeer waits until the agent in B runs.
func waitPeer(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerBootWait)
	defer cancel()
	require.NoError(t, pollFile(ctx, filepath.Join(pairDir(), "peer.ready")), "the peer agent in VM B did not start")
}

// hostFault asks the host to do something to VM B (see scripts/vmpair.sh)
// and returns when it is done.
func hostFault(t *testing.T, what string) {
	t.Helper()
	start := time.Now()
	id := filepath.Join(pairDir(), "host", fmt.Sprintf("%d", roleSeq.Add(1)))
	require.NoError(t, writeFileAtomic(id+".req", []byte(what+"\n")))
	ctx, cancel := context.WithTimeout(context.Background(), peerBootWait)
	defer cancel()
	require.NoError(t, pollFile(ctx, id+".done"), "host request %q", what)
	b, err := os.ReadFile(id + ".done")
	require.NoError(t, err)
	reply := strings.TrimSpace(string(b))
	require.True(t, strings.HasPrefix(reply, "ok"), "host request %q: %s", what, reply)
	if what == "kill B" || what == "boot B" { // boot B kills a B still running
		peerGen.Add(1)
	}
	t.Logf("host: %s: %s (%v)", what, reply, time.Since(start).Round(time.Millisecond))
}

// rebootPeer boots B again (after a fault killed it, or to replace its
// kernel), and waits for its agent.
func rebootPeer(t *testing.T) {
	t.Helper()
	os.Remove(filepath.Join(pairDir(), "peer.ready"))
	hostFault(t, "boot B")
	waitPeer(t)
}

// writeFileAtomic writes a file the other side sees whole or not at all.
func writeFileAtomic(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// pollFile waits until name exists.
func pollFile(ctx context.Context, name string) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if _, err := os.Stat(name); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// runAgent is VM B's side: it runs the roles that VM A asks for, each in a
// goroutine, until the host creates dir/stop.
func runAgent(dir string) int {
	if dir == "" {
		fmt.Fprintln(os.Stderr, "peer agent: no", pairDirEnv)
		return 2
	}
	reqDir := filepath.Join(dir, "req")
	os.MkdirAll(reqDir, 0o755)
	started := map[string]bool{}
	// Requests from before a reboot are not this agent's.
	if old, _ := filepath.Glob(filepath.Join(reqDir, "*.json")); old != nil {
		for _, f := range old {
			started[f] = true
		}
	}
	writeFileAtomic(filepath.Join(dir, "peer.ready"), []byte(fmt.Sprintf("pid %d\n", os.Getpid())))
	fmt.Println("peer agent: ready")
	var wg sync.WaitGroup
	root, stop := context.WithCancel(context.Background())
	for {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			stop()
			break
		}
		reqs, _ := filepath.Glob(filepath.Join(reqDir, "*.json"))
		for _, f := range reqs {
			if started[f] {
				continue
			}
			started[f] = true
			base := strings.TrimSuffix(f, ".json")
			var req request
			b, err := os.ReadFile(f)
			if err == nil {
				err = json.Unmarshal(b, &req)
			}
			if err != nil {
				writeResult(base, result{Err: fmt.Sprintf("bad request: %v", err)})
				continue
			}
			fmt.Printf("peer agent: %s: %+v\n", filepath.Base(base), req)
			ctx, cancel := context.WithCancel(root)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer cancel()
				go func() {
					if pollFile(ctx, base+".cancel") == nil {
						cancel()
					}
				}()
				res := runRole(ctx, req, func() { writeFileAtomic(base+".ready", nil) })
				fmt.Printf("peer agent: %s ended: %q\n", filepath.Base(base), res.Err)
				writeResult(base, res)
			}()
		}
		time.Sleep(pollEvery)
	}
	wg.Wait()
	return 0
}

func writeResult(base string, r result) {
	b, _ := json.Marshal(r)
	writeFileAtomic(base+".result", b)
}

//go:build linux && cgo

package cverbs

// Unit tests that need no RDMA device: they run on the host
// (UDAPL_HOST_ONLY=1 go test ./cverbs/) as well as in the VM.

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

func TestSGELayout(t *testing.T) {
	size, addr, length, lkey := sgeLayout()
	assert.Equal(t, size, unsafe.Sizeof(SGE{}), "sizeof")
	assert.Equal(t, addr, unsafe.Offsetof(SGE{}.Addr), "addr")
	assert.Equal(t, length, unsafe.Offsetof(SGE{}.Length), "length")
	assert.Equal(t, lkey, unsafe.Offsetof(SGE{}.LKey), "lkey")
	assert.Equal(t, uintptr(16), size)
}

func TestErrnoWrapping(t *testing.T) {
	require.NoError(t, opErr("x", 0))

	err := opErr("ibv_post_send", int(syscall.ENOMEM))
	var oe *OpError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "ibv_post_send", oe.Op)
	assert.ErrorIs(t, err, syscall.ENOMEM)
	assert.Contains(t, err.Error(), "ibv_post_send")

	// Negative return values (-errno) map to the same errno.
	assert.ErrorIs(t, opErr("x", -int(syscall.EINVAL)), syscall.EINVAL)

	assert.ErrorIs(t, errnoErr("x", syscall.EAGAIN), syscall.EAGAIN)
	assert.ErrorIs(t, errnoErr("x", nil), syscall.EIO)
	assert.ErrorIs(t, errnoErr("x", syscall.Errno(0)), syscall.EIO)

	assert.ErrorIs(t, closedErr("ibv_poll_cq"), ErrClosed)
}

// requireOpErr checks err is an *OpError wrapping target.
func requireOpErr(t *testing.T, err error, target error) {
	t.Helper()
	var oe *OpError
	require.ErrorAs(t, err, &oe, "want *OpError, got %T %v", err, err)
	require.ErrorIs(t, err, target)
}

func TestNilObjects(t *testing.T) {
	var c *Context
	var pd *PD
	var cq *CQ
	var ch *CompChannel
	var qp *QP
	var srq *SRQ
	var mr *MR
	var mw *MW
	var ech *EventChannel
	var id *CMID

	// Close of a nil object is a no-op.
	for _, cl := range []interface{ Close() error }{c, pd, cq, ch, qp, srq, mr, mw, ech, id} {
		require.NoError(t, cl.Close())
	}

	_, err := c.QueryDevice()
	requireOpErr(t, err, ErrClosed)
	_, err = c.QueryPort(1)
	requireOpErr(t, err, ErrClosed)
	_, err = c.QueryGID(1, 0)
	requireOpErr(t, err, ErrClosed)
	_, err = c.QueryGIDEntry(1, 0)
	requireOpErr(t, err, ErrClosed)
	_, err = c.NetDev(1)
	requireOpErr(t, err, ErrClosed)
	_, err = c.AllocPD()
	requireOpErr(t, err, ErrClosed)
	_, err = c.NewCompChannel()
	requireOpErr(t, err, ErrClosed)
	_, err = c.NewCQ(16, nil)
	requireOpErr(t, err, ErrClosed)
	_, err = c.WaitAsyncEvent(context.Background())
	requireOpErr(t, err, ErrClosed)
	assert.Equal(t, "", c.Name())

	_, err = pd.RegMR(nil, 0, AccessLocalWrite)
	requireOpErr(t, err, ErrClosed)
	_, err = pd.AllocMW()
	requireOpErr(t, err, ErrClosed)
	_, err = pd.NewSRQ(SRQInitAttr{MaxWR: 4, MaxSGE: 1})
	requireOpErr(t, err, ErrClosed)
	assert.Nil(t, pd.Context())

	_, err = cq.Poll(make([]WC, 4))
	requireOpErr(t, err, ErrClosed)
	requireOpErr(t, cq.ReqNotify(false), ErrClosed)
	requireOpErr(t, cq.Resize(8), ErrClosed)
	assert.Equal(t, 0, cq.CQE())

	_, err = ch.Wait(context.Background())
	requireOpErr(t, err, ErrClosed)

	_, err = qp.PostSend([]SendWR{{}})
	requireOpErr(t, err, ErrClosed)
	_, err = qp.PostRecv([]RecvWR{{}})
	requireOpErr(t, err, ErrClosed)
	_, err = qp.State()
	requireOpErr(t, err, ErrClosed)
	requireOpErr(t, qp.ToInit(1, 0), ErrClosed)
	requireOpErr(t, qp.ToRTR(RTRAttr{MTU: 1024}), ErrClosed)
	requireOpErr(t, qp.ToRTS(RTSAttr{}), ErrClosed)
	requireOpErr(t, qp.ToError(), ErrClosed)
	requireOpErr(t, qp.ToReset(), ErrClosed)
	_, err = qp.BindMW(mw, mr, 0, 0, 0, 0)
	requireOpErr(t, err, ErrClosed)
	assert.Equal(t, uint32(0), qp.Num())
	assert.Equal(t, QPCap{}, qp.Cap())

	_, err = srq.PostRecv([]RecvWR{{}})
	requireOpErr(t, err, ErrClosed)
	requireOpErr(t, srq.Resize(8), ErrClosed)
	requireOpErr(t, srq.SetLimit(1), ErrClosed)
	_, err = srq.Query()
	requireOpErr(t, err, ErrClosed)

	_, err = ech.GetEvent(context.Background())
	requireOpErr(t, err, ErrClosed)
	_, err = ech.CreateID()
	requireOpErr(t, err, ErrClosed)

	ap := netip.MustParseAddrPort("192.0.2.1:7471")
	requireOpErr(t, id.BindAddr(ap), ErrClosed)
	requireOpErr(t, id.Listen(1), ErrClosed)
	requireOpErr(t, id.ResolveAddr(netip.AddrPort{}, ap, time.Second), ErrClosed)
	requireOpErr(t, id.ResolveRoute(time.Second), ErrClosed)
	requireOpErr(t, id.Connect(ConnParam{}), ErrClosed)
	requireOpErr(t, id.Accept(ConnParam{}), ErrClosed)
	requireOpErr(t, id.Reject(nil), ErrClosed)
	requireOpErr(t, id.Disconnect(), ErrClosed)
	requireOpErr(t, id.Establish(), ErrClosed)
	requireOpErr(t, id.ModifyQP(qp, QPInit), ErrClosed)
	_, err = id.NewQP(pd, QPInitAttr{SendCQ: cq}) // a nil CQ is a missing CQ
	requireOpErr(t, err, syscall.EINVAL)
	assert.Equal(t, netip.AddrPort{}, id.LocalAddr())
	assert.Equal(t, netip.AddrPort{}, id.PeerAddr())
	assert.Equal(t, "", id.DeviceName())
	assert.Nil(t, id.QP())
}

func TestBadArguments(t *testing.T) {
	var c *Context
	var pd *PD
	var cq *CQ
	var qp *QP
	var id *CMID

	// Argument checks come before the object checks, so these need no device.
	_, err := c.NewCQ(0, nil)
	requireOpErr(t, err, syscall.EINVAL)
	_, err = c.NewCQ(-5, nil)
	requireOpErr(t, err, syscall.EINVAL)
	requireOpErr(t, cq.Resize(-1), syscall.EINVAL)
	_, err = c.QueryGID(1, -1)
	requireOpErr(t, err, syscall.EINVAL)
	_, err = c.QueryGIDEntry(1, -1)
	requireOpErr(t, err, syscall.EINVAL)

	_, err = pd.RegMR(nil, -1, AccessLocalWrite)
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.RegMR(nil, 4096, AccessLocalWrite)
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.NewSRQ(SRQInitAttr{MaxWR: -1})
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.NewSRQ(SRQInitAttr{MaxWR: 4, MaxSGE: -1})
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.NewQP(QPInitAttr{MaxSendWR: -1})
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.NewQP(QPInitAttr{MaxSendWR: 4}) // no CQ
	requireOpErr(t, err, syscall.EINVAL)
	_, err = pd.NewQP(QPInitAttr{SendCQ: cq, MaxSendWR: 4}) // nil CQ
	requireOpErr(t, err, syscall.EINVAL)

	requireOpErr(t, qp.ToRTR(RTRAttr{MTU: 1000}), syscall.EINVAL)
	requireOpErr(t, qp.ToRTR(RTRAttr{MTU: 1024, SGIDIndex: -1}), syscall.EINVAL)
	requireOpErr(t, qp.ToRTR(RTRAttr{MTU: 1024, MinRNRTimer: 32}), syscall.EINVAL)
	requireOpErr(t, qp.ToRTS(RTSAttr{RetryCnt: 8}), syscall.EINVAL)
	requireOpErr(t, qp.ToRTS(RTSAttr{Timeout: -1}), syscall.EINVAL)

	requireOpErr(t, id.BindAddr(netip.AddrPort{}), syscall.EINVAL)
	requireOpErr(t, id.Listen(-1), syscall.EINVAL)
	ap := netip.MustParseAddrPort("192.0.2.1:1")
	requireOpErr(t, id.ResolveAddr(netip.AddrPort{}, ap, -time.Second), syscall.EINVAL)
	requireOpErr(t, id.ResolveAddr(netip.AddrPort{}, netip.AddrPort{}, time.Second), syscall.EINVAL)
	requireOpErr(t, id.ResolveRoute(-time.Second), syscall.EINVAL)
	requireOpErr(t, id.Connect(ConnParam{PrivateData: make([]byte, 256)}), syscall.EINVAL)
	requireOpErr(t, id.Reject(make([]byte, 300)), syscall.EINVAL)
}

func TestMTUConversion(t *testing.T) {
	for _, b := range []int{256, 512, 1024, 2048, 4096} {
		assert.Equal(t, b, mtuBytes(mtuEnum(b)))
	}
	assert.Zero(t, mtuEnum(1500))
	assert.Zero(t, mtuEnum(0))
}

func TestSockaddrRoundTrip(t *testing.T) {
	for _, s := range []string{"192.0.2.1:7471", "[2001:db8::1]:80", "[::ffff:192.0.2.7]:9"} {
		ap := netip.MustParseAddrPort(s)
		got := sockaddrRoundTrip(t, ap)
		want := ap
		if ap.Addr().Is4In6() {
			want = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		assert.Equal(t, want, got, s)
	}
}

// pipeWaiter returns an fdWaiter over the read end of a fresh pipe, a
// function that makes it readable and one that consumes a byte (false when
// none is there).
func pipeWaiter(t *testing.T) (w *fdWaiter, write func(), read func() bool) {
	t.Helper()
	var p [2]int
	require.NoError(t, syscall.Pipe2(p[:], syscall.O_CLOEXEC))
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	w, err := newFDWaiterInt("pipe", p[0], "pipe")
	require.NoError(t, err)
	t.Cleanup(w.close)
	write = func() {
		_, err := syscall.Write(p[1], []byte{1})
		require.NoError(t, err)
	}
	read = func() bool {
		var b [1]byte
		n, err := syscall.Read(p[0], b[:])
		return n == 1 || !errors.Is(err, syscall.EAGAIN)
	}
	return w, write, read
}

func TestWaiterDeadline(t *testing.T) {
	w, _, read := pipeWaiter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := w.wait(ctx, "pipe", read)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestWaiterCancel(t *testing.T) {
	w, _, read := pipeWaiter(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err := w.wait(ctx, "pipe", read)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second)

	// Already cancelled: returns at once.
	require.ErrorIs(t, w.wait(ctx, "pipe", read), context.Canceled)
}

func TestWaiterReady(t *testing.T) {
	w, write, read := pipeWaiter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A deadline that fired earlier must not leak into the next wait.
	short, cancelShort := context.WithTimeout(ctx, 10*time.Millisecond)
	require.ErrorIs(t, w.wait(short, "pipe", read), context.DeadlineExceeded)
	cancelShort()

	var g errgroup.Group
	g.Go(func() error { return w.wait(ctx, "pipe", read) })
	time.Sleep(50 * time.Millisecond)
	write()
	require.NoError(t, g.Wait())

	// Data already there: no wait at all.
	write()
	require.NoError(t, w.wait(context.Background(), "pipe", read))
}

func TestWaiterClose(t *testing.T) {
	w, _, read := pipeWaiter(t)
	var g errgroup.Group
	g.Go(func() error { return w.wait(context.Background(), "pipe", read) })
	time.Sleep(50 * time.Millisecond)
	w.close()
	err := g.Wait()
	requireOpErr(t, err, ErrClosed)
}

// Waiters queue for the file's deadline; one whose context ends while it is
// queued leaves promptly without disturbing the one that is waiting.
func TestWaiterQueued(t *testing.T) {
	w, write, read := pipeWaiter(t)
	long, cancelLong := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelLong()

	var g errgroup.Group
	g.Go(func() error { return w.wait(long, "pipe", read) })
	time.Sleep(50 * time.Millisecond)

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, w.wait(short, "pipe", read), context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)

	write()
	require.NoError(t, g.Wait())
}

func sockaddrRoundTrip(t *testing.T, ap netip.AddrPort) netip.AddrPort {
	t.Helper()
	got := roundTripSockaddr(ap)
	require.True(t, got.IsValid(), "%v did not convert", ap)
	return got
}

// The embedded header is the one cgo compiles (see header.go).
func TestHeaderEmbedded(t *testing.T) {
	assert.Contains(t, cHeader, "cverbs_post_send")
	assert.Contains(t, cHeaderRXE, "cverbs_rxe_send_queue")
}

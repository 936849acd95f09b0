package dtestport

import (
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// The TCP message as C's sprintf("%04hx:%08x:%08x:%08x:%s") writes it for
// 192.0.2.1 (s_addr printed as a little-endian host integer).
func TestConnMsg(t *testing.T) {
	m := ConnMsg{Addr: netip.MustParseAddr("192.0.2.1"), Provider: Provider}
	b := m.Encode()
	require.Len(t, b, ConnMsgSize)
	require.Equal(t, "0000:00000000:00000000:010200c0:"+Provider, string(b[:32+len(Provider)]))
	require.Zero(t, b[32+len(Provider)])
	got, err := ParseConnMsg(b)
	require.NoError(t, err)
	require.Equal(t, m, got)
	_, err = ParseConnMsg([]byte("0001:00000002:00000000:00000000:x"))
	require.Error(t, err, "a LID and QPN (ucm) is not rdma_cm")
	_, err = ParseConnMsg([]byte("garbage"))
	require.Error(t, err)
}

// An RMR triplet goes in network byte order, field by field.
func TestRMREncoding(t *testing.T) {
	r := udat.RMRTriplet{VirtualAddress: 0x0102030405060708, SegmentLength: 0x1000, RMRContext: 0x26d}
	b := make([]byte, RMRSize)
	EncodeRMR(b, r)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x10, 0, 0, 0, 2, 0x6d}, b)
	require.Equal(t, r, DecodeRMR(b))
}

// crashSignal tells a crash from a nonzero status and from a kill.
func TestCrashSignal(t *testing.T) {
	exit := func(script string) error { return exec.Command("sh", "-c", script).Run() }
	require.True(t, crashSignal(exit("kill -SEGV $$")), "SIGSEGV")
	require.True(t, crashSignal(exit("kill -ABRT $$")), "SIGABRT")
	require.False(t, crashSignal(exit("kill -KILL $$")), "SIGKILL: Kill's, or the run limit's")
	require.False(t, crashSignal(exit("exit 3")), "a nonzero status")
	require.False(t, crashSignal(nil))
}

// A crash counts as one at exit only after the program's pass mark, the
// closing mark, or the mark the Go side's checks cover.
func TestCrashedAtExit(t *testing.T) {
	run := func(script string) *Proc {
		p, err := Start("sh", "PASSED", "-c", script)
		require.NoError(t, err)
		<-p.done
		return p
	}
	p := run("echo step 1; echo last step; kill -SEGV $$")
	require.Nil(t, p.CrashedAtExit(), "no mark: a crash in the run")
	require.Error(t, p.Finish(time.Second))
	p.WorkVerifiedAfter("last step")
	require.Error(t, p.CrashedAtExit(), "after the mark the Go side checked past")
	require.NoError(t, p.Finish(time.Second))

	p = run("echo step 1; kill -SEGV $$; echo last step")
	p.WorkVerifiedAfter("last step")
	require.Nil(t, p.CrashedAtExit(), "before that mark")
	require.Error(t, p.Finish(time.Second))

	require.Error(t, run("echo "+closingMark+"; kill -SEGV $$").CrashedAtExit())
	p = run("echo last step; exit 3")
	p.WorkVerifiedAfter("last step")
	require.Nil(t, p.CrashedAtExit(), "a nonzero status is no crash")
}

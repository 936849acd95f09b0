// Package datpeer is the wire side of the datpeer protocol, the one
// documented at the top of testdata/datpeer/datpeer.c: its numbers, its
// private data, its data pattern, and the build of the C program. It
// imports nothing of udat, so that udat's own tests can use it too; the Go
// peer is package gopeer.
package datpeer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The protocol's numbers, as datpeer.c has them.
const (
	Region     = 4096
	BufSize    = 3 * Region // regions [0] messages, [1] RDMA target, [2] RDMA source
	MsgSize    = 64
	RecvSlot   = 256
	NumRecv    = 8
	NumMsgs    = 4 // messages each side receives
	NumMsgsExt = 6 // messages each side receives with -x
	TripletLen = 16
	TagClient  = "udapl-c"
	TagServer  = "udapl-s"
	TagReject  = "reject-me"
	RejectByC  = "rejected-by-c"
	RejectByGo = "rejected-by-go"
	RoleServer = 'S'
	RoleClient = 'C'
	ImmedBase  = 0xC0DE0000 // | role: the X phase's RDMA write with immediate data
	MsgImmed   = 0x5E4D0000 // | role: the Go side's X phase messages
	AtomicSlot = 128        // offset in region [0] of the atomics' result

	Wait     = 20 * time.Second  // one Go wait (the C program waits 10 s)
	CRWait   = 60 * time.Second  // the Go server's wait for the client's request
	RunLimit = 120 * time.Second // a whole run of the C program
)

// Triplet is what each side's private data starts with: its buffer.
type Triplet struct {
	VA     uint64
	Len    uint32
	RMRCtx uint32
}

// PrivateData is t followed by tag, little-endian as datpeer.c writes it.
func PrivateData(t Triplet, tag string) []byte {
	pd := make([]byte, TripletLen, TripletLen+len(tag))
	binary.LittleEndian.PutUint64(pd[0:], t.VA)
	binary.LittleEndian.PutUint32(pd[8:], t.Len)
	binary.LittleEndian.PutUint32(pd[12:], t.RMRCtx)
	return append(pd, tag...)
}

// ParsePrivateData reads the peer's triplet and the tag after it: the bytes
// up to the first NUL, the rest zero (the transport pads the field). A
// triplet of another buffer size, or a zero address, is an error.
func ParsePrivateData(pd []byte) (Triplet, string, error) {
	if len(pd) < TripletLen {
		return Triplet{}, "", fmt.Errorf("%d bytes of private data, want a triplet", len(pd))
	}
	t := Triplet{
		VA:     binary.LittleEndian.Uint64(pd[0:]),
		Len:    binary.LittleEndian.Uint32(pd[8:]),
		RMRCtx: binary.LittleEndian.Uint32(pd[12:]),
	}
	tag := CString(pd[TripletLen:])
	if t.Len != BufSize || t.VA == 0 {
		return t, tag, fmt.Errorf("peer va %#x len %d, want a nonzero va and len %d", t.VA, t.Len, BufSize)
	}
	if err := zeroPadding(pd, TripletLen+len(tag)); err != nil {
		return t, tag, err
	}
	return t, tag, nil
}

// ParseReject returns the words a reject's private data carries, the
// rejecting peer's (RejectByC or RejectByGo, the cma provider's header
// stripped), checking that the rest is zero padding.
func ParseReject(pd []byte) (string, error) {
	for _, words := range []string{RejectByC, RejectByGo} {
		if bytes.HasPrefix(pd, []byte(words)) {
			return words, zeroPadding(pd, len(words))
		}
	}
	return "", fmt.Errorf("the reject's private data %q starts with neither %q nor %q", pd, RejectByC, RejectByGo)
}

// zeroPadding checks that pd is zero from byte off on.
func zeroPadding(pd []byte, off int) error {
	for i, b := range pd[off:] {
		if b != 0 {
			return fmt.Errorf("private data byte %d after %q is %#x", off+i, pd[:off], b)
		}
	}
	return nil
}

// Pattern is byte i of role's RDMA source region.
func Pattern(role byte, i int) byte { return byte(i*7 + int(role)) }

// Fill fills b with role's pattern.
func Fill(b []byte, role byte) {
	for i := range b {
		b[i] = Pattern(role, i)
	}
}

// CString returns b up to its first NUL.
func CString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Dir is testdata/datpeer as a test of a package one directory below the
// module root finds it (go test runs in the package's directory).
func Dir() (string, error) { return filepath.Abs(filepath.Join("..", "testdata", "datpeer")) }

// Command is a run of bin, the built C program, with args: killed after
// RunLimit or when ctx ends, its libdat2 pointed at Dir's dat.conf by
// DAT_OVERRIDE (udat.DatConfEnv). cancel releases the time limit.
func Command(ctx context.Context, bin string, args ...string) (*exec.Cmd, context.CancelFunc, error) {
	dir, err := Dir()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, RunLimit)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DAT_OVERRIDE="+filepath.Join(dir, "dat.conf"))
	cmd.WaitDelay = 5 * time.Second
	return cmd, cancel, nil
}

// Build compiles datpeer.c into bin. Its error says what a build needs:
// a C compiler and libdat2 with <dat2/udat.h>.
func Build(ctx context.Context, bin string) error {
	dir, err := Dir()
	if err != nil {
		return err
	}
	src := filepath.Join(dir, "datpeer.c")
	if out, err := exec.CommandContext(ctx, "cc", "-O2", "-Wall", "-o", bin, src, "-ldat2").CombinedOutput(); err != nil {
		return fmt.Errorf("building the C peer (cc -O2 -Wall -o %s %s -ldat2; it needs cc and libdat2 with <dat2/udat.h>, "+
			"Debian: gcc, libdapl-dev): %w\n%s", bin, src, err, out)
	}
	return nil
}

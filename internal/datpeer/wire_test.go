package datpeer

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bytes datpeer.c puts on the wire for a buffer at 0x1122334455667788
// with rmr_context 0xAABBCCDD: little-endian, then the tag.
func TestPrivateDataLayout(t *testing.T) {
	pd := PrivateData(Triplet{VA: 0x1122334455667788, Len: BufSize, RMRCtx: 0xAABBCCDD}, TagClient)
	want := append([]byte{
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		0x00, 0x30, 0x00, 0x00, // 12288
		0xDD, 0xCC, 0xBB, 0xAA,
	}, "udapl-c"...)
	require.Equal(t, want, pd)
}

// The transport pads private data with zeros; the parse reads through it.
func TestParsePrivateData(t *testing.T) {
	in := Triplet{VA: 0xdead0000, Len: BufSize, RMRCtx: 7}
	pd := append(PrivateData(in, TagServer), make([]byte, 40)...)
	got, tag, err := ParsePrivateData(pd)
	require.NoError(t, err)
	assert.Equal(t, in, got)
	assert.Equal(t, TagServer, tag)
}

func TestParsePrivateDataRefuses(t *testing.T) {
	good := PrivateData(Triplet{VA: 0x1000, Len: BufSize, RMRCtx: 1}, TagClient)
	for name, pd := range map[string][]byte{
		"short":         good[:TripletLen-1],
		"other size":    PrivateData(Triplet{VA: 0x1000, Len: BufSize - 1, RMRCtx: 1}, TagClient),
		"zero address":  PrivateData(Triplet{Len: BufSize, RMRCtx: 1}, TagClient),
		"after the tag": append(append([]byte{}, good...), 0, 'x'),
	} {
		_, _, err := ParsePrivateData(pd)
		assert.Error(t, err, name)
	}
}

func TestPatternAndCString(t *testing.T) {
	b := make([]byte, 40)
	Fill(b, RoleServer)
	assert.Equal(t, byte('S'), b[0])
	assert.Equal(t, byte((39*7+'S')%256), b[39], "the pattern wraps at a byte")
	assert.NotEqual(t, Pattern(RoleClient, 5), Pattern(RoleServer, 5), "the roles' patterns differ")

	assert.Equal(t, "abc", CString([]byte("abc\x00def")))
	assert.Equal(t, "abc", CString([]byte("abc")))
	assert.Empty(t, CString([]byte{0, 'a'}))
}

// The C side's files are where Dir says, for a package one level down, and
// Command's libdat2 reads that dat.conf.
func TestDir(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "udat"))
	dir, err := Dir()
	require.NoError(t, err)
	for _, f := range []string{"datpeer.c", "dat.conf"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	cmd, cancel, err := Command(t.Context(), "datpeer", "-q")
	require.NoError(t, err)
	defer cancel()
	assert.Equal(t, []string{"datpeer", "-q"}, cmd.Args)
	assert.Contains(t, cmd.Env, "DAT_OVERRIDE="+filepath.Join(dir, "dat.conf"))
}

package cverbs

// Access is a set of memory access rights (IBV_ACCESS_* values).
type Access uint32

// Access rights.
const (
	AccessLocalWrite   Access = 1
	AccessRemoteWrite  Access = 2
	AccessRemoteRead   Access = 4
	AccessRemoteAtomic Access = 8
	AccessMWBind       Access = 16
)

// SGE returns a scatter/gather element covering the MR from offset off for
// length bytes. It does not check the bounds.
func (mr *MR) SGE(off, length int) SGE {
	return SGE{Addr: uint64(mr.Addr) + uint64(off), Length: uint32(length), LKey: mr.LKey}
}

// PD is a protection domain.
type PD struct{ cgoPD }

// MR is a registered memory region.
type MR struct {
	LKey uint32
	RKey uint32
	Addr uintptr
	Len  int

	cgoMR
}

// MW is a type 1 memory window.
type MW struct {
	// RKey is the window's current rkey; BindMW updates it.
	RKey uint32

	cgoMW
}

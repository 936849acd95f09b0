//go:build linux && cgo

package udat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// dat_ia_query reports what the C reference (OFA DAPL 2.x, cma) reports for
// the same device: its ibv_device_attr limits and the port's max_msg_sz.
func TestIAQueryMatchesC(t *testing.T) {
	ia := openIA(t)
	a, pa, err := ia.Query()
	require.NoError(t, err)
	d, err := ia.vctx.QueryDevice()
	require.NoError(t, err)
	port, err := ia.vctx.QueryPort(ia.port)
	require.NoError(t, err)

	require.Equal(t, d.HWVer, a.HardwareVersionMajor, "C: hardware_version_major = hw_ver")
	require.Zero(t, a.HardwareVersionMinor, "C leaves hardware_version_minor 0")
	require.Equal(t, d.VendorID, a.VendorID)
	if deviceName(t) == "rxe0" {
		require.Equal(t, uint32(0xffffff), a.VendorID, "Soft-RoCE's vendor id")
		require.Zero(t, a.HardwareVersionMajor, "Soft-RoCE's hw_ver (C reports 0 too)")
	}
	require.Equal(t, d.MaxSGE, a.MaxIOVSegmentsPerRDMAWrite)
	require.Equal(t, min(d.MaxSGE, d.MaxSGERd), a.MaxIOVSegmentsPerRDMARead)
	require.Positive(t, a.MaxIOVSegmentsPerRDMARead)
	require.Equal(t, d.MaxMRSize, a.MaxLMRVirtualAddress)
	require.Equal(t, d.MaxMRSize, a.MaxRMRTargetAddress)
	require.NotZero(t, port.MaxMsgSize)
	require.Equal(t, port.MaxMsgSize, a.MaxMessageSize, "max_message_size is the port's max_msg_sz")
	require.Equal(t, port.MaxMsgSize, a.MaxRDMASize, "max_rdma_size is the port's max_msg_sz")

	require.Equal(t, MemTypeVirtual, pa.LMRMemTypesSupported)
	require.Equal(t, IOVConsumer, pa.IOVOwnershipOnReturn)
	require.Equal(t, QoSBestEffort, pa.DATQoSSupported)
	require.Equal(t, PSPCreatesEPIfAsked, pa.EPCreator)
	require.Equal(t, PZUnique, pa.PZSupport)
	require.Equal(t, 256, pa.OptimalBufferAlignment)
	require.Equal(t, OptimalAlignment, pa.OptimalBufferAlignment)
	require.True(t, pa.EPRecvInfoSupported)
	require.Equal(t, d.MaxSRQ > 0, pa.SRQInfoSupported)

	// The merging matrix says what CreateEVD accepts.
	for i, fi := range EVDStreamIndex {
		for j, fj := range EVDStreamIndex {
			e, err := ia.CreateEVD(4, fi|fj)
			require.Equalf(t, pa.EVDStreamMergingSupported[i][j], err == nil, "flags %#x|%#x: %v", fi, fj, err)
			if err == nil {
				require.NoError(t, e.Free())
			} else {
				requireCode(t, err, InvalidParameter|InvalidArg4)
			}
		}
	}
	require.True(t, pa.EVDStreamMergingSupported[2][3], "DTO and connection events may share an EVD")
	require.False(t, pa.EVDStreamMergingSupported[5][5])
}

// dat_ep_query reports what the queue pair really has, the RDMA read depths
// negotiated at connect, and the active side's rdma_cm source port.
func TestEPQueryReportsRealValues(t *testing.T) {
	ca := DefaultEPAttr()
	ca.MaxRequestIOV, ca.MaxRDMAReadIOV, ca.MaxRDMAWriteIOV = 1, 1, 3
	ca.MaxRDMAReadIn, ca.MaxRDMAReadOut = 3, 2
	sa := DefaultEPAttr()
	sa.MaxRDMAReadIn, sa.MaxRDMAReadOut = 1, 4
	ia := openIA(t)
	pz := mustPZ(t, ia)
	p := &pair{ia: ia, pz: pz}
	p.client = newSide(t, ia, pz, pairOpts{}, &ca, nil)
	p.server = newSide(t, ia, pz, pairOpts{}, &sa, nil)

	q, err := p.client.ep.Query()
	require.NoError(t, err)
	cp := p.client.ep.qp.Cap()
	require.Equal(t, cp.MaxSendSGE, q.Attr.MaxRequestIOV, "what the send queue really takes")
	require.GreaterOrEqual(t, q.Attr.MaxRequestIOV, 3, "what the largest IOV needs, or more")
	require.Equal(t, cp.MaxSendSGE, q.Attr.MaxRDMAWriteIOV)
	require.Equal(t, cp.MaxRecvWR, q.Attr.MaxRecvDTOs)
	require.Equal(t, cp.MaxSendWR-1, q.Attr.MaxRequestDTOs)
	require.Equal(t, cp.MaxRecvSGE, q.Attr.MaxRecvIOV)
	require.Equal(t, 3, q.Attr.MaxRDMAReadIn, "before connecting: as asked")
	require.Zero(t, q.LocalPortQual, "no connection yet")
	// The EP takes what it reports.
	lmr := p.client.lmr
	require.NoError(t, p.client.ep.PostRecv([]LMRTriplet{lmr.Triplet(0, 8), lmr.Triplet(8, 8), lmr.Triplet(16, 8), lmr.Triplet(24, 8)}[:q.Attr.MaxRecvIOV], 1, CompletionDefault))

	p.connect(t)
	q, err = p.client.ep.Query()
	require.NoError(t, err)
	require.NotZero(t, q.LocalPortQual, "the active side reports its source port")
	require.Equal(t, PortQual(p.qual), q.RemotePortQual)
	// The server asked to take one read. Soft-iWARP's passive side takes
	// as many as the active side issues (siw_accept raises its IRD to the
	// client's ORD, 2): the depths are what the connection got.
	serverIn := 1
	if onSIW(ia) {
		serverIn = 2
	}
	require.Equal(t, serverIn, q.Attr.MaxRDMAReadOut, "the server takes one read (siw: two)")
	require.Equal(t, 3, q.Attr.MaxRDMAReadIn, "the server issues up to 4")
	sq, err := p.server.ep.Query()
	require.NoError(t, err)
	require.Equal(t, PortQual(p.qual), sq.LocalPortQual)
	require.Equal(t, q.LocalPortQual, sq.RemotePortQual, "both sides see the same port")
	require.Equal(t, serverIn, sq.Attr.MaxRDMAReadIn)
	require.Equal(t, 3, sq.Attr.MaxRDMAReadOut)

	disconnectPair(t, p)
	ev := waitDTO(t, p.client.recv)
	require.Equal(t, DTOErrFlushed, ev.Status)
	require.NoError(t, p.client.ep.Reset())
	q, err = p.client.ep.Query()
	require.NoError(t, err)
	require.Equal(t, 3, q.Attr.MaxRDMAReadIn, "reset: as asked again")
	require.Equal(t, 2, q.Attr.MaxRDMAReadOut)
	require.Zero(t, q.LocalPortQual)
}

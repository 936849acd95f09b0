//go:build linux && cgo

package udat

// Tests of what some devices lack. Such a test first checks that udat
// refuses the feature as documented (the error, and the provider attribute
// that says so where DAT has one), then ends as not applicable: make test
// counts it apart from passes and plain skips (internal/testsummary).

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// notApplicable ends a test whose feature the device lacks.
func notApplicable(t testing.TB, ia *IA, what string) {
	t.Helper()
	t.Skipf("not applicable: %s has no %s", ia.dev, what)
}

// providerAttr returns the provider attribute name of ia.
func providerAttr(t testing.TB, ia *IA, name string) string {
	t.Helper()
	_, pa, err := ia.Query()
	require.NoError(t, err)
	for _, a := range pa.ProviderSpecificAttr {
		if a.Name == name {
			return a.Value
		}
	}
	require.Failf(t, "no provider attribute", "%s", name)
	return ""
}

// needUD ends the test on a device without UD, where a UD EP is refused.
func needUD(t testing.TB, ia *IA, pz *PZ) {
	t.Helper()
	attr := DefaultEPAttr()
	attr.ServiceType = ServiceTypeIBUD
	ep, err := ia.CreateEP(pz, nil, nil, nil, &attr)
	if err == nil {
		require.NoError(t, ep.Free())
		return
	}
	requireCode(t, err, ModelNotSupported)
	notApplicable(t, ia, "UD")
}

// needImmediate ends the test on a device without immediate data, which
// says so in DAT_IB_IMMED_DATA and refuses a write with immediate data.
func needImmediate(t testing.TB, s side) {
	t.Helper()
	ia := s.ep.ia
	if providerAttr(t, ia, "DAT_IB_IMMED_DATA") == "TRUE" {
		return
	}
	requireType(t, s.ep.PostRDMAWriteImmed(nil, 0, s.lmr.RMRTriplet(0, 8), 1, CompletionDefault), ModelNotSupported)
	requireType(t, s.ep.PostSendImmed(nil, 0, 1, CompletionDefault), ModelNotSupported)
	notApplicable(t, ia, "immediate data")
}

// needAtomics ends the test on a device without atomics, which says so in
// DAT_IB_FETCH_AND_ADD and DAT_IB_CMP_AND_SWAP and refuses them.
func needAtomics(t testing.TB, s side) {
	t.Helper()
	ia := s.ep.ia
	fa, cs := providerAttr(t, ia, "DAT_IB_FETCH_AND_ADD"), providerAttr(t, ia, "DAT_IB_CMP_AND_SWAP")
	require.Equal(t, fa, cs)
	if fa == "TRUE" {
		return
	}
	requireType(t, s.ep.PostFetchAndAdd(1, s.lmr.Triplet(0, 8), 0, s.lmr.RMRTriplet(0, 8), CompletionDefault), ModelNotSupported)
	requireType(t, s.ep.PostCmpAndSwap(0, 1, s.lmr.Triplet(0, 8), 0, s.lmr.RMRTriplet(0, 8), CompletionDefault), ModelNotSupported)
	notApplicable(t, ia, "atomics")
}

// needReadIOV ends the test on a device whose RDMA reads write fewer than
// n segments (soft-iWARP: 1), where ep refuses such a read.
func needReadIOV(t testing.TB, s side, n int) {
	t.Helper()
	q, err := s.ep.Query()
	require.NoError(t, err)
	if q.Attr.MaxRDMAReadIOV >= n {
		return
	}
	iov := make([]LMRTriplet, n)
	for i := range iov {
		iov[i] = s.lmr.Triplet(i*8, 8)
	}
	requireCode(t, s.ep.PostRDMARead(iov, 0, s.lmr.RMRTriplet(0, 8), CompletionDefault), InvalidParameter|InvalidArg2)
	notApplicable(t, s.ep.ia, fmt.Sprintf("RDMA read into %d segments", n))
}

// needRNR ends the test on iWARP, which has no receiver-not-ready retry:
// a send with no receive posted at the peer does not wait there, it
// completes at the sender (and breaks the connection at the peer).
func needRNR(t testing.TB, ia *IA) {
	t.Helper()
	if !ia.ibTransport() {
		notApplicable(t, ia, "receiver-not-ready retry: a send does not wait for a receive")
	}
}

// needIBRetransmit ends the test on iWARP, whose TCP retransmits and
// reports a dead peer by itself: its QPs have no ACK timeout or retry
// count, and the watchdog watches none of them.
func needIBRetransmit(t testing.TB, ep *EP) {
	t.Helper()
	if ep.ia.ibTransport() {
		return
	}
	require.Equal(t, max(ep.attr.StallTimeout, 0), time.Duration(ep.watch.budget.Load()),
		"an iWARP EP is watched only for its StallTimeout")
	notApplicable(t, ep.ia, "IB retransmission (ACK timeout, retry count): TCP retransmits")
}

// needSolicitedNotify ends the test on a device that cannot hold back a
// receive until a solicited one: there every receive wakes the waiter, as
// TestSolicitedWaitHoldsBackUnsolicitedReceives checks.
func needSolicitedNotify(t testing.TB, ia *IA) {
	t.Helper()
	if !ia.solicitedNotifies() {
		notApplicable(t, ia, "solicited-only completion notification")
	}
}

// onSIW reports whether ia's device is soft-iWARP.
func onSIW(ia *IA) bool { return ia.devAttr.VendorID == siwVendorID }

// siwRefuses ends the test on soft-iWARP, where err must be the error udat
// documents for what it lacks (what), of code; elsewhere it returns and
// the test checks err.
func siwRefuses(t testing.TB, ia *IA, err error, code Return, what string) {
	t.Helper()
	if !onSIW(ia) {
		return
	}
	requireCode(t, err, code, what)
	notApplicable(t, ia, what)
}

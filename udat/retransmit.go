package udat

import (
	"os"
	"strconv"
	"time"
)

// How fast a dead peer is noticed. An RC connection resends a packet the
// peer has not acknowledged after the local ACK timeout, and gives up after
// RetryCount resends in a row without progress: the DTO completes with
// DTOStatusTransportError, the others are flushed, and the connection EVD
// gets EventConnectionBroken. So a peer that dies, or a link that stays
// down, is reported about
//
//	(RetryCount + 1) * 4.096 us * 2^ACKTimeout
//
// after the last acknowledgement: with the defaults (6 and 14) 7 * 67 ms,
// about 0.5 s. The same timeout decides what a lost packet costs: the last
// packet of a burst is resent only when the timer fires.
//
// Why these defaults: C DAPL's cma provider connects with retry count 7 and
// the ACK timeout rdma_cm derives from the route (on RoCE 2^19 * 4.096 us,
// 2.1 s). Soft-RoCE treats a retry count of 7 as "retry forever" (on other
// adapters only the RNR retry count has that meaning), so a C program on rxe
// never learns that its peer died; and one lost packet costs 2.1 s. 14 is
// perftest's ACK timeout.
//
// On Soft-RoCE a send waiting for the peer to post a receive spends the
// budget too (rxe's retransmit timer runs on through "receiver not ready"
// answers), so it fails with DTOErrTransport after about DeadPeerTimeout;
// a real adapter waits for the receive (RNR retry count 7). A program
// whose peer posts receives late sets RetryCount 7 there, as C does.
//
// Like C DAPL's ucm and scm providers, the environment variables
// DAPL_ACK_RETRY and DAPL_ACK_TIMER replace the defaults (the cma provider
// of C DAPL ignores them).
const (
	// DefaultRetryCount is the RetryCount of an EP that asks for 0.
	DefaultRetryCount = 6
	// DefaultACKTimeout is the ACKTimeout of an EP that asks for 0.
	DefaultACKTimeout = 14

	maxRetryCount = 7
	maxACKTimeout = 31
)

// ACKTimeoutDuration returns the time an ACK timeout exponent stands for,
// 4.096 us * 2^exp.
func ACKTimeoutDuration(exp int) time.Duration {
	if exp <= 0 || exp > maxACKTimeout {
		return 0
	}
	return time.Duration(4096<<exp) * time.Nanosecond
}

// DeadPeerTimeout returns about how long after its last acknowledgement
// from the peer an EP with these attributes reports a dead peer or a broken
// link: (RetryCount + 1) ACK timeouts, each attribute 0 counting as its
// default. (On Soft-RoCE a RetryCount of 7 means never; this function does
// not know the device.)
func (a EPAttr) DeadPeerTimeout() time.Duration {
	a.fillRetransmit()
	return time.Duration(a.RetryCount+1) * ACKTimeoutDuration(a.ACKTimeout)
}

// fillRetransmit puts the defaults (or the environment's) into the fields
// left 0.
func (a *EPAttr) fillRetransmit() {
	if a.RetryCount == 0 {
		a.RetryCount = envInt("DAPL_ACK_RETRY", 1, maxRetryCount, DefaultRetryCount)
	}
	if a.ACKTimeout == 0 {
		a.ACKTimeout = envInt("DAPL_ACK_TIMER", 1, maxACKTimeout, DefaultACKTimeout)
	}
}

// validRetransmit reports whether the fields are in range (0 = default).
func (a *EPAttr) validRetransmit() bool {
	return a.RetryCount >= 0 && a.RetryCount <= maxRetryCount &&
		a.ACKTimeout >= 0 && a.ACKTimeout <= maxACKTimeout
}

// envInt reads an integer in [lo, hi] from the environment variable name;
// def when it is unset or out of range.
func envInt(name string, lo, hi, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def // without Atoi's error, made for nothing on every EP
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return def
	}
	return v
}

// Package crosshost holds the cross-host device tests of udapl: connections
// between two Soft-RoCE hosts joined by a link that the tests can cut, slow
// down, freeze or kill. It has no API; everything is in its tests.
//
// Run by `make test-2host` (part of `make test`) in the pair of VMs of
// scripts/vmpair.sh: the test binary runs its tests in VM A (192.0.2.1), and
// the same binary runs in VM B (192.0.2.2) as a peer agent. A test asks the
// agent to start a named role ("a datpeer-protocol server on port P", "a C
// datpeer client", "a stream sink or source"), waits until the role is ready, talks to
// it over the link, and then waits for the role's result. Requests, answers
// and results are files in the directory both VMs share ($UDAPL_PAIR_DIR, in
// the host's /tmp), so they survive any fault on the link under test.
// Faults on the host side (kill B, freeze B, take B's link down) are
// requests that scripts/vmpair.sh carries out.
//
// In one VM (scripts/vmexec) the roles run in goroutines of the test process
// over the loopback of rxe0, so every test that needs no host-side fault also
// runs there; the fault tests skip with the reason, except under
// UDAPL_PAIR_REQUIRED=1, which `make test-2host` sets and under which a test
// that needs the pair fails without it.
package crosshost

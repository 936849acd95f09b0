# udapl: uDAPL (DAT) for Go over rdma-core.
#
#   make demo    run udattest (server and client) over Soft-RoCE inside the test VM
#                (make demo RDMA=siw: over soft-iWARP siw0 in the VM)
#   make test    gofmt, go vet and staticcheck in every build configuration (vet),
#                host unit tests (also of the build without cgo: build-other),
#                the instruction guard of the data path (guard), then every
#                test inside the Soft-RoCE VM, the race detector's run on
#                Soft-RoCE and soft-iWARP (test-race), the cross-host and fault tests
#                in a pair of VMs on Soft-RoCE (test-2host), on soft-iWARP
#                (test-2host-siw) and on Soft-RoCE under Linux 6.12
#                (test-2host-612), the device tests under Linux
#                6.12 (test-612), on soft-iWARP (test-siw) and on soft-iWARP
#                under 6.12 (test-siw-612), and a table of the runs
#   make soak    the soak of issue 27 in the pair of VMs: a mixed load for SOAK
#                (default 10m; SOAK=60s for a short run) under a schedule of
#                faults, then its accounting table (not part of make test)
#   make bench   perftest, C DAPL and udapl side by side in two VMs on rxe0 and
#                the deterministic one again on siw0; writes BENCHMARKS.md
#                (make bench-instr first, then in each VM the rates, and in the
#                rxe VMs the connection setup rate of C's dtestcm and its Go
#                port, both roles)
#   make bench-instr user-space instructions per operation of each tool, counted
#                with callgrind in the VM; the first section of BENCHMARKS.md
#   make guard   user-space instructions per DTO of udat's post and completion over
#                a fake device, counted with callgrind on the host, against the
#                budgets of udat/testdata/instr-budget.txt (part of make test)
#   make fuzz    each fuzz target for FUZZTIME (default 60s), device ones in the VM
#   make test-siw the udat, cverbs and udattest device tests in the VM on soft-iWARP (siw0)
#                instead of rxe0, with a table of the results (part of
#                make test)
#   make test-612 the udat, cverbs and udattest device tests in the VM on Soft-RoCE under
#                Linux 6.12 instead of 6.1, with a table of the results (part
#                of make test); test-siw-612 the udat and cverbs device tests
#                on soft-iWARP under 6.12
#
# Both install what they need first (Debian packages; root and apt-get).

GO      ?= go
VMEXEC  := $(CURDIR)/scripts/vmexec
PAIREXEC := $(CURDIR)/scripts/vmpairexec
BIN     := $(CURDIR)/bin
PKGS    := ./...

.PHONY: all deps build build-other vet test soak test-host guard test-vm test-race test-2host test-2host-siw test-siw test-612 test-siw-612 test-2host-612 test-2host-siw-612 test-summary demo bench bench-instr clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build $(PKGS)

# vet: gofmt, then go vet and staticcheck in each build configuration, one
# per set of build tags the project has: linux && cgo, with and without race
# and with udapl_fakedevice (the instruction guard's); !cgo; !linux on unix;
# !unix. staticcheck merges the configurations, so code
# that one of them does not use is not reported as unused.
VET_CONFIGS     := cgo race fake nocgo darwin windows
vet_flags_race  := -race
vet_flags_fake  := -tags udapl_fakedevice
vet_env_nocgo   := CGO_ENABLED=0
vet_env_darwin  := GOOS=darwin GOARCH=arm64
vet_env_windows := GOOS=windows

.PHONY: gofmt-check staticcheck $(addprefix vet-,$(VET_CONFIGS))

vet: gofmt-check $(addprefix vet-,$(VET_CONFIGS)) staticcheck

gofmt-check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

$(addprefix vet-,$(VET_CONFIGS)): vet-%: deps
	$(vet_env_$*) $(GO) vet $(vet_flags_$*) $(PKGS)

staticcheck: deps
	printf '%s\n' $(foreach c,$(VET_CONFIGS),'$(c): $(vet_env_$(c)) $(vet_flags_$(c))') | $(BIN)/staticcheck -matrix $(PKGS)

# The build without RDMA support (cverbs_other.go): without cgo, and off
# Linux (cgo is off when cross-compiling), everything builds (make vet vets
# it), and the host tests of that build pass (OpenIA:
# DAT_MODEL_NOT_SUPPORTED).
build-other:
	CGO_ENABLED=0 $(GO) build $(PKGS)
	GOOS=windows $(GO) build $(PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 ./udat/ ./cverbs/

# Unit tests that need no device, on this host. Device tests skip here, and
# only here: UDAPL_HOST_ONLY=1 marks the run as host-only. Then udat's tests
# over cverbs.FakeDevice (the udapl_fakedevice tag: the guard's rounds
# without callgrind, a provider that refuses posts).
test-host: deps
	UDAPL_HOST_ONLY=1 $(GO) test -count=1 $(PKGS)
	UDAPL_HOST_ONLY=1 $(GO) test -count=1 -tags udapl_fakedevice -run 'InstrGuard|Refused' ./udat/

# The instruction guard (scripts/instr-guard.sh): no device, no VM.
guard: deps
	scripts/instr-guard.sh

# A device run whose guest kernel crashed under it (Debian's 6.12 oopsed in
# siw_destroy_listen once) runs once more in a fresh VM and says so
# (scripts/vmtest.sh): a kernel crash is no test's result.
test-vm test-race test-siw test-612 test-siw-612: export UDAPL_VM_PANIC_RETRY := 1

# Every test, device tests included, inside the VM (one VM per test binary),
# with the table of test-summary (the crosshost tests skip here: they need
# the pair of test-2host).
test-vm: deps
	-$(GO) test -count=1 -p 1 -timeout 20m -json -exec $(VMEXEC) $(PKGS) > /tmp/udapl-test-vm.json
	$(GO) run ./internal/cmd/testsummary -failed-output rxe/6.1=/tmp/udapl-test-vm.json

# The race detector over the packages whose tests post concurrently, on
# Soft-RoCE and on soft-iWARP (whose flushes udat generates itself), under
# Linux 6.1 and 6.12 (whose Soft-RoCE completes from a work queue).
test-race: deps
	$(GO) test -count=1 -p 1 -race -timeout 30m -exec $(VMEXEC) ./cverbs/ ./udat/
	UDAPL_RDMA=siw $(GO) test -count=1 -p 1 -race -timeout 30m $(devargs_siw) -exec $(VMEXEC) ./cverbs/ ./udat/
	UDAPL_KERNEL=6.12 $(GO) test -count=1 -p 1 -race -timeout 30m -exec $(VMEXEC) ./cverbs/ ./udat/
	UDAPL_KERNEL=6.12 UDAPL_RDMA=siw $(GO) test -count=1 -p 1 -race -timeout 30m $(devargs_siw) -exec $(VMEXEC) ./cverbs/ ./udat/

# The cross-host tests (./crosshost) in the pair of VMs of scripts/vmpair.sh:
# A runs the tests, B the peer agent; the host carries out the faults. No
# test may skip there for want of the pair.
test-2host: deps
	UDAPL_PAIR_REQUIRED=1 $(GO) test -count=1 -p 1 -timeout 30m -v -exec $(PAIREXEC) ./crosshost/

# The same on soft-iWARP (siw0 in both VMs): a test that needs what iWARP
# lacks says "not applicable" and why.
test-2host-siw: deps
	UDAPL_RDMA=siw UDAPL_PAIR_REQUIRED=1 $(GO) test -count=1 -p 1 -timeout 30m -v -exec $(PAIREXEC) ./crosshost/

# The soak (crosshost/soak_test.go, issue 27): a mixed load across the pair
# for SOAK while a schedule of faults runs (loss, link down, the peer process
# killed, the peer's rxe re-created), then the accounting table. make test
# runs it for 60 s (test-soak); SOAK=10m is the long run.
SOAK ?= 10m
soak: deps
	UDAPL_SOAK=$(SOAK) UDAPL_PAIR_REQUIRED=1 $(GO) test -count=1 -p 1 -timeout 60m -v -exec $(PAIREXEC) -run '^TestSoak$$' ./crosshost/

test-soak:
	$(MAKE) soak SOAK=60s

test: vet build-other test-host guard test-vm test-race test-2host test-2host-siw test-2host-612 test-2host-siw-612 test-soak test-612 test-siw test-siw-612 test-summary

# The table of every device run of make test, one row per run and package.
test-summary:
	$(GO) run ./internal/cmd/testsummary rxe/6.1=/tmp/udapl-test-vm.json rxe/6.12=/tmp/udapl-test-612.json \
		siw/6.1=/tmp/udapl-test-siw.json siw/6.12=/tmp/udapl-test-siw-612.json

# Device runs besides test-vm's (Soft-RoCE under Debian's Linux 6.1): the
# udat, cverbs and udattest tests on soft-iWARP (test-siw: the VM creates siw0 instead
# of rxe0; siw.ko is built once, see scripts/siw-module.sh) and on Soft-RoCE
# under Linux 6.12 (test-612: Debian's backport for bookworm, fetched once
# and cached beside 6.1's, see scripts/vmlib.sh), and on soft-iWARP under
# 6.12 (test-siw-612). Each prints what its
# failed tests printed, then the table of internal/testsummary: passed, not
# applicable (the device lacks the feature, and udat refuses it as
# documented), skipped and failed, per package. A plain skip fails the run.
# The whole go test -json output is in /tmp/udapl-test-RUN.json.
# The examples open rxe0, as the documentation does, and several use IB
# extensions that iWARP lacks: they run on Soft-RoCE (test-vm, test-612),
# not on soft-iWARP. udattest's end-to-end tests run in each.
devpkgs_siw      := ./udat/ ./cverbs/ ./cmd/udattest/
devpkgs_612      := $(devpkgs_siw)
devpkgs_siw-612  := $(devpkgs_siw)
devrun_siw       := UDAPL_RDMA=siw
devrun_612       := UDAPL_KERNEL=6.12
devrun_siw-612   := UDAPL_RDMA=siw UDAPL_KERNEL=6.12
devargs_siw      := -run '^(Test|Fuzz)'
devargs_siw-612  := $(devargs_siw)
devlabel_siw     := siw/6.1
devlabel_612     := rxe/6.12
devlabel_siw-612 := siw/6.12

test-siw test-612 test-siw-612: test-%: deps
	-$(devrun_$*) $(GO) test -count=1 -p 1 -timeout 30m $(devargs_$*) -json -exec $(VMEXEC) $(devpkgs_$*) > /tmp/udapl-test-$*.json
	$(GO) run ./internal/cmd/testsummary -skips-fail -failed-output $(devlabel_$*)=/tmp/udapl-test-$*.json

# The cross-host tests again under Linux 6.12, whose Soft-RoCE defers its
# requester and completer to a work queue. Debian's 6.12 guest kernel
# panics now and then under that work queue (a double fault in kmalloc
# under rxe_requester, once in 5 full runs), which no test of ours can
# pass: a run in which a guest kernel panicked runs once more in fresh VMs,
# and says so (UDAPL_PAIR_PANIC_RETRY, scripts/vmpair.sh).
test-2host-612: deps
	UDAPL_KERNEL=6.12 UDAPL_PAIR_PANIC_RETRY=1 UDAPL_PAIR_REQUIRED=1 $(GO) test -count=1 -p 1 -timeout 30m -v -exec $(PAIREXEC) ./crosshost/

# The same on soft-iWARP under 6.12.
test-2host-siw-612: deps
	UDAPL_KERNEL=6.12 UDAPL_RDMA=siw UDAPL_PAIR_PANIC_RETRY=1 UDAPL_PAIR_REQUIRED=1 $(GO) test -count=1 -p 1 -timeout 30m -v -exec $(PAIREXEC) ./crosshost/

# RDMA=siw: the demo in the VM over siw0 instead of rxe0.
demo: deps
	$(if $(RDMA),UDAPL_RDMA=$(RDMA) UDAPL_DEMO_VM=1 )scripts/demo.sh

# Settings in the header of scripts/bench.sh; BENCH_ROWS_DET="conn_rc_wait
# conn_rc_poll" BENCH_MODES=det BENCH_INSTR=0 BENCH_MD=/tmp/b.md: one part only,
# its report in /tmp/b.md; BENCH_MODES=siw: the soft-iWARP rows only.
bench: deps
	scripts/bench.sh

# Exact counts: each process under callgrind with 2,000 and 20,000
# operations, the difference per operation (scripts/bench-instr.sh,
# internal/instrcount). INSTR_ROWS=write_64 INSTR_TOOLS=udapl: one row, one
# tool, printed only.
bench-instr: deps
	scripts/bench-instr.sh

clean:
	rm -rf $(BIN)

# Fuzzing: `make fuzz` runs each fuzz target of package udat for FUZZTIME.
# The targets sit beside the code they fuzz, in udat/*_fuzz_test.go (the
# device ones' harness is udat/fuzz_fixture_test.go). The host ones, in the
# files without a build constraint (which build on every platform), run with
# go test -fuzz on this host, the device ones, in the files for linux && cgo,
# in one boot of the Soft-RoCE VM. (go test -fuzz -exec works, but in the VM the
# package's testdata/ and the host's GOCACHE are read-only, so a crasher would
# be lost: the instrumented test binary runs there from a copy of the
# package directory under FUZZDIR instead.) It prints each target's execs; a
# crasher is copied to udat/testdata/fuzz/TARGET/, where every later go test
# runs it, and fails the run. The seeds alone run in every make test.
FUZZTIME ?= 60s
FUZZDIR  ?= /tmp/udapl-fuzz
# Each new interesting input is minimized first, for up to this long, while
# the worker fuzzes nothing else (Go's default, 60s, can take most of a short
# run in the emulated VM).
FUZZMINIMIZETIME ?= 5s
# The targets, as their files declare them; a fuzz file with any other build
# constraint fails make fuzz rather than go unfuzzed.
fuzz_targets_in = $(shell sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' $(1))
FUZZ_FILES          := $(wildcard udat/*_fuzz_test.go)
FUZZ_HOST_FILES     := $(shell grep -L '^//go:build' $(FUZZ_FILES))
FUZZ_DEVICE_FILES   := $(shell grep -l '^//go:build linux && cgo$$' $(FUZZ_FILES))
FUZZ_OTHER_FILES    := $(filter-out $(FUZZ_HOST_FILES) $(FUZZ_DEVICE_FILES),$(FUZZ_FILES))
FUZZ_HOST_TARGETS   := $(call fuzz_targets_in,$(FUZZ_HOST_FILES))
FUZZ_DEVICE_TARGETS := $(call fuzz_targets_in,$(FUZZ_DEVICE_FILES))

.PHONY: fuzz
fuzz: SHELL := /bin/bash
fuzz: deps
	$(if $(FUZZ_OTHER_FILES),$(error make fuzz: neither host nor device fuzz files: $(FUZZ_OTHER_FILES)))
	@set -uo pipefail; \
	case "$(FUZZDIR)" in /tmp/*) ;; *) echo "FUZZDIR must be under /tmp (the VM writes there)"; exit 2;; esac; \
	rm -rf $(FUZZDIR)/work $(FUZZDIR)/log; mkdir -p $(FUZZDIR)/work/udat $(FUZZDIR)/log $(FUZZDIR)/cache; \
	find udat/testdata/fuzz -type f 2>/dev/null | sort >$(FUZZDIR)/log/crashers.before; \
	for t in $(FUZZ_HOST_TARGETS); do \
		echo "== $$t (host, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./udat/ 2>&1 | \
			tee $(FUZZDIR)/log/$$t.log; \
		echo $$? >$(FUZZDIR)/log/$$t.rc; \
	done; \
	echo "== building the instrumented test binary for the VM"; \
	$(GO) test -c -fuzz=. -o $(FUZZDIR)/udat.test ./udat/ || exit 1; \
	if [ -d udat/testdata/fuzz ]; then mkdir -p $(FUZZDIR)/work/udat/testdata && cp -r udat/testdata/fuzz $(FUZZDIR)/work/udat/testdata/; fi; \
	ln -sfn $(CURDIR)/testdata $(FUZZDIR)/work/testdata; \
	(cd $(FUZZDIR)/work/udat && $(VMEXEC) bash -c ' \
		bin=$$1 time=$$2 mintime=$$3 cache=$$4 log=$$5; shift 5; \
		for t in "$$@"; do \
			echo "== $$t (VM, $$time)"; \
			"$$bin" -test.run="^$$" -test.fuzz="^$$t\$$" -test.fuzztime="$$time" -test.fuzzminimizetime="$$mintime" \
				-test.fuzzcachedir="$$cache" -test.parallel=1 2>&1 | tee "$$log/$$t.log"; \
			echo $${PIPESTATUS[0]} >"$$log/$$t.rc"; \
		done' fuzz $(FUZZDIR)/udat.test $(FUZZTIME) $(FUZZMINIMIZETIME) $(FUZZDIR)/cache $(FUZZDIR)/log \
		$(FUZZ_DEVICE_TARGETS)); \
	for f in $$(cd $(FUZZDIR)/work/udat && find testdata/fuzz -type f 2>/dev/null); do \
		[ -e udat/$$f ] || { mkdir -p udat/$$(dirname $$f) && cp $(FUZZDIR)/work/udat/$$f udat/$$f; }; \
	done; \
	find udat/testdata/fuzz -type f 2>/dev/null | sort | comm -13 $(FUZZDIR)/log/crashers.before - >$(FUZZDIR)/log/crashers.new; \
	echo "== fuzz summary (FUZZTIME=$(FUZZTIME); logs in $(FUZZDIR)/log)"; \
	fail=0; \
	for t in $(FUZZ_HOST_TARGETS) $(FUZZ_DEVICE_TARGETS); do \
		rc=$$(cat $(FUZZDIR)/log/$$t.rc 2>/dev/null || echo 1); \
		execs=$$(grep -o 'execs: [0-9]*' $(FUZZDIR)/log/$$t.log 2>/dev/null | tail -n1 | tr -dc 0-9); \
		crash=$$(grep "/$$t/" $(FUZZDIR)/log/crashers.new); \
		if [ -n "$$crash" ]; then res="FAIL, crasher $$crash"; fail=1; \
		elif [ "$$rc" = 0 ]; then res=ok; \
		elif [ "$$(grep -c -- '--- FAIL' $(FUZZDIR)/log/$$t.log)" = 1 ] && \
			[ "$$(grep -A1 -- "^--- FAIL: $$t (" $(FUZZDIR)/log/$$t.log | tail -n1)" = "    context deadline exceeded" ]; then \
			res="ok (spurious 'context deadline exceeded' at the end: go.dev/issue/75804)"; \
		else res="FAIL (exit $$rc)"; fail=1; fi; \
		printf '%-20s %10s execs  %s\n' $$t "$${execs:-0}" "$$res"; \
	done; \
	for f in $$(cat $(FUZZDIR)/log/crashers.new); do echo "-- $$f:"; cat $$f; echo; done; \
	exit $$fail

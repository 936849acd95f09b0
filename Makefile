# udapl: uDAPL (DAT) for Go over rdma-core.
#
#   make demo    run udattest (server and client) over Soft-RoCE inside the test VM
#   make test    host unit tests, then every test inside the Soft-RoCE VM
#   make bench   perftest, C DAPL and udapl side by side in one VM; writes BENCHMARKS.md
#
# Both install what they need first (Debian packages; root and apt-get).

GO      ?= go
VMEXEC  := $(CURDIR)/scripts/vmexec
BIN     := $(CURDIR)/bin
PKGS    := ./...

.PHONY: all deps build vet test test-host test-vm test-race demo bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build $(PKGS)

vet: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet $(PKGS)

# Unit tests that need no device, on this host. Device tests skip here, and
# only here: UDAPL_HOST_ONLY=1 marks the run as host-only.
test-host: deps
	UDAPL_HOST_ONLY=1 $(GO) test -count=1 $(PKGS)

# Every test, device tests included, inside the VM (one VM per test binary).
test-vm: deps
	$(GO) test -count=1 -p 1 -timeout 20m -exec $(VMEXEC) $(PKGS)

# The race detector over the packages whose tests post concurrently.
test-race: deps
	$(GO) test -count=1 -p 1 -race -timeout 30m -exec $(VMEXEC) ./cverbs/ ./udat/

test: vet test-host test-vm test-race

demo: deps
	scripts/demo.sh

bench: deps
	scripts/bench.sh

clean:
	rm -rf $(BIN)

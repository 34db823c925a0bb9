# msgcontract — build, test and demo.
#
# On a fresh machine only two commands are needed:
#   make demo   the payment-callback system end to end, on the embedded default
#   make test   every test of every part
# Everything either needs is installed by the targets themselves.

SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: all build setup test test-go test-runtime test-corpus fuzz-smoke conformance demo proto golden examples-gen lint-examples chaos bench-runtime bench-codegen bench-registry clean help

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

build: ## build bin/msgcontract
	$(GO) build -o $(BIN)/msgcontract ./cmd/msgcontract

setup: ## install what the tests need: protoc and PostgreSQL (apt), Python venvs, Maven artifacts
	bash scripts/setup.sh

test: setup test-go test-runtime test-corpus fuzz-smoke conformance ## run every test (what CI runs)
	@echo "make test: all suites passed"

test-go: ## vet and test the tool module (generators, registry incl. PostgreSQL, conformance executors, demo)
	$(GO) vet ./...
	bash scripts/with-postgres.sh $(GO) test ./...

test-runtime: ## vet and test runtime-go, with a throwaway PostgreSQL for its PostgreSQL tests
	cd runtime-go && $(GO) vet ./...
	bash scripts/with-postgres.sh bash -c 'cd runtime-go && $(GO) test ./...'

test-corpus: ## build the edge-contract corpus and random contracts in Go, Java and Python; check they agree
	bash scripts/setup-python.sh >/dev/null
	$(GO) test -tags corpus -timeout 40m -run 'TestCorpus|TestRandomContracts$$' ./internal/corpus

fuzz-smoke: ## run the parser fuzz targets briefly
	$(GO) test ./codegen/keytemplate -run='^$$' -fuzz=FuzzParse -fuzztime=10s -parallel=1
	$(GO) test ./codegen/model -run='^$$' -fuzz=FuzzLoad -fuzztime=10s -parallel=1
	$(GO) test ./registry/schema -run='^$$' -fuzz=FuzzParse -fuzztime=10s -parallel=1 -fuzzminimizetime=0
	$(GO) test ./registry/api -run='^$$' -fuzz=FuzzRequests -fuzztime=10s -parallel=1 -fuzzminimizetime=0
	$(GO) test ./internal/corpus -run='^$$' -fuzz=FuzzEscaping -fuzztime=20s -parallel=1 -fuzzminimizetime=0

VECTORS ?= testdata/conformance

conformance: ## run the conformance vectors in Go, Java and Python (VECTORS=dir)
	bash scripts/setup-python.sh >/dev/null
	$(GO) run ./conformance/cmd/conformance $(VECTORS)

lint-examples: build ## lint the example contracts and print their retry schedules
	$(BIN)/msgcontract lint --explain -I examples/proto \
		examples/proto/shop/payment/v1/payment.proto examples/proto/shop/inventory/v1/inventory.proto

TRANSPORT ?= sqlite
ORDERS    ?= 24

demo: ## the payment-callback system end to end (TRANSPORT=sqlite, ORDERS=24)
	bash scripts/setup-python.sh
	$(GO) run ./examples/demo -transport $(TRANSPORT) -orders $(ORDERS)

chaos: ## 20,000 messages, duplicates, transient failures, poison, consumers SIGKILLed at random
	cd runtime-go && $(GO) run ./bench/chaos -messages 20000

bench-runtime: ## bare business INSERT loop vs the full runtime on SQLite, side by side
	cd runtime-go && $(GO) run ./bench/runtime -n 50000

bench-codegen: ## msgcontract generate --lang go vs protoc --go_out on 202 files, side by side
	bash bench/codegen/run.sh

bench-registry: ## registry GET /schemas/ids throughput vs a bare echo handler; FULL_TRANSITIVE check latency
	$(GO) run ./bench/registry

proto: ## regenerate the Go of msgcontract's own protos (no protoc needed)
	$(GO) run ./internal/tools/genproto

golden: ## refresh golden files after an intended output change
	$(GO) test ./internal/cli -run TestLintGolden -update
	$(GO) test ./codegen/golang ./codegen/java ./codegen/python -update

examples-gen: ## regenerate the example contracts' Go under examples/gen (no protoc needed)
	$(GO) run ./internal/tools/genexamples

clean:
	rm -rf $(BIN)

# msgcontract — build, test and demo.
#
# On a fresh machine only two commands are needed:
#   make demo   the payment-callback system end to end, on the embedded default
#   make test   every test of every part
# Everything either needs is installed by the targets themselves.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
GO    ?= go
BIN   := bin
# Each suite writes its summary line here; `make test` prints them last.
SUMMARY := .build/test-summary
TESTSUMMARY := $(BIN)/testsummary

.PHONY: all build setup test summary-reset test-go test-runtime fuzz-smoke conformance demo proto golden examples-gen lint-examples chaos bench-runtime bench-codegen bench-registry clean help

all: build ## the default: build bin/msgcontract

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

build: ## build bin/msgcontract
	$(GO) build -o $(BIN)/msgcontract ./cmd/msgcontract

setup: ## install what the tests need: protoc, PostgreSQL, Redis (apt), buf (Go proxy), Python venvs, Maven artifacts
	bash scripts/setup.sh

test: summary-reset setup test-go test-runtime fuzz-smoke conformance ## run every test (what CI runs); ends with one line per suite
	@bash scripts/test-summary.sh $(SUMMARY)

summary-reset: ## forget the previous run's per-suite summary lines
	rm -rf $(SUMMARY)

test-go: ## vet and test the tool module (generators, registry incl. PostgreSQL, conformance executors, demo, JUnit, pytest)
	$(GO) vet ./...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-postgres.sh $(GO) test -json ./... | $(TESTSUMMARY) -suite go -dir $(SUMMARY)

test-runtime: ## vet and test runtime-go, with a throwaway PostgreSQL for its PostgreSQL tests
	cd runtime-go && $(GO) vet ./...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-postgres.sh bash -c 'cd runtime-go && $(GO) test -json ./...' | $(TESTSUMMARY) -suite runtime-go -dir $(SUMMARY)

fuzz-smoke: ## run the parser fuzz targets briefly
	$(GO) test ./codegen/keytemplate -run='^$$' -fuzz=FuzzParse -fuzztime=10s -parallel=1
	$(GO) test ./codegen/model -run='^$$' -fuzz=FuzzLoad -fuzztime=10s -parallel=1
	$(GO) test ./registry/schema -run='^$$' -fuzz=FuzzParse -fuzztime=10s -parallel=1 -fuzzminimizetime=0
	$(GO) test ./registry/api -run='^$$' -fuzz=FuzzRequests -fuzztime=10s -parallel=1 -fuzzminimizetime=0

VECTORS ?= testdata/conformance

conformance: ## run the conformance vectors in Go, Java and Python (VECTORS=dir)
	bash scripts/setup-python.sh >/dev/null
	mkdir -p $(SUMMARY)
	$(GO) run ./conformance/cmd/conformance $(VECTORS) | tee $(SUMMARY)/conformance.log
	grep '^conformance-' $(SUMMARY)/conformance.log | sort > $(SUMMARY)/conformance.txt

lint-examples: build ## lint the example contracts and print their retry schedules
	$(BIN)/msgcontract lint --explain -I examples/proto \
		examples/proto/shop/payment/v1/payment.proto examples/proto/shop/inventory/v1/inventory.proto

TRANSPORT ?= sqlite
ORDERS    ?= 24

demo: ## the payment-callback system end to end (TRANSPORT=sqlite, ORDERS=24)
	bash scripts/setup-python.sh
	bash scripts/setup-java.sh
	$(GO) run ./examples/demo -transport $(TRANSPORT) -orders $(ORDERS)

chaos: ## 20,000 messages, duplicates, transient failures, poison, consumers SIGKILLed at random
	cd runtime-go && $(GO) run ./bench/chaos -messages 20000

bench-runtime: ## bare business INSERT loop vs the full runtime on SQLite, side by side
	cd runtime-go && $(GO) run ./bench/runtime -n 50000

bench-codegen: ## generate --lang go --with-pb vs protoc --go_out --msgcontract_out (same files) and vs protoc --go_out alone; wall and CPU
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

clean: ## remove bin/ and the test summary
	rm -rf $(BIN) $(SUMMARY)

# msgcontract — build, test and demo.
#
# On a fresh machine only two commands are needed:
#   make demo   the payment-callback system end to end, on the embedded default
#   make test   every test of every part
# Everything either needs is installed by the targets themselves.

SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: all build test test-go test-runtime fuzz-smoke demo proto golden lint-examples clean help

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

build: ## build bin/msgcontract
	$(GO) build -o $(BIN)/msgcontract ./cmd/msgcontract

test: test-go test-runtime fuzz-smoke ## run every test
	@echo "make test: all suites passed"

test-go: ## vet and test the tool module
	$(GO) vet ./...
	$(GO) test ./...

test-runtime: ## vet and test runtime-go
	cd runtime-go && $(GO) vet ./... && $(GO) test ./...

fuzz-smoke: ## run the parser fuzz targets briefly
	$(GO) test ./codegen/keytemplate -run='^$$' -fuzz=FuzzParse -fuzztime=10s -parallel=1
	$(GO) test ./codegen/model -run='^$$' -fuzz=FuzzLoad -fuzztime=10s -parallel=1

lint-examples: build ## lint the example contracts and print their retry schedules
	$(BIN)/msgcontract lint --explain -I examples/proto \
		examples/proto/shop/payment/v1/payment.proto examples/proto/shop/inventory/v1/inventory.proto

TRANSPORT ?= sqlite
ORDERS    ?= 24

demo: ## the payment-callback system end to end (TRANSPORT=sqlite, ORDERS=24)
	bash scripts/setup-python.sh
	$(GO) run ./examples/demo -transport $(TRANSPORT) -orders $(ORDERS)

proto: ## regenerate the Go of msgcontract's own protos (no protoc needed)
	$(GO) run ./internal/tools/genproto

golden: ## refresh golden files after an intended output change
	$(GO) test ./internal/cli -run TestLintGolden -update

clean:
	rm -rf $(BIN)

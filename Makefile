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

.PHONY: all build setup runtime-java runtime-python services test summary-reset test-go test-runtime test-mysql test-corpus fuzz-smoke conformance demo proto sql golden examples-gen lint-examples chaos bench-runtime bench-codegen bench-java-kafka bench-registry clean help
.PHONY: compat-corpus compare-buf bench-breaking rules-doc

all: build ## the default: build bin/msgcontract

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

# The release of the tool and the three runtimes, one for all (VERSION;
# `go test .` checks every file that repeats it). The binaries built here
# print it (`msgcontract --version`); a plain `go build` prints `dev`.
VERSION := $(shell cat VERSION)
# No symbol table or DWARF (stack traces keep file:line), no local paths:
# a third smaller binary starts measurably faster, which a 10 ms
# `msgcontract breaking` notices (make bench-breaking).
BUILDFLAGS ?= -trimpath -ldflags="-s -w -X github.com/msgcontract/msgcontract/internal/buildinfo.Version=$(VERSION)"

build: ## build bin/msgcontract (static, no cgo), bin/msgcontract-ops (registry, dlq, dedup; cgo for SQLite) and bin/protoc-gen-msgcontract
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN)/msgcontract ./cmd/msgcontract
	$(GO) build $(BUILDFLAGS) -o $(BIN)/msgcontract-ops ./cmd/msgcontract-ops
	$(GO) build $(BUILDFLAGS) -o $(BIN)/protoc-gen-msgcontract ./cmd/protoc-gen-msgcontract

setup: ## install what the tests need: protoc, PostgreSQL, Redis, MariaDB, Chromium (apt), buf (npm), Kafka jars, Python venvs, Maven artifacts
	bash scripts/setup.sh

test: summary-reset jaeger-background go-cache-start runtime-java setup runtime-python go-cache-wait cpu-suites-start test-go test-runtime test-kafka-all cpu-suites-wait test-mysql test-obs-trace test-registry-security test-rabbitmq-all test-rocketmq-all conformance ## run every test (what CI runs); ends with one line per suite
	@bash scripts/test-summary.sh $(SUMMARY)

# The suites that need only CPU (and pip) and assert no timing (CPU_SUITES)
# run at the lowest CPU priority beside the Go tests and the Kafka suites:
# the one leaves a core idle now and then, the others, waiting on JVM starts
# and timers, about half the time. cpu-suites-wait, before the suites that
# measure retry delays or hold a deadline, prints their output and fails as
# they did (scripts/background.sh).
CPU_SUITES := fuzz-smoke test-corpus check-python-range

.PHONY: cpu-suites-start cpu-suites-wait
cpu-suites-start: ## start make $(CPU_SUITES) at the lowest CPU priority in the background and return (make test; stopped if make ends first)
	bash scripts/background.sh start $(SUMMARY)/cpu-suites $$PPID -- $(MAKE) --no-print-directory $(CPU_SUITES)

cpu-suites-wait: ## wait for what cpu-suites-start started, print its output, fail as it did
	bash scripts/background.sh wait $(SUMMARY)/cpu-suites

# On a new machine Go's build cache is empty, and test-go's first minute and a
# half went to compiling every package under the race detector while the
# steps before it (apt, pip, Maven) had mostly waited on the network. make
# test compiles them in the background from its start (go list -export
# compiles without linking or running; go vet's results are cached too); on a
# warm cache that takes a second. At nice 0: its session is an autogroup of
# its own, and at 19 it would get next to nothing while Jaeger's first build
# runs in make's.
.PHONY: warm-go-cache go-cache-start go-cache-wait
warm-go-cache: ## compile what test-go and test-runtime compile (packages and tests under -race, and go vet) into Go's build cache, without linking or running tests
	$(GO) vet ./...
	CGO_ENABLED=1 $(GO) list -race -test -export -deps ./... >/dev/null
	cd runtime-go && $(GO) vet $(RUNTIME_GO_PKGS)
	cd runtime-go && CGO_ENABLED=1 $(GO) list -race -test -export -deps $(RUNTIME_GO_PKGS) >/dev/null
	@echo "warm-go-cache: the tool module and runtime-go compiled under -race and vetted"

go-cache-start: ## start make warm-go-cache in the background and return (make test; stopped if make ends first)
	bash scripts/background.sh start --nice 0 $(SUMMARY)/go-cache $$PPID -- $(MAKE) --no-print-directory warm-go-cache

go-cache-wait: ## wait for what go-cache-start started, print its output, fail as it did
	bash scripts/background.sh wait $(SUMMARY)/go-cache

# The fast tier: what a change should pass before it is pushed, in under
# four minutes on two cores. No broker, no JVM or Python subprocess tests,
# no race detector (make test has them all); PostgreSQL (a throwaway
# cluster, seconds to start) for the stores' PostgreSQL tests.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
LINT_TAGS   := kafka,rabbitmq,rabbitmq_restart,rocketmq,mysql,obs,trace,stress,security
CHECK_GO_PKGS := ./codegen/... ./registry/... ./internal/cli/... ./internal/doctor ./contracts/... ./integration/layering ./integration/protosame ./integration/modules ./integration/docs

.PHONY: check check-go check-java check-python
check: check-go check-java check-python ## the fast tier (< 4 min): go vet and staticcheck on every module and build tag, Go unit tests (-short), the Java core's and micrometer module's tests built with -Xlint:all -Werror, ruff, mypy --strict and the Python runtime's tests
	@echo "check: passed"

check-go: ## gofmt, go vet, staticcheck and the Go unit tests (-short) of the tool and every runtime-go module (the benches' included)
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' ':!:third_party')) "; if [[ -n "$${unformatted// }" ]]; then echo "check: not gofmt-formatted (run gofmt -w): $$unformatted" >&2; exit 1; fi
	$(GO) vet -tags $(LINT_TAGS) ./...
	cd runtime-go && $(GO) vet -tags $(LINT_TAGS) $(RUNTIME_GO_PKGS)
	GOFLAGS= $(GO) run $(STATICCHECK) -tags $(LINT_TAGS) ./...
	cd runtime-go && GOFLAGS= $(GO) run $(STATICCHECK) -tags $(LINT_TAGS) $(RUNTIME_GO_PKGS)
	bash scripts/with-postgres.sh bash -c '$(GO) test -short -count=1 $(CHECK_GO_PKGS) && cd runtime-go && $(GO) test -short -count=1 $(RUNTIME_GO_PKGS)'

check-java: ## the Java runtime's core and micrometer modules (no broker; a throwaway PostgreSQL for the outbox relay's LISTEN): compiled with -Xlint:all -Werror, their unit tests
	bash scripts/setup-java.sh >/dev/null
	bash scripts/with-postgres.sh bash -c 'cd runtime-java && mvn -o -q -pl core,micrometer -am test'

check-python: ## ruff, mypy --strict and the Python runtime's unit tests (on both protobuf ends)
	bash scripts/check-python.sh

.PHONY: check-python-range
check-python-range: ## msgcontract-runtime as users install it, in fresh virtualenvs: every extra unpinned (all modules import), and protobuf at both ends of PROTOBUF's range and the newest 6.x (its modules load with python -W error)
	mkdir -p $(SUMMARY)
	bash scripts/check-python-extras.sh | tee $(SUMMARY)/python-range.log
	echo "python-range: $$(sed -nE 's/.*imported ([0-9]+) modules of msgcontract_runtime; resolved (.*)/\1 modules import with every extra unpinned (\2)/p' $(SUMMARY)/python-range.log); $$(grep -c 'load with no warning' $(SUMMARY)/python-range.log) protobuf installs load with no warning" > $(SUMMARY)/python-range.txt

jaeger-background: ## start building Jaeger v1.75.0 (for test-trace) at the lowest CPU priority, unless it is built; returns at once
	bash scripts/install-jaeger.sh --background

summary-reset: ## forget the previous run's per-suite summary lines
	rm -rf $(SUMMARY)

# runtime-java and runtime-python run again inside test-kafka-all's and
# test-rabbitmq-all's make:
# an "up to date" line then keeps the install's own summary line.
runtime-java: ## build, test (JUnit count checked) and install io.msgcontract:msgcontract-runtime and -micrometer into ~/.m2
	mkdir -p $(SUMMARY)
	bash scripts/install-runtime-java.sh | tee $(SUMMARY)/runtime-java.log
	@line=$$(grep -h '^java-runtime: ' $(SUMMARY)/runtime-java.log || true); f=$(SUMMARY)/java-runtime.txt; \
	  case "$$line" in *'up to date'*) [ -s $$f ] || echo "$$line" >$$f;; *) echo "$$line" >$$f;; esac

runtime-python: ## test (pytest, mypy --strict) and install msgcontract-runtime into .venv
	mkdir -p $(SUMMARY)
	bash scripts/install-runtime-python.sh | tee $(SUMMARY)/runtime-python.log
	@line=$$(grep -h '^python-runtime: ' $(SUMMARY)/runtime-python.log || true); f=$(SUMMARY)/python-runtime.txt; \
	  case "$$line" in *'up to date'*) [ -s $$f ] || echo "$$line" >$$f;; *) echo "$$line" >$$f;; esac

services: build runtime-java runtime-python ## build and run examples/services/{go,java,spring,python} from copies outside the repo, by the steps in docs/services.md (spring: on a throwaway Kafka broker)
	mkdir -p $(SUMMARY)
	bash scripts/install-spring-kafka.sh
	bash scripts/with-kafka.sh bash scripts/test-services.sh | tee $(SUMMARY)/services.log
	grep '^services-[a-z-]*: ' $(SUMMARY)/services.log > $(SUMMARY)/services.txt

.PHONY: audit
audit: ## the dependency vulnerability audit, offline (scripts/audit.sh): govulncheck on the tool module and every runtime-go module against the pinned golang.org/x/vulndb (security/versions.env); fails on a called vulnerability that security/vuln-exceptions.txt does not list; ends with "audit: N passed, M failed"
	bash scripts/audit.sh

.PHONY: release-check
release-check: dist ## check dist/ as a new user meets it (empty HOME, GOPATH, module cache, ~/.m2, pip cache): install msgcontract from dist/goproxy, verify dist/bin/SHA256SUMS, msgcontract init for go, java and python and build and run each against dist/ alone; ends with "release-check: N passed, M failed"
	bash scripts/release-check.sh dist

# -race needs cgo (scripts/setup.sh installs gcc). The 1,000 loads of a file
# with 64 imports run without it: the race detector reports an unguarded
# loader in TestLoadManyImports's 20 loads, the crash needs a plain build (#43).
test-go: ## vet and test the tool module under the race detector (generators, registry incl. PostgreSQL, conformance executors, demo, JUnit, pytest); load a file with 64 imports 1,000 times
	$(GO) vet ./...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	CGO_ENABLED=1 bash scripts/with-postgres.sh $(GO) test -race -json ./... | $(TESTSUMMARY) -suite go -dir $(SUMMARY)
	$(GO) test -tags stress -count=1 -run '^TestLoadManyImports1000$$' ./codegen/model

# runtime-go is a core module and one module per broker or optional store
# (go.work ties them for development); ./... stops at a module's edge, so
# each is named.
RUNTIME_GO_PKGS := ./... ./transport/kafka/... ./transport/natsjs/... ./transport/rabbitmq/... ./transport/rocketmq/... ./sqldb/mysqldb/... ./dedup/redisfilter/... ./bench/...

test-runtime: ## vet and test runtime-go's modules under the race detector, with a throwaway PostgreSQL for its PostgreSQL tests
	cd runtime-go && $(GO) vet $(RUNTIME_GO_PKGS)
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	CGO_ENABLED=1 bash scripts/with-postgres.sh bash -c 'cd runtime-go && $(GO) test -race -json $(RUNTIME_GO_PKGS)' | $(TESTSUMMARY) -suite runtime-go -dir $(SUMMARY)

.PHONY: test-registry-security
test-registry-security: runtime-python ## the registry's access rules over HTTPS: every endpoint x role x credential kind (Basic, bearer token, JWT, client certificate, anonymous), the console, bad credentials, rate limits, reloads, the audit log's principals, Confluent's Python client with Basic, a JWT and a certificate; ends "registry-security: N passed, 0 failed"
	$(GO) vet -tags security ./integration/registrysecurity
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	$(GO) test -tags security -count=1 -json ./integration/registrysecurity | $(TESTSUMMARY) -suite registry-security -dir $(SUMMARY)
	@sed -i -E 's/ passed, 0 skipped, / passed, /' $(SUMMARY)/registry-security.txt && cat $(SUMMARY)/registry-security.txt

.PHONY: test-kafka
test-kafka: ## runtime-go on a real Apache Kafka broker (scripts/with-kafka.sh): transport suite, fault tests 1-7, per-key order across workers on PostgreSQL, dlq --kafka, doctor --kafka
	cd runtime-go && $(GO) vet -tags kafka $(RUNTIME_GO_PKGS)
	$(GO) vet -tags kafka ./internal/cli/... ./integration/runtime/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-kafka.sh bash scripts/with-postgres.sh bash -c 'cd runtime-go && $(GO) test -json -tags kafka -count=1 ./transport/kafka/... && $(GO) test -json -tags kafka -count=1 -run "(TestFault.|TestRetryChainFork)/.*kafka|TestKafkaKeyOrderAcrossWorkers" ../integration/runtime/consumer && cd .. && $(GO) test -json -tags kafka -count=1 -run Kafka ./internal/cli/...' | $(TESTSUMMARY) -suite kafka -dir $(SUMMARY)

# No Kafka suite stops or restarts the broker (make chaos TRANSPORT=kafka
# does, on a broker of its own), and each test keeps to topics and groups
# under a namespace of its own. runtime-go's suite goes last, as in
# test-rabbitmq-all: a test that kills the broker would go at its end.
.PHONY: test-kafka-all
# The -all targets run a broker's suites two at a time where they can share
# it (each test has its own namespace or prefix): much of each suite waits on
# JVM starts, leases and timers, not on the two cores. -Otarget keeps each
# suite's output together. Suites that need another's install (the starter
# needs msgcontract-runtime-kafka from test-java-kafka) or act on the whole
# broker (the Python RabbitMQ suite's memory alarm; runtime-go's RabbitMQ
# suite stops the node, last) run alone.
PAIR := $(MAKE) --no-print-directory -j2 -Otarget

test-kafka-all: ## every Kafka suite (Java with Python, the Spring starter with the demo, the example services with runtime-go's) on one broker: what make test runs
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-kafka.sh bash -c '$(PAIR) test-java-kafka test-kafka-python && $(PAIR) test-spring test-demo-kafka && $(PAIR) services test-kafka'

.PHONY: test-rabbitmq
test-rabbitmq: ## runtime-go on a real RabbitMQ node from Debian's rabbitmq-server (scripts/with-rabbitmq.sh): transport suite, the wire format of docs/rabbitmq.md, outbox relay, retry-delay accuracy over 1,000 retries, fault tests 1-8 (5, 6, 8 SIGKILL consumer processes), forked retry chains, 1,000 messages end to end, dlq --rabbitmq, doctor --rabbitmq-management; last, on the same node with its hundreds of queues, the node SIGKILLed and restarted under a live Transport and a memory alarm
	cd runtime-go && $(GO) vet -tags rabbitmq,rabbitmq_restart $(RUNTIME_GO_PKGS)
	$(GO) vet -tags rabbitmq ./internal/cli/... ./internal/dlqopen ./integration/runtime/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	CGO_ENABLED=1 bash scripts/with-rabbitmq.sh bash -c 'cd runtime-go && $(GO) test -race -json -tags rabbitmq -count=1 ./transport/rabbitmq/... && $(GO) test -race -json -tags rabbitmq -count=1 -run "TestRabbitMQ|(TestFault.|TestRetryChainFork)/.*rabbitmq" ../integration/runtime/consumer && cd .. && $(GO) test -race -json -tags rabbitmq -count=1 -run "RabbitMQ|TestOpen" ./internal/cli/ops ./internal/dlqopen && cd runtime-go && $(GO) test -race -json -tags rabbitmq,rabbitmq_restart -count=1 -run "TestBrokerKillAndRestart|TestPublishersBlocked" ./transport/rabbitmq' | $(TESTSUMMARY) -suite rabbitmq -dir $(SUMMARY)
	@cat $(SUMMARY)/rabbitmq-retry-delays.txt

.PHONY: test-rocketmq
test-rocketmq: ## runtime-go on a real Apache RocketMQ 5.3 (scripts/with-rocketmq.sh: name server, broker and proxy from Maven Central jars): the universal transport suite, queue order, retries as timer messages held to not_before over 1,000 retries, dead-letter copies folded, the broker's %DLQ% topics read as dead letters, dlq --rocketmq, a biz_key's messages one at a time in order, transactional (half) messages committed and rolled back with the business transaction and by the check-back
	cd runtime-go && $(GO) vet -tags rocketmq ./transport/rocketmq/...
	$(GO) vet -tags rocketmq ./internal/cli/ops ./internal/dlqopen
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	@# The dead-letter tests read topics through the client's pull consumer,
	@# whose own bookkeeping races with its rebalance (rocketmq-client-go
	@# v2's pull rewrites the consumer's group name on every call), and the
	@# transactional producer's client races with itself at shutdown: they
	@# run without the race detector, everything else with it.
	CGO_ENABLED=1 bash scripts/with-rocketmq.sh bash -c 'cd runtime-go && $(GO) test -race -json -tags rocketmq -count=1 -run "TestSequencer|TestCreateTopic|TestKeyOrder|TestSuite/(PublishFetchAck|FanOutToGroups|RedeliveryAfterLease|Defer|RetryStaysInGroup)" ./transport/rocketmq/... && $(GO) test -json -tags rocketmq -count=1 -run "TestSuite/(DeadLetterAndDLQ|DLQListAfterReplays)|TestRetryDelays|TestDeadLetterCopiesFold|TestBrokerDLQ|TestTxProducer" ./transport/rocketmq/... && cd .. && $(GO) test -json -tags rocketmq -count=1 -run RocketMQ ./internal/cli/ops' | $(TESTSUMMARY) -suite rocketmq -dir $(SUMMARY)
	@cat $(SUMMARY)/rocketmq-retry-delays.txt

.PHONY: test-java-rocketmq
test-java-rocketmq: runtime-java ## the Java RocketMQ member (runtime-java/rocketmq over RocketMQ's 5.x client and proxy, JUnit count checked) on a real broker: the names and properties of docs/rocketmq.md, the loop's decisions, FIFO groups (a key's messages in publish order, retries leaving the line), the transactional producer and its check-back, dead letters listed by dlq --rocketmq, a crash between retry and ack, 1,000 retry delays through the broker's timer, Go publishing to Java and Java to Go (integration/rocketmqmembers)
	$(GO) vet -tags rocketmq ./integration/rocketmqmembers/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rocketmq.sh bash -c '$(GO) test -json -tags rocketmq -count=1 -timeout 15m -run TestJavaRocketMQ ./integration/rocketmqmembers' | $(TESTSUMMARY) -suite java-rocketmq -dir $(SUMMARY)
	@cat $(SUMMARY)/java-rocketmq-retry-delays.txt

.PHONY: test-rocketmq-python test-rocketmq-python-delays
test-rocketmq-python: runtime-python ## the Python RocketMQ member (msgcontract_runtime.rocketmq over RocketMQ's 5.x Python client and proxy) on a real broker: runtime-python/tests_rocketmq but its delay measurement (FIFO groups, the transactional producer and its check-back, duplicates, retries then dead letters listed by dlq --rocketmq, a body that is no envelope, Go publishing to Python and Python to Go), every test function counted (integration/rocketmqmembers)
	bash scripts/setup-python.sh >/dev/null
	cd runtime-python && MYPYPATH=tests_rocketmq ../.venv/bin/python -m mypy --no-error-summary tests_rocketmq
	$(GO) vet -tags rocketmq ./integration/rocketmqmembers/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rocketmq.sh bash -c '$(GO) test -json -tags rocketmq -count=1 -timeout 15m -run "^TestPythonRocketMQ$$" ./integration/rocketmqmembers' | $(TESTSUMMARY) -suite rocketmq-python -dir $(SUMMARY)

test-rocketmq-python-delays: runtime-python ## the Python RocketMQ member's 1,000 retry delays through the broker's timer (tests_rocketmq/test_rocketmq_delays.py), with no other suite beside it: prints handler start and ready minus not_before, and the loop's CPU per delivery
	bash scripts/setup-python.sh >/dev/null
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rocketmq.sh bash -c '$(GO) test -json -tags rocketmq -count=1 -timeout 15m -run "^TestPythonRocketMQDelays$$" ./integration/rocketmqmembers' | $(TESTSUMMARY) -suite rocketmq-python-delays -dir $(SUMMARY)
	@cat $(SUMMARY)/python-rocketmq-retry-delays.txt $(SUMMARY)/python-rocketmq-retry-delays-ready.txt

.PHONY: test-rocketmq-all
test-rocketmq-all: ## every RocketMQ suite on one broker (Java with Python's members, then Python's delay measurement alone, then the demo with runtime-go's): what make test runs
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rocketmq.sh bash -c '$(PAIR) test-java-rocketmq test-rocketmq-python && $(MAKE) --no-print-directory test-rocketmq-python-delays && $(PAIR) test-demo-rocketmq test-rocketmq'

.PHONY: test-rabbitmq-python
test-rabbitmq-python: runtime-python ## Python on RabbitMQ (scripts/with-rabbitmq.sh): runtime-python/tests_rabbitmq (RabbitMQConsumerLoop, the dlq store, outbox relay, SIGKILL mid-batch, retry delays over 1,000 retries, the asyncio loop), Go<->Python interop (shared group, dead letters both ways, msgcontract dlq --rabbitmq)
	bash scripts/setup-python.sh >/dev/null
	cd runtime-python && MYPYPATH=tests_rabbitmq ../.venv/bin/python -m mypy --no-error-summary tests_rabbitmq ../integration/rabbitmqinterop/testdata/pyinterop.py
	$(GO) vet -tags rabbitmq ./integration/rabbitmqinterop
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rabbitmq.sh $(GO) test -json -tags rabbitmq -count=1 -timeout 15m ./integration/rabbitmqinterop | $(TESTSUMMARY) -suite rabbitmq-python -dir $(SUMMARY)
	@cat $(SUMMARY)/python-rabbitmq-retry-delays.txt

.PHONY: test-rabbitmq-all
test-rabbitmq-all: ## every RabbitMQ suite (Java with the demo, Python with its memory alarm alone, then runtime-go's with its broker restart last) on one node: what make test runs
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rabbitmq.sh bash -c '$(PAIR) test-java-rabbitmq test-demo-rabbitmq && $(MAKE) --no-print-directory test-rabbitmq-python test-rabbitmq'

.PHONY: test-rabbitmq-restart
test-rabbitmq-restart: ## only the RabbitMQ node SIGKILLed and restarted under a live Transport, and a memory alarm set and cleared, on a fresh node (make test-rabbitmq runs them too, last)
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	CGO_ENABLED=1 bash scripts/with-rabbitmq.sh bash -c 'cd runtime-go && $(GO) test -race -json -tags rabbitmq,rabbitmq_restart -count=1 -run "TestBrokerKillAndRestart|TestPublishersBlocked" ./transport/rabbitmq' | $(TESTSUMMARY) -suite rabbitmq-restart -dir $(SUMMARY)

test-mysql: runtime-python ## runtime-go, Java and Python on a throwaway MariaDB (scripts/with-mariadb.sh): mysqldb, dedup, outbox, the check-back table (txcheck), fault tests 1-4 and 7, batch timeout, dedup conflicts --db mysql://, doctor --mysql, the Python asyncio consumer on aiomysql
	bash scripts/setup-python.sh >/dev/null
	bash scripts/pip-install.sh test-mysql .venv PyMySQL==1.1.3 aiomysql==0.3.2
	cd runtime-python && MYPYPATH=tests_mysql ../.venv/bin/python -m mypy --no-error-summary tests_mysql
	cd runtime-go && $(GO) vet -tags mysql $(RUNTIME_GO_PKGS)
	$(GO) vet -tags mysql ./internal/cli/... ./integration/mysqlit ./integration/runtime/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-mariadb.sh bash -c 'cd runtime-go && $(GO) test -json -tags mysql -count=1 ./sqldb/mysqldb/... && $(GO) test -json -tags mysql -count=1 -run MySQL ../integration/runtime/dedup ../integration/runtime/outbox ../integration/runtime/txcheck && $(GO) test -json -tags mysql -count=1 -run "TestFault[12347]/mysql|TestBatch.*/mysql" ../integration/runtime/consumer && cd .. && $(GO) test -json -tags mysql -count=1 -run MySQL ./internal/cli/... ./integration/mysqlit' | $(TESTSUMMARY) -suite mysql -dir $(SUMMARY)
.PHONY: test-obs
test-obs: runtime-java runtime-python ## a real Prometheus (Debian's) scrapes a Go, a Java and a Python consumer: the same metric series, labels, counts and buckets from each (integration/obsscrape)
	command -v prometheus >/dev/null || bash scripts/setup.sh
	$(GO) vet -tags obs ./integration/obsscrape
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	$(GO) test -json -tags obs -count=1 ./integration/obsscrape | $(TESTSUMMARY) -suite obs -dir $(SUMMARY)

.PHONY: test-obs-trace
test-obs-trace: runtime-java runtime-python ## test-obs and test-trace side by side, as make test runs them: each mostly waits, on Prometheus's scrapes or on Jaeger's spans
	$(PAIR) test-obs test-trace

.PHONY: test-trace jaeger-background
test-trace: runtime-java runtime-python ## the demo exporting to a real Jaeger v1.75.0 (scripts/with-jaeger.sh; in-memory, OTLP on loopback): one order's trace holds the Java producer, relay, Go consumer (retry included) and Python consumer spans
	bash scripts/setup-java.sh
	$(GO) vet -tags trace ./examples/demo
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-jaeger.sh $(GO) test -json -tags trace -count=1 -run TestTraceEndToEnd ./examples/demo | $(TESTSUMMARY) -suite trace -dir $(SUMMARY)

.PHONY: test-kafka-python test-demo-kafka test-demo-rabbitmq
test-kafka-python: runtime-python ## Python on Kafka and the Confluent wire format (broker + PostgreSQL): runtime-python/tests_kafka (KafkaConsumerLoop, and AsyncConsumer on aio.kafka), Go<->Python interop
	bash scripts/setup-python.sh >/dev/null
	cd runtime-python && MYPYPATH=tests_kafka ../.venv/bin/python -m mypy --no-error-summary tests_kafka
	$(GO) vet -tags kafka ./integration/kafkainterop
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-postgres.sh bash scripts/with-kafka.sh $(GO) test -json -tags kafka -count=1 ./integration/kafkainterop | $(TESTSUMMARY) -suite kafka-python -dir $(SUMMARY)

.PHONY: test-java-kafka
test-java-kafka: runtime-java ## the Java Kafka loop, outbox and relay (runtime-java/kafka, JUnit count checked) on a real broker, with a Go member in the group, the dlq CLI and the Confluent wire format between Java and Go
	$(GO) vet -tags kafka ./integration/javakafka
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-kafka.sh bash -c '$(GO) test -json -tags kafka -count=1 -timeout 15m ./integration/javakafka' | $(TESTSUMMARY) -suite java-kafka -dir $(SUMMARY)

.PHONY: test-spring
test-spring: ## the Spring Boot starter (runtime-java/spring-kafka, JUnit count checked) on a real broker, PostgreSQL and MariaDB: @ContractListener in one Spring transaction with the dedup claim, retries on the contract's schedule, dead letters, batches, the outbox and relay, start-up validation, a group shared with a plain Java member (integration/springkafka)
	$(GO) vet -tags kafka ./integration/springkafka
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-postgres.sh bash scripts/with-mariadb.sh bash scripts/with-kafka.sh bash -c '$(GO) test -json -tags kafka -count=1 -timeout 20m ./integration/springkafka' | $(TESTSUMMARY) -suite spring -dir $(SUMMARY)

.PHONY: test-java-rabbitmq
test-java-rabbitmq: runtime-java ## the Java RabbitMQ member (runtime-java/rabbitmq, JUnit count checked) on a real node: the wire of docs/rabbitmq.md, the loop's decisions, DLQ, outbox relay, 1,000 retry delays, and Go members in the same group and DLQ (integration/javarabbitmq)
	$(GO) vet -tags rabbitmq ./integration/javarabbitmq/...
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rabbitmq.sh bash -c '$(GO) test -json -tags rabbitmq -count=1 -timeout 15m ./integration/javarabbitmq' | $(TESTSUMMARY) -suite java-rabbitmq -dir $(SUMMARY)
	@cat $(SUMMARY)/java-rabbitmq-retry-delays.txt

test-demo-kafka: runtime-java runtime-python ## the demo on a real Kafka broker (Java outbox -> Confluent-framed relay -> Go and Python consumers); asserts the verdict
	bash scripts/setup-java.sh
	$(GO) vet -tags kafka ./examples/demo
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-kafka.sh $(GO) test -json -tags kafka -count=1 -run TestDemoKafka ./examples/demo | $(TESTSUMMARY) -suite demo-kafka -dir $(SUMMARY)

test-demo-rabbitmq: runtime-java runtime-python ## the demo on a throwaway RabbitMQ node (Java outbox -> Go relay -> Go and Python consumers on shared quorum queues); asserts the verdict and the run's dead-letter queue
	bash scripts/setup-java.sh
	$(GO) vet -tags rabbitmq ./examples/demo
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rabbitmq.sh $(GO) test -json -tags rabbitmq -count=1 -run TestDemoRabbitMQ ./examples/demo | $(TESTSUMMARY) -suite demo-rabbitmq -dir $(SUMMARY)

test-demo-rocketmq: runtime-java runtime-python ## the demo on a throwaway RocketMQ (Java outbox -> Go relay -> the Go consumer on runtime-go's push consumer, the Python consumer on the 5.x client through the proxy); asserts the verdict and the run's dead-letter topic
	bash scripts/setup-java.sh
	$(GO) vet -tags rocketmq ./examples/demo
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	bash scripts/with-rocketmq.sh $(GO) test -json -tags rocketmq -count=1 -run TestDemoRocketMQ ./examples/demo | $(TESTSUMMARY) -suite demo-rocketmq -dir $(SUMMARY)

test-corpus: ## build the edge-contract corpus and random contracts in Go, Java and Python; check they agree
	bash scripts/setup-python.sh >/dev/null
	$(GO) build -o $(TESTSUMMARY) ./internal/tools/testsummary
	$(GO) test -json -tags corpus -timeout 40m -run 'TestCorpus|TestRandomContracts$$' ./internal/corpus | $(TESTSUMMARY) -suite corpus -dir $(SUMMARY)

fuzz-smoke: ## run the parser fuzz targets briefly, two at a time (execution counts, not durations: a -fuzztime duration races Go's fuzz coordinator, golang/go#75804, and fails with a bare "context deadline exceeded"; scripts/fuzz-smoke.sh)
	GO=$(GO) bash scripts/fuzz-smoke.sh

VECTORS ?= testdata/conformance

conformance: runtime-java runtime-python ## run the conformance vectors in Go, Java and Python (VECTORS=dir)
	mkdir -p $(SUMMARY)
	$(GO) run ./conformance/cmd/conformance $(VECTORS) | tee $(SUMMARY)/conformance.log
	grep '^conformance-' $(SUMMARY)/conformance.log | sort > $(SUMMARY)/conformance.txt

lint-examples: build ## lint the example contracts and print their retry schedules
	$(BIN)/msgcontract lint --explain -I examples/proto \
		examples/proto/shop/payment/v1/payment.proto examples/proto/shop/inventory/v1/inventory.proto

TRANSPORT ?= sqlite
ORDERS    ?= 24
# make chaos (scripts/chaos.sh; MESSAGES defaults to 20,000, 60,000 with FAULTS).
MESSAGES  ?=
BUSINESS  ?=
FAULTS    ?=
RATE      ?= 2000
KEEP      ?=
TRACE     ?=

# The demo installs the runtimes without their test suites (make test runs
# them) and is never quiet for long: a step without progress of its own
# prints a heartbeat line every 15 s (scripts/heartbeat.sh, the demo's
# -heartbeat).
demo: ## the payment-callback system end to end (TRANSPORT=sqlite|nats|kafka|rabbitmq|rocketmq, ORDERS=24; KEEP=1 keeps the web console open; TRACE=1 exports every span to a throwaway Jaeger, prints one order's trace and keeps Jaeger up until Ctrl-C)
	bash scripts/install-runtime-java.sh --no-tests
	bash scripts/install-runtime-python.sh --no-tests
	bash scripts/heartbeat.sh "setup-java" bash scripts/setup-java.sh
	bash scripts/heartbeat.sh "demo: go build ./examples/demo" $(GO) build -o .build/bin/demo ./examples/demo
	$(if $(filter kafka,$(TRANSPORT)),bash scripts/with-kafka.sh )$(if $(filter rabbitmq,$(TRANSPORT)),bash scripts/with-rabbitmq.sh )$(if $(filter rocketmq,$(TRANSPORT)),bash scripts/with-rocketmq.sh )$(if $(TRACE),bash scripts/with-jaeger.sh ).build/bin/demo -transport $(TRANSPORT) -orders $(ORDERS) $(if $(KEEP),-keep)$(if $(TRACE), -hold-trace)

chaos: ## 20,000 messages (MESSAGES=; 60,000 with FAULTS, half a minute at RATE), duplicates, transient failures, poison, consumers SIGKILLed at random (TRANSPORT=kafka, rabbitmq or rocketmq: and a broker SIGKILL and restart; rabbitmq: through a producer outbox and a relay, both SIGKILLed too; BUSINESS=postgres|mysql: claims and effects there); FAULTS=kill,pause,partition,db-restart,broker-kill picks the faults, publishes at RATE=2000/s and judges every retry's delay (scripts/chaos.sh)
	TRANSPORT=$(TRANSPORT) BUSINESS=$(BUSINESS) MESSAGES=$(MESSAGES) FAULTS=$(FAULTS) RATE=$(RATE) GO=$(GO) bash scripts/chaos.sh

.PHONY: chaos-long
chaos-long: ## 1,000,000 messages with FAULTS=kill,pause,partition, on the embedded queue (claims and effects in PostgreSQL) and then on Kafka; each ends "chaos: messages=1000000 ... duplicates=0 lost=0 ... retry_delay_violations=0" (about 20 min on 2 cores: docs/benchmarks.md)
	$(MAKE) --no-print-directory chaos MESSAGES=1000000 FAULTS=kill,pause,partition
	$(MAKE) --no-print-directory chaos MESSAGES=1000000 FAULTS=kill,pause,partition TRANSPORT=kafka

.PHONY: chaos-mixed
chaos-mixed: runtime-java runtime-python ## one Kafka group of Go, Spring Boot (bench/chaos/spring, on msgcontract-spring-kafka) and Python (bench/chaos/member.py) members, each SIGKILLed in turn, 20,000 messages, a broker SIGKILL and restart, effects and claims in PostgreSQL; ends "duplicates=0 lost=0" and each language's kills and effects
	bash scripts/setup-python.sh >/dev/null
	bash scripts/install-spring-kafka.sh
	cd bench/chaos/spring && mvn -B -q -Dstyle.color=never package
	MSGCONTRACT_CHAOS_SPRING="java -Xmx256m -XX:TieredStopAtLevel=1 -jar $(CURDIR)/bench/chaos/spring/target/member.jar" \
	MSGCONTRACT_CHAOS_PYTHON="$(CURDIR)/.venv/bin/python $(CURDIR)/bench/chaos/member.py" \
	  bash scripts/with-postgres.sh bash scripts/with-kafka.sh bash -c 'cd runtime-go && $(GO) run ./bench/chaos -messages 20000 -transport kafka -business postgres -members go,spring,python -kill-min 2s -kill-max 5s'

# WRITES and WRITERS size make chaos-registry: registrations in all, and
# writers on each of the three instances.
WRITES  ?= 1500
WRITERS ?= 2

.PHONY: chaos-registry
chaos-registry: ## the registry as a cluster under faults: 3 `registry serve` instances on one PostgreSQL, WRITERS=2 writers on each registering WRITES=1500 schemas over 12 subjects, one instance SIGKILLed and restarted, one SIGSTOPped for 3 s, PostgreSQL crashed and restarted, each mid-write; ends "registry-chaos: instances=3 acked=N lost=0 ids_unique=yes versions_contiguous=yes converged_ms=M ..." (integration/registrychaos; exit 1 when a check fails, 2 when the run could not be done)
	$(GO) build $(BUILDFLAGS) -o $(BIN)/msgcontract-ops ./cmd/msgcontract-ops
	$(GO) build -o .build/bin/registrychaos ./integration/registrychaos
	bash scripts/with-postgres.sh .build/bin/registrychaos -ops $(BIN)/msgcontract-ops -writes $(WRITES) -writers $(WRITERS)

bench-runtime: ## runtime modes vs bare loops consuming the same queue in the same transaction size on SQLite (TRANSPORT=kafka: on a Kafka broker, DB=postgres or DB=mariadb: writing to a throwaway server with durable commits instead, every side with the runtime's default workers, prints throughput kafka/postgres= or kafka/mariadb=; TRANSPORT=rabbitmq: on a throwaway RabbitMQ node, vs a bare amqp091-go loop writing the same dedup row; TRANSPORT=rocketmq: on a throwaway RocketMQ, vs a bare rocketmq-client-go push consumer writing the same dedup row)
ifeq ($(TRANSPORT),kafka)
ifeq ($(DB),postgres)
	MSGCONTRACT_PG_DURABLE=1 bash scripts/with-kafka.sh bash scripts/with-postgres.sh bash -c 'cd runtime-go && $(GO) run ./bench/kafka -n 50000 -db postgres'
else ifeq ($(DB),mariadb)
	MSGCONTRACT_MARIADB_FLUSH=1 bash scripts/with-kafka.sh bash scripts/with-mariadb.sh bash -c 'cd runtime-go && $(GO) run ./bench/kafka -n 50000 -db mysql'
else
	bash scripts/with-kafka.sh bash -c 'cd runtime-go && $(GO) run ./bench/kafka -n 50000'
endif
else ifeq ($(TRANSPORT),rabbitmq)
	bash scripts/with-rabbitmq.sh bash -c 'cd runtime-go && $(GO) run ./bench/rabbitmq -n 50000'
else ifeq ($(TRANSPORT),rocketmq)
	bash scripts/with-rocketmq.sh bash -c 'cd runtime-go && $(GO) run ./bench/rocketmq -n 50000'
else
	cd runtime-go && $(GO) run ./bench/runtime -n 50000
endif

.PHONY: bench-latency
bench-latency: ## producer commit to effect commit per message (HdrHistogram), at 1,000 msg/s and at 80% of each case's measured maximum, for the SQLite queue, NATS and Kafka over SQLite, PostgreSQL and MariaDB (durable settings: fsync, synchronous_commit, innodb_flush_log_at_trx_commit=1); prints "latency <transport>/<db> rate= p50= p99= p999= max=" and writes .hgrm files and SVG plots to .build/bench-latency (CASES=kafka/postgres,... picks cases; DURATION=10s)
	cd runtime-go && $(GO) build -o ../.build/bin/bench-latency ./bench/latency
	MSGCONTRACT_PG_DURABLE=1 MSGCONTRACT_MARIADB_FLUSH=1 bash scripts/with-kafka.sh bash scripts/with-postgres.sh bash scripts/with-mariadb.sh \
		.build/bin/bench-latency -cases $(or $(CASES),all) -rate 1000 -duration $(or $(DURATION),10s) -out .build/bench-latency

.PHONY: bench-python-async
bench-python-async: runtime-python ## Python AsyncConsumer vs Consumer msg/s on SQLite and PostgreSQL at 1 and 32 handlers; prints ratio async/sync=X (N=2000)
	bash scripts/with-postgres.sh .venv/bin/python runtime-python/bench/bench_async.py -n $(or $(N),2000)

.PHONY: bench-python-kafka
bench-python-kafka: runtime-python ## Python KafkaConsumerLoop batch_size 64 vs 1 (a transaction per record) msg/s on a broker, same records, same SQLite setup; prints ratio batch/per-record=X (N=20000)
	bash scripts/with-kafka.sh .venv/bin/python runtime-python/bench/bench_kafka_loop.py -n $(or $(N),20000)

bench-codegen: ## generate --with-pb vs protoc --go_out, the plugin in a Go+Java+Python protoc build, and a 90%-plain corpus; wall, CPU, peak RSS (bench/codegen/README.md)
	bash bench/codegen/run.sh

compat-corpus: ## the compatibility corpus (testdata/compat, 200+ previous/current pairs) and the rule doc's freshness
	$(GO) test ./registry/compat/...

compare-buf: build ## agreement of msgcontract breaking with buf breaking over the corpus, per category
	bash scripts/install-buf.sh
	$(GO) run ./bench/breaking -mode compare -msgcontract $(BIN)/msgcontract

bench-breaking: build ## msgcontract breaking vs buf breaking, whole processes on the corpus pairs, side by side
	bash scripts/install-buf.sh
	$(GO) run ./bench/breaking -mode bench -msgcontract $(BIN)/msgcontract

rules-doc: ## regenerate docs/compat-rules.md from the rule table and the corpus
	$(GO) run ./registry/compat/cmd/ruledoc > docs/compat-rules.md

bench-java-kafka: ## the Java Kafka loop's batches (batchSize 64) vs a transaction per delivery, then the Spring Boot starter's @ContractListener vs the plain loop ("ratio spring/java-loop"), same records, same SQLite setup, on one broker (bench/java-kafka/run.sh)
	bash bench/java-kafka/run.sh

bench-registry: ## registry GET /schemas/ids vs bare echo; FULL_TRANSITIVE latency; hostile schemas; 100,000-schema scale
	$(GO) run ./bench/registry -versions 1000 -checks 50

.PHONY: console-shots
console-shots: ## run the web console's browser test (headless Chromium) and keep its screenshots in .build/console-shots
	mkdir -p .build/console-shots
	CONSOLE_SCREENSHOTS=$(CURDIR)/.build/console-shots $(GO) test ./registry/console -run TestBrowser -count=1 -v

proto: ## regenerate the Go of msgcontract's own protos (no protoc needed)
	$(GO) run ./internal/tools/genproto

sql: ## copy the runtime's DDL (contracts/sql/*.sql) into runtime-go/sqldb/ddl/ddl_gen.go
	$(GO) run ./internal/tools/gensql

golden: ## refresh golden files after an intended output change
	$(GO) test ./internal/cli -run TestLintGolden -update
	$(GO) test ./codegen/golang ./codegen/java ./codegen/python ./internal/cli/initscaffold -update

examples-gen: ## regenerate the example contracts' Go under examples/gen (no protoc needed)
	$(GO) run ./internal/tools/genexamples

# The release (docs/release.md): from the files of HEAD, reproducibly.
# Each script takes VERSION from the environment and writes only its own
# subdirectories of dist/: go.sh goproxy/ and bin/, python.sh python/,
# maven.sh maven/.
DIST_SCRIPTS := scripts/dist/go.sh scripts/dist/python.sh scripts/dist/maven.sh

.PHONY: dist
dist: ## write the release into dist/ from HEAD (VERSION=X.Y.Z, default the VERSION file): goproxy/, bin/, python/, maven/ (docs/release.md)
	@for s in $(DIST_SCRIPTS); do [[ -f $$s ]] || { echo "make dist: $$s is missing: the release needs all of $(DIST_SCRIPTS) (is the branch that adds it merged?)" >&2; exit 1; }; done
	VERSION=$(VERSION) bash scripts/dist/go.sh
	VERSION=$(VERSION) bash scripts/dist/python.sh
	VERSION=$(VERSION) bash scripts/dist/maven.sh

clean: ## remove bin/ and the test summary
	rm -rf $(BIN) $(SUMMARY)

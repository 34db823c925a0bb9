module github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq

go 1.26.8

require github.com/msgcontract/msgcontract/runtime-go v0.0.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
)

require (
	github.com/rabbitmq/amqp091-go v1.17.0
	google.golang.org/protobuf v1.36.12 // indirect
)

// Development: the sibling modules of this checkout (go.work at the
// repository root does the same). A module that requires this one
// ignores these lines; released go.mod files carry versions instead.
replace github.com/msgcontract/msgcontract/runtime-go => ../..

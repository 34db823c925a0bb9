module github.com/msgcontract/msgcontract

go 1.26.8

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

require (
	github.com/bufbuild/protocompile v0.14.1
	github.com/msgcontract/msgcontract/runtime-go v0.0.0
	github.com/spf13/cobra v1.10.2
	google.golang.org/protobuf v1.36.12
)

replace github.com/msgcontract/msgcontract/runtime-go => ./runtime-go

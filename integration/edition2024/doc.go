// Package edition2024 holds only a test: it compiles the edition 2024 cases of
// the patched protocompile (third_party/protocompile/testdata/edition2024)
// with protocompile and with protoc 36.2, obtained through Maven, and requires
// identical FileDescriptorProtos (source info and source-retention options
// included) for the valid cases, and for the invalid ones that both fail, at
// the same line:col where protoc gives one. `go test ./integration/edition2024
// -update` writes protoc's descriptors as the goldens the protocompile table
// test compares with.
package edition2024

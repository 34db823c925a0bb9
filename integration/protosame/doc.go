// Package protosame holds only a test: it compiles every .proto file of the
// repository (and its own testdata: custom options of every kind, editions
// features, option errors) with protocompile as msgcontract's loader does,
// and holds the resulting FileDescriptorProtos (deterministic bytes, with
// source info), the shape of their options (extension or unknown field,
// generated or dynamic message) and every error and warning to goldens.
// Changes to the patched protocompile in third_party must keep them equal;
// `go test ./integration/protosame -update` rewrites the goldens.
package protosame

package schema

import (
	"embed"
	"io/fs"
	"maps"
	"sort"
	"strings"
	"sync"
)

// builtinFS holds the dependencies Confluent's serializers treat as built
// in and never register as references: google/type/*.proto and
// Confluent's own confluent/meta.proto and confluent/type/decimal.proto.
// They are written for this registry from the public definitions' field
// layout (see each file's header).
//
//go:embed builtin
var builtinFS embed.FS

var builtins = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	err := fs.WalkDir(builtinFS, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".proto") {
			return err
		}
		b, err := builtinFS.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, "builtin/")] = string(b)
		return nil
	})
	if err != nil {
		panic("schema: reading the embedded built-in files: " + err.Error())
	}
	return out
})

// Builtins lists the import paths that resolve without a reference
// besides the well-known types and msgcontract's own options: the
// embedded google/type and confluent files.
func Builtins() []string {
	paths := make([]string, 0, len(builtins()))
	for p := range builtins() {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// IsBuiltin reports whether an import resolves without a reference: a
// well-known type, msgcontract's options or one of Builtins.
func IsBuiltin(path string) bool {
	if strings.HasPrefix(path, "google/protobuf/") || strings.HasPrefix(path, "msgcontract/v1/") {
		return true
	}
	_, ok := builtins()[path]
	return ok
}

// withBuiltins is sources with the embedded built-in files added where no
// reference supplies the path (a reference wins: a client that registered
// its own copy compiles against it).
func withBuiltins(sources map[string]string) map[string]string {
	out := maps.Clone(builtins())
	maps.Copy(out, sources)
	return out
}

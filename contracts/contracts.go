// Package contracts embeds msgcontract's own .proto files so that
// `import "msgcontract/v1/options.proto";` resolves with no -I flag.
package contracts

import (
	"embed"
	"io"
	"io/fs"
	"strings"
)

//go:embed msgcontract/v1/options.proto msgcontract/v1/envelope.proto
var files embed.FS

// Prefix is the import-path prefix served from the embedded files.
const Prefix = "msgcontract/v1/"

// OptionsPath and EnvelopePath are the import paths of the embedded files.
const (
	OptionsPath  = Prefix + "options.proto"
	EnvelopePath = Prefix + "envelope.proto"
)

// Open returns the embedded source of path, or fs.ErrNotExist when path is
// not one of msgcontract's own files.
func Open(path string) (io.ReadCloser, error) {
	if !strings.HasPrefix(path, Prefix) {
		return nil, fs.ErrNotExist
	}
	return files.Open(path)
}

// Source returns the embedded text of path.
func Source(path string) ([]byte, error) {
	return files.ReadFile(path)
}

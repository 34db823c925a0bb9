// Package python emits python code from the contract model.
package python

import (
	"errors"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Generate renders the files for set. Not implemented yet.
func Generate(set *model.Set, p emit.Params) ([]emit.File, error) {
	return nil, errors.New("python generation is not implemented yet")
}

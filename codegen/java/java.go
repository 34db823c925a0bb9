// Package java emits java code from the contract model.
package java

import (
	"errors"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Generate renders the files for set. Not implemented yet.
func Generate(set *model.Set, p emit.Params) ([]emit.File, error) {
	return nil, errors.New("java generation is not implemented yet")
}

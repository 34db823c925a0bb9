package python

import (
	"context"
	"errors"

	"github.com/msgcontract/msgcontract/conformance"
)

func Run(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	return nil, errors.New("todo")
}

package golang_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// TestCheckIsShared: lint and generation share one Go view's findings,
// each caller getting its own copy.
func TestCheckIsShared(t *testing.T) {
	t.Parallel()
	set := fromSource(t, header+`option go_package = "example.com/t/v1;tv1";`+event+`
message PaidSpec { string x = 1; }`)
	first := golang.Check(set)
	if len(first) != 1 || first[0].Rule != golang.RuleNameCollision {
		t.Fatalf("findings %v, want one %s", first, golang.RuleNameCollision)
	}
	first[0].Message = "changed by a caller"
	_ = append(first[:0], model.Diagnostic{Rule: "appended"})
	if again := golang.Check(set); len(again) != 1 || again[0].Rule != golang.RuleNameCollision || again[0].Message == "changed by a caller" {
		t.Fatalf("second Check = %v, want the first's findings unchanged", again)
	}
}

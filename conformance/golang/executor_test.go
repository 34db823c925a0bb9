package golang_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/conformance/golang"
	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
)

// TestRun runs the vector files under testdata through generated Go and
// compares every result with its expectation.
func TestRun(t *testing.T) {
	t.Parallel()
	files, err := conformance.LoadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no vector files under testdata")
	}
	for _, vf := range files {
		t.Run(filepath.Base(vf.Path), func(t *testing.T) {
			t.Parallel()
			results, err := golang.Run(context.Background(), vf, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range vf.Cases {
				if diff := conformance.Compare(c.Expect, results[i]); diff != "" {
					t.Errorf("%s (%s): %s; got %s", c.Name, c.Kind, diff, results[i])
				}
			}
			// The generated BizKey methods agree with the model's dynamic
			// renderer (the one msgcontract bizkey uses) on every input.
			set, err := conformance.LoadModel(context.Background(), vf)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range vf.Cases {
				if c.Kind != conformance.KindBizKey {
					continue
				}
				ev := set.Event(c.Message)
				m := dynamicpb.NewMessage(ev.Desc)
				if err := protojson.Unmarshal(c.Input, m); err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				var want conformance.Result
				key, err := ev.RenderBizKey(m)
				var ke *bizkey.Error
				switch {
				case errors.As(err, &ke):
					code := string(ke.Code)
					want.Error = &code
				case err != nil:
					t.Fatalf("%s: %v", c.Name, err)
				default:
					want.BizKey = &key
				}
				if want.String() != results[i].String() {
					t.Errorf("%s: generated BizKey gives %s, the dynamic renderer %s", c.Name, results[i], want)
				}
			}
		})
	}
}

package schema_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/compat/corpus"
	"github.com/msgcontract/msgcontract/registry/schema"
)

func newPool(t testing.TB, size int) *schema.Pool {
	t.Helper()
	p, err := schema.NewPool(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// oneFile returns the text of the only .proto file under dir, or false.
func oneFile(t *testing.T, dir string) (string, bool) {
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".proto") {
			found = append(found, path)
		}
		return nil
	})
	if len(found) != 1 {
		return "", false
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// TestPoolMatchesParse compiles the current side of every one-file case
// of the compatibility corpus in a worker and in process: the text, the
// descriptor, the contract diagnostics and every violation against the
// previous side, with its position, must be the same.
func TestPoolMatchesParse(t *testing.T) {
	cases, err := corpus.Load(filepath.Join("..", "..", "testdata", "compat"))
	if err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, 2)
	ctx := context.Background()
	compared := 0
	for _, c := range cases {
		prevText, ok1 := oneFile(t, c.Prev())
		curText, ok2 := oneFile(t, c.Cur())
		if !ok1 || !ok2 {
			continue
		}
		prev, err := schema.Parse(ctx, "s.proto", prevText, nil, nil)
		if err != nil {
			continue // cases of contracts that do not lint are not registrable
		}
		want, wantErr := schema.Parse(ctx, "s.proto", curText, nil, nil)
		got, gotErr := pool.Parse(ctx, "s.proto", curText, nil, nil)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("%s: in process %v, in a worker %v", c.Name, wantErr, gotErr)
		}
		if wantErr != nil {
			continue
		}
		compared++
		if got.Text != want.Text || string(got.Descriptor) != string(want.Descriptor) || got.Fingerprint != want.Fingerprint {
			t.Fatalf("%s: the worker's text, descriptor or fingerprint differs", c.Name)
		}
		wv := strings.Join(violations(prev, want), "\n")
		gv := strings.Join(violations(prev, got), "\n")
		if wv != gv {
			t.Errorf("%s: violations differ\nin process:\n%s\nin a worker:\n%s", c.Name, wv, gv)
		}
	}
	t.Logf("%d cases compared", compared)
	if compared < 100 {
		t.Fatalf("only %d corpus cases compared", compared)
	}
}

func violations(prev, next *schema.Parsed) []string {
	var out []string
	for _, v := range compat.Check(prev.Set, next.Set, compat.BothWays) {
		out = append(out, v.String())
	}
	return out
}

// TestPoolKillsAtDeadline sends a one-line schema that takes seconds to
// compile: the call returns when its context ends, the worker is killed
// then (its CPU stops growing), and the next compilation succeeds.
func TestPoolKillsAtDeadline(t *testing.T) {
	pool := newPool(t, 1)
	if err := pool.Warm(); err != nil {
		t.Fatal(err)
	}
	big := hostile(4 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := pool.Parse(ctx, "big.proto", big, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	took := time.Since(start)
	st := pool.Stats()
	if st.Killed != 1 {
		t.Fatalf("stats %+v: want one worker killed", st)
	}
	// The killed worker had at most the time to its deadline; its CPU
	// (a Go process uses a few threads) stays within a few times that.
	if limit := 4 * took; st.CPU > limit+time.Second {
		t.Fatalf("workers used %v of CPU for a call of %v", st.CPU, took)
	}
	time.Sleep(300 * time.Millisecond)
	if again := pool.Stats().CPU; again > st.CPU+200*time.Millisecond {
		t.Fatalf("worker CPU kept growing after the kill: %v then %v", st.CPU, again)
	}
	if _, err := pool.Parse(context.Background(), "pay.proto", root, refs, fetcher(map[string]string{"money": dep})); err != nil {
		t.Fatalf("after a kill: %v", err)
	}
}

// TestPoolInvalid returns compile errors as *InvalidError, like Parse.
func TestPoolInvalid(t *testing.T) {
	pool := newPool(t, 1)
	_, err := pool.Parse(context.Background(), "x.proto", "syntax = \"proto3\"; message M { Missing m = 1; }", nil, nil)
	var inv *schema.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "Missing") {
		t.Fatalf("got %v", err)
	}
}

// hostile is a schema of about size bytes on one line.
func hostile(size int) string {
	var b strings.Builder
	b.WriteString(`syntax = "proto3"; package h; message M { `)
	for i := 1; b.Len() < size-40; i++ {
		if i == 19000 { // protobuf reserves 19000-19999
			i = 20000
		}
		b.WriteString("string f")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" = ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("; ")
	}
	b.WriteString("}")
	return b.String()
}

// A Confluent client registers the well-known types it imports as
// subjects of their own: a built-in file as the schema itself must come
// back from the worker as it does in process.
func TestPoolParsesBuiltInFileAsSchema(t *testing.T) {
	pool := newPool(t, 1)
	ctx := context.Background()
	const name = "google/protobuf/timestamp.proto"
	text := "syntax = \"proto3\";\npackage google.protobuf;\nmessage Timestamp {\n  int64 seconds = 1;\n  int32 nanos = 2;\n}\n"
	want, err := schema.Parse(ctx, name, text, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pool.Parse(ctx, name, text, nil, nil)
	if err != nil {
		t.Fatalf("in a worker: %v (in process it compiles)", err)
	}
	if got.Fingerprint != want.Fingerprint || string(got.Descriptor) != string(want.Descriptor) {
		t.Fatal("the worker's descriptor or fingerprint differs from the in-process one")
	}
}

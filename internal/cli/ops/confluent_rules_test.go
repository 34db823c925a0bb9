package ops

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// moduleRoot finds the module root above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// ruleVectors are StockDeducted payloads (biz_key
// "order_id:{order_id}:sku:{sku}"): 64 records, some with an empty
// order_id or sku, which msgcontract's producers refuse (EMPTY_FIELD).
func ruleVectors() []map[string]any {
	ids := []string{"20250101_0001", "", "o-2", " ", "订单-4", "", "o:6", "o/7"}
	skus := []string{"SKU-1", "sku 2", "", "s%4", "", "SKU-6", "é", "x"}
	var out []map[string]any
	for i, id := range ids {
		for j, sku := range skus {
			p := map[string]any{"quantity": i*len(skus) + j - 3}
			if id != "" || j%2 == 0 { // an empty string both sent and left out
				p["order_id"] = id
			}
			if sku != "" || i%2 == 1 {
				p["sku"] = sku
			}
			out = append(out, p)
		}
	}
	return out
}

// TestConfluentRuleExecution is the proof that a contract's rules, as
// `msgcontract registry push` attaches them, make Confluent's own
// serializer refuse exactly the records msgcontract refuses: it pushes the
// inventory contract to a registry, serializes every vector with
// confluent-kafka-python's ProtobufSerializer and CEL rule executor
// (.venv-registry/rules, scripts/setup-registry-client.sh), and compares
// each verdict with msgcontract's biz_key rendering. Under CI a missing
// client fails the test.
func TestConfluentRuleExecution(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	python := filepath.Join(root, ".venv-registry", "bin", "python")
	rules := filepath.Join(root, ".venv-registry", "rules")
	for _, p := range []string{python, filepath.Join(rules, "celpy")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("Confluent's Python rule executor is missing under CI: scripts/setup-registry-client.sh must install it: %v", err)
			}
			t.Skip("Confluent's Python rule executor not installed; run scripts/setup-registry-client.sh")
		}
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	const (
		subject = "inventory-event-value"
		file    = "shop/inventory/v1/inventory.proto"
		message = "shop.inventory.v1.StockDeducted"
	)
	if code, stdout, stderr := run(t, "registry", "push", "--url", ts.URL, "--subject", subject,
		"-I", examplesDir, filepath.Join(examplesDir, filepath.FromSlash(file))); code != 0 {
		t.Fatalf("push: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// msgcontract's verdict: does the biz_key render?
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{examplesDir}}, filepath.Join(examplesDir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	ev := set.Event(message)
	if ev == nil {
		t.Fatalf("no event %s", message)
	}
	vectors := ruleVectors()
	var want []string
	fails := 0
	for _, p := range vectors {
		raw, _ := json.Marshal(p)
		m := dynamicpb.NewMessage(ev.Desc)
		if err := protojson.Unmarshal(raw, m); err != nil {
			t.Fatal(err)
		}
		if _, err := ev.RenderBizKey(m); err != nil {
			want = append(want, "fail")
			fails++
		} else {
			want = append(want, "pass")
		}
	}
	if len(vectors) < 50 || fails < 10 || fails > len(vectors)-10 {
		t.Fatalf("%d vectors, %d refused: too few of one kind to prove anything", len(vectors), fails)
	}

	// Confluent's verdict.
	tmp := t.TempDir()
	vecFile := filepath.Join(tmp, "vectors.json")
	b, _ := json.Marshal(vectors)
	if err := os.WriteFile(vecFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(tmp, "gen")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	protoc := exec.CommandContext(ctx, python, "-m", "grpc_tools.protoc",
		"-I", examplesDir, "-I", filepath.Join(root, "contracts"), "--python_out", gen,
		file, "msgcontract/v1/options.proto")
	if out, err := protoc.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "confluent_rules.py"),
		ts.URL, subject, gen, "shop.inventory.v1.inventory_pb2", "StockDeducted", vecFile)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+rules)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("confluent_rules.py: %v\n%s\n%s", err, out, stderr)
	}
	var got []string
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || len(got) != len(vectors) {
		t.Fatalf("confluent_rules.py printed %s (%v)", out, err)
	}
	for i := range vectors {
		if got[i] != want[i] {
			raw, _ := json.Marshal(vectors[i])
			t.Errorf("record %d %s: Confluent's serializer says %s, msgcontract %s", i, raw, got[i], want[i])
		}
	}
	t.Logf("%d records, %d refused by both", len(vectors), fails)
}

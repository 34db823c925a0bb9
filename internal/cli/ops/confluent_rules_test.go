package ops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
	pygen "github.com/msgcontract/msgcontract/codegen/python"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
	inventoryv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/inventory/v1"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
)

// proofProto is an event with a biz_key and a state field: the state
// rule's vectors.
const proofProto = `syntax = "proto3";
package shop.proof.v1;
import "msgcontract/v1/options.proto";
option java_package = "com.example.shop.proof.v1";
option java_multiple_files = true;
enum OrderState {
  option (msgcontract.v1.state_machine) = {};
  ORDER_STATE_UNSPECIFIED = 0;
  PAYING = 1;
  PAID = 2 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
  CANCELLED = 3 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
}
message StockPaid {
  option (msgcontract.v1.event) = { topic: "stock-paid" event_type: "STOCK_PAID" biz_key: "order_id:{order_id}:sku:{sku}" target_state: "OrderState.PAID" };
  string order_id = 1;
  string sku = 2;
  int64 quantity = 3;
  OrderState state = 4;
}
`

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

// stateVectors are StockPaid payloads: every state (the target PAID, the
// others, unset, a number the enum lacks) with keys that render and keys
// that do not.
func stateVectors() []map[string]any {
	var out []map[string]any
	keys := [][2]string{{"o-1", "SKU-1"}, {"", "SKU-2"}, {"o-3", ""}, {"订单", "é"}, {"o:5", "s/5"}, {"", ""}}
	for i, state := range []any{nil, "PAYING", "PAID", "CANCELLED", 2, 9} {
		for j, k := range keys {
			p := map[string]any{"quantity": i*10 + j}
			if k[0] != "" || j%2 == 0 {
				p["order_id"] = k[0]
			}
			if k[1] != "" {
				p["sku"] = k[1]
			}
			if state != nil {
				p["state"] = state
			}
			out = append(out, p)
		}
	}
	return out
}

// proofGroup is one subject's records: what the Python scripts are given
// and what msgcontract says of each.
type proofGroup struct {
	Subject        string        `json:"subject"`
	DLQSubject     string        `json:"dlq_subject"`
	DLQTopic       string        `json:"dlq_topic"`
	PbModule       string        `json:"pb_module"`
	ContractModule string        `json:"contract_module"`
	Message        string        `json:"message"`
	Spec           string        `json:"spec"`
	Records        []proofRecord `json:"records"`
	want           []string      // msgcontract's verdict: "pass" or "fail"
	keyFails       []bool        // the Go runtime's biz_key refused it
	goPayloads     [][]byte
}

type proofRecord struct {
	JSON     map[string]any `json:"json"`
	Payloads [][]byte       `json:"payloads,omitempty"`
}

// TestConfluentRuleExecution is the proof that a contract's rules, as
// `msgcontract registry push` attaches them, make Confluent's own
// serializer refuse exactly the records msgcontract refuses, on records
// msgcontract's runtimes built. It pushes two contracts to a registry:
// examples' inventory (biz_key rules) and proofProto (biz_key and state
// rules). The Go runtime builds every record (the generated
// NewStockDeductedEnvelope, event.NewEnvelope for proofProto), the Python
// runtime (testdata/runtime_records.py: msgcontract_runtime.new_envelope
// with the module codegen/python generates) and the Java runtime
// (testdata/JavaRecords.java: Envelopes.newEnvelope with the generated
// contract classes) build them again: all must give the same payload
// bytes and the same biz_key verdict. Then
// confluent-kafka-python's ProtobufSerializer with its CEL rule executor
// (.venv-registry/rules, scripts/setup-registry-client.sh) serializes each
// payload of each runtime (testdata/confluent_rules.py), with the pushed
// rules (onFailure ERROR) and with the same rules failing with DLQ (a
// second subject), and its verdict must be msgcontract's: refused where
// the biz_key does not render (EMPTY_FIELD) or CheckState fails, routed
// to the DLQ there when the rule says DLQ. Under CI a missing client or
// runtime fails the test.
func TestConfluentRuleExecution(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", "..")) // the module root, above internal/cli/ops
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".venv-registry", "bin", "python")
	rules := filepath.Join(root, ".venv-registry", "rules")
	runtimePython := filepath.Join(root, ".venv", "bin", "python")
	for _, p := range []string{python, filepath.Join(rules, "celpy"), runtimePython} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("Confluent's Python rule executor or the Python runtime is missing under CI: scripts/setup-registry-client.sh and make runtime-python install them: %v", err)
			}
			t.Skip("Confluent's Python rule executor or the Python runtime is not installed; run scripts/setup-registry-client.sh and make runtime-python")
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

	proofDir := t.TempDir()
	const proofFile = "shop/proof/v1/proof.proto"
	const invFile = "shop/inventory/v1/inventory.proto"
	if err := os.MkdirAll(filepath.Join(proofDir, "shop", "proof", "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proofDir, filepath.FromSlash(proofFile)), []byte(proofProto), 0o644); err != nil {
		t.Fatal(err)
	}
	groups := []*proofGroup{
		{Subject: "inventory-event-value", PbModule: "shop.inventory.v1.inventory_pb2", ContractModule: "shop.inventory.v1.inventory_msgcontract", Message: "StockDeducted", Spec: "STOCK_DEDUCTED"},
		{Subject: "stock-paid-value", PbModule: "shop.proof.v1.proof_pb2", ContractModule: "shop.proof.v1.proof_msgcontract", Message: "StockPaid", Spec: "STOCK_PAID"},
	}
	for i, g := range groups {
		dir, file := examplesDir, invFile
		if i == 1 {
			dir, file = proofDir, proofFile
		}
		if code, stdout, stderr := run(t, "registry", "push", "--url", ts.URL, "--subject", g.Subject,
			"-I", dir, filepath.Join(dir, filepath.FromSlash(file))); code != 0 {
			t.Fatalf("push: exit %d\n%s\n%s", code, stdout, stderr)
		}
		g.DLQSubject = strings.TrimSuffix(g.Subject, "-value") + "-dlq-rules-value"
		g.DLQTopic = strings.TrimSuffix(g.Subject, "-value") + "-dlq"
		registerWithDLQ(t, ts.URL, g.Subject, g.DLQSubject, g.DLQTopic)
	}
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{examplesDir, proofDir}},
		filepath.Join(examplesDir, filepath.FromSlash(invFile)), filepath.Join(proofDir, filepath.FromSlash(proofFile)))
	if err != nil {
		t.Fatal(err)
	}

	// The Go runtime's records and msgcontract's verdicts.
	for _, p := range ruleVectors() {
		raw, _ := json.Marshal(p)
		m := new(inventoryv1.StockDeducted)
		if err := protojson.Unmarshal(raw, m); err != nil {
			t.Fatal(err)
		}
		env, err := inventoryv1.NewStockDeductedEnvelope(m, event.Options{})
		groups[0].add(t, p, m, env, err, nil)
	}
	paid := set.Event("shop.proof.v1.StockPaid")
	if paid == nil || datacontract.StateField(paid) == nil {
		t.Fatal("StockPaid: no event with a state field")
	}
	paidSpec := &event.Spec{FullName: paid.Name(), Topic: paid.Topic, EventType: paid.EventType, Subject: groups[1].Subject}
	for _, p := range stateVectors() {
		raw, _ := json.Marshal(p)
		m := dynamicpb.NewMessage(paid.Desc)
		if err := protojson.Unmarshal(raw, m); err != nil {
			t.Fatal(err)
		}
		var env *envelopepb.Envelope
		key, err := paid.RenderBizKey(m)
		if err == nil {
			env, err = event.NewEnvelope(paidSpec, m, key, event.Options{})
		}
		groups[1].add(t, p, m, env, err, datacontract.CheckState(paid, m))
	}
	total, fails := 0, 0
	for _, g := range groups {
		for _, w := range g.want {
			total++
			if w == "fail" {
				fails++
			}
		}
	}
	if total < 50 || fails < 10 || fails > total-10 {
		t.Fatalf("%d vectors, %d refused: too few of one kind to prove anything", total, fails)
	}

	// The Python runtime's records: the same bytes, the same biz_key verdict.
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runtimeGen, confluentGen := filepath.Join(tmp, "runtime-gen"), filepath.Join(tmp, "confluent-gen")
	// Each virtualenv's protoc, for its own protobuf runtime.
	for py, gen := range map[string]string{runtimePython: runtimeGen, python: confluentGen} {
		if err := os.MkdirAll(gen, 0o755); err != nil {
			t.Fatal(err)
		}
		protoc := exec.CommandContext(ctx, py, "-m", "grpc_tools.protoc",
			"-I", examplesDir, "-I", proofDir, "-I", filepath.Join(root, "contracts"), "--python_out", gen, invFile, proofFile)
		if py == python {
			protoc.Args = append(protoc.Args, "msgcontract/v1/options.proto")
		}
		if out, err := protoc.CombinedOutput(); err != nil {
			t.Fatalf("protoc: %v\n%s", err, out)
		}
	}
	files, err := pygen.Generate(set, emit.Params{Lang: "python"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(runtimeGen, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, out := filepath.Join(tmp, "records.json"), filepath.Join(tmp, "python-records.json")
	writeJSONFile(t, in, map[string]any{"groups": groups})
	cmd := exec.CommandContext(ctx, runtimePython, filepath.Join("testdata", "runtime_records.py"), in, out)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+strings.Join([]string{runtimeGen, filepath.Join(root, "runtime-python", "src")}, string(os.PathListSeparator)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("runtime_records.py: %v\n%s", err, b)
	}
	var pyOut struct {
		Groups []struct {
			Records []struct {
				Verdict, Code string
				Payload       []byte
			}
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pyOut); err != nil || len(pyOut.Groups) != len(groups) {
		t.Fatalf("runtime_records.py wrote %s (%v)", b, err)
	}
	for gi, g := range groups {
		pg := pyOut.Groups[gi].Records
		if len(pg) != len(g.Records) {
			t.Fatalf("%s: %d records from the Python runtime, want %d", g.Subject, len(pg), len(g.Records))
		}
		for i := range g.Records {
			r := &g.Records[i]
			pyFail := pg[i].Verdict == "fail"
			if pyFail != g.keyFails[i] || (pyFail && pg[i].Code != "EMPTY_FIELD") {
				t.Errorf("%s record %d %s: the Python runtime says %s %s, the Go runtime's biz_key fails: %v", g.Subject, i, jsonOf(r.JSON), pg[i].Verdict, pg[i].Code, g.keyFails[i])
			}
			if string(pg[i].Payload) != string(g.goPayloads[i]) {
				t.Errorf("%s record %d %s: payload %x from Python, %x from Go", g.Subject, i, jsonOf(r.JSON), pg[i].Payload, g.goPayloads[i])
			}
			r.Payloads = [][]byte{g.goPayloads[i], pg[i].Payload}
		}
	}

	// The Java runtime's records: the same bytes, the same biz_key verdict.
	runtimes := []string{"Go", "Python"}
	if javaRecs := javaRecords(ctx, t, set, []string{examplesDir, proofDir}, groups); javaRecs != nil {
		runtimes = append(runtimes, "Java")
		n := 0
		for _, g := range groups {
			for i := range g.Records {
				jr := javaRecs[n]
				n++
				if jr.fail != g.keyFails[i] || (jr.fail && jr.code != "EMPTY_FIELD") {
					t.Errorf("%s record %d %s: the Java runtime refuses it: %v %s, the Go runtime's biz_key fails: %v", g.Subject, i, jsonOf(g.Records[i].JSON), jr.fail, jr.code, g.keyFails[i])
				}
				if string(jr.payload) != string(g.goPayloads[i]) {
					t.Errorf("%s record %d %s: payload %x from Java, %x from Go", g.Subject, i, jsonOf(g.Records[i].JSON), jr.payload, g.goPayloads[i])
				}
				g.Records[i].Payloads = append(g.Records[i].Payloads, jr.payload)
			}
		}
	}

	// Confluent's verdicts, on each runtime's bytes.
	in = filepath.Join(tmp, "confluent.json")
	writeJSONFile(t, in, map[string]any{"groups": groups})
	cmd = exec.CommandContext(ctx, python, filepath.Join("testdata", "confluent_rules.py"), ts.URL, confluentGen, in)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+rules)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("confluent_rules.py: %v\n%s\n%s", err, stdout, stderr)
	}
	var got [][][][2]string
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || len(got) != len(groups) {
		t.Fatalf("confluent_rules.py printed %s (%v)", stdout, err)
	}
	dlqs := 0
	for gi, g := range groups {
		if len(got[gi]) != len(g.Records) {
			t.Fatalf("%s: %d verdicts, want %d", g.Subject, len(got[gi]), len(g.Records))
		}
		for i, r := range g.Records {
			if len(got[gi][i]) != len(runtimes) {
				t.Fatalf("%s record %d: %d verdicts, want one for each of %v", g.Subject, i, len(got[gi][i]), runtimes)
			}
			for pi, runtime := range runtimes {
				v := got[gi][i][pi]
				verdict, rule, _ := strings.Cut(v[0], ":")
				routed, dlqRule, _ := strings.Cut(v[1], ":")
				if verdict != g.want[i] {
					t.Errorf("%s record %d %s built by the %s runtime: Confluent's serializer says %s, msgcontract %s", g.Subject, i, jsonOf(r.JSON), runtime, v[0], g.want[i])
				}
				wantRouted := map[string]string{"pass": "pass", "fail": "dlq"}[g.want[i]]
				if routed != wantRouted || dlqRule != rule {
					t.Errorf("%s record %d %s built by the %s runtime: with onFailure DLQ Confluent's serializer says %s, want %s (%s)", g.Subject, i, jsonOf(r.JSON), runtime, v[1], wantRouted, v[0])
				}
				if routed == "dlq" {
					dlqs++
				}
			}
		}
	}
	t.Logf("%d records built by the %v runtimes, %d refused by msgcontract and by Confluent's serializer, %d routed to the DLQ", total, runtimes, fails, dlqs)
}

// add records one vector: m, the Go runtime's envelope (or its error:
// the biz_key did not render) and msgcontract's state check.
func (g *proofGroup) add(t *testing.T, p map[string]any, m proto.Message, env *envelopepb.Envelope, keyErr, stateErr error) {
	t.Helper()
	var payload []byte
	if keyErr == nil {
		payload = env.GetPayload()
	} else {
		var be *bizkey.Error
		if !errors.As(keyErr, &be) || be.Code != bizkey.EmptyField {
			t.Fatalf("%s: biz_key error %v is not EMPTY_FIELD", jsonOf(p), keyErr)
		}
		b, _, err := envelope.EncodePayload(m, false) // what the envelope would have carried
		if err != nil {
			t.Fatal(err)
		}
		payload = b
	}
	want := "pass"
	if keyErr != nil || stateErr != nil {
		want = "fail"
	}
	g.Records = append(g.Records, proofRecord{JSON: p})
	g.want = append(g.want, want)
	g.keyFails = append(g.keyFails, keyErr != nil)
	g.goPayloads = append(g.goPayloads, payload)
}

// registerWithDLQ registers subject's latest schema under dlqSubject with
// the same rules failing with DLQ to dlqTopic.
func registerWithDLQ(t *testing.T, base, subject, dlqSubject, dlqTopic string) {
	t.Helper()
	resp, err := http.Get(base + "/subjects/" + url.PathEscape(subject) + "/versions/latest")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	rs, _ := v["ruleSet"].(map[string]any)
	domain, _ := rs["domainRules"].([]any)
	if len(domain) == 0 {
		t.Fatalf("%s has no rules: %v", subject, v)
	}
	for _, r := range domain {
		r := r.(map[string]any)
		r["onFailure"] = datacontract.ActionDLQ
		r["params"] = map[string]string{"dlq.topic": dlqTopic}
	}
	body, _ := json.Marshal(map[string]any{"schema": v["schema"], "schemaType": "PROTOBUF", "references": v["references"], "metadata": v["metadata"], "ruleSet": rs})
	resp2, err := http.Post(base+"/subjects/"+url.PathEscape(dlqSubject)+"/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if b, _ := io.ReadAll(resp2.Body); resp2.StatusCode != http.StatusOK {
		t.Fatalf("register %s: %s %s", dlqSubject, resp2.Status, b)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type javaRecord struct {
	fail    bool
	code    string
	payload []byte
}

// javaRecords builds every group's records with msgcontract's Java runtime
// (testdata/JavaRecords.java: the generated contract classes and
// Envelopes.newEnvelope), in group order, or returns nil when the Java
// toolchain (a JDK, Maven, make runtime-java) is missing outside CI.
func javaRecords(ctx context.Context, t *testing.T, set *model.Set, importPaths []string, groups []*proofGroup) []javaRecord {
	t.Helper()
	tools, err := javabuild.Resolve(ctx)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Java runtime is missing under CI: %v", err)
		}
		t.Logf("no records from the Java runtime: %v", err)
		return nil
	}
	defer tools.Close()
	src, err := os.ReadFile(filepath.Join("testdata", "JavaRecords.java"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tools.Compile(ctx, set, importPaths, t.TempDir(), map[string]string{"io/msgcontract/proof/JavaRecords.java": string(src)})
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for gi, g := range groups {
		for _, r := range g.Records {
			fmt.Fprintf(&in, "%d\t%s\n", gi, jsonOf(r.JSON))
		}
	}
	cmd := exec.CommandContext(ctx, tools.Java, "-cp", b.Classpath(), "-XX:TieredStopAtLevel=1", "-Xshare:auto", "io.msgcontract.proof.JavaRecords")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("JavaRecords: %v\n%s", err, out)
	}
	var recs []javaRecord
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var r javaRecord
		switch {
		case len(f) == 2 && f[0] == "pass":
		case len(f) == 3 && f[0] == "fail":
			r.fail, r.code = true, f[1]
		default:
			t.Fatalf("JavaRecords printed %q", line)
		}
		if r.payload, err = base64.StdEncoding.DecodeString(f[len(f)-1]); err != nil {
			t.Fatalf("JavaRecords printed %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if n := len(groups[0].Records) + len(groups[1].Records); len(recs) != n {
		t.Fatalf("JavaRecords built %d records, want %d", len(recs), n)
	}
	return recs
}

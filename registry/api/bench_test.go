package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
)

// BenchmarkCheckFullTransitive100 times POST /compatibility against a
// subject with 100 versions at FULL_TRANSITIVE, over loopback HTTP.
func BenchmarkCheckFullTransitive100(b *testing.B) { benchmarkCheckFullTransitive(b, 100) }

// BenchmarkCheckFullTransitive1000 is the same against 1,000 versions.
func BenchmarkCheckFullTransitive1000(b *testing.B) { benchmarkCheckFullTransitive(b, 1000) }

func benchmarkCheckFullTransitive(b *testing.B, versions int) {
	url := startTestServer(b, api.Config{CompileTimeout: time.Minute})
	version := func(n int) string {
		var sb strings.Builder
		sb.WriteString(v1[:strings.LastIndex(v1, "}")])
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "  string extra_%d = %d;\n", i, i+3)
		}
		sb.WriteString("}\n")
		return sb.String()
	}
	post := func(path string, body any) {
		raw, _ := json.Marshal(body)
		resp, err := http.Post(url+path, api.ContentType, bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	for n := 1; n <= versions; n++ {
		post("/subjects/s/versions", reg(version(n)))
	}
	raw, _ := json.Marshal(map[string]string{"compatibility": "FULL_TRANSITIVE"})
	req, _ := http.NewRequest("PUT", url+"/config/s", bytes.NewReader(raw))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		b.Fatal(err)
	}
	candidate := reg(version(versions + 1))
	post("/compatibility/subjects/s/versions", candidate) // compiles the history
	for b.Loop() {
		post("/compatibility/subjects/s/versions", candidate)
	}
}

package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

// BenchmarkCheckFullTransitive100 times POST /compatibility against a
// subject with 100 versions at FULL_TRANSITIVE, over loopback HTTP.
func BenchmarkCheckFullTransitive100(b *testing.B) {
	url := startTestServer(b, api.Config{})
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
	for n := 1; n <= 100; n++ {
		post("/subjects/s/versions", reg(version(n)))
	}
	raw, _ := json.Marshal(map[string]string{"compatibility": "FULL_TRANSITIVE"})
	req, _ := http.NewRequest("PUT", url+"/config/s", bytes.NewReader(raw))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		b.Fatal(err)
	}
	candidate := reg(version(101))
	for b.Loop() {
		post("/compatibility/subjects/s/versions", candidate)
	}
}

package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// FuzzRequests sends arbitrary bodies to every endpoint that reads one.
// Every answer must be JSON; failures must carry a Confluent error code
// and never be a 500.
func FuzzRequests(f *testing.F) {
	st, err := store.Open(filepath.Join(f.TempDir(), "registry.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st, BodyLimit: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	targets := []struct{ method, path string }{
		{"POST", "/subjects/s/versions"},
		{"POST", "/subjects/s"},
		{"POST", "/compatibility/subjects/s/versions"},
		{"POST", "/compatibility/subjects/s/versions/latest"},
		{"PUT", "/config"},
		{"PUT", "/config/s"},
	}
	raw, _ := json.Marshal(reg(v1))
	for i := range targets {
		for _, body := range []string{string(raw), "", "{", "null", "[]", `{"schema": 1}`, `{"schema": "", "references": [{"name": 1}]}`,
			`{"compatibility": "FULL"}`, `{"schema": "AAAA", "schemaType": "PROTOBUF"}`,
			`{"schema": "syntax = \"proto3\"; import \"x.proto\";", "references": [{"name": "x.proto", "subject": "s", "version": -1}]}`} {
			f.Add(uint8(i), body)
		}
	}
	f.Fuzz(func(t *testing.T, target uint8, body string) {
		tg := targets[int(target)%len(targets)]
		req := httptest.NewRequest(tg.method, tg.path, strings.NewReader(body))
		req.Header.Set("Content-Type", api.ContentType)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", tg.method, tg.path, body, rec.Code, rec.Body)
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s %q: answer is not JSON: %s", tg.method, tg.path, body, rec.Body)
		}
		if rec.Code != http.StatusOK {
			if m, ok := v.(map[string]any); !ok || m["error_code"] == nil {
				t.Fatalf("%s %s %q: error without error_code: %s", tg.method, tg.path, body, rec.Body)
			}
		}
	})
}

package ops

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// compatDir is testdata/compat/breaking, relative to this package.
var compatDir = filepath.Join("..", "..", "..", "testdata", "compat", "breaking")

func TestBreakingDirectories(t *testing.T) {
	t.Parallel()
	prev := filepath.Join(compatDir, "prev")
	dir := func(name string) string { return filepath.Join(compatDir, name) }
	file := filepath.Join(compatDir, "breaking", "shop", "pay", "v1", "pay.proto")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		want     []string // lines stdout must contain
		notWant  []string
		stderrIn string
	}{
		{name: "compatible", args: []string{"--against", prev, dir("compatible")}, code: 0},
		{name: "identical", args: []string{"--against", prev, prev}, code: 0},
		{name: "breaking at FULL", args: []string{"--against", prev, dir("breaking")}, code: 1, want: []string{
			file + ":13:5: ERROR_CODE_RECLASSIFIED: error codes 50000..59999 were retryable and are now not retryable",
			file + ":23:3: STATE_TRANSITION_REMOVED: transition PAID -> REFUNDED was removed",
			file + ":26:1: FIELD_DELETED_NAME_UNRESERVED:",
			file + ":26:1: FIELD_DELETED_NUMBER_UNRESERVED:",
			file + ":30:14: EVENT_BIZ_KEY_CHANGED:",
		}},
		{name: "breaking at FORWARD", args: []string{"--against", prev, "--level", "forward", dir("breaking")}, code: 1,
			want: []string{"FIELD_DELETED_NUMBER_UNRESERVED", "EVENT_BIZ_KEY_CHANGED"}, notWant: []string{"FIELD_DELETED_NAME_UNRESERVED"}},
		{name: "breaking at NONE", args: []string{"--against", prev, "--level", "NONE", dir("breaking")}, code: 0},
		{name: "does not compile", args: []string{"--against", prev, dir("broken")}, code: 2, stderrIn: "unknown type Note"},
		{name: "previous does not compile", args: []string{"--against", dir("broken"), prev}, code: 2, stderrIn: "unknown type Note"},
		{name: "no --against", args: []string{prev}, code: 2, stderrIn: "--against"},
		{name: "bad level", args: []string{"--against", prev, "--level", "SIDEWAYS", prev}, code: 2, stderrIn: "FULL_TRANSITIVE"},
		{name: "not a directory", args: []string{"--against", prev, file}, code: 2, stderrIn: "not a directory"},
		{name: "URL without subject", args: []string{"--against", "http://127.0.0.1:1", prev}, code: 2, stderrIn: "--subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(t, append([]string{"breaking"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			if tc.code == 0 && stdout != "" {
				t.Errorf("compatible, yet printed:\n%s", stdout)
			}
			if !strings.Contains(stderr, tc.stderrIn) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderrIn, stderr)
			}
		})
	}
}

// TestRegistryClientCommands pushes and checks contracts against a real
// registry on loopback, then runs breaking against it.
func TestRegistryClientCommands(t *testing.T) {
	t.Parallel()
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
	contract := func(v string) []string {
		return []string{"-I", filepath.Join(compatDir, v), filepath.Join(compatDir, v, "shop", "pay", "v1", "pay.proto")}
	}
	cmd := func(name string, v string, extra ...string) []string {
		args := append([]string{"registry", name, "--url", ts.URL, "--subject", "pay-value"}, extra...)
		return append(args, contract(v)...)
	}
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{cmd("check", "prev"), 2, ""},                                        // its import is not registered yet
		{cmd("push", "prev"), 0, "subject pay-value version 1, schema id 3"}, // after options.proto and money.proto
		{cmd("push", "prev"), 0, "subject pay-value version 1, schema id 3"}, // after options.proto and money.proto
		{cmd("check", "compatible"), 0, ""},
		{cmd("check", "breaking"), 1, filepath.Join(compatDir, "breaking", "shop", "pay", "v1", "pay.proto") + ":30:14: EVENT_BIZ_KEY_CHANGED:"},
		{cmd("push", "breaking"), 1, "pay-value.proto:13:5: ERROR_CODE_RECLASSIFIED:"},
		{append([]string{"breaking", "--against", ts.URL, "--subject", "pay-value"}, contract("breaking")...), 1, "pay.proto:30:14: EVENT_BIZ_KEY_CHANGED:"},
		{append([]string{"breaking", "--against", ts.URL, "--subject", "pay-value"}, contract("compatible")...), 0, ""},
		{cmd("push", "compatible"), 0, "version 2"},
		{append([]string{"breaking", "--against", ts.URL, "--subject", "pay-value", "--level", "FULL_TRANSITIVE"}, contract("compatible")...), 0, ""},
		{append([]string{"breaking", "--against", ts.URL, "--subject", "nope"}, contract("compatible")...), 2, ""},
		{[]string{"registry", "push", "--url", ts.URL, filepath.Join(compatDir, "prev", "shop", "common", "v1", "money.proto")}, 2, ""},
	}
	for _, s := range steps {
		code, stdout, stderr := run(t, s.args...)
		if code != s.code || !strings.Contains(stdout, s.out) {
			t.Fatalf("%v: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", s.args, code, s.code, stdout, stderr)
		}
	}
}

func TestRegistryServeRefusesOpenAddressWithoutToken(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "r.db")
	code, _, stderr := run(t, "registry", "serve", "--addr", "0.0.0.0:0", "--db", db)
	if code != cli.ExitUsage || !strings.Contains(stderr, "--insecure") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, "registry", "serve", "--addr", "127.0.0.1:0")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--db") {
		t.Fatalf("without --db: exit %d, stderr %q", code, stderr)
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:8081": true, "localhost:8081": true, "[::1]:8081": true,
		"0.0.0.0:8081": false, ":8081": false, "10.0.0.5:8081": false, "example.com:80": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestRegistryServe runs the serve command on loopback with a token file,
// talks to it, and stops it by cancelling its context as SIGTERM would.
func TestRegistryServe(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- Execute(ctx, []string{"registry", "serve", "--addr", addr, "--db", filepath.Join(dir, "r.db"), "--token-file", tokenFile}, io.Discard, &syncWriter{w: &stderr})
	}()
	url := "http://" + addr
	var resp *http.Response
	for range 100 {
		if resp, err = http.Get(url + "/subjects"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server did not come up: %v", err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("PUT", url+"/config", strings.NewReader(`{"compatibility":"FULL"}`))
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("PUT without the token: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest("PUT", url+"/config", strings.NewReader(`{"compatibility":"FULL"}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT with the token: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("serve exited %d after shutdown", code)
	}
}

// syncWriter serializes writes from the server goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestRegistryServeHelpAuth: serve's help says how to authenticate, for
// curl (Bearer) and for Confluent's clients (HTTP Basic).
func TestRegistryServeHelpAuth(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "registry", "serve", "--help")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Authorization: Bearer <token>", "HTTP Basic", "basic.auth.user.info=USER:<token>", "basic.auth.credentials.source=USER_INFO"} {
		if !strings.Contains(out, want) {
			t.Errorf("registry serve --help lacks %q:\n%s", want, out)
		}
	}
}

// TestRegistryServeAccessFile: serve with --access-file authenticates
// with the file's users, picks up a changed file while running, and
// refuses flags that cannot work together with a usage error that says
// where.
func TestRegistryServeAccessFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hash, err := access.HashSecret("pw")
	if err != nil {
		t.Fatal(err)
	}
	accessFile := filepath.Join(dir, "access.yaml")
	base := fmt.Sprintf("anonymous: none\nusers:\n  - name: alice\n    password_hash: %q\ngrants:\n  - to: [user:alice]\n    role: reader\n", hash)
	if err := os.WriteFile(accessFile, []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"both files", []string{"--access-file", accessFile, "--token-file", accessFile}, "exclude each other"},
		{"cert without key", []string{"--access-file", accessFile, "--tls-cert", accessFile}, "--tls-cert and --tls-key go together"},
		{"short csrf key", []string{"--access-file", accessFile, "--csrf-key-file", accessFile + ".short"}, "at least 32"},
	} {
		_ = os.WriteFile(accessFile+".short", []byte("short"), 0o600)
		code, _, stderr := run(t, append([]string{"registry", "serve", "--addr", "127.0.0.1:0", "--db", db}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d with %q", tc.name, code, stderr, cli.ExitUsage, tc.want)
		}
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("grants:\n  - to: [user:alice]\n    role: owner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "registry", "serve", "--db", db, "--access-file", broken); code != cli.ExitUsage || !strings.Contains(stderr, broken+":2:5") {
		t.Errorf("a broken access file: exit %d, stderr %q; want its file:line:col", code, stderr)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	sw := &syncWriter{w: &stderr}
	go func() {
		done <- Execute(ctx, []string{"registry", "serve", "--addr", addr, "--db", db, "--access-file", accessFile}, io.Discard, sw)
	}()
	put := func() int {
		req, _ := http.NewRequest("PUT", "http://"+addr+"/config", strings.NewReader(`{"compatibility":"FULL"}`))
		req.SetBasicAuth("alice", "pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var got int
	for range 200 {
		if got = put(); got != 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != http.StatusForbidden {
		t.Fatalf("a reader changing the global config: %d, want 403", got)
	}
	if err := os.WriteFile(accessFile, []byte(strings.Replace(base, "role: reader", "role: admin", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(accessFile, later, later); err != nil {
		t.Fatal(err)
	}
	// The file is polled every 2 s.
	deadline := time.Now().Add(15 * time.Second)
	for got = put(); got != http.StatusOK && time.Now().Before(deadline); got = put() {
		time.Sleep(100 * time.Millisecond)
	}
	if got != http.StatusOK {
		t.Fatalf("after granting admin in the running server's file: %d, want 200", got)
	}
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("serve exited %d", code)
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if !strings.Contains(stderr.String(), "access: reloaded "+accessFile) {
		t.Errorf("the reload was not reported:\n%s", stderr.String())
	}
}

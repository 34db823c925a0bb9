package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
)

// serveEnv makes the test binary a registry server on the database it
// names (the crash test re-executes itself).
const serveEnv = "MSGCONTRACT_TEST_REGISTRY_DB"

func TestMain(m *testing.M) {
	schema.RunWorkerIfAsked()
	if db := os.Getenv(serveEnv); db != "" {
		if err := serveForTest(db); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	code := m.Run()
	if testPool != nil {
		testPool.Close()
	}
	os.Exit(code)
}

// testPool is the compilation workers every test server shares, so the
// API tests exercise the path a served registry takes.
var testPool *schema.Pool

func workers(tb testing.TB) *schema.Pool {
	tb.Helper()
	poolOnce.Do(func() { testPool, poolErr = schema.NewPool(2) })
	if poolErr != nil {
		tb.Fatal(poolErr)
	}
	return testPool
}

var (
	poolOnce sync.Once
	poolErr  error
)

func serveForTest(db string) error {
	st, err := store.Open(db)
	if err != nil {
		return err
	}
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	return http.Serve(ln, srv)
}

// startServer runs the test binary as a server process on db and returns
// it with its base URL.
func startServer(t *testing.T, db string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+db)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("server did not start: %v", err)
	}
	return cmd, "http://" + strings.TrimSpace(addr)
}

// TestSIGKILLDuringWrites kills the server process while clients register,
// restarts it on the same database and checks that every acknowledged
// registration survived, versions are consecutive and the store is sound.
func TestSIGKILLDuringWrites(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "registry.db")
	cmd, url := startServer(t, db)
	c := &client{t: t, url: url}
	c.expect("PUT", "/config/burst", map[string]string{"compatibility": "NONE"}, 200, 0)

	var (
		mu    sync.Mutex
		acked = map[string]float64{} // schema text -> id
		wg    sync.WaitGroup
		once  sync.Once
	)
	const killAfter = 40
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				text := fmt.Sprintf("syntax = \"proto3\";\npackage burst;\nmessage W%dN%d { string a = 1; }\n", w, i)
				raw, _ := json.Marshal(reg(text))
				req, _ := http.NewRequestWithContext(ctx, "POST", url+"/subjects/burst/versions", strings.NewReader(string(raw)))
				req.Header.Set("Content-Type", api.ContentType)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return // the server is gone
				}
				var out map[string]float64
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					return
				}
				mu.Lock()
				acked[text] = out["id"]
				n := len(acked)
				mu.Unlock()
				if n >= killAfter {
					once.Do(func() { _ = cmd.Process.Kill() }) // SIGKILL
				}
			}
		}()
	}
	wg.Wait()
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the server ended with %v, not by SIGKILL: the crash did not happen", cmd.ProcessState)
	}

	_, url = startServer(t, db)
	c = &client{t: t, url: url}
	var versions []int
	if err := json.Unmarshal(c.expect("GET", "/subjects/burst/versions", nil, 200, 0).body, &versions); err != nil {
		t.Fatal(err)
	}
	for i, v := range versions {
		if v != i+1 {
			t.Fatalf("versions after restart are not consecutive: %v", versions)
		}
	}
	if len(versions) < len(acked) {
		t.Fatalf("%d registrations were acknowledged but only %d versions survived", len(acked), len(versions))
	}
	for text, id := range acked {
		got := c.expect("POST", "/subjects/burst", reg(text), 200, 0).json(t).(map[string]any)
		if got["id"] != id {
			t.Fatalf("acknowledged schema id %v came back as %v", id, got["id"])
		}
	}
	next := c.expect("POST", "/subjects/burst/versions", reg("syntax = \"proto3\";\npackage burst;\nmessage After { string a = 1; }\n"), 200, 0).json(t).(map[string]any)
	if got := c.expect("GET", "/subjects/burst/versions/latest", nil, 200, 0).json(t).(map[string]any); got["version"] != float64(len(versions)+1) || got["id"] != next["id"] {
		t.Fatalf("registration after restart: %v", got)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

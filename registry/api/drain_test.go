package api_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
)

// TestRefusalAnsweredBeforeDrain sends requests the registry refuses
// before their body has arrived — one larger than the body limit, and one
// whose body does not arrive within the compile budget — and stops
// sending after the first 64 KiB until it has the answer. The refusal
// must come while the body is still unsent (the server answers first),
// and the rest of the body must then be taken (the server drains it after
// answering) so that the connection ends cleanly, not with a reset.
func TestRefusalAnsweredBeforeDrain(t *testing.T) {
	base := startTestServer(t, api.Config{CompileTimeout: 300 * time.Millisecond})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		path   string
		length int
		status int
	}{
		{"too large", "/subjects/s", api.DefaultBodyLimit + 1<<20, http.StatusRequestEntityTooLarge},
		{"timed out", "/compatibility/subjects/s/versions/latest", 1 << 20, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Bound the whole exchange; a server that waits for the body
			// before answering makes the read below wait forever.
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			body := bytes.Repeat([]byte(" "), tc.length)
			copy(body, `{"schema": "`)
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", tc.path, u.Host, api.ContentType, tc.length)
			first := 64 << 10
			if _, err := conn.Write(append([]byte(head), body[:first]...)); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			t0 := time.Now()
			resp, err := http.ReadResponse(r, nil)
			t.Logf("answer after %v", time.Since(t0))
			if err != nil {
				t.Fatalf("no answer before the body was sent: %v", err)
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != tc.status {
				t.Fatalf("answered %d, want %d: %s", resp.StatusCode, tc.status, msg)
			}
			if !strings.Contains(string(msg), "error_code") {
				t.Fatalf("the refusal has no error_code: %s", msg)
			}
			if _, err := conn.Write(body[first:]); err != nil {
				t.Fatalf("the server stopped taking the body after answering: %v", err)
			}
			// The server drains the body, then may keep the connection or
			// close it: either way without a reset.
			_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err = io.Copy(io.Discard, r)
			var ne net.Error
			if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("after the body: %v", err)
			}
		})
	}
}

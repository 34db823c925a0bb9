package main

import (
	"net"
	"net/http"
	"sync"
)

// ledger is the downstream the payment-callback service books payments
// with. It answers 503 to its first failFirst calls: an outage the
// consumer rides out with the contract's retry policy.
type ledger struct {
	mu        sync.Mutex
	failFirst int
	calls     int
	failed    int
	// firstFailed is the order whose booking failed first: its trace
	// shows the retries.
	firstFailed string
	srv         *http.Server
	URL         string
}

func startLedger(failFirst int) (*ledger, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &ledger{failFirst: failFirst, URL: "http://" + ln.Addr().String()}
	l.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.calls++
		fail := l.calls <= l.failFirst
		if fail {
			l.failed++
			if l.firstFailed == "" {
				l.firstFailed = r.URL.Query().Get("order_id")
			}
		}
		l.mu.Unlock()
		if fail {
			http.Error(w, "ledger is restarting", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go l.srv.Serve(ln)
	return l, nil
}

func (l *ledger) stats() (calls, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.failed
}

// firstFailedOrder is the order whose booking the ledger failed first, ""
// when it failed none.
func (l *ledger) firstFailedOrder() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstFailed
}

func (l *ledger) close() { l.srv.Close() }

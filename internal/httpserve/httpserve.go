// Package httpserve runs an HTTP server until its context ends, then
// shuts it down gracefully: the one serving loop of `msgcontract
// registry serve` and the demo's console.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Run serves hs on ln until ctx ends or the server fails. When ctx ends,
// requests under way get grace to finish before the connections are
// closed; a clean shutdown returns nil.
func Run(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		err := hs.Shutdown(stop)
		if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
			err = serveErr
		}
		return err
	}
}

// Package natsserver runs a real NATS JetStream server inside the current
// process, on a free loopback port, storing in a directory of the caller's.
// The tests, the chaos harness and the demo use it so that the NATS
// transport is always exercised against a real server; services connect to
// their own NATS deployment instead and never import this package.
package natsserver

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyWithin bounds the wait for the server to accept connections; a
// loaded machine can take seconds.
const readyWithin = 30 * time.Second

// Server is an embedded JetStream server.
type Server struct {
	srv *server.Server
}

// Start runs a JetStream server on 127.0.0.1 and a random port, storing
// its streams under storeDir, and returns once it accepts connections.
func Start(storeDir string) (*Server, error) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: storeDir, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyWithin) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats server: not accepting connections after %v", readyWithin)
	}
	return &Server{srv: srv}, nil
}

// URL is the server's client URL (nats://127.0.0.1:PORT).
func (s *Server) URL() string { return s.srv.ClientURL() }

// Connect opens a client connection to the server.
func (s *Server) Connect() (*nats.Conn, error) {
	nc, err := nats.Connect(s.URL())
	if err != nil {
		return nil, fmt.Errorf("nats connect %s: %w", s.URL(), err)
	}
	return nc, nil
}

// Close shuts the server down and waits until it has.
func (s *Server) Close() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

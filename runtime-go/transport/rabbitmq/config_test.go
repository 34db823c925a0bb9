package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

func TestValidate(t *testing.T) {
	ok := Config{URL: "amqp://guest:guest@127.0.0.1:5672/"}
	tests := []struct {
		name string
		edit func(c *Config)
		want string // "" when valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"amqps", func(c *Config) { c.URL = "amqps://u:p@broker:5671/vh" }, ""},
		{"no URL", func(c *Config) { c.URL = "" }, "Config.URL is required"},
		{"wrong scheme", func(c *Config) { c.URL = "nats://x:4222" }, "not an amqp://"},
		{"prefix with slash", func(c *Config) { c.Prefix = "a/b" }, `Prefix "a/b"`},
		{"topology topic pattern", func(c *Config) { c.Topology = map[string][]string{"a.#": {"g"}} }, `topic "a.#"`},
		{"topology group with slash", func(c *Config) { c.Topology = map[string][]string{"t": {"g/1"}} }, `group "g/1"`},
		{"prefetch", func(c *Config) { c.Prefetch = 70000 }, "Prefetch 70000"},
		{"min delay not a power of two", func(c *Config) { c.MinDelay = 20 * time.Millisecond }, "MinDelay 20ms"},
		{"min delay too long", func(c *Config) { c.MinDelay = 2048 * time.Millisecond }, "MinDelay"},
		{"min delay 1ms", func(c *Config) { c.MinDelay = time.Millisecond }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			c.setDefaults()
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestValidateRedactsPassword(t *testing.T) {
	c := Config{URL: "http://user:secret@host/"}
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Validate = %v: want an error without the password", err)
	}
}

func TestBucket(t *testing.T) {
	tests := []struct {
		wait   time.Duration
		exp    int
		queued bool
	}{
		{0, 0, false},
		{15 * time.Millisecond, 0, false},
		{16 * time.Millisecond, 4, true},
		{31 * time.Millisecond, 4, true},
		{32 * time.Millisecond, 5, true},
		{200 * time.Millisecond, 7, true}, // 128 ms, then 64, then held
		{time.Hour, 21, true},             // 2^21 ms = 35 min
		{100 * 24 * time.Hour, maxBucketExp, true},
	}
	for _, tc := range tests {
		exp, ok := bucket(tc.wait, 4)
		if exp != tc.exp || ok != tc.queued {
			t.Errorf("bucket(%v) = %d, %v; want %d, %v", tc.wait, exp, ok, tc.exp, tc.queued)
		}
	}
}

func TestNames(t *testing.T) {
	n := names{"msgcontract"}
	for got, want := range map[string]string{
		n.topicExchange():            "msgcontract",
		n.retryExchange():            "msgcontract.retry",
		n.delayExchange():            "msgcontract.delay",
		n.unrouted():                 "msgcontract.unrouted",
		n.dlq():                      "msgcontract.dlq",
		n.queue("billing", "pay.v1"): "msgcontract/billing/pay.v1",
		n.delayQueue("billing", 4):   "msgcontract.delay/billing/16",
		n.delayQueue("billing", 31):  "msgcontract.delay/billing/2147483648",
	} {
		if got != want {
			t.Errorf("name %q, want %q", got, want)
		}
	}
}

// TestPermanent: New and Subscribe wait out a broker that drops or refuses
// connections, and give up at once when the broker refuses the request.
func TestPermanent(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false},
		{"reset while declaring", &amqp.Error{Code: amqp.FrameError, Reason: "read: connection reset by peer"}, false},
		{"connection closed", fmt.Errorf("rabbitmq: declare queue q: %w", amqp.ErrClosed), false},
		{"node shutting down", &amqp.Error{Code: amqp.ConnectionForced, Reason: "shutdown", Server: true}, false},
		{"wrong password", &amqp.Error{Code: amqp.AccessRefused, Server: true}, true},
		{"other queue arguments", fmt.Errorf("rabbitmq: declare queue q: %w", &amqp.Error{Code: amqp.PreconditionFailed, Server: true}), true},
		{"transport closed", transport.ErrClosed, true},
	}
	for _, tt := range tests {
		if got := permanent(tt.err); got != tt.want {
			t.Errorf("%s: permanent(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestUntilUpStopsAtDeadline: a broker that never comes back ends the
// wait when the context does, with the last error.
func TestUntilUpStopsAtDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	tries := 0
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	err := untilUp(ctx, func() error { tries++; return refused })
	if !errors.Is(err, syscall.ECONNREFUSED) || tries < 2 {
		t.Fatalf("untilUp = %v after %d tries; want the refusal, after more than one try", err, tries)
	}
	tries = 0
	err = untilUp(context.Background(), func() error { tries++; return &amqp.Error{Code: amqp.AccessRefused} })
	if err == nil || tries != 1 {
		t.Fatalf("untilUp = %v after %d tries; want the refusal after one", err, tries)
	}
}

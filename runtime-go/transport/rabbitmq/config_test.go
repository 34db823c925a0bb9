package rabbitmq

import (
	"strings"
	"testing"
	"time"
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

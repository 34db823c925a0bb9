package kafka

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the joined error; none: valid
	}{
		{"defaults", Config{Brokers: []string{"b:9092"}}, nil},
		{"no brokers", Config{}, []string{"Config.Brokers is required"}},
		{"everything wrong", Config{Namespace: "a/b", Partitions: -1, MaxBuffered: -1, Lease: -time.Second},
			[]string{"Brokers is required", `Namespace "a/b"`, "Partitions -1", "MaxBuffered -1", "Lease -1s is negative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.setDefaults()
			err := cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	tr := &Transport{cfg: Config{Namespace: "ns."}}
	for got, want := range map[string]string{
		tr.topicName("order-event"):                      "ns.order-event",
		tr.retryTopic("payment callback", "order-event"): "ns.order-event.retry.payment_callback",
		tr.dlqTopic("order-event"):                       "ns.order-event.dlq",
		tr.opsTopic("order-event"):                       "ns.order-event.dlq.ops",
		tr.groupName("payments"):                         "ns.payments",
	} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

func TestParseID(t *testing.T) {
	t.Parallel()
	for id, ok := range map[string]bool{
		"order-event/0/42": true, "a.b_c/12/0": true,
		"999999": false, "order-event/x/1": false, "/0/1": false, "t/0/1/2": false, "t/0/": false,
	} {
		topic, got := parseID(id)
		if got != ok || (ok && topic != strings.Split(id, "/")[0]) {
			t.Errorf("parseID(%q) = %q, %v; want ok=%v", id, topic, got, ok)
		}
	}
}

// Nothing listening: New fails after ConnectTimeout with the error the
// issue asks for, no broker needed.
func TestNewUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = New(context.Background(), Config{Brokers: []string{addr}, ConnectTimeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "kafka: broker "+addr+" unreachable after 2s") {
		t.Fatalf("err = %v", err)
	}
}

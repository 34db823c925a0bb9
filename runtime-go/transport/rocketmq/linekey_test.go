package rocketmq

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// A message joins the line of its biz_key: a msgcontract publisher's
// sharding key when it has one, else the envelope's, decoded; a body that
// is no envelope joins none. (The received message's properties are the
// sent message's, marshalled as the broker stores them.)
func TestLineKey(t *testing.T) {
	body, err := envelope.Marshal(&envelopepb.Envelope{MessageId: "m1", BizKey: "order-7", Topic: "orders", EventType: "E"})
	if err != nil {
		t.Fatal(err)
	}
	fromGo := message("orders", "orders", &envelopepb.Envelope{MessageId: "m1", BizKey: "order-7"}, []byte("not decoded"),
		time.Time{}, time.Time{})
	foreign := primitive.NewMessage("orders", body)
	foreign.WithShardingKey("tenant-3") // not msgcontract's: no MSGCONTRACT_TOPIC
	fiveX := primitive.NewMessage("orders", body)
	fiveX.WithProperty(PropTopic, "orders") // a Java or Python publisher: no sharding key
	for _, tc := range []struct {
		name string
		m    *primitive.Message
		want string
	}{
		{"a Go publisher's: its sharding key, the body not decoded", fromGo, "order-7"},
		{"a foreign producer's sharding key: the envelope's biz_key", foreign, "order-7"},
		{"a 5.x publisher's: the envelope's biz_key", fiveX, "order-7"},
		{"no envelope: no line", primitive.NewMessage("orders", []byte{0xff, 0xff}), ""},
	} {
		got := &primitive.MessageExt{}
		got.Body = tc.m.Body
		for _, kv := range strings.Split(tc.m.MarshallProperties(), "\x02") { // the broker's separators
			if k, v, ok := strings.Cut(kv, "\x01"); ok {
				got.WithProperty(k, v)
			}
		}
		if k := lineKey(got); k != tc.want {
			t.Errorf("%s: key %q, want %q", tc.name, k, tc.want)
		}
	}
}

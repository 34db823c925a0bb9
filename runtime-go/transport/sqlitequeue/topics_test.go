package sqlitequeue_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// Each delivery carries the topic it was published to, through Fetch and
// FetchTx, for a group on one topic (whose rows' topic is not read back)
// and for a group on two.
func TestDeliveryTopics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		topics []string
	}{{[]string{"a"}}, {[]string{"a", "b"}}} {
		for _, viaTx := range []bool{false, true} {
			tr, err := sqlitequeue.Open(ctx, filepath.Join(t.TempDir(), "q.db"),
				sqlitequeue.Config{PollInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			sub, err := tr.Subscribe(ctx, "g", c.topics)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			for _, topic := range c.topics {
				if err := tr.Publish(ctx, topic, &envelopepb.Envelope{BizKey: "k-" + topic, EventType: "E"}); err != nil {
					t.Fatal(err)
				}
			}
			var ds []*transport.Delivery
			if viaTx {
				tf := sub.(transport.TxFetcher)
				tx, err := tf.AckDB().BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				ds, err = tf.FetchTx(ctx, tx, 10)
				if err != nil {
					t.Fatal(err)
				}
			} else if ds, err = sub.Fetch(ctx, 10); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Topic)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.topics) {
				t.Errorf("topics %v (FetchTx %v): delivery topics %v, want %v", c.topics, viaTx, got, c.topics)
			}
		}
	}
}

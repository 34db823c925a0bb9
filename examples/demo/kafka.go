package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

// brokersEnv is the variable scripts/with-kafka.sh sets to its broker's
// address; -brokers defaults to it.
const brokersEnv = "MSGCONTRACT_KAFKA_BROKERS"

// kafkaTransport is runtime-go's kafka transport on a real broker, every
// topic and group of this run under a namespace of its own, so a rerun
// against the same broker never sees an earlier run's records. Event
// records are in the Confluent wire format: the relay frames each payload
// with the schema id the demo's registry gave the contract, and both
// consumers check the id against the event's subject there.
type kafkaTransport struct {
	*kafka.Transport
	brokers   []string
	namespace string
	registry  string
}

func openKafka(ctx context.Context, brokers, registry string) (*kafkaTransport, error) {
	if brokers == "" {
		brokers = os.Getenv(brokersEnv)
	}
	if brokers == "" {
		return nil, fmt.Errorf("-transport kafka needs -brokers host:port (or %s); `make demo TRANSPORT=kafka` starts a broker", brokersEnv)
	}
	now := time.Now().UTC()
	t := &kafkaTransport{brokers: strings.Split(brokers, ","), registry: registry,
		namespace: fmt.Sprintf("demo-%s-%09d.", now.Format("20060102-150405"), now.Nanosecond())}
	// Three partitions are plenty for the demo's few hundred records; the
	// session stays at its default (10 s): no member crashes here, and a
	// longer session keeps a loaded machine from a needless rebalance.
	var err error
	t.Transport, err = kafka.New(ctx, kafka.Config{Brokers: t.brokers, Namespace: t.namespace, Partitions: 3,
		Confluent: &kafka.ConfluentConfig{RegistryURL: registry}})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *kafkaTransport) describe() string {
	return fmt.Sprintf("Apache Kafka at %s (topics and groups under %q, Confluent wire format with ids from %s)",
		strings.Join(t.brokers, ","), t.namespace, t.registry)
}

func (t *kafkaTransport) pythonArgs() []string {
	return []string{"--kafka", strings.Join(t.brokers, ","), "--namespace", t.namespace, "--registry", t.registry}
}

// queued sums the groups' lag on the event topic and their retry topics:
// records not committed yet, which includes those handled but waiting for
// the next commit and retry copies not due yet. A topic the broker does
// not serve yet (just created, its partitions still being placed) counts
// as one queued record: the drain waits for it.
func (t *kafkaTransport) queued(ctx context.Context, groups []string) (int, error) {
	total := 0
	for _, g := range groups {
		n, err := t.Backlog(ctx, g, topic)
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			n, err = 1, nil
		}
		if err != nil {
			return 0, fmt.Errorf("backlog of %s: %w", g, err)
		}
		total += int(n)
	}
	return total, nil
}

// deadLetters reads the group's records of the dead-letter topic
// (order-event.dlq, both languages write there) through dlq.Store.
func (t *kafkaTransport) deadLetters(ctx context.Context, group string) ([]dlq.Record, error) {
	return t.List(ctx, dlq.Filter{Topic: topic, Group: group, Limit: 1 << 20})
}

// dlqAddr is the run's dead-letter store as dlqopen (and `msgcontract dlq
// --kafka`) address it.
func (t *kafkaTransport) dlqAddr() string {
	return "kafka://" + strings.Join(t.brokers, ",") + "?namespace=" + url.QueryEscape(t.namespace)
}

// framing reads every record of the event topic and counts them by the
// schema id of their Confluent frame; records that are not framed count
// under id -1.
func (t *kafkaTransport) framing(ctx context.Context) (map[int32]int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	name := t.namespace + topic
	cl, err := kgo.NewClient(kgo.SeedBrokers(t.brokers...), kgo.ConsumeTopics(name),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, name)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", name, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	ids := map[int32]int{}
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		var errs []error
		fs.EachError(func(_ string, _ int32, err error) { errs = append(errs, err) })
		if len(errs) > 0 {
			return nil, fmt.Errorf("reading %s: %w", name, errors.Join(errs...))
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; !ok || r.Offset >= end {
				return
			}
			id := int32(-1)
			if confluent.IsFramed(r.Value) {
				if fid, _, _, err := confluent.Unframe(r.Value); err == nil {
					id = fid
				}
			}
			ids[id]++
			if r.Offset == want[r.Partition]-1 {
				delete(want, r.Partition)
			}
		})
	}
	return ids, nil
}

package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Record headers the transport writes.
const (
	// headerTopic is the original topic of a retry or replay record.
	headerTopic = "msgcontract.topic"
)

// Transport is the Kafka transport: a transport.Publisher, a
// transport.Subscriber and a dlq.Store. It is safe for concurrent use.
type Transport struct {
	cfg   Config
	cl    *kgo.Client // producer and admin requests
	adm   *kadm.Client
	lag   *prometheus.GaugeVec
	known sync.Map // topic name -> struct{}: checked or created
	wire  *wire    // nil unless Config.Confluent
}

var (
	_ transport.Publisher  = (*Transport)(nil)
	_ transport.Subscriber = (*Transport)(nil)
)

// New validates cfg, connects to the cluster and returns the Transport.
// A cluster that does not answer within ConnectTimeout is an error naming
// the brokers, never a hang.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.DialTimeout(cfg.ConnectTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()), // with the idempotent producer, franz-go's default
		kgo.RecordDeliveryTimeout(cfg.PublishTimeout),
		kgo.ProducerLinger(time.Millisecond),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)), // murmur2 of the key, as the Java client
		// Records go only to topics ensure has seen; a broker that has just
		// created one names it in its metadata before it hosts the
		// partitions, and answers UNKNOWN_TOPIC_OR_PARTITION meanwhile
		// (seconds on a loaded machine). franz-go's default gives up after
		// 4 such answers; PublishTimeout bounds the wait instead.
		kgo.UnknownTopicRetries(-1),
	}, cfg.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	t := &Transport{cfg: cfg, cl: cl, adm: kadm.NewClient(cl), wire: newWire(cfg.Confluent, cfg.Logger)}
	if err := t.ping(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if cfg.Registerer != nil {
		t.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "msgcontract", Name: "consumer_lag_messages",
			Help: "Records of a partition behind its high watermark, after this consumer's last fetch.",
		}, []string{"group", "topic", "partition"})
		if err := cfg.Registerer.Register(t.lag); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				cl.Close()
				return nil, fmt.Errorf("kafka: register lag gauge: %w", err)
			}
			t.lag = are.ExistingCollector.(*prometheus.GaugeVec)
		}
	}
	return t, nil
}

// ping asks the cluster for metadata within ConnectTimeout.
func (t *Transport) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	return t.reach(ctx, func() error { return t.cl.Ping(ctx) })
}

// reach runs op until it succeeds or ctx ends, a quarter second apart.
// franz-go tries each broker once (a refused connection fails at once),
// so a broker that is starting or restarting gets until ctx's end
// (ConnectTimeout) to answer, as the error then says.
func (t *Transport) reach(ctx context.Context, op func() error) error {
	for {
		err := op()
		if err == nil {
			return nil
		}
		if sleep(ctx, 250*time.Millisecond); ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("kafka: %w", ctx.Err()) // the caller gave up, the broker is not to blame
			}
			return t.unreachable(err)
		}
	}
}

func (t *Transport) unreachable(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("kafka: %w", err) // the caller gave up, the broker is not to blame
	}
	return fmt.Errorf("kafka: broker %s unreachable after %v: %w (is the cluster up, and are Brokers and the TLS/SASL options right?)",
		strings.Join(t.cfg.Brokers, ","), t.cfg.ConnectTimeout, err)
}

// Close closes the producer; pending publishes are flushed first.
func (t *Transport) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.PublishTimeout)
	defer cancel()
	err := t.cl.Flush(ctx)
	t.cl.Close()
	return err
}

// Publish publishes env to topic: the record key is env.biz_key, so one
// key's events go to one partition and stay in order; the value is the
// encoded envelope, or with Config.Confluent the framed payload.
func (t *Transport) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	r, err := t.eventRecord(ctx, topic, env)
	if err != nil {
		return err
	}
	return t.produce(ctx, r)
}

// eventRecord is env's record on topic.
func (t *Transport) eventRecord(ctx context.Context, topic string, env *envelopepb.Envelope) (*kgo.Record, error) {
	r := &kgo.Record{Topic: t.topicName(topic), Key: []byte(env.GetBizKey())}
	if t.wire != nil {
		value, head, err := t.wire.frame(ctx, topic, env)
		if err != nil {
			return nil, fmt.Errorf("kafka: publish: %w", err)
		}
		r.Value, r.Headers = value, []kgo.RecordHeader{head}
		return r, nil
	}
	body, err := envelope.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("kafka: publish: %w", err)
	}
	r.Value = body
	return r, nil
}

// PublishRaw publishes already encoded bytes to topic without a key.
func (t *Transport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	return t.produce(ctx, &kgo.Record{Topic: t.topicName(topic), Value: body})
}

// PublishBatch publishes envs to topic and waits for all of them: the
// records travel in shared produce requests.
func (t *Transport) PublishBatch(ctx context.Context, topic string, envs []*envelopepb.Envelope) error {
	name := t.topicName(topic)
	if err := t.ensure(ctx, topicSpec{name: name}); err != nil {
		return err
	}
	rs := make([]*kgo.Record, len(envs))
	for i, env := range envs {
		r, err := t.eventRecord(ctx, topic, env)
		if err != nil {
			return err
		}
		rs[i] = r
	}
	if err := t.cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("kafka: publish %d records to %s: %w", len(rs), name, err)
	}
	return nil
}

func (t *Transport) produce(ctx context.Context, r *kgo.Record) error {
	if err := t.ensure(ctx, topicSpec{name: r.Topic}); err != nil {
		return err
	}
	if err := t.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("kafka: publish to %s: %w", r.Topic, err)
	}
	return nil
}

// topicSpec is a topic the transport needs, with its non-default configs.
type topicSpec struct {
	name    string
	configs map[string]*string
}

func (t *Transport) dlqSpec(topic string) topicSpec {
	ms := int64(-1)
	if t.cfg.DLQRetention > 0 {
		ms = t.cfg.DLQRetention.Milliseconds()
	}
	v := strconv.FormatInt(ms, 10)
	return topicSpec{name: t.dlqTopic(topic), configs: map[string]*string{"retention.ms": &v}}
}

func (t *Transport) opsSpec(topic string) topicSpec {
	compact := "compact"
	return topicSpec{name: t.opsTopic(topic), configs: map[string]*string{"cleanup.policy": &compact}}
}

// ensure checks that the topics exist, creating missing ones when
// CreateTopics is on, within ConnectTimeout.
func (t *Transport) ensure(ctx context.Context, specs ...topicSpec) error {
	var missing []topicSpec
	for _, s := range specs {
		if _, ok := t.known.Load(s.name); !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	names := make([]string, len(missing))
	for i, s := range missing {
		names[i] = s.name
	}
	var details kadm.TopicDetails
	err := t.reach(ctx, func() (err error) {
		details, err = t.adm.ListTopics(ctx, names...)
		return err
	})
	if err != nil {
		return err
	}
	for _, s := range missing {
		if d, ok := details[s.name]; ok && d.Err == nil {
			t.known.Store(s.name, struct{}{})
			continue
		}
		if !*t.cfg.CreateTopics {
			return fmt.Errorf("kafka: topic %s does not exist on %s: create it, or leave Config.CreateTopics on",
				s.name, strings.Join(t.cfg.Brokers, ","))
		}
		resp, err := t.adm.CreateTopic(ctx, t.cfg.Partitions, t.cfg.ReplicationFactor, s.configs, s.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			if ctx.Err() != nil {
				return t.unreachable(err)
			}
			return fmt.Errorf("kafka: create topic %s: %w", s.name, err)
		}
		t.known.Store(s.name, struct{}{})
	}
	return nil
}

// Backlog counts group's records on topics (and on its retry topics) that
// are not committed yet: the group's lag, as the broker sees it.
func (t *Transport) Backlog(ctx context.Context, group string, topics ...string) (int64, error) {
	var names []string
	for _, tp := range topics {
		names = append(names, t.topicName(tp), t.retryTopic(group, tp))
	}
	ends, err := t.adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return 0, fmt.Errorf("kafka: backlog: %w", err)
	}
	if err := ends.Error(); err != nil {
		return 0, fmt.Errorf("kafka: backlog: %w", err)
	}
	starts, err := t.adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return 0, fmt.Errorf("kafka: backlog: %w", err)
	}
	committed, err := t.adm.FetchOffsets(ctx, t.groupName(group))
	if err != nil {
		return 0, fmt.Errorf("kafka: backlog: %w", err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		from := int64(0)
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			from = s.Offset
		}
		if c, ok := committed.Lookup(o.Topic, o.Partition); ok && c.Err == nil && c.At >= 0 {
			from = max(from, c.At)
		}
		n += max(o.Offset-from, 0)
	})
	return n, nil
}

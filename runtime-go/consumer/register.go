package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
)

// route is one registered handler, type-erased.
type route struct {
	name   string
	spec   *event.Spec
	decode func(env *envelopepb.Envelope) (any, error)
	run    func(ctx context.Context, tx *sql.Tx, m any) error
	// metrics are the series of the route's handler and event type (a
	// delivery reaches a route only under its spec's event type).
	metrics *metrics.Route
}

type routeKey struct{ topic, eventType string }

// Register adds a handler for spec's event to c. handlerName identifies
// the handler in dedup claims, metrics and logs: keep it stable across
// deploys, or every message is processed once more. newMsg returns an
// empty payload message to decode into. handle runs in the transaction
// that holds the message's claim; it must not commit or roll it back.
//
// Register must be called before Run. One handler per (topic, event type)
// and consumer.
func Register[T proto.Message](c *Consumer, handlerName string, spec *event.Spec, newMsg func() T,
	handle func(ctx context.Context, tx *sql.Tx, m T) error) error {
	if newMsg == nil || handle == nil {
		return errors.New("consumer: Register needs newMsg and handle")
	}
	return c.register(&route{
		name: handlerName,
		spec: spec,
		decode: func(env *envelopepb.Envelope) (any, error) {
			m := newMsg()
			if err := envelope.DecodePayload(env, m); err != nil {
				return nil, err
			}
			return m, nil
		},
		run: func(ctx context.Context, tx *sql.Tx, m any) error { return handle(ctx, tx, m.(T)) },
	})
}

func (c *Consumer) register(r *route) error {
	if r.name == "" {
		return errors.New("consumer: handler name is empty")
	}
	if r.spec == nil || r.spec.Topic == "" || r.spec.EventType == "" {
		return fmt.Errorf("consumer: handler %q: spec needs Topic and EventType", r.name)
	}
	if err := r.spec.Policy.Validate(); err != nil {
		return fmt.Errorf("consumer: handler %q: retry policy: %w", r.name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("consumer: handler %q registered after Run", r.name)
	}
	k := routeKey{r.spec.Topic, r.spec.EventType}
	if old, ok := c.routes[k]; ok {
		return fmt.Errorf("consumer: handler %q: topic %q event type %q already handled by %q",
			r.name, k.topic, k.eventType, old.name)
	}
	r.metrics = c.cfg.Metrics.Route(r.name, r.spec.EventType)
	c.routes[k] = r
	return nil
}

// lookup finds the route of a message by its topic and event type.
func (c *Consumer) lookup(topic, eventType string) *route {
	if r, ok := c.routes[routeKey{topic, eventType}]; ok {
		return r
	}
	return nil
}

func (c *Consumer) topics() []string {
	seen := map[string]bool{}
	var out []string
	for k := range c.routes {
		if !seen[k.topic] {
			seen[k.topic] = true
			out = append(out, k.topic)
		}
	}
	return out
}

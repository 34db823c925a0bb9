package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// dlqFlags select a transport's dead-letter destination and filter it.
type dlqFlags struct {
	queue, natsURL, stream string
	kafka, namespace       string
	rabbitmq, prefix       string
	rocketmq               string
	filter                 dlq.Filter
	reason                 string
}

func (f *dlqFlags) register(cmd *cobra.Command, filters bool) {
	cmd.Flags().StringVar(&f.queue, "queue", "", "the embedded SQLite transport's database file")
	cmd.Flags().StringVar(&f.natsURL, "nats", "", "a NATS JetStream server URL, e.g. nats://127.0.0.1:4222")
	cmd.Flags().StringVar(&f.stream, "stream", "MSGCONTRACT", "with --nats: the message stream (its dead letters are in STREAM_DLQ)")
	cmd.Flags().StringVar(&f.kafka, "kafka", "", "Kafka seed brokers, host:port[,host:port...]; dead letters of topic T are in T.dlq")
	cmd.Flags().StringVar(&f.namespace, "namespace", "", "with --kafka or --rocketmq: the transport's topic and group prefix (Config.Namespace)")
	cmd.Flags().StringVar(&f.rabbitmq, "rabbitmq", "", "a RabbitMQ AMQP URL, e.g. amqp://user:password@127.0.0.1:5672/; dead letters are in the quorum queue PREFIX.dlq")
	cmd.Flags().StringVar(&f.rocketmq, "rocketmq", "", "RocketMQ name servers, host:port[,host:port...]; dead letters are in the topic NAMESPACEmsgcontract_dlq")
	cmd.Flags().StringVar(&f.prefix, "prefix", "", "with --rabbitmq: the transport's exchange and queue prefix (rabbitmq.Config.Prefix, default msgcontract)")
	if !filters {
		return
	}
	cmd.Flags().StringVar(&f.filter.Topic, "topic", "", "only records of this topic")
	cmd.Flags().StringVar(&f.filter.Group, "group", "", "only records of this consumer group")
	cmd.Flags().StringVar(&f.filter.Handler, "handler", "", "only records of this handler")
	cmd.Flags().StringVar(&f.filter.EventType, "event-type", "", "only records of this event type")
	cmd.Flags().StringVar(&f.filter.BizKey, "biz-key", "", "only records with this biz_key")
	cmd.Flags().StringVar(&f.reason, "reason", "", "only records dead-lettered for this reason: decode, non_retryable, retries_exhausted, no_handler, schema")
}

func (f *dlqFlags) toFilter(ids []string) (dlq.Filter, error) {
	flt := f.filter
	flt.IDs = ids
	switch r := dlq.Reason(f.reason); r {
	case "", dlq.ReasonDecode, dlq.ReasonNonRetryable, dlq.ReasonRetriesExhausted, dlq.ReasonNoHandler, dlq.ReasonSchema:
		flt.Reason = r
	default:
		return flt, cli.UsageErr(fmt.Errorf("--reason %q: want decode, non_retryable, retries_exhausted, no_handler or schema", f.reason))
	}
	return flt, nil
}

func (f *dlqFlags) empty(ids []string) bool {
	flt := f.filter
	return len(ids) == 0 && f.reason == "" && flt.Topic == "" && flt.Group == "" && flt.Handler == "" &&
		flt.EventType == "" && flt.BizKey == ""
}

// open connects to the selected transport's dead-letter store.
// selection is what replay and purge act on: the records ids and the
// filter flags select, in the store the flags name. Neither IDs nor a
// filter nor all is a usage error saying what (so that a typo never acts
// on the whole queue); the caller closes the store with closeFn.
func (f *dlqFlags) selection(ctx context.Context, ids []string, all bool, what string) (store dlq.Store, flt dlq.Filter, closeFn func(), err error) {
	if f.empty(ids) && !all {
		return nil, flt, nil, cli.UsageErr(errors.New(what))
	}
	if flt, err = f.toFilter(ids); err != nil {
		return nil, flt, nil, err
	}
	store, closeFn, err = f.open(ctx)
	return store, flt, closeFn, err
}

func (f *dlqFlags) open(ctx context.Context) (dlq.Store, func(), error) {
	var target string
	switch named := countSet(f.queue, f.natsURL, f.kafka, f.rabbitmq, f.rocketmq); {
	case named != 1:
		return nil, nil, cli.UsageErr(errors.New("name exactly one transport: --queue FILE (embedded SQLite), --nats URL, --kafka BROKERS, --rabbitmq URL or --rocketmq NAMESERVERS"))
	case f.rocketmq != "":
		target = "rocketmq://" + f.rocketmq + "?namespace=" + url.QueryEscape(f.namespace)
	case f.rabbitmq != "":
		u, err := url.Parse(f.rabbitmq)
		if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") {
			return nil, nil, cli.UsageErr(fmt.Errorf("--rabbitmq: want an amqp:// or amqps:// URL, e.g. amqp://user:password@127.0.0.1:5672/"))
		}
		q := u.Query()
		if f.prefix != "" {
			q.Set("prefix", f.prefix)
		}
		u.RawQuery = q.Encode()
		target = u.String()
	case f.kafka != "":
		target = "kafka://" + f.kafka + "?namespace=" + url.QueryEscape(f.namespace)
	case f.queue != "":
		target = "sqlite:" + f.queue
	default:
		u, err := url.Parse(f.natsURL)
		if err != nil {
			return nil, nil, cli.UsageErr(fmt.Errorf("--nats %s: %w", f.natsURL, err))
		}
		q := u.Query()
		q.Set("stream", f.stream)
		u.RawQuery = q.Encode()
		target = u.String()
	}
	st, err := dlqopen.Open(ctx, target)
	if err != nil {
		return nil, nil, cli.UsageErr(err)
	}
	return st, func() { st.Close() }, nil
}

// countSet counts the non-empty strings of vs.
func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

func newDLQCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: cli.DLQShort,
		Long: `dlq operates on a transport's dead-letter destination, where the runtime
puts messages it gave up on: payloads that did not decode, non-retryable
failures, retryable failures past max_retries, and events no handler was
registered for. Each record keeps the envelope byte for byte, the reason,
the last error code and message, the number of attempts and the first and
last failure times.

replay re-publishes a record's envelope to its original topic for its
consumer group, with retry_count and not_before reset and the failure
history kept; the record stays (marked replayed) until purged. Replaying is
safe: the consumer's dedup claim makes it effectively once.

On Kafka (--kafka) the dead letters of topic T are records of T.dlq (value:
the envelope's bytes, metadata in a header), ids are T/PARTITION/OFFSET,
and replay and purge write markers to the compacted topic T.dlq.ops
instead of rewriting T.dlq: purged records disappear from list at once and
leave the log when T.dlq's retention expires.

On RabbitMQ (--rabbitmq) the records are messages of the quorum queue
PREFIX.dlq (JSON), ids are time-ordered strings; every command reads the
whole queue and hands back what it keeps, so run one at a time.

On RocketMQ (--rocketmq, the name servers) the records are messages of the
topic NAMESPACEmsgcontract_dlq (JSON), ids are QUEUE/OFFSET, and replay and
purge append markers to NAMESPACEmsgcontract_dlq_ops: purged records
disappear from list at once and leave the broker with its commit log
(fileReservedTime). Messages RocketMQ itself moved to %DLQ%NAMESPACEGROUP
are listed too, with ids %DLQ%NAMESPACEGROUP/QUEUE/OFFSET.`,
		Example: `  msgcontract dlq list --queue .build/demo/queue.db
  msgcontract dlq list --queue queue.db --reason retries_exhausted --group payment-callback
  msgcontract dlq show --queue queue.db 7
  msgcontract dlq show --queue queue.db -I proto 7 proto/shop/payment/v1/payment.proto
  msgcontract dlq replay --queue queue.db 7 8
  msgcontract dlq purge --queue queue.db --reason decode
  msgcontract dlq list --kafka 127.0.0.1:9092 --topic order-event
  msgcontract dlq replay --kafka 127.0.0.1:9092 order-event/0/42
  msgcontract dlq list --rabbitmq amqp://guest:guest@127.0.0.1:5672/ --group payment-callback
  msgcontract dlq replay --rocketmq 127.0.0.1:9876 0/17`,
	}
	cmd.AddCommand(newDLQListCmd(), newDLQShowCmd(), newDLQReplayCmd(), newDLQPurgeCmd())
	return cmd
}

func newDLQListCmd() *cobra.Command {
	var (
		f      dlqFlags
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list (--queue FILE | --nats URL | --kafka BROKERS | --rabbitmq URL | --rocketmq NAMESRV) [filters]",
		Short: "List dead-lettered messages, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, err := f.toFilter(nil)
			if err != nil {
				return err
			}
			flt.Limit = limit
			store, closeFn, err := f.open(cmd.Context())
			if err != nil {
				return err
			}
			defer closeFn()
			recs, err := store.List(cmd.Context(), flt)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), recs)
			}
			writeRecords(cmd.OutOrStdout(), recs)
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().IntVar(&limit, "limit", 100, "most records to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func writeRecords(out io.Writer, recs []dlq.Record) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDEAD AT\tTOPIC\tGROUP\tEVENT TYPE\tBIZ KEY\tREASON\tCODE\tATTEMPTS\tREPLAYED\tERROR")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.ID, r.DeadAt.UTC().Format(time.RFC3339),
			r.Topic, r.Group, dash(r.EventType), dash(r.BizKey), r.Reason, r.Code, r.Attempts, r.ReplayCount, oneLine(r.Error, 60))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d record%s\n", len(recs), cli.Plural(len(recs)))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func newDLQShowCmd() *cobra.Command {
	var (
		f  dlqFlags
		pf cli.ProtoFlags
	)
	cmd := &cobra.Command{
		Use:   "show (--queue FILE | --nats URL | --kafka BROKERS | --rabbitmq URL | --rocketmq NAMESRV) [-I DIR]... ID [FILE.proto]...",
		Short: "Show one dead-lettered message with its decoded envelope (and payload, given the contract)",
		Long: `show prints one dead-letter record as JSON: "record" (topic, group,
reason, error, attempts, ...), "envelope" (the envelope as proto JSON)
and, when contract files are given after the ID, "payload": the event
message decoded from the envelope's payload with the event whose
event_type the envelope carries, and "payload_type", its message name.
The contract files are named and found as msgcontract generate's are
(-I DIR, repeatable; default the current directory).

Without contract files the payload is left as the envelope carries it:
base64 of its bytes in envelope.payload (binary protobuf, or JSON when
envelope.content_type is application/json). A payload that does not
decode is shown the same way, with "payload_error" saying why.

Every time is RFC 3339 in UTC (2026-12-05T09:41:07.123Z), the envelope's
epoch-millisecond fields (occurred_at, not_before, first_failed_at)
included.

Exit status: 0 shown; 1 no record with that ID; 2 a usage error, a store
that cannot be opened or contract files that do not compile.`,
		Example: `  msgcontract dlq show --queue .build/demo/queue.db 7
  msgcontract dlq show --queue .build/demo/queue.db -I examples/proto 7 examples/proto/shop/payment/v1/payment.proto`,
		Args: cli.MinArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var set *model.Set
			if len(args) > 1 {
				var err error
				if set, err = pf.Load(cmd, args[1:]); err != nil {
					return err
				}
			}
			store, closeFn, err := f.open(cmd.Context())
			if err != nil {
				return err
			}
			defer closeFn()
			rec, err := store.Get(cmd.Context(), args[0])
			if errors.Is(err, dlq.ErrNotFound) {
				fmt.Fprintf(cmd.ErrOrStderr(), "no dead-letter record %s\n", args[0])
				return cli.Findings()
			}
			if err != nil {
				return err
			}
			rec.FirstFailedAt, rec.LastFailedAt, rec.DeadAt = rec.FirstFailedAt.UTC(), rec.LastFailedAt.UTC(), rec.DeadAt.UTC()
			rec.LastReplayedAt = rec.LastReplayedAt.UTC()
			view := map[string]any{"record": rec}
			env, err := envelope.Unmarshal(rec.Envelope)
			if err == nil {
				var b []byte
				if b, err = envelope.MarshalJSON(env); err == nil {
					view["envelope"] = json.RawMessage(envelopeTimesUTC(b))
				}
			}
			if err != nil {
				view["envelope_error"] = err.Error()
			}
			if set != nil && env != nil {
				if name, payload, err := decodePayload(set, env); err != nil {
					view["payload_error"] = err.Error()
				} else {
					view["payload_type"], view["payload"] = name, json.RawMessage(payload)
				}
			}
			return writeJSON(cmd.OutOrStdout(), view)
		},
	}
	f.register(cmd, false)
	pf.Register(cmd)
	return cmd
}

// envelopeTimes are the envelope's fields holding UTC epoch milliseconds.
var envelopeTimes = []string{"occurred_at", "not_before", "first_failed_at"}

// envelopeTimesUTC rewrites the epoch-millisecond fields of an envelope's
// proto JSON (strings of digits, as proto JSON writes an int64) as RFC
// 3339 times in UTC. Anything it cannot read is left as it is.
func envelopeTimesUTC(b []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return b
	}
	for _, k := range envelopeTimes {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		m[k], _ = json.Marshal(time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))
	}
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// decodePayload decodes env's payload with the event of set whose
// event_type env carries, and renders it as proto JSON for people.
func decodePayload(set *model.Set, env *envelopepb.Envelope) (string, []byte, error) {
	var ev *model.Event
	var known []string
	for _, f := range set.Files {
		for _, e := range f.Events {
			known = append(known, e.EventType)
			if e.EventType == env.GetEventType() && (ev == nil || e.Topic == env.GetTopic()) {
				ev = e
			}
		}
	}
	if ev == nil {
		return "", nil, fmt.Errorf("no event with event_type %q in the contract files given (they declare %s); payload left as bytes in envelope.payload",
			env.GetEventType(), strings.Join(known, ", "))
	}
	msg := dynamicpb.NewMessage(ev.Desc)
	if err := envelope.DecodePayload(env, msg); err != nil {
		return "", nil, fmt.Errorf("payload does not decode as %s (content_type %q): %v", ev.Desc.FullName(), env.GetContentType(), err)
	}
	b, err := envelope.MarshalPayloadForDisplay(msg)
	if err != nil {
		return "", nil, err
	}
	return string(ev.Desc.FullName()), b, nil
}

func newDLQReplayCmd() *cobra.Command {
	var (
		f   dlqFlags
		all bool
	)
	cmd := &cobra.Command{
		Use:   "replay (--queue FILE | --nats URL | --kafka BROKERS | --rabbitmq URL | --rocketmq NAMESRV) (ID... | filters | --all)",
		Short: "Re-publish dead-lettered messages to their original topic",
		Long: `replay re-publishes each selected record's envelope to its original topic
for its consumer group, with retry_count and not_before reset and the
failure history kept. Records stay, marked replayed, until purged; records
already replayed are skipped unless named by ID. Select by IDs, by filters,
or everything with --all. A record that cannot be replayed (an envelope
that does not decode has nothing to re-publish) is reported and skipped;
the exit status is then 1.`,
		RunE: func(cmd *cobra.Command, ids []string) error {
			store, flt, closeFn, err := f.selection(cmd.Context(), ids, all, "replay what? name record IDs, filters, or --all")
			if err != nil {
				return err
			}
			defer closeFn()
			if len(ids) == 0 {
				flt.ExcludeReplayed = true
			}
			flt.Limit = 1 << 30
			recs, err := store.List(cmd.Context(), flt)
			if err != nil {
				return err
			}
			if len(ids) > 0 && len(recs) != len(ids) {
				fmt.Fprintf(cmd.ErrOrStderr(), "found %d of the %d records named\n", len(recs), len(ids))
				return cli.Findings()
			}
			replayed, failed := 0, 0
			for _, r := range recs {
				if err := store.Replay(cmd.Context(), r.ID); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "cannot replay %s: %v\n", r.ID, err)
					failed++
					continue
				}
				replayed++
				fmt.Fprintf(cmd.OutOrStdout(), "replayed %s to %s for %s (%s)\n", r.ID, r.Topic, r.Group, dash(r.BizKey))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d record%s replayed\n", replayed, cli.Plural(replayed))
			if failed > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d record%s could not be replayed\n", failed, cli.Plural(failed))
				return cli.Findings()
			}
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&all, "all", false, "replay every record not replayed yet")
	return cmd
}

func newDLQPurgeCmd() *cobra.Command {
	var (
		f   dlqFlags
		all bool
	)
	cmd := &cobra.Command{
		Use:   "purge (--queue FILE | --nats URL | --kafka BROKERS | --rabbitmq URL | --rocketmq NAMESRV) (ID... | filters | --all)",
		Short: "Delete dead-lettered messages for good",
		Long: `purge deletes the selected records. It refuses to run without IDs, a
filter or --all, so that a typo never empties the dead-letter queue.`,
		RunE: func(cmd *cobra.Command, ids []string) error {
			store, flt, closeFn, err := f.selection(cmd.Context(), ids, all, "purge what? name record IDs, filters, or --all to delete every record")
			if err != nil {
				return err
			}
			defer closeFn()
			n, err := store.Purge(cmd.Context(), flt)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d record%s purged\n", n, cli.Plural(n))
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&all, "all", false, "delete every record")
	return cmd
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Package paymentsvc is the example payment-callback service: it consumes
// the order events of shop/payment/v1 with the generated Go consumer on
// runtime-go and moves each order through OrderState.
//
// The pattern to copy into a service of your own:
//
//   - every handler runs in the transaction that holds its dedup claim, so
//     the business write and the claim commit or roll back together;
//   - state changes are checked with the generated CanTransitOrderState:
//     DUPLICATE succeeds quietly, ILLEGAL is an alert and a non-retryable
//     error (dead-lettered);
//   - a failing downstream call returns a coded error from the contract's
//     "system" range, so the runtime retries it with the contract's backoff.
package paymentsvc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/statemachine"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Group is the consumer group of this service on the order-event topic.
const Group = "payment-callback"

// Error codes this service returns, inside the contract's ranges.
const (
	// CodeIllegalTransition: the event does not fit the order's state
	// (out of order or dirty data). Business range: never retried.
	CodeIllegalTransition = 40901
	// CodeLedgerUnavailable: the ledger answered 5xx or not at all. System
	// range: retried with backoff.
	CodeLedgerUnavailable = 50301
)

// Config configures the service.
type Config struct {
	// DB is the service's own database: orders, payment_effects and the
	// runtime's msg_dedup table.
	DB *sql.DB
	// Subscriber is the transport to consume from.
	Subscriber transport.Subscriber
	// LedgerURL is the downstream ledger every payment is booked with.
	LedgerURL string
	// Policy, when set, replaces the contract's retry policy (the demo
	// shortens it so that it finishes in seconds).
	Policy *backoff.Policy
	// Workers defaults to 4.
	Workers int
	Logger  *slog.Logger
	Metrics *metrics.Prometheus
	// Tracer, when set, spans every delivery (runtime-go/tracing).
	Tracer *tracing.Tracer
}

// Migrate creates the service's business tables.
func Migrate(ctx context.Context, db *sql.DB) error {
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS orders (
			order_id TEXT PRIMARY KEY, state TEXT NOT NULL,
			paid BIGINT NOT NULL DEFAULT 0, refunded BIGINT NOT NULL DEFAULT 0)`,
		// One row per applied event, deliberately without a unique index:
		// a duplicate business effect would show here as a second row.
		`CREATE TABLE IF NOT EXISTS payment_effects (
			id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL,
			kind TEXT NOT NULL, ref TEXT NOT NULL, amount BIGINT NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("paymentsvc: migrate: %w", err)
		}
	}
	return nil
}

// Service is the running consumer.
type Service struct {
	cfg    Config
	c      *consumer.Consumer
	client *http.Client
}

// New builds the service and registers its three handlers.
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil || cfg.Subscriber == nil || cfg.LedgerURL == "" {
		return nil, errors.New("paymentsvc: Config needs DB, Subscriber and LedgerURL")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c, err := consumer.New(consumer.Config{
		DB: cfg.DB, Dialect: sqldb.SQLite, Subscriber: cfg.Subscriber, Group: Group,
		Workers: cfg.Workers, Logger: cfg.Logger, Metrics: cfg.Metrics, Tracer: cfg.Tracer, HandlerTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, c: c, client: &http.Client{Timeout: 2 * time.Second}}
	err = errors.Join(
		consumer.Register(c, "payment-callback.pay", s.spec(paymentv1.PaySuccessSpec),
			func() *paymentv1.PaySuccess { return new(paymentv1.PaySuccess) }, s.onPaySuccess),
		consumer.Register(c, "payment-callback.refund-requested", s.spec(paymentv1.RefundRequestedSpec),
			func() *paymentv1.RefundRequested { return new(paymentv1.RefundRequested) }, s.onRefundRequested),
		consumer.Register(c, "payment-callback.refund", s.spec(paymentv1.RefundSuccessSpec),
			func() *paymentv1.RefundSuccess { return new(paymentv1.RefundSuccess) }, s.onRefundSuccess),
	)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// spec returns the generated spec, with the retry policy replaced when
// Config.Policy is set.
func (s *Service) spec(gen *event.Spec) *event.Spec {
	if s.cfg.Policy == nil {
		return gen
	}
	cp := *gen
	cp.Policy = *s.cfg.Policy
	return &cp
}

// Run consumes until ctx is cancelled, then finishes in-flight messages.
func (s *Service) Run(ctx context.Context) error { return s.c.Run(ctx) }

func (s *Service) onPaySuccess(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (order_id, state) VALUES (?1, ?2) ON CONFLICT (order_id) DO NOTHING`,
		m.GetOrderId(), paymentv1.OrderState_PAYING.String()); err != nil {
		return err
	}
	ok, err := s.transit(ctx, tx, m.GetOrderId(), paymentv1.OrderState_PAID)
	if err != nil || !ok {
		return err
	}
	// The downstream call runs inside the transaction: if the ledger fails,
	// the state change and the dedup claim roll back with it and the retry
	// finds the order still PAYING.
	if err := s.book(ctx, m.GetOrderId(), m.GetAmount()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE orders SET paid = paid + ?1 WHERE order_id = ?2`, m.GetAmount(), m.GetOrderId()); err != nil {
		return err
	}
	return effect(ctx, tx, m.GetOrderId(), "PAY", "", m.GetAmount())
}

func (s *Service) onRefundRequested(ctx context.Context, tx *sql.Tx, m *paymentv1.RefundRequested) error {
	_, err := s.transit(ctx, tx, m.GetOrderId(), paymentv1.OrderState_REFUNDING)
	return err
}

func (s *Service) onRefundSuccess(ctx context.Context, tx *sql.Tx, m *paymentv1.RefundSuccess) error {
	ok, err := s.transit(ctx, tx, m.GetOrderId(), paymentv1.OrderState_REFUNDED)
	if err != nil || !ok {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE orders SET refunded = refunded + ?1 WHERE order_id = ?2`, m.GetAmount(), m.GetOrderId()); err != nil {
		return err
	}
	return effect(ctx, tx, m.GetOrderId(), "REFUND", m.GetRefundId(), m.GetAmount())
}

// transit moves an order to target when the contract allows it. It
// reports false with no error for DUPLICATE (already done: succeed
// quietly), and returns a non-retryable coded error for ILLEGAL.
func (s *Service) transit(ctx context.Context, tx *sql.Tx, orderID string, target paymentv1.OrderState) (bool, error) {
	var cur string
	err := tx.QueryRowContext(ctx, `SELECT state FROM orders WHERE order_id = ?1`, orderID).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		cur = paymentv1.OrderState_ORDER_STATE_UNSPECIFIED.String()
	} else if err != nil {
		return false, err
	}
	from := paymentv1.OrderState(paymentv1.OrderState_value[cur])
	switch paymentv1.CanTransitOrderState(from, target) {
	case statemachine.Allowed:
		_, err := tx.ExecContext(ctx, `UPDATE orders SET state = ?1 WHERE order_id = ?2`, target.String(), orderID)
		return err == nil, err
	case statemachine.Duplicate:
		s.cfg.Logger.InfoContext(ctx, "transition already done", "order_id", orderID, "state", cur)
		return false, nil
	default:
		s.cfg.Logger.ErrorContext(ctx, "ALERT: illegal order transition; dead-lettering for a human",
			"order_id", orderID, "from", cur, "to", target.String())
		return false, classify.Errorf(CodeIllegalTransition, "order %s: illegal transition %s -> %s", orderID, cur, target)
	}
}

// book posts the payment to the ledger; a 5xx or a network error is a
// retryable coded error.
func (s *Service) book(ctx context.Context, orderID string, amount int64) error {
	u := fmt.Sprintf("%s/book?order_id=%s&amount=%d", s.cfg.LedgerURL, url.QueryEscape(orderID), amount)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return classify.Errorf(CodeLedgerUnavailable, "ledger: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return classify.Errorf(CodeLedgerUnavailable, "ledger answered %s", resp.Status)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("ledger answered %s", resp.Status)
	}
	return nil
}

func effect(ctx context.Context, tx *sql.Tx, orderID, kind, ref string, amount int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO payment_effects (order_id, kind, ref, amount) VALUES (?1, ?2, ?3, ?4)`,
		orderID, kind, ref, amount)
	return err
}

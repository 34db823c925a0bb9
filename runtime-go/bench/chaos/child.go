package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
)

// Payload kinds.
const (
	kindOK         = "ok"
	kindTransient1 = "transient-1" // fails its first attempt
	kindTransient2 = "transient-2" // fails its first two attempts
	kindPoisonCode = "poison-code" // always fails with a non-retryable code
	kindExhausted  = "exhausted"   // always fails with a retryable code: dead-lettered after max_retries
)

// runChild is one consumer process; even ids share a transaction per
// fetch (the default), odd ids use PerMessageTx, so both paths are under
// fire.
func runChild(cfg config, id int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	db, dialect, err := openBusiness(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	tr, closeTr, err := openTransport(ctx, cfg, db)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while connecting
		}
		return err
	}
	defer closeTr()
	ccfg := consumer.Config{DB: db, Dialect: dialect, Subscriber: tr, Group: group, Workers: 2,
		HandlerTimeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1}))}
	if id%2 == 0 {
		ccfg.FetchSize = 32
	} else {
		ccfg.PerMessageTx, ccfg.FetchSize = true, 1
	}
	c, err := consumer.New(ccfg)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("p%d", id)
	err = consumer.Register(c, benchmsg.Handler, benchmsg.Spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			reportAttempt(env, time.Now())
			switch m.GetValue() {
			case kindPoisonCode:
				return classify.NewError(benchmsg.CodeBusiness, "poison")
			case kindExhausted:
				return classify.NewError(benchmsg.CodeSystem, "never recovers")
			case kindTransient1:
				if env.GetRetryCount() < 1 {
					return classify.NewError(benchmsg.CodeSystem, "transient")
				}
			case kindTransient2:
				if env.GetRetryCount() < 2 {
					return classify.NewError(benchmsg.CodeSystem, "transient")
				}
			}
			if err := benchmsg.InsertEffect(ctx, tx, note); err != nil {
				return err
			}
			if cfg.handlerDelay > 0 {
				time.Sleep(cfg.handlerDelay)
			}
			return nil
		})
	if err != nil {
		return err
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil // stopped, possibly before it had started: a graceful stop
}

package rocketmq

import (
	"context"
	"log/slog"
	"sync"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// rocketmq-client-go logs through one process-wide logger (logrus on
// stderr by default), and at error level it reports what is routine for
// this transport: a topic's route looked up before the transport creates
// it, a reader's consumer shut down while its rebalance runs. The
// transport reports what fails itself (errors, and warnings on
// Config.Logger), so the client's own lines go to the first transport's
// logger at debug level.
var clientLogOnce sync.Once

func routeClientLog(l *slog.Logger) {
	clientLogOnce.Do(func() { rlog.SetLogger(clientLog{l: l.With("source", "rocketmq-client-go")}) })
}

type clientLog struct{ l *slog.Logger }

func (c clientLog) log(level slog.Level, msg string, fields map[string]any) {
	if !c.l.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		attrs = append(attrs, k, v)
	}
	c.l.Log(context.Background(), level, msg, attrs...)
}

func (c clientLog) Debug(msg string, fields map[string]any)   { c.log(slog.LevelDebug, msg, fields) }
func (c clientLog) Info(msg string, fields map[string]any)    { c.log(slog.LevelDebug, msg, fields) }
func (c clientLog) Warning(msg string, fields map[string]any) { c.log(slog.LevelDebug, msg, fields) }
func (c clientLog) Error(msg string, fields map[string]any)   { c.log(slog.LevelDebug, msg, fields) }
func (c clientLog) Fatal(msg string, fields map[string]any)   { c.log(slog.LevelError, msg, fields) }
func (c clientLog) Level(string)                              {}
func (c clientLog) OutputPath(string) error                   { return nil }

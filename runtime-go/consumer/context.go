package consumer

import (
	"context"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

type envKey struct{}

// EnvelopeFrom returns the envelope of the message a handler is
// processing, from the handler's context. Handlers must not modify it.
func EnvelopeFrom(ctx context.Context) (*envelopepb.Envelope, bool) {
	env, ok := ctx.Value(envKey{}).(*envelopepb.Envelope)
	return env, ok
}

func withEnvelope(ctx context.Context, env *envelopepb.Envelope) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

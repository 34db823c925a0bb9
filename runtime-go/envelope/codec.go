// Package envelope encodes and decodes the msgcontract envelope, the body
// that travels on every transport. Binary protobuf is the wire form; JSON
// (with proto field names, as DESIGN.md requires of every language) is for
// humans, logs and the dlq tooling.
package envelope

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// ErrDecode is the sentinel every decoding failure wraps. A message whose
// envelope does not decode is never retried.
var ErrDecode = errors.New("envelope: cannot decode")

// Marshal encodes env as deterministic binary protobuf.
func Marshal(env *envelopepb.Envelope) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(env)
}

// Unmarshal decodes binary protobuf. Errors wrap ErrDecode. An envelope
// without a biz_key or event_type is rejected too: without them the
// consumer can neither deduplicate nor route it.
func Unmarshal(b []byte) (*envelopepb.Envelope, error) {
	env := &envelopepb.Envelope{}
	if err := proto.Unmarshal(b, env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if err := check(env); err != nil {
		return nil, err
	}
	return env, nil
}

// MarshalJSON encodes env as proto JSON with proto (snake_case) field names.
func MarshalJSON(env *envelopepb.Envelope) ([]byte, error) {
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(env)
}

// UnmarshalJSON decodes proto JSON; both field-name forms are accepted, as
// protojson always does. Errors wrap ErrDecode.
func UnmarshalJSON(b []byte) (*envelopepb.Envelope, error) {
	env := &envelopepb.Envelope{}
	if err := protojson.Unmarshal(b, env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if err := check(env); err != nil {
		return nil, err
	}
	return env, nil
}

func check(env *envelopepb.Envelope) error {
	var missing []string
	if env.GetBizKey() == "" {
		missing = append(missing, "biz_key")
	}
	if env.GetEventType() == "" {
		missing = append(missing, "event_type")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %v", ErrDecode, missing)
	}
	return nil
}

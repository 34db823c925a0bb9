package envelope

import (
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Content types of an envelope's payload.
const (
	ContentTypeProto = "application/protobuf"
	ContentTypeJSON  = "application/json"
)

// EncodePayload encodes a payload for an envelope: deterministic binary
// protobuf, or proto JSON with proto field names when asJSON is set (as
// DESIGN.md requires of every language). It returns the bytes and the
// content type the envelope must carry.
func EncodePayload(m proto.Message, asJSON bool) ([]byte, string, error) {
	if asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		return b, ContentTypeJSON, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b, ContentTypeProto, err
}

// DecodePayload decodes env's payload into m by its content type. Unknown
// JSON fields are ignored, as unknown binary fields are.
func DecodePayload(env *envelopepb.Envelope, m proto.Message) error {
	if env.GetContentType() == ContentTypeJSON {
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(env.GetPayload(), m)
	}
	return proto.Unmarshal(env.GetPayload(), m)
}

// MarshalPayloadForDisplay renders a decoded payload as proto JSON for
// people (the dlq tooling, the web console): proto field names, and
// fields left at their zero value shown too, so a reader sees every field.
func MarshalPayloadForDisplay(m proto.Message) ([]byte, error) {
	return protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
}

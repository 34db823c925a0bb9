package dedup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// HashMessage is the payload identity stored with a claim (DESIGN.md
// "Payload hash"): lower-case hex SHA-256 of the deterministic binary
// encoding of the decoded payload message with its unknown fields
// dropped. The same message sent as binary or as proto JSON, or encoded
// by another language or build, hashes the same; a changed field does
// not. Java and Python compute the same value (PayloadHash.of,
// msgcontract_runtime.payload_hash.of).
func HashMessage(m proto.Message) (string, error) {
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("dedup: hash payload: %w", err)
	}
	known := m.ProtoReflect().New().Interface()
	if err := (proto.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true}).Unmarshal(b, known); err != nil {
		return "", fmt.Errorf("dedup: hash payload: %w", err)
	}
	canon, err := proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(known)
	if err != nil {
		return "", fmt.Errorf("dedup: hash payload: %w", err)
	}
	h := sha256.Sum256(canon)
	return hex.EncodeToString(h[:]), nil
}

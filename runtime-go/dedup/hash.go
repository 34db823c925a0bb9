package dedup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// HashMessage is the payload identity stored with a claim (DESIGN.md
// "Payload hash"): lower-case hex SHA-256 of the deterministic binary
// encoding of the decoded payload message with its unknown fields
// dropped. The same message sent as binary or as proto JSON, or encoded
// by another language or build, hashes the same; a changed field does
// not. Java and Python compute the same value (PayloadHash.of,
// msgcontract_runtime.payload_hash.of).
//
// A message without unknown fields (the common case) is encoded once,
// into a pooled buffer; only one with unknown fields somewhere is first
// copied without them.
func HashMessage(m proto.Message) (string, error) {
	known := m
	if hasUnknown(m.ProtoReflect()) {
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			return "", fmt.Errorf("dedup: hash payload: %w", err)
		}
		known = m.ProtoReflect().New().Interface()
		if err := (proto.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true}).Unmarshal(b, known); err != nil {
			return "", fmt.Errorf("dedup: hash payload: %w", err)
		}
	}
	buf := canonBufs.Get().(*[]byte)
	canon, err := proto.MarshalOptions{Deterministic: true, AllowPartial: true}.MarshalAppend((*buf)[:0], known)
	if err != nil {
		canonBufs.Put(buf)
		return "", fmt.Errorf("dedup: hash payload: %w", err)
	}
	h := sha256.Sum256(canon)
	if cap(canon) <= maxPooledBuf {
		*buf = canon
		canonBufs.Put(buf)
	}
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], h[:])
	return string(out[:]), nil
}

// canonBufs holds encoding buffers for HashMessage; one larger than
// maxPooledBuf is left to the garbage collector.
var canonBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBuf = 64 << 10

// hasUnknown reports whether m or any message below it holds unknown
// fields.
func hasUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	if !nests(m.Descriptor()) {
		return false
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if isMessage(fd.MapValue()) {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					found = hasUnknown(mv.Message())
					return !found
				})
			}
		case fd.IsList():
			if isMessage(fd) {
				l := v.List()
				for i := 0; i < l.Len() && !found; i++ {
					found = hasUnknown(l.Get(i).Message())
				}
			}
		case isMessage(fd):
			found = hasUnknown(v.Message())
		}
		return !found
	})
	return found
}

// nests reports whether a message of type md can hold another message (a
// message, group, or map-of-message field); one that cannot has no
// unknown fields below it, so hasUnknown need not range over it (which
// allocates).
func nests(md protoreflect.MessageDescriptor) bool {
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		if isMessage(fd) || fd.IsMap() && isMessage(fd.MapValue()) {
			return true
		}
	}
	return false
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	k := fd.Kind()
	return k == protoreflect.MessageKind || k == protoreflect.GroupKind
}

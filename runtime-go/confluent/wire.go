// Package confluent is the Confluent Schema Registry wire format for
// Protobuf, as Confluent's serializers write it (Java, Go and Python alike):
//
//	byte 0       magic byte 0
//	bytes 1-4    schema id, big-endian int32
//	then         message-index array: zigzag varint count, then each
//	             index as a zigzag varint; the common [0] (first message
//	             of the file) is the single byte 0
//	then         the message, binary protobuf
//
// and a small client for the two registry calls a producer and a consumer
// need: the id of a subject's version, and the subjects an id belongs to.
// Both answers are cached for the client's lifetime, as Confluent's
// clients do.
package confluent

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// MagicByte starts every framed value.
const MagicByte = 0

// ErrFrame is wrapped by every Unframe error.
var ErrFrame = errors.New("confluent: not a Confluent Protobuf frame")

// Frame returns payload framed with schema id and the message-index path.
func Frame(id int32, index []int, payload []byte) []byte {
	b := make([]byte, 5, 5+len(index)*2+2+len(payload))
	b[0] = MagicByte
	binary.BigEndian.PutUint32(b[1:5], uint32(id))
	if len(index) == 1 && index[0] == 0 {
		b = binary.AppendVarint(b, 0)
	} else {
		b = binary.AppendVarint(b, int64(len(index)))
		for _, i := range index {
			b = binary.AppendVarint(b, int64(i))
		}
	}
	return append(b, payload...)
}

// maxDepth bounds the message-index array: nesting deeper than this is no
// real schema, and a hostile count must not allocate.
const maxDepth = 100

// Unframe splits a framed value into schema id, message-index path and
// payload (a sub-slice of b).
func Unframe(b []byte) (id int32, index []int, payload []byte, err error) {
	if len(b) < 6 || b[0] != MagicByte {
		return 0, nil, nil, fmt.Errorf("%w: %d bytes, first byte %s", ErrFrame, len(b), firstByte(b))
	}
	id = int32(binary.BigEndian.Uint32(b[1:5]))
	rest := b[5:]
	n, w := binary.Varint(rest)
	if w <= 0 || n < 0 || n > maxDepth {
		return 0, nil, nil, fmt.Errorf("%w: bad message-index count", ErrFrame)
	}
	rest = rest[w:]
	if n == 0 {
		return id, []int{0}, rest, nil
	}
	index = make([]int, n)
	for i := range index {
		v, w := binary.Varint(rest)
		if w <= 0 || v < 0 {
			return 0, nil, nil, fmt.Errorf("%w: bad message index %d", ErrFrame, i)
		}
		index[i], rest = int(v), rest[w:]
	}
	return id, index, rest, nil
}

func firstByte(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return fmt.Sprintf("0x%02x", b[0])
}

// IsFramed reports whether b starts with the magic byte. A binary
// msgcontract envelope never does (field tag 0 does not exist), so a
// consumer tells the two forms apart by the first byte.
func IsFramed(b []byte) bool { return len(b) > 0 && b[0] == MagicByte }

// MessageIndex is md's path in its file as the frame writes it: its
// position among the file's top-level messages, then among its parent's
// nested messages, outermost first.
func MessageIndex(md protoreflect.MessageDescriptor) []int {
	var path []int
	for d := protoreflect.Descriptor(md); ; {
		path = append([]int{d.Index()}, path...)
		p, ok := d.Parent().(protoreflect.MessageDescriptor)
		if !ok {
			return path
		}
		d = p
	}
}

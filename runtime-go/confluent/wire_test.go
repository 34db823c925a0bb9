package confluent_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

type vectors struct {
	Records []struct {
		Name      string          `json:"name"`
		Envelope  json.RawMessage `json:"envelope"`
		SchemaID  int32           `json:"schema_id"`
		Index     []int           `json:"index"`
		KeyHex    string          `json:"key_hex"`
		ValueHex  string          `json:"value_hex"`
		HeaderHex string          `json:"header_hex"`
	} `json:"records"`
	Cases []struct {
		Name       string `json:"name"`
		SchemaID   int32  `json:"schema_id"`
		Index      []int  `json:"index"`
		PayloadHex string `json:"payload_hex"`
		FramedHex  string `json:"framed_hex"`
	} `json:"cases"`
}

func readVectors(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("../../testdata/kafka-wire/frames.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) == 0 || len(v.Records) == 0 {
		t.Fatal("no cases or records")
	}
	return v
}

// TestGoldenRecords: an envelope's record in the Confluent wire format,
// key, value and msgcontract.envelope header, byte for byte as Python
// writes it (the transport splits the envelope this way).
func TestGoldenRecords(t *testing.T) {
	for _, r := range readVectors(t).Records {
		env, err := envelope.UnmarshalJSON(r.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		head := proto.Clone(env).(*envelopepb.Envelope)
		head.Payload = nil
		hb, err := envelope.Marshal(head)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(hb); got != r.HeaderHex {
			t.Errorf("%s: header %s, want %s", r.Name, got, r.HeaderHex)
		}
		if got := hex.EncodeToString(confluent.Frame(r.SchemaID, r.Index, env.GetPayload())); got != r.ValueHex {
			t.Errorf("%s: value %s, want %s", r.Name, got, r.ValueHex)
		}
		if got := hex.EncodeToString([]byte(env.GetBizKey())); got != r.KeyHex {
			t.Errorf("%s: key %s, want %s", r.Name, got, r.KeyHex)
		}
	}
}

// TestGoldenFrames checks Frame and Unframe against the vectors the Python
// runtime checks too.
func TestGoldenFrames(t *testing.T) {
	v := readVectors(t)
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			payload, _ := hex.DecodeString(c.PayloadHex)
			if got := hex.EncodeToString(confluent.Frame(c.SchemaID, c.Index, payload)); got != c.FramedHex {
				t.Errorf("Frame = %s, want %s", got, c.FramedHex)
			}
			framed, _ := hex.DecodeString(c.FramedHex)
			id, idx, p, err := confluent.Unframe(framed)
			if err != nil {
				t.Fatal(err)
			}
			if id != c.SchemaID || !slices.Equal(idx, c.Index) || hex.EncodeToString(p) != c.PayloadHex {
				t.Errorf("Unframe = %d %v %x", id, idx, p)
			}
		})
	}
}

func TestUnframeRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short":          {0, 0, 0, 0, 1},
		"magic":          {1, 0, 0, 0, 1, 0},
		"negative count": {0, 0, 0, 0, 1, 1},
		"huge count":     {0, 0, 0, 0, 1, 0xfe, 0xff, 0x7f},
		"truncated":      {0, 0, 0, 0, 1, 4, 2},
	} {
		if _, _, _, err := confluent.Unframe(b); !errors.Is(err, confluent.ErrFrame) {
			t.Errorf("%s: err = %v, want ErrFrame", name, err)
		}
	}
}

// TestMessageIndex: the path of a top-level and of a nested message.
func TestMessageIndex(t *testing.T) {
	env := (&envelopepb.Envelope{}).ProtoReflect().Descriptor()
	last := (&envelopepb.TraceContext{}).ProtoReflect().Descriptor()
	if got := confluent.MessageIndex(env); !slices.Equal(got, []int{0}) {
		t.Errorf("Envelope: %v", got)
	}
	if got := confluent.MessageIndex(last); !slices.Equal(got, []int{2}) {
		t.Errorf("TraceContext: %v", got)
	}
}

package rocketmq

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// Topic message types (the broker's message.type topic attribute). The
// gRPC proxy and the 5.x clients refuse a message whose type the topic
// does not accept, so a retry topic, which holds timer messages, is DELAY
// (the 5.x members send every copy with a delivery time, now when due at
// once; MIXED would need the broker's enableMixedMessageType); every other
// topic is NORMAL, TRANSACTION when it takes transactional (half)
// messages (Config.TransactionTopics, TxProducer), or FIFO when its
// messages carry a message group (Config.FIFOTopics). The broker itself checks
// no type: runtime-go's copies due at once go without a timer, and its
// ordinary sends may go to a TRANSACTION topic.
const (
	typeNormal      = "NORMAL"
	typeDelay       = "DELAY"
	typeTransaction = "TRANSACTION"
	typeFIFO        = "FIFO"
)

// The remoting protocol's request codes UPDATE_AND_CREATE_TOPIC and
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, and its answer SUCCESS.
const (
	codeCreateTopic = 17
	codeCreateGroup = 200
	codeSuccess     = 0
)

var opaque atomic.Int32

// remotingHeader is the JSON header of a remoting command.
type remotingHeader struct {
	Code      int               `json:"code"`
	Language  string            `json:"language"`
	Version   int               `json:"version"`
	Opaque    int32             `json:"opaque"`
	Flag      int               `json:"flag"`
	Remark    string            `json:"remark,omitempty"`
	ExtFields map[string]string `json:"extFields,omitempty"`
	Serialize string            `json:"serializeTypeCurrentRPC"`
}

// createTopic creates (or updates) topic on the broker at addr with queues
// read and write queues and the given message type, and returns the
// broker's refusal as an error. rocketmq-client-go's admin.CreateTopic
// neither sets topic attributes nor reads the broker's answer, so the
// transport makes this request itself.
func createTopic(ctx context.Context, addr, topic string, queues int, messageType string) error {
	return invoke(ctx, addr, codeCreateTopic, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": strconv.Itoa(queues),
		"writeQueueNums": strconv.Itoa(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
		"topicSysFlag": "0", "order": "false", "attributes": "+message.type=" + messageType,
	}, nil)
}

// groupConfig is the broker's subscription group settings (its JSON
// names); the broker keeps its defaults for what is left out.
type groupConfig struct {
	GroupName             string `json:"groupName"`
	ConsumeEnable         bool   `json:"consumeEnable"`
	ConsumeFromMinEnable  bool   `json:"consumeFromMinEnable"`
	ConsumeMessageOrderly bool   `json:"consumeMessageOrderly"`
	RetryQueueNums        int    `json:"retryQueueNums"`
	RetryMaxTimes         int    `json:"retryMaxTimes"`
}

// createGroup creates (or updates, with the broker's defaults but for
// orderly) the subscription group on the broker at addr. An orderly
// group is what RocketMQ 5 calls a FIFO group: the broker hands its
// 5.x consumers a queue's messages in order, the next only once the one
// before is acknowledged.
func createGroup(ctx context.Context, addr, group string, orderly bool) error {
	body, err := json.Marshal(groupConfig{GroupName: group, ConsumeEnable: true, ConsumeFromMinEnable: true,
		ConsumeMessageOrderly: orderly, RetryQueueNums: 1, RetryMaxTimes: 16})
	if err != nil {
		return err
	}
	return invoke(ctx, addr, codeCreateGroup, nil, body)
}

// invoke sends one remoting request (a frame of total length, header
// length with JSON serialization, the header, the body) to addr and
// returns the broker's refusal as an error.
func invoke(ctx context.Context, addr string, code int, ext map[string]string, body []byte) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req := remotingHeader{Code: code, Language: "GO", Version: 317, Opaque: opaque.Add(1), Serialize: "JSON", ExtFields: ext}
	hdr, err := json.Marshal(req)
	if err != nil {
		return err
	}
	frame := make([]byte, 8, 8+len(hdr)+len(body))
	binary.BigEndian.PutUint32(frame[0:4], uint32(4+len(hdr)+len(body)))
	binary.BigEndian.PutUint32(frame[4:8], uint32(len(hdr))) // high byte 0: JSON
	frame = append(append(frame, hdr...), body...)
	if _, err := conn.Write(frame); err != nil {
		return err
	}
	res, err := readRemoting(conn)
	if err != nil {
		return fmt.Errorf("read the broker's answer: %w", err)
	}
	if res.Opaque != req.Opaque {
		return fmt.Errorf("the broker answered request %d, not %d", res.Opaque, req.Opaque)
	}
	if res.Code != codeSuccess {
		return fmt.Errorf("the broker refused (code %d): %s", res.Code, res.Remark)
	}
	return nil
}

// readRemoting reads one remoting command's header from r.
func readRemoting(r io.Reader) (*remotingHeader, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, err
	}
	total := binary.BigEndian.Uint32(pre[0:4])
	kind := pre[4]
	hlen := binary.BigEndian.Uint32(pre[4:8]) & 0xFFFFFF
	if kind != 0 {
		return nil, fmt.Errorf("header serialization %d, not JSON", kind)
	}
	if hlen > total-4 || total > 16<<20 {
		return nil, errors.New("malformed frame")
	}
	buf := make([]byte, total-4)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	var h remotingHeader
	if err := json.Unmarshal(buf[:hlen], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return &h, nil
}

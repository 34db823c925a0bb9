// Package conformance runs one suite of test vectors against the Go, Java
// and Python code msgcontract generates, in the spirit of protovalidate's
// conformance runner: a Go runner feeds cases to each language's executor
// and compares exact results.
//
// The vector format is DESIGN.md's. The executor protocol:
//
//   - The runner loads a vector file, generates code for its protos in the
//     executor's language into a work directory, and asks the executor to
//     run every case.
//   - An executor returns one Result per case, in case order, holding only
//     what its language's generated code computed. The runner compares
//     each Result with the case's expect object (Compare).
package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Case kinds.
const (
	KindBizKey     = "biz_key"
	KindClassify   = "classify"
	KindBackoff    = "backoff"
	KindTransition = "transition"
	// KindPayloadHash hashes a payload given as proto JSON (Input) or
	// base64 binary (InputBinary), DESIGN.md "Payload hash".
	KindPayloadHash = "payload_hash"
	// KindDecision runs the language's decision step on an Outcome (with
	// Code, RetryCount, U, and a retry chain: Chain, ReplayCount,
	// DeliveryID) and reports the decision.
	KindDecision = "decision"
	// KindHandlerCalls runs Batch, one fetch or transaction of messages,
	// through the language's consumer and counts each member's handler
	// runs (HandlerCalls).
	KindHandlerCalls = "handler_calls"
	// KindTxCheck answers a broker's check-back on a transactional (half)
	// message with the language's txcheck rule, on a database where the
	// row of MessageID is Recorded (or not), and computes the producer's
	// deadline (Answer, DeadlineMs). It names no proto message.
	KindTxCheck = "txcheck"
)

// Answers of a txcheck case.
const (
	AnswerCommit   = "COMMIT"   // deliver the half message
	AnswerUnknown  = "UNKNOWN"  // ask again later
	AnswerRollback = "ROLLBACK" // discard it
)

// Outcomes of a decision case.
const (
	OutcomeOK        = "ok"        // the handler succeeded
	OutcomeDuplicate = "duplicate" // the key was claimed with the same payload
	OutcomeConflict  = "conflict"  // the key was claimed with another payload
	OutcomeError     = "error"     // the handler failed with Code (absent: no code)
)

// Members of a handler_calls batch.
const (
	MemberOK   = "ok"   // the handler succeeds
	MemberFail = "fail" // the handler fails with Code (absent: no code) on its first attempt, then succeeds
)

// VectorFile is one JSON vector file.
type VectorFile struct {
	// ProtoRoot is relative to the vector file.
	ProtoRoot string   `json:"proto_root"`
	Files     []string `json:"files"`
	Cases     []Case   `json:"cases"`
	// Path is where the file was read from; ProtoDir the resolved root.
	Path     string `json:"-"`
	ProtoDir string `json:"-"`
}

// Case is one test case. Which fields matter depends on Kind.
type Case struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
	// Input is the payload in proto JSON (biz_key, payload_hash).
	Input json.RawMessage `json:"input,omitempty"`
	// InputBinary is the payload's binary encoding in base64
	// (payload_hash); when set, Input is ignored.
	InputBinary string `json:"input_binary,omitempty"`
	// Code is the error code (classify, and a failing handler's in
	// decision and handler_calls); absent means an error with no code.
	Code *int32 `json:"code,omitempty"`
	// Retry (1-based) and U (in [0,1)) select a backoff delay.
	Retry int     `json:"retry,omitempty"`
	U     float64 `json:"u,omitempty"`
	// Enum, From and To ask CanTransit (transition).
	Enum string `json:"enum,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Outcome (decision) is one of the Outcome constants; RetryCount and
	// ReplayCount are the delivered envelope's.
	Outcome     string `json:"outcome,omitempty"`
	RetryCount  int    `json:"retry_count,omitempty"`
	ReplayCount int    `json:"replay_count,omitempty"`
	// Chain (decision) is the message's retry-chain row, as the copy
	// stored as DeliveryID finds it: the place of the copy that last went
	// on to a retry or a dead letter (DESIGN.md "One retry chain per
	// message").
	Chain      *ChainRow `json:"chain,omitempty"`
	DeliveryID string    `json:"delivery_id,omitempty"`
	// Batch (handler_calls) lists the members of one batch, each a
	// Member constant, all published before the consumer starts.
	Batch []string `json:"batch,omitempty"`
	// MessageID (txcheck) is the half message's envelope message id, as
	// the check-back names it; it may be empty. Recorded says its business
	// transaction committed the row of MessageID in msg_tx_check;
	// OtherRecorded lists other message ids whose rows are there too.
	MessageID     string   `json:"message_id,omitempty"`
	Recorded      bool     `json:"recorded,omitempty"`
	OtherRecorded []string `json:"other_recorded,omitempty"`
	// StoredMs, NowMs and UnresolvedMs (txcheck, all required) are the
	// half message's stored (born) time and the check-back's, in Unix ms,
	// and the unresolved window in ms (above 0).
	StoredMs     *int64 `json:"stored_ms,omitempty"`
	NowMs        *int64 `json:"now_ms,omitempty"`
	UnresolvedMs *int64 `json:"unresolved_ms,omitempty"`
	Expect       Result `json:"expect"`
}

// ChainRow is a retry-chain row: a copy's place in its message's chain.
type ChainRow struct {
	ReplayCount int    `json:"replay_count"`
	Attempt     int    `json:"attempt"`
	DeliveryID  string `json:"delivery_id"`
}

// Result is what generated code computed for a case; as an expectation,
// only the fields present are compared.
type Result struct {
	BizKey     *string `json:"biz_key,omitempty"`
	Error      *string `json:"error,omitempty"`
	Retryable  *bool   `json:"retryable,omitempty"`
	Range      *string `json:"range,omitempty"`
	DelayMs    *int64  `json:"delay_ms,omitempty"`
	DeadLetter *bool   `json:"dead_letter,omitempty"`
	Result     *string `json:"result,omitempty"`
	// PayloadHash is DESIGN.md's payload hash (payload_hash).
	PayloadHash *string `json:"payload_hash,omitempty"`
	// Decision (decision) is "ack", "retry" or "dead_letter".
	// Deduplicated (ack) says the handler did not run or does not count;
	// RetryCount and DelayMs (retry) are the retry copy's retry_count and
	// its delay; Reason, Code and Attempts (dead_letter) the record's.
	Decision     *string `json:"decision,omitempty"`
	Deduplicated *bool   `json:"deduplicated,omitempty"`
	RetryCount   *int    `json:"retry_count,omitempty"`
	Reason       *string `json:"reason,omitempty"`
	Code         *int32  `json:"code,omitempty"`
	Attempts     *int    `json:"attempts,omitempty"`
	// HandlerCalls (handler_calls) counts each batch member's handler
	// runs, over every delivery attempt, in Batch's order.
	HandlerCalls *[]int `json:"handler_calls,omitempty"`
	// Answer (txcheck) is the check-back's answer, an Answer constant;
	// DeadlineMs the Unix ms at which a producer stops committing the
	// business transaction of the half message.
	Answer     *string `json:"answer,omitempty"`
	DeadlineMs *int64  `json:"deadline_ms,omitempty"`
}

// empty reports whether r has no field: as an expectation it would
// compare nothing.
func (r Result) empty() bool {
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).IsNil() {
			return false
		}
	}
	return true
}

func (r Result) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Compare returns "" when got satisfies want, or a description of every
// field that differs.
func Compare(want, got Result) string {
	var diffs []string
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	t := wv.Type()
	for i := 0; i < t.NumField(); i++ {
		w := wv.Field(i)
		if w.IsNil() {
			continue
		}
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		g := gv.Field(i)
		if g.IsNil() {
			diffs = append(diffs, fmt.Sprintf("%s: want %v, got nothing", name, w.Elem()))
			continue
		}
		if !reflect.DeepEqual(w.Elem().Interface(), g.Elem().Interface()) {
			diffs = append(diffs, fmt.Sprintf("%s: want %#v, got %#v", name, w.Elem().Interface(), g.Elem().Interface()))
		}
	}
	return strings.Join(diffs, "; ")
}

// LoadDir reads every *.json vector file under dir, sorted by path.
func LoadDir(dir string) ([]*VectorFile, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*VectorFile
	for _, p := range paths {
		vf, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, vf)
	}
	return out, nil
}

// LoadFile reads one vector file and checks that its cases are well formed.
func LoadFile(path string) (*VectorFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var vf VectorFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&vf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	vf.Path = path
	vf.ProtoDir = filepath.Join(filepath.Dir(path), filepath.FromSlash(vf.ProtoRoot))
	seen := map[string]bool{}
	for i, c := range vf.Cases {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%s: case %d has no name", path, i)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: case name %q is used twice", path, c.Name)
		}
		seen[c.Name] = true
		if c.Expect.empty() {
			return nil, fmt.Errorf("%s: case %q has an empty \"expect\": it would check nothing", path, c.Name)
		}
		switch c.Kind {
		case KindBizKey, KindClassify, KindBackoff, KindPayloadHash:
			if c.Message == "" {
				return nil, fmt.Errorf("%s: case %q (%s) needs \"message\"", path, c.Name, c.Kind)
			}
		case KindDecision:
			switch {
			case c.Message == "":
				return nil, fmt.Errorf("%s: case %q (decision) needs \"message\"", path, c.Name)
			case c.Outcome != OutcomeOK && c.Outcome != OutcomeDuplicate && c.Outcome != OutcomeConflict &&
				c.Outcome != OutcomeError:
				return nil, fmt.Errorf("%s: case %q (decision) has outcome %q; want ok, duplicate, conflict or error",
					path, c.Name, c.Outcome)
			case c.Chain != nil && c.DeliveryID == "":
				return nil, fmt.Errorf("%s: case %q (decision) has a chain but no \"delivery_id\"", path, c.Name)
			}
		case KindHandlerCalls:
			if c.Message == "" || len(c.Batch) == 0 {
				return nil, fmt.Errorf("%s: case %q (handler_calls) needs \"message\" and \"batch\"", path, c.Name)
			}
			for _, m := range c.Batch {
				if m != MemberOK && m != MemberFail {
					return nil, fmt.Errorf("%s: case %q (handler_calls) has batch member %q; want ok or fail",
						path, c.Name, m)
				}
			}
		case KindTxCheck:
			if err := checkTxCheck(c); err != "" {
				return nil, fmt.Errorf("%s: case %q (txcheck) %s", path, c.Name, err)
			}
		case KindTransition:
			if c.Enum == "" {
				return nil, fmt.Errorf("%s: case %q (transition) needs \"enum\"", path, c.Name)
			}
		default:
			return nil, fmt.Errorf("%s: case %q has unknown kind %q", path, c.Name, c.Kind)
		}
	}
	return &vf, nil
}

// maxWindowMs is the longest unresolved window Go's time.Duration holds, in ms.
const maxWindowMs = int64(math.MaxInt64 / time.Millisecond)

// checkTxCheck returns what is wrong with txcheck case c, or "".
func checkTxCheck(c Case) string {
	switch {
	case c.Message != "":
		return "names a message; a check-back runs on no generated code"
	case c.StoredMs == nil || c.NowMs == nil || c.UnresolvedMs == nil:
		return `needs "stored_ms", "now_ms" and "unresolved_ms"`
	case *c.StoredMs < 0 || *c.NowMs < 0:
		return fmt.Sprintf("has stored_ms %d and now_ms %d; want Unix ms, 0 or above", *c.StoredMs, *c.NowMs)
	case *c.UnresolvedMs <= 0 || *c.UnresolvedMs > maxWindowMs:
		return fmt.Sprintf("has unresolved_ms %d; want a window above 0 and at most %d (Go's time.Duration)",
			*c.UnresolvedMs, maxWindowMs)
	case c.Recorded && c.MessageID == "":
		return `is "recorded" with no "message_id": no producer records an empty message id`
	case c.Expect.Answer != nil && *c.Expect.Answer != AnswerCommit && *c.Expect.Answer != AnswerUnknown &&
		*c.Expect.Answer != AnswerRollback:
		return fmt.Sprintf("expects answer %q; want COMMIT, UNKNOWN or ROLLBACK", *c.Expect.Answer)
	}
	seen := map[string]bool{}
	for _, id := range c.OtherRecorded {
		switch {
		case id == "":
			return `has an empty message id in "other_recorded"`
		case id == c.MessageID:
			return fmt.Sprintf(`has its own message id %q in "other_recorded"; say "recorded" instead`, id)
		case seen[id]:
			return fmt.Sprintf(`has %q in "other_recorded" twice`, id)
		}
		seen[id] = true
	}
	return ""
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// writeCorpus writes n synthetic files under dir, each in a package of
// its own, and returns their paths. One file in every plainEvery (all of
// them when plainEvery is 1) is a contract: file defaults with two error
// ranges, a four-state state machine, an event keyed on a string and an
// integer, an event keyed through a nested sub-message with an enum and
// its own retry policy, and a plain message. The others are the same
// messages with no msgcontract options, as most files of a large
// repository are.
func writeCorpus(dir string, n, plainEvery int) ([]string, error) {
	var paths []string
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("bench/p%03d/v1/p%03d.proto", i, i)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		src := corpusFile(i)
		if i%plainEvery != 0 {
			src = plainFile(i)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func corpusFile(i int) string {
	return strings.NewReplacer("NNN", fmt.Sprintf("%03d", i)).Replace(`// Synthetic contract NNN of the codegen benchmark.
syntax = "proto3";

package bench.pNNN.v1;

import "msgcontract/v1/options.proto";

option go_package = "bench.example/gen/bench/pNNN/v1;pNNNv1";

option (msgcontract.v1.defaults) = {
  retry: { base_delay: "1s" multiplier: 2 jitter: "1s" max_delay: "60s" max_retries: 6 }
  error_ranges: [
    { from: 40000 to: 49999 retryable: false name: "business" },
    { from: 50000 to: 59999 retryable: true name: "system" }
  ]
  unclassified: RETRYABLE
};

// ShipmentState is the lifecycle of a shipment.
enum ShipmentState {
  option (msgcontract.v1.state_machine) = {};
  SHIPMENT_STATE_UNSPECIFIED = 0;
  CREATED = 1;
  PACKED = 2 [(msgcontract.v1.transition) = { from: ["CREATED"] }];
  SHIPPED = 3 [(msgcontract.v1.transition) = { from: ["PACKED"] }];
  DELIVERED = 4 [(msgcontract.v1.transition) = { from: ["SHIPPED"] }];
}

// Channel is how an order came in.
enum Channel {
  CHANNEL_UNSPECIFIED = 0;
  WEB = 1;
  STORE = 2;
}

// Parcel is a plain message.
message Parcel {
  string id = 1;
  int64 weight_grams = 2;
  Channel channel = 3;
  repeated string labels = 4;
}

// ShipmentPacked: a shipment was packed.
message ShipmentPacked {
  option (msgcontract.v1.event) = {
    topic: "shipment-NNN"
    event_type: "SHIPMENT_PACKED"
    biz_key: "shipment:{shipment_id}:packed:{attempt}"
    target_state: "ShipmentState.PACKED"
  };
  string shipment_id = 1;
  int32 attempt = 2;
  Parcel parcel = 3;
  map<string, string> attributes = 4;
}

// ShipmentShipped: a shipment left the warehouse.
message ShipmentShipped {
  option (msgcontract.v1.event) = {
    topic: "shipment-NNN"
    event_type: "SHIPMENT_SHIPPED"
    biz_key: "shipment:{shipment_id}:parcel:{parcel.id}:{parcel.channel}"
    target_state: "ShipmentState.SHIPPED"
    retry: { base_delay: "200ms" multiplier: 1.5 jitter: "100ms" max_delay: "5s" max_retries: 8 }
  };
  string shipment_id = 1;
  Parcel parcel = 2;
  optional string carrier = 3;
  int64 shipped_at_ms = 4;
}
`)
}

// plainFile is corpusFile's messages and enums without any msgcontract
// option or import.
func plainFile(i int) string {
	return msgcontractOption.ReplaceAllString(corpusFile(i), "")
}

// msgcontractOption matches the options import, every msgcontract option
// statement (up to the first "};", which ends each of corpusFile's) and the
// transition options of enum values.
var msgcontractOption = regexp.MustCompile(`(?ms)^import "msgcontract/v1/options.proto";\n|^ *option \(msgcontract\.v1\.\w+\) = \{.*?\};\n| \[\(msgcontract\.v1\.transition\) = \{[^}]*\}\]`)

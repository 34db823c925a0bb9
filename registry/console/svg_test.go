package console

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/codegen/model"
)

const machineProto = `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
enum Ticket {
  option (msgcontract.v1.state_machine) = {};
  TICKET_UNSPECIFIED = 0;
  OPEN = 1;
  ASSIGNED = 2 [(msgcontract.v1.transition) = { from: ["OPEN", "REOPENED"] }];
  RESOLVED = 3 [(msgcontract.v1.transition) = { from: ["ASSIGNED", "OPEN"] }];
  REOPENED = 4 [(msgcontract.v1.transition) = { from: ["RESOLVED"] }];
  CLOSED = 5 [(msgcontract.v1.transition) = { from: ["RESOLVED", "OPEN"] }];
}
message Assigned {
  option (msgcontract.v1.event) = { topic: "tickets" event_type: "ASSIGNED" biz_key: "t:{id}" target_state: "Ticket.ASSIGNED"
    retry: { base_delay: "200ms" multiplier: 3 jitter: "100ms" max_delay: "5s" max_retries: 5 } };
  string id = 1;
}
message Closed {
  option (msgcontract.v1.event) = { topic: "tickets" event_type: "CLOSED" biz_key: "t:{id}:closed" target_state: "Ticket.CLOSED" };
  string id = 1;
}
`

// TestContractView: forward arcs over skipped states, backward arcs, one
// chart per distinct policy, and the zero value left out of the diagram.
func TestContractView(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": machineProto}, ImportPaths: []string{"\x00none"}}, "t.proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatal(set.Diagnostics)
	}
	d := contractView(set.Files[0])
	if len(d.Charts) != 2 {
		t.Fatalf("%d retry charts, want 2 (the event's own policy and the default)", len(d.Charts))
	}
	if len(d.Machines) != 1 {
		t.Fatalf("%d machines", len(d.Machines))
	}
	svg := string(d.Machines[0].SVG)
	for what, want := range map[string]int{
		`<line class="edge"`:  3, // neighbours: OPEN→ASSIGNED, ASSIGNED→RESOLVED, RESOLVED→REOPENED
		`<path class="edge"`:  3, // over other states: OPEN→RESOLVED, RESOLVED→CLOSED, OPEN→CLOSED
		`class="edge back"`:   1, // REOPENED→ASSIGNED
		`class="state entry"`: 1, // OPEN
		`TICKET_UNSPECIFIED`:  0,
		`⇢ ASSIGNED`:          1,
		`⇢ CLOSED`:            1,
	} {
		if got := strings.Count(svg, what); got != want {
			t.Errorf("%s appears %d times, want %d", what, got, want)
		}
	}
	if dir := os.Getenv("CONSOLE_SVG"); dir != "" {
		page := `<html><head><link rel="stylesheet" href="static/console.css"></head><body><main>` + svg + string(d.Charts[0].SVG) + `</main></body></html>`
		if err := os.WriteFile(dir+"/contract-svg.html", []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDur(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Duration]string{
		time.Minute: "1m", time.Hour: "1h", 90 * time.Second: "1m30s", time.Second: "1s", 0: "0s",
		1500 * time.Millisecond: "1.5s", 200 * time.Millisecond: "200ms", 10 * time.Second: "10s",
	} {
		if got := dur(in); got != want {
			t.Errorf("dur(%v) = %q, want %q", in, got, want)
		}
	}
}

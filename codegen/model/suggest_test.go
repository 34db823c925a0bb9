package model

import "testing"

func TestSuggest(t *testing.T) {
	fields := []string{"topic", "event_type", "biz_key", "retry", "target_state"}
	states := []string{"STATE_UNSPECIFIED", "PAYING", "PAID", "SHIPPED"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string // "" for no suggestion
	}{
		{"biz_kye", fields, "biz_key"},          // two neighbours swapped
		{"bizkey", fields, "biz_key"},           // one deleted
		{"topci", fields, "topic"},              // swap at the end
		{"event_typ", fields, "event_type"},     // one missing
		{"tpoic", fields, "topic"},              // swap at the start
		{"BIZ_KEY", fields, "biz_key"},          // case is no distance
		{"PAYED", states, "PAID"},               // two edits in five letters
		{"SHIPED", states, "SHIPPED"},           // one missing
		{"paid", states, "PAID"},                // case
		{"DELIVERED", states, ""},               // nothing close
		{"x", fields, ""},                       // one letter is close to nothing
		{"biz_key", fields, ""},                 // itself is no suggestion
		{"key", fields, ""},                     // 4 edits from biz_key
		{"retyr", fields, "retry"},              // swap
		{"target_sate", fields, "target_state"}, // one missing
		{"msgcontract.v1.evnet", []string{"msgcontract.v1.defaults", "msgcontract.v1.event", "msgcontract.v1.state_machine", "msgcontract.v1.transition"}, "msgcontract.v1.event"},
		{"anything", nil, ""},
	} {
		got, ok := Suggest(tc.name, tc.candidates)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Suggest(%q) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"ab", "ba", 1}, {"abcd", "acbd", 1}, {"kitten", "sitting", 3},
		{"PAYED", "PAID", 2}, {"ca", "abc", 3}, // OSA: no edit of a swapped pair
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestExplainCompileError(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`message a.Paid: option (msgcontract.v1.event): field biz_kye not found`,
			`message a.Paid: option (msgcontract.v1.event): unknown field "biz_kye"; did you mean "biz_key" (msgcontract.v1.Event.biz_key)?`},
		{`message a.Paid: option (msgcontract.v1.event): field bse_delay not found`,
			`message a.Paid: option (msgcontract.v1.event): unknown field "bse_delay"; did you mean "base_delay" (msgcontract.v1.RetryPolicy.base_delay)?`},
		{`file a.proto: option (msgcontract.v1.defaults): field retryable_x not found`,
			`file a.proto: option (msgcontract.v1.defaults): unknown field "retryable_x"; did you mean "retryable" (msgcontract.v1.ErrorRange.retryable)?`},
		{`file a.proto: option (msgcontract.v1.defaults): field nonsense not found`,
			`file a.proto: option (msgcontract.v1.defaults): field nonsense not found`},
		{`message a.Paid: unknown extension msgcontract.v1.evnet`,
			`message a.Paid: unknown extension msgcontract.v1.evnet; did you mean (msgcontract.v1.event)?`},
		{`enum a.State: unknown extension msgcontract.v1.state_machin`,
			`enum a.State: unknown extension msgcontract.v1.state_machin; did you mean (msgcontract.v1.state_machine)?`},
		{`message a.Paid: unknown extension acme.v1.nothing_like_it`, `message a.Paid: unknown extension acme.v1.nothing_like_it`},
		{`message a.Paid: option (acme.v1.other): field x not found`, `message a.Paid: option (acme.v1.other): field x not found`},
		{`syntax error: expecting ';'`, `syntax error: expecting ';'`},
	} {
		if got := explainCompileError(tc.in); got != tc.want {
			t.Errorf("explainCompileError(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/codegen/model"
)

func newLintCmd() *cobra.Command {
	var (
		pf      ProtoFlags
		explain bool
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "lint [-I DIR]... FILE...",
		Short: "Check contracts against msgcontract's rules",
		Long: `lint compiles the .proto files and checks every msgcontract option:

  - biz_key placeholders name singular string, integer, bool or enum fields
    (dotted paths into singular sub-messages allowed); never float, double,
    bytes, repeated, map or message fields, whose text differs between
    languages; braces balance ("{{" and "}}" are literal braces);
  - error ranges do not overlap and have from <= to;
  - retry durations parse, max_retries is within 0..30, multiplier >= 1;
  - transitions name values of their own enum, never the zero value;
    target_state names a value of a state-machine enum, in this file or
    an imported one;
  - every target language can represent the contract: no generated Go
    identifier collides with one protoc-gen-go declares (or two elements
    protoc-gen-go names alike), protoc's Java outer class is an
    identifier, and no file's Java contract class or Python module is
    another file's (its contract class, or a class protoc generates for
    it). Java and Python rename their own clashing names instead
    (docs/DESIGN.md, "Name mangling per language").

Each problem is printed to stdout as one line, FILE:LINE:COL: RULE:
message, pointing at the offending value; stderr gets their count. A file
that cannot be read or compiled gets its positioned errors on stderr and
no rule is checked. Clean contracts get one line on stderr, such as
"ok: 2 files, 5 events, 1 state machine, 0 problems" (-q: none), so stdout
holds findings alone. Exit status: 0 clean, 1 problems found, 2 a file that
cannot be read or compiled, or a usage error.

--explain also prints, per event, its topic, event type, biz_key and the
retry schedule with the worst-case time before a message is dead-lettered.`,
		Example: `  msgcontract lint -I proto proto/shop/payment/v1/payment.proto
  msgcontract lint --explain -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		Args: MinArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := pf.Load(cmd, args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, d := range set.Diagnostics {
				fmt.Fprintln(out, d)
			}
			if explain {
				writeExplain(out, set)
			}
			if n := len(set.Diagnostics); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract lint: %d problem%s\n", n, Plural(n))
				return Findings()
			}
			if !quiet {
				fmt.Fprintln(cmd.ErrOrStderr(), lintSummary(set))
			}
			return nil
		},
	}
	pf.Register(cmd)
	cmd.Flags().BoolVar(&explain, "explain", false, "print each event's key, topic and retry schedule")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, `do not print the "ok:" line of clean contracts (problems are still printed)`)
	return cmd
}

// lintSummary is the line a clean lint ends with: "ok: 2 files, 5
// events, 1 state machine, 0 problems".
func lintSummary(set *model.Set) string {
	events, machines := 0, 0
	for _, f := range set.Files {
		events += len(f.Events)
		machines += len(f.StateMachines)
	}
	return fmt.Sprintf("ok: %s, %s, %s, 0 problems",
		Count(len(set.Files), "file"), Count(events, "event"), Count(machines, "state machine"))
}

// Count is "1 file", "2 files".
func Count(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, Plural(n)) }

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeExplain(out io.Writer, set *model.Set) {
	for _, f := range set.Files {
		for _, e := range f.Events {
			fmt.Fprintf(out, "\nevent %s (%s)\n", e.Name(), e.Pos)
			fmt.Fprintf(out, "  topic:        %s\n", e.Topic)
			fmt.Fprintf(out, "  event type:   %s\n", e.EventType)
			fmt.Fprintf(out, "  biz_key:      %s\n", e.BizKeyTemplate)
			if e.TargetState != nil {
				fmt.Fprintf(out, "  target state: %s.%s\n", e.TargetState.Machine.Desc.Name(), e.TargetState.Value.Name())
			}
			source := "file default"
			if e.PolicyFromEvent {
				source = "the event's own"
			}
			p := e.Policy
			fmt.Fprintf(out, "  retry policy: %s: base %s, x%g, jitter up to %s, max delay %s, %d retries\n",
				source, ms(p.BaseMs), p.Multiplier, ms(p.JitterMs), ms(p.MaxDelayMs), p.MaxRetries)
			fmt.Fprintf(out, "  error codes:  %s\n", describeRules(e.Rules))
			if p.MaxRetries == 0 {
				fmt.Fprintln(out, "  no retries: the first retryable failure is dead-lettered")
				continue
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "  \tretry\tdelay\twith max jitter\tcumulative\tcumulative with jitter\t")
			for _, s := range p.Schedule() {
				fmt.Fprintf(tw, "  \t%d\t%s\t%s\t%s\t%s\t\n", s.Retry, s.Delay, s.MaxJitter, s.Cumulative, s.CumMax)
			}
			tw.Flush()
			base, jitter := p.WorstCase()
			fmt.Fprintf(out, "  worst case before dead-letter: %gs without jitter, up to %gs with jitter (%d attempts)\n",
				base.Seconds(), (base + jitter).Seconds(), p.MaxRetries+1)
		}
	}
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

func describeRules(r model.Rules) string {
	var parts []string
	for _, rg := range r.Ranges {
		kind := "not retryable"
		if rg.Retryable {
			kind = "retryable"
		}
		parts = append(parts, fmt.Sprintf("%d..%d %s (%s)", rg.From, rg.To, rg.Name, kind))
	}
	other := "retryable"
	if !r.UnclassifiedRetryable {
		other = "not retryable"
	}
	parts = append(parts, "other codes and errors without a code "+other)
	return strings.Join(parts, "; ")
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
)

func newBizkeyCmd() *cobra.Command {
	var (
		pf      ProtoFlags
		message string
		payload string
	)
	cmd := &cobra.Command{
		Use:   "bizkey [-I DIR]... --message FULL.NAME --json PAYLOAD FILE...",
		Short: "Compute an event's biz_key from a JSON payload",
		Long: `bizkey renders the biz_key of an event from a payload in proto JSON, by the
same rules generated producers follow in every language. Use it to compare
the keys in producer and consumer logs, or to check what a template yields.

The payload uses proto field names (order_id, not orderId). --json - reads
it from standard input.

Prints the key and exits 0. When the key cannot be rendered, prints
EMPTY_FIELD (an empty string, an unset sub-message on a dotted path or an
absent optional field) or KEY_TOO_LONG (over 512 bytes after encoding) and
exits 1. Exits 2 on usage errors, an unknown message or a malformed payload.`,
		Example: `  msgcontract bizkey -I examples/proto --message shop.payment.v1.PaySuccess \
      --json '{"order_id":"20250101_0001","amount":10000}' examples/proto/shop/payment/v1/payment.proto`,
		Args: MinArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if message == "" || payload == "" {
				return UsageErr(errors.New("--message and --json are required; see --help"))
			}
			set, err := pf.Load(cmd, args)
			if err != nil {
				return err
			}
			if len(set.Diagnostics) > 0 {
				for _, d := range set.Diagnostics {
					fmt.Fprintln(cmd.ErrOrStderr(), d)
				}
				return UsageErr(errors.New("the contract has lint errors; fix them first (msgcontract lint)"))
			}
			ev := set.Event(message)
			if ev == nil {
				return UsageErr(fmt.Errorf("no event %q in %v; pass the message's full name (package.Message) of a message with an event option", message, args))
			}
			raw := []byte(payload)
			if payload == "-" {
				if raw, err = io.ReadAll(os.Stdin); err != nil {
					return UsageErr(err)
				}
			}
			m := dynamicpb.NewMessage(ev.Desc)
			if err := protojson.Unmarshal(raw, m); err != nil {
				return UsageErr(fmt.Errorf("payload is not valid proto JSON for %s: %w", message, err))
			}
			key, err := ev.RenderBizKey(m)
			if err != nil {
				var ke *bizkey.Error
				if errors.As(err, &ke) {
					fmt.Fprintln(cmd.ErrOrStderr(), ke.Error())
					return Findings()
				}
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	pf.Register(cmd)
	cmd.Flags().StringVar(&message, "message", "", "full name of the event message, e.g. shop.payment.v1.PaySuccess")
	cmd.Flags().StringVar(&payload, "json", "", "the payload as proto JSON with proto field names, or - for standard input")
	return cmd
}

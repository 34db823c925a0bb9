package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// notYet is the honest answer of a command whose implementation has not
// landed; it exits 2 so no script mistakes it for success.
func notYet(use, short string) func() *cobra.Command {
	return func() *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short + " (not yet implemented)",
			RunE: func(*cobra.Command, []string) error {
				return usageErr(errors.New(use + " is not implemented yet in this build"))
			},
		}
	}
}

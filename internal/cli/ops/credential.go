package ops

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/registry/access"
)

// newCredentialCmd makes the secrets an access file holds: it prints the
// entry to paste, never storing a secret in clear.
func newCredentialCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "credential",
		Short: "Make a user's password hash or a new bearer token for the registry's access file",
		Long: `credential prints an entry for the access file of "msgcontract registry serve
--access-file" (docs/registry-security.md): a user with the argon2id hash of
a password, or a new random bearer token with its hash. The access file
holds only hashes; the server reloads it when it changes, so a new
credential works without a restart.`,
		Example: `  printf '%s\n' "$PASSWORD" | msgcontract-ops registry credential password --name alice >> users.yaml
  msgcontract-ops registry credential token --name deploy-bot --token-out deploy-bot.token`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return cli.UsageErr(errors.New("a subcommand is required: password or token; see --help"))
		},
	}
	cmd.AddCommand(newCredentialPasswordCmd(), newCredentialTokenCmd())
	return cmd
}

func newCredentialPasswordCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "password --name USER",
		Short: "Hash a password read from standard input into a users: entry",
		Long: `password reads one line, the password, from standard input (so it stays out
of the shell history and the process list) and prints a users: entry with
its argon2id hash. Confluent clients send the user and password as
basic.auth.user.info=USER:PASSWORD. Exits 2 when the name or the password
is missing.`,
		Example: `  printf '%s\n' "$PASSWORD" | msgcontract-ops registry credential password --name alice`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || strings.ContainsAny(name, ": \t") {
				return cli.UsageErr(errors.New("--name is required: the user name, without colons or spaces"))
			}
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			password := strings.TrimRight(line, "\r\n")
			if password == "" {
				if err != nil && !errors.Is(err, os.ErrClosed) {
					return cli.UsageErr(errors.New("no password on standard input; pipe it in: printf '%s\\n' \"$PASSWORD\" | msgcontract-ops registry credential password --name " + name))
				}
				return cli.UsageErr(errors.New("the password on standard input is empty"))
			}
			hash, err := access.HashSecret(password)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# under users: in the access file\n- name: %s\n  password_hash: %q\n", name, hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the user name (principal user:NAME)")
	return cmd
}

func newCredentialTokenCmd() *cobra.Command {
	var name, out string
	cmd := &cobra.Command{
		Use:   "token --name NAME [--token-out FILE]",
		Short: "Make a new random bearer token and its tokens: entry",
		Long: `token makes a random bearer token "mct_<id>_<secret>" for principal
token:NAME and prints the tokens: entry to paste into the access file (its
id and argon2id hash). The token itself is shown once: written to
--token-out (mode 0600, refused if the file exists) or, without it, printed
as a comment above the entry. Clients send it as "Authorization: Bearer
<token>", or as the password of HTTP Basic with any user name.`,
		Example: `  msgcontract-ops registry credential token --name deploy-bot --token-out deploy-bot.token`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || strings.ContainsAny(name, ": \t") {
				return cli.UsageErr(errors.New("--name is required: the token's holder, without colons or spaces"))
			}
			token, id, err := access.NewToken()
			if err != nil {
				return err
			}
			hash, err := access.HashSecret(token)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return cli.UsageErr(fmt.Errorf("--token-out: %w (it must not exist yet)", err))
				}
				if _, err := fmt.Fprintln(f, token); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "# the token, shown only this once; give it to %s:\n#   %s\n", name, token)
			}
			fmt.Fprintf(w, "# under tokens: in the access file\n- name: %s\n  id: %s\n  hash: %q\n", name, id, hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the token's holder (principal token:NAME)")
	cmd.Flags().StringVar(&out, "token-out", "", "write the token to this new file (mode 0600) instead of printing it")
	return cmd
}

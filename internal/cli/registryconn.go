package cli

import (
	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/registry/client"
)

// RegistryConn are the flags that reach a registry: its bearer token and,
// over HTTPS, its CA and a client certificate. push, check and
// breaking --against URL share them.
type RegistryConn struct {
	TokenFile string
	TLS       client.TLSFiles
}

// Register adds the flags to cmd.
func (f *RegistryConn) Register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.TokenFile, "token-file", "", "file whose first line is the bearer token sent to the registry (its token, an access-file token or an OIDC token)")
	cmd.Flags().StringVar(&f.TLS.CA, "ca-file", "", "PEM CA certificate(s) the registry's HTTPS certificate must chain to (default: the system's)")
	cmd.Flags().StringVar(&f.TLS.Cert, "client-cert", "", "PEM client certificate, for a registry that authenticates by certificate")
	cmd.Flags().StringVar(&f.TLS.Key, "client-key", "", "the PEM private key of --client-cert")
}

// Client returns a client of the registry at url; errors are usage
// errors naming the flag.
func (f *RegistryConn) Client(url string) (*client.Client, error) {
	token, err := ReadToken(f.TokenFile)
	if err != nil {
		return nil, UsageErr(err)
	}
	hc, err := f.TLS.HTTPClient()
	if err != nil {
		return nil, UsageErr(err)
	}
	return &client.Client{URL: url, Token: token, HTTP: hc}, nil
}

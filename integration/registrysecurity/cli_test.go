//go:build security

package registrysecurity

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/cli/ops"
)

// TestSecurityCLIClients: `registry push` and `breaking --against URL`
// reach a registry over HTTPS with a private CA, as a client certificate
// or with a token or JWT from --token-file, and a refusal is a failure
// that names the principal and the role.
func TestSecurityCLIClients(t *testing.T) {
	w := newWorld(t, "")
	base := w.server(t)
	dir := t.TempDir()
	proto := filepath.Join(dir, "pay", "v1", "pay.proto")
	must(t, os.MkdirAll(filepath.Dir(proto), 0o755))
	must(t, os.WriteFile(proto, []byte(payV2), 0o644))
	ca := filepath.Join(w.dir, "clients-ca.pem")
	certArgs := func(who string) []string {
		cf, kf := writePEM(t, dir, who, *w.byName[who].cert)
		return []string{"--client-cert", cf, "--client-key", kf}
	}
	tokenFile := func(who string) []string {
		f := filepath.Join(dir, who+".token")
		must(t, os.WriteFile(f, []byte(w.byName[who].bearer+"\n"), 0o600))
		return []string{"--token-file", f}
	}
	push := func(extra ...string) []string {
		return append(append([]string{"registry", "push", "--url", base, "--subject", "pay-value", "-I", dir}, extra...), proto)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"push as a writer's certificate", push(append(certArgs("mtls-writer"), "--ca-file", ca)...), 0, ""},
		{"push as a reader's certificate", push(append(certArgs("mtls-reader"), "--ca-file", ca)...), 1, "cert:mtls-reader may not register"},
		{"push with a writer's token", push(append(tokenFile("bearer-writer"), "--ca-file", ca)...), 0, ""},
		{"push with a reader's JWT", push(append(tokenFile("jwt-reader"), "--ca-file", ca)...), 1, "the writer role"},
		{"push without credentials", push("--ca-file", ca), 1, "needs credentials"},
		{"push without the CA", push(certArgs("mtls-writer")...), 1, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := ops.Execute(context.Background(), tc.args, &out, &errb)
			if (tc.code == 0) != (code == 0) || !strings.Contains(errb.String()+out.String(), tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s%s", code, tc.code, tc.want, out.String(), errb.String())
			}
		})
	}
	t.Run("breaking against the registry with a JWT", func(t *testing.T) {
		var out, errb bytes.Buffer
		args := append([]string{"breaking", "--against", base, "--subject", "pay-value", "--level", "BACKWARD", "--ca-file", ca, "-I", dir}, append(tokenFile("jwt-reader"), proto)...)
		if code := cli.Execute(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
		}
	})
}

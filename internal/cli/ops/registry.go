package ops

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/contracts"
	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/internal/httpserve"
	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

func newRegistryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: cli.RegistryShort,
		Long: `registry runs msgcontract's schema registry (serve), talks to one from a
build (push, check), makes the secrets of its access file (credential
password, credential token), or reads its store's audit log of changes
(audit verify, audit list).

The registry speaks the Confluent Schema Registry REST API for PROTOBUF
schemas, so Confluent serializers and tools work against it unchanged, and
it rejects a new version that breaks the subject's compatibility level
(default BACKWARD) on the wire, in JSON or in the contract (biz_key, topic,
event type, error classification, state transitions). Rule IDs and their
meaning: registry/README.md.`,
		Example: `  msgcontract registry serve --addr 127.0.0.1:8081 --db registry.db
  msgcontract registry push  --url http://127.0.0.1:8081 --subject payment-value -I proto proto/shop/payment/v1/payment.proto
  msgcontract registry check --url http://127.0.0.1:8081 --subject payment-value -I proto proto/shop/payment/v1/payment.proto
  msgcontract registry audit verify --db registry.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.UsageErr(errors.New("a subcommand is required: serve, push, check, credential or audit; see --help"))
		},
	}
	cmd.AddCommand(newRegistryServeCmd(), newRegistryPushCmd(), newRegistryCheckCmd(), newCredentialCmd(), newRegistryAuditCmd())
	return cmd
}

func newRegistryServeCmd() *cobra.Command {
	var (
		addr, db, tokenFile string
		accessFile          string
		tlsCert, tlsKey     string
		csrfKeyFile         string
		dlqAddr             string
		insecure, inProcess bool
		cfg                 api.Config
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] --db FILE [--access-file FILE | --token-file FILE] [--tls-cert FILE --tls-key FILE] [--insecure]",
		Short: "Serve the schema registry over HTTP",
		Long: `serve runs the registry on --addr, storing subjects, versions and levels in
the SQLite database --db (created when missing; WAL mode, so a killed
server restarts from the last committed registration). When several
registry instances must share one store, --db is a PostgreSQL URL
(postgres://user@host:5432/db); the tables are created when missing.

With --access-file, requests authenticate with HTTP Basic, bearer tokens,
OIDC tokens (JWT, verified offline against a JWKS file) or client
certificates (with --tls-cert/--tls-key), and the file's grants give each
principal the reader, writer or admin role per subject prefix and schema
context; reads can be protected, and global config, mode and deletes need
admin. The file is reloaded when it or a file it names changes (or on
SIGHUP); a change that does not load is reported and the rules in force
stay. Every change is recorded, with who made it, in the store's
hash-chained audit log (msgcontract-ops registry audit verify|list).
Make its secrets with "msgcontract-ops registry credential password|token".
See docs/registry-security.md.

With --token-file instead, every request that changes the registry (registering,
deleting, setting a level) must carry the file's first line, the token:
as "Authorization: Bearer <token>", or as HTTP Basic authentication with
the token as the password and any user name, which is what Confluent's
clients send (basic.auth.credentials.source=USER_INFO and
basic.auth.user.info=USER:<token>). Reads, look-ups and compatibility
checks need none. A request without it is answered 401 with a
WWW-Authenticate challenge for each scheme.
Listening on anything but a loopback address without an access or token
file is refused unless --insecure says that is intended (behind an authenticating
proxy, say).

Compiling a schema a request sends is bounded: at most --max-compilations
at once, each within --compile-timeout, after which the request is
answered 503 (error_code 50002, Retry-After) and the compilation stops:
schemas compile in worker processes (this program re-executed, at nice 19
under CPU and memory limits), killed when the budget runs out or the
client goes away. --in-process-compile compiles in the server instead,
where a compilation stops only between phases.

The web console is served at /ui/ on the same address: subjects, versions,
diffs with each compatibility violation at its line, the contract view
(events, retry schedule, state machines, error ranges) and a check form.
With --dlq it also lists, shows, replays and purges the dead letters of
that queue: the embedded SQLite queue's file, or nats://HOST:PORT for
NATS JetStream (?stream=NAME&prefix=P). The console's writes need the
token, typed into the form, and a confirmation.

The server prints "listening on http://ADDR" (https with --tls-cert) and the console's URL to
stderr once it accepts connections, and stops cleanly on SIGINT or SIGTERM.`,
		Example: `  msgcontract registry serve --db registry.db
  msgcontract registry serve --addr 0.0.0.0:8081 --db /var/lib/msgcontract/registry.db --token-file /run/secrets/registry-token
  msgcontract registry serve --addr 0.0.0.0:8081 --db postgres://registry@db:5432/registry --token-file /run/secrets/registry-token
  msgcontract registry serve --addr 0.0.0.0:8081 --db registry.db --access-file access.yaml --tls-cert server.pem --tls-key server-key.pem
  msgcontract registry serve --db registry.db --dlq .build/demo/queue.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return cli.UsageErr(errors.New("--db is required: a SQLite file or a postgres:// URL to keep schemas in"))
			}
			if accessFile != "" && tokenFile != "" {
				return cli.UsageErr(errors.New("--access-file and --token-file exclude each other; put the token's holder in the access file instead"))
			}
			if (tlsCert == "") != (tlsKey == "") {
				return cli.UsageErr(errors.New("--tls-cert and --tls-key go together: the server's certificate chain and its private key (PEM)"))
			}
			token, err := cli.ReadToken(tokenFile)
			if err != nil {
				return cli.UsageErr(err)
			}
			if token == "" && accessFile == "" && !insecure && !loopback(addr) {
				return cli.UsageErr(fmt.Errorf("refusing to serve on %s, which is not a loopback address, without --access-file or --token-file; anyone who reaches it could register or delete schemas. Pass one, or --insecure if access is controlled elsewhere", addr))
			}
			stderr := cmd.ErrOrStderr()
			if (accessFile != "" || token != "") && tlsCert == "" && !loopback(addr) {
				fmt.Fprintf(stderr, "msgcontract registry: warning: serving plain HTTP on %s, so passwords and tokens cross the network in clear; pass --tls-cert and --tls-key, or terminate TLS in front of the registry\n", addr)
			}
			guard, err := access.New(access.Config{File: accessFile, Token: token, Logf: func(format string, args ...any) {
				fmt.Fprintf(stderr, "msgcontract registry: "+format+"\n", args...)
			}})
			if err != nil {
				return cli.UsageErr(fmt.Errorf("--access-file: %w", err))
			}
			cfg.Token, cfg.Access = token, guard
			var csrfKey []byte
			if csrfKeyFile != "" {
				if csrfKey, err = os.ReadFile(csrfKeyFile); err != nil {
					return cli.UsageErr(fmt.Errorf("--csrf-key-file: %w", err))
				}
			}
			return serveRegistry(cmd.Context(), cmd, addr, db, cfg, dlqAddr, inProcess, tlsCert, tlsKey, csrfKey)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8081", "address to listen on, HOST:PORT (port 0 picks a free one)")
	cmd.Flags().StringVar(&db, "db", "", "SQLite database file, or a postgres:// URL (required)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file whose first line is the token mutating requests need (Bearer, or HTTP Basic's password)")
	cmd.Flags().StringVar(&accessFile, "access-file", "", "YAML file of users, tokens, JWT and mTLS settings, grants and rate limits (docs/registry-security.md); reloaded when it changes")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate chain (needed for client certificates)")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	cmd.Flags().StringVar(&csrfKeyFile, "csrf-key-file", "", "file of at least 32 random bytes the console signs its form tokens with; give every instance behind one load balancer the same (default: a random key per process)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "allow a non-loopback --addr without --access-file or --token-file")
	cmd.Flags().Int64Var(&cfg.BodyLimit, "body-limit", api.DefaultBodyLimit, "largest request body in bytes; larger ones get 413")
	cmd.Flags().IntVar(&cfg.MaxCompilations, "max-compilations", 0, "schemas compiled at once for requests; more wait (default half the CPUs, at least 1)")
	cmd.Flags().IntVar(&cfg.CompiledCache, "compiled-cache", 2048, "compiled stored schemas kept in memory for compatibility checks (least recently used go first)")
	cmd.Flags().DurationVar(&cfg.CompileTimeout, "compile-timeout", api.DefaultCompileTimeout, "longest a request waits for its schema to compile; past it the answer is 503 (error_code 50002) and the compilation stops")
	cmd.Flags().BoolVar(&inProcess, "in-process-compile", false, "compile request schemas in the server process instead of killable worker processes")
	cmd.Flags().StringVar(&dlqAddr, "dlq", "", "dead-letter queue the console shows: a SQLite queue file or nats://HOST:PORT")
	return cmd
}

// loopback reports whether addr's host is a loopback address or localhost.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serveRegistry(ctx context.Context, cmd *cobra.Command, addr, db string, cfg api.Config, dlqAddr string, inProcess bool, tlsCert, tlsKey string, csrfKey []byte) error {
	st, err := store.Open(db)
	if err != nil {
		return cli.UsageErr(err)
	}
	defer st.Close()
	cfg.Store = st
	if !inProcess {
		pool, err := schema.NewPool(max(cfg.MaxCompilations, api.DefaultMaxCompilations()) + 1)
		if err != nil {
			return err
		}
		defer pool.Close()
		if err := pool.Warm(); err != nil {
			return err
		}
		cfg.Workers = pool
	}
	srv, err := api.New(cfg)
	if err != nil {
		return err
	}
	ui := console.Config{Store: st, API: srv, Token: cfg.Token, Access: cfg.Access, CSRFKey: csrfKey}
	if dlqAddr != "" {
		dl, err := dlqopen.Open(ctx, dlqAddr)
		if err != nil {
			return cli.UsageErr(fmt.Errorf("--dlq %s: %w", dlqAddr, err))
		}
		defer dl.Close()
		ui.DLQ, ui.DLQName = dl, dlqAddr
	}
	con, err := console.New(ui)
	if err != nil {
		return cli.UsageErr(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.UsageErr(err)
	}
	scheme := "http"
	if tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
		if err != nil {
			ln.Close()
			return cli.UsageErr(fmt.Errorf("--tls-cert/--tls-key: %w", err))
		}
		ln = tls.NewListener(ln, cfg.Access.TLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
		scheme = "https"
	}
	go cfg.Access.Run(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_, _ = cfg.Access.Reload()
			}
		}
	}()
	hs := &http.Server{
		Handler:           cfg.Access.Wrap(console.WithAPI(srv, con)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	where := db
	if store.IsPostgres(db) {
		where = "PostgreSQL" // the URL may carry a password
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract registry: listening on %s://%s (store %s)\n", scheme, ln.Addr(), where)
	fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract registry: console at %s://%s%s\n", scheme, ln.Addr(), console.Prefix)
	return httpserve.Run(ctx, hs, ln, 10*time.Second)
}

// registryFlags are the flags push and check share.
type registryFlags struct {
	cli.ProtoFlags
	url, subject string
	conn         cli.RegistryConn
}

func (f *registryFlags) register(cmd *cobra.Command) {
	f.ProtoFlags.Register(cmd)
	cmd.Flags().StringVar(&f.url, "url", "http://127.0.0.1:8081", "registry base URL")
	cmd.Flags().StringVar(&f.subject, "subject", "", "subject of the contract, e.g. payment-value (required)")
	f.conn.Register(cmd)
}

// prepare compiles file and returns the client, the file's text and its
// imports to send as references (everything but msgcontract's options
// and the well-known types, which the registry resolves itself).
func (f *registryFlags) prepare(cmd *cobra.Command, file string) (*client.Client, *model.Set, error) {
	if f.subject == "" {
		return nil, nil, cli.UsageErr(errors.New("--subject is required"))
	}
	c, err := f.conn.Client(f.url)
	if err != nil {
		return nil, nil, err
	}
	set, err := f.Load(cmd, []string{file})
	if err != nil {
		return nil, nil, err
	}
	if len(set.Diagnostics) > 0 {
		for _, d := range set.Diagnostics {
			fmt.Fprintln(cmd.ErrOrStderr(), d)
		}
		return nil, nil, cli.UsageErr(errors.New("the contract has lint errors; the registry would reject it (msgcontract lint)"))
	}
	return c, set, nil
}

func builtin(path string) bool {
	return path == "msgcontract/v1/options.proto" || strings.HasPrefix(path, "google/protobuf/")
}

// source reads an import path's text from the import paths.
// request is what push and check send for file: the client, the file's
// text and its imports as references (registered first when push is set).
// Its errors are usage errors (exit 2).
func (f *registryFlags) request(cmd *cobra.Command, file string, push bool) (*client.Client, string, []subjectref.Reference, error) {
	c, text, refs, _, err := f.requestSet(cmd, file, push)
	return c, text, refs, err
}

// requestSet is request with the compiled contract.
func (f *registryFlags) requestSet(cmd *cobra.Command, file string, push bool) (*client.Client, string, []subjectref.Reference, *model.Set, error) {
	c, set, err := f.prepare(cmd, file)
	if err != nil {
		return nil, "", nil, nil, err
	}
	refs, err := f.references(cmd.Context(), c, set, push)
	if err != nil {
		return nil, "", nil, nil, cli.UsageErr(err)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, "", nil, nil, cli.UsageErr(err)
	}
	return c, string(text), refs, set, nil
}

func (f *registryFlags) source(path string) (string, error) {
	dirs := f.ImportPaths()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(path))); err == nil {
			return string(b), nil
		}
	}
	return "", fmt.Errorf("cannot find %s under %s", path, strings.Join(dirs, ", "))
}

// references pushes (push) or looks up (check) every non-built-in import
// of set's file under a subject named by its import path, depth first, and
// returns the root's references.
func (f *registryFlags) references(ctx context.Context, c *client.Client, set *model.Set, push bool) ([]subjectref.Reference, error) {
	done := map[string]subjectref.Reference{}
	var walk func(path string) ([]subjectref.Reference, error)
	walk = func(path string) ([]subjectref.Reference, error) {
		fd, err := set.Registry.FindFileByPath(path)
		if err != nil {
			return nil, err
		}
		var refs []subjectref.Reference
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			dep := imps.Get(i).Path()
			if push && dep == contracts.OptionsPath {
				// The registry resolves it without a reference, but a
				// Confluent client reading the version (use.latest.version,
				// rule executors) needs it as one, as its own serializer
				// registers it.
				r, ok := done[dep]
				if !ok {
					text, err := contracts.Source(dep)
					if err != nil {
						return nil, err
					}
					_, version, err := c.Register(ctx, dep, string(text), nil)
					if err != nil {
						return nil, fmt.Errorf("import %s (subject %q): %w", dep, dep, err)
					}
					r = subjectref.Reference{Name: dep, Subject: dep, Version: version}
					done[dep] = r
				}
				refs = append(refs, r)
				continue
			}
			if builtin(dep) {
				continue
			}
			if r, ok := done[dep]; ok {
				refs = append(refs, r)
				continue
			}
			sub, err := walk(dep)
			if err != nil {
				return nil, err
			}
			text, err := f.source(dep)
			if err != nil {
				return nil, err
			}
			var version int
			if push {
				_, version, err = c.Register(ctx, dep, text, sub)
			} else {
				version, err = c.Lookup(ctx, dep, text, sub)
			}
			if err != nil {
				return nil, fmt.Errorf("import %s (subject %q): %w", dep, dep, err)
			}
			r := subjectref.Reference{Name: dep, Subject: dep, Version: version}
			done[dep] = r
			refs = append(refs, r)
		}
		return refs, nil
	}
	return walk(set.Files[0].Path)
}

func newRegistryPushCmd() *cobra.Command {
	var f registryFlags
	cmd := &cobra.Command{
		Use:   "push --subject SUBJECT [--url URL] [-I DIR]... FILE",
		Short: "Register a contract (and its imports) with the registry",
		Long: `push registers FILE as the next version of --subject. Every file it imports,
except the well-known types, is pushed first under a subject named by its
import path and sent as a reference, as Confluent's serializers do
(msgcontract/v1/options.proto from the copy built into this program).

The version carries a Confluent data contract derived from the contract:
metadata properties naming each event's topic, event type, biz_key
template and retry policy and the file's error ranges, and for each
biz_key placeholder that can render empty (a string, a sub-message on a
dotted path, an optional field) a CEL CONDITION rule on WRITE with
onFailure ERROR, named msgcontract-bizkey-<path>, so that Confluent's
serializers refuse such a record at produce time, as msgcontract's own
producers do (EMPTY_FIELD). A placeholder not every event of the file has
is listed as msgcontract.bizkey.unenforced instead: every rule of a
subject runs on every record.

Registering a schema the subject already has is a no-op that prints the
existing id. A schema that breaks the subject's level is refused: push
prints one violation per line and exits 1. Exit 2: usage errors, a file
that does not compile, or an unreachable registry.`,
		Example: `  msgcontract registry push --url http://127.0.0.1:8081 --subject payment-value \
      -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		Args: cli.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, text, refs, set, err := f.requestSet(cmd, args[0], true)
			if err != nil {
				return err
			}
			// The contract's own rules and metadata go with it, so that
			// Confluent's serializers enforce them when producing.
			md, rs := datacontract.FromContract(set.Files[0])
			id, version, err := c.RegisterContract(ctx, f.subject, text, refs, md, rs)
			var ce *client.Error
			if errors.As(err, &ce) && ce.Incompatible() {
				// List the violations one per line rather than Confluent's
				// one-line message.
				if _, msgs, cerr := c.Check(ctx, f.subject, text, refs); cerr == nil && len(msgs) > 0 {
					for _, m := range msgs {
						fmt.Fprintln(cmd.OutOrStdout(), m)
					}
				} else {
					fmt.Fprintln(cmd.OutOrStdout(), ce.Msg)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract registry push: %s breaks subject %s; not registered\n", args[0], f.subject)
				return cli.Findings()
			}
			if err != nil {
				return cli.UsageErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: subject %s version %d, schema id %d\n", args[0], f.subject, version, id)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func newRegistryCheckCmd() *cobra.Command {
	var f registryFlags
	cmd := &cobra.Command{
		Use:   "check --subject SUBJECT [--url URL] [-I DIR]... FILE",
		Short: "Ask the registry whether a contract may become the subject's next version",
		Long: `check asks the registry whether FILE could be registered under --subject at
the subject's compatibility level, without registering it. Its imports
must already be registered (msgcontract registry push does that).

Prints one violation per line, FILE:LINE:COL: RULE_ID: message (positions
in the registry's copy of the file, named after the subject), and exits 1
when there is any; exits 0 when compatible and 2 on usage errors or an
unreachable registry. For a check without a registry, see
msgcontract breaking.`,
		Example: `  msgcontract registry check --url http://127.0.0.1:8081 --subject payment-value \
      -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		Args: cli.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, text, refs, err := f.request(cmd, args[0], false)
			if err != nil {
				return err
			}
			ok, msgs, err := c.Check(ctx, f.subject, text, refs)
			if err != nil {
				return cli.UsageErr(err)
			}
			for _, m := range msgs {
				fmt.Fprintln(cmd.OutOrStdout(), localFile(m, f.subject, args[0]))
			}
			if !ok {
				fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract registry check: %s is not compatible with subject %s\n", args[0], f.subject)
				return cli.Findings()
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// localFile names the checked file in a registry message: the registry
// compiles it as <subject>.proto, with the same lines and columns. A
// deleted type is reported where it lived, in the registered version the
// message names, and keeps the registry's name.
func localFile(msg, subject, file string) string {
	rest, ok := strings.CutPrefix(msg, subjectref.FileName(subject)+":")
	if !ok {
		return msg
	}
	if fields := strings.SplitN(rest, ": ", 3); len(fields) == 3 {
		if r, ok := compat.LookupRule(fields[1]); ok && r.InPrevious() {
			return msg
		}
	}
	return file + ":" + rest
}

package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
)

// Members in other languages (-members): the consumer slots take turns
// among the languages listed, and a slot keeps its language across its
// kills. A Go member is this binary (-child); a member in another language
// is the command line in the environment variable memberEnv names, run by
// sh with exec (so a SIGKILL reaches the member itself, not a shell). The
// parent tells it where everything is through its environment:
// MSGCONTRACT_KAFKA_BROKERS, CHAOS_NS (the topics' namespace),
// CHAOS_PG_URL and CHAOS_PG_SCHEMA (the business database), CHAOS_ID and
// CHAOS_HANDLER_DELAY_MS. It must do what child.go's handler does, under
// the same group, handler name and contract, and stop gracefully (commit,
// leave the group, exit 0) on SIGTERM.
var memberEnv = map[string]string{
	"spring": "MSGCONTRACT_CHAOS_SPRING",
	"python": "MSGCONTRACT_CHAOS_PYTHON",
}

// parseMembers checks -members against the run's transport and database.
func parseMembers(cfg config) ([]string, error) {
	langs := strings.Split(cfg.members, ",")
	foreign := false
	for _, l := range langs {
		if l == "go" {
			continue
		}
		v, ok := memberEnv[l]
		if !ok {
			return nil, fmt.Errorf("-members %q: %q is not go, spring or python", cfg.members, l)
		}
		if strings.TrimSpace(os.Getenv(v)) == "" {
			return nil, fmt.Errorf("-members %s needs %s, the command that starts a %s member (make chaos-mixed sets it)", cfg.members, v, l)
		}
		foreign = true
	}
	if foreign && (cfg.transport != "kafka" || cfg.business != "postgres" || cfg.outbox) {
		return nil, fmt.Errorf("-members %s: members in other languages run with -transport kafka -business postgres, without -outbox", cfg.members)
	}
	if cfg.procs < len(langs) {
		return nil, fmt.Errorf("-members %s needs -procs %d or more, one slot per language", cfg.members, len(langs))
	}
	return langs, nil
}

// memberCommand returns the command of a member in lang (not go) in
// consumer slot id's process.
func memberCommand(cfg config, lang string, id int) (*exec.Cmd, error) {
	u, err := url.Parse(cfg.pgDSN)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	schema := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	cmd := exec.Command("sh", "-c", "exec "+os.Getenv(memberEnv[lang]))
	cmd.Env = append(os.Environ(), "CHAOS_NS="+cfg.kafkaNS, "CHAOS_PG_URL="+u.String(), "CHAOS_PG_SCHEMA="+schema,
		"CHAOS_ID="+strconv.Itoa(id), "CHAOS_HANDLER_DELAY_MS="+strconv.FormatInt(cfg.handlerDelay.Milliseconds(), 10))
	return cmd, nil
}

// migrateForMembers creates the dedup tables before any member starts:
// members in three languages would otherwise race to create them.
func migrateForMembers(ctx context.Context, cfg config) error {
	db, err := pgdb.Open(cfg.pgDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.Postgres})
	if err != nil {
		return err
	}
	return store.Migrate(ctx)
}

package sqldb

import (
	"database/sql"
	"time"
)

// IdleConns is how many idle connections pgdb.Open and mysqldb.Open keep
// in a server database's pool, and IdleTime how long an idle one stays.
//
// database/sql keeps 2 idle connections by default: a service with more
// concurrent transactions than that (the consumer's 8 workers, a relay, a
// few producers) closes a connection whenever one is returned to a full
// idle list and opens a new one moments later. On PostgreSQL each new
// connection forks a server process: under a light steady load (make
// bench-latency, 1,000 messages a second) that churn made every leg of
// the path several milliseconds slower.
const (
	IdleConns = 16
	IdleTime  = 5 * time.Minute
)

// KeepIdle sets db's idle limits to IdleConns and IdleTime.
func KeepIdle(db *sql.DB) {
	db.SetMaxIdleConns(IdleConns)
	db.SetConnMaxIdleTime(IdleTime)
}

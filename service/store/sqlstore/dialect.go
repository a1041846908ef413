package sqlstore

import (
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"paywallet/internal/pgfailover"
)

// errKind is what a driver error means to the store, independent of the
// driver that produced it.
type errKind int

const (
	errOther      errKind = iota
	errUnique             // a unique index or primary key refused the row
	errForeignKey         // a referenced row does not exist
	errRetry              // the transaction lost a race and can be run again
	// errUnavailable: the database went away under the statement (its
	// connection broke, the server shut down, crashed or was demoted to a
	// read-only standby by a failover, or could not be reached at all).
	// The transaction did not take effect; for a COMMIT, whether it did is
	// unknown.
	errUnavailable
)

// dialect is everything that differs between the two back ends. The queries
// themselves are shared: they are written with "?" placeholders in the
// common subset of SQL both databases understand (ON CONFLICT, partial
// indexes, lower(), LIMIT), and the schema differences live in the
// per-dialect migration directories.
type dialect struct {
	name string // "sqlite" or "postgres"; also the migrations subdirectory

	// numbered placeholders ($1, $2, …) instead of "?".
	numbered bool

	// txOptions are passed to BeginTx for every Store.Tx.
	txOptions *sql.TxOptions

	// migrationLock runs first in the migration transaction so that
	// several processes opening one database at once apply migrations one
	// after the other. Empty when the database serialises writers anyway.
	migrationLock string

	// skipLocked ends a SELECT that claims work rows: the row is locked
	// until the transaction ends, and rows another transaction holds are
	// passed over. Empty where a write transaction already excludes every
	// other writer (SQLite).
	skipLocked string

	// keyLock and keyUnlock take and release a session-level lock named by
	// the text argument, for Store.TxFor. Empty where writers are
	// serialised anyway (SQLite).
	keyLock, keyUnlock string

	// migrationsTable creates the bookkeeping table if it does not exist.
	migrationsTable string

	// timeArg converts a time to a query argument: NULL for the zero time,
	// otherwise UTC with microsecond precision in the column's representation.
	timeArg func(time.Time) any
	// jsonRows is a FROM item, aliased v, whose rows are the objects of
	// a JSON array passed as one parameter; columns are name and SQL
	// type ("text", "integer" or "time") pairs. See jsonRowsSQLite.
	jsonRows func(columns ...string) string

	// cappedSum is the SUM of an integer column, 0 over no rows and at most
	// the int64 maximum: SQLite's SUM fails on overflow and PostgreSQL's
	// numeric sum would not scan into an int64.
	cappedSum func(column string) string

	// classify tells unique and foreign-key violations and serialisation
	// failures apart from other errors.
	classify func(error) errKind

	// modifyingWith: a statement can carry an INSERT of another table in
	// a data-modifying WITH (PostgreSQL), which saves that INSERT its own
	// round trip. SQLite has no such WITH; its statements cost no round
	// trip anyway.
	modifyingWith bool

	// eventLog is how the event log is written and read.
	eventLog eventLogSQL
}

// eventLogSQL is what differs in the event log (see store.WebhookTx): on
// SQLite, where an in-process statement costs little, RecordEvents writes
// its row at once and every row is final; on PostgreSQL the row waits to
// go with the transaction's next statement, and is final once every
// transaction that could precede it has ended.
type eventLogSQL struct {
	// withNext: RecordEvents keeps the row for the next statement
	// (tx.withPending). Its INSERT then names part; otherwise not.
	withNext bool
	// lock is a query that takes the catalog's turn, for the transaction,
	// and returns whether it did and the transaction's isolation level
	// ("": a writer holds the database alone).
	lock string
	// read selects pos, part and events of the final rows, oldest first,
	// up to the limit its one parameter gives.
	read string
	// moved deletes the rows up to and including (pos, part), its
	// parameters pos, pos and part.
	moved string
}

// rebind rewrites "?" placeholders to the dialect's form. The shared queries
// never contain a literal question mark, so a plain scan is enough.
func (d *dialect) rebind(q string) string {
	if !d.numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// sqliteDialect stores times as INTEGER microseconds since the Unix epoch:
// exact, compact, ordered, and free of the text formats SQLite drivers
// disagree about.
var sqliteDialect = &dialect{
	name: "sqlite",
	// SQLite is serializable by construction: one writer at a time, and
	// the DSN makes every transaction BEGIN IMMEDIATE.
	txOptions: nil,
	migrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`,
	timeArg: func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UnixMicro()
	},
	jsonRows: jsonRowsSQLite,
	eventLog: eventLogSQL{
		read:  `SELECT pos, 0, events FROM event_log ORDER BY pos LIMIT ?`,
		moved: `DELETE FROM event_log WHERE pos < ? OR (pos = ? AND ? = 0)`,
	},
	// TOTAL is a float sum, exact below 2^53; the cast saturates.
	cappedSum: func(c string) string { return "CAST(MIN(TOTAL(" + c + "), 9223372036854775807.0) AS INTEGER)" },
	classify: func(err error) errKind {
		var e *sqlite.Error
		if !errors.As(err, &e) {
			return errOther
		}
		switch e.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errUnique
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errForeignKey
		}
		return errOther
	},
}

// postgresDialect runs every transaction SERIALIZABLE so that the service
// sees the same semantics as on SQLite (where writers are serialised). The
// price is that PostgreSQL may abort a transaction that lost a race with
// SQLSTATE 40001; Store.Tx then runs it again, as the Store contract allows.
var postgresDialect = &dialect{
	name:          "postgres",
	numbered:      true,
	modifyingWith: true,
	txOptions:     &sql.TxOptions{Isolation: sql.LevelSerializable},
	// An arbitrary constant shared by every instance of the service: the
	// transaction-scoped lock is released by COMMIT or ROLLBACK, so a crash
	// cannot leave it held.
	migrationLock: `SELECT pg_advisory_xact_lock(7235041786432013)`,
	skipLocked:    ` FOR UPDATE SKIP LOCKED`,
	// The two-argument form (two int4 keys) keeps these locks apart from
	// the migration lock, which uses the one-bigint form.
	keyLock:   `SELECT pg_advisory_lock(7235, hashtext($1))`,
	keyUnlock: `SELECT pg_advisory_unlock(7235, hashtext($1))`,
	migrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL
)`,
	timeArg: func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Truncate(time.Microsecond)
	},
	jsonRows: jsonRowsPostgres,
	eventLog: eventLogSQL{
		withNext: true,
		// Another constant than the migration lock's; taken by
		// pg_try_: a second cataloguer does not wait, it leaves the
		// work to the one at it.
		//
		// The isolation comes with it: under REPEATABLE READ or
		// SERIALIZABLE the snapshot is taken before the lock, so it can
		// miss what the cataloguer that just let go committed (its head
		// among it), and the events it numbers would repeat seqs.
		lock: `SELECT pg_try_advisory_xact_lock(7235041786432014), current_setting('transaction_isolation')`,
		// Below the snapshot's xmin every transaction has ended: a row
		// of one still running (pos at xmin or above) may precede rows
		// of later transactions that already committed, so nothing at
		// or after it moves yet.
		read: `SELECT pos, part, events FROM event_log
			WHERE pos < pg_snapshot_xmin(pg_current_snapshot())::text::bigint ORDER BY pos, part LIMIT ?`,
		moved: `DELETE FROM event_log WHERE pos < ? OR (pos = ? AND part <= ?)`,
	},
	cappedSum: func(c string) string {
		return "LEAST(COALESCE(SUM(" + c + "), 0), 9223372036854775807)::bigint"
	},
	classify: classifyPostgres,
}

// classifyPostgres tells what a pgx error means: constraint violations,
// lost races, and the database going away (a failover, a crash, the
// network: see pgfailover.Unavailable).
func classifyPostgres(err error) errKind {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		switch e.Code {
		case "23505": // unique_violation
			return errUnique
		case "23503": // foreign_key_violation
			return errForeignKey
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return errRetry
		}
	}
	if pgfailover.Unavailable(err) {
		return errUnavailable
	}
	return errOther
}

// jsonRowsSQLite reads the rows of a statement that handles many rows at
// once (a webhook worker's round) from one JSON parameter, so the SQL text
// is the same whatever the number of rows: it is parsed once and stays
// prepared, where a list of placeholders per row would be parsed again for
// each length. Times are given as the column stores them (see timeArg).
func jsonRowsSQLite(columns ...string) string {
	var b strings.Builder
	b.WriteString("(SELECT ")
	for i := 0; i+1 < len(columns); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("value ->> '" + columns[i] + "' AS " + columns[i])
	}
	b.WriteString(" FROM json_each(?)) AS v")
	return b.String()
}

// jsonRowsPostgres is jsonRowsSQLite for PostgreSQL.
func jsonRowsPostgres(columns ...string) string {
	var b strings.Builder
	b.WriteString("jsonb_to_recordset(CAST(? AS jsonb)) AS v(")
	for i := 0; i+1 < len(columns); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := columns[i+1]
		if typ == "time" {
			typ = "timestamptz"
		}
		b.WriteString(columns[i] + " " + typ)
	}
	b.WriteString(")")
	return b.String()
}

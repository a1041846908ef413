// Package sqlstore implements [store.Store] over database/sql for SQLite
// (modernc.org/sqlite, pure Go) and PostgreSQL (pgx).
//
// There is one implementation: the same Go code and the same SQL run on
// both databases, and a small [dialect] value carries what differs
// (placeholders, how times are stored, which driver errors mean "unique
// violation" or "try again", transaction isolation). Table definitions
// differ in types only and live in migrations/<dialect>/NNNN_name.sql,
// embedded in the binary and applied by [Open] in one transaction.
//
// Use [Open] with either a postgres:// URL or a SQLite file path:
//
//	db, err := sqlstore.Open(ctx, "data/paywallet.db")
//	db, err := sqlstore.Open(ctx, "postgres://user@host/paywallet")
//
// # Concurrency
//
// SQLite allows one writer at a time. Every Store.Tx may write, so the
// SQLite store keeps a single connection: transactions queue inside
// database/sql (honouring their contexts) instead of failing with
// SQLITE_BUSY. Transactions also start with BEGIN IMMEDIATE and a busy
// timeout, which covers another process opening the same file.
//
// PostgreSQL runs every transaction SERIALIZABLE, so both back ends behave
// alike; a transaction that PostgreSQL aborts with a serialization failure
// or deadlock is rolled back and fn runs again (a few times, with jittered
// backoff), as the Store contract permits.
//
// Store.Tx must not be called from inside fn: on SQLite the inner call would
// wait forever for the one connection the outer call holds.
//
// # Errors
//
// Create methods insert with ON CONFLICT DO NOTHING and report a taken id or
// unique value as [store.ErrConflict] without the statement failing, so the
// transaction stays usable on both back ends (a failed statement aborts a
// PostgreSQL transaction, not an SQLite one). A write that names a row that
// does not exist (a foreign key: the customer of an account, the account or
// credential of a session, …) reports [store.ErrNotFound]; on PostgreSQL
// that statement has failed and the transaction can only be rolled back, so
// fn should return the error. PostgreSQL text cannot hold NUL bytes or
// invalid UTF-8; the service must reject such input before storing it
// (Challenge.Payload and the JSON documents of external accounts and agents
// are stored as bytes and are exempt).
package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // registers driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"go.opentelemetry.io/otel/trace"

	"paywallet/service/store"
)

// DB is a [store.Store] backed by SQLite or PostgreSQL.
type DB struct {
	db    *sql.DB
	d     *dialect
	keys  keyLocks   // TxFor's queue in this process
	stmts *stmtCache // SQLite only; nil on PostgreSQL
	// trace, when not nil, sees the SQL text of every statement the
	// store's transactions send (tests only; set before any Tx).
	trace func(q string)
	// tracer, when not nil, makes spans of transactions and statements
	// (SetTracerProvider).
	tracer trace.Tracer
	count  counters
	// pg is the PostgreSQL pool's failover bookkeeping (nil on SQLite).
	pg *pgConns
	// attemptTimeout bounds one attempt of a transaction on PostgreSQL,
	// from BEGIN to COMMIT (0: no bound; SQLite).
	attemptTimeout time.Duration
}

var _ store.Store = (*DB)(nil)

// maxAttempts bounds how often Tx runs fn when PostgreSQL keeps reporting
// serialization failures. Each retry happens only after some other
// transaction committed, so a handful is usually plenty; but when many
// transactions write one hot row at once (creates racing for an owner's
// default external account), only one of them commits per round, and the
// last needs about as many attempts as there were racers. With the backoff
// below, 20 attempts wait about a second in all.
const maxAttempts = 20

// Open opens the store named by dsn: PostgreSQL for postgres:// and
// postgresql:// URLs, SQLite for anything else (a file path or a file: URI).
func Open(ctx context.Context, dsn string) (*DB, error) {
	if isPostgresURL(dsn) {
		return OpenPostgres(ctx, dsn)
	}
	return OpenSQLite(ctx, dsn)
}

func isPostgresURL(dsn string) bool {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok {
		return false
	}
	scheme = strings.ToLower(scheme)
	return scheme == "postgres" || scheme == "postgresql"
}

// OpenSQLite opens (creating if needed) the SQLite database at path, which is
// a file path or a file: URI, creates its parent directory, and applies
// pending migrations.
//
// The database holds every customer's data, so only its owner may read it:
// the directories OpenSQLite creates are 0700 and the database file with
// its -wal and -shm files 0600, whatever the umask. A database file that
// exists is made 0600 too (earlier versions left it 0644); an existing
// directory is left as it is.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	dsn, file, err := sqliteDSN(path)
	if err != nil {
		return nil, err
	}
	if file != "" {
		if err := createPrivate(file); err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		if err := restrict(file, file+"-wal", file+"-shm"); err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
	}
	return openSQLite(ctx, dsn, path)
}

// createPrivate creates the database file (0600) and the directories
// missing above it (0700) unless they exist. The modes are set explicitly
// after creating, so the umask does not matter.
func createPrivate(file string) error {
	if err := mkdirPrivate(filepath.Dir(file)); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirPrivate is os.MkdirAll with mode 0700 for every directory it makes.
func mkdirPrivate(dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirPrivate(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) { // made by another process meanwhile
			return nil
		}
		return err
	}
	return os.Chmod(dir, 0o700)
}

// restrict takes away the group's and others' access to the files that
// exist among paths: a database, -wal or -shm file made by an earlier
// version. (SQLite gives the -wal and -shm files it creates the database
// file's mode, whatever the umask, so once the database file is private
// they are born private.) A file this user may use but not chmod (another
// user's, shared through its group on purpose) is left as it is.
func restrict(paths ...string) error {
	for _, p := range paths {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(p, perm&0o700); err != nil && !errors.Is(err, fs.ErrPermission) {
				return err
			}
		}
	}
	return nil
}

// openSQLite opens the database dsn names (path is for errors) with the
// settings of the package comment and applies pending migrations.
func openSQLite(ctx context.Context, dsn, path string) (*DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	// One connection: see the package comment. It is never closed for
	// idleness, which also keeps a ":memory:" database alive.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	// Several processes opening a new file at the same moment can collide
	// while one of them switches it to WAL mode, and SQLite then reports
	// SQLITE_BUSY at once instead of waiting for the busy timeout. Trying
	// again finds the switch done.
	for attempt := 1; ; attempt++ {
		s, err := finishOpen(ctx, db, sqliteDialect, "sqlite "+path)
		if err == nil || !isBusy(err) || attempt == 20 || ctx.Err() != nil {
			return s, err
		}
		if db, err = sql.Open("sqlite", dsn); err != nil {
			return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
	}
}

// isBusy reports an SQLITE_BUSY error (any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// sqlitePragmas are applied by the driver to every new connection.
//
//   - busy_timeout: wait (rather than fail) when another process holds the
//     write lock.
//   - foreign_keys: SQLite leaves them off unless asked, per connection.
//   - journal_mode WAL: readers in other processes do not block the writer.
//   - synchronous FULL: a commit is on disk when it returns (SQLite's
//     default, stated because DB.TxLazy sets it back to this).
//   - _txlock=immediate: BEGIN IMMEDIATE takes the write lock up front, so a
//     transaction never fails half way when it upgrades from reading to
//     writing (SQLITE_BUSY_SNAPSHOT cannot be waited out).
//   - recursive_triggers: the journal's triggers that refuse a DELETE
//     (migration 0016) fire for the rows an INSERT OR REPLACE deletes too;
//     without it SQLite deletes them silently and the replacement rewrites
//     a ledger transaction.
const sqlitePragmas = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=recursive_triggers(1)&_txlock=immediate"

// sqliteDSN turns a path or file: URI into the driver's DSN and reports the
// name of the database file that may be created ("" for in-memory databases
// and for URIs whose mode does not allow creating: ro, rw).
func sqliteDSN(path string) (dsn, file string, err error) {
	if path == "" {
		return "", "", errors.New("store: open sqlite: empty path")
	}
	if !strings.HasPrefix(path, "file:") {
		if path == ":memory:" {
			return "file::memory:?" + sqlitePragmas, "", nil
		}
		// Always hand SQLite a URI, escaping the characters that
		// would otherwise start a query or fragment, so that any file
		// name works.
		esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		return "file:" + esc + "?" + sqlitePragmas, path, nil
	}
	rest := strings.TrimPrefix(path, "file:")
	p, query, hasQuery := strings.Cut(rest, "?")
	p, _, _ = strings.Cut(p, "#")
	if strings.HasPrefix(p, "//") { // file://authority/path
		host, abs, _ := strings.Cut(p[2:], "/")
		if host != "" && host != "localhost" {
			return "", "", fmt.Errorf("store: open sqlite %s: remote file URI", path)
		}
		p = "/" + abs
	}
	name, err := url.PathUnescape(p)
	if err != nil {
		return "", "", fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	if m := q.Get("mode"); name != "" && name != ":memory:" && (m == "" || m == "rwc") {
		file = name
	}
	sep := "?"
	if hasQuery {
		sep = "&"
	}
	return path + sep + sqlitePragmas, file, nil
}

// postgresConns bounds the connections one instance opens to PostgreSQL.
const postgresConns = 16

// OpenPostgres connects to the PostgreSQL database at url (a postgres://
// URL or key=value DSN understood by pgx) and applies pending migrations.
//
// url may name several hosts, the nodes of a cluster with failover
// (postgres://h1,h2,h3/db?target_session_attrs=read-write): see
// pgconns.go for how the store rides through a switch of primary.
func OpenPostgres(ctx context.Context, url string) (*DB, error) {
	db, pc, err := openPostgresPool(url)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	// database/sql keeps only two idle connections by default, which makes
	// a busy service reconnect constantly, and opens any number, which
	// under load means one server process per waiting request: PostgreSQL
	// does best with a few connections per core, and requests queue more
	// cheaply in this pool than in the server.
	db.SetMaxOpenConns(postgresConns)
	db.SetMaxIdleConns(postgresConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s, err := finishOpen(ctx, db, postgresDialect, "postgres")
	if err != nil {
		return nil, err
	}
	s.pg = pc
	s.attemptTimeout = defaultAttemptTimeout
	return s, nil
}

func finishOpen(ctx context.Context, db *sql.DB, d *dialect, what string) (*DB, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", what, err)
	}
	if err := migrate(ctx, db, d); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", what, err)
	}
	s := &DB{db: db, d: d}
	if d == sqliteDialect {
		s.stmts = newStmtCache()
	}
	return s, nil
}

// Close closes the database.
func (db *DB) Close() error {
	if db.stmts != nil {
		db.stmts.close()
	}
	return db.db.Close()
}

// Tx runs fn in one transaction; see [store.Store.Tx].
//
// fn is run again when the database reports that the transaction lost a
// race (PostgreSQL serialization failure or deadlock), including when fn
// swallowed that error: after such a failure PostgreSQL refuses every
// further statement in the transaction, so nothing fn did afterwards can
// be trusted.
func (db *DB) Tx(ctx context.Context, fn func(store.Tx) error) error {
	err := db.run(ctx, db.db.BeginTx, fn, false)
	if db.stmts != nil {
		db.stmts.prepare(ctx, db.db)
	}
	return err
}

// TxLazy runs fn like Tx, with a commit that does not wait for the disk;
// see [store.LazyStore]. On SQLite (WAL) the transaction runs with
// synchronous=NORMAL: its commit is not synced, and the next ordinary
// commit syncs the log with it. On PostgreSQL it sets synchronous_commit
// off for the transaction and runs it READ COMMITTED, not SERIALIZABLE
// like every other transaction (see store.LazyStore for why and what fn's
// statements must then guarantee themselves).
func (db *DB) TxLazy(ctx context.Context, fn func(store.Tx) error) error {
	if db.d != sqliteDialect {
		readCommitted := func(ctx context.Context, _ *sql.TxOptions) (*sql.Tx, error) {
			return db.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		}
		return db.run(ctx, readCommitted, func(t store.Tx) error {
			if _, err := t.(*tx).exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return t.(*tx).fail("lazy commit", err)
			}
			return fn(t)
		}, false)
	}
	// The pragma belongs to the connection: hold the (only) one for the
	// transaction and set it back after. Both pragmas run under a context
	// that does not end with ctx: the driver reports the end of a
	// statement's context as its error even when the statement took
	// effect, and a connection left skipping syncs would serve every
	// later ordinary commit without one (TestTxLazyCanceledKeepsSyncing).
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := conn.ExecContext(pctx, `PRAGMA synchronous = NORMAL`); err != nil {
		// Whether it took effect is unknown: the connection goes.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
		return fmt.Errorf("store: lazy commit: %w", err)
	}
	err = db.run(ctx, conn.BeginTx, fn, true)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if _, rerr := conn.ExecContext(rctx, `PRAGMA synchronous = FULL`); rerr != nil {
		// A connection that may still skip syncs must not serve the
		// ordinary transactions: closing it discards the setting.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
	db.stmts.prepare(ctx, db.db)
	return err
}

// TxFor runs fn like Tx after taking the key's turn; see
// [store.Store.TxFor]. On PostgreSQL the turn is a session-level advisory
// lock taken on a dedicated connection BEFORE the transaction begins: a
// lock taken inside a serializable transaction would come after its
// snapshot, and the work it waited for would still make it fail.
func (db *DB) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	if db.d.keyLock == "" {
		return db.Tx(ctx, fn)
	}
	// Queue in this process first, so that many requests for one key hold
	// one pooled connection between them while they wait, not one each.
	unlock, err := db.keys.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return db.withTurn(ctx, key, fmt.Sprintf("%q", key), func(begin func(context.Context, *sql.TxOptions) (*sql.Tx, error)) error {
		return db.run(ctx, begin, fn, true)
	})
}

// outcome is what one attempt of a transaction came to.
type outcome int

const (
	finished outcome = iota // committed, or failed for good: return its error
	raced                   // lost a race (serialization failure, deadlock): run fn again
	lost                    // the database went away before COMMIT: nothing took effect
	unknown                 // the database went away during COMMIT: it may have taken effect
)

// Bounds of a transaction's attempts on PostgreSQL.
const (
	// defaultAttemptTimeout bounds one attempt, BEGIN to COMMIT. A
	// primary that is cut off (stopped, or behind a dead network) does
	// not close its connections: without a bound a transaction would wait
	// on it for as long as TCP keepalives take to notice, minutes. Every
	// transaction the service runs takes milliseconds; a bound of seconds
	// only ever ends one whose server stopped answering.
	defaultAttemptTimeout = 5 * time.Second
	// The bounds together keep a request on a silent primary well under
	// the BFF's 15 s upstream timeout (5 s attempt + 1.5 s of retries +
	// a 2 s connect timeout per host), so that the person is answered the
	// service's 503, not the BFF's 502.
	//
	// lostRetryFor is how long Tx keeps running fn again after the
	// database went away before COMMIT (a failover: pgx then dials the
	// new primary). Beyond it the caller gets store.ErrUnavailable and
	// answers 503: a client retries sooner and better (with its
	// Idempotency-Key, possibly through another instance) than a request
	// held open here for the whole failover.
	lostRetryFor = 1500 * time.Millisecond
	// turnWait bounds the wait for a key's advisory lock (TxFor,
	// SealLedger) on PostgreSQL: the holder's attempt is itself bounded
	// by defaultAttemptTimeout.
	turnWait = 8 * time.Second
)

// run runs fn in transactions begun by begin until it succeeds, fails for
// good, has lost maxAttempts races, or the database stayed away for
// lostRetryFor (then, and when COMMIT's outcome is unknown, the error
// wraps store.ErrUnavailable). pinned is set when begin uses one
// connection held by the caller (TxFor): a lost connection is not run
// again on it.
func (db *DB) run(ctx context.Context, begin func(context.Context, *sql.TxOptions) (*sql.Tx, error), fn func(store.Tx) error, pinned bool) error {
	var lostAt time.Time
	for attempt := 1; ; attempt++ {
		res, err := db.try(ctx, begin, fn)
		var d time.Duration
		switch res {
		case finished:
			return err
		case unknown:
			db.pg.broke()
			db.count.unavailable.Add(1)
			return unavailable("commit (whether it took effect is unknown)", err)
		case lost:
			db.pg.broke()
			if lostAt.IsZero() {
				lostAt = time.Now()
			}
			if pinned || ctx.Err() != nil || time.Since(lostAt) >= lostRetryFor {
				db.count.unavailable.Add(1)
				return unavailable("transaction (nothing took effect)", err)
			}
			// 50 ms doubling, jittered: pgx dials the hosts again.
			d = 50 * time.Millisecond << min(attempt-1, 3)
		case raced:
			if attempt >= maxAttempts {
				db.count.contention.Add(1)
				return fmt.Errorf("%w: gave up after %d attempts: %w", store.ErrContention, attempt, err)
			}
			// Jittered exponential backoff, 1 ms doubling to at most
			// 64 ms, so racing transactions do not collide again in
			// lockstep.
			d = time.Millisecond << min(attempt-1, 6)
		}
		db.count.retries.Add(1)
		d = d/2 + rand.N(d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// try runs fn once and reports its result and what it came to.
func (db *DB) try(ctx context.Context, begin func(context.Context, *sql.TxOptions) (*sql.Tx, error), fn func(store.Tx) error) (res outcome, err error) {
	actx := ctx
	if db.attemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, db.attemptTimeout)
		defer cancel()
	}
	actx, end := db.startTx(actx)
	defer func() { end(res, err) }()
	// gone tells whether err means the database went away: the driver
	// said so, or the attempt's time ran out while the caller's had not.
	gone := func(err error) bool {
		return db.d.classify(err) == errUnavailable || (actx.Err() != nil && ctx.Err() == nil)
	}
	sqlTx, err := begin(actx, db.d.txOptions)
	if err != nil {
		switch {
		case gone(err):
			return lost, fmt.Errorf("store: begin: %w", err)
		case db.d.classify(err) == errRetry:
			return raced, fmt.Errorf("store: begin: %w", err)
		}
		return finished, fmt.Errorf("store: begin: %w", err)
	}
	t := &tx{tx: sqlTx, d: db.d, stmts: db.stmts, trace: db.trace, tracer: db.tracer, outer: ctx, actx: actx}
	done := false
	defer func() {
		if !done { // fn panicked
			_ = sqlTx.Rollback()
		}
	}()
	err = fn(t)
	done = true
	// A statement that failed because the database went away or lost a
	// race leaves the transaction unusable (PostgreSQL refuses every
	// later statement), whatever fn made of its error.
	failed := func(err error) (outcome, error) {
		_ = sqlTx.Rollback()
		switch {
		case t.lostConn || gone(err):
			return lost, err
		case t.lostRace || db.d.classify(err) == errRetry:
			return raced, err
		}
		return finished, err
	}
	if err != nil {
		return failed(err)
	}
	if t.lostConn || t.lostRace {
		return failed(errors.New("store: a statement of the transaction failed (its error was not returned)"))
	}
	// A log row no statement after RecordEvents carried goes alone.
	if err := t.flushEvents(actx); err != nil {
		return failed(err)
	}
	if err := sqlTx.Commit(); err != nil {
		switch {
		case gone(err):
			return unknown, fmt.Errorf("store: commit: %w", err)
		case db.d.classify(err) == errRetry:
			return raced, fmt.Errorf("store: commit: %w", err)
		}
		return finished, fmt.Errorf("store: commit: %w", err)
	}
	db.count.commits.Add(1)
	return finished, nil
}

// withTurn runs fn on a connection of its own that holds key's advisory
// lock (PostgreSQL), taken before fn's transaction begins; what names the
// turn in errors. The connection goes, and the lock with it, when the
// lock or its release cannot be known to have worked.
func (db *DB) withTurn(ctx context.Context, key, what string, fn func(begin func(context.Context, *sql.TxOptions) (*sql.Tx, error)) error) error {
	// Getting the connection may dial, or ping an idle one: bounded too,
	// for a server that stopped answering.
	cctx, ccancel := context.WithTimeout(ctx, turnWait)
	conn, err := db.db.Conn(cctx)
	timedOut := cctx.Err() != nil && ctx.Err() == nil
	ccancel()
	if err != nil {
		if db.d.classify(err) == errUnavailable || timedOut {
			db.pg.broke()
			db.count.unavailable.Add(1)
			return unavailable("connection", err)
		}
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	lctx, cancel := context.WithTimeout(ctx, turnWait)
	defer cancel()
	if _, err := conn.ExecContext(lctx, db.d.keyLock, key); err != nil {
		// A wait that ended with ctx may still have taken the lock (a
		// driver reports the context's end for a statement that
		// completed): the session goes, and the lock with it.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		if db.d.classify(err) == errUnavailable || (lctx.Err() != nil && ctx.Err() == nil) {
			db.pg.broke()
			db.count.unavailable.Add(1)
			return unavailable("wait for "+what, err)
		}
		return fmt.Errorf("store: wait for %s: %w", what, err)
	}
	defer func() {
		// The caller's context may be over; the lock must go regardless.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(uctx, db.d.keyUnlock, key); err != nil {
			// A connection that may still hold the lock must not return
			// to the pool: closing the session releases it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn(conn.BeginTx)
}

// keyLocks queues the TxFor calls of this process per key. Waiting is
// first come, first served only as far as the Go scheduler is; fairness
// does not matter here, progress does.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyTurn
}

type keyTurn struct {
	ch      chan struct{} // holds one token while the key is taken
	waiters int           // holders and waiters; the entry goes at zero
}

// lock waits for key's turn or for ctx to end.
func (k *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyTurn{}
	}
	t := k.m[key]
	if t == nil {
		t = &keyTurn{ch: make(chan struct{}, 1)}
		k.m[key] = t
	}
	t.waiters++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if t.waiters--; t.waiters == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
	select {
	case t.ch <- struct{}{}:
		return func() { <-t.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Package bffpg keeps the BFF's cookie sessions and login limits in
// PostgreSQL, so that several BFF instances behind one load balancer share
// them: a browser signed in through one instance is signed in on all of
// them, a logout on one ends the session everywhere, and the login limits
// count the starts of all instances together instead of allowing the full
// limit on each. It also carries the service's webhooks between instances
// ([Store.Events], events.go): a webhook one instance received reaches the
// browsers connected to every instance, through a table and LISTEN/NOTIFY.
//
// # Why PostgreSQL
//
// The payments service already runs on PostgreSQL, so sharing state this way
// adds no new system to operate, and PostgreSQL gives what the limiter needs
// to be exact: a single INSERT … ON CONFLICT DO UPDATE takes the row lock,
// decides and counts in one statement, with no window between a read and a
// write where two instances could both see "one left". Sessions also
// survive a restart of every instance.
//
// # Use
//
//	st, err := bffpg.Open(ctx, url) // creates the tables when missing
//	…
//	defer st.Close()
//	srv, err := bff.New(bff.Config{…, Sessions: st.Sessions(), Limiter: st.Limiter(), Events: st.Events()})
//
// The database may be the service's own: the tables are called
// bff_sessions, bff_sign_ins, bff_login_limits and bff_webhook_events. Each BFF holds
// one connection of its own (outside the pool's count) to LISTEN. The pool takes pgx's settings from the
// URL (pool_max_conns and the like).
//
// # Clock
//
// Expiry times and window ends are computed and compared by the database
// (now() of the statement), never by the instance: instances whose clocks
// disagree by a few seconds would otherwise disagree on whether a session
// has expired, or one instance could restart a window another still counts
// in. The BFF only ever hands over durations (a ttl, a window) and gets
// durations back (the wait), so neither the instance's nor the database's
// offset from true time matters, only the database's steadiness. [WithClock]
// replaces the database's clock with a Go clock for tests; every Store on a
// database must then use the same clock.
//
// # Sweeping
//
// Expired sessions and ended windows are already ignored when read, so
// removing them is housekeeping only. Each Store deletes them in the
// background every five minutes ([WithSweepInterval]) in batches, so no
// request pays for it and a Store that is never called still cleans up.
// Several instances sweeping at once is harmless: the batches skip rows
// another sweeper has locked. [Store.Sweep] runs one sweep on demand.
package bffpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"paywallet/internal/pgfailover"
)

// ErrUnavailable reports that the BFF's PostgreSQL could not be reached or
// went away during a statement (a crash, a failover, the network): nothing
// was changed, or whether it was is unknown. The BFF answers 503 with
// Retry-After, as the service does for its own database.
var ErrUnavailable = errors.New("bffpg: database unavailable")

// Store holds the connection pool and runs the background sweep. Its
// [Store.Sessions] and [Store.Limiter] are the bff.SessionStore and
// bff.Limiter backed by it. It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	order pgfailover.HostOrder
	now   func() time.Time // nil: the database's clock
	log   *slog.Logger

	sweepEvery time.Duration
	bg         context.Context // ends at Close
	stop       context.CancelFunc
	done       chan struct{}
	listeners  sync.WaitGroup // the event listeners (events.go)
	closeOnce  sync.Once
}

// statementBound bounds each operation of the Store. A primary that is cut
// off (stopped, or behind a dead network) keeps its connections open and
// answers nothing: without a bound a browser's request would wait on it
// until TCP gave up, minutes. Every statement here takes milliseconds.
const statementBound = 5 * time.Second

// errBound is the cause of a context that statementBound ended.
var errBound = errors.New("bffpg: the database did not answer within the statement bound")

// bound returns ctx bounded by statementBound (its cause errBound).
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, statementBound, errBound)
}

// fail wraps the error of an operation run under ctx (from bound), saying
// what was being done. When the database went away (pgfailover.Unavailable,
// or the bound ran out: a server that stopped answering), the error wraps
// ErrUnavailable, and the pool's connections, opened to a server that may
// be dead or demoted now, are closed: the next operations dial the hosts
// again and reach the new primary. The caller's own deadline running out
// (a readiness probe's second) is not the database going away: the pool
// stays (found by review: a slow moment emptied every BFF's pool at once).
func (s *Store) fail(ctx context.Context, what string, err error) error {
	if pgfailover.Unavailable(err) || context.Cause(ctx) == errBound {
		s.pool.Reset()
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("bffpg: %s: %w", what, err)
}

// Option configures [Open].
type Option func(*Store)

// WithClock makes the Store read the time from now instead of from the
// database. It exists for tests, which move time forward on their own
// clock; in production every instance must agree on one clock, which only
// the database's default gives (see the package documentation).
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithSweepInterval sets how often the Store deletes expired sessions and
// ended limiter windows in the background; 0 keeps the default (5 minutes)
// and a negative value turns the background sweep off, leaving it to
// [Store.Sweep].
func WithSweepInterval(d time.Duration) Option {
	return func(s *Store) {
		if d != 0 {
			s.sweepEvery = d
		}
	}
}

// WithLogger sets where failures of the background sweep are logged;
// slog.Default() otherwise.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.log = l
		}
	}
}

const defaultSweepInterval = 5 * time.Minute

// Open connects to the PostgreSQL database at url (a postgres:// URL or a
// key=value DSN as pgx understands it), creates the tables when they are
// missing and starts the background sweep. Close the Store when done.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	s := &Store{log: slog.Default(), sweepEvery: defaultSweepInterval}
	for _, o := range opts {
		o(s)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("bffpg: open: %w", err)
	}
	// A URL may name every node of a cluster with failover
	// (postgres://h1,h2,h3/db?target_session_attrs=read-write): see
	// internal/pgfailover.
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = pgfailover.ConnectTimeout
	}
	cfg.BeforeConnect = s.order.BeforeConnect
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		s.order.Connected(c)
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("bffpg: open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("bffpg: open: %w", err)
	}
	if err := createSchema(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("bffpg: open: %w", err)
	}
	s.pool = pool
	bg, stop := context.WithCancel(context.Background())
	s.bg, s.stop, s.done = bg, stop, make(chan struct{})
	go s.sweepLoop(bg)
	return s, nil
}

// Close stops the background sweep and the event listeners and closes the
// pool. Calls after the first do nothing.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		s.listeners.Wait()
		s.pool.Close()
	})
}

// schemaLock is the key of the advisory lock under which the tables are
// created (the service's migrations use another key).
const schemaLock int64 = 0x6266665f70670001 // "bff_pg" 0x00 0x01

// schema creates what the Store needs and changes nothing that exists, so
// every start runs it. A later change must be written the same way (ADD
// COLUMN IF NOT EXISTS …), so that instances of old and new versions can
// start in any order.
const schema = `
CREATE TABLE IF NOT EXISTS bff_sessions (
	key        text PRIMARY KEY,
	data       bytea NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS bff_sessions_expires_at ON bff_sessions (expires_at);
CREATE TABLE IF NOT EXISTS bff_login_limits (
	key          text PRIMARY KEY,
	n            bigint NOT NULL,
	window_end   timestamptz NOT NULL,
	last_allowed boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS bff_login_limits_window_end ON bff_login_limits (window_end);
CREATE TABLE IF NOT EXISTS bff_webhook_events (
	key         text PRIMARY KEY,
	type        text NOT NULL,
	customer_id text NOT NULL,
	body        bytea NOT NULL,
	received_at timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS bff_webhook_events_expires_at ON bff_webhook_events (expires_at);
CREATE INDEX IF NOT EXISTS bff_webhook_events_received_at ON bff_webhook_events (received_at);
CREATE TABLE IF NOT EXISTS bff_sign_ins (
	key          text PRIMARY KEY,
	user_agent   text NOT NULL CHECK (octet_length(user_agent) <= 512),
	signed_in_at timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS bff_sign_ins_expires_at ON bff_sign_ins (expires_at);
`

// createSchema runs schema in one transaction under an advisory lock: two
// instances starting at once against an empty database would otherwise
// race inside CREATE TABLE IF NOT EXISTS, which PostgreSQL does not make
// safe (one of them fails on a duplicate catalog entry).
func createSchema(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
		return fmt.Errorf("schema lock: %w", err)
	}
	if _, err := tx.Exec(ctx, schema); err != nil {
		return fmt.Errorf("create tables: %w", err)
	}
	return tx.Commit(ctx)
}

// clock returns the argument the statements read the time from: NULL, which
// they replace with now(), or the injected clock's time. Times are cut to
// microseconds, PostgreSQL's resolution, so that durations computed from
// what the database returns are exact.
func (s *Store) clock() any {
	if s.now == nil {
		return nil
	}
	return s.now().Truncate(time.Microsecond)
}

// micros converts d to whole microseconds, rounding up, so that a positive
// duration never becomes zero.
func micros(d time.Duration) int64 {
	us := d / time.Microsecond
	if d%time.Microsecond > 0 {
		us++
	}
	return int64(us)
}

// sweepBatch bounds the rows one DELETE removes, so that a sweep after a
// long pause holds its locks only briefly.
const sweepBatch = 5000

// Sweep deletes the expired sessions and sign-ins, the ended limiter
// windows and the webhook events past bff.WebhookSeenFor, and reports how many sessions
// and windows it deleted. The background sweep calls it; callers who
// turned that off call it themselves.
func (s *Store) Sweep(ctx context.Context) (sessions, windows int64, err error) {
	if sessions, err = s.sweepTable(ctx, "bff_sessions", "expires_at"); err != nil {
		return sessions, 0, err
	}
	if windows, err = s.sweepTable(ctx, "bff_login_limits", "window_end"); err != nil {
		return sessions, windows, err
	}
	if _, err = s.sweepTable(ctx, "bff_sign_ins", "expires_at"); err != nil {
		return sessions, windows, err
	}
	_, err = s.sweepTable(ctx, "bff_webhook_events", "expires_at")
	return sessions, windows, err
}

func (s *Store) sweepTable(ctx context.Context, table, column string) (int64, error) {
	// Table and column are constants of this file. FOR UPDATE re-checks
	// the condition on a row updated meanwhile (a session put again, a
	// window restarted), so only rows still expired are deleted; SKIP
	// LOCKED leaves rows another sweeper or a request holds.
	q := `DELETE FROM ` + table + ` WHERE key IN (
		SELECT key FROM ` + table + ` WHERE ` + column + ` <= coalesce($1::timestamptz, now())
		LIMIT $2 FOR UPDATE SKIP LOCKED)`
	var total int64
	for {
		arg := s.clock()
		tag, err := s.pool.Exec(ctx, q, arg, sweepBatch)
		if err != nil {
			return total, fmt.Errorf("bffpg: sweep %s: %w", table, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < sweepBatch {
			return total, nil
		}
	}
}

func (s *Store) sweepLoop(ctx context.Context) {
	defer close(s.done)
	if s.sweepEvery < 0 {
		return
	}
	t := time.NewTicker(s.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, _, err := s.Sweep(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("bffpg: background sweep", slog.Any("err", err))
		}
	}
}

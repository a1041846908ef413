package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"paywallet/internal/pgfailover"
	"paywallet/service/store"
)

// pgConns is the PostgreSQL pool's failover bookkeeping (see
// internal/pgfailover for the whole story): connections opened before a
// transaction met the database going away are dropped the next time the
// pool hands them out (ResetSession) — one broken statement is evidence
// enough that its siblings point at the same dead or demoted server, and
// re-dialling a healthy one costs a millisecond —, and the host that
// answered last is dialled first.
type pgConns struct {
	order pgfailover.HostOrder
	// brokeAt is when a transaction last met the database going away
	// (UnixNano); connections opened before are dropped on reuse.
	brokeAt atomic.Int64
	// mu guards opened and sweeps.
	mu sync.Mutex
	// opened is when each open connection was dialled. Entries of
	// connections closed without passing through ResetSession again stay
	// until the next sweep.
	opened map[*pgx.Conn]int64
	sweeps int
	// session is run on every new connection (openPostgresPool).
	session string
}

// openPostgresPool opens database/sql over pgx with the hooks above.
func openPostgresPool(url string) (*sql.DB, *pgConns, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgfailover.ConnectTimeout
	}
	// Index scans, not sequential ones, unless the URL says otherwise
	// (…?enable_seqscan=on). Every transaction is SERIALIZABLE, and
	// PostgreSQL checks that with predicate locks on what each one read:
	// a sequential scan locks the whole table, so any concurrent write to
	// it becomes a read/write conflict. The planner prefers one for a
	// table of a page or two, whatever the query, and a young deployment's
	// tables are that small: in the service tests, eight clients paying at
	// once against analyzed tables of eight wallets made 1,700 payments in
	// 8 s, 34 of them given up as "busy" after 20 lost races; with this,
	// 5,088 and none. The service's queries on tables that grow have an
	// index to use (the PostgreSQL manual's advice for SERIALIZABLE
	// workloads is the same: encourage index scans); this takes the
	// cheaper-looking sequential scan of a tiny table off the table, and
	// a query with no index path (the worker's claim of webhook
	// endpoints, a handful of rows) is still planned as a scan.
	//
	// No JIT compilation either (unless the URL asks for it): the service
	// sends short queries, and a plan costed past jit_above_cost (as one
	// whose only path is the sequential scan enable_seqscan discourages,
	// costed at 10^10) was compiled for ~280 ms every time it ran: the
	// webhook worker's endpoint claim, on a table of one row.
	//
	// Both are SET once a connection is open rather than sent as startup
	// parameters, which a connection pooler such as PgBouncer refuses.
	var session []string
	for _, p := range []string{"enable_seqscan", "jit"} {
		if !setsParam(cfg.RuntimeParams, p) {
			session = append(session, "SET "+p+" = off")
		}
	}
	pc := &pgConns{opened: map[*pgx.Conn]int64{}, session: strings.Join(session, "; ")}
	db := stdlib.OpenDB(*cfg,
		stdlib.OptionBeforeConnect(pc.order.BeforeConnect),
		stdlib.OptionAfterConnect(pc.afterConnect),
		stdlib.OptionShouldPing(pc.shouldPing),
		stdlib.OptionResetSession(pc.resetSession),
	)
	return db, pc, nil
}

// setsParam reports whether params set the run-time parameter name,
// directly or in options ("-c name=value").
func setsParam(params map[string]string, name string) bool {
	if _, ok := params[name]; ok {
		return true
	}
	return strings.Contains(params["options"], name+"=")
}

// broke records that the database went away now (nothing on SQLite,
// where pc is nil).
func (pc *pgConns) broke() {
	if pc != nil {
		pc.brokeAt.Store(time.Now().UnixNano())
	}
}

// afterConnect sets the session up, and notes when the connection was
// opened and where it went.
func (pc *pgConns) afterConnect(ctx context.Context, c *pgx.Conn) error {
	if pc.session != "" {
		if _, err := c.Exec(ctx, pc.session); err != nil {
			return fmt.Errorf("store: set up the session (%s): %w", pc.session, err)
		}
	}
	pc.order.Connected(c)
	pc.mu.Lock()
	pc.opened[c] = time.Now().UnixNano()
	pc.sweep()
	pc.mu.Unlock()
	return nil
}

// shouldPing decides whether pgx pings a connection before the pool hands
// it out again: as pgx does by default (idle over a second), but never one
// that resetSession will drop anyway — on a primary that stopped answering
// that ping would wait out the whole attempt before the drop.
func (pc *pgConns) shouldPing(_ context.Context, p stdlib.ShouldPingParams) bool {
	if pc.stale(p.Conn) {
		return false
	}
	return p.IdleDuration > time.Second
}

// stale reports whether c was opened before the database last went away.
func (pc *pgConns) stale(c *pgx.Conn) bool {
	broke := pc.brokeAt.Load()
	pc.mu.Lock()
	opened, ok := pc.opened[c]
	pc.mu.Unlock()
	return ok && opened < broke
}

// resetSession runs before the pool hands out a connection it has used
// before: one opened before the database last went away is dropped.
func (pc *pgConns) resetSession(_ context.Context, c *pgx.Conn) error {
	broke := pc.brokeAt.Load()
	pc.mu.Lock()
	opened, ok := pc.opened[c]
	if ok && opened < broke {
		delete(pc.opened, c)
	}
	pc.mu.Unlock()
	if ok && opened < broke {
		c.Close(context.Background())
		return driver.ErrBadConn
	}
	return nil
}

// sweep forgets connections that are closed, every 64 connects (mu held).
func (pc *pgConns) sweep() {
	if pc.sweeps++; pc.sweeps%64 != 0 {
		return
	}
	for c := range pc.opened {
		if c.IsClosed() {
			delete(pc.opened, c)
		}
	}
}

// unavailable wraps err as store.ErrUnavailable, saying what was being
// done.
func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, what, err)
}

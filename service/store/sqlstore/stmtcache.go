package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the SQLite store's statements prepared. The SQLite
// driver parses and plans the SQL of every query that is not a prepared
// statement, which was a fifth of the service's CPU time on a quote and an
// execute; PostgreSQL's driver (pgx) caches its prepared statements per
// connection already, so only SQLite uses this.
//
// A statement cannot be prepared inside a transaction for later ones: the
// store has one SQLite connection, which the transaction holds, and a
// *sql.Tx's own statements close with it. So a statement seen for the
// first time runs unprepared and is noted; after the transaction ends, the
// store prepares the noted statements on the free connection, and later
// transactions run them with Tx.StmtContext, which reuses the connection's
// prepared statement.
type stmtCache struct {
	mu       sync.Mutex
	prepared map[string]*sql.Stmt
	wanted   map[string]bool
}

// maxCachedStmts bounds the cache: the store's SQL texts are a fixed set,
// but a bound keeps a query built from variable input from growing it.
const maxCachedStmts = 512

func newStmtCache() *stmtCache {
	return &stmtCache{prepared: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// get returns the prepared statement of q, or nil after noting that q is
// wanted.
func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.prepared[q]; s != nil {
		return s
	}
	if len(c.prepared)+len(c.wanted) < maxCachedStmts {
		c.wanted[q] = true
	}
	return nil
}

// prepare prepares the statements noted since the last call. It must not
// run inside a transaction of db (see stmtCache). A statement that does not
// prepare is left out; running it unprepared reports its error.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	if len(c.wanted) == 0 {
		c.mu.Unlock()
		return
	}
	wanted := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		wanted = append(wanted, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range wanted {
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.prepared[q] == nil {
			c.prepared[q] = s
			s = nil
		}
		c.mu.Unlock()
		if s != nil {
			_ = s.Close()
		}
	}
}

// close closes every prepared statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.prepared {
		_ = s.Close()
		delete(c.prepared, q)
	}
}

package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"paywallet/service/store"
)

// Riding through a failover
//
// The service is given one URL naming every node of the cluster, as libpq
// and pgx read it:
//
//	postgres://h1:5432,h2:5432,h3:5432/payments?target_session_attrs=read-write
//
// pgx tries the hosts in order and keeps the first that accepts writes, so
// a new connection always reaches the primary of the moment. What the
// store adds (pgConns):
//
//   - Connections that outlive a switch are dropped. When a transaction
//     meets the database going away (errUnavailable), every connection
//     opened before that moment is discarded the next time the pool hands
//     it out (ResetSession): one broken statement is evidence enough that
//     its siblings point at the same dead or demoted server, and the cost
//     of re-dialling a healthy one is a millisecond.
//   - The host that answered last is tried first. A primary that is cut
//     off (not dead: its port still accepts TCP but nothing answers) would
//     otherwise cost every new connection a connect timeout before pgx
//     moves on to the next host.
//   - A connect timeout (defaultConnectTimeout) when the URL sets none, so
//     that such a host is given up at all.

// defaultConnectTimeout bounds each host's connection attempt when the
// URL has no connect_timeout: long enough for a loaded server on another
// machine, short enough that a host that does not answer is passed over
// while the client still waits.
const defaultConnectTimeout = 2 * time.Second

// pgConns is the PostgreSQL connection pool's bookkeeping (see above).
type pgConns struct {
	// brokeAt is when a transaction last met the database going away
	// (UnixNano); connections opened before are dropped on reuse.
	brokeAt atomic.Int64
	// mu guards opened and lastGood.
	mu sync.Mutex
	// opened is when each open connection was dialled. Entries of
	// connections closed without passing through ResetSession again stay
	// until the next sweep (sweep).
	opened map[*pgx.Conn]int64
	// lastGood is the address (host:port) of the server the last
	// connection reached.
	lastGood string
	sweeps   int
}

// openPostgresPool opens database/sql over pgx with the hooks above.
func openPostgresPool(url string) (*sql.DB, *pgConns, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	pc := &pgConns{opened: map[*pgx.Conn]int64{}}
	db := stdlib.OpenDB(*cfg,
		stdlib.OptionBeforeConnect(pc.beforeConnect),
		stdlib.OptionAfterConnect(pc.afterConnect),
		stdlib.OptionResetSession(pc.resetSession),
	)
	return db, pc, nil
}

// broke records that the database went away now (nothing on SQLite,
// where pc is nil).
func (pc *pgConns) broke() {
	if pc != nil {
		pc.brokeAt.Store(time.Now().UnixNano())
	}
}

// beforeConnect puts the host that answered last first in the list of
// hosts to try. cfg is the connector's copy; its Fallbacks slice is
// shared with the original, so a new one is built.
func (pc *pgConns) beforeConnect(_ context.Context, cfg *pgx.ConnConfig) error {
	pc.mu.Lock()
	good := pc.lastGood
	pc.mu.Unlock()
	if good == "" || len(cfg.Fallbacks) == 0 || hostPort(cfg.Host, cfg.Port) == good {
		return nil
	}
	for i, fb := range cfg.Fallbacks {
		if hostPort(fb.Host, fb.Port) != good {
			continue
		}
		hosts := make([]*pgconn.FallbackConfig, 0, len(cfg.Fallbacks))
		hosts = append(hosts, &pgconn.FallbackConfig{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig})
		hosts = append(hosts, cfg.Fallbacks[:i]...)
		hosts = append(hosts, cfg.Fallbacks[i+1:]...)
		cfg.Host, cfg.Port, cfg.TLSConfig = fb.Host, fb.Port, fb.TLSConfig
		cfg.Fallbacks = hosts
		return nil
	}
	return nil
}

// afterConnect notes when the connection was opened and where it went.
func (pc *pgConns) afterConnect(_ context.Context, c *pgx.Conn) error {
	now := time.Now().UnixNano()
	addr := ""
	if nc := c.PgConn().Conn(); nc != nil {
		if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
			addr = hostPort(ta.IP.String(), uint16(ta.Port))
		}
	}
	pc.mu.Lock()
	pc.opened[c] = now
	if addr != "" {
		pc.lastGood = addr
	}
	pc.sweep()
	pc.mu.Unlock()
	return nil
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

// hostPort is the address pgx dials for host and port: what
// afterConnect's remote address is compared with (hosts given by name
// other than an IP address are not reordered, their address differs).
func hostPort(host string, port uint16) string {
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// unavailable wraps err as store.ErrUnavailable, saying what was being
// done.
func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, what, err)
}

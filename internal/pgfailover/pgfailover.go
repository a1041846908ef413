// Package pgfailover is what the service's store and the BFF's share to
// ride through a switch of PostgreSQL primary: which errors mean "the
// database went away" rather than "the statement is wrong", and which
// host of a multi-host URL to dial first.
//
// Both are given one URL naming every node of the cluster, as libpq and
// pgx read it:
//
//	postgres://h1:5432,h2:5432,h3:5432/payments?target_session_attrs=read-write
//
// pgx tries the hosts in order and keeps the first that accepts writes, so
// a new connection reaches the primary of the moment. What this package
// adds:
//
//   - [Unavailable] tells the errors a failover shows a client (the server
//     ending the session, a demoted primary refusing writes, a connection
//     that broke or could not be made) from the statement's own errors.
//     Its callers answer them "try again" (HTTP 503 with Retry-After) and
//     drop the connections that were open when it happened.
//   - [HostOrder] tries the host that answered last first: a primary that
//     is cut off (its port still accepts TCP, nothing answers) would
//     otherwise cost every new connection a connect timeout before pgx
//     moves on to the next host.
//   - [ConnectTimeout] bounds each host's attempt when the URL sets none,
//     so that such a host is given up at all.
package pgfailover

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ConnectTimeout is each host's connection attempt when the URL has no
// connect_timeout: long enough for a loaded server on another machine,
// short enough that a host that does not answer is passed over while the
// client still waits.
const ConnectTimeout = 2 * time.Second

// Unavailable reports whether err means that the database went away
// rather than that the statement failed:
//
//   - the server ends the session: 57P01 admin_shutdown (a fast or smart
//     stop, as pg_auto_failover and Patroni do to demote a primary), 57P02
//     crash_shutdown (another backend crashed), 57P03 cannot_connect_now
//     (starting up, in recovery), class 08 (connection exceptions) and 53300
//     too_many_connections (a pool's worth of clients reconnecting at once);
//   - 25006 read_only_sql_transaction: the session reached a server that is
//     a standby now (it was the primary when the connection opened);
//   - the connection itself fails: refused, reset, closed, an unexpected
//     EOF mid-answer, a dial or read timeout (pgconn.ConnectError, net
//     errors, driver.ErrBadConn, pgconn.ErrConnClosed).
//
// A context that ended is not among them: the caller gave up, the database
// did not go away (whoever set the deadline decides what it meant).
func Unavailable(err error) bool {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		switch e.Code {
		case "25006", "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(e.Code, "08")
	}
	// A connection that could not be made is the database being away,
	// whatever its hosts' errors say: a host that accepts TCP and never
	// answers (a frozen or cut-off primary) fails with the connect
	// timeout's "context deadline exceeded" inside the ConnectError.
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// HostOrder remembers which host of a multi-host URL answered last and
// puts it first for the next connection. Use its BeforeConnect and
// Connected as the pool's hooks (pgxpool.Config.BeforeConnect and
// AfterConnect, or stdlib's options). The zero value is ready.
type HostOrder struct {
	mu       sync.Mutex
	lastGood string // host:port the last connection reached
}

// BeforeConnect puts the host that answered last first in cfg's list of
// hosts. cfg is the pool's copy of the configuration, but its Fallbacks
// slice is shared with the original, so a new one is built.
func (h *HostOrder) BeforeConnect(_ context.Context, cfg *pgx.ConnConfig) error {
	h.mu.Lock()
	good := h.lastGood
	h.mu.Unlock()
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

// Connected notes the host c reached.
func (h *HostOrder) Connected(c *pgx.Conn) {
	nc := c.PgConn().Conn()
	if nc == nil {
		return
	}
	ta, ok := nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return
	}
	h.mu.Lock()
	h.lastGood = hostPort(ta.IP.String(), uint16(ta.Port))
	h.mu.Unlock()
}

// hostPort is the address pgx dials for host and port, in the form
// Connected's remote address takes (hosts given by a name other than
// localhost are never reordered: their address differs from the name).
func hostPort(host string, port uint16) string {
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

package sqlstore

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// TestClassifyPostgres: the errors a failover shows a client are
// errUnavailable; races stay errRetry; the caller's own deadline is none
// of them.
func TestClassifyPostgres(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("store: x: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name string
		err  error
		want errKind
	}{
		{"unique", pg("23505"), errUnique},
		{"foreign key", pg("23503"), errForeignKey},
		{"serialization", pg("40001"), errRetry},
		{"deadlock", pg("40P01"), errRetry},
		{"read-only (a demoted primary)", pg("25006"), errUnavailable},
		{"admin shutdown", pg("57P01"), errUnavailable},
		{"crash shutdown", pg("57P02"), errUnavailable},
		{"cannot connect now", pg("57P03"), errUnavailable},
		{"connection failure", pg("08006"), errUnavailable},
		{"too many connections", pg("53300"), errUnavailable},
		{"syntax", pg("42601"), errOther},
		{"bad conn", driver.ErrBadConn, errUnavailable},
		{"conn closed", fmt.Errorf("x: %w", pgconn.ErrConnClosed), errUnavailable},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), errUnavailable},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, errUnavailable},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), errUnavailable},
		{"caller gave up", fmt.Errorf("x: %w", context.Canceled), errOther},
		{"caller's deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), errOther},
		{"no rows", errors.New("sql: no rows in result set"), errOther},
	} {
		if got := classifyPostgres(tc.err); got != tc.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// proxy is a TCP proxy in front of a PostgreSQL server whose behaviour a
// test switches: forward, hold every byte (a server that stopped
// answering, as a SIGSTOPped or cut-off primary), or cut the connection
// when the client sends COMMIT, before or after passing it on.
type proxy struct {
	t        *testing.T
	ln       net.Listener
	target   string
	accepted atomic.Int32
	mode     atomic.Int32 // proxyForward, proxyHold, proxyCutBeforeCommit, proxyCutAfterCommit

	mu    sync.Mutex
	conns []net.Conn
	// cutWrite is what passing a COMMIT on before a cut gave
	// (proxyCutAfterCommit), for a failing test to say.
	cutWrite string
}

const (
	proxyForward = iota
	proxyHold
	proxyCutBeforeCommit
	proxyCutAfterCommit
)

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, client, server)
	p.mu.Unlock()
	go p.pipe(server, client, false)
	p.pipe(client, server, true)
}

// pipe copies from src to dst; fromClient is the client's direction,
// where COMMIT is watched for.
func (p *proxy) pipe(src, dst net.Conn, fromClient bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			for p.mode.Load() == proxyHold {
				time.Sleep(5 * time.Millisecond) // the bytes wait, as in a stopped server's socket
				if isClosed(src) {
					return
				}
			}
			chunk := buf[:n]
			if fromClient && bytes.Contains(bytes.ToLower(chunk), []byte("commit")) {
				switch p.mode.Load() {
				case proxyCutBeforeCommit:
					return
				case proxyCutAfterCommit:
					src.Close() // the client hears nothing more
					wrote, err := dst.Write(chunk)
					p.mu.Lock()
					p.cutWrite = fmt.Sprintf("%d of %d bytes written (%q), error %v", wrote, len(chunk), chunk, err)
					p.mu.Unlock()
					time.Sleep(100 * time.Millisecond) // let the server commit
					return
				}
			}
			if _, err := dst.Write(chunk); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func isClosed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:0])
	c.SetReadDeadline(time.Time{})
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// viaHosts rewrites a pgtest URL to go to hosts (host:port, in order)
// and adds params.
func viaHosts(t *testing.T, raw string, params string, hosts ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = strings.Join(hosts, ",")
	if params != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += params
	}
	return u.String()
}

func putSetting(ctx context.Context, db *DB, key string) error {
	return db.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.PutSettingIfAbsent(ctx, key, []byte(key))
		return err
	})
}

// sessions lists the server's other sessions of db's database: state,
// wait event and query.
func sessions(t *testing.T, db *DB) []string {
	t.Helper()
	return queryAll(t, db, `SELECT coalesce(state, '') || ' / ' || coalesce(wait_event_type || ':' || wait_event, '-') || ' / ' || query
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`, func(s scanner) (string, error) {
		var v string
		return v, s.Scan(&v)
	})
}

func hasSetting(t *testing.T, ctx context.Context, db *DB, key string) bool {
	t.Helper()
	var got []byte
	err := db.Tx(ctx, func(tx store.Tx) error {
		var err error
		got, err = tx.GetSetting(ctx, key)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return string(got) == key
}

// TestMultiHostURL: a URL naming several hosts reaches the one that
// answers, past a host that refuses connections and one that accepts them
// but never answers (a cut-off primary); and once a host has answered, new
// connections go to it first instead of waiting on the silent one again.
func TestMultiHostURL(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	refused := func() string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := ln.Addr().String()
		ln.Close()
		return a
	}()
	silent := newProxy(t, u.Host)
	silent.mode.Store(proxyHold)
	dsn := viaHosts(t, raw, "connect_timeout=1&target_session_attrs=read-write", refused, silent.addr(), u.Host)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := putSetting(ctx, db, "multi-host"); err != nil {
		t.Fatal(err)
	}
	before := silent.accepted.Load()
	if before == 0 {
		t.Fatal("the silent host was never tried: the test does not test the order")
	}
	// New connections: idle ones are dropped as if the database broke.
	db.pg.broke()
	for i := range 5 {
		if err := putSetting(ctx, db, fmt.Sprintf("again-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if after := silent.accepted.Load(); after != before {
		t.Errorf("new connections tried the silent host again (%d more times) before the one that answered", after-before)
	}
	if st := db.Stats(); st.Commits < 6 {
		t.Errorf("Stats().Commits = %d", st.Commits)
	}
}

// TestServerEndsSessions: the server ending every session between
// transactions (a restart, a demotion) and during one costs no error: the
// pool's dead connections are dropped and the lost transaction runs again
// on a new one, once.
func TestServerEndsSessions(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	terminate := func() {
		t.Helper()
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 { // fill the pool
		if err := putSetting(ctx, db, fmt.Sprintf("warm-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	terminate()
	if err := putSetting(ctx, db, "after"); err != nil {
		t.Fatalf("first transaction after the sessions ended: %v", err)
	}

	runs := 0
	err = db.Tx(ctx, func(tx store.Tx) error {
		runs++
		if _, err := tx.PutSettingIfAbsent(ctx, "during", []byte("during")); err != nil {
			return err
		}
		if runs == 1 {
			terminate()
			// The next statement meets the ended session.
			_, err := tx.GetSetting(ctx, "during")
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a transaction whose session ended: %v", err)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
	if !hasSetting(t, ctx, db, "during") {
		t.Error("the retried transaction's write is missing")
	}
	if st := db.Stats(); st.Retries == 0 || st.Unavailable != 0 {
		t.Errorf("Stats: %+v", st)
	}
}

// TestCommitOutcomeUnknown: when the connection breaks as COMMIT goes
// out, the transaction is not run again (it may have committed) and the
// caller gets store.ErrUnavailable, whichever way it went.
func TestCommitOutcomeUnknown(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	for _, tc := range []struct {
		name      string
		mode      int32
		committed bool
	}{
		{"cut before the server got COMMIT", proxyCutBeforeCommit, false},
		{"cut after the server got COMMIT", proxyCutAfterCommit, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, u.Host)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			db, err := OpenPostgres(ctx, viaHosts(t, raw, "", p.addr()))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			key := fmt.Sprintf("commit-%d", tc.mode)
			runs := 0
			err = db.Tx(ctx, func(tx store.Tx) error {
				runs++
				_, err := tx.PutSettingIfAbsent(ctx, key, []byte(key))
				p.mode.Store(tc.mode)
				return err
			})
			p.mode.Store(proxyForward)
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Tx = %v, want ErrUnavailable", err)
			}
			if runs != 1 {
				t.Errorf("fn ran %d times: a commit of unknown outcome must not run again", runs)
			}
			// The server may still be processing a COMMIT it got when the
			// connection was cut (under a loaded machine, after this reads):
			// its outcome shows within moments, not at once.
			got := hasSetting(t, ctx, db, key)
			for deadline := time.Now().Add(5 * time.Second); !got && tc.committed && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				got = hasSetting(t, ctx, db, key)
			}
			if got != tc.committed {
				// What the proxy passed on and what the server's sessions
				// are doing, for finding out why.
				p.mu.Lock()
				cut := p.cutWrite
				p.mu.Unlock()
				t.Errorf("committed = %v, want %v; COMMIT passed on: %s; sessions of the database: %v",
					got, tc.committed, cut, sessions(t, db))
			}
			if st := db.Stats(); st.Unavailable != 1 {
				t.Errorf("Stats().Unavailable = %d", st.Unavailable)
			}
		})
	}
}

// TestServerStopsAnswering: a server that keeps its connections but stops
// answering (stopped, or cut off by the network) ends the transaction
// with store.ErrUnavailable after the attempt's bound, not never; once it
// answers again, so does the store.
func TestServerStopsAnswering(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	p := newProxy(t, u.Host)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, viaHosts(t, raw, "connect_timeout=1", p.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.attemptTimeout = 500 * time.Millisecond
	if err := putSetting(ctx, db, "before"); err != nil {
		t.Fatal(err)
	}
	p.mode.Store(proxyHold)
	err = db.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.PutSettingIfAbsent(ctx, "held", []byte("held"))
		return err
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Tx against a silent server = %v, want ErrUnavailable", err)
	}
	p.mode.Store(proxyForward)
	p.closeAll()
	if err := putSetting(ctx, db, "after"); err != nil {
		t.Fatalf("after the server answers again: %v", err)
	}
}

// TestNewConnectionToASilentServer: a connection that cannot be made
// because the only host accepts TCP and never answers (a frozen primary)
// fails on the connect timeout, whose error is a "context deadline
// exceeded" inside pgconn's ConnectError: that is the database being
// away (ErrUnavailable, answered 503), not the caller giving up.
func TestNewConnectionToASilentServer(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	p := newProxy(t, u.Host)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, viaHosts(t, raw, "connect_timeout=1", p.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := putSetting(ctx, db, "before"); err != nil {
		t.Fatal(err)
	}
	p.mode.Store(proxyHold)
	p.closeAll()  // the pool's connections break: the next Tx must dial
	db.pg.broke() // and is not handed an old one
	err = putSetting(ctx, db, "while silent")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Tx needing a new connection to a silent server = %v, want ErrUnavailable", err)
	}
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the error is not the connect timeout this test means: %v", err)
	}
}

// TestOnlyAStandbyLeft: with target_session_attrs=read-write, a cluster
// whose every reachable node is read-only (the primary gone, no standby
// promoted yet) is unavailable, not an error of the statement; writes go
// again once a node accepts them.
func TestOnlyAStandbyLeft(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	name := strings.TrimPrefix(u.Path, "/")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, viaHosts(t, raw, "target_session_attrs=read-write", u.Host))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	readOnly := func(on bool) {
		t.Helper()
		if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET default_transaction_read_only = %v`,
			pgx.Identifier{name}.Sanitize(), on)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
	}
	if err := putSetting(ctx, db, "before"); err != nil {
		t.Fatal(err)
	}
	readOnly(true)
	if err := putSetting(ctx, db, "while read-only"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write with only a read-only node = %v, want ErrUnavailable", err)
	}
	readOnly(false)
	admin.Close(ctx)
	if err := putSetting(ctx, db, "after"); err != nil {
		t.Fatalf("write once a node takes writes: %v", err)
	}
}

// TestTxForOnASilentServer: TxFor's own connection (the turn's) is bounded
// too: a pooled connection idle over a second is pinged before reuse, and
// on a silent server that ping would wait as long as the caller's context
// lasts (a worker's: forever). Found by review.
func TestTxForOnASilentServer(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	p := newProxy(t, u.Host)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, viaHosts(t, raw, "connect_timeout=1", p.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.attemptTimeout = 500 * time.Millisecond
	if err := db.TxFor(ctx, "k", func(tx store.Tx) error { _, err := tx.PutSettingIfAbsent(ctx, "a", []byte("a")); return err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // idle > 1 s: the next reuse pings
	p.mode.Store(proxyHold)
	// A worker's context has no deadline; 25 s stands in for "forever"
	// (turnWait + the attempt is the bound).
	wctx, wcancel := context.WithTimeout(ctx, 25*time.Second)
	defer wcancel()
	start := time.Now()
	err = db.TxFor(wctx, "k", func(tx store.Tx) error { _, err := tx.PutSettingIfAbsent(wctx, "b", []byte("b")); return err })
	t.Logf("TxFor on a silent server returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("TxFor on a silent server = %v, want ErrUnavailable within turnWait", err)
	}
	p.mode.Store(proxyForward)
}

// TestStaleConnectionsAreNotPinged: connections opened before the break
// are dropped on reuse without the ping pgx gives a connection idle over a
// second before the ResetSession hook: on a silent old primary each would
// cost a whole attempt. Found by review.
func TestStaleConnectionsAreNotPinged(t *testing.T) {
	t.Parallel()
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	p := newProxy(t, u.Host)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// The old primary (behind the proxy) first, the new one second.
	db, err := OpenPostgres(ctx, viaHosts(t, raw, "connect_timeout=1", p.addr(), u.Host))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Pinged first, each of the stale connections would hang a whole
	// attempt, and the write would end ErrUnavailable (lostRetryFor is
	// shorter than one attempt); dropped unpinged, it succeeds.
	db.attemptTimeout = 3 * time.Second
	var wg sync.WaitGroup
	for i := range 6 { // several pooled connections to the old primary
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = db.Tx(ctx, func(tx store.Tx) error {
				_, err := tx.PutSettingIfAbsent(ctx, fmt.Sprintf("warm-%d", i), []byte("x"))
				time.Sleep(50 * time.Millisecond)
				return err
			})
		}()
	}
	wg.Wait()
	time.Sleep(1200 * time.Millisecond) // idle > 1 s
	p.mode.Store(proxyHold)             // the old primary stops answering
	db.pg.broke()                       // and a transaction has already noticed
	start := time.Now()
	err = putSetting(ctx, db, "after-the-switch")
	if err != nil {
		t.Errorf("first write after the break was noticed: %v after %v: a known-stale connection was waited on instead of dropped",
			err, time.Since(start).Round(time.Millisecond))
	}
	p.mode.Store(proxyForward)
}

// TestContentionGivesUp: a transaction that loses every race is given up
// after maxAttempts runs as store.ErrContention (answered 503 "busy"),
// not as a bare driver error (answered 500).
func TestContentionGivesUp(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := OpenPostgres(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs := 0
	err = db.Tx(ctx, func(tx store.Tx) error {
		runs++
		return fmt.Errorf("store: post: %w", &pgconn.PgError{Code: "40001", Message: "could not serialize access"})
	})
	if !errors.Is(err, store.ErrContention) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Tx losing every race = %v, want ErrContention", err)
	}
	if runs != maxAttempts {
		t.Errorf("fn ran %d times, want %d", runs, maxAttempts)
	}
	if st := db.Stats(); st.Contention != 1 || st.Retries != maxAttempts-1 {
		t.Errorf("Stats: %+v", st)
	}
}

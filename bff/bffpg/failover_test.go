package bffpg_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/service/store/pgtest"
)

// TestUnavailableWhileNoPrimary: while no node of the URL takes writes
// (the primary gone, no standby promoted yet: here the one node turned
// read-only and its sessions ended), the session store and the limiter
// answer ErrUnavailable, which the BFF turns into a 503; once a node takes
// writes again they work without a restart.
func TestUnavailableWhileNoPrimary(t *testing.T) {
	raw := pgtest.Start(t).NewDatabase(t)
	u, _ := url.Parse(raw)
	name := strings.TrimPrefix(u.Path, "/")
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	st, err := bffpg.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
	sessions := st.Sessions()
	if err := sessions.Put(ctx, "k", bff.Session{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	readOnly(true)
	if _, err := sessions.Get(ctx, "k"); !errors.Is(err, bffpg.ErrUnavailable) {
		t.Errorf("Get with no primary = %v, want ErrUnavailable", err)
	}
	if err := sessions.Put(ctx, "k2", bff.Session{}, time.Minute); !errors.Is(err, bffpg.ErrUnavailable) {
		t.Errorf("Put with no primary = %v, want ErrUnavailable", err)
	}
	if _, _, err := st.Limiter().Allow(ctx, "login", bff.Limit{Max: 3, Window: time.Minute}); !errors.Is(err, bffpg.ErrUnavailable) {
		t.Errorf("Allow with no primary = %v, want ErrUnavailable", err)
	}
	readOnly(false)
	if _, err := sessions.Get(ctx, "k"); err != nil {
		t.Errorf("Get once a node takes writes: %v", err)
	}
	if err := sessions.Put(ctx, "k2", bff.Session{}, time.Minute); err != nil {
		t.Errorf("Put once a node takes writes: %v", err)
	}
}

// TestCallerDeadlineIsNoFailover: a caller's own short deadline (a
// readiness probe's) running out on a slow, not gone, database is the
// caller's error, not ErrUnavailable, and leaves the pool as it is. Found
// by review.
func TestCallerDeadlineIsNoFailover(t *testing.T) {
	raw := pgtest.Start(t).NewDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	st, err := bffpg.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions := st.Sessions()
	if err := sessions.Put(ctx, "k", bff.Session{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	conns := func() int {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Warm the pool: several connections.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = sessions.Get(ctx, "k") }()
	}
	wg.Wait()
	before := conns()
	// The database is slow for a moment: a lock held for 1.5 s.
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE bff_sessions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	probe, pcancel := context.WithTimeout(ctx, 300*time.Millisecond) // a readiness probe's own bound
	_, err = sessions.Get(probe, "k")
	pcancel()
	_ = tx.Rollback(ctx)
	time.Sleep(200 * time.Millisecond)
	after := conns()
	t.Logf("Get under the caller's 300 ms deadline: %v; store connections before %d, after %d", err, before, after)
	if errors.Is(err, bffpg.ErrUnavailable) {
		t.Errorf("the caller's own deadline was reported as ErrUnavailable (a failover)")
	}
	// The interrupted statement's connection goes (pgx closes one whose
	// answer it stopped reading); the others stay.
	if after < before-1 {
		t.Errorf("the pool was reset by the caller's deadline (%d -> %d connections)", before, after)
	}
}

package bffpg_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/service/store/pgtest"
)

// countRows counts the rows of table behind the Stores' backs.
func countRows(t *testing.T, url, table string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpenConcurrently starts several Stores at once against an empty
// database, as instances of a deployment do: creating the tables must not
// fail for any of them, and opening again changes nothing.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := bffpg.Open(context.Background(), url)
			if err == nil {
				st.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	st := openStore(t, url, nil)
	mustPut(t, st.Sessions(), key(1), fullSession(), time.Hour)
	st2 := openStore(t, url, nil) // the tables exist and keep their rows
	wantSession(t, st2.Sessions(), key(1), fullSession())
}

func TestOpenFails(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", // nothing listens on port 1
		"not a url=",
	} {
		if st, err := bffpg.Open(ctx, url); err == nil {
			st.Close()
			t.Errorf("Open(%q) succeeded", url)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	st, err := bffpg.Open(context.Background(), pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	st.Close()
	if _, err := st.Sessions().Get(context.Background(), key(1)); err == nil {
		t.Error("Get on a closed Store succeeded")
	}
}

// TestDatabaseClock runs without WithClock: expiry and windows follow the
// database's now().
func TestDatabaseClock(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	a, b := openStore(t, url, nil), openStore(t, url, nil)
	ctx := context.Background()
	const span = 1500 * time.Millisecond

	begin := time.Now()
	mustPut(t, a.Sessions(), key(1), fullSession(), span)
	l := bff.Limit{Max: 1, Window: span}
	if ok, _, err := a.Limiter().Allow(ctx, "k", l); !ok || err != nil {
		t.Fatalf("first attempt: %v, %v", ok, err)
	}
	wantSession(t, b.Sessions(), key(1), fullSession())
	ok, wait, err := b.Limiter().Allow(ctx, "k", l)
	if ok || err != nil || wait <= 0 || wait > span || wait < span-time.Since(begin)-100*time.Millisecond {
		t.Fatalf("second attempt: %v, %v, %v; want refused with about %v left", ok, wait, err, span-time.Since(begin))
	}

	time.Sleep(wait + 50*time.Millisecond)
	wantAbsent(t, b.Sessions(), key(1))
	if ok, _, err := b.Limiter().Allow(ctx, "k", l); !ok || err != nil {
		t.Fatalf("after the window: %v, %v", ok, err)
	}
}

// TestSweep checks what a sweep deletes: expired sessions and ended
// windows, and nothing that is still live, even when it had expired and was
// put again.
func TestSweep(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	clk := newClock()
	st := openStore(t, url, clk.Now, bffpg.WithSweepInterval(-1))
	ss, lm := st.Sessions(), st.Limiter()
	ctx := context.Background()

	for i := range 3 {
		mustPut(t, ss, key(i), fullSession(), time.Minute)
	}
	mustPut(t, ss, key(10), fullSession(), time.Hour)
	for _, k := range []string{"short1", "short2"} {
		_, _, _ = lm.Allow(ctx, k, bff.Limit{Max: 5, Window: time.Minute})
	}
	_, _, _ = lm.Allow(ctx, "long", bff.Limit{Max: 5, Window: time.Hour})
	clk.Advance(2 * time.Minute)
	mustPut(t, ss, key(0), fullSession(), time.Minute) // expired, then put again

	sessions, windows, err := st.Sweep(ctx)
	if err != nil || sessions != 2 || windows != 2 {
		t.Fatalf("Sweep = %d sessions, %d windows, %v; want 2, 2", sessions, windows, err)
	}
	if n := countRows(t, url, "bff_sessions"); n != 2 {
		t.Errorf("%d session rows left, want 2", n)
	}
	if n := countRows(t, url, "bff_login_limits"); n != 1 {
		t.Errorf("%d limiter rows left, want 1", n)
	}
	wantSession(t, ss, key(0), fullSession())
	wantSession(t, ss, key(10), fullSession())
	if sessions, windows, err := st.Sweep(ctx); err != nil || sessions != 0 || windows != 0 {
		t.Errorf("second Sweep = %d, %d, %v; want nothing", sessions, windows, err)
	}
}

// TestSweepInBatches deletes more expired rows than one batch holds.
func TestSweepInBatches(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	clk := newClock()
	st := openStore(t, url, clk.Now, bffpg.WithSweepInterval(-1))
	const n = 12001
	if _, err := conn.Exec(ctx, `INSERT INTO bff_sessions (key, data, expires_at)
		SELECT 'k' || i, '{}', $1::timestamptz FROM generate_series(1, $2::int) AS i`, clk.Now(), n); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if sessions, _, err := st.Sweep(ctx); err != nil || sessions != n {
		t.Fatalf("Sweep = %d, %v; want %d", sessions, err, n)
	}
}

// TestBackgroundSweep checks that an open Store sweeps on its own.
func TestBackgroundSweep(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	clk := newClock()
	st := openStore(t, url, clk.Now, bffpg.WithSweepInterval(10*time.Millisecond))
	mustPut(t, st.Sessions(), key(1), fullSession(), time.Minute)
	_, _, _ = st.Limiter().Allow(context.Background(), "k", bff.Limit{Max: 1, Window: time.Minute})
	time.Sleep(50 * time.Millisecond)
	if countRows(t, url, "bff_sessions") != 1 || countRows(t, url, "bff_login_limits") != 1 {
		t.Fatal("live rows swept")
	}
	clk.Advance(time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for countRows(t, url, "bff_sessions")+countRows(t, url, "bff_login_limits") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("expired rows still there after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLimiterKeysHashed: the table holds no e-mail or client address, only
// their SHA-256.
func TestLimiterKeysHashed(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	st := openStore(t, url, nil, bffpg.WithSweepInterval(-1))
	ctx := context.Background()
	if ok, _, err := st.Limiter().Allow(ctx, "email:ana@example.com", bff.Limit{Max: 1, Window: time.Minute}); !ok || err != nil {
		t.Fatalf("Allow = %v, %v", ok, err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored string
	if err := conn.QueryRow(ctx, `SELECT key FROM bff_login_limits`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("email:ana@example.com"))
	if stored != hex.EncodeToString(sum[:]) {
		t.Fatalf("stored key %q, want the hex SHA-256 of the BFF's key", stored)
	}
}

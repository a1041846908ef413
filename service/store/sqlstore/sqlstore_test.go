package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
	"paywallet/service/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openSQLite(t *testing.T) store.Store {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T) store.Store {
	s, err := sqlstore.OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLite(t *testing.T) { storetest.Run(t, openSQLite) }

func TestPostgres(t *testing.T) { storetest.Run(t, openPostgres) }

// probe writes and reads one setting, proving the store is usable.
func probe(t *testing.T, s store.Store, key string) []byte {
	t.Helper()
	var got []byte
	err := s.Tx(t.Context(), func(tx store.Tx) (err error) {
		got, err = tx.PutSettingIfAbsent(t.Context(), key, []byte(key))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestOpenDispatch(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		dsn  func(t *testing.T) string
		file string // SQLite file that must exist afterwards
	}{
		{"sqlite path in a new directory", func(*testing.T) string { return filepath.Join(dir, "a", "b", "x.db") }, filepath.Join(dir, "a", "b", "x.db")},
		{"sqlite path with URI characters", func(*testing.T) string { return filepath.Join(dir, "we?ird #1%.db") }, filepath.Join(dir, "we?ird #1%.db")},
		{"sqlite file: URI", func(*testing.T) string { return "file:" + filepath.Join(dir, "c", "y.db") + "?cache=private" }, filepath.Join(dir, "c", "y.db")},
		{"sqlite file:// URI", func(*testing.T) string { return "file://" + filepath.Join(dir, "d", "z.db") }, filepath.Join(dir, "d", "z.db")},
		{"sqlite in memory", func(*testing.T) string { return ":memory:" }, ""},
		{"postgres://", func(t *testing.T) string { return pgtest.Start(t).NewDatabase(t) }, ""},
		{"postgresql://", func(t *testing.T) string {
			u := pgtest.Start(t).NewDatabase(t)
			return "postgresql" + u[len("postgres"):]
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sqlstore.Open(t.Context(), c.dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			probe(t, s, "k")
			if c.file != "" {
				if _, err := os.Stat(c.file); err != nil {
					t.Errorf("database file: %v", err)
				}
				if _, err := os.Stat(c.file + "-wal"); err != nil {
					t.Errorf("no write-ahead log, journal_mode is not WAL: %v", err)
				}
			}
		})
	}
	t.Run("postgres URL is not taken for a file", func(t *testing.T) {
		// A server that is not there: the error must come from
		// PostgreSQL, and no file named like the URL may appear.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		wd, _ := os.Getwd()
		_, err := sqlstore.Open(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
		if err == nil {
			t.Fatal("Open of an unreachable server succeeded")
		}
		if _, statErr := os.Stat(filepath.Join(wd, "postgres:")); statErr == nil {
			t.Error("a file was created for a postgres URL")
		}
	})
}

// TestMigrationsIdempotent opens the same database twice, one after the
// other: the second open finds everything applied and the data intact.
func TestMigrationsIdempotent(t *testing.T) {
	cases := []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "m.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.Start(t).NewDatabase(t) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dsn := c.dsn(t)
			for i := range 3 {
				s, err := sqlstore.Open(t.Context(), dsn)
				if err != nil {
					t.Fatalf("open #%d: %v", i+1, err)
				}
				if got := probe(t, s, "first"); string(got) != "first" {
					t.Errorf("open #%d: setting %q", i+1, got)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestConcurrentOpenPostgres starts several instances at once on one fresh
// database: the advisory lock makes them apply migrations one at a time.
func TestConcurrentOpenPostgres(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*sqlstore.DB, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlstore.OpenPostgres(t.Context(), url) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("instance %d: %v", i, errs[i])
			continue
		}
		probe(t, stores[i], "shared")
		stores[i].Close()
	}
}

// TestConcurrentOpenSQLite is the same for several handles on one file.
func TestConcurrentOpenSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*sqlstore.DB, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlstore.OpenSQLite(t.Context(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("handle %d: %v", i, errs[i])
			continue
		}
		probe(t, stores[i], "shared")
		defer stores[i].Close()
	}
	// Writers on separate handles (as separate processes would be) wait
	// for each other instead of failing with SQLITE_BUSY.
	var wg2 sync.WaitGroup
	for i := range n {
		if stores[i] == nil {
			continue
		}
		wg2.Go(func() {
			for j := range 20 {
				err := stores[i].Tx(t.Context(), func(tx store.Tx) error {
					_, err := tx.GetSetting(t.Context(), "shared")
					if err != nil {
						return err
					}
					_, err = tx.PutSettingIfAbsent(t.Context(), string(rune('a'+i))+string(rune('a'+j)), []byte{1})
					return err
				})
				if err != nil {
					t.Errorf("handle %d write %d: %v", i, j, err)
					return
				}
			}
		})
	}
	wg2.Wait()
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dsn := range []string{
		"",
		filepath.Join(blocker, "sub", "x.db"), // parent "directory" is a file
		"file://remote.example/x.db",
	} {
		if s, err := sqlstore.Open(t.Context(), dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}

// TestClosedStore: a Tx on a closed store is an internal failure, neither
// ErrNotFound nor ErrConflict.
func TestClosedStore(t *testing.T) {
	s := openSQLite(t)
	s.Close()
	err := s.Tx(t.Context(), func(store.Tx) error { return nil })
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		t.Errorf("Tx on a closed store: %v", err)
	}
}

// TestPostgresRetry makes a transaction lose a race deterministically: it
// reads a challenge, another transaction consumes it and commits, and then
// the first tries to consume it too. PostgreSQL aborts the first with a
// serialization failure; Tx must run fn again, and the second run sees the
// challenge consumed. That must also happen when fn swallows the error.
func TestPostgresRetry(t *testing.T) {
	s := openPostgres(t).(*sqlstore.DB)
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		swallow bool
	}{
		{"error returned", false},
		{"error swallowed", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := &store.Challenge{
				ID: "Request:019aa5d2-7c10-7000-8000-00000000000" + string(rune('1'+i)), Operation: "op",
				TargetID: "x", AccountID: "InternalAccount:y", BodyHash: []byte{1}, Payload: "p",
				CreatedAt: now, ExpiresAt: now.Add(time.Minute),
			}
			if err := s.Tx(ctx, func(tx store.Tx) error { return tx.CreateChallenge(ctx, ch) }); err != nil {
				t.Fatal(err)
			}
			read := make(chan struct{})
			other := make(chan error)
			go func() {
				<-read
				other <- s.Tx(ctx, func(tx store.Tx) error {
					ok, err := tx.ConsumeChallenge(ctx, ch.ID, now)
					if err == nil && !ok {
						err = errors.New("the other transaction did not win")
					}
					return err
				})
			}()
			attempts := 0
			var won bool
			err := s.Tx(ctx, func(tx store.Tx) error {
				attempts++
				if _, err := tx.GetChallenge(ctx, ch.ID); err != nil {
					return err
				}
				if attempts == 1 {
					close(read)
					if err := <-other; err != nil {
						t.Errorf("other transaction: %v", err)
					}
				}
				var err error
				won, err = tx.ConsumeChallenge(ctx, ch.ID, now.Add(time.Second))
				if c.swallow {
					return nil
				}
				return err
			})
			if err != nil {
				t.Fatalf("Tx: %v", err)
			}
			if attempts != 2 || won {
				t.Errorf("fn ran %d times and won=%v; want 2 runs, the last one losing", attempts, won)
			}
		})
	}
}

// TestTxForAcrossPools: TxFor's turn holds across processes (two pools on
// one PostgreSQL database stand for two instances): calls on one key never
// overlap, a caller that gives up waiting leaves no lock behind, and the
// pool gets every connection back.
func TestTxForAcrossPools(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	var pools [2]*sqlstore.DB
	for i := range pools {
		db, err := sqlstore.OpenPostgres(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		pools[i] = db
	}
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			err := pools[i%2].TxFor(t.Context(), "Wallet:hot", func(tx store.Tx) error {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				_, err := tx.GetSetting(t.Context(), "absent")
				time.Sleep(2 * time.Millisecond)
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if overlaps.Load() > 0 {
		t.Fatalf("%d TxFor calls on one key overlapped across pools", overlaps.Load())
	}

	// One instance holds the key; the other gives up waiting.
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- pools[0].TxFor(t.Context(), "Wallet:held", func(store.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err := pools[1].TxFor(ctx, "Wallet:held", func(store.Tx) error { return errors.New("ran while held") })
	cancel()
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("TxFor while another instance holds the key = %v", err)
	}
	// Another key is free meanwhile.
	if err := pools[1].TxFor(t.Context(), "Wallet:other", func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, p := range pools {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		err := p.TxFor(ctx, "Wallet:held", func(store.Tx) error { return nil })
		cancel()
		if err != nil {
			t.Fatalf("pool %d after the holder finished: %v", i, err)
		}
	}
}

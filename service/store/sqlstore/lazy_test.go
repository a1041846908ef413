package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// TestTxLazy: a lazy transaction commits or rolls back as Tx does, runs
// alongside ordinary transactions (and the statement cache, which
// prepares on the one SQLite connection) without a deadlock, and leaves
// the SQLite connection syncing every commit again.
func TestTxLazy(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *DB
	}{
		{"sqlite", func(t *testing.T) *DB {
			db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "lazy.db"))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
		{"postgres", func(t *testing.T) *DB {
			db, err := OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			defer db.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			put := func(key string) func(store.Tx) error {
				return func(tx store.Tx) error {
					_, err := tx.PutSettingIfAbsent(ctx, key, []byte(key))
					return err
				}
			}
			if err := db.TxLazy(ctx, put("kept")); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("boom")
			err := db.TxLazy(ctx, func(tx store.Tx) error {
				if err := put("dropped")(tx); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("TxLazy returned %v, want fn's error", err)
			}
			err = db.Tx(ctx, func(tx store.Tx) error {
				if _, err := tx.GetSetting(ctx, "kept"); err != nil {
					return err
				}
				if _, err := tx.GetSetting(ctx, "dropped"); !errors.Is(err, store.ErrNotFound) {
					return errors.Join(errors.New("a rolled-back lazy write is there"), err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := range 20 {
				wg.Go(func() {
					key := string(rune('a' + i))
					errs <- db.TxLazy(ctx, put("lazy-"+key))
				})
				wg.Go(func() {
					key := string(rune('a' + i))
					errs <- db.Tx(ctx, put("sync-"+key))
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if db.d == sqliteDialect {
				var mode int
				if err := db.db.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode); err != nil {
					t.Fatal(err)
				}
				if mode != 2 {
					t.Fatalf("synchronous is %d after lazy transactions, want 2 (FULL)", mode)
				}
			}
		})
	}
}

// TestTxLazyIsolationPostgres: on PostgreSQL a lazy transaction runs READ
// COMMITTED with synchronous_commit off, and an ordinary one SERIALIZABLE
// (the test cluster itself runs with synchronous_commit off, so an
// ordinary transaction's setting proves nothing here).
func TestTxLazyIsolationPostgres(t *testing.T) {
	db, err := OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	show := func(st store.Tx) (iso, sync string, err error) {
		err = st.(*tx).queryRow(ctx, `SELECT current_setting('transaction_isolation'), current_setting('synchronous_commit')`).Scan(&iso, &sync)
		return iso, sync, err
	}
	var iso, sc string
	if err := db.TxLazy(ctx, func(tx store.Tx) (err error) { iso, sc, err = show(tx); return err }); err != nil {
		t.Fatal(err)
	}
	if iso != "read committed" || sc != "off" {
		t.Errorf("lazy transaction: isolation %q, synchronous_commit %q; want read committed, off", iso, sc)
	}
	if err := db.Tx(ctx, func(tx store.Tx) (err error) { iso, sc, err = show(tx); return err }); err != nil {
		t.Fatal(err)
	}
	if iso != "serializable" {
		t.Errorf("ordinary transaction: isolation %q, want serializable", iso)
	}
}

// TestTxLazyCanceledKeepsSyncing: a lazy transaction whose context ends
// while it sets its pragma never leaves the SQLite connection skipping
// syncs. The driver reports the context's end for a statement that saw
// it end while running, even when the statement took effect: the
// connection went back to the pool with synchronous=NORMAL and served
// every later ordinary commit without an fsync. endsAfter makes the
// context end at its k-th look, for every k up to the transaction's end.
func TestTxLazyCanceledKeepsSyncing(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "cancel.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for k := int32(1); k <= 40; k++ {
		ctx := &endsAfter{Context: t.Context(), looks: k, open: make(chan struct{}), closed: make(chan struct{})}
		close(ctx.closed)
		_ = db.TxLazy(ctx, func(tx store.Tx) error {
			_, err := tx.PutSettingIfAbsent(ctx, fmt.Sprintf("k%d", k), []byte("v"))
			return err
		})
		var mode int
		if err := db.db.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 {
			t.Fatalf("after a lazy transaction whose context ended at its look %d: synchronous is %d, want 2 (FULL)", k, mode)
		}
	}
}

// endsAfter is a context that ends at the looks-th call of Done.
type endsAfter struct {
	context.Context
	looks        int32
	seen         atomic.Int32
	open, closed chan struct{}
}

func (c *endsAfter) Done() <-chan struct{} {
	if c.seen.Add(1) >= c.looks {
		return c.closed
	}
	return c.open
}

func (c *endsAfter) Err() error {
	if c.seen.Load() >= c.looks {
		return context.Canceled
	}
	return nil
}

package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// bothStores opens a fresh database of each kind.
var bothStores = []struct {
	name string
	open func(t *testing.T) (*DB, error)
}{
	{"sqlite", func(t *testing.T) (*DB, error) {
		return OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "webhooks.db"))
	}},
	{"postgres", func(t *testing.T) (*DB, error) {
		return OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	}},
}

// eventTime is when the tests' events are recorded.
var eventTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testEvent(id, resource string) store.NewEvent {
	return store.NewEvent{ID: id, Type: "OUTGOING_PAYMENT.PENDING", ResourceID: resource, Body: []byte(`{"id":"` + id + `"}`),
		CreatedAt: eventTime}
}

// openTest opens a database with open, closed at the test's end.
func openTest(t *testing.T, open func(*testing.T) (*DB, error)) *DB {
	t.Helper()
	db, err := open(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openPG(t *testing.T) *DB { return openTest(t, bothStores[1].open) }

// logRows reads event_log's (pos, part) pairs, oldest first (part 0 on
// SQLite).
func logRows(t *testing.T, db *DB) [][2]int64 {
	t.Helper()
	q := `SELECT pos, part FROM event_log ORDER BY pos, part`
	if db.d == sqliteDialect {
		q = `SELECT pos, 0 FROM event_log ORDER BY pos`
	}
	return queryAll(t, db, q, func(s scanner) ([2]int64, error) {
		var r [2]int64
		return r, s.Scan(&r[0], &r[1])
	})
}

// queryAll runs q (with ? placeholders) on db outside any transaction and
// collects its rows with scan, failing t on an error.
func queryAll[T any](t *testing.T, db *DB, q string, scan func(scanner) (T, error), args ...any) []T {
	t.Helper()
	rows, err := db.db.QueryContext(t.Context(), db.d.rebind(q), args...)
	if err != nil {
		t.Fatal(err)
	}
	items, err := collect(rows, scan)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// catalogAll catalogs until the head is at least head (see storetest's
// catalogThrough for why it may take more than one call).
func catalogAll(t *testing.T, db *DB, head int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var h int64
		err := db.TxLazy(t.Context(), func(x store.Tx) error {
			if _, err := x.CatalogEvents(t.Context(), 100); err != nil {
				return err
			}
			var err error
			h, err = x.EventsHead(t.Context())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if h >= head {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("head %d after two minutes, want %d", h, head)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEventLogRows: each RecordEvents call is one row of event_log, in its
// own transaction or beside others in one (parts 0, 1, … on PostgreSQL); a
// rolled-back transaction leaves none; the catalog deletes the rows it
// moved.
func TestEventLogRows(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTest(t, tc.open)
			record := func(fail bool, batches ...[]store.NewEvent) {
				t.Helper()
				boom := errors.New("boom")
				err := db.Tx(ctx, func(x store.Tx) error {
					for _, b := range batches {
						if err := x.RecordEvents(ctx, b); err != nil {
							return err
						}
					}
					if fail {
						return boom
					}
					return nil
				})
				if fail != errors.Is(err, boom) || (!fail && err != nil) {
					t.Fatal(err)
				}
			}
			r := "Transaction:r"
			record(false, []store.NewEvent{testEvent("Webhook:1", r), testEvent("Webhook:2", r)})
			record(false, []store.NewEvent{testEvent("Webhook:3", r)})
			record(true, []store.NewEvent{testEvent("Webhook:x", r)})
			// Two calls with no statement between: one row.
			record(false, []store.NewEvent{testEvent("Webhook:4", r)}, nil, []store.NewEvent{testEvent("Webhook:5", r)})
			// A statement between: on PostgreSQL it carried the first
			// row, so the second call starts another (part 1).
			err := db.Tx(ctx, func(x store.Tx) error {
				if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:6", r)}); err != nil {
					return err
				}
				if _, err := x.GetSetting(ctx, "no such setting"); !errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("a read between: %v", err)
				}
				return x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:7", r)})
			})
			if err != nil {
				t.Fatal(err)
			}
			rows := logRows(t, db)
			want := 4
			if db.d == postgresDialect {
				want = 5
			}
			if len(rows) != want {
				t.Fatalf("log rows %v, want %d", rows, want)
			}
			if db.d == postgresDialect {
				// pos is the transaction's id: four transactions, the
				// last one with parts 0 and 1.
				if rows[0][0] >= rows[1][0] || rows[1][0] >= rows[2][0] || rows[2][0] >= rows[3][0] || rows[3][0] != rows[4][0] ||
					rows[0][1] != 0 || rows[1][1] != 0 || rows[2][1] != 0 || rows[3][1] != 0 || rows[4][1] != 1 {
					t.Fatalf("log rows %v", rows)
				}
			}
			catalogAll(t, db, 7)
			if rows := logRows(t, db); len(rows) != 0 {
				t.Fatalf("moved rows left in the log: %v", rows)
			}
		})
	}
}

// TestEventsSchema: delivery never writes an event's row, and the schema
// says so: events has only the catalog's columns, and the log only its
// own (no index beside the primary key on the hot path's table).
func TestEventsSchema(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openTest(t, tc.open)
			columns := func(table string) []string {
				q := `SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY column_name`
				if db.d == sqliteDialect {
					q = `SELECT name FROM pragma_table_info(?) ORDER BY name`
				}
				return queryAll(t, db, q, func(s scanner) (string, error) {
					var c string
					return c, s.Scan(&c)
				}, table)
			}
			if got, want := columns("events"), []string{"body", "created_at", "id", "resource_id", "seq", "sequence", "type"}; !slices.Equal(got, want) {
				t.Errorf("events has columns %v, want %v", got, want)
			}
			want := []string{"created_at", "events", "part", "pos"}
			if db.d == sqliteDialect {
				want = []string{"created_at", "events", "pos"}
			}
			if got := columns("event_log"); !slices.Equal(got, want) {
				t.Errorf("event_log has columns %v, want %v", got, want)
			}
			for _, old := range []string{"webhook_events"} {
				if got := columns(old); len(got) != 0 {
					t.Errorf("%s is still there: %v", old, got)
				}
			}
			if db.d != sqliteDialect {
				// A payment's log row (about 3 kB) stays inline, not
				// compressed and TOASTed on the API's hot path (0021).
				var opts string
				if err := db.db.QueryRowContext(t.Context(), `SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class
					WHERE relname = 'event_log' AND relnamespace = to_regnamespace(current_schema())`).Scan(&opts); err != nil {
					t.Fatal(err)
				}
				if opts != "toast_tuple_target=8160" {
					t.Errorf("event_log has options %q, want toast_tuple_target=8160", opts)
				}
			}
		})
	}
}

func TestWithPending(t *testing.T) {
	x := &tx{d: postgresDialect, pending: []logRow{{part: 0, createdAt: eventTime}}}
	const cte = "logged_events AS (INSERT INTO event_log (part, created_at, events) VALUES (?, ?, ?))"
	cases := []struct {
		in, want string
	}{
		{"SELECT 1", "WITH " + cte + " SELECT 1"},
		{"\n\t  insert INTO t VALUES (?)", "WITH " + cte + " insert INTO t VALUES (?)"},
		{"UPDATE t SET a = ?", "WITH " + cte + " UPDATE t SET a = ?"},
		{"DELETE FROM t", "WITH " + cte + " DELETE FROM t"},
		{"WITH a AS (SELECT 1) SELECT * FROM a", "WITH " + cte + ", a AS (SELECT 1) SELECT * FROM a"},
		{"with\nrecursive a(n) AS (SELECT 1) SELECT * FROM a", "WITH RECURSIVE " + cte + ", a(n) AS (SELECT 1) SELECT * FROM a"},
		{"WITH recursive_thing AS (SELECT 1) SELECT 1", "WITH " + cte + ", recursive_thing AS (SELECT 1) SELECT 1"},
		{"SET LOCAL synchronous_commit = off", ""},
		{"(SELECT 1) UNION (SELECT 2)", ""},
		{"SELECTED", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, args, ok := x.withPending(c.in, []any{"own"})
		if c.want == "" {
			if ok || got != c.in || len(args) != 1 {
				t.Errorf("%q: carried the row: %q %v", c.in, got, args)
			}
			continue
		}
		if !ok || got != c.want || len(args) != 4 || args[3] != "own" || args[0] != 0 {
			t.Errorf("%q:\n got %q %v\nwant %q, the row's 3 arguments first", c.in, got, args, c.want)
		}
	}
	x.pending = nil
	if got, _, ok := x.withPending("SELECT 1", nil); ok || got != "SELECT 1" {
		t.Errorf("nothing pending, yet %q", got)
	}
}

// tracer records the SQL texts a store's transactions send.
type tracer struct {
	mu sync.Mutex
	qs []string
}

func (tr *tracer) trace(q string) {
	tr.mu.Lock()
	tr.qs = append(tr.qs, q)
	tr.mu.Unlock()
}

func (tr *tracer) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	qs := tr.qs
	tr.qs = nil
	return qs
}

// logInserts counts the statements that write the log: carried (WITH
// logged_events) and alone.
func logInserts(qs []string) (carried, alone int) {
	for _, q := range qs {
		switch {
		case strings.HasPrefix(q, "WITH logged_events AS (INSERT INTO event_log") ||
			strings.HasPrefix(q, "WITH RECURSIVE logged_events AS (INSERT INTO event_log"):
			carried++
		case strings.HasPrefix(q, "INSERT INTO event_log"):
			alone++
		}
	}
	return carried, alone
}

// TestEventLogRidesOnNextStatement (PostgreSQL): the log row goes with the
// transaction's next statement and costs no statement of its own; the
// statement's result is its own; a transaction that sends none after
// RecordEvents writes the row alone before COMMIT; a statement that
// failed before it reached the server leaves the row for the next one.
func TestEventLogRidesOnNextStatement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openPG(t)
	tr := &tracer{}
	db.trace = tr.trace
	run := func(fn func(x *tx) error) []string {
		t.Helper()
		tr.take()
		if err := db.Tx(ctx, func(s store.Tx) error { return fn(s.(*tx)) }); err != nil {
			t.Fatal(err)
		}
		return tr.take()
	}
	r := "Transaction:r"
	// A statement after RecordEvents: one statement in all, its result
	// intact (PutSettingIfAbsent's INSERT, then its SELECT).
	qs := run(func(x *tx) error {
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:1", r)}); err != nil {
			return err
		}
		v, err := x.PutSettingIfAbsent(ctx, "k", []byte("v"))
		if err == nil && string(v) != "v" {
			t.Errorf("setting %q", v)
		}
		return err
	})
	if c, a := logInserts(qs); c != 1 || a != 0 || len(qs) != 2 {
		t.Errorf("statements %q: carried %d, alone %d; want the first one carrying the row and no other", qs, c, a)
	}
	// RowsAffected is the statement's: insert reports a taken key.
	qs = run(func(x *tx) error {
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:2", r)}); err != nil {
			return err
		}
		err := x.insert(ctx, "setting", `INSERT INTO settings (key, value) VALUES (?, ?)`, "k", []byte("w"))
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("insert of a taken key with the row: %v, want ErrConflict", err)
		}
		// A statement that starts with WITH, and one more (no row now).
		var n int
		if err := x.queryRow(ctx, `WITH a AS (SELECT 41 AS n) SELECT n + 1 FROM a`).Scan(&n); err != nil || n != 42 {
			t.Errorf("WITH statement: %d %v", n, err)
		}
		return nil
	})
	if c, a := logInserts(qs); c != 1 || a != 0 || len(qs) != 2 {
		t.Errorf("statements %q: carried %d, alone %d", qs, c, a)
	}
	// Two calls, then a statement that starts with WITH: both rows in it.
	qs = run(func(x *tx) error {
		for _, id := range []string{"Webhook:3", "Webhook:4"} {
			if err := x.RecordEvents(ctx, []store.NewEvent{testEvent(id, r)}); err != nil {
				return err
			}
		}
		var n int
		return x.queryRow(ctx, `WITH a AS (SELECT 1 AS n) SELECT n FROM a`).Scan(&n)
	})
	if c, a := logInserts(qs); c != 1 || a != 0 || len(qs) != 1 {
		t.Errorf("statements %q: carried %d, alone %d", qs, c, a)
	}
	// Nothing after RecordEvents: alone, before COMMIT.
	qs = run(func(x *tx) error { return x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:5", r)}) })
	if c, a := logInserts(qs); c != 0 || a != 1 || len(qs) != 1 {
		t.Errorf("statements %q: carried %d, alone %d", qs, c, a)
	}
	// A statement the driver refused to send (an argument it cannot
	// encode) keeps the row pending: it goes with the next one.
	qs = run(func(x *tx) error {
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:6", r)}); err != nil {
			return err
		}
		if _, err := x.exec(ctx, `UPDATE settings SET value = ? WHERE key = ?`, make(chan int), "k"); err == nil {
			t.Error("a channel argument was sent")
		}
		if len(x.pending) != 1 {
			t.Errorf("pending after a statement that was not sent: %d rows", len(x.pending))
		}
		return nil
	})
	if c, a := logInserts(qs); c+a != 2 || a != 1 {
		t.Errorf("statements %q: carried %d, alone %d; want the refused one and the row alone", qs, c, a)
	}
	catalogAll(t, db, 6)
	if rows := logRows(t, db); len(rows) != 0 {
		t.Fatalf("log rows left %v", rows)
	}
	var n int
	if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("%d events (%v), want 6", n, err)
	}
}

// TestEventLogFailedStatement (PostgreSQL): a statement that carries the
// row and fails reports its own error, classified as without the row
// (unique violation, serialization failure), and the row is not written:
// the failed transaction rolls back, and one that lost a race and ran
// again writes its row once.
func TestEventLogFailedStatement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openPG(t)
	if _, err := db.db.ExecContext(ctx, `CREATE FUNCTION fail_serialization() RETURNS int LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = 'serialization_failure'; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('k', 'v')`); err != nil {
		t.Fatal(err)
	}
	r := "Transaction:r"
	var kind errKind
	err := db.Tx(ctx, func(s store.Tx) error {
		x := s.(*tx)
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:dup", r)}); err != nil {
			return err
		}
		_, err := x.exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)`, "k", []byte("w"))
		kind = x.d.classify(err)
		return x.fail("insert", err)
	})
	if !errors.Is(err, store.ErrConflict) || kind != errUnique {
		t.Fatalf("a unique violation with the row: %v (kind %d)", err, kind)
	}
	attempts := 0
	err = db.Tx(ctx, func(s store.Tx) error {
		x := s.(*tx)
		attempts++
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:retried", r)}); err != nil {
			return err
		}
		if attempts == 1 {
			var n int
			err := x.queryRow(ctx, `SELECT fail_serialization()`).Scan(&n)
			if x.d.classify(err) != errRetry {
				t.Errorf("first attempt: %v, want a serialization failure", err)
			}
			return x.fail("fail", err)
		}
		_, err := x.PutSettingIfAbsent(ctx, "k2", []byte("v"))
		return err
	})
	if err != nil || attempts != 2 {
		t.Fatalf("%v after %d attempts", err, attempts)
	}
	if rows := logRows(t, db); len(rows) != 1 {
		t.Fatalf("log rows %v, want the second attempt's only", rows)
	}
	catalogAll(t, db, 1)
	ids := queryAll(t, db, `SELECT id FROM events ORDER BY seq`, func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	})
	if !slices.Equal(ids, []string{"Webhook:retried"}) {
		t.Fatalf("events %v", ids)
	}
}

// TestCatalogHorizon (PostgreSQL): a transaction that started writing
// before another but commits after it holds the other's events back: none
// is catalogued while it runs, and then both are, the earlier writer's
// first (pos is the order transactions got their ids in).
func TestCatalogHorizon(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openPG(t)
	written, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Tx(ctx, func(s store.Tx) error {
			if err := s.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:early", "Transaction:a")}); err != nil {
				return err
			}
			if _, err := s.PutSettingIfAbsent(ctx, "early", []byte("x")); err != nil {
				return err
			}
			close(written)
			<-release
			return nil
		})
	}()
	<-written
	if err := db.Tx(ctx, func(s store.Tx) error {
		return s.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:late", "Transaction:a")})
	}); err != nil {
		t.Fatal(err)
	}
	if rows := logRows(t, db); len(rows) != 1 {
		t.Fatalf("committed log rows %v, want the later transaction's", rows)
	}
	for range 3 {
		var n int
		if err := db.TxLazy(ctx, func(x store.Tx) (err error) { n, err = x.CatalogEvents(ctx, 100); return err }); err != nil || n != 0 {
			t.Fatalf("catalogued %d (%v) while an older transaction runs", n, err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	catalogAll(t, db, 2)
	for _, want := range []struct {
		id        string
		seq, seq2 int64
	}{{"Webhook:early", 1, 1}, {"Webhook:late", 2, 2}} {
		var e *store.Event
		if err := db.Tx(ctx, func(x store.Tx) (err error) { e, err = x.GetEvent(ctx, want.id); return err }); err != nil {
			t.Fatal(err)
		}
		if e.Seq != want.seq || e.Sequence != want.seq2 {
			t.Errorf("%s: seq %d sequence %d, want %d %d", want.id, e.Seq, e.Sequence, want.seq, want.seq2)
		}
	}
}

// TestCatalogTurns (PostgreSQL): while one transaction catalogs, another
// one's CatalogEvents moves nothing and does not wait.
func TestCatalogTurns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openPG(t)
	if err := db.Tx(ctx, func(s store.Tx) error {
		return s.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:1", "Transaction:a")})
	}); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.TxLazy(ctx, func(x store.Tx) error {
			if _, err := x.CatalogEvents(ctx, 100); err != nil {
				return err
			}
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var n int
	if err := db.TxLazy(wctx, func(x store.Tx) (err error) { n, err = x.CatalogEvents(wctx, 100); return err }); err != nil || n != 0 {
		t.Errorf("a second cataloguer: %d, %v", n, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestEventPipelineMigration: a database of version 16 with events in the
// outbox, opened by this version, has them in the catalog in the order of
// their ids, with their sequences and bodies; each resource's count and
// the head go on from there, and the outbox is gone.
// oldEvent is a row of the outbox of before 0017; the events …0002 and
// …0004 were still PENDING.
type oldEvent struct {
	id, resource string
	sequence     int64
	body         string
}

func (e oldEvent) status() string {
	if strings.HasSuffix(e.id, "2") || strings.HasSuffix(e.id, "4") {
		return "PENDING"
	}
	return "DELIVERED"
}

func TestEventPipelineMigration(t *testing.T) {
	for _, tc := range olderDatabases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			raw, d, open := tc.make(t)
			migrateBefore(t, raw, d, 17)
			old := []oldEvent{
				{"Webhook:019aa5d2-7c10-7000-8000-000000000003", "Transaction:b", 1, `{"n":3}`},
				{"Webhook:019aa5d2-7c10-7000-8000-000000000001", "Transaction:a", 1, `{"n":1}`},
				{"Webhook:019aa5d2-7c10-7000-8000-000000000002", "Transaction:a", 2, `{"n":2}`},
				{"Webhook:019aa5d2-7c10-7000-8000-000000000004", "Transaction:a", 3, `{"n":4}`},
			}
			for i, e := range old {
				created := eventTime.Add(time.Duration(i) * time.Second)
				if _, err := raw.ExecContext(ctx, d.rebind(`INSERT INTO webhook_events (id, type, resource_id, sequence, body, status,
					attempts, next_attempt_at, give_up_at, created_at, updated_at) VALUES (?, 'A.B', ?, ?, ?, ?, 1, ?, ?, ?, ?)`),
					e.id, e.resource, e.sequence, []byte(e.body), e.status(), d.timeArg(created), d.timeArg(created), d.timeArg(created),
					d.timeArg(created)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := raw.ExecContext(ctx, d.rebind(`INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url,
				response_status, error, duration_us) VALUES (?, 1, ?, 'https://x.example.com', 200, '', 5)`),
				old[0].id, d.timeArg(eventTime)); err != nil {
				t.Fatal(err)
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var all []store.Event
			err = db.Tx(ctx, func(x store.Tx) error {
				all, err = store.AllPages(func(c string) (store.Page[store.Event], error) {
					return x.ListEvents(ctx, store.EventFilter{Cursor: c})
				})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Reverse(all)
			// The oldest of the two still PENDING (…0002, …0004) is seq
			// 2: the default endpoint starts after seq 1.
			err = db.Tx(ctx, func(x store.Tx) error {
				v, err := x.GetSetting(ctx, "webhook_upgrade_cursor")
				if err == nil && string(v) != "1" {
					err = fmt.Errorf("upgrade cursor %q, want 1", v)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			wantOrder := []int{1, 2, 0, 3} // by id
			if len(all) != len(old) {
				t.Fatalf("%d events, want %d", len(all), len(old))
			}
			for i, k := range wantOrder {
				e, o := all[i], old[k]
				if e.Seq != int64(i+1) || e.ID != o.id || e.ResourceID != o.resource || e.Sequence != o.sequence ||
					string(e.Body) != o.body || e.Type != "A.B" || !e.CreatedAt.Equal(eventTime.Add(time.Duration(k)*time.Second)) {
					t.Errorf("event %d: %+v, want %+v at seq %d", i, e, o, i+1)
				}
			}
			// Recorded after the migration: a's fourth, b's second.
			if err := db.Tx(ctx, func(x store.Tx) error {
				return x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:new-a", "Transaction:a"), testEvent("Webhook:new-b", "Transaction:b")})
			}); err != nil {
				t.Fatal(err)
			}
			catalogAll(t, db, 6)
			for _, w := range []struct {
				id            string
				seq, sequence int64
			}{{"Webhook:new-a", 5, 4}, {"Webhook:new-b", 6, 2}} {
				var e *store.Event
				if err := db.Tx(ctx, func(x store.Tx) (err error) { e, err = x.GetEvent(ctx, w.id); return err }); err != nil {
					t.Fatal(err)
				}
				if e.Seq != w.seq || e.Sequence != w.sequence {
					t.Errorf("%s: seq %d sequence %d, want %d %d", w.id, e.Seq, e.Sequence, w.seq, w.sequence)
				}
			}
			var n int
			if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM webhook_attempts`).Scan(&n); err != nil || n != 0 {
				t.Errorf("attempts after the migration: %d (%v)", n, err)
			}
		})
	}
}

// TestEventLogNotInASavepoint (PostgreSQL): a pending log row is written
// before a SAVEPOINT, so that rolling back to the savepoint (a ledger post
// refused) cannot take the row with it while the transaction commits.
// Before, the first statement inside the savepoint carried it.
func TestEventLogNotInASavepoint(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openPG(t)
	err := db.Tx(ctx, func(s store.Tx) error {
		x := s.(*tx)
		if err := x.RecordEvents(ctx, []store.NewEvent{testEvent("Webhook:sp", "Transaction:sp")}); err != nil {
			return err
		}
		if _, err := x.exec(ctx, `SAVEPOINT ledger_post`); err != nil {
			return err
		}
		if _, err := x.PutSettingIfAbsent(ctx, "inside", []byte("v")); err != nil {
			return err
		}
		_, err := x.exec(ctx, `ROLLBACK TO SAVEPOINT ledger_post`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows := logRows(t, db); len(rows) != 1 {
		t.Fatalf("log rows %v after a savepoint rolled back, want the row recorded before it", rows)
	}
}

// TestCatalogEventsRefusesOldSnapshots: on PostgreSQL a REPEATABLE READ or
// SERIALIZABLE transaction's snapshot is older than the cataloguing turn
// it takes, and could miss the head the last cataloguer committed (a
// bench that catalogued in Store.Tx once numbered an event with a seq
// already given, "duplicate key … events_pkey"): CatalogEvents refuses to
// run in one.
func TestCatalogEventsRefusesOldSnapshots(t *testing.T) {
	db := openPG(t)
	err := db.Tx(t.Context(), func(tx store.Tx) error {
		_, err := tx.CatalogEvents(t.Context(), 10)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "lazy") {
		t.Fatalf("CatalogEvents in a serializable transaction: %v, want a refusal naming Store.TxLazy", err)
	}
	if err := db.TxLazy(t.Context(), func(tx store.Tx) error {
		_, err := tx.CatalogEvents(t.Context(), 10)
		return err
	}); err != nil {
		t.Fatalf("CatalogEvents in a lazy transaction: %v", err)
	}
}

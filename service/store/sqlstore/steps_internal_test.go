package sqlstore

import (
	"regexp"
	"strings"
	"testing"

	"paywallet/service/store/pgtest"
)

// TestExecuteUpdateStaysHOT: on PostgreSQL no index of transactions names
// a column that executing or settling a payment changes, and its pages
// keep room for the new row version, so AdvanceTransaction is a HOT
// update that adds no index entry. With one (transactions_due,
// transactions_customer_in_flight before 0022), concurrent executes
// failed each other's SERIALIZABLE transactions about once per payment
// (migration 0022 has the figures).
func TestExecuteUpdateStaysHOT(t *testing.T) {
	db := openPG(t)
	defs := queryAll(t, db, `SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid)
		FROM pg_index WHERE indrelid = to_regclass('transactions')`, func(s scanner) ([2]string, error) {
		var d [2]string
		return d, s.Scan(&d[0], &d[1])
	})
	if len(defs) == 0 {
		t.Fatal("no index on transactions found")
	}
	changed := regexp.MustCompile(`\b(status|failure_reason|next_step_at|settled_at|updated_at)\b`)
	for _, d := range defs {
		if c := changed.FindString(d[1]); c != "" {
			t.Errorf("index %s names %s, which AdvanceTransaction changes: %s", d[0], c, d[1])
		}
	}
	var opts string
	if err := db.db.QueryRowContext(t.Context(), `SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class
		WHERE oid = to_regclass('transactions')`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if opts != "fillfactor=80" {
		t.Errorf("transactions has options %q, want fillfactor=80", opts)
	}
}

// TestPostgresSessionsPreferIndexScans: the service's PostgreSQL sessions
// run with enable_seqscan and jit off (openPostgresPool says why), unless
// the URL sets them.
func TestPostgresSessionsPreferIndexScans(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	for _, tc := range []struct{ name, url, want string }{
		{"default", url, "off"},
		{"the URL sets it", url + sep(url) + "enable_seqscan=on", "on"},
		{"in options", url + sep(url) + "options=-c%20enable_seqscan%3Don", "on"},
		{"options naming another parameter", url + sep(url) + "options=-c%20jit_above_cost%3D1000", "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenPostgres(t.Context(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var got string
			if err := db.db.QueryRowContext(t.Context(), `SHOW enable_seqscan`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("enable_seqscan = %s, want %s", got, tc.want)
			}
			if err := db.db.QueryRowContext(t.Context(), `SHOW jit`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != "off" {
				t.Errorf("jit = %s, want off", got)
			}
			// SET on the open connection, not sent as a startup
			// parameter (which PgBouncer refuses).
			var source string
			if err := db.db.QueryRowContext(t.Context(), `SELECT source FROM pg_settings WHERE name = 'jit'`).Scan(&source); err != nil {
				t.Fatal(err)
			}
			if source != "session" {
				t.Errorf("jit comes from %q, want session", source)
			}
			// A primary-key look-up in a table of one page: an index
			// scan, where the planner left alone picks a sequential one.
			if _, err := db.db.ExecContext(t.Context(), `ANALYZE settings`); err != nil {
				t.Fatal(err)
			}
			var plan string
			if err := db.db.QueryRowContext(t.Context(), `EXPLAIN SELECT value FROM settings WHERE key = 'x'`).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			if seq := strings.Contains(plan, "Seq Scan"); seq != (tc.want == "on") {
				t.Errorf("plan %q", plan)
			}
		})
	}
}

func sep(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}

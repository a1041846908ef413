package sqlstore

import (
	"regexp"
	"testing"
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
	rows, err := db.db.QueryContext(t.Context(), `SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid)
		FROM pg_index WHERE indrelid = to_regclass('transactions')`)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := collect(rows, func(s scanner) ([2]string, error) {
		var d [2]string
		return d, s.Scan(&d[0], &d[1])
	})
	if err != nil {
		t.Fatal(err)
	}
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

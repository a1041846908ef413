package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"paywallet/service/seclog"
)

// VerifySecurityLog recomputes every customer's security chain
// (`paymentsd ledger verify`; service/seclog says what is checked): it
// reads security_events in one read-only snapshot, one ordered scan, and
// reports what it checked and the problems it found; the error is the
// first problem (a *seclog.Problem) or a failure to read. Like
// VerifyLedger, on SQLite it holds the store's connection while it reads.
//
// anchors (may be nil) are the heads of an earlier verification
// (seclog.Verifier.Anchors).
func (db *DB) VerifySecurityLog(ctx context.Context, anchors map[string]seclog.Head) (seclog.Report, error) {
	txOpts := &sql.TxOptions{ReadOnly: true}
	if db.d.name == "postgres" {
		txOpts.Isolation = sql.LevelRepeatableRead
	}
	sqlTx, err := db.db.BeginTx(ctx, txOpts)
	if err != nil {
		return seclog.Report{}, fmt.Errorf("store: verify security log: %w", err)
	}
	defer sqlTx.Rollback() //nolint:errcheck // read-only
	r := &reader{t: &tx{tx: sqlTx, d: db.d}, ctx: ctx}
	v := seclog.Verifier{Anchors: anchors}
	var row seclog.Row
	var details string
	r.scan(`SELECT id, customer_id, account_id, seq, type, details, created_at, prev_hash, hash FROM security_events
		ORDER BY customer_id, seq`, nil,
		[]any{&row.ID, &row.CustomerID, optStringCol{&row.AccountID}, &row.Seq, &row.Type, &details, timeCol{&row.CreatedAt},
			&row.PrevHash, &row.Hash},
		func() {
			row.Details = []byte(details)
			v.Add(&row)
		})
	if r.err != nil {
		return seclog.Report{}, fmt.Errorf("store: verify security log: %w", r.err)
	}
	report := v.Finish()
	return report, report.Err()
}

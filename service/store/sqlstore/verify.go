package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// VerifyOptions are the choices of a ledger verification.
type VerifyOptions struct {
	// Anchor, when set, is a chain link kept outside the database that
	// the chain must still have.
	Anchor *ledger.Anchor
	// Chunk is how many ledger transactions are read per query (0: 4096).
	Chunk int
}

// VerifyLedger checks the books (`paymentsd ledger verify`): it reads
// every row the verifier needs (package ledger, verify.go) and reports
// what it checked and the problems it found; the error is the first
// problem (a *ledger.Problem) or a failure to read.
//
// It reads in one read-only transaction, so that the rows agree with each
// other while the service keeps writing: on PostgreSQL REPEATABLE READ (one
// snapshot for every statement), on SQLite a deferred transaction, whose
// first read fixes the snapshot in WAL mode without taking the write lock.
// Each table is read in one ordered scan, except the journal: ledger
// transactions and entries are read in turns, a chunk of transactions by
// id and then the entries up to the chunk's last (entry ids sort like their
// transactions'), so the two merge without a look-up per row and without a
// second statement open at once, which pgx does not allow on one
// connection.
func (db *DB) VerifyLedger(ctx context.Context, opts VerifyOptions) (ledger.Report, error) {
	txOpts := &sql.TxOptions{ReadOnly: true}
	if db.d.name == "postgres" {
		txOpts.Isolation = sql.LevelRepeatableRead
	}
	sqlTx, err := db.db.BeginTx(ctx, txOpts)
	if err != nil {
		return ledger.Report{}, fmt.Errorf("store: verify ledger: %w", err)
	}
	defer sqlTx.Rollback() //nolint:errcheck // read-only
	t := &tx{tx: sqlTx, d: db.d}
	r := reader{t: t, ctx: ctx}
	opened := r.openedAt()
	v := ledger.NewVerifier(ledger.VerifyOptions{OpenedAt: opened, Anchor: opts.Anchor})
	r.payments(v)
	r.chain(v)
	r.queue(v)
	r.journal(v, opts.Chunk)
	r.wallets(v)
	if r.err != nil {
		return ledger.Report{}, fmt.Errorf("store: verify ledger: %w", r.err)
	}
	report := v.Finish()
	return report, report.Err()
}

// reader reads the tables, keeping the first error.
type reader struct {
	t   *tx
	ctx context.Context
	err error
}

// scan runs q and calls row for each row with the scan destinations it
// set up once.
func (r *reader) scan(q string, args []any, dest []any, row func()) {
	if r.err != nil {
		return
	}
	rows, err := r.t.query(r.ctx, q, args...)
	if err != nil {
		r.err = err
		return
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			r.err = err
			return
		}
		row()
	}
	r.err = rows.Err()
}

func (r *reader) openedAt() time.Time {
	var raw []byte
	err := r.t.queryRow(r.ctx, `SELECT value FROM settings WHERE key = ?`, store.LedgerOpenedSetting).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{} // the verifier names it
	}
	if err != nil {
		r.err = err
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, string(raw))
	if err != nil {
		r.err = fmt.Errorf("setting %s: %w", store.LedgerOpenedSetting, err)
	}
	return at
}

func (r *reader) payments(v *ledger.Verifier) {
	var p ledger.Payment
	dest := []any{&p.ID, optStringCol{&p.QuoteID}, &p.Type, &p.Status, &p.Outcome, optStringCol{&p.SourceAccountID},
		&p.DestinationAccountID, &p.SendingCurrency, &p.ReceivingCurrency, &p.SentAmount, &p.ReceivedAmount,
		&p.PaymentRail, &p.SenderUmaAddress, timeCol{&p.CreatedAt}}
	r.scan(`SELECT id, quote_id, type, status, outcome, source_account_id, destination_account_id, sending_currency,
		receiving_currency, sent_amount, received_amount, payment_rail, sender_uma_address, created_at FROM transactions`,
		nil, dest, func() { v.Payment(p) })
}

func (r *reader) chain(v *ledger.Verifier) {
	var seq int64
	var id string
	var link []byte
	var at time.Time
	r.scan(`SELECT seq, ledger_transaction_id, link, sealed_at FROM ledger_chain ORDER BY seq`, nil,
		[]any{&seq, &id, &link, timeCol{&at}}, func() {
			var h ledger.Hash
			copy(h[:], link)
			v.Link(seq, id, h, at)
		})
}

func (r *reader) queue(v *ledger.Verifier) {
	var id string
	r.scan(`SELECT ledger_transaction_id FROM ledger_unsealed`, nil, []any{&id}, func() { v.Queued(id) })
}

// journal reads the ledger transactions and their entries in turns (see
// VerifyLedger).
func (r *reader) journal(v *ledger.Verifier, chunk int) {
	if chunk <= 0 {
		chunk = 4096
	}
	var lt ledger.Transaction
	var kind string
	txDest := []any{&lt.ID, &kind, optStringCol{&lt.TransactionID}, optStringCol{&lt.QuoteID}, optStringCol{&lt.PendingID},
		&lt.Description, timeCol{&lt.CreatedAt}}
	var e ledger.EntryRow
	var account string
	entryDest := []any{&e.ID, &e.LedgerTransactionID, &e.N, &account, &e.Currency, &e.Amount, optStringCol{&e.WalletID},
		&e.AvailableAfter, &e.HeldAfter, timeCol{&e.CreatedAt}}
	entry := func() {
		e.Account = ledger.Account(account)
		v.Entry(&e)
	}
	const entryCols = `SELECT id, ledger_transaction_id, n, account_id, currency, amount, wallet_id, available_after,
		held_after, created_at FROM ledger_entries `
	lastTx, lastEntry := "", ""
	for r.err == nil {
		n := 0
		r.scan(`SELECT id, kind, transaction_id, quote_id, pending_id, description, created_at FROM ledger_transactions
			WHERE id > ? ORDER BY id LIMIT ?`, []any{lastTx, chunk}, txDest, func() {
			lt.Kind = ledger.Kind(kind)
			v.Transaction(&lt)
			lastTx = lt.ID
			n++
		})
		tracked := func() { entry(); lastEntry = e.ID }
		if n < chunk {
			// The last chunk: every entry left, whatever its id.
			r.scan(entryCols+`WHERE id > ? ORDER BY id`, []any{lastEntry}, entryDest, tracked)
			return
		}
		// Entry ids are "LedgerEntry:<uuid>-<n>", n one digit: the
		// chunk's entries end before its last transaction's uuid
		// followed by "-" and a character above the digits.
		bound := "LedgerEntry:" + lastTx[min(len("LedgerTransaction:"), len(lastTx)):] + "-~"
		r.scan(entryCols+`WHERE id > ? AND id <= ? ORDER BY id`, []any{lastEntry, bound}, entryDest, tracked)
	}
}

func (r *reader) wallets(v *ledger.Verifier) {
	var id, currency string
	var available, held int64
	r.scan(`SELECT id, currency, available, held FROM internal_accounts`, nil,
		[]any{&id, &currency, &available, &held}, func() { v.Wallet(id, currency, available, held) })
}

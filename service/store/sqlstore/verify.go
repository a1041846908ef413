package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
// connection. The verifier checks on a goroutine of its own, a batch of
// rows behind the reading.
//
// On SQLite it holds the store's one connection while it reads (about a
// second per 300 000 entries): run it from a process of its own, as
// `paymentsd ledger verify` does, not in one that serves. It reads the
// file memory-mapped meanwhile (every page is read once; mapped, that
// costs no system call each), and sets the connection back after.
func (db *DB) VerifyLedger(ctx context.Context, opts VerifyOptions) (ledger.Report, error) {
	txOpts := &sql.TxOptions{ReadOnly: true}
	if db.d.name == "postgres" {
		txOpts.Isolation = sql.LevelRepeatableRead
	}
	if db.d.name == "sqlite" {
		// Errors are of no consequence: without the map, the reads are
		// system calls, as usual.
		_, _ = db.db.ExecContext(ctx, `PRAGMA mmap_size = 1073741824`)
		defer db.db.ExecContext(context.WithoutCancel(ctx), `PRAGMA mmap_size = 0`) //nolint:errcheck // as above
	}
	sqlTx, err := db.db.BeginTx(ctx, txOpts)
	if err != nil {
		return ledger.Report{}, fmt.Errorf("store: verify ledger: %w", err)
	}
	defer sqlTx.Rollback() //nolint:errcheck // read-only
	if db.d.name == "postgres" {
		// It reads whole tables, outside SERIALIZABLE: the sequential
		// scans the service's sessions avoid (openPostgresPool) are the
		// right plan here.
		if _, err := sqlTx.ExecContext(ctx, `SET LOCAL enable_seqscan = on`); err != nil {
			return ledger.Report{}, fmt.Errorf("store: verify ledger: %w", err)
		}
	}
	r := &reader{t: &tx{tx: sqlTx, d: db.d}, ctx: ctx}
	vopts := ledger.VerifyOptions{Anchor: opts.Anchor}
	vopts.OpenedAt = r.openedAt()
	vopts.Payments = r.count(`SELECT count(*) FROM transactions`)
	vopts.Links = r.count(`SELECT COALESCE(max(seq), 0) FROM ledger_chain`)
	v := ledger.NewVerifier(vopts)
	r.checks = make(chan func(), 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for check := range r.checks {
			check()
		}
	}()
	r.payments(v)
	r.chain(v)
	r.queue(v)
	r.journal(v, opts.Chunk)
	r.wallets(v)
	close(r.checks)
	<-done
	if r.err != nil {
		return ledger.Report{}, fmt.Errorf("store: verify ledger: %w", r.err)
	}
	report := v.Finish()
	return report, report.Err()
}

// reader reads the tables, keeping the first error, and hands the rows to
// the verifier's goroutine in batches.
type reader struct {
	t      *tx
	ctx    context.Context
	err    error
	checks chan func()
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

func (r *reader) count(q string) int {
	var n int
	if r.err == nil {
		r.err = r.t.queryRow(r.ctx, q).Scan(&n)
	}
	return n
}

// batchRows is how many rows go to the verifier at once.
const batchRows = 1024

// batch gathers rows of one kind for the verifier's goroutine, which feeds
// them to it in order (feed must copy what it keeps: the batch's slice is
// used again) and gives the slice back.
type batch[T any] struct {
	r    *reader
	rows []T
	free chan []T
	feed func(*T)
}

func newBatch[T any](r *reader, feed func(*T)) *batch[T] {
	return &batch[T]{r: r, rows: make([]T, 0, batchRows), free: make(chan []T, 4), feed: feed}
}

func (b *batch[T]) add(row T) {
	b.rows = append(b.rows, row)
	if len(b.rows) == batchRows {
		b.flush()
	}
}

func (b *batch[T]) flush() {
	if len(b.rows) == 0 {
		return
	}
	rows, free, feed := b.rows, b.free, b.feed
	b.r.checks <- func() {
		for i := range rows {
			feed(&rows[i])
		}
		select {
		case free <- rows[:0]:
		default:
		}
	}
	select {
	case b.rows = <-b.free:
	default:
		b.rows = make([]T, 0, batchRows)
	}
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
	b := newBatch(r, func(p *ledger.Payment) { v.Payment(*p) })
	r.scan(`SELECT id, quote_id, type, status, outcome, source_account_id, destination_account_id, sending_currency,
		receiving_currency, sent_amount, received_amount, payment_rail, sender_uma_address, created_at FROM transactions
		ORDER BY id`, nil, dest, func() { b.add(p) })
	b.flush()
}

type chainRow struct {
	seq  int64
	id   string
	link ledger.Hash
	at   time.Time
}

func (r *reader) chain(v *ledger.Verifier) {
	var c chainRow
	var link sql.RawBytes
	b := newBatch(r, func(c *chainRow) { v.Link(c.seq, c.id, c.link, c.at) })
	r.scan(`SELECT seq, ledger_transaction_id, link, sealed_at FROM ledger_chain ORDER BY seq`, nil,
		[]any{&c.seq, &c.id, &link, timeCol{&c.at}}, func() {
			c.link = ledger.Hash{}
			copy(c.link[:], link)
			b.add(c)
		})
	b.flush()
}

func (r *reader) queue(v *ledger.Verifier) {
	var id string
	b := newBatch(r, func(id *string) { v.Queued(*id) })
	r.scan(`SELECT ledger_transaction_id FROM ledger_unsealed`, nil, []any{&id}, func() { b.add(id) })
	b.flush()
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
	// One batch for both kinds keeps their order: every transaction before
	// the entries read after it.
	type row struct {
		tx    *ledger.Transaction
		entry ledger.EntryRow
	}
	b := newBatch(r, func(x *row) {
		if x.tx != nil {
			v.Transaction(x.tx)
		} else {
			v.Entry(&x.entry)
		}
	})
	const entryCols = `SELECT id, ledger_transaction_id, n, account_id, currency, amount, wallet_id, available_after,
		held_after, created_at FROM ledger_entries `
	lastTx, lastEntry := "", ""
	entry := func() {
		e.Account = ledger.Account(account)
		b.add(row{entry: e})
		lastEntry = e.ID
	}
	for r.err == nil {
		n := 0
		r.scan(`SELECT id, kind, transaction_id, quote_id, pending_id, description, created_at FROM ledger_transactions
			WHERE id > ? ORDER BY id LIMIT ?`, []any{lastTx, chunk}, txDest, func() {
			lt.Kind = ledger.Kind(kind)
			h := lt
			b.add(row{tx: &h})
			lastTx = lt.ID
			n++
		})
		if n < chunk {
			// The last chunk: every entry left, whatever its id.
			r.scan(entryCols+`WHERE id > ? ORDER BY id`, []any{lastEntry}, entryDest, entry)
			break
		}
		// Entry ids are "LedgerEntry:<uuid>-<n>", n one digit: the
		// chunk's entries end before its last transaction's uuid
		// followed by "-" and a character above the digits.
		bound := "LedgerEntry:" + strings.TrimPrefix(lastTx, "LedgerTransaction:") + "-~"
		r.scan(entryCols+`WHERE id > ? AND id <= ? ORDER BY id`, []any{lastEntry, bound}, entryDest, entry)
	}
	b.flush()
}

type walletRow struct {
	id, currency    string
	available, held int64
}

func (r *reader) wallets(v *ledger.Verifier) {
	var w walletRow
	b := newBatch(r, func(w *walletRow) { v.Wallet(w.id, w.currency, w.available, w.held) })
	r.scan(`SELECT id, currency, available, held FROM internal_accounts`, nil,
		[]any{&w.id, &w.currency, &w.available, &w.held}, func() { b.add(w) })
	b.flush()
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"paywallet/service/store"
)

// ---- quotes

const quoteCols = `id, transaction_id, customer_id, source_account_id, destination_account_id, payment_rail,
	locked_side, locked_amount, sending_currency, receiving_currency, total_sending_amount, total_receiving_amount,
	fees_included, exchange_rate, rate_details, payload, description, created_at, expires_at, funding_reference`

func scanQuote(s scanner) (store.Quote, error) {
	var q store.Quote
	var payload []byte
	err := s.Scan(&q.ID, &q.TransactionID, &q.CustomerID, &q.SourceAccountID, &q.DestinationAccountID, &q.PaymentRail,
		&q.LockedSide, &q.LockedAmount, &q.SendingCurrency, &q.ReceivingCurrency, &q.TotalSendingAmount,
		&q.TotalReceivingAmount, &q.FeesIncluded, &q.ExchangeRate, bytesCol{&q.RateDetails}, bytesCol{&payload},
		&q.Description, timeCol{&q.CreatedAt}, timeCol{&q.ExpiresAt}, optStringCol{&q.FundingReference})
	q.Payload = string(payload)
	return q, err
}

func (t *tx) CreateQuote(ctx context.Context, q *store.Quote) error {
	return t.insert(ctx, fmt.Sprintf("create quote %q", q.ID),
		`INSERT INTO quotes (`+quoteCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		q.ID, q.TransactionID, q.CustomerID, q.SourceAccountID, q.DestinationAccountID, q.PaymentRail,
		q.LockedSide, q.LockedAmount, q.SendingCurrency, q.ReceivingCurrency, q.TotalSendingAmount,
		q.TotalReceivingAmount, q.FeesIncluded, q.ExchangeRate, blob(q.RateDetails), blob([]byte(q.Payload)),
		q.Description, t.d.timeArg(q.CreatedAt), t.d.timeArg(q.ExpiresAt), optString(q.FundingReference))
}

func (t *tx) QuoteByFundingReference(ctx context.Context, reference string) (*store.Quote, error) {
	q, err := scanQuote(t.queryRow(ctx, `SELECT `+quoteCols+` FROM quotes WHERE funding_reference = ?`, reference))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("quote with funding reference %q", reference), err)
	}
	return &q, nil
}

func (t *tx) GetQuote(ctx context.Context, id string) (*store.Quote, error) {
	q, err := scanQuote(t.queryRow(ctx, `SELECT `+quoteCols+` FROM quotes WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("quote %q", id), err)
	}
	return &q, nil
}

// ---- transactions

const transactionCols = `id, quote_id, type, status, customer_id, platform_customer_id, source_account_id,
	destination_account_id, sending_currency, receiving_currency, sent_amount, received_amount, fees,
	exchange_rate, rate_details, payment_rail, description, failure_reason, outcome, reference, counterparty,
	next_step_at, settled_at, receipt_confirmed_at, created_at, updated_at, sender_uma_address, receiver_uma_address`

func scanTransaction(s scanner) (store.Transaction, error) {
	var x store.Transaction
	err := s.Scan(&x.ID, optStringCol{&x.QuoteID}, &x.Type, &x.Status, &x.CustomerID, &x.PlatformCustomerID,
		optStringCol{&x.SourceAccountID}, &x.DestinationAccountID, &x.SendingCurrency, &x.ReceivingCurrency,
		&x.SentAmount, &x.ReceivedAmount, &x.Fees, &x.ExchangeRate, bytesCol{&x.RateDetails}, &x.PaymentRail,
		&x.Description, &x.FailureReason, &x.Outcome, &x.Reference, bytesCol{&x.Counterparty},
		timeCol{&x.NextStepAt}, timeCol{&x.SettledAt}, timeCol{&x.ReceiptConfirmedAt},
		timeCol{&x.CreatedAt}, timeCol{&x.UpdatedAt}, &x.SenderUmaAddress, &x.ReceiverUmaAddress)
	return x, err
}

func (t *tx) CreateTransaction(ctx context.Context, x *store.Transaction) error {
	what := fmt.Sprintf("create transaction %q", x.ID)
	q, args, err := t.withStep(ctx, what, x.ID, x.NextStepAt, `INSERT INTO transactions (`+transactionCols+`)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, optString(x.QuoteID), x.Type, x.Status, x.CustomerID, x.PlatformCustomerID, optString(x.SourceAccountID),
		x.DestinationAccountID, x.SendingCurrency, x.ReceivingCurrency, x.SentAmount, x.ReceivedAmount, x.Fees,
		x.ExchangeRate, optBlob(x.RateDetails), x.PaymentRail, x.Description, x.FailureReason, x.Outcome,
		x.Reference, optBlob(x.Counterparty), t.d.timeArg(x.NextStepAt), t.d.timeArg(x.SettledAt),
		t.d.timeArg(x.ReceiptConfirmedAt), t.d.timeArg(x.CreatedAt), t.d.timeArg(x.UpdatedAt),
		x.SenderUmaAddress, x.ReceiverUmaAddress)
	if err != nil {
		return err
	}
	return t.insert(ctx, what, q, args...)
}

// stepInsert schedules a transaction's next step (transaction_steps,
// migration 0022): its parameters are the time and the transaction's id.
const stepInsert = `INSERT INTO transaction_steps (due_at, transaction_id) VALUES (?, ?) ON CONFLICT DO NOTHING`

// withStep schedules the step due at due (none for the zero time) of the
// transaction id that q, a write of its row, gives it. On PostgreSQL the
// step's INSERT rides on q as a data-modifying WITH (no round trip of its
// own) and is returned with q; on SQLite it runs first, alone. Either way
// it may outlive q's effect (a compare-and-set that lost): a step that is
// not its transaction's next_step_at is stale, and DueTransactions passes
// over it and deletes it.
func (t *tx) withStep(ctx context.Context, what, id string, due time.Time, q string, args ...any) (string, []any, error) {
	if due.IsZero() {
		return q, args, nil
	}
	step := []any{t.d.timeArg(due), id}
	if t.d.modifyingWith {
		return "WITH scheduled_step AS (" + stepInsert + ") " + q, append(step, args...), nil
	}
	if _, err := t.exec(ctx, stepInsert, step...); err != nil {
		return "", nil, t.fail(what, err)
	}
	return q, args, nil
}

func (t *tx) GetTransaction(ctx context.Context, id string) (*store.Transaction, error) {
	x, err := scanTransaction(t.queryRow(ctx, `SELECT `+transactionCols+` FROM transactions WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("transaction %q", id), err)
	}
	return &x, nil
}

// ListTransactions is keyset-paginated like listPage, in either order.
func (t *tx) ListTransactions(ctx context.Context, f store.TransactionFilter) (store.Page[store.Transaction], error) {
	const what = "list transactions"
	var w filter
	w.eq("customer_id", f.CustomerID)
	w.eq("status", f.Status)
	w.eq("type", f.Type)
	if f.AccountID != "" {
		w.conds = append(w.conds, "(source_account_id = ? OR destination_account_id = ?)")
		w.args = append(w.args, f.AccountID, f.AccountID)
	}
	w.eitherIn("source_account_id", "destination_account_id", f.AccountIDs)
	w.createdBetween(t.d, f.CreatedAfter, f.CreatedBefore)
	w.desc = f.Descending
	return listPage(ctx, t, what, "transactions", transactionCols, w, f.Limit, f.Cursor,
		scanTransaction, func(x *store.Transaction) string { return x.ID })
}

func (t *tx) AdvanceTransaction(ctx context.Context, x *store.Transaction, from string) (bool, error) {
	what := fmt.Sprintf("advance transaction %q", x.ID)
	q, args, err := t.withStep(ctx, what, x.ID, x.NextStepAt,
		`UPDATE transactions SET status = ?, failure_reason = ?, next_step_at = ?, settled_at = ?, reference = ?,
		 updated_at = ? WHERE id = ? AND status = ?`,
		x.Status, x.FailureReason, t.d.timeArg(x.NextStepAt), t.d.timeArg(x.SettledAt), x.Reference,
		t.d.timeArg(x.UpdatedAt), x.ID, from)
	if err != nil {
		return false, err
	}
	return t.compareAndSet(ctx, what, "transactions", x.ID, x.UpdatedAt, q, args...)
}

func (t *tx) ConfirmReceipt(ctx context.Context, id string, confirmedAt, now time.Time) error {
	if confirmedAt.IsZero() {
		return errors.New("store: confirm receipt: zero time")
	}
	return t.updateOne(ctx, fmt.Sprintf("confirm receipt of %q", id),
		`UPDATE transactions SET receipt_confirmed_at = ?, updated_at = ? WHERE id = ?`,
		t.d.timeArg(confirmedAt), t.d.timeArg(now), id)
}

func (t *tx) DueTransactions(ctx context.Context, now time.Time, limit int) ([]store.Transaction, error) {
	if limit < 1 {
		return []store.Transaction{}, nil
	}
	const what = "due transactions"
	// The due steps whose transaction has moved on since (executed,
	// settled, rescheduled, cancelled) go first, so that the steps read
	// below are current ones.
	if _, err := t.exec(ctx, `DELETE FROM transaction_steps WHERE due_at <= ? AND NOT EXISTS (
		SELECT 1 FROM transactions WHERE id = transaction_steps.transaction_id AND next_step_at = transaction_steps.due_at)`,
		t.d.timeArg(now)); err != nil {
		return nil, t.fail(what, err)
	}
	rows, err := t.query(ctx, `SELECT `+transactionCols+` FROM transaction_steps
		JOIN transactions ON id = transaction_id AND next_step_at = due_at
		WHERE due_at <= ? ORDER BY due_at, transaction_id LIMIT ?`,
		t.d.timeArg(now), limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	items, err := collect(rows, scanTransaction)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return items, nil
}

func (t *tx) ClaimDueTransaction(ctx context.Context, id string, now time.Time) (*store.Transaction, error) {
	x, err := scanTransaction(t.queryRow(ctx, `SELECT `+transactionCols+` FROM transactions
		WHERE id = ? AND next_step_at IS NOT NULL AND next_step_at <= ?`+t.d.skipLocked, id, t.d.timeArg(now)))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("claim due transaction %q", id), err)
	}
	return &x, nil
}

// ---- idempotency records

func (t *tx) GetIdempotencyRecord(ctx context.Context, scope, key string) (*store.IdempotencyRecord, error) {
	r := store.IdempotencyRecord{Scope: scope, Key: key}
	err := t.queryRow(ctx, `SELECT request_hash, status, body, created_at FROM idempotency_records
		WHERE scope = ? AND key = ?`, scope, key).
		Scan(bytesCol{&r.RequestHash}, &r.Status, exactBytesCol{&r.Body}, timeCol{&r.CreatedAt})
	if err != nil {
		return nil, t.fail(fmt.Sprintf("idempotency record %q", key), err)
	}
	return &r, nil
}

func (t *tx) PutIdempotencyRecord(ctx context.Context, r *store.IdempotencyRecord) error {
	return t.insert(ctx, fmt.Sprintf("put idempotency record %q", r.Key),
		`INSERT INTO idempotency_records (scope, key, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		r.Scope, r.Key, blob(r.RequestHash), r.Status, blob(r.Body), t.d.timeArg(r.CreatedAt))
}

func (t *tx) DeleteIdempotencyRecords(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM idempotency_records WHERE created_at < ?`, t.d.timeArg(before))
	if err != nil {
		return 0, t.fail("delete idempotency records", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, t.fail("delete idempotency records", err)
	}
	return n, nil
}

// ---- deposit references

// depositReferenceFor makes a deposit reference no account has. References
// are random in a space of 2^40, so a taken one is rare; it is looked up
// rather than left to the insert, whose conflict could not say whether the
// id or the reference was taken.
func (t *tx) depositReferenceFor(ctx context.Context) (string, error) {
	for range 8 {
		ref := store.NewDepositReference()
		var n int
		err := t.queryRow(ctx, `SELECT COUNT(*) FROM internal_accounts WHERE deposit_reference = ?`, ref).Scan(&n)
		if err != nil {
			return "", t.fail("deposit reference", err)
		}
		if n == 0 {
			return ref, nil
		}
	}
	return "", errors.New("store: no free deposit reference after 8 tries")
}

func (t *tx) InternalAccountByDepositReference(ctx context.Context, reference string) (*store.InternalAccount, error) {
	a, err := scanAccount(t.queryRow(ctx, `SELECT `+accountCols+` FROM internal_accounts WHERE deposit_reference = ?`, reference))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("internal account with deposit reference %q", reference), err)
	}
	return &a, nil
}

// afterMigration holds the steps that a migration needs done in Go, run
// right after the migration of that version in the same transaction.
var afterMigration = map[int]func(ctx context.Context, tx *sql.Tx, d *dialect) error{
	7:  backfillDepositReferences,
	16: openingBalances,
}

// backfillDepositReferences gives every account made before migration 0007
// (which added deposit_reference) its reference.
func backfillDepositReferences(ctx context.Context, tx *sql.Tx, d *dialect) error {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM internal_accounts WHERE deposit_reference IS NULL ORDER BY id`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	taken := map[string]bool{}
	update := d.rebind(`UPDATE internal_accounts SET deposit_reference = ? WHERE id = ?`)
	for _, id := range ids {
		ref := store.NewDepositReference()
		for taken[ref] {
			ref = store.NewDepositReference()
		}
		taken[ref] = true
		if _, err := tx.ExecContext(ctx, update, ref, id); err != nil {
			return err
		}
	}
	return nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"paywallet/service/store"
)

// tx implements store.Tx over one database/sql transaction.
type tx struct {
	tx *sql.Tx
	d  *dialect
	// lostRace is set when a statement failed because the transaction
	// lost a race; Store.Tx then retries fn whatever fn returned.
	lostRace bool
	// lostConn is set when a statement failed because the database went
	// away (errUnavailable); Store.Tx then treats the attempt as lost
	// whatever fn returned.
	lostConn bool
	// outer is the context Tx was called with, actx the attempt's (outer
	// with the attempt's deadline and span): a statement sent with outer
	// runs under actx (ctxFor).
	outer, actx context.Context
	// tracer, when not nil, makes a span of every statement.
	tracer trace.Tracer
	// stmts, when not nil, holds prepared statements to run instead of
	// SQL text (SQLite; see stmtCache).
	stmts *stmtCache
	// pending is the event log row RecordEvents keeps for the next
	// statement to carry (PostgreSQL; see withPending), nil when none;
	// parts counts the log rows of this transaction.
	pending []logRow
	parts   int
	// trace, when not nil, sees the SQL text of every statement the
	// transaction sends (tests).
	trace func(q string)
}

var _ store.Tx = (*tx)(nil)

type scanner interface{ Scan(dest ...any) error }

// exec, query and queryRow send a statement of the transaction. A log
// row RecordEvents keeps (PostgreSQL) goes with it when the statement can
// carry it (see withPending), and counts as written once the driver sent
// the statement without an error: if the statement then fails at the
// server, PostgreSQL aborts the whole transaction, and the caller sees
// the statement's own error, classified as it would be without the row.
func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = t.ctxFor(ctx)
	if t.tracer != nil {
		var end func(error)
		ctx, end = t.span(ctx, q)
		res, err := t.execTraced(ctx, q, args...)
		end(err)
		return res, err
	}
	return t.execTraced(ctx, q, args...)
}

func (t *tx) execTraced(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if len(t.pending) > 0 && strings.HasPrefix(strings.TrimSpace(q), "SAVEPOINT") {
		// A row carried inside a savepoint would go if it were rolled
		// back to, though the transaction commits: write it before.
		if err := t.flushEvents(ctx); err != nil {
			return nil, err
		}
	}
	if q, args, ok := t.withPending(q, args); ok {
		res, err := t.send(q).ExecContext(ctx, t.d.rebind(q), args...)
		if err == nil {
			t.pending = nil
		}
		return res, err
	}
	if s := t.prepared(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.send(q).ExecContext(ctx, t.d.rebind(q), args...)
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = t.ctxFor(ctx)
	if t.tracer != nil {
		var end func(error)
		ctx, end = t.span(ctx, q)
		rows, err := t.queryTraced(ctx, q, args...)
		end(err)
		return rows, err
	}
	return t.queryTraced(ctx, q, args...)
}

func (t *tx) queryTraced(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if q, args, ok := t.withPending(q, args); ok {
		rows, err := t.send(q).QueryContext(ctx, t.d.rebind(q), args...)
		if err == nil {
			t.pending = nil
		}
		return rows, err
	}
	if s := t.prepared(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.send(q).QueryContext(ctx, t.d.rebind(q), args...)
}

func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = t.ctxFor(ctx)
	if t.tracer != nil {
		var end func(error)
		ctx, end = t.span(ctx, q)
		row := t.queryRowTraced(ctx, q, args...)
		end(row.Err())
		return row
	}
	return t.queryRowTraced(ctx, q, args...)
}

// ctxFor is the context a statement runs under: the attempt's when fn
// passed the context Tx was called with (the usual case), so that the
// attempt's deadline and span apply; any other context as it is.
func (t *tx) ctxFor(ctx context.Context) context.Context {
	if t.actx != nil && ctx == t.outer {
		return t.actx
	}
	return ctx
}

func (t *tx) queryRowTraced(ctx context.Context, q string, args ...any) *sql.Row {
	if q, args, ok := t.withPending(q, args); ok {
		row := t.send(q).QueryRowContext(ctx, t.d.rebind(q), args...)
		if row.Err() == nil {
			t.pending = nil
		}
		return row
	}
	if s := t.prepared(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.send(q).QueryRowContext(ctx, t.d.rebind(q), args...)
}

// send returns the transaction for a statement of SQL text q, after
// showing q to the trace.
func (t *tx) send(q string) *sql.Tx {
	if t.trace != nil {
		t.trace(q)
	}
	return t.tx
}

// prepared returns q's cached statement bound to this transaction, or nil
// when it has none (yet). SQLite needs no rebind.
func (t *tx) prepared(ctx context.Context, q string) *sql.Stmt {
	if t.stmts == nil {
		return nil
	}
	if s := t.stmts.get(q); s != nil {
		if t.trace != nil {
			t.trace(q)
		}
		return t.tx.StmtContext(ctx, s)
	}
	return nil
}

// fail turns a database error into the store's vocabulary, saying what was
// being done: no rows → ErrNotFound; unique violation → ErrConflict; a
// missing referenced row (foreign key) → ErrNotFound as well, since the
// write named something that does not exist. The driver error stays in the
// chain for errors.As.
func (t *tx) fail(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", store.ErrNotFound, what)
	}
	switch t.d.classify(err) {
	case errUnique:
		return fmt.Errorf("%w: %s: %w", store.ErrConflict, what, err)
	case errForeignKey:
		return fmt.Errorf("%w: %s: referenced row: %w", store.ErrNotFound, what, err)
	case errRetry:
		t.lostRace = true
	case errUnavailable:
		t.lostConn = true
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// insert runs an INSERT statement with ON CONFLICT DO NOTHING appended and
// reports ErrConflict when a unique index or the primary key refused the
// row. Asking the database to skip the row, rather than letting the
// statement fail, matters on PostgreSQL: a failed statement aborts the whole
// transaction there, while a caller that gets ErrConflict may reasonably
// carry on (on SQLite it could anyway). Both databases accept ON CONFLICT
// without a target, which covers every unique index, partial ones included.
func (t *tx) insert(ctx context.Context, what, q string, args ...any) error {
	res, err := t.exec(ctx, q+` ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return t.fail(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.fail(what, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s: the id or a unique value is taken", store.ErrConflict, what)
	}
	return nil
}

// pageLimit applies the Page rules: 0 (or less) means 20, more than 100 is
// clamped to 100.
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return 20
	case n > 100:
		return 100
	}
	return n
}

// filter accumulates equality conditions for list queries; empty values do
// not filter. desc lists newest first (ids are time-ordered).
type filter struct {
	conds []string
	args  []any
	desc  bool
}

func (f *filter) eq(col, v string) {
	if v != "" {
		f.conds = append(f.conds, col+" = ?")
		f.args = append(f.args, v)
	}
}

// createdBetween keeps the rows created from after (inclusive) to before
// (exclusive); a zero time does not filter.
func (f *filter) createdBetween(d *dialect, after, before time.Time) {
	if !after.IsZero() {
		f.conds = append(f.conds, "created_at >= ?")
		f.args = append(f.args, d.timeArg(after))
	}
	if !before.IsZero() {
		f.conds = append(f.conds, "created_at < ?")
		f.args = append(f.args, d.timeArg(before))
	}
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// listPage runs the count and the page query for a keyset-paginated list
// ordered by id (descending with f.desc). It fetches one row more than the
// limit to learn whether another page exists without a second query.
func listPage[T any](ctx context.Context, t *tx, what, table, cols string, f filter, limit int, cursor string,
	scan func(scanner) (T, error), id func(*T) string) (store.Page[T], error) {
	var after any
	if cursor != "" {
		after = cursor
	}
	return listPageBy(ctx, t, what, table, cols, "id", f, limit, after, scan, id)
}

// listPageBy is listPage for a table keyed by the column key, whose
// cursor is the argument after (nil: the first page): the integer keys of
// the event catalog and the delivery attempts.
func listPageBy[T any](ctx context.Context, t *tx, what, table, cols, key string, f filter, limit int, cursor any,
	scan func(scanner) (T, error), id func(*T) string) (store.Page[T], error) {
	var p store.Page[T]
	if err := t.queryRow(ctx, "SELECT count(*) FROM "+table+f.where(), f.args...).Scan(&p.TotalCount); err != nil {
		return store.Page[T]{}, t.fail(what, err)
	}
	limit = pageLimit(limit)
	order, after := " ORDER BY "+key, key+" > ?"
	if f.desc {
		order, after = " ORDER BY "+key+" DESC", key+" < ?"
	}
	if cursor != nil {
		f.conds = append(f.conds[:len(f.conds):len(f.conds)], after)
		f.args = append(f.args[:len(f.args):len(f.args)], cursor)
	}
	args := append(f.args[:len(f.args):len(f.args)], limit+1)
	rows, err := t.query(ctx, "SELECT "+cols+" FROM "+table+f.where()+order+" LIMIT ?", args...)
	if err != nil {
		return store.Page[T]{}, t.fail(what, err)
	}
	items, err := collect(rows, scan)
	if err != nil {
		return store.Page[T]{}, t.fail(what, err)
	}
	if len(items) > limit {
		items = items[:limit]
		p.HasMore = true
		p.NextCursor = id(&items[limit-1])
	}
	p.Items = items
	return p, nil
}

// collect scans all rows and closes them. The result is never nil, so that
// an empty list encodes as [] rather than null.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	items := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return items, rows.Err()
}

// compareAndSet runs an UPDATE whose WHERE clause checks that the target is
// still in its initial state, and reports whether this call changed it.
// When nothing changed it tells "already done" (false) from "no such row"
// (ErrNotFound) with a second lookup in the same transaction.
func (t *tx) compareAndSet(ctx context.Context, what, table, id string, at time.Time, update string, args ...any) (bool, error) {
	return t.compareAndSetBy(ctx, what, table, "id", id, at, update, args...)
}

// compareAndSetBy is compareAndSet for a table whose key column is keyCol.
func (t *tx) compareAndSetBy(ctx context.Context, what, table, keyCol, key string, at time.Time, update string, args ...any) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("store: %s: zero time", what)
	}
	res, err := t.exec(ctx, update, args...)
	if err != nil {
		return false, t.fail(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.fail(what, err)
	}
	if n == 1 {
		return true, nil
	}
	var one int
	if err := t.queryRow(ctx, "SELECT 1 FROM "+table+" WHERE "+keyCol+" = ?", key).Scan(&one); err != nil {
		return false, t.fail(what, err)
	}
	return false, nil
}

// ---- settings

func (t *tx) PutSettingIfAbsent(ctx context.Context, key string, value []byte) ([]byte, error) {
	what := fmt.Sprintf("put setting %q", key)
	if _, err := t.exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
		key, blob(value)); err != nil {
		return nil, t.fail(what, err)
	}
	var v []byte
	if err := t.queryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(bytesCol{&v}); err != nil {
		return nil, t.fail(what, err)
	}
	return v, nil
}

func (t *tx) ReplaceSetting(ctx context.Context, key string, old, value []byte) (bool, error) {
	res, err := t.exec(ctx, `UPDATE settings SET value = ? WHERE key = ? AND value = ?`, blob(value), key, blob(old))
	if err != nil {
		return false, t.fail(fmt.Sprintf("replace setting %q", key), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.fail(fmt.Sprintf("replace setting %q", key), err)
	}
	return n == 1, nil
}

func (t *tx) GetSetting(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	if err := t.queryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(bytesCol{&v}); err != nil {
		return nil, t.fail(fmt.Sprintf("setting %q", key), err)
	}
	return v, nil
}

// ---- customers

const customerCols = `id, platform_customer_id, customer_type, email, uma_address, full_name, kyc_status, created_at, updated_at,
	kyb_status, profile, identifier, deleted_at`

func scanCustomer(s scanner) (store.Customer, error) {
	var c store.Customer
	err := s.Scan(&c.ID, optStringCol{&c.PlatformCustomerID}, &c.CustomerType, &c.Email, &c.UmaAddress,
		&c.FullName, &c.KYCStatus, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt},
		&c.KYBStatus, bytesCol{&c.Profile}, bytesCol{&c.Identifier}, timeCol{&c.DeletedAt})
	return c, err
}

func (t *tx) CreateCustomer(ctx context.Context, c *store.Customer) error {
	return t.insert(ctx, fmt.Sprintf("create customer %q", c.ID),
		`INSERT INTO customers (`+customerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, optString(c.PlatformCustomerID), c.CustomerType, c.Email, c.UmaAddress, c.FullName, c.KYCStatus,
		t.d.timeArg(c.CreatedAt), t.d.timeArg(c.UpdatedAt),
		c.KYBStatus, optBlob(c.Profile), optBlob(c.Identifier), t.d.timeArg(c.DeletedAt))
}

func (t *tx) DeleteCustomer(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("delete customer %q", id), "customers", id, at,
		`UPDATE customers SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
		t.d.timeArg(at), t.d.timeArg(at), id)
}

func (t *tx) PaymentsInFlight(ctx context.Context, customerID string) (int, error) {
	var n int
	// A PENDING transaction with a quote is a quote nobody executed (it
	// moves no money); a PENDING one without is a transfer about to move.
	err := t.queryRow(ctx, `SELECT count(*) FROM transactions WHERE customer_id = ?
		AND (status = 'PROCESSING' OR (next_step_at IS NOT NULL AND status <> 'PENDING')
		     OR (status = 'PENDING' AND quote_id IS NULL))`, customerID).Scan(&n)
	if err != nil {
		return 0, t.fail(fmt.Sprintf("payments in flight of %q", customerID), err)
	}
	return n, nil
}

func (t *tx) SetInternalAccountStatus(ctx context.Context, id, status string, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set status of %q", id),
		`UPDATE internal_accounts SET status = ?, updated_at = ? WHERE id = ?`, status, t.d.timeArg(at), id)
}

func (t *tx) GetCustomer(ctx context.Context, id string) (*store.Customer, error) {
	c, err := scanCustomer(t.queryRow(ctx, `SELECT `+customerCols+` FROM customers WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("customer %q", id), err)
	}
	return &c, nil
}

func (t *tx) GetCustomerByUmaAddress(ctx context.Context, addr string) (*store.Customer, error) {
	c, err := scanCustomer(t.queryRow(ctx, `SELECT `+customerCols+` FROM customers
		WHERE uma_address = ? AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1`, addr))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("customer with UMA address %q", addr), err)
	}
	return &c, nil
}

func (t *tx) UpdateCustomer(ctx context.Context, c *store.Customer) error {
	return t.updateOne(ctx, fmt.Sprintf("update customer %q", c.ID),
		`UPDATE customers SET email = ?, full_name = ?, uma_address = ?, updated_at = ?,
			kyc_status = ?, kyb_status = ?, profile = ?, identifier = ? WHERE id = ?`,
		c.Email, c.FullName, c.UmaAddress, t.d.timeArg(c.UpdatedAt),
		c.KYCStatus, c.KYBStatus, optBlob(c.Profile), optBlob(c.Identifier), c.ID)
}

func (t *tx) ListCustomers(ctx context.Context, f store.CustomerFilter) (store.Page[store.Customer], error) {
	var w filter
	w.eq("platform_customer_id", f.PlatformCustomerID)
	w.eq("customer_type", f.CustomerType)
	if !f.IncludeDeleted {
		w.conds = append(w.conds, "deleted_at IS NULL")
	}
	return listPage(ctx, t, "list customers", "customers", customerCols, w, f.Limit, f.Cursor,
		scanCustomer, func(c *store.Customer) string { return c.ID })
}

// ---- internal accounts

const accountCols = `id, customer_id, type, status, currency, private_enabled, available, held, wallet_secret, created_at, updated_at` +
	`, deposit_reference`

func scanAccount(s scanner) (store.InternalAccount, error) {
	var a store.InternalAccount
	err := s.Scan(&a.ID, optStringCol{&a.CustomerID}, &a.Type, &a.Status, &a.Currency, &a.PrivateEnabled,
		&a.Available, &a.Held, bytesCol{&a.WalletSecret}, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt},
		optStringCol{&a.DepositReference})
	return a, err
}

// CreateInternalAccount gives the account a deposit reference when it has
// none (see depositReferenceFor).
func (t *tx) CreateInternalAccount(ctx context.Context, a *store.InternalAccount) error {
	if a.DepositReference == "" {
		ref, err := t.depositReferenceFor(ctx)
		if err != nil {
			return err
		}
		a.DepositReference = ref
	}
	return t.insert(ctx, fmt.Sprintf("create internal account %q", a.ID),
		`INSERT INTO internal_accounts (`+accountCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, optString(a.CustomerID), a.Type, a.Status, a.Currency, a.PrivateEnabled, a.Available, a.Held, optBlob(a.WalletSecret),
		t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt), a.DepositReference)
}

func (t *tx) SetPrivateEnabled(ctx context.Context, id string, enabled bool, now time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set privateEnabled of %q", id),
		`UPDATE internal_accounts SET private_enabled = ?, updated_at = ? WHERE id = ?`, enabled, t.d.timeArg(now), id)
}

// SetWalletSecret never overwrites: a wallet's secret is made once.
func (t *tx) SetWalletSecret(ctx context.Context, id string, sealed []byte) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("set wallet secret of %q", id), "internal_accounts", id, time.Unix(1, 0),
		`UPDATE internal_accounts SET wallet_secret = ? WHERE id = ? AND wallet_secret IS NULL`, blob(sealed), id)
}

func (t *tx) GetInternalAccount(ctx context.Context, id string) (*store.InternalAccount, error) {
	a, err := scanAccount(t.queryRow(ctx, `SELECT `+accountCols+` FROM internal_accounts WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("internal account %q", id), err)
	}
	return &a, nil
}

func (t *tx) ListInternalAccounts(ctx context.Context, f store.InternalAccountFilter) (store.Page[store.InternalAccount], error) {
	var w filter
	if f.Platform {
		w.conds = append(w.conds, "customer_id IS NULL")
	} else {
		w.eq("customer_id", f.CustomerID)
	}
	w.eq("type", f.Type)
	w.eq("currency", f.Currency)
	w.in("id", f.IDs)
	return listPage(ctx, t, "list internal accounts", "internal_accounts", accountCols, w, f.Limit, f.Cursor,
		scanAccount, func(a *store.InternalAccount) string { return a.ID })
}

// ---- credentials

const credentialCols = `id, account_id, type, nickname, credential_id, passkey, sign_count,
	oidc_issuer, oidc_subject, oidc_audience, failed_attempts, locked_until, created_at, updated_at`

func scanCredential(s scanner) (store.Credential, error) {
	var c store.Credential
	err := s.Scan(&c.ID, &c.AccountID, &c.Type, &c.Nickname, &c.CredentialID, bytesCol{&c.Passkey}, &c.SignCount,
		&c.OIDCIssuer, &c.OIDCSubject, &c.OIDCAudience, &c.FailedAttempts,
		timeCol{&c.LockedUntil}, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt})
	return c, err
}

// CreateCredential relies on partial unique indexes (see the migrations)
// for the EMAIL_OTP, passkey and OAuth uniqueness rules, so that concurrent
// requests cannot both pass a check-then-insert.
func (t *tx) CreateCredential(ctx context.Context, c *store.Credential) error {
	return t.insert(ctx, fmt.Sprintf("create credential %q", c.ID),
		`INSERT INTO credentials (`+credentialCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.AccountID, c.Type, c.Nickname, c.CredentialID, optBlob(c.Passkey), c.SignCount,
		c.OIDCIssuer, c.OIDCSubject, c.OIDCAudience, c.FailedAttempts,
		t.d.timeArg(c.LockedUntil), t.d.timeArg(c.CreatedAt), t.d.timeArg(c.UpdatedAt))
}

func (t *tx) GetCredential(ctx context.Context, id string) (*store.Credential, error) {
	c, err := scanCredential(t.queryRow(ctx, `SELECT `+credentialCols+` FROM credentials WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("credential %q", id), err)
	}
	return &c, nil
}

func (t *tx) GetPasskey(ctx context.Context, webauthnID string) (*store.Credential, error) {
	c, err := scanCredential(t.queryRow(ctx, `SELECT `+credentialCols+` FROM credentials
		WHERE type = 'PASSKEY' AND credential_id = ?`, webauthnID))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("passkey %q", webauthnID), err)
	}
	return &c, nil
}

func (t *tx) ListCredentials(ctx context.Context, accountID string) ([]store.Credential, error) {
	what := fmt.Sprintf("list credentials of %q", accountID)
	rows, err := t.query(ctx, `SELECT `+credentialCols+` FROM credentials WHERE account_id = ? ORDER BY id`, accountID)
	if err != nil {
		return nil, t.fail(what, err)
	}
	cs, err := collect(rows, scanCredential)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return cs, nil
}

func (t *tx) SetCredentialLock(ctx context.Context, id string, failedAttempts int, lockedUntil time.Time, now time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set lock of credential %q", id),
		`UPDATE credentials SET failed_attempts = ?, locked_until = ?, updated_at = ? WHERE id = ?`,
		failedAttempts, t.d.timeArg(lockedUntil), t.d.timeArg(now), id)
}

// SetCredentialNickname maps a unique-index refusal (the e-mail of another
// EMAIL_OTP credential) to ErrConflict through fail.
func (t *tx) SetCredentialNickname(ctx context.Context, id, nickname string, now time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("rename credential %q", id),
		`UPDATE credentials SET nickname = ?, updated_at = ? WHERE id = ?`, nickname, t.d.timeArg(now), id)
}

func (t *tx) UpdatePasskey(ctx context.Context, id string, record []byte, signCount int64, now time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("update passkey %q", id),
		`UPDATE credentials SET passkey = ?, sign_count = ?, updated_at = ? WHERE id = ? AND type = 'PASSKEY'`,
		optBlob(record), signCount, t.d.timeArg(now), id)
}

// DeleteCredential deletes the rows that reference the credential first, so
// the foreign keys hold at every statement.
func (t *tx) DeleteCredential(ctx context.Context, id string) error {
	what := fmt.Sprintf("delete credential %q", id)
	for _, q := range []string{
		`DELETE FROM sessions WHERE credential_id = ?`,
		`DELETE FROM otps WHERE credential_id = ?`,
	} {
		if _, err := t.exec(ctx, q, id); err != nil {
			return t.fail(what, err)
		}
	}
	return t.updateOne(ctx, what, `DELETE FROM credentials WHERE id = ?`, id)
}

func (t *tx) UseRegistrationChallenge(ctx context.Context, hash []byte, at time.Time) (bool, error) {
	err := t.insert(ctx, "use registration challenge",
		`INSERT INTO registration_challenges (challenge_hash, used_at) VALUES (?, ?)`, blob(hash), t.d.timeArg(at))
	if errors.Is(err, store.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// ---- OTPs

const otpCols = `id, credential_id, code_hash, target_private_key, created_at, expires_at, used_at`

func scanOTP(s scanner) (store.OTP, error) {
	var o store.OTP
	err := s.Scan(&o.ID, &o.CredentialID, bytesCol{&o.CodeHash}, bytesCol{&o.TargetPrivateKey},
		timeCol{&o.CreatedAt}, timeCol{&o.ExpiresAt}, timeCol{&o.UsedAt})
	return o, err
}

// CreateOTP inserts first and then supersedes the other unused issuances,
// so that a refused insert (duplicate id) has changed nothing even if the
// caller goes on to commit.
func (t *tx) CreateOTP(ctx context.Context, o *store.OTP) error {
	what := fmt.Sprintf("create otp %q", o.ID)
	if err := t.insert(ctx, what, `INSERT INTO otps (`+otpCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.CredentialID, blob(o.CodeHash), blob(o.TargetPrivateKey),
		t.d.timeArg(o.CreatedAt), t.d.timeArg(o.ExpiresAt), t.d.timeArg(o.UsedAt)); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `UPDATE otps SET used_at = ? WHERE credential_id = ? AND used_at IS NULL AND id <> ?`,
		t.d.timeArg(o.CreatedAt), o.CredentialID, o.ID); err != nil {
		return t.fail(what, err)
	}
	return nil
}

// LatestOTP orders by created_at and breaks ties by id: ids from different
// instances within one millisecond are not ordered, the issuance time is.
func (t *tx) LatestOTP(ctx context.Context, credentialID string) (*store.OTP, error) {
	o, err := scanOTP(t.queryRow(ctx, `SELECT `+otpCols+` FROM otps WHERE credential_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, credentialID))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("latest otp of credential %q", credentialID), err)
	}
	return &o, nil
}

func (t *tx) UseOTP(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("use otp %q", id), "otps", id, at,
		`UPDATE otps SET used_at = ? WHERE id = ? AND used_at IS NULL`, t.d.timeArg(at), id)
}

// ---- challenges

const challengeCols = `id, operation, target_id, account_id, body_hash, payload, public_key, created_at, expires_at, consumed_at`

func scanChallenge(s scanner) (store.Challenge, error) {
	var c store.Challenge
	var payload []byte
	err := s.Scan(&c.ID, &c.Operation, &c.TargetID, &c.AccountID, bytesCol{&c.BodyHash}, bytesCol{&payload},
		bytesCol{&c.PublicKey}, timeCol{&c.CreatedAt}, timeCol{&c.ExpiresAt}, timeCol{&c.ConsumedAt})
	c.Payload = string(payload)
	return c, err
}

func (t *tx) CreateChallenge(ctx context.Context, c *store.Challenge) error {
	return t.insert(ctx, fmt.Sprintf("create challenge %q", c.ID),
		`INSERT INTO challenges (`+challengeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Operation, c.TargetID, c.AccountID, blob(c.BodyHash), blob([]byte(c.Payload)), optBlob(c.PublicKey),
		t.d.timeArg(c.CreatedAt), t.d.timeArg(c.ExpiresAt), t.d.timeArg(c.ConsumedAt))
}

func (t *tx) GetChallenge(ctx context.Context, id string) (*store.Challenge, error) {
	c, err := scanChallenge(t.queryRow(ctx, `SELECT `+challengeCols+` FROM challenges WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("challenge %q", id), err)
	}
	return &c, nil
}

func (t *tx) LatestChallenge(ctx context.Context, operation, targetID string) (*store.Challenge, error) {
	c, err := scanChallenge(t.queryRow(ctx, `SELECT `+challengeCols+` FROM challenges
		WHERE target_id = ? AND operation = ? ORDER BY created_at DESC, id DESC LIMIT 1`, targetID, operation))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("latest %s challenge of %q", operation, targetID), err)
	}
	return &c, nil
}

func (t *tx) ConsumeChallenge(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("consume challenge %q", id), "challenges", id, at,
		`UPDATE challenges SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL`, t.d.timeArg(at), id)
}

// ---- sessions

const sessionCols = `id, account_id, credential_id, type, nickname, public_key, created_at, updated_at, expires_at, revoked_at`

func scanSession(s scanner) (store.Session, error) {
	var x store.Session
	err := s.Scan(&x.ID, &x.AccountID, &x.CredentialID, &x.Type, &x.Nickname, bytesCol{&x.PublicKey},
		timeCol{&x.CreatedAt}, timeCol{&x.UpdatedAt}, timeCol{&x.ExpiresAt}, timeCol{&x.RevokedAt})
	return x, err
}

func (t *tx) CreateSession(ctx context.Context, s *store.Session) error {
	return t.insert(ctx, fmt.Sprintf("create session %q", s.ID),
		`INSERT INTO sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.AccountID, s.CredentialID, s.Type, s.Nickname, blob(s.PublicKey),
		t.d.timeArg(s.CreatedAt), t.d.timeArg(s.UpdatedAt), t.d.timeArg(s.ExpiresAt), t.d.timeArg(s.RevokedAt))
}

func (t *tx) GetSession(ctx context.Context, id string) (*store.Session, error) {
	s, err := scanSession(t.queryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("session %q", id), err)
	}
	return &s, nil
}

// ListActiveSessions treats a session as expired from its ExpiresAt on
// (expires_at > now), matching "after this time the session is invalid"
// with exact boundaries.
func (t *tx) ListActiveSessions(ctx context.Context, accountID string, now time.Time) ([]store.Session, error) {
	what := fmt.Sprintf("list active sessions of %q", accountID)
	if now.IsZero() {
		return nil, fmt.Errorf("store: %s: zero time", what)
	}
	rows, err := t.query(ctx, `SELECT `+sessionCols+` FROM sessions
		WHERE account_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY id`, accountID, t.d.timeArg(now))
	if err != nil {
		return nil, t.fail(what, err)
	}
	ss, err := collect(rows, scanSession)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return ss, nil
}

// RevokeSession also sets UpdatedAt to at: revoking is a change of the
// session.
func (t *tx) RevokeSession(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("revoke session %q", id), "sessions", id, at,
		`UPDATE sessions SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL`,
		t.d.timeArg(at), t.d.timeArg(at), id)
}

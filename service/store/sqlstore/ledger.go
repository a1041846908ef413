package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// ---- posting

// PostLedger moves the wallets' balances first, each with one UPDATE whose
// WHERE clause refuses a negative result (so that two transactions racing
// for the same money cannot both take it; the columns' CHECKs refuse it as
// a last resort), and then writes the journal rows, whose wallet entries
// carry the balances the UPDATEs returned. On PostgreSQL the journal rows
// go in one statement (data-modifying WITH), so a post costs two round
// trips for one wallet.
//
// A PendingID is not read first: the foreign key refuses one that names
// nothing (ErrNotFound) and the UNIQUE index a second resolution
// (ErrConflict), and `ledger verify` checks that it names a HOLD of the
// same payment. A read here would make concurrent settlements on
// PostgreSQL abort each other (see payments.booksOf).
func (t *tx) PostLedger(ctx context.Context, lt *ledger.Transaction) (bool, error) {
	what := fmt.Sprintf("post ledger transaction %q", lt.ID)
	if err := lt.Check(); err != nil {
		return false, fmt.Errorf("store: %s: %w", what, err)
	}
	moves := lt.WalletMoves()
	at := t.d.timeArg(lt.CreatedAt)
	// A post that fails is undone whatever the caller does next, so that
	// no wallet moves without its entries: under a savepoint it rolls
	// back to, on SQLite always (in-process, it costs next to nothing),
	// and on PostgreSQL when several wallets move (the one wallet of the
	// service's own transactions needs none: its UPDATE is the first
	// thing written, and a statement that fails after it aborts the
	// caller's transaction, so nothing commits).
	if t.d.name == "postgres" && len(moves) == 1 {
		return t.postOneWallet(ctx, what, lt, moves[0])
	}
	guarded := len(moves) > 1 || t.d.name == "sqlite"
	if guarded {
		if _, err := t.exec(ctx, `SAVEPOINT ledger_post`); err != nil {
			return false, t.fail(what, err)
		}
	}
	undo := func(err error) (bool, error) {
		if guarded {
			if _, rerr := t.exec(ctx, `ROLLBACK TO SAVEPOINT ledger_post`); rerr != nil {
				return false, t.fail(what+": undo", rerr)
			}
			if _, rerr := t.exec(ctx, `RELEASE SAVEPOINT ledger_post`); rerr != nil {
				return false, t.fail(what+": undo", rerr)
			}
		}
		return false, err
	}
	for _, m := range moves {
		var avail, held int64
		err := t.queryRow(ctx, `UPDATE internal_accounts SET available = available + ?, held = held + ?, updated_at = ?
			WHERE id = ? AND currency = ? AND available + ? >= 0 AND held + ? >= 0 RETURNING available, held`,
			m.Available, m.Held, at, m.Wallet, m.Currency, m.Available, m.Held).Scan(&avail, &held)
		if errors.Is(err, sql.ErrNoRows) {
			return undo(t.unmoved(ctx, what, m))
		}
		if err != nil {
			return undo(t.fail(what+": wallet "+m.Wallet, err))
		}
		for j := range lt.Entries {
			if w, _, ok := lt.Entries[j].Account.Wallet(); ok && w == m.Wallet {
				lt.Entries[j].AvailableAfter, lt.Entries[j].HeldAfter = avail, held
			}
		}
	}
	if err := t.writeLedger(ctx, what, lt); err != nil {
		return undo(err)
	}
	if guarded {
		if _, err := t.exec(ctx, `RELEASE SAVEPOINT ledger_post`); err != nil {
			return false, t.fail(what, err)
		}
	}
	return true, nil
}

// unmoved says why the wallet of m did not move: an error when it does not
// exist or holds another currency, nil when the money is not there.
func (t *tx) unmoved(ctx context.Context, what string, m ledger.WalletMove) error {
	var cur string
	if err := t.queryRow(ctx, `SELECT currency FROM internal_accounts WHERE id = ?`, m.Wallet).Scan(&cur); err != nil {
		return t.fail(what+": wallet "+m.Wallet, err)
	}
	if cur != m.Currency {
		return fmt.Errorf("store: %s: wallet %s holds %s, not %s", what, m.Wallet, cur, m.Currency)
	}
	return nil
}

// postOneWallet is PostLedger on PostgreSQL for a transaction that moves
// one wallet (every one the service writes): the wallet's UPDATE and the
// journal rows are one statement, whose inserts take their rows from the
// UPDATE's, so when the UPDATE refuses (not enough money, no such wallet,
// another currency) nothing is written, and the wallet entries get the
// balances it returns. One round trip, as the balance UPDATE alone was
// before the books: a payment's transaction is no longer than it was, and
// concurrent ones overlap no more (the serializable transactions'
// conflicts grow with their overlap).
func (t *tx) postOneWallet(ctx context.Context, what string, lt *ledger.Transaction, m ledger.WalletMove) (bool, error) {
	at := t.d.timeArg(lt.CreatedAt)
	args := []any{m.Available, m.Held, at, m.Wallet, m.Currency, m.Available, m.Held,
		lt.ID, string(lt.Kind), optString(lt.TransactionID), optString(lt.QuoteID), optString(lt.PendingID), lt.Description, at,
		lt.ID, at}
	uuid := strings.TrimPrefix(lt.ID, "LedgerTransaction:")
	rows := make([]string, len(lt.Entries))
	for i, e := range lt.Entries {
		wallet, _, _ := e.Account.Wallet()
		rows[i] = `(CAST(? AS text), CAST(? AS integer), CAST(? AS text), CAST(? AS text), CAST(? AS bigint), CAST(? AS text))`
		args = append(args, "LedgerEntry:"+uuid+"-"+strconv.Itoa(i+1), i+1, string(e.Account), e.Currency, e.Amount, optString(wallet))
	}
	args = append(args, lt.ID)
	q := `WITH w AS (
		UPDATE internal_accounts SET available = available + ?, held = held + ?, updated_at = ?
		WHERE id = ? AND currency = ? AND available + ? >= 0 AND held + ? >= 0 RETURNING available, held),
	t AS (INSERT INTO ledger_transactions (` + ledgerTxCols + `)
		SELECT CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text),
			CAST(? AS timestamptz) FROM w),
	e AS (INSERT INTO ledger_entries (` + ledgerEntryCols + `)
		SELECT v.id, CAST(? AS text), v.n, v.account, v.currency, v.amount, v.wallet,
			CASE WHEN v.wallet IS NULL THEN 0 ELSE w.available END, CASE WHEN v.wallet IS NULL THEN 0 ELSE w.held END,
			CAST(? AS timestamptz)
		FROM w, (VALUES ` + strings.Join(rows, ", ") + `) AS v (id, n, account, currency, amount, wallet)),
	q AS (INSERT INTO ledger_unsealed (ledger_transaction_id) SELECT CAST(? AS text) FROM w)
	SELECT available, held FROM w`
	var avail, held int64
	err := t.queryRow(ctx, q, args...).Scan(&avail, &held)
	if errors.Is(err, sql.ErrNoRows) {
		return false, t.unmoved(ctx, what, m)
	}
	if err != nil {
		return false, t.fail(what, err)
	}
	for j := range lt.Entries {
		if _, _, ok := lt.Entries[j].Account.Wallet(); ok {
			lt.Entries[j].AvailableAfter, lt.Entries[j].HeldAfter = avail, held
		}
	}
	return true, nil
}

const ledgerTxCols = `id, kind, transaction_id, quote_id, pending_id, description, created_at`

const ledgerEntryCols = `id, ledger_transaction_id, n, account_id, currency, amount, wallet_id, available_after, held_after, created_at`

// writeLedger inserts the transaction, its entries and its place in the
// sealer's queue.
func (t *tx) writeLedger(ctx context.Context, what string, lt *ledger.Transaction) error {
	at := t.d.timeArg(lt.CreatedAt)
	txArgs := []any{lt.ID, string(lt.Kind), optString(lt.TransactionID), optString(lt.QuoteID),
		optString(lt.PendingID), lt.Description, at}
	var entryArgs []any
	uuid := strings.TrimPrefix(lt.ID, "LedgerTransaction:")
	for i, e := range lt.Entries {
		wallet, _, _ := e.Account.Wallet()
		entryArgs = append(entryArgs, "LedgerEntry:"+uuid+"-"+strconv.Itoa(i+1), lt.ID, i+1, string(e.Account),
			e.Currency, e.Amount, optString(wallet), e.AvailableAfter, e.HeldAfter, at)
	}
	entryRows := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" + strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(lt.Entries)-1)
	insTx := `INSERT INTO ledger_transactions (` + ledgerTxCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	insEntries := `INSERT INTO ledger_entries (` + ledgerEntryCols + `) VALUES ` + entryRows
	insQueue := `INSERT INTO ledger_unsealed (ledger_transaction_id) VALUES (?)`
	if t.d.name == "postgres" {
		args := append(append(txArgs, entryArgs...), lt.ID)
		_, err := t.exec(ctx, `WITH t AS (`+insTx+`), e AS (`+insEntries+`) `+insQueue, args...)
		if err != nil {
			return t.fail(what, err)
		}
		return nil
	}
	if err := t.insert(ctx, what, insTx, txArgs...); err != nil {
		return err
	}
	if _, err := t.exec(ctx, insEntries, entryArgs...); err != nil {
		return t.fail(what+": entries", err)
	}
	if _, err := t.exec(ctx, insQueue, lt.ID); err != nil {
		return t.fail(what+": queue", err)
	}
	return nil
}

// ---- reading

func scanLedgerTx(s scanner) (ledger.Transaction, error) {
	var lt ledger.Transaction
	var kind string
	err := s.Scan(&lt.ID, &kind, optStringCol{&lt.TransactionID}, optStringCol{&lt.QuoteID},
		optStringCol{&lt.PendingID}, &lt.Description, timeCol{&lt.CreatedAt})
	lt.Kind = ledger.Kind(kind)
	return lt, err
}

// ledgerTxs reads the transactions the condition selects, ordered by id,
// with their entries and their places in the chain.
func (t *tx) ledgerTxs(ctx context.Context, what, cond string, args ...any) ([]ledger.Transaction, error) {
	rows, err := t.query(ctx, `SELECT `+ledgerTxCols+` FROM ledger_transactions WHERE `+cond+` ORDER BY id`, args...)
	if err != nil {
		return nil, t.fail(what, err)
	}
	lts, err := collect(rows, scanLedgerTx)
	if err != nil || len(lts) == 0 {
		return lts, t.failIf(what, err)
	}
	at := map[string]int{}
	marks := make([]string, len(lts))
	ids := make([]any, len(lts))
	for i := range lts {
		at[lts[i].ID] = i
		marks[i], ids[i] = "?", lts[i].ID
	}
	in := "(" + strings.Join(marks, ", ") + ")"
	rows, err = t.query(ctx, `SELECT ledger_transaction_id, account_id, currency, amount, available_after, held_after
		FROM ledger_entries WHERE ledger_transaction_id IN `+in+` ORDER BY ledger_transaction_id, n`, ids...)
	if err != nil {
		return nil, t.fail(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, account string
		var e ledger.Entry
		if err := rows.Scan(&id, &account, &e.Currency, &e.Amount, &e.AvailableAfter, &e.HeldAfter); err != nil {
			return nil, t.fail(what, err)
		}
		e.Account = ledger.Account(account)
		lts[at[id]].Entries = append(lts[at[id]].Entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(what, err)
	}
	rows, err = t.query(ctx, `SELECT ledger_transaction_id, seq, link FROM ledger_chain WHERE ledger_transaction_id IN `+in, ids...)
	if err != nil {
		return nil, t.fail(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int64
		var link []byte
		if err := rows.Scan(&id, &seq, bytesCol{&link}); err != nil {
			return nil, t.fail(what, err)
		}
		lts[at[id]].Seq = seq
		copy(lts[at[id]].Link[:], link)
	}
	return lts, t.failIf(what, rows.Err())
}

// failIf is fail for an error that may be nil.
func (t *tx) failIf(what string, err error) error {
	if err == nil {
		return nil
	}
	return t.fail(what, err)
}

func (t *tx) LedgerTransactionsOf(ctx context.Context, transactionID string) ([]ledger.Transaction, error) {
	return t.ledgerTxs(ctx, fmt.Sprintf("ledger transactions of %q", transactionID), `transaction_id = ?`, transactionID)
}

func (t *tx) GetLedgerTransaction(ctx context.Context, id string) (*ledger.Transaction, error) {
	what := fmt.Sprintf("ledger transaction %q", id)
	lts, err := t.ledgerTxs(ctx, what, `id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(lts) == 0 {
		return nil, t.fail(what, sql.ErrNoRows)
	}
	return &lts[0], nil
}

const statementCols = `id, ledger_transaction_id, kind, transaction_id, quote_id, description, wallet_id,
	account_id, currency, amount, available_after, held_after, created_at`

func scanStatement(s scanner) (store.LedgerEntry, error) {
	var e store.LedgerEntry
	var kind, account string
	err := s.Scan(&e.ID, &e.LedgerTransactionID, &kind, optStringCol{&e.TransactionID}, optStringCol{&e.QuoteID},
		&e.Description, optStringCol{&e.Wallet}, &account, &e.Currency, &e.Amount, &e.AvailableAfter, &e.HeldAfter,
		timeCol{&e.CreatedAt})
	e.Kind, e.Account = ledger.Kind(kind), ledger.Account(account)
	return e, err
}

func (t *tx) ListLedgerEntries(ctx context.Context, f store.LedgerEntryFilter) (store.Page[store.LedgerEntry], error) {
	if f.Wallet == "" {
		return store.Page[store.LedgerEntry]{}, errors.New("store: list ledger entries: no wallet")
	}
	var w filter
	w.eq("wallet_id", f.Wallet)
	w.createdBetween(t.d, f.CreatedAfter, f.CreatedBefore)
	w.desc = f.Descending
	return listPage(ctx, t, "list ledger entries", "ledger_statement", statementCols, w, f.Limit, f.Cursor,
		scanStatement, func(e *store.LedgerEntry) string { return e.ID })
}

func (t *tx) LedgerBalances(ctx context.Context) ([]store.LedgerBalance, error) {
	const what = "ledger balances"
	rows, err := t.query(ctx, `SELECT account_id, currency, CAST(SUM(amount) AS BIGINT), count(*) FROM ledger_entries
		GROUP BY account_id, currency ORDER BY account_id, currency`)
	if err != nil {
		return nil, t.fail(what, err)
	}
	out, err := collect(rows, func(s scanner) (store.LedgerBalance, error) {
		var b store.LedgerBalance
		var account string
		err := s.Scan(&account, &b.Currency, &b.Balance, &b.Entries)
		b.Account = ledger.Account(account)
		return b, err
	})
	return out, t.failIf(what, err)
}

func (t *tx) LedgerHead(ctx context.Context) (ledger.Head, error) {
	var h ledger.Head
	var link []byte
	err := t.queryRow(ctx, `SELECT seq, link, sealed_at FROM ledger_chain ORDER BY seq DESC LIMIT 1`).
		Scan(&h.Seq, bytesCol{&link}, timeCol{&h.At})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Head{}, nil
	}
	if err != nil {
		return ledger.Head{}, t.fail("ledger head", err)
	}
	copy(h.Hash[:], link)
	return h, nil
}

// ---- sealing

// SealLedger runs in a transaction of its own, one sealer at a time: on
// PostgreSQL under a session-level advisory lock taken before it begins,
// and READ COMMITTED, so that it sees the queue as committed when it reads
// it and never makes the API's serializable transactions (which insert
// into the queue) fail; on SQLite writers take turns anyway.
func (db *DB) SealLedger(ctx context.Context, limit int, at time.Time) (int, ledger.Head, error) {
	var n int
	var head ledger.Head
	seal := func(st store.Tx) error {
		var err error
		n, head, err = st.(*tx).seal(ctx, limit, at)
		return err
	}
	if db.d.keyLock == "" {
		err := db.Tx(ctx, seal)
		return n, head, err
	}
	err := db.withTurn(ctx, "ledger seal", "the ledger sealer's turn", func(begin func(context.Context, *sql.TxOptions) (*sql.Tx, error)) error {
		readCommitted := func(ctx context.Context, _ *sql.TxOptions) (*sql.Tx, error) {
			return begin(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		}
		return db.run(ctx, readCommitted, seal, true)
	})
	return n, head, err
}

func (t *tx) seal(ctx context.Context, limit int, at time.Time) (int, ledger.Head, error) {
	const what = "seal ledger"
	head, err := t.LedgerHead(ctx)
	if err != nil {
		return 0, head, err
	}
	rows, err := t.query(ctx, `SELECT ledger_transaction_id FROM ledger_unsealed ORDER BY ledger_transaction_id LIMIT ?`, limit)
	if err != nil {
		return 0, head, t.fail(what, err)
	}
	ids, err := collect(rows, func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	})
	if err != nil || len(ids) == 0 {
		return 0, head, t.failIf(what, err)
	}
	marks := "(?" + strings.Repeat(", ?", len(ids)-1) + ")"
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	lts, err := t.ledgerTxs(ctx, what, `id IN `+marks, args...)
	if err != nil {
		return 0, head, err
	}
	var chainArgs []any
	sealed := 0
	for i := range lts {
		if lts[i].Seq != 0 {
			continue // chained already (a queue row left by a crash cannot happen, but costs nothing to skip)
		}
		head.Seq++
		head.Hash = ledger.Link(head.Hash, head.Seq, ledger.BodyHash(&lts[i]))
		// A copy: head.Hash[:] would share head's array, which the next
		// link overwrites before the batch's INSERT reads the arguments.
		link := head.Hash
		chainArgs = append(chainArgs, head.Seq, lts[i].ID, link[:], t.d.timeArg(at))
		sealed++
	}
	if sealed > 0 {
		head.At = at.UTC().Truncate(time.Microsecond)
		q := `INSERT INTO ledger_chain (seq, ledger_transaction_id, link, sealed_at) VALUES (?, ?, ?, ?)` +
			strings.Repeat(", (?, ?, ?, ?)", sealed-1)
		if _, err := t.exec(ctx, q, chainArgs...); err != nil {
			return 0, head, t.fail(what, err)
		}
	}
	// Only the rows of transactions that exist leave the queue: one that
	// names nothing (written by hand; nothing of ours does) stays for
	// `ledger verify` to report.
	if len(lts) == 0 {
		return 0, head, nil
	}
	done := make([]any, len(lts))
	for i := range lts {
		done[i] = lts[i].ID
	}
	if _, err := t.exec(ctx, `DELETE FROM ledger_unsealed WHERE ledger_transaction_id IN (?`+
		strings.Repeat(", ?", len(done)-1)+`)`, done...); err != nil {
		return 0, head, t.fail(what, err)
	}
	return sealed, head, nil
}

// ---- migration 0016

// openingBalances writes one OPENING ledger transaction per wallet that
// had money before the books existed, from its balance columns, and
// records when the books opened (payments made before are exempt from the
// verifier's per-status checks: their holds predate the journal).
func openingBalances(ctx context.Context, sqlTx *sql.Tx, d *dialect) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows, err := sqlTx.QueryContext(ctx, `SELECT id, currency, available, held FROM internal_accounts
		WHERE available <> 0 OR held <> 0 ORDER BY id`)
	if err != nil {
		return err
	}
	type wallet struct {
		id, currency    string
		available, held int64
	}
	var ws []wallet
	for rows.Next() {
		var w wallet
		if err := rows.Scan(&w.id, &w.currency, &w.available, &w.held); err != nil {
			rows.Close()
			return err
		}
		ws = append(ws, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	t := &tx{tx: sqlTx, d: d}
	for _, w := range ws {
		lt := ledger.New("LedgerTransaction:"+strings.TrimPrefix(w.id, "InternalAccount:"), ledger.KindOpening, now,
			"Opening balance").
			Add(ledger.Opening(w.currency), w.currency, -(w.available+w.held)).
			Add(ledger.WalletAccount(w.id, ledger.Available), w.currency, w.available).
			Add(ledger.WalletAccount(w.id, ledger.Held), w.currency, w.held)
		for i := range lt.Entries {
			if _, _, ok := lt.Entries[i].Account.Wallet(); ok {
				lt.Entries[i].AvailableAfter, lt.Entries[i].HeldAfter = w.available, w.held
			}
		}
		if err := lt.Check(); err != nil {
			return err
		}
		if err := t.writeLedger(ctx, "opening balance of "+w.id, lt); err != nil {
			return err
		}
	}
	_, err = sqlTx.ExecContext(ctx, d.rebind(`INSERT INTO settings (key, value) VALUES (?, ?)`),
		store.LedgerOpenedSetting, []byte(now.Format(time.RFC3339Nano)))
	return err
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/storetest"
)

// ledgerTime is when the tests' ledger transactions are made.
var ledgerTime = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// smallBook writes, through the store, a wallet funded with 100, a HOLD of
// 30 resolved by a VOID, and seals them. It returns the three.
func smallBook(t *testing.T, db *DB) []*ledger.Transaction {
	t.Helper()
	ctx := t.Context()
	c := &store.Customer{ID: "Customer:019aa5d2-7c10-7000-8000-000000000001", CustomerType: "INDIVIDUAL",
		CreatedAt: ledgerTime, UpdatedAt: ledgerTime}
	w := &store.InternalAccount{ID: "InternalAccount:019aa5d2-7c10-7000-8000-000000000002", CustomerID: c.ID,
		Type: "EMBEDDED_WALLET", Status: "ACTIVE", Currency: "USD", CreatedAt: ledgerTime, UpdatedAt: ledgerTime}
	fund := ledger.New("LedgerTransaction:019aa5d2-7c10-7000-8000-000000000003", ledger.KindFunding, ledgerTime, "Sandbox funding").
		Move(ledger.Sandbox("USD"), "USD", 100, ledger.WalletAccount(w.ID, ledger.Available), "USD", 100)
	hold := ledger.HoldFor("LedgerTransaction:019aa5d2-7c10-7000-8000-000000000004", ledgerTime, "Payment on its way", w.ID, "USD", 30)
	void := ledger.VoidOf("LedgerTransaction:019aa5d2-7c10-7000-8000-000000000005", ledgerTime, "Payment failed", w.ID, "USD", 30).
		Resolving(hold.ID)
	lts := []*ledger.Transaction{fund, hold, void}
	err := db.Tx(ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(ctx, c); err != nil {
			return err
		}
		if err := tx.CreateInternalAccount(ctx, w); err != nil {
			return err
		}
		for _, lt := range lts {
			if ok, err := tx.PostLedger(ctx, lt); err != nil || !ok {
				t.Fatalf("post %s: %v, %v", lt.Kind, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := db.SealLedger(ctx, 10, ledgerTime); n != len(lts) || err != nil {
		t.Fatalf("seal: %d, %v", n, err)
	}
	return lts
}

// journal is everything the journal says: each transaction with its place
// in the chain, the balances and the head.
type journal struct {
	Transactions []ledger.Transaction
	Balances     []store.LedgerBalance
	Head         ledger.Head
}

func readJournal(t *testing.T, db *DB, ids ...string) journal {
	t.Helper()
	var j journal
	err := db.Tx(t.Context(), func(tx store.Tx) error {
		j = journal{}
		for _, id := range ids {
			lt, err := tx.GetLedgerTransaction(t.Context(), id)
			if err != nil {
				return err
			}
			j.Transactions = append(j.Transactions, *lt)
		}
		var err error
		if j.Balances, err = tx.LedgerBalances(t.Context()); err != nil {
			return err
		}
		j.Head, err = tx.LedgerHead(t.Context())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestLedgerRowsRefuseChange: the database itself refuses to change or
// remove a journal row, whoever asks (plain SQL, outside the store): an
// UPDATE or DELETE of ledger_transactions, ledger_entries or ledger_chain,
// an upsert onto a transaction, on PostgreSQL a TRUNCATE, and on SQLite an
// INSERT OR REPLACE, which deletes the row it replaces. A second
// resolution of one HOLD is refused by the UNIQUE on pending_id, not only
// by the store's check. The journal reads the same afterwards.
func TestLedgerRowsRefuseChange(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, err := tc.open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			lts := smallBook(t, db)
			fund, hold, void := lts[0], lts[1], lts[2]
			ids := []string{fund.ID, hold.ID, void.ID}
			before := readJournal(t, db, ids...)
			at := db.d.timeArg(ledgerTime)
			stmts := []struct {
				sql  string
				args []any
			}{
				{`UPDATE ledger_transactions SET description = 'rewritten'`, nil},
				{`UPDATE ledger_transactions SET kind = 'FUNDING' WHERE id = ?`, []any{hold.ID}},
				{`DELETE FROM ledger_transactions WHERE id = ?`, []any{void.ID}},
				{`INSERT INTO ledger_transactions (id, kind, description, created_at) VALUES (?, 'FUNDING', 'rewritten', ?)
					ON CONFLICT (id) DO UPDATE SET description = excluded.description`, []any{fund.ID, at}},
				{`UPDATE ledger_entries SET amount = amount * 2`, nil},
				{`UPDATE ledger_entries SET available_after = 0 WHERE ledger_transaction_id = ?`, []any{fund.ID}},
				{`DELETE FROM ledger_entries WHERE ledger_transaction_id = ?`, []any{void.ID}},
				{`UPDATE ledger_chain SET sealed_at = sealed_at`, nil},
				{`UPDATE ledger_chain SET ledger_transaction_id = ? WHERE seq = 1`, []any{void.ID}},
				{`DELETE FROM ledger_chain WHERE seq = 3`, nil},
			}
			if tc.name == "postgres" {
				for _, table := range []string{"ledger_entries", "ledger_chain", "ledger_transactions CASCADE"} {
					stmts = append(stmts, struct {
						sql  string
						args []any
					}{`TRUNCATE ` + table, nil})
				}
			} else {
				stmts = append(stmts, struct {
					sql  string
					args []any
				}{`INSERT OR REPLACE INTO ledger_transactions (id, kind, description, created_at) VALUES (?, 'FUNDING', 'rewritten', ?)`,
					[]any{fund.ID, at}})
			}
			for _, s := range stmts {
				_, err := db.db.ExecContext(t.Context(), db.d.rebind(s.sql), s.args...)
				if err == nil || !strings.Contains(err.Error(), "immutable") {
					t.Errorf("%s: %v, want the journal's refusal", s.sql, err)
				}
			}
			// A second resolution of the HOLD, past the store's check.
			_, err = db.db.ExecContext(t.Context(), db.d.rebind(`INSERT INTO ledger_transactions (id, kind, pending_id, description, created_at)
				VALUES ('LedgerTransaction:019aa5d2-7c10-7000-8000-0000000000ff', 'POST', ?, 'Sent after all', ?)`), hold.ID, at)
			if db.d.classify(err) != errUnique {
				t.Errorf("a second resolution of the HOLD: %v, want a unique violation", err)
			}
			if after := readJournal(t, db, ids...); !equalJournals(after, before) {
				t.Errorf("the journal changed:\n got %+v\nwant %+v", after, before)
			}
			storetest.CheckBooks(t, db)
		})
	}
}

func equalJournals(a, b journal) bool {
	return slices.EqualFunc(a.Transactions, b.Transactions, func(x, y ledger.Transaction) bool {
		return ledger.BodyHash(&x) == ledger.BodyHash(&y) && x.Seq == y.Seq && x.Link == y.Link
	}) && slices.Equal(a.Balances, b.Balances) && a.Head.Seq == b.Head.Seq && a.Head.Hash == b.Head.Hash && a.Head.At.Equal(b.Head.At)
}

// olderDatabase makes an empty database of each kind that this package has
// not opened: its raw handle, and how to open it with the current code.
var olderDatabases = []struct {
	name string
	make func(t *testing.T) (raw *sql.DB, d *dialect, open func(ctx context.Context) (*DB, error))
}{
	{"sqlite", func(t *testing.T) (*sql.DB, *dialect, func(context.Context) (*DB, error)) {
		path := filepath.Join(t.TempDir(), "older.db")
		dsn, _, err := sqliteDSN(path)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		raw.SetMaxOpenConns(1)
		return raw, sqliteDialect, func(ctx context.Context) (*DB, error) { return OpenSQLite(ctx, path) }
	}},
	{"postgres", func(t *testing.T) (*sql.DB, *dialect, func(context.Context) (*DB, error)) {
		url := pgtest.Start(t).NewDatabase(t)
		raw, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		return raw, postgresDialect, func(ctx context.Context) (*DB, error) { return OpenPostgres(ctx, url) }
	}},
}

// migrateBefore applies the migrations of versions below version: the
// database an older binary left.
func migrateBefore(t *testing.T, raw *sql.DB, d *dialect, version int) {
	t.Helper()
	ms, err := loadMigrations(d)
	if err != nil {
		t.Fatal(err)
	}
	ms = slices.DeleteFunc(ms, func(m migration) bool { return m.version >= version })
	if err := applyMigrations(t.Context(), raw, d, ms); err != nil {
		t.Fatal(err)
	}
	var last int
	if err := raw.QueryRowContext(t.Context(), `SELECT max(version) FROM schema_migrations`).Scan(&last); err != nil || last != version-1 {
		t.Fatalf("the older database is at version %d (%v), want %d", last, err, version-1)
	}
}

// TestOpeningBalancesMigration: a database of version 15 (before the books)
// with balances in its wallets' columns, opened by this version, gets one
// OPENING ledger transaction per wallet with money (none for an empty
// one): opening:<CUR> gives available+held, the wallet's sides get what
// they had, the balances after are the columns. The columns and their
// updated_at do not move, ledger.opened_at records when, the books
// balance and once sealed the chain recomputes with ledger.Link and
// ledger.BodyHash. Opening it again changes nothing.
func TestOpeningBalancesMigration(t *testing.T) {
	for _, tc := range olderDatabases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			raw, d, open := tc.make(t)
			migrateBefore(t, raw, d, 16)
			// As version 15 wrote them.
			created := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
			updated := created.Add(time.Hour)
			customer := "Customer:019aa5d2-7c10-7000-8000-000000000010"
			if _, err := raw.ExecContext(ctx, d.rebind(`INSERT INTO customers (id, platform_customer_id, customer_type, email,
				uma_address, full_name, kyc_status, created_at, updated_at) VALUES (?, 'p-1', 'INDIVIDUAL', '', '', '', 'APPROVED', ?, ?)`),
				customer, d.timeArg(created), d.timeArg(created)); err != nil {
				t.Fatal(err)
			}
			wallets := []struct {
				id, customer, currency string
				available, held        int64
			}{
				{"InternalAccount:019aa5d2-7c10-7000-8000-000000000011", customer, "USDC", 1_000, 250},
				{"InternalAccount:019aa5d2-7c10-7000-8000-000000000012", customer, "USD", 0, 0},
				{"InternalAccount:019aa5d2-7c10-7000-8000-000000000013", customer, "USD", 500, 0},
				{"InternalAccount:019aa5d2-7c10-7000-8000-000000000014", customer, "EUR", 0, 75},
				{"InternalAccount:019aa5d2-7c10-7000-8000-000000000015", "", "USD", 320, 0}, // the platform's
			}
			for _, w := range wallets {
				if _, err := raw.ExecContext(ctx, d.rebind(`INSERT INTO internal_accounts (id, customer_id, type, status, currency,
					private_enabled, available, held, created_at, updated_at) VALUES (?, ?, 'EMBEDDED_WALLET', 'ACTIVE', ?, ?, ?, ?, ?, ?)`),
					w.id, optString(w.customer), w.currency, false, w.available, w.held, d.timeArg(created), d.timeArg(updated)); err != nil {
					t.Fatal(err)
				}
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}

			opening := time.Now().UTC().Truncate(time.Microsecond)
			db, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			opened := time.Now()
			var openings []ledger.Transaction
			var balances []store.LedgerBalance
			err = db.Tx(ctx, func(tx store.Tx) error {
				openings = nil
				setting, err := tx.GetSetting(ctx, store.LedgerOpenedSetting)
				if err != nil {
					return err
				}
				at, err := time.Parse(time.RFC3339Nano, string(setting))
				if err != nil || at.Before(opening) || at.After(opened) {
					t.Errorf("%s = %q (%v), want a time between %v and %v", store.LedgerOpenedSetting, setting, err, opening, opened)
				}
				for _, w := range wallets {
					a, err := tx.GetInternalAccount(ctx, w.id)
					if err != nil {
						return err
					}
					if a.Available != w.available || a.Held != w.held || !a.UpdatedAt.Equal(updated) {
						t.Errorf("%s: available %d held %d updated %v after the migration, want %d %d %v", w.id,
							a.Available, a.Held, a.UpdatedAt, w.available, w.held, updated)
					}
					id := "LedgerTransaction:" + strings.TrimPrefix(w.id, "InternalAccount:")
					lt, err := tx.GetLedgerTransaction(ctx, id)
					if w.available+w.held == 0 {
						if !errors.Is(err, store.ErrNotFound) {
							t.Errorf("%s, empty: an opening transaction %+v, %v", w.id, lt, err)
						}
						continue
					}
					if err != nil {
						return err
					}
					want := ledger.New(id, ledger.KindOpening, at, lt.Description).
						Add(ledger.Opening(w.currency), w.currency, -(w.available+w.held)).
						Add(ledger.WalletAccount(w.id, ledger.Available), w.currency, w.available).
						Add(ledger.WalletAccount(w.id, ledger.Held), w.currency, w.held)
					for i, e := range want.Entries {
						if _, _, ok := e.Account.Wallet(); ok {
							want.Entries[i].AvailableAfter, want.Entries[i].HeldAfter = w.available, w.held
						}
					}
					if lt.Description == "" || lt.TransactionID != "" || lt.PendingID != "" || lt.Kind != want.Kind ||
						!lt.CreatedAt.Equal(want.CreatedAt) || !sameEntries(lt.Entries, want.Entries) {
						t.Errorf("%s: opening transaction\n got %+v\nwant %+v", w.id, *lt, *want)
					}
					openings = append(openings, *lt)
				}
				balances, err = tx.LedgerBalances(ctx)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(openings) != 4 {
				t.Fatalf("%d opening transactions, want 4", len(openings))
			}
			wantOpening := map[string]int64{"USDC": -1_250, "USD": -820, "EUR": -75}
			for _, b := range balances {
				if cur, ok := strings.CutPrefix(string(b.Account), ledger.Prefix+"opening:"); ok && b.Balance != wantOpening[cur] {
					t.Errorf("%s: %d, want %d", b.Account, b.Balance, wantOpening[cur])
				}
			}

			// Sealed in the order of their ids (the wallets'), the chain
			// recomputes from the transactions as read back.
			n, head, err := db.SealLedger(ctx, 100, time.Now())
			if err != nil || n != 4 || head.Seq != 4 {
				t.Fatalf("seal: %d, %+v, %v", n, head, err)
			}
			var link ledger.Hash
			for i, lt := range openings {
				link = ledger.Link(link, int64(i+1), ledger.BodyHash(&lt))
			}
			if link != head.Hash {
				t.Errorf("head %s, recomputed %s", head.Hash, link)
			}
			storetest.CheckBooks(t, db)
			before := readJournal(t, db)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if after := readJournal(t, again); !equalJournals(after, before) {
				t.Errorf("opened again:\n got %+v\nwant %+v", after, before)
			}
		})
	}
}

// sameEntries compares entries in any order.
func sameEntries(a, b []ledger.Entry) bool {
	order := func(x, y ledger.Entry) int { return strings.Compare(string(x.Account), string(y.Account)) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	return slices.Equal(a, b)
}

// TestSealKeepsOrphanQueueRows: a queue row that names no ledger
// transaction (written by hand: on PostgreSQL the queue has no foreign
// key) is not taken out of the queue by the sealer, so that `ledger
// verify` still reports it, and the transactions around it are sealed.
func TestSealKeepsOrphanQueueRows(t *testing.T) {
	db, err := OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const orphan = "LedgerTransaction:019aa5d2-7c10-7000-8000-000000000000"
	if _, err := db.db.ExecContext(t.Context(), `INSERT INTO ledger_unsealed (ledger_transaction_id) VALUES ($1)`, orphan); err != nil {
		t.Fatal(err)
	}
	lts := smallBook(t, db) // seals them
	var queued []string
	rows, err := db.db.QueryContext(t.Context(), `SELECT ledger_transaction_id FROM ledger_unsealed`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		queued = append(queued, id)
	}
	rows.Close()
	if len(queued) != 1 || queued[0] != orphan {
		t.Errorf("queue after sealing: %v, want only %s", queued, orphan)
	}
	head, err := func() (h ledger.Head, err error) {
		err = db.Tx(t.Context(), func(tx store.Tx) error { h, err = tx.LedgerHead(t.Context()); return err })
		return h, err
	}()
	if err != nil || head.Seq != int64(len(lts)) {
		t.Errorf("head %+v, %v; want seq %d", head, err, len(lts))
	}
}

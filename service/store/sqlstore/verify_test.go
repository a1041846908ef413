package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
)

// booksDB is a database with money activity written through the store,
// and a connection of its own for changing it behind the store's back, as
// someone with access to the database could.
type booksDB struct {
	t       *testing.T
	ctx     context.Context
	st      *sqlstore.DB
	raw     *sql.DB
	dialect string
	dsn     string
	now     time.Time
	// names the tests use for the rows: wallets, payments and ledger
	// transactions.
	names map[string]string
	// seqBefore is where some were in the chain before the change.
	seqBefore map[string]int64
}

// openBooks opens an empty database of the dialect ("sqlite" or
// "postgres") with its raw connection.
func openBooks(t *testing.T, dialect string) *booksDB {
	t.Helper()
	ctx := t.Context()
	var raw *sql.DB
	var err error
	dsn := filepath.Join(t.TempDir(), "books.db")
	if dialect == "sqlite" {
		raw, err = sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(10000)")
	} else {
		dsn = pgtest.Start(t).NewDatabase(t)
		raw, err = sql.Open("pgx", dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &booksDB{t: t, ctx: ctx, raw: raw, dialect: dialect, dsn: dsn, names: map[string]string{}}
	b.reopen()
	b.now = time.Now().UTC().Truncate(time.Microsecond) // after the books opened
	t.Cleanup(func() {
		raw.Close()
		b.st.Close()
	})
	return b
}

// reopen opens the store (again), applying the migrations it lacks.
func (b *booksDB) reopen() {
	b.t.Helper()
	if b.st != nil {
		b.st.Close()
	}
	var err error
	if b.st, err = sqlstore.Open(b.ctx, b.dsn); err != nil {
		b.t.Fatal(err)
	}
}

// newBooks is a database with two wallets and every kind of money move:
// a sandbox funding, a payout completed (HOLD, POST), one failed (HOLD,
// VOID), one returned (HOLD, POST, RETURN), a transfer-out in flight
// (HOLD), a deposit; all sealed, then one more funding waiting in the
// sealer's queue.
func newBooks(t *testing.T, dialect string) *booksDB {
	b := openBooks(t, dialect)
	b.tx(func(tx store.Tx) error {
		c := &store.Customer{ID: ids.New("Customer"), PlatformCustomerID: "books-" + dialect, CustomerType: "INDIVIDUAL",
			KYCStatus: "APPROVED", CreatedAt: b.now, UpdatedAt: b.now}
		if err := tx.CreateCustomer(b.ctx, c); err != nil {
			return err
		}
		b.names["customer"] = c.ID
		for _, name := range []string{"w1", "w2"} {
			a := &store.InternalAccount{ID: ids.New("InternalAccount"), CustomerID: c.ID, Type: "INTERNAL_FIAT",
				Status: "ACTIVE", Currency: "USD", CreatedAt: b.now, UpdatedAt: b.now}
			if err := tx.CreateInternalAccount(b.ctx, a); err != nil {
				return err
			}
			b.names[name] = a.ID
		}
		return nil
	})
	w1, w2 := b.names["w1"], b.names["w2"]
	b.credit("funding", ledger.KindFunding, w1, 100_000, "")
	b.payout("completed", "COMPLETED", w1, 3_000)
	b.payout("failed", "FAILED", w1, 2_000)
	b.payout("refunded", "REFUNDED", w1, 1_500)
	b.payout("transfer-out", "PROCESSING", w1, 700)
	b.credit("deposit", ledger.KindDeposit, w2, 4_000, "BANK_TRANSFER")
	b.seal()
	b.credit("late", ledger.KindFunding, w2, 900, "")
	return b
}

func (b *booksDB) tx(fn func(store.Tx) error) {
	b.t.Helper()
	if err := b.st.Tx(b.ctx, fn); err != nil {
		b.t.Fatal(err)
	}
}

func (b *booksDB) tick() time.Time {
	b.now = b.now.Add(time.Millisecond)
	return b.now
}

func (b *booksDB) post(tx store.Tx, name string, lt *ledger.Transaction) error {
	ok, err := tx.PostLedger(b.ctx, lt)
	if err == nil && !ok {
		err = fmt.Errorf("%s: not enough money", name)
	}
	b.names[name] = lt.ID
	return err
}

// credit records a completed funding (no rail) or deposit (a rail) of
// wallet and its credit.
func (b *booksDB) credit(name string, kind ledger.Kind, wallet string, amount int64, rail string) {
	from := ledger.Sandbox("USD")
	if kind == ledger.KindDeposit {
		from = ledger.Unmatched("USD")
	}
	b.tx(func(tx store.Tx) error {
		at := b.tick()
		x := &store.Transaction{ID: ids.New("Transaction"), Type: "INCOMING", Status: "COMPLETED", CustomerID: b.names["customer"],
			PlatformCustomerID: "books-" + b.dialect, DestinationAccountID: wallet, SendingCurrency: "USD", ReceivingCurrency: "USD",
			SentAmount: amount, ReceivedAmount: amount, ExchangeRate: 1, PaymentRail: rail, Reference: "REF-" + name,
			SettledAt: at, CreatedAt: at, UpdatedAt: at}
		if err := tx.CreateTransaction(b.ctx, x); err != nil {
			return err
		}
		b.names[name] = x.ID
		return b.post(tx, name+".credit", ledger.New(ids.New("LedgerTransaction"), kind, at, "Credit").For(x.ID, "").
			Move(from, "USD", amount, ledger.WalletAccount(wallet, ledger.Available), "USD", amount))
	})
}

// payout records a payment from wallet that ends in status: a quote's
// (USD to MXN over SPEI, 50 of fee) or, for "transfer-out", a transfer's.
// Each step is its own store transaction, as the service's are.
func (b *booksDB) payout(name, status, wallet string, amount int64) {
	x := &store.Transaction{ID: ids.New("Transaction"), QuoteID: ids.New("Quote"), Type: "OUTGOING", Status: "PROCESSING",
		CustomerID: b.names["customer"], PlatformCustomerID: "books-" + b.dialect, SourceAccountID: wallet,
		DestinationAccountID: ids.New("ExternalAccount"), SendingCurrency: "USD", ReceivingCurrency: "MXN",
		SentAmount: amount, ReceivedAmount: amount * 17, ExchangeRate: 17, PaymentRail: "SPEI", Reference: "REF-" + name}
	if name == "transfer-out" {
		x.QuoteID, x.ReceivingCurrency, x.ReceivedAmount, x.ExchangeRate, x.PaymentRail = "", "USD", amount, 1, "ACH"
	}
	var hold, post *ledger.Transaction
	b.tx(func(tx store.Tx) error {
		x.CreatedAt, x.UpdatedAt = b.tick(), b.now
		if err := tx.CreateTransaction(b.ctx, x); err != nil {
			return err
		}
		b.names[name] = x.ID
		hold = ledger.HoldFor(ids.New("LedgerTransaction"), b.now, "Payment on its way", wallet, "USD", amount).For(x.ID, x.QuoteID)
		return b.post(tx, name+".hold", hold)
	})
	step := func(to string, lt *ledger.Transaction) {
		b.tx(func(tx store.Tx) error {
			from := x.Status
			x.Status, x.UpdatedAt = to, b.now
			if won, err := tx.AdvanceTransaction(b.ctx, x, from); err != nil || !won {
				return fmt.Errorf("advance %s to %s: %v", name, to, err)
			}
			return b.post(tx, name+"."+strings.ToLower(string(lt.Kind)), lt)
		})
	}
	var fee int64 = 50
	if x.QuoteID == "" {
		fee = 0
	}
	switch status {
	case "COMPLETED", "REFUNDED":
		post = ledger.Payout(ids.New("LedgerTransaction"), b.tick(), "Payment sent", wallet, "USD", amount, fee,
			x.PaymentRail, x.ReceivingCurrency, x.ReceivedAmount).For(x.ID, x.QuoteID).Resolving(hold.ID)
		step("COMPLETED", post)
		if status == "REFUNDED" {
			step("REFUNDED", ledger.Reverse(ids.New("LedgerTransaction"), b.tick(), "Payment returned", post))
		}
	case "FAILED":
		x.Outcome = "002"
		step("FAILED", ledger.VoidOf(ids.New("LedgerTransaction"), b.tick(), "Payment failed", wallet, "USD", amount).
			For(x.ID, x.QuoteID).Resolving(hold.ID))
	}
}

func (b *booksDB) seal() {
	b.t.Helper()
	if _, _, err := b.st.SealLedger(b.ctx, 1000, b.tick()); err != nil {
		b.t.Fatal(err)
	}
}

// exec runs a statement on the raw connection ("?" placeholders).
func (b *booksDB) exec(q string, args ...any) {
	b.t.Helper()
	if _, err := b.raw.ExecContext(b.ctx, b.rebind(q), args...); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
}

// scan reads one row on the raw connection into dest.
func (b *booksDB) scan(dest any, q string, args ...any) {
	b.t.Helper()
	if err := b.raw.QueryRowContext(b.ctx, b.rebind(q), args...).Scan(dest); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
}

// rebind numbers the placeholders for PostgreSQL.
func (b *booksDB) rebind(q string) string {
	if b.dialect != "postgres" {
		return q
	}
	var out strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			out.WriteString("$" + strconv.Itoa(n))
		} else {
			out.WriteRune(c)
		}
	}
	return out.String()
}

// unlock drops the triggers that keep the journal immutable: the first
// thing someone changing it by hand does.
func (b *booksDB) unlock() {
	b.t.Helper()
	for _, table := range []string{"ledger_transactions", "ledger_entries", "ledger_chain"} {
		if b.dialect == "postgres" {
			b.exec("DROP TRIGGER " + table + "_immutable ON " + table)
		} else {
			b.exec("DROP TRIGGER " + table + "_no_update")
			b.exec("DROP TRIGGER " + table + "_no_delete")
		}
	}
}

// time is a time as the dialect's columns store it.
func (b *booksDB) time(t time.Time) any {
	if b.dialect == "postgres" {
		return t
	}
	return t.UnixMicro()
}

// entryID is the id of a ledger transaction's n-th entry.
func entryID(ltID string, n int) string {
	return "LedgerEntry:" + strings.TrimPrefix(ltID, "LedgerTransaction:") + "-" + strconv.Itoa(n)
}

// seqOf is where a ledger transaction is in the chain.
func (b *booksDB) seqOf(ltID string) int64 {
	b.t.Helper()
	var seq int64
	b.scan(&seq, `SELECT seq FROM ledger_chain WHERE ledger_transaction_id = ?`, ltID)
	return seq
}

// insertForged writes a balanced FUNDING of amount to wallet, naming
// payment ("" for none), with its entries, and credits the wallet's cached
// balance to match.
func (b *booksDB) insertForged(id, payment, wallet string, amount int64) {
	at := b.tick()
	var avail int64
	b.scan(&avail, `SELECT available FROM internal_accounts WHERE id = ?`, wallet)
	var txn any
	if payment != "" {
		txn = payment
	}
	b.exec(`INSERT INTO ledger_transactions (id, kind, transaction_id, quote_id, pending_id, description, created_at)
		VALUES (?, 'FUNDING', ?, NULL, NULL, 'Sandbox funding', ?)`, id, txn, b.time(at))
	b.exec(`INSERT INTO ledger_entries (id, ledger_transaction_id, n, account_id, currency, amount, wallet_id,
		available_after, held_after, created_at) VALUES (?, ?, 1, 'LedgerAccount:sandbox:USD', 'USD', ?, NULL, 0, 0, ?)`,
		entryID(id, 1), id, -amount, b.time(at))
	b.exec(`INSERT INTO ledger_entries (id, ledger_transaction_id, n, account_id, currency, amount, wallet_id,
		available_after, held_after, created_at) VALUES (?, ?, 2, ?, 'USD', ?, ?, ?, 0, ?)`,
		entryID(id, 2), id, string(ledger.WalletAccount(wallet, ledger.Available)), amount, wallet, avail+amount, b.time(at))
	b.exec(`UPDATE internal_accounts SET available = available + ? WHERE id = ?`, amount, wallet)
}

func (b *booksDB) verify(opts sqlstore.VerifyOptions) (ledger.Report, error) {
	return b.st.VerifyLedger(b.ctx, opts)
}

var dialects = []string{"sqlite", "postgres"}

// TestVerifyLedgerClean: the books the store wrote verify, whatever the
// size of the chunks the journal is read in, and the report counts them.
func TestVerifyLedgerClean(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			b := newBooks(t, d)
			head := ledger.Head{}
			b.tx(func(tx store.Tx) (err error) { head, err = tx.LedgerHead(b.ctx); return err })
			for _, chunk := range []int{0, 1, 2, 3, 7} {
				r, err := b.verify(sqlstore.VerifyOptions{Chunk: chunk})
				if err != nil {
					t.Fatalf("chunk %d: %v (%d problems: %v)", chunk, err, r.ProblemCount, r.Problems)
				}
				// 14 ledger transactions: funding 1, completed 2,
				// failed 2, refunded 3, transfer-out 1, deposit 1
				// (10 sealed), late 1 (queued). Entries: credits 2
				// each, holds and voids 2, POSTs 5 (held, fee, two FX
				// legs, clearing), the RETURN 5.
				if r.Transactions != 11 || r.Sealed != 10 || r.Unsealed != 1 || r.Entries != 2*3+2*4+2+5*2+5 ||
					r.Payments != 7 || r.Exempt != 0 || r.Wallets != 2 || r.Head != head || head.Seq != 10 {
					t.Fatalf("chunk %d: report %+v, head %+v", chunk, r, head)
				}
			}
			if r, err := b.verify(sqlstore.VerifyOptions{Anchor: &ledger.Anchor{Seq: 4, Hash: linkAt(t, b, 4)}}); err != nil {
				t.Fatalf("anchor: %v (%v)", err, r.Problems)
			}
		})
	}
}

func linkAt(t *testing.T, b *booksDB, seq int64) ledger.Hash {
	t.Helper()
	var link []byte
	b.scan(&link, `SELECT link FROM ledger_chain WHERE seq = ?`, seq)
	return ledger.Hash(link)
}

// TestVerifyLedgerTamper changes the books with plain SQL, one way per
// case, as someone with access to the database could (dropping the
// triggers first where the journal changes), and wants the verification to
// fail naming the row.
func TestVerifyLedgerTamper(t *testing.T) {
	forged := "LedgerTransaction:" + strings.TrimPrefix(ids.New("X"), "X:")
	cases := []struct {
		name   string
		tamper func(b *booksDB)
		// want is the first problem: its table and row (from the names
		// of the booksDB) and words of what it says.
		table string
		row   func(b *booksDB) string
		what  string
	}{
		{"entry amount changed", func(b *booksDB) {
			// 100 more of fee and 100 less exchanged: still balanced,
			// the wallet's move the same; only the chain can tell.
			b.unlock()
			post := b.names["completed.post"]
			b.exec(`UPDATE ledger_entries SET amount = amount + 100 WHERE ledger_transaction_id = ? AND account_id = 'LedgerAccount:fees:USD'`, post)
			b.exec(`UPDATE ledger_entries SET amount = amount - 100 WHERE ledger_transaction_id = ? AND account_id = 'LedgerAccount:fx:USD'`, post)
		}, "ledger_transactions", name("completed.post"), "changed after it was sealed"},
		{"credit amount changed and the balance with it", func(b *booksDB) {
			b.unlock()
			credit := b.names["deposit.credit"]
			b.exec(`UPDATE ledger_entries SET amount = amount - 1000 WHERE id = ?`, entryID(credit, 1))
			b.exec(`UPDATE ledger_entries SET amount = amount + 1000 WHERE id = ?`, entryID(credit, 2))
			b.exec(`UPDATE internal_accounts SET available = available + 1000 WHERE id = ?`, b.names["w2"])
		}, "ledger_transactions", name("deposit.credit"), "should move"},
		{"entry deleted", func(b *booksDB) {
			b.unlock()
			b.exec(`DELETE FROM ledger_entries WHERE id = ?`, entryID(b.names["refunded.post"], 3))
		}, "ledger_entries", func(b *booksDB) string { return entryID(b.names["refunded.post"], 3) }, "missing"},
		{"ledger transaction deleted", func(b *booksDB) {
			b.unlock()
			void := b.names["failed.void"]
			b.exec(`DELETE FROM ledger_chain WHERE ledger_transaction_id = ?`, void)
			b.exec(`DELETE FROM ledger_entries WHERE ledger_transaction_id = ?`, void)
			b.exec(`DELETE FROM ledger_transactions WHERE id = ?`, void)
			b.exec(`UPDATE internal_accounts SET available = available - 2000, held = held + 2000 WHERE id = ?`, b.names["w1"])
		}, "ledger_chain", func(b *booksDB) string { return "seq " + strconv.FormatInt(b.seqBefore["failed.void"], 10) }, "missing"},
		{"forged transaction queued", func(b *booksDB) {
			b.insertForged(forged, "", b.names["w2"], 50_000)
			b.exec(`INSERT INTO ledger_unsealed (ledger_transaction_id) VALUES (?)`, forged)
		}, "ledger_transactions", func(*booksDB) string { return forged }, "names no payment"},
		{"forged transaction neither chained nor queued", func(b *booksDB) {
			b.insertForged(forged, b.names["funding"], b.names["w1"], 100_000)
		}, "ledger_transactions", func(*booksDB) string { return forged }, "neither chained nor waiting"},
		{"forged transaction with a forged chain row", func(b *booksDB) {
			// A second credit of the funding, chained after the head
			// with a link that looks like one.
			b.insertForged(forged, b.names["funding"], b.names["w1"], 100_000)
			b.exec(`INSERT INTO ledger_chain (seq, ledger_transaction_id, link, sealed_at) VALUES (11, ?, ?, ?)`,
				forged, make([]byte, 32), b.time(b.tick()))
		}, "ledger_chain", func(*booksDB) string { return "seq 11" }, "last link does not follow"},
		{"cached balance changed", func(b *booksDB) {
			b.exec(`UPDATE internal_accounts SET available = available + 1000000 WHERE id = ?`, b.names["w2"])
		}, "internal_accounts", name("w2"), "caches 1004900 available"},
		{"chain link changed", func(b *booksDB) {
			b.unlock()
			b.exec(`UPDATE ledger_chain SET link = ? WHERE seq = 3`, make([]byte, 32))
		}, "ledger_chain", func(*booksDB) string { return "seq 3" }, "the link was changed"},
		{"unbalanced transaction", func(b *booksDB) {
			b.unlock()
			b.exec(`UPDATE ledger_entries SET amount = amount + 1 WHERE id = ?`, entryID(b.names["late.credit"], 2))
			b.exec(`UPDATE internal_accounts SET available = available + 1 WHERE id = ?`, b.names["w2"])
		}, "ledger_transactions", name("late.credit"), "USD sums to 1"},
		{"completed payout without its POST", func(b *booksDB) {
			b.exec(`UPDATE transactions SET status = 'COMPLETED' WHERE id = ?`, b.names["transfer-out"])
		}, "transactions", name("transfer-out"), "needs HOLD, POST in the books; it has HOLD"},
		{"hold released by hand", func(b *booksDB) {
			b.exec(`UPDATE internal_accounts SET available = available + 700, held = held - 700 WHERE id = ?`, b.names["w1"])
		}, "internal_accounts", name("w1"), "and 0 held; its entries sum to"},
	}
	for _, d := range dialects {
		for _, c := range cases {
			t.Run(d+"/"+c.name, func(t *testing.T) {
				b := newBooks(t, d)
				b.seqBefore = map[string]int64{"failed.void": b.seqOf(b.names["failed.void"])}
				if r, err := b.verify(sqlstore.VerifyOptions{}); err != nil {
					t.Fatalf("before: %v (%v)", err, r.Problems)
				}
				c.tamper(b)
				r, err := b.verify(sqlstore.VerifyOptions{Chunk: 3})
				var p *ledger.Problem
				if !errors.As(err, &p) {
					t.Fatalf("verified: %v (%+v)", err, r)
				}
				if p.Table != c.table || p.ID != c.row(b) || !strings.Contains(p.What, c.what) {
					t.Fatalf("first problem %q (%d in all: %v), want %s %s: …%s…", p, r.ProblemCount, r.Problems, c.table, c.row(b), c.what)
				}
				if r2, err2 := b.verify(sqlstore.VerifyOptions{}); err2 == nil || err2.Error() != err.Error() || r2.ProblemCount != r.ProblemCount {
					t.Fatalf("read in one chunk: %v (%d), in chunks of 3: %v (%d)", err2, r2.ProblemCount, err, r.ProblemCount)
				}
			})
		}
	}
}

// name is a row of the booksDB by the name the tests gave it.
func name(n string) func(*booksDB) string { return func(b *booksDB) string { return b.names[n] } }

// TestVerifyLedgerAnchor: the chain must still have the anchor's link.
func TestVerifyLedgerAnchor(t *testing.T) {
	b := newBooks(t, "sqlite")
	good := linkAt(t, b, 6)
	for _, c := range []struct {
		anchor ledger.Anchor
		want   string
	}{
		{ledger.Anchor{Seq: 6, Hash: good}, ""},
		{ledger.Anchor{Seq: 5, Hash: good}, "ledger_chain seq 5: link"},
		{ledger.Anchor{Seq: 12, Hash: good}, "ledger_chain seq 12: missing: the chain ends at seq 10"},
	} {
		_, err := b.verify(sqlstore.VerifyOptions{Anchor: &c.anchor})
		if (c.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("anchor %d: %v, want %q", c.anchor.Seq, err, c.want)
		}
	}
}

// TestVerifyLedgerBooksOpened: a database whose wallet had money before
// the books existed, 3000 of it held for a payment executed then. The
// books open (migration 0016, run again here after its tables are dropped
// by hand: it is the last migration), the old payment completes with a
// POST that resolves no HOLD, a new one is paid the usual way: the books
// verify, the old payment exempt from its status's rule, the opening
// balance checked.
func TestVerifyLedgerBooksOpened(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			b := openBooks(t, d)
			before := b.now.Add(-time.Hour)
			old := &store.Transaction{ID: ids.New("Transaction"), QuoteID: ids.New("Quote"), Type: "OUTGOING", Status: "PROCESSING",
				PlatformCustomerID: "books-" + d, DestinationAccountID: ids.New("ExternalAccount"), SendingCurrency: "USD",
				ReceivingCurrency: "USD", SentAmount: 3_000, ReceivedAmount: 3_000, ExchangeRate: 1, PaymentRail: "ACH",
				Reference: "REF-old", CreatedAt: before, UpdatedAt: before}
			b.tx(func(tx store.Tx) error {
				c := &store.Customer{ID: ids.New("Customer"), PlatformCustomerID: "books-" + d, CustomerType: "INDIVIDUAL",
					KYCStatus: "APPROVED", CreatedAt: before, UpdatedAt: before}
				a := &store.InternalAccount{ID: ids.New("InternalAccount"), CustomerID: c.ID, Type: "INTERNAL_FIAT",
					Status: "ACTIVE", Currency: "USD", CreatedAt: before, UpdatedAt: before}
				b.names["customer"], b.names["w1"] = c.ID, a.ID
				old.CustomerID, old.SourceAccountID = c.ID, a.ID
				if err := tx.CreateCustomer(b.ctx, c); err != nil {
					return err
				}
				if err := tx.CreateInternalAccount(b.ctx, a); err != nil {
					return err
				}
				return tx.CreateTransaction(b.ctx, old)
			})
			// Before the books: the balances were columns, nothing else.
			b.exec(`UPDATE internal_accounts SET available = 5000, held = 3000 WHERE id = ?`, b.names["w1"])
			b.exec(`DROP VIEW ledger_statement`)
			for _, table := range []string{"ledger_unsealed", "ledger_chain", "ledger_entries", "ledger_transactions"} {
				b.exec(`DROP TABLE ` + table)
			}
			if d == "postgres" {
				b.exec(`DROP FUNCTION ledger_refuse_change()`)
			}
			b.exec(`DELETE FROM schema_migrations WHERE version = 16`)
			b.exec(`DELETE FROM settings WHERE key = ?`, store.LedgerOpenedSetting)
			b.reopen()
			b.now = time.Now().UTC().Truncate(time.Microsecond) // the books opened just now

			b.tx(func(tx store.Tx) error {
				from := old.Status
				old.Status, old.UpdatedAt = "COMPLETED", b.tick()
				if won, err := tx.AdvanceTransaction(b.ctx, old, from); err != nil || !won {
					return fmt.Errorf("complete the old payment: %v", err)
				}
				return b.post(tx, "old.post", ledger.Payout(ids.New("LedgerTransaction"), b.now, "Payment sent", b.names["w1"],
					"USD", 3_000, 0, "ACH", "USD", 3_000).For(old.ID, old.QuoteID))
			})
			b.payout("new", "COMPLETED", b.names["w1"], 1_000)
			b.seal()
			r, err := b.verify(sqlstore.VerifyOptions{})
			if err != nil {
				t.Fatalf("%v (%v)", err, r.Problems)
			}
			if r.Exempt != 1 || r.Payments != 1 || r.Transactions != 4 || r.Sealed != 4 {
				t.Fatalf("report %+v", r)
			}
			// The opening balance is the wallet's: credited to another, it
			// is named.
			b.unlock()
			opening := "LedgerTransaction:" + strings.TrimPrefix(b.names["w1"], "InternalAccount:")
			b.exec(`UPDATE ledger_entries SET amount = amount + 1 WHERE id = ?`, entryID(opening, 1))
			b.exec(`UPDATE ledger_entries SET amount = amount - 1 WHERE id = ?`, entryID(opening, 2))
			var p *ledger.Problem
			if _, err := b.verify(sqlstore.VerifyOptions{}); !errors.As(err, &p) || p.ID != opening {
				t.Fatalf("opening changed: %v", err)
			}
		})
	}
}

package sqlstore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
)

// benchEntriesEnv sets how many entries BenchmarkVerifyLedger builds.
const benchEntriesEnv = "PAYWALLET_BENCH_LEDGER_ENTRIES"

// benchEntries is the size of BenchmarkVerifyLedger's books: 10^6 entries
// (DESIGN.md's budget is measured there), $PAYWALLET_BENCH_LEDGER_ENTRIES
// when set, and 10^4 under the race detector or -short, where the figure
// means nothing and `make test`'s run of every benchmark must stay quick.
func benchEntries(b *testing.B) int {
	if v := os.Getenv(benchEntriesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("%s=%q: want a number of entries, at least 100", benchEntriesEnv, v)
		}
		return n
	}
	if raceEnabled || testing.Short() {
		return 10_000
	}
	return 1_000_000
}

// BenchmarkVerifyLedger measures VerifyLedger on SQLite books of
// benchEntries entries (wallets funded once, then payouts completed: a
// HOLD of two entries and a POST of three each, all sealed), reported as
// entries/s (the DESIGN budget: at least 10^5, aim 10^6).
func BenchmarkVerifyLedger(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "books.db")
	st, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	entries := buildBooks(b, st, path, benchEntries(b))
	b.ResetTimer()
	for b.Loop() {
		r, err := st.VerifyLedger(ctx, sqlstore.VerifyOptions{})
		if err != nil {
			b.Fatalf("%v (%d problems: %v)", err, r.ProblemCount, r.Problems)
		}
		if r.Entries != int64(entries) {
			b.Fatalf("verified %d entries, built %d", r.Entries, entries)
		}
	}
	b.ReportMetric(float64(entries), "entries")
	b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// buildBooks writes books of about n entries straight into the database
// in one transaction, rows in big INSERTs, the chain computed here (a
// million through PostLedger and SealLedger would take minutes); every
// row is as the service would have written it. It returns the entries.
func buildBooks(b *testing.B, st *sqlstore.DB, path string, n int) int {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	customer := ids.New("Customer")
	const nWallets = 1000
	wallets := make([]string, min(nWallets, n/100))
	err := st.Tx(ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(ctx, &store.Customer{ID: customer, PlatformCustomerID: "bench", CustomerType: "INDIVIDUAL",
			CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		for i := range wallets {
			wallets[i] = ids.New("InternalAccount")
			if err := tx.CreateInternalAccount(ctx, &store.InternalAccount{ID: wallets[i], CustomerID: customer,
				Type: "INTERNAL_FIAT", Status: "ACTIVE", Currency: "USD", CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	rtx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rtx.Rollback() //nolint:errcheck // committed below
	// Each table's rows go in batches of their own: the foreign keys are
	// checked at the commit.
	if _, err := rtx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		b.Fatal(err)
	}
	ins := func(table, cols string) *bulkInsert {
		return &bulkInsert{b: b, tx: rtx, head: "INSERT INTO " + table + " (" + cols + ") VALUES ", cols: strings.Count(cols, ",") + 1}
	}
	pays := ins("transactions", "id, quote_id, type, status, customer_id, platform_customer_id, source_account_id, "+
		"destination_account_id, sending_currency, receiving_currency, sent_amount, received_amount, fees, exchange_rate, "+
		"payment_rail, description, failure_reason, outcome, reference, settled_at, created_at, updated_at")
	ltxs := ins("ledger_transactions", "id, kind, transaction_id, quote_id, pending_id, description, created_at")
	ents := ins("ledger_entries", "id, ledger_transaction_id, n, account_id, currency, amount, wallet_id, available_after, held_after, created_at")
	chain := ins("ledger_chain", "seq, ledger_transaction_id, link, sealed_at")

	balance := map[string][2]int64{}
	var head ledger.Hash
	var seq int64
	total := 0
	at := now
	tick := func() time.Time { at = at.Add(time.Microsecond); return at }
	opt := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	post := func(lt *ledger.Transaction) {
		for _, m := range lt.WalletMoves() {
			bal := balance[m.Wallet]
			bal[0] += m.Available
			bal[1] += m.Held
			balance[m.Wallet] = bal
			for i := range lt.Entries {
				if w, _, ok := lt.Entries[i].Account.Wallet(); ok && w == m.Wallet {
					lt.Entries[i].AvailableAfter, lt.Entries[i].HeldAfter = bal[0], bal[1]
				}
			}
		}
		ltxs.add(lt.ID, string(lt.Kind), opt(lt.TransactionID), opt(lt.QuoteID), opt(lt.PendingID), lt.Description, lt.CreatedAt.UnixMicro())
		u := strings.TrimPrefix(lt.ID, "LedgerTransaction:")
		for i, e := range lt.Entries {
			w, _, _ := e.Account.Wallet()
			ents.add("LedgerEntry:"+u+"-"+strconv.Itoa(i+1), lt.ID, i+1, string(e.Account), e.Currency, e.Amount, opt(w),
				e.AvailableAfter, e.HeldAfter, lt.CreatedAt.UnixMicro())
		}
		total += len(lt.Entries)
		seq++
		head = ledger.Link(head, seq, ledger.BodyHash(lt))
		link := head
		chain.add(seq, lt.ID, link[:], lt.CreatedAt.UnixMicro())
	}
	payment := func(quote, typ, source, dest string, sent, received, fee int64, rail string, created time.Time) string {
		id := ids.New("Transaction")
		pays.add(id, opt(quote), typ, "COMPLETED", customer, "bench", opt(source), dest, "USD", "USD", sent, received, fee, 1.0,
			rail, "Bench", "", "", "BENCH-"+id[len(id)-12:], created.UnixMicro(), created.UnixMicro(), created.UnixMicro())
		return id
	}
	payouts := (n - 2*len(wallets)) / 5
	perWallet := int64(payouts/len(wallets) + 1)
	for _, w := range wallets {
		t := tick()
		x := payment("", "INCOMING", "", w, perWallet*100, perWallet*100, 0, "", t)
		post(ledger.New(ids.New("LedgerTransaction"), ledger.KindFunding, t, "Sandbox funding").For(x, "").
			Move(ledger.Sandbox("USD"), "USD", perWallet*100, ledger.WalletAccount(w, ledger.Available), "USD", perWallet*100))
	}
	for i := range payouts {
		w := wallets[i%len(wallets)]
		t := tick()
		quote := ids.New("Quote")
		x := payment(quote, "OUTGOING", w, "ExternalAccount:"+strings.TrimPrefix(ids.New("X"), "X:"), 100, 99, 1, "ACH", t)
		hold := ledger.HoldFor(ids.New("LedgerTransaction"), t, "Payment on its way", w, "USD", 100).For(x, quote)
		post(hold)
		post(ledger.Payout(ids.New("LedgerTransaction"), tick(), "Payment sent", w, "USD", 100, 1, "ACH", "USD", 99).
			For(x, quote).Resolving(hold.ID))
	}
	for _, bi := range []*bulkInsert{pays, ltxs, ents, chain} {
		bi.flush()
	}
	for w, bal := range balance {
		if _, err := rtx.ExecContext(ctx, `UPDATE internal_accounts SET available = ?, held = ? WHERE id = ?`, bal[0], bal[1], w); err != nil {
			b.Fatal(err)
		}
	}
	if err := rtx.Commit(); err != nil {
		b.Fatal(err)
	}
	return total
}

// bulkInsert gathers rows and inserts them 500 at a time.
type bulkInsert struct {
	b    *testing.B
	tx   *sql.Tx
	head string
	cols int
	args []any
	stmt *sql.Stmt
}

const bulkRows = 500

func (bi *bulkInsert) add(values ...any) {
	if len(values) != bi.cols {
		bi.b.Fatalf("%s: %d values for %d columns", bi.head, len(values), bi.cols)
	}
	bi.args = append(bi.args, values...)
	if len(bi.args) == bulkRows*bi.cols {
		if bi.stmt == nil {
			var err error
			if bi.stmt, err = bi.tx.Prepare(bi.sql(bulkRows)); err != nil {
				bi.b.Fatal(err)
			}
		}
		if _, err := bi.stmt.Exec(bi.args...); err != nil {
			bi.b.Fatal(err)
		}
		bi.args = bi.args[:0]
	}
}

func (bi *bulkInsert) flush() {
	if len(bi.args) == 0 {
		return
	}
	if _, err := bi.tx.Exec(bi.sql(len(bi.args)/bi.cols), bi.args...); err != nil {
		bi.b.Fatal(err)
	}
	bi.args = bi.args[:0]
}

func (bi *bulkInsert) sql(rows int) string {
	row := "(?" + strings.Repeat(", ?", bi.cols-1) + ")"
	return bi.head + row + strings.Repeat(", "+row, rows-1)
}

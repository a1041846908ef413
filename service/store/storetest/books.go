package storetest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// CheckBooks seals whatever ledger transactions wait for the chain and then
// fails t unless the books of s prove themselves:
//
//   - every ledger transaction passes ledger.Transaction.Check: its entries
//     sum to zero in each currency;
//   - every wallet's available and held balances are the sums of its
//     entries, and its statement, read in order, runs through the balances
//     each entry records after its transaction, none of them negative;
//   - every entry LedgerBalances counts belongs to a transaction reached
//     from a wallet's statement or a payment, each account's balance is the
//     sum of those entries, and every currency totals zero;
//   - a POST or VOID resolves a HOLD of its own payment, once, releasing
//     all it holds;
//   - the chain links every transaction, in seal order from 1 to the head,
//     as ledger.Link and ledger.BodyHash recompute it.
//
// The money scenarios of the suite call it at their end, and so do the
// service's tests of each money operation: whatever the scenario did, the
// books still balance.
func CheckBooks(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	for {
		n, _, err := s.SealLedger(ctx, 1000, time.Now())
		if err != nil {
			t.Fatalf("books: seal: %v", err)
		}
		if n == 0 {
			break
		}
	}
	var problems []string
	err := s.Tx(ctx, func(tx store.Tx) error {
		var err error
		problems, err = bookProblems(ctx, tx)
		return err
	})
	if err != nil {
		t.Fatalf("books: %v", err)
	}
	for _, p := range problems {
		t.Errorf("books: %s", p)
	}
}

// balanceKey is an account's balance in one currency.
type balanceKey struct {
	account  ledger.Account
	currency string
}

// bookProblems reads the books in one transaction and says what is wrong
// with them.
func bookProblems(ctx context.Context, tx store.Tx) ([]string, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	wallets, err := store.AllPages(func(c string) (store.Page[store.InternalAccount], error) {
		return tx.ListInternalAccounts(ctx, store.InternalAccountFilter{Limit: 100, Cursor: c})
	})
	if err != nil {
		return nil, err
	}
	reached := map[string]bool{}
	var ids []string
	reach := func(id string) {
		if !reached[id] {
			reached[id] = true
			ids = append(ids, id)
		}
	}
	for _, w := range wallets {
		if w.Available < 0 || w.Held < 0 {
			bad("wallet %s: available %d held %d", w.ID, w.Available, w.Held)
		}
		entries, err := store.AllPages(func(c string) (store.Page[store.LedgerEntry], error) {
			return tx.ListLedgerEntries(ctx, store.LedgerEntryFilter{Wallet: w.ID, Limit: 100, Cursor: c})
		})
		if err != nil {
			return nil, err
		}
		problems = append(problems, statementProblems(w, entries)...)
		for _, e := range entries {
			reach(e.LedgerTransactionID)
		}
	}
	payments, err := store.AllPages(func(c string) (store.Page[store.Transaction], error) {
		return tx.ListTransactions(ctx, store.TransactionFilter{Limit: 100, Cursor: c})
	})
	if err != nil {
		return nil, err
	}
	byID := map[string]*ledger.Transaction{}
	for _, x := range payments {
		lts, err := tx.LedgerTransactionsOf(ctx, x.ID)
		if err != nil {
			return nil, err
		}
		for i := range lts {
			if lts[i].TransactionID != x.ID {
				bad("%s listed for payment %s belongs to %q", lts[i].ID, x.ID, lts[i].TransactionID)
			}
			reach(lts[i].ID)
			byID[lts[i].ID] = &lts[i]
		}
	}
	for _, id := range ids {
		if byID[id] == nil {
			lt, err := tx.GetLedgerTransaction(ctx, id)
			if err != nil {
				return nil, err
			}
			byID[id] = lt
		}
	}

	sums := map[balanceKey]int64{}
	var entries int64
	resolved := map[string]string{}
	for _, id := range ids {
		lt := byID[id]
		if err := lt.Check(); err != nil {
			bad("%v", err)
		}
		for _, e := range lt.Entries {
			sums[balanceKey{e.Account, e.Currency}] += e.Amount
			entries++
		}
		if lt.PendingID == "" {
			continue
		}
		switch hold := byID[lt.PendingID]; {
		case hold == nil || hold.Kind != ledger.KindHold:
			bad("%s %s resolves %s, which is no HOLD", lt.Kind, lt.ID, lt.PendingID)
		case hold.TransactionID != lt.TransactionID:
			bad("%s %s of payment %s resolves the HOLD %s of payment %s", lt.Kind, lt.ID, lt.TransactionID, hold.ID, hold.TransactionID)
		case resolved[hold.ID] != "":
			bad("HOLD %s resolved twice, by %s and %s", hold.ID, resolved[hold.ID], lt.ID)
		case heldBy(lt) != -heldBy(hold):
			bad("%s %s releases %d held; its HOLD %s holds %d", lt.Kind, lt.ID, -heldBy(lt), hold.ID, heldBy(hold))
		}
		resolved[lt.PendingID] = lt.ID
	}

	balances, err := tx.LedgerBalances(ctx)
	if err != nil {
		return nil, err
	}
	var counted int64
	totals := map[string]int64{}
	listed := map[balanceKey]bool{}
	for _, b := range balances {
		k := balanceKey{b.Account, b.Currency}
		listed[k] = true
		counted += b.Entries
		totals[b.Currency] += b.Balance
		if b.Balance != sums[k] {
			bad("LedgerBalances: %s in %s is %d, its entries sum to %d", b.Account, b.Currency, b.Balance, sums[k])
		}
		if _, _, ok := b.Account.Wallet(); ok && b.Balance < 0 {
			bad("LedgerBalances: %s is %d", b.Account, b.Balance)
		}
	}
	for k, v := range sums {
		if !listed[k] && v != 0 {
			bad("LedgerBalances has no %s in %s; its entries sum to %d", k.account, k.currency, v)
		}
	}
	if counted != entries {
		bad("LedgerBalances counts %d entries, the transactions reached from wallets and payments have %d", counted, entries)
	}
	for cur, total := range totals {
		if total != 0 {
			bad("the accounts total %d in %s, not 0", total, cur)
		}
	}
	for _, w := range wallets {
		for _, side := range []ledger.Side{ledger.Available, ledger.Held} {
			want := w.Available
			if side == ledger.Held {
				want = w.Held
			}
			if got := sums[balanceKey{ledger.WalletAccount(w.ID, side), w.Currency}]; got != want {
				bad("wallet %s: %s balance %d, its entries sum to %d", w.ID, side, want, got)
			}
		}
	}

	head, err := tx.LedgerHead(ctx)
	if err != nil {
		return nil, err
	}
	return append(problems, chainProblems(head, byID)...), nil
}

// heldBy is what lt moves on the wallets' held sides.
func heldBy(lt *ledger.Transaction) int64 {
	var sum int64
	for _, e := range lt.Entries {
		if _, side, ok := e.Account.Wallet(); ok && side == ledger.Held {
			sum += e.Amount
		}
	}
	return sum
}

// statementProblems checks a wallet's statement, oldest first: each
// transaction's entries move the running balances to the balances every
// one of them records, which are never negative, and the last are the
// wallet's.
func statementProblems(w store.InternalAccount, entries []store.LedgerEntry) []string {
	var problems []string
	var avail, held int64
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].LedgerTransactionID == entries[i].LedgerTransactionID {
			e := entries[j]
			wallet, side, ok := e.Account.Wallet()
			switch {
			case !ok || wallet != w.ID || e.Wallet != w.ID:
				problems = append(problems, fmt.Sprintf("wallet %s: statement entry %s is on %s (wallet %q)", w.ID, e.ID, e.Account, e.Wallet))
			case e.Currency != w.Currency:
				problems = append(problems, fmt.Sprintf("wallet %s holds %s; entry %s is in %s", w.ID, w.Currency, e.ID, e.Currency))
			case side == ledger.Held:
				held += e.Amount
			default:
				avail += e.Amount
			}
			j++
		}
		for _, e := range entries[i:j] {
			if e.AvailableAfter != avail || e.HeldAfter != held || avail < 0 || held < 0 {
				problems = append(problems, fmt.Sprintf("wallet %s: entry %s records available %d held %d after its transaction; the entries up to it sum to %d and %d",
					w.ID, e.ID, e.AvailableAfter, e.HeldAfter, avail, held))
			}
		}
		i = j
	}
	if avail != w.Available || held != w.Held {
		problems = append(problems, fmt.Sprintf("wallet %s: available %d held %d; its statement sums to %d and %d", w.ID, w.Available, w.Held, avail, held))
	}
	return problems
}

// chainProblems recomputes the chain over the sealed transactions.
func chainProblems(head ledger.Head, byID map[string]*ledger.Transaction) []string {
	var problems []string
	var sealed []*ledger.Transaction
	for _, lt := range byID {
		if lt.Seq != 0 {
			sealed = append(sealed, lt)
		}
	}
	sort.Slice(sealed, func(i, j int) bool { return sealed[i].Seq < sealed[j].Seq })
	if int64(len(sealed)) != head.Seq {
		problems = append(problems, fmt.Sprintf("chain: head at %d, %d transactions sealed", head.Seq, len(sealed)))
	}
	var link ledger.Hash
	for i, lt := range sealed {
		if lt.Seq != int64(i+1) {
			problems = append(problems, fmt.Sprintf("chain: %s sealed %d-th has seq %d", lt.ID, i+1, lt.Seq))
			return problems
		}
		link = ledger.Link(link, lt.Seq, ledger.BodyHash(lt))
		if lt.Link != link {
			problems = append(problems, fmt.Sprintf("chain: link %d (%s) is %s, recomputed %s", lt.Seq, lt.ID, lt.Link, link))
			return problems
		}
	}
	if link != head.Hash {
		problems = append(problems, fmt.Sprintf("chain: head %s, recomputed %s", head.Hash, link))
	}
	return problems
}

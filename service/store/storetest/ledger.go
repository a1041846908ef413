package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// This file checks store.LedgerTx and store.LedgerSealer: what PostLedger
// writes and refuses, the reads of the journal, and the chain.

// ---- test data

func newLedgerID() string { return newID("LedgerTransaction") }

// ledgerWallets creates a customer with a USDC wallet and a USD one, in s.
func ledgerWallets(f *fixture, s store.Store, c *store.Customer, w, v *store.InternalAccount) {
	f.Helper()
	err := s.Tx(f.ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(f.ctx, c); err != nil {
			return err
		}
		if err := tx.CreateInternalAccount(f.ctx, w); err != nil {
			return err
		}
		return tx.CreateInternalAccount(f.ctx, v)
	})
	if err != nil {
		f.Fatalf("wallets: %v", err)
	}
}

// wallets creates a customer with a USDC wallet and a USD one.
func (f *fixture) wallets() (c *store.Customer, w, v *store.InternalAccount) {
	f.Helper()
	c = newCustomer()
	w, v = newAccount(c.ID), newAccount(c.ID)
	v.Currency = "USD"
	ledgerWallets(f, f.s, c, w, v)
	return c, w, v
}

// funding is a sandbox funding of wallet (in currency) at when.
func funding(wallet, currency string, amount int64, when time.Time) *ledger.Transaction {
	return ledger.New(newLedgerID(), ledger.KindFunding, when, "Sandbox funding").
		Move(ledger.Sandbox(currency), currency, amount, ledger.WalletAccount(wallet, ledger.Available), currency, amount)
}

// post posts lt in a Tx of its own, which must take it.
func (f *fixture) post(lt *ledger.Transaction) {
	f.Helper()
	f.tx(func(tx store.Tx) error { return mustPost(f.ctx, tx, lt) })
}

// ledgerTx reads a ledger transaction back.
func (f *fixture) ledgerTx(s store.Store, id string) ledger.Transaction {
	f.Helper()
	var lt ledger.Transaction
	err := s.Tx(f.ctx, func(tx store.Tx) error {
		got, err := tx.GetLedgerTransaction(f.ctx, id)
		if err == nil {
			lt = *got
		}
		return err
	})
	if err != nil {
		f.Fatalf("GetLedgerTransaction(%s): %v", id, err)
	}
	return lt
}

// cloneLedgerTx copies lt with entries of its own.
func cloneLedgerTx(lt *ledger.Transaction) *ledger.Transaction {
	c := *lt
	c.Entries = slices.Clone(lt.Entries)
	return &c
}

// filled is lt as the store must give it back: each wallet entry with the
// wallet's available and held balances after it, from after.
func filled(lt *ledger.Transaction, after map[string][2]int64) ledger.Transaction {
	want := *cloneLedgerTx(lt)
	for i, e := range want.Entries {
		if w, _, ok := e.Account.Wallet(); ok {
			want.Entries[i].AvailableAfter, want.Entries[i].HeldAfter = after[w][0], after[w][1]
		}
	}
	return want
}

// ---- posting

// testLedgerPostEachKind posts a transaction of each kind, each in its own
// Tx: PostLedger fills in the balances after it on the wallet entries,
// moves the wallets (UpdatedAt the transaction's time), and the reads give
// back exactly the entries posted. LedgerBalances sums them per account.
func testLedgerPostEachKind(f *fixture) {
	c, w, v := f.wallets()
	passing := newIncoming(c, v.ID) // the payment a TRANSIT belongs to
	f.createTransactions(passing)
	wa, wh := ledger.WalletAccount(w.ID, ledger.Available), ledger.WalletAccount(w.ID, ledger.Held)
	va := ledger.WalletAccount(v.ID, ledger.Available)
	pay, quote := newID("Transaction"), newID("Quote")
	// Built in posting order: ids sort like the transactions.
	var hold, posted, hold2 *ledger.Transaction
	steps := []struct {
		name  string
		build func() *ledger.Transaction
		after map[string][2]int64 // available and held of each wallet moved, afterwards
	}{
		{"OPENING", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindOpening, at(time.Minute), "Opening balance").
				Add(ledger.Opening("USDC"), "USDC", -1_500).Add(wa, "USDC", 1_000).Add(wh, "USDC", 500)
		}, map[string][2]int64{w.ID: {1_000, 500}}},
		{"FUNDING", func() *ledger.Transaction { return funding(w.ID, "USDC", 2_000, at(2*time.Minute)) },
			map[string][2]int64{w.ID: {3_000, 500}}},
		{"DEPOSIT", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindDeposit, at(3*time.Minute), "Deposit received").
				Move(ledger.Unmatched("USDC"), "USDC", 700, wa, "USDC", 700)
		}, map[string][2]int64{w.ID: {3_700, 500}}},
		{"INCOMING through the exchange", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindIncoming, at(4*time.Minute), "Transfer in").
				Move(ledger.Clearing("SPEI", "MXN"), "MXN", 17_000, wa, "USDC", 1_000)
		}, map[string][2]int64{w.ID: {4_700, 500}}},
		{"HOLD", func() *ledger.Transaction {
			hold = ledger.HoldFor(newLedgerID(), at(5*time.Minute), "Payment on its way", w.ID, "USDC", 1_200).For(pay, quote)
			return hold
		}, map[string][2]int64{w.ID: {3_500, 1_700}}},
		{"POST of the HOLD, with a fee and the exchange", func() *ledger.Transaction {
			posted = ledger.Payout(newLedgerID(), at(6*time.Minute), "Payment sent", w.ID, "USDC", 1_200, 20, "SPEI", "MXN", 20_000).
				For(pay, quote).Resolving(hold.ID)
			return posted
		}, map[string][2]int64{w.ID: {3_500, 500}}},
		{"another HOLD", func() *ledger.Transaction {
			hold2 = ledger.HoldFor(newLedgerID(), at(7*time.Minute), "Payment on its way", w.ID, "USDC", 300).For(pay, quote)
			return hold2
		}, map[string][2]int64{w.ID: {3_200, 800}}},
		{"VOID of that HOLD", func() *ledger.Transaction {
			return ledger.VoidOf(newLedgerID(), at(8*time.Minute), "Payment failed, money back", w.ID, "USDC", 300).
				For(pay, quote).Resolving(hold2.ID)
		}, map[string][2]int64{w.ID: {3_500, 500}}},
		{"RETURN of the POST", func() *ledger.Transaction {
			return ledger.Reverse(newLedgerID(), at(9*time.Minute), "Payment returned", posted)
		}, map[string][2]int64{w.ID: {4_700, 500}}},
		{"TRANSIT, touching no wallet", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindTransit, at(10*time.Minute), "Payment passed through").
				For(passing.ID, "").
				Add(ledger.Unmatched("USD"), "USD", -1_000).Add(ledger.Fees("USD"), "USD", 10).
				Exchange("USD", 990, "MXN", 17_000).Add(ledger.Clearing("SPEI", "MXN"), "MXN", 17_000)
		}, nil},
		{"two wallets in two currencies", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindIncoming, at(11*time.Minute), "Split").
				Add(ledger.Clearing("ACH", "USD"), "USD", -300).Add(va, "USD", 300).
				Add(wa, "USDC", -200).Add(ledger.Fees("USDC"), "USDC", 200)
		}, map[string][2]int64{w.ID: {4_500, 500}, v.ID: {300, 0}}},
	}
	var all []ledger.Transaction
	for _, s := range steps {
		lt := s.build()
		want := filled(lt, s.after)
		f.post(lt)
		same(f, s.name+": the transaction PostLedger filled in", *lt, want)
		same(f, s.name+": GetLedgerTransaction", f.ledgerTx(f.s, lt.ID), want)
		for id, b := range s.after {
			if a := f.account(id); a.Available != b[0] || a.Held != b[1] || !a.UpdatedAt.Equal(lt.CreatedAt) {
				f.Errorf("%s: wallet available %d held %d updated %v, want %d %d %v", s.name, a.Available, a.Held, a.UpdatedAt,
					b[0], b[1], lt.CreatedAt)
			}
		}
		all = append(all, want)
	}

	f.tx(func(tx store.Tx) error {
		got, err := tx.LedgerTransactionsOf(f.ctx, pay)
		if err != nil {
			return err
		}
		same(f, "LedgerTransactionsOf the payment (its HOLD, POST, HOLD, VOID, RETURN)", got, all[4:9])
		if got, err := tx.LedgerTransactionsOf(f.ctx, newID("Transaction")); err != nil || len(got) != 0 {
			f.Errorf("LedgerTransactionsOf a payment without any = %+v, %v", got, err)
		}
		_, err = tx.GetLedgerTransaction(f.ctx, newLedgerID())
		wantErr(f, "GetLedgerTransaction of an unknown id", err, store.ErrNotFound)

		balances, err := tx.LedgerBalances(f.ctx)
		if err != nil {
			return err
		}
		same(f, "LedgerBalances", balances, balancesOf(all))
		return nil
	})
	CheckBooks(f, f.s)
}

// balancesOf sums the entries of lts per account and currency, ordered as
// LedgerBalances orders them.
func balancesOf(lts []ledger.Transaction) []store.LedgerBalance {
	at := map[balanceKey]int{}
	var out []store.LedgerBalance
	for _, lt := range lts {
		for _, e := range lt.Entries {
			k := balanceKey{e.Account, e.Currency}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, store.LedgerBalance{Account: e.Account, Currency: e.Currency})
			}
			out[i].Balance += e.Amount
			out[i].Entries++
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Currency < out[j].Currency
	})
	return out
}

// statementOf is the statement of wallet in lts (posted in this order).
func statementOf(wallet string, lts ...*ledger.Transaction) []store.LedgerEntry {
	var out []store.LedgerEntry
	for _, lt := range lts {
		for i, e := range lt.Entries {
			if w, _, ok := e.Account.Wallet(); ok && w == wallet {
				out = append(out, store.LedgerEntry{
					ID:                  fmt.Sprintf("LedgerEntry:%s-%d", strings.TrimPrefix(lt.ID, "LedgerTransaction:"), i+1),
					LedgerTransactionID: lt.ID, Kind: lt.Kind, TransactionID: lt.TransactionID, QuoteID: lt.QuoteID,
					Description: lt.Description, Wallet: wallet, Entry: e, CreatedAt: lt.CreatedAt,
				})
			}
		}
	}
	return out
}

// testLedgerStatement pages through a wallet's entries, oldest or newest
// first, with the created filters (after inclusive, before exclusive) and
// the cursor; another wallet's entries never show.
func testLedgerStatement(f *fixture) {
	_, w, v := f.wallets()
	pay := newID("Transaction")
	var lts []*ledger.Transaction
	add := func(lt *ledger.Transaction) *ledger.Transaction {
		f.post(lt)
		lts = append(lts, lt)
		return lt
	}
	add(funding(w.ID, "USDC", 100, at(time.Minute)))
	f.post(funding(v.ID, "USD", 100, at(time.Minute)))
	h := add(ledger.HoldFor(newLedgerID(), at(2*time.Minute), "Payment on its way", w.ID, "USDC", 10).For(pay, ""))
	add(ledger.VoidOf(newLedgerID(), at(3*time.Minute), "Payment failed", w.ID, "USDC", 10).For(pay, "").Resolving(h.ID))
	add(funding(w.ID, "USDC", 50, at(4*time.Minute)))
	h = add(ledger.HoldFor(newLedgerID(), at(5*time.Minute), "Payment on its way", w.ID, "USDC", 20).For(pay, ""))
	add(ledger.Payout(newLedgerID(), at(6*time.Minute), "Payment sent", w.ID, "USDC", 20, 0, "ACH", "USDC", 20).
		For(pay, "").Resolving(h.ID))
	all := statementOf(w.ID, lts...) // 1 + 2 + 2 + 1 + 2 + 1 entries
	if len(all) != 9 {
		f.Fatalf("%d entries made, want 9", len(all))
	}
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	// fromTo picks the entries of the transactions made in [from, to) minutes.
	fromTo := func(entries []store.LedgerEntry, from, to int) []store.LedgerEntry {
		var out []store.LedgerEntry
		for _, e := range entries {
			if !e.CreatedAt.Before(at(time.Duration(from)*time.Minute)) && e.CreatedAt.Before(at(time.Duration(to)*time.Minute)) {
				out = append(out, e)
			}
		}
		return out
	}
	cases := []struct {
		name   string
		filter store.LedgerEntryFilter
		want   []store.LedgerEntry
	}{
		{"oldest first", store.LedgerEntryFilter{Wallet: w.ID}, all},
		{"oldest first, pages of 4", store.LedgerEntryFilter{Wallet: w.ID, Limit: 4}, all},
		{"newest first, pages of 2", store.LedgerEntryFilter{Wallet: w.ID, Descending: true, Limit: 2}, reversed},
		{"newest first from a cursor", store.LedgerEntryFilter{Wallet: w.ID, Descending: true, Limit: 3, Cursor: reversed[2].ID}, reversed[3:]},
		{"created from minute 2 to before 5", store.LedgerEntryFilter{Wallet: w.ID, CreatedAfter: at(2 * time.Minute),
			CreatedBefore: at(5 * time.Minute)}, fromTo(all, 2, 5)},
		{"newest first, created from minute 3, pages of 1", store.LedgerEntryFilter{Wallet: w.ID, Descending: true,
			CreatedAfter: at(3 * time.Minute), Limit: 1}, fromTo(reversed, 3, 60)},
		{"newest first, created before minute 4, pages of 2", store.LedgerEntryFilter{Wallet: w.ID, Descending: true,
			CreatedBefore: at(4 * time.Minute), Limit: 2}, fromTo(reversed, 0, 4)},
		{"created after the last", store.LedgerEntryFilter{Wallet: w.ID, CreatedAfter: at(7 * time.Minute)}, nil},
		{"cursor after the last", store.LedgerEntryFilter{Wallet: w.ID, Cursor: all[len(all)-1].ID}, nil},
		{"a wallet without entries", store.LedgerEntryFilter{Wallet: newID("InternalAccount")}, nil},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			// The count ignores the cursor, as everywhere.
			total := len(tc.want)
			if tc.filter.Cursor != "" {
				total = len(all)
			}
			var got []store.LedgerEntry
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got = nil
				filter := tc.filter
				for {
					p, err := tx.ListLedgerEntries(f.ctx, filter)
					if err != nil {
						return err
					}
					got = append(got, p.Items...)
					if p.TotalCount != total {
						t.Errorf("TotalCount %d, want %d", p.TotalCount, total)
					}
					if !p.HasMore {
						return nil
					}
					if p.NextCursor != p.Items[len(p.Items)-1].ID || len(p.Items) != filter.Limit {
						t.Fatalf("a page of %d with more after it has the cursor %q", len(p.Items), p.NextCursor)
					}
					filter.Cursor = p.NextCursor
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 || len(tc.want) != 0 {
				same(t, "entries", got, tc.want)
			}
		})
	}
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.ListLedgerEntries(f.ctx, store.LedgerEntryFilter{})
		return err
	})
	if err == nil {
		f.Error("ListLedgerEntries without a wallet succeeded")
	}
	CheckBooks(f, f.s)
}

// ledgerState is everything a refused post must leave as it was.
type ledgerState struct {
	Accounts []store.InternalAccount
	Balances []store.LedgerBalance
}

func (f *fixture) ledgerState(wallets ...string) ledgerState {
	f.Helper()
	var s ledgerState
	f.tx(func(tx store.Tx) error {
		s = ledgerState{}
		for _, id := range wallets {
			a, err := tx.GetInternalAccount(f.ctx, id)
			if err != nil {
				return err
			}
			s.Accounts = append(s.Accounts, *a)
		}
		var err error
		s.Balances, err = tx.LedgerBalances(f.ctx)
		return err
	})
	return s
}

// What a post must do.
const (
	taken    = iota // true, nil
	short           // false, nil: a balance would go below zero
	mistaken        // an error
)

// postUnchanged posts lt in a Tx that commits whatever the post did and
// checks the outcome; a post that is not taken must leave the wallets
// (UpdatedAt included) and the journal as they were. (A post whose
// statement failed may have aborted the transaction, as PostgreSQL does:
// the commit then fails too.)
func (f *fixture) postUnchanged(t *testing.T, lt *ledger.Transaction, outcome int, is error, wallets ...string) {
	t.Helper()
	g := f.sub(t)
	before := g.ledgerState(wallets...)
	var ok bool
	var postErr error
	if err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		ok, postErr = tx.PostLedger(f.ctx, lt)
		return nil
	}); err != nil && postErr == nil {
		t.Fatalf("Tx: %v", err)
	}
	switch {
	case outcome == short && (ok || postErr != nil):
		t.Errorf("PostLedger = %v, %v; want false, nil (not enough money)", ok, postErr)
	case outcome == mistaken && postErr == nil:
		t.Errorf("PostLedger = %v, nil; want an error", ok)
	case outcome == mistaken && is != nil && !errors.Is(postErr, is):
		t.Errorf("PostLedger: %v, want %v", postErr, is)
	case outcome == mistaken && ok:
		t.Errorf("PostLedger = true, %v", postErr)
	}
	same(t, "wallets and balances after the refused post", g.ledgerState(wallets...), before)
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetLedgerTransaction(f.ctx, lt.ID)
		return err
	})
	wantErr(t, "the refused transaction read back", err, store.ErrNotFound)
}

// testLedgerRefusals: a post that would overdraw a wallet is refused
// (false, nil) and one that is wrong is an error; either way nothing is
// written, not even the balances or UpdatedAt of a wallet the transaction
// moved before the one that failed, although the caller commits. (That a
// POST or VOID resolves a HOLD and not another kind is not the store's to
// check; CheckBooks and `ledger verify` do.)
func testLedgerRefusals(f *fixture) {
	_, w, v := f.wallets()
	wa, wh, va := ledger.WalletAccount(w.ID, ledger.Available), ledger.WalletAccount(w.ID, ledger.Held), ledger.WalletAccount(v.ID, ledger.Available)
	f.post(funding(w.ID, "USDC", 100, at(time.Minute)))
	f.post(funding(v.ID, "USD", 50, at(2*time.Minute)))
	hold := ledger.HoldFor(newLedgerID(), at(3*time.Minute), "Payment on its way", w.ID, "USDC", 30)
	f.post(hold) // w: 70 available, 30 held
	stranger := newID("InternalAccount")
	when := at(time.Hour)
	two := func() *ledger.Transaction { return ledger.New(newLedgerID(), ledger.KindFunding, when, "Two wallets") }
	cases := []struct {
		name    string
		lt      func() *ledger.Transaction
		outcome int
		is      error
	}{
		{"HOLD of more than is available", func() *ledger.Transaction {
			return ledger.HoldFor(newLedgerID(), when, "Too much", w.ID, "USDC", 71)
		}, short, nil},
		{"VOID of more than is held", func() *ledger.Transaction {
			return ledger.VoidOf(newLedgerID(), when, "Too much", w.ID, "USDC", 31).Resolving(hold.ID)
		}, short, nil},
		{"POST of more than is held", func() *ledger.Transaction {
			return ledger.Payout(newLedgerID(), when, "Too much", w.ID, "USDC", 31, 0, "ACH", "USDC", 31).Resolving(hold.ID)
		}, short, nil},
		{"the second wallet short", func() *ledger.Transaction {
			return two().Add(ledger.Sandbox("USD"), "USD", -10).Add(va, "USD", 10).
				Add(wa, "USDC", -71).Add(ledger.Sandbox("USDC"), "USDC", 71)
		}, short, nil},
		{"the first wallet short", func() *ledger.Transaction {
			return two().Add(wa, "USDC", -71).Add(ledger.Sandbox("USDC"), "USDC", 71).
				Add(ledger.Sandbox("USD"), "USD", -10).Add(va, "USD", 10)
		}, short, nil},
		{"a wallet's held side short while its available side gains", func() *ledger.Transaction {
			return ledger.VoidOf(newLedgerID(), when, "Too much", w.ID, "USDC", 31)
		}, short, nil},
		{"a wallet entry in another currency", func() *ledger.Transaction {
			return two().Move(ledger.Sandbox("USD"), "USD", 5, wa, "USD", 5)
		}, mistaken, nil},
		{"the second wallet's entry in another currency", func() *ledger.Transaction {
			return two().Move(ledger.Sandbox("USD"), "USD", 5, va, "USD", 5).Move(ledger.Sandbox("USD"), "USD", 5, wa, "USD", 5)
		}, mistaken, nil},
		{"a wallet in two currencies", func() *ledger.Transaction {
			return two().Add(wa, "USDC", -10).Add(ledger.FX("USDC"), "USDC", 10).Add(ledger.FX("USD"), "USD", -10).Add(wh, "USD", 10)
		}, mistaken, nil},
		{"unbalanced", func() *ledger.Transaction {
			return two().Add(ledger.Sandbox("USDC"), "USDC", -5).Add(wa, "USDC", 4)
		}, mistaken, ledger.ErrUnbalanced},
		{"one entry", func() *ledger.Transaction { return two().Add(wa, "USDC", 5) }, mistaken, nil},
		{"an amount that is not positive", func() *ledger.Transaction {
			return ledger.HoldFor(newLedgerID(), when, "Nothing", w.ID, "USDC", 0)
		}, mistaken, nil},
		{"an account outside the chart", func() *ledger.Transaction {
			return two().Add(ledger.Account("LedgerAccount:elsewhere:USDC"), "USDC", -5).Add(wa, "USDC", 5)
		}, mistaken, nil},
		{"a system account in another currency than its own", func() *ledger.Transaction {
			return two().Add(ledger.Sandbox("USD"), "USDC", -5).Add(wa, "USDC", 5)
		}, mistaken, nil},
		{"no time", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), ledger.KindFunding, time.Time{}, "Timeless").
				Move(ledger.Sandbox("USDC"), "USDC", 5, wa, "USDC", 5)
		}, mistaken, nil},
		{"an unknown kind", func() *ledger.Transaction {
			return ledger.New(newLedgerID(), "GIFT", when, "Gift").Move(ledger.Sandbox("USDC"), "USDC", 5, wa, "USDC", 5)
		}, mistaken, nil},
		{"an unknown wallet", func() *ledger.Transaction {
			return funding(stranger, "USDC", 5, when)
		}, mistaken, store.ErrNotFound},
		{"an unknown wallet after a known one", func() *ledger.Transaction {
			return two().Move(ledger.Sandbox("USD"), "USD", 5, va, "USD", 5).
				Move(ledger.Sandbox("USDC"), "USDC", 5, ledger.WalletAccount(stranger, ledger.Available), "USDC", 5)
		}, mistaken, store.ErrNotFound},
		{"a VOID resolving nothing", func() *ledger.Transaction {
			return ledger.VoidOf(newLedgerID(), when, "Back", w.ID, "USDC", 30).Resolving(newLedgerID())
		}, mistaken, store.ErrNotFound},
		{"a FUNDING resolving a HOLD", func() *ledger.Transaction {
			return funding(w.ID, "USDC", 5, when).Resolving(hold.ID)
		}, mistaken, nil},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			f.postUnchanged(t, tc.lt(), tc.outcome, tc.is, w.ID, v.ID)
		})
	}
	CheckBooks(f, f.s)
}

// fundedHold creates a USDC wallet funded with funds, and a payment's HOLD
// of amount on it.
func (f *fixture) fundedHold(funds, amount int64) (w *store.InternalAccount, pay string, hold *ledger.Transaction) {
	f.Helper()
	_, w, _ = f.wallets()
	pay = newID("Transaction")
	f.post(funding(w.ID, "USDC", funds, at(time.Minute)))
	hold = ledger.HoldFor(newLedgerID(), at(2*time.Minute), "Payment on its way", w.ID, "USDC", amount).For(pay, "")
	f.post(hold)
	return w, pay, hold
}

// testLedgerResolveOnce: a HOLD resolves once. A second VOID or a POST of
// it is ErrConflict (the UNIQUE on pending_id) and writes nothing, although
// the wallet holds enough for it (another payment's HOLD) and the caller
// commits; so is a transaction with a taken id.
func testLedgerResolveOnce(f *fixture) {
	w, pay, hold := f.fundedHold(100, 30)
	f.post(ledger.HoldFor(newLedgerID(), at(3*time.Minute), "Another payment", w.ID, "USDC", 40))
	void := ledger.VoidOf(newLedgerID(), at(4*time.Minute), "Payment failed", w.ID, "USDC", 30).For(pay, "").Resolving(hold.ID)
	f.post(void) // w: 60 available, 40 held
	when := at(time.Hour)
	for _, tc := range []struct {
		name string
		lt   *ledger.Transaction
	}{
		{"a second VOID", ledger.VoidOf(newLedgerID(), when, "Again", w.ID, "USDC", 30).For(pay, "").Resolving(hold.ID)},
		{"a POST after the VOID", ledger.Payout(newLedgerID(), when, "Sent", w.ID, "USDC", 30, 0, "ACH", "USDC", 30).
			For(pay, "").Resolving(hold.ID)},
	} {
		f.Run(tc.name, func(t *testing.T) { f.postUnchanged(t, tc.lt, mistaken, store.ErrConflict, w.ID) })
	}
	f.Run("a taken id", func(t *testing.T) {
		g := f.sub(t)
		before := g.ledgerState(w.ID)
		again := funding(w.ID, "USDC", 5, when)
		again.ID = void.ID
		err := f.s.Tx(f.ctx, func(tx store.Tx) error { _, err := tx.PostLedger(f.ctx, again); return err })
		wantErr(t, "PostLedger with a taken id", err, store.ErrConflict)
		same(t, "wallets and balances after it", g.ledgerState(w.ID), before)
		same(t, "the transaction of that id", g.ledgerTx(f.s, void.ID), filled(void, map[string][2]int64{w.ID: {60, 40}}))
	})
	CheckBooks(f, f.s)
}

// testLedgerResolveRace: of POSTs and VOIDs of one HOLD racing, each in
// its own Tx, exactly one is written; the others are ErrConflict or find
// the held money gone, and the wallet moved once.
func testLedgerResolveRace(f *fixture) {
	w, pay, hold := f.fundedHold(1_000, 100)
	const n = 8
	won := make([]bool, n)
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			when := at(time.Hour + time.Duration(i)*time.Second)
			var ok bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				lt := ledger.VoidOf(newLedgerID(), when, "Back", w.ID, "USDC", 100)
				if i%2 == 1 {
					lt = ledger.Payout(newLedgerID(), when, "Sent", w.ID, "USDC", 100, 0, "ACH", "USDC", 100)
				}
				var err error
				ok, err = tx.PostLedger(f.ctx, lt.For(pay, "").Resolving(hold.ID))
				return err
			})
			switch {
			case err == nil && ok:
				won[i] = true
				wins.Add(1)
			case err != nil && !errors.Is(err, store.ErrConflict):
				f.Errorf("resolution %d: %v, want ErrConflict or a refusal", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		f.Fatalf("%d resolutions of one HOLD were written", wins.Load())
	}
	want := [2]int64{900, 0} // a POST won
	if slices.Index(won, true)%2 == 0 {
		want = [2]int64{1_000, 0} // a VOID
	}
	if a := f.account(w.ID); a.Available != want[0] || a.Held != want[1] {
		f.Errorf("available %d held %d, want %v", a.Available, a.Held, want)
	}
	CheckBooks(f, f.s)
}

// ---- the chain

// testLedgerSeal: SealLedger chains the queued transactions oldest id
// first; each link is ledger.Link over the previous link and the body
// hash of the transaction as read back, and the head is the last link and
// the seal's time. Sealing in batches of two gives the chain one batch
// gives (in another store, the same transactions posted in the same
// order); a seal with nothing queued changes nothing; a transaction with
// a lower id queued later is chained after the ones sealed before it.
func testLedgerSeal(f *fixture) {
	n, head, err := f.s.SealLedger(f.ctx, 10, at(time.Hour))
	if n != 0 || head != (ledger.Head{}) || err != nil {
		f.Fatalf("SealLedger of an empty journal = %d, %+v, %v", n, head, err)
	}
	other := f.open(f.T)
	c := newCustomer()
	w, v := newAccount(c.ID), newAccount(c.ID)
	v.Currency = "USD"
	ledgerWallets(f, f.s, c, w, v)
	ledgerWallets(f, other, c, w, v)
	passing := newIncoming(c, v.ID) // the payment the TRANSIT belongs to
	f.createTransactions(passing)
	if err := other.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateTransaction(f.ctx, passing) }); err != nil {
		f.Fatal(err)
	}
	pay := newID("Transaction")
	var lts []*ledger.Transaction
	add := func(lt *ledger.Transaction) *ledger.Transaction { lts = append(lts, lt); return lt }
	add(funding(w.ID, "USDC", 1_000, at(time.Minute)))
	h := add(ledger.HoldFor(newLedgerID(), at(2*time.Minute), "Payment on its way", w.ID, "USDC", 100).For(pay, ""))
	add(ledger.Payout(newLedgerID(), at(3*time.Minute), "Payment sent", w.ID, "USDC", 100, 1, "SEPA", "EUR", 90).For(pay, "").Resolving(h.ID))
	h = add(ledger.HoldFor(newLedgerID(), at(4*time.Minute), "Payment on its way", w.ID, "USDC", 50).For(pay, ""))
	add(ledger.VoidOf(newLedgerID(), at(5*time.Minute), "Payment failed", w.ID, "USDC", 50).For(pay, "").Resolving(h.ID))
	add(ledger.New(newLedgerID(), ledger.KindTransit, at(6*time.Minute), "Passed through").For(passing.ID, "").
		Add(ledger.Unmatched("USD"), "USD", -500).Add(ledger.Clearing("ACH", "USD"), "USD", 500))
	for _, lt := range lts {
		if err := other.Tx(f.ctx, func(tx store.Tx) error { return mustPost(f.ctx, tx, cloneLedgerTx(lt)) }); err != nil {
			f.Fatalf("post %s: %v", lt.Kind, err)
		}
		f.post(lt) // filled in: what the chain hashes
	}
	if lt := f.ledgerTx(f.s, lts[0].ID); lt.Seq != 0 || lt.Link != (ledger.Hash{}) {
		f.Errorf("before the seal: seq %d link %s", lt.Seq, lt.Link)
	}

	// Batches of two, then one with nothing queued.
	for i, want := range []int{2, 2, 2, 0} {
		sealAt := at(time.Hour + time.Duration(i)*time.Second)
		before := head
		n, head, err = f.s.SealLedger(f.ctx, 2, sealAt)
		switch {
		case err != nil:
			f.Fatalf("seal %d: %v", i+1, err)
		case n != want:
			f.Errorf("seal %d sealed %d, want %d", i+1, n, want)
		case want == 0 && head != before:
			f.Errorf("a seal with nothing queued moved the head from %+v to %+v", before, head)
		case want > 0 && (head.Seq != before.Seq+int64(n) || !head.At.Equal(sealAt) || head.Hash == before.Hash):
			f.Errorf("seal %d: head %+v after %+v", i+1, head, before)
		}
		f.tx(func(tx store.Tx) error {
			got, err := tx.LedgerHead(f.ctx)
			same(f, "LedgerHead", got, head)
			return err
		})
	}
	// One batch in the other store.
	n, one, err := other.SealLedger(f.ctx, 100, at(2*time.Hour))
	if err != nil || n != len(lts) || one.Seq != head.Seq || one.Hash != head.Hash {
		f.Fatalf("one batch = %d, %+v, %v; want %d and the head of the batches, %+v", n, one, err, len(lts), head)
	}
	var link ledger.Hash
	for i, lt := range lts {
		got := f.ledgerTx(f.s, lt.ID)
		link = ledger.Link(link, int64(i+1), ledger.BodyHash(lt))
		if got.Seq != int64(i+1) || got.Link != link || ledger.BodyHash(&got) != ledger.BodyHash(lt) {
			f.Errorf("%s: seq %d link %s, want %d %s", lt.ID, got.Seq, got.Link, i+1, link)
		}
		if o := f.ledgerTx(other, lt.ID); o.Seq != got.Seq || o.Link != got.Link {
			f.Errorf("%s in one batch: seq %d link %s, in batches %d %s", lt.ID, o.Seq, o.Link, got.Seq, got.Link)
		}
	}
	if link != head.Hash {
		f.Errorf("head %s, the last link %s", head.Hash, link)
	}

	// Queued later: the lower id first, after everything sealed before.
	late := funding(w.ID, "USDC", 5, at(7*time.Minute))
	early := funding(v.ID, "USD", 7, at(7*time.Minute))
	early.ID = lowID("LedgerTransaction", 1)
	f.post(late)
	f.post(early)
	if n, head, err = f.s.SealLedger(f.ctx, 10, at(3*time.Hour)); n != 2 || err != nil || head.Seq != 8 {
		f.Fatalf("seal of two queued later = %d, %+v, %v", n, head, err)
	}
	for i, lt := range []*ledger.Transaction{early, late} {
		got := f.ledgerTx(f.s, lt.ID)
		link = ledger.Link(link, int64(7+i), ledger.BodyHash(lt))
		if got.Seq != int64(7+i) || got.Link != link {
			f.Errorf("%s: seq %d link %s, want %d %s", lt.ID, got.Seq, got.Link, 7+i, link)
		}
	}
	if head.Hash != link {
		f.Errorf("head %s, the last link %s", head.Hash, link)
	}
	CheckBooks(f, f.s)
	CheckBooks(f, other)
}

// testLedgerSealRace: sealers running at once chain every transaction once,
// in one unbroken chain.
func testLedgerSealRace(f *fixture) {
	_, w, _ := f.wallets()
	const n = 40
	f.tx(func(tx store.Tx) error {
		for i := range n {
			if err := mustPost(f.ctx, tx, funding(w.ID, "USDC", int64(i+1), at(time.Duration(i)*time.Second))); err != nil {
				return err
			}
		}
		return nil
	})
	var sealed atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				k, _, err := f.s.SealLedger(f.ctx, 3, at(time.Hour))
				if err != nil {
					f.Errorf("SealLedger: %v", err)
					return
				}
				if k == 0 {
					return
				}
				sealed.Add(int64(k))
			}
		})
	}
	wg.Wait()
	if sealed.Load() != n {
		f.Errorf("sealers sealed %d in all, want %d", sealed.Load(), n)
	}
	CheckBooks(f, f.s)
}

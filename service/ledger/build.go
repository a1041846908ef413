package ledger

import (
	"strconv"
	"time"
)

// New starts a transaction; add its entries with Add, Exchange and Move.
func New(id string, kind Kind, at time.Time, description string) *Transaction {
	return &Transaction{ID: id, Kind: kind, CreatedAt: at.UTC(), Description: description}
}

// For sets the payment the transaction belongs to.
func (t *Transaction) For(transactionID, quoteID string) *Transaction {
	t.TransactionID, t.QuoteID = transactionID, quoteID
	return t
}

// Resolving sets the HOLD a POST or VOID resolves.
func (t *Transaction) Resolving(pendingID string) *Transaction {
	t.PendingID = pendingID
	return t
}

// Add adds amount to the account's entry in currency, merging with an
// entry it already has there and dropping an entry that comes to zero.
func (t *Transaction) Add(a Account, currency string, amount int64) *Transaction {
	for i := range t.Entries {
		if t.Entries[i].Account == a && t.Entries[i].Currency == currency {
			t.Entries[i].Amount += amount
			if t.Entries[i].Amount == 0 {
				t.Entries = append(t.Entries[:i], t.Entries[i+1:]...)
			}
			return t
		}
	}
	if amount != 0 {
		t.Entries = append(t.Entries, Entry{Account: a, Currency: currency, Amount: amount})
	}
	return t
}

// positive notes an amount of a builder that must be positive.
func (t *Transaction) positive(what string, amount int64) *Transaction {
	if amount <= 0 && t.bad == "" {
		t.bad = what + " " + strconv.FormatInt(amount, 10) + " is not positive"
	}
	return t
}

// Exchange turns fromAmount of fromCurrency into toAmount of toCurrency
// through the exchange's accounts: the FX account of the first currency
// receives what is given, the one of the second pays what is taken, so
// each currency balances on its own. Equal amounts of one currency need no
// exchange and add nothing.
func (t *Transaction) Exchange(fromCurrency string, fromAmount int64, toCurrency string, toAmount int64) *Transaction {
	t.Add(FX(fromCurrency), fromCurrency, fromAmount)
	return t.Add(FX(toCurrency), toCurrency, -toAmount)
}

// Move takes sent out of from (in fromCurrency) and puts received into to
// (in toCurrency), through the exchange when the two differ.
func (t *Transaction) Move(from Account, fromCurrency string, sent int64, to Account, toCurrency string, received int64) *Transaction {
	t.positive("amount sent", sent).positive("amount received", received)
	t.Add(from, fromCurrency, -sent)
	t.Exchange(fromCurrency, sent, toCurrency, received)
	return t.Add(to, toCurrency, received)
}

// Payout is the POST of a payment that left: sent leaves the wallet's held
// side in sendCurrency, fee of it is earned, and the rest is exchanged
// into received of receiveCurrency, which goes to the rail's clearing.
func Payout(id string, at time.Time, description, wallet, sendCurrency string, sent, fee int64,
	rail, receiveCurrency string, received int64) *Transaction {
	t := New(id, KindPost, at, description).positive("amount sent", sent).positive("amount received", received)
	if fee < 0 || fee >= sent {
		t.bad = "fee " + strconv.FormatInt(fee, 10) + " is not within the amount sent"
	}
	t.Add(WalletAccount(wallet, Held), sendCurrency, -sent)
	t.Add(Fees(sendCurrency), sendCurrency, fee)
	t.Exchange(sendCurrency, sent-fee, receiveCurrency, received)
	return t.Add(Clearing(rail, receiveCurrency), receiveCurrency, received)
}

// HoldFor is the pending HOLD of a payment of amount from the wallet.
func HoldFor(id string, at time.Time, description, wallet, currency string, amount int64) *Transaction {
	return New(id, KindHold, at, description).positive("amount held", amount).
		Add(WalletAccount(wallet, Available), currency, -amount).
		Add(WalletAccount(wallet, Held), currency, amount)
}

// VoidOf gives the held amount back to the wallet's available side.
func VoidOf(id string, at time.Time, description, wallet, currency string, amount int64) *Transaction {
	return New(id, KindVoid, at, description).positive("amount released", amount).
		Add(WalletAccount(wallet, Held), currency, -amount).
		Add(WalletAccount(wallet, Available), currency, amount)
}

// Reverse is the RETURN of posted: its entries negated, with what left
// the wallet's held side coming back to its available side.
func Reverse(id string, at time.Time, description string, posted *Transaction) *Transaction {
	t := New(id, KindReturn, at, description).For(posted.TransactionID, posted.QuoteID)
	for _, e := range posted.Entries {
		a := e.Account
		if w, side, ok := a.Wallet(); ok && side == Held {
			a = WalletAccount(w, Available)
		}
		t.Add(a, e.Currency, -e.Amount)
	}
	return t
}

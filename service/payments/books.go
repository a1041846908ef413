package payments

import (
	"context"
	"fmt"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
)

// The money moves of the domain. Each writes one ledger transaction
// (package ledger) in the caller's store transaction, the one that changes
// the payment's state: no money moves without entries, and no entries
// without the state change.

// describe is a statement line: what happened, then the payment's own
// description when it has one.
func describe(what string, x *store.Transaction) string {
	if x != nil && x.Description != "" && x.Description != what {
		return what + ": " + x.Description
	}
	return what
}

func newLedgerID() string { return ids.New("LedgerTransaction") }

// holdPayment writes the pending HOLD of a payment from wallet (as read
// earlier in tx): amount moves from its available to its held side. It
// returns the wallet after the hold, with the balances the post returned
// in its entry, so that the balance event needs no second read of the row
// the post just wrote; nil (nothing written) when the available balance
// does not cover the amount.
func (s *Service) holdPayment(ctx context.Context, tx store.Tx, x *store.Transaction, wallet *store.InternalAccount, amount int64, now time.Time) (*store.InternalAccount, error) {
	lt := ledger.HoldFor(newLedgerID(), now, describe("Payment on its way", x), wallet.ID, x.SendingCurrency, amount).
		For(x.ID, x.QuoteID)
	ok, err := tx.PostLedger(ctx, lt)
	if err != nil || !ok {
		return nil, err
	}
	after := *wallet
	after.UpdatedAt = now
	for _, e := range lt.Entries {
		if w, _, isWallet := e.Account.Wallet(); isWallet && w == wallet.ID {
			after.Available, after.Held = e.AvailableAfter, e.HeldAfter
		}
	}
	return &after, nil
}

// Known ledger transactions. A settlement step, a cancel or a return
// needs the payment's earlier ledger transactions (its HOLD, its POST).
// Those rows are immutable and were committed before the payment reached
// the state the step starts from, so they are read before the step's
// store transaction (booksOf), not in it: on PostgreSQL a serializable
// transaction that reads the journal's newest index pages while others
// append to them makes the database abort one of them, and concurrent
// settlements would keep retrying. A step whose row is not among the
// known ones (a state reached after the read) reads again in its own
// transaction.

// booksOf reads payment id's ledger transactions in a transaction of their
// own; nil when that fails (the step then reads in its own).
func (s *Service) booksOf(ctx context.Context, id string) []ledger.Transaction {
	var lts []ledger.Transaction
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		lts, err = tx.LedgerTransactionsOf(ctx, id)
		return err
	})
	if err != nil {
		return nil
	}
	return lts
}

// findHold is the payment's HOLD among lts (a payment has at most one),
// resolved or not: a POST or VOID names it whatever happened before, so
// that a second resolution is refused by the database (the UNIQUE index on
// pending_id) instead of taking held money that belongs to another
// payment of the wallet.
func findHold(lts []ledger.Transaction) *ledger.Transaction {
	for i := range lts {
		if lts[i].Kind == ledger.KindHold {
			return &lts[i]
		}
	}
	return nil
}

// findPost is the POST among lts.
func findPost(lts []ledger.Transaction) *ledger.Transaction {
	for i := range lts {
		if lts[i].Kind == ledger.KindPost {
			return &lts[i]
		}
	}
	return nil
}

// lookUp finds what find finds among known, or else among x's ledger
// transactions read in tx; nil for a payment made before the books.
func lookUp(ctx context.Context, tx store.Tx, x *store.Transaction, known []ledger.Transaction,
	find func([]ledger.Transaction) *ledger.Transaction) (*ledger.Transaction, error) {
	if lt := find(known); lt != nil {
		return lt, nil
	}
	lts, err := tx.LedgerTransactionsOf(ctx, x.ID)
	if err != nil {
		return nil, err
	}
	return find(lts), nil
}

// post writes lt, which must go through: a refusal means the books and the
// payment's state disagree (held money that is not there), never a race a
// caller could lose.
func post(ctx context.Context, tx store.Tx, lt *ledger.Transaction) error {
	ok, err := tx.PostLedger(ctx, lt)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("payments: ledger transaction %s (%s of %s) would overdraw a wallet", lt.ID, lt.Kind, lt.TransactionID)
	}
	return nil
}

// payOut posts the HOLD of payment x from wallet: the money left through
// its rail. The fee (in sending units, from the quote; transfers have
// none) is earned, the rest is exchanged into the received amount, which
// goes to the rail's clearing.
func (s *Service) payOut(ctx context.Context, tx store.Tx, x *store.Transaction, wallet string, known []ledger.Transaction, now time.Time) error {
	var fee int64
	if x.QuoteID != "" {
		q, err := tx.GetQuote(ctx, x.QuoteID)
		if err != nil {
			return err
		}
		fee = q.FeesIncluded
	}
	hold, err := lookUp(ctx, tx, x, known, findHold)
	if err != nil {
		return err
	}
	lt := ledger.Payout(newLedgerID(), now, describe("Payment sent", x), wallet, x.SendingCurrency, x.SentAmount, fee,
		x.PaymentRail, x.ReceivingCurrency, x.ReceivedAmount).For(x.ID, x.QuoteID)
	if hold != nil {
		lt.Resolving(hold.ID)
	}
	return post(ctx, tx, lt)
}

// voidPayment voids the HOLD of payment x from wallet: the money did not
// leave and is available again.
func (s *Service) voidPayment(ctx context.Context, tx store.Tx, x *store.Transaction, wallet, why string, known []ledger.Transaction, now time.Time) error {
	hold, err := lookUp(ctx, tx, x, known, findHold)
	if err != nil {
		return err
	}
	lt := ledger.VoidOf(newLedgerID(), now, describe(why, x), wallet, x.SendingCurrency, x.SentAmount).For(x.ID, x.QuoteID)
	if hold != nil {
		lt.Resolving(hold.ID)
	}
	return post(ctx, tx, lt)
}

// returnPayment reverses the POST of payment x: the payment came back and
// the wallet gets all of it, fee included. A payment posted before the
// books has no POST; its return comes from the rail's clearing like an
// incoming payment.
func (s *Service) returnPayment(ctx context.Context, tx store.Tx, x *store.Transaction, wallet string, known []ledger.Transaction, now time.Time) error {
	posted, err := lookUp(ctx, tx, x, known, findPost)
	if err != nil {
		return err
	}
	if posted != nil {
		return post(ctx, tx, ledger.Reverse(newLedgerID(), now, describe("Payment returned", x), posted))
	}
	lt := ledger.New(newLedgerID(), ledger.KindReturn, now, describe("Payment returned", x)).For(x.ID, x.QuoteID).
		Move(ledger.Clearing(x.PaymentRail, x.ReceivingCurrency), x.ReceivingCurrency, x.ReceivedAmount,
			ledger.WalletAccount(wallet, ledger.Available), x.SendingCurrency, x.SentAmount)
	return post(ctx, tx, lt)
}

// credit puts money that arrived into wallet's available side: sent of
// x's sending currency comes from the account from (a rail's clearing, the
// sandbox, deposits received), exchanged into received of x's receiving
// currency when they differ.
func (s *Service) credit(ctx context.Context, tx store.Tx, kind ledger.Kind, what string, x *store.Transaction,
	from ledger.Account, wallet string, now time.Time) error {
	lt := ledger.New(newLedgerID(), kind, now, describe(what, x)).For(x.ID, x.QuoteID).
		Move(from, x.SendingCurrency, x.SentAmount, ledger.WalletAccount(wallet, ledger.Available), x.ReceivingCurrency, x.ReceivedAmount)
	return post(ctx, tx, lt)
}

// passThrough records the payout of a just-in-time funded quote: the
// funds that arrived for it (deposits received) pay the fee and, exchanged,
// leave through the payout's rail, without touching a wallet.
func (s *Service) passThrough(ctx context.Context, tx store.Tx, x *store.Transaction, now time.Time) error {
	q, err := tx.GetQuote(ctx, x.QuoteID)
	if err != nil {
		return err
	}
	lt := ledger.New(newLedgerID(), ledger.KindTransit, now, describe("Payment passed through", x)).For(x.ID, x.QuoteID).
		Add(ledger.Unmatched(x.SendingCurrency), x.SendingCurrency, -x.SentAmount).
		Add(ledger.Fees(x.SendingCurrency), x.SendingCurrency, q.FeesIncluded).
		Exchange(x.SendingCurrency, x.SentAmount-q.FeesIncluded, x.ReceivingCurrency, x.ReceivedAmount).
		Add(ledger.Clearing(x.PaymentRail, x.ReceivingCurrency), x.ReceivingCurrency, x.ReceivedAmount)
	return post(ctx, tx, lt)
}

// sealBatch is how many ledger transactions one seal chains.
const sealBatch = 500

// SealLedger chains every ledger transaction posted so far (the workers
// call it with the settlement's tick, so a transaction is chained within
// about a quarter of a second of its commit) and answers the head.
func (s *Service) SealLedger(ctx context.Context) (ledger.Head, error) {
	for {
		n, head, err := s.store.SealLedger(ctx, sealBatch, s.now())
		if err != nil || n < sealBatch {
			return head, err
		}
	}
}
